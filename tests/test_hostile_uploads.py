"""Hostile and careless uploads through the real upload widget (AppTest), in both UI languages.

Each bad file goes into the page's file uploader, as a user drops it there. What must hold for every one:
no exception box; exactly one error box, naming the file and saying what to do, in the UI's language
(Chinese text in the Chinese UI, the English message in the English one); the corpus that was loaded
before stays loaded. Files that are odd but fine (legacy encodings, script and HTML inside a document or its
name) load, and what they contain is shown as text, never run or rendered. The browser test
(tests/test_browser.py) repeats the over-the-limit case through a real browser's file dialog.
Not handled here: the loader's own unit tests (tests/test_documents.py), add/remove sequences
(tests/test_app.py).
"""

from __future__ import annotations

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from rag.errors import LoaderError
from rag.ingest.documents import MAX_FILE_BYTES, MAX_FILE_MB, load_bytes
from tests.fixtures_docs import encrypt_pdf, make_pdf
from tests.test_app import (  # noqa: F401 (offline_env: an autouse fixture)
    APP,
    TIMEOUT,
    go,
    offline_env,
)

CJK = re.compile(r"[\u4e00-\u9fff]")

# name, bytes, a fragment of the Chinese message, a fragment of the English one
BAD_FILES = [
    ("empty.txt", b"", "文件是空的", "the file is empty"),
    ("blank.md", b"  \n\t\r\n", "文件是空的", "the file is empty"),
    ("noise.txt", bytes(range(256)) * 8, "二进制", "looks binary"),
    ("photo.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(300), "二进制", "looks binary"),
    ("report.txt", b"PK\x03\x04" + bytes(100), "Office", "ZIP/Office"),
    ("paper.txt", make_pdf(["hello"]), "改名为 .pdf", "rename it to .pdf"),
    ("gibberish.txt", bytes(range(128, 256)) * 3, "另存为 UTF-8", "save it as UTF-8"),
    ("slides.pptx", b"hello", "不支持", "unsupported file type"),
    ("huge.txt", b"a" * (MAX_FILE_BYTES + 1), f"{MAX_FILE_MB} MB", f"the limit is {MAX_FILE_MB} MB"),
    ("broken.pdf", b"%PDF-1.4\n1 0 obj << /Type /Catalog", "损坏", "damaged or malformed PDF"),
    ("fake.pdf", b"just some text", "不是 PDF", "not a PDF"),
    ("scan.pdf", make_pdf(["", ""]), "OCR", "OCR"),
    ("locked.pdf", encrypt_pdf(make_pdf(["secret"]), user="u", owner="o"), "密码", "password-protected"),
    ("bad.json", b'{"id": 1, "text": ', "JSON 格式错误", "malformed JSON"),
    ("number.json", b"42", "记录的列表", "expected a list of records"),
    ("none.json", b"[]", "没有记录", "contains no records"),
    ("strings.json", json.dumps(["a", "b"]).encode(), "不是带 'text' 字段的对象", "not an object"),
    ("lines.jsonl", b'{"id": "a", "text": "ok"}\n{oops}\n', "第 2 行", "line 2"),
    ("notext.jsonl", b'{"id": "a", "title": "t"}\n', "没有正文", "has no text"),
    ("cols.csv", b"id,title\n1,x\n", "没有 'text'", "has no 'text'"),
    ("header.csv", b"id,text\n", "只有表头", "header but no rows"),
]


def upload_page_in(lang: str):
    """The upload page in a new session whose UI language comes from the link (?ui.lang=...), as a
    teacher's link sets it; switching the radio mid-session trips AppTest on the relabelled radios."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["ui.lang"] = lang
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["ui.lang"] == lang
    return go(at, "upload")


@pytest.fixture(scope="module")
def upload_page(app_test):
    return upload_page_in("zh")


def loaded_box(at) -> list[str]:
    return [s.value for s in at.success if "已载入" in s.value or "Loaded" in s.value]


def _upload(at, files):
    at.file_uploader(key="upload.files").set_value([(name, data, "application/octet-stream")
                                                     for name, data in files]).run()
    assert not at.exception, [e.value for e in at.exception]
    return [e.value for e in at.error]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_every_bad_file_gets_one_clear_error_in_the_ui_language_and_the_corpus_stays(lang, app_test):
    at = upload_page_in(lang)
    before = at.session_state["corpus.hash"]
    for name, data, zh, en in BAD_FILES:
        errors = _upload(at, [(name, data)])
        assert len(errors) == 1, (name, errors)
        (err,) = errors
        assert name.split(".")[0] in err, (name, err)
        if lang == "zh":
            assert zh in err and CJK.search(err.replace(name, "")), (name, err)
        else:
            assert en in err and not CJK.search(err), (name, err)
        assert at.session_state["corpus.hash"] == before, name  # nothing already loaded is lost
        assert not loaded_box(at), name  # a refused file never shows a "loaded" success box
    _upload(at, [])


def test_a_bad_file_next_to_good_ones_loses_only_itself(upload_page):
    at = upload_page
    errors = _upload(at, [("good.txt", "检索增强生成先检索，再生成。".encode()), ("empty.txt", b""),
                          ("big5.txt", "退貨政策：七天內可退貨。".encode("big5"))])
    assert len(errors) == 1 and "empty.txt" in errors[0]
    assert sorted(d.doc_id for d in at.session_state["corpus.docs"]) == ["big5", "good"]
    assert loaded_box(at)
    _upload(at, [])


@pytest.mark.parametrize("text, encoding", [
    ("退貨政策：商品簽收後七天內可以無理由退貨，運費由買家承擔。", "big5"),
    ("返品ポリシー：商品到着後七日以内であれば理由を問わず返品できます。", "shift_jis"),
    ("检索增强生成先检索相关段落，再让模型根据段落回答问题。", "utf-16-le"),
])
def test_legacy_encodings_load_as_themselves(upload_page, text, encoding):
    at = upload_page
    assert not _upload(at, [("legacy.txt", text.encode(encoding))])
    (doc,) = at.session_state["corpus.docs"]
    assert doc.text == text, doc.metadata["encoding"]  # the text itself, not mojibake
    _upload(at, [])


def test_script_and_html_in_a_document_and_its_name_are_shown_as_text(upload_page):
    at = upload_page
    name = "<img src=x onerror=alert(1)>.txt"
    body = "<script>alert('x')</script> <b>粗体</b> [点我](javascript:alert(1)) 正文。".encode()
    assert not _upload(at, [(name, body)])
    raw_html = "\n".join(h.value for h in at.get("html"))  # st.html: must hold only escaped text
    assert "<script>" not in raw_html and "<img src=x" not in raw_html and "<b>粗体</b>" not in raw_html
    assert "&lt;script&gt;" in raw_html  # the preview shows the text, escaped
    markdown = "\n".join(m.value for m in at.markdown)  # Markdown: every "<" of the name escaped
    assert "<img" not in markdown.replace("\\<img", ""), markdown[:300]
    _upload(at, [])


def test_every_loader_error_has_its_chinese_message():
    """The cases above cover the messages a user meets; this checks the rest of the loader's raise sites
    say something in Chinese too (a new message without one fails here)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    for rel in ("rag/ingest/documents.py", "rag/evaluate/evaluation.py", "ui/corpus.py"):
        tree = ast.parse((root / rel).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "LoaderError":
                reason = node.args[1] if len(node.args) == 2 else None  # (source, Msg(en=..., zh=...))
                said = isinstance(reason, ast.Call) and getattr(reason.func, "id", None) == "Msg" and \
                    {k.arg for k in reason.keywords} == {"en", "zh"}
                assert said or isinstance(reason, ast.Name), f"{rel}:{node.lineno}: LoaderError without zh"
    for name, data, zh, _ in BAD_FILES:
        with pytest.raises(LoaderError) as e:
            load_bytes(name, data)
        assert zh in e.value.localized("zh") and e.value.localized("en") == str(e.value)


def test_one_size_limit_said_the_same_way_everywhere(upload_page):
    """The loader's MAX_FILE_MB is the only limit a user reads; the browser's transfer cap (config and
    widget) is above it, so a too-big file reaches the loader's message instead of a red chip."""
    import tomllib
    from pathlib import Path

    from ui import corpus

    config = tomllib.loads((Path(APP).parent / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["maxUploadSize"] == corpus.TRANSFER_MB > MAX_FILE_MB
    at = upload_page
    assert at.file_uploader(key="upload.files").proto.max_upload_size_mb == corpus.TRANSFER_MB
    captions = [c.value for c in at.caption]
    assert any(f"每个文件最多 {MAX_FILE_MB} MB" in c for c in captions), captions
    assert not any(f"{corpus.TRANSFER_MB} MB" in c for c in captions)

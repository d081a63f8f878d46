"""Loaders: encodings, formats, error messages that say the fix, and load_files' keep-going rule."""

from __future__ import annotations

import json

import pytest

from rag.errors import LoaderError
from rag.ingest import documents
from rag.ingest.documents import (
    MAX_FILE_BYTES,
    Document,
    decode_bytes,
    load_bytes,
    load_files,
    load_jsonl_corpus,
    load_knowledge_base,
    load_path,
)
from tests.fixtures_docs import encrypt_pdf, make_pdf

ZH = "检索增强生成（RAG）先检索相关段落，再让模型根据段落回答问题。退货政策：七天内可无理由退货。"


# ----------------------------------------------------------------------------------- encodings


def test_txt_utf8(tmp_path):
    p = tmp_path / "退货 政策(v2).txt"
    p.write_bytes(("# 退货政策\n\n" + ZH + "\r\n第二行").encode("utf-8"))
    [doc] = load_path(p)
    assert doc.doc_id == "退货_政策v2"  # unicode kept, space -> _, brackets dropped
    assert doc.title == "退货政策"
    assert doc.source == "退货 政策(v2).txt"
    assert "\r" not in doc.text and doc.text.endswith(ZH + "\n第二行")
    assert doc.metadata["encoding"] == "utf-8" and doc.metadata["format"] == "txt"


def test_utf8_bom_is_stripped():
    text, enc = decode_bytes(b"\xef\xbb\xbf" + ZH.encode("utf-8"), "a.txt")
    assert enc == "utf-8-sig" and text == ZH
    [doc] = load_bytes("a.md", b"\xef\xbb\xbf# Title\nbody")
    assert doc.text.startswith("# Title") and doc.title == "Title"


@pytest.mark.parametrize("codec", ["gbk", "gb2312", "gb18030"])
def test_chinese_legacy_encodings_decode_correctly(codec):
    data = ZH.encode(codec)
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")  # the test is meaningless unless these bytes are not UTF-8
    text, enc = decode_bytes(data, "zh.txt")
    assert text == ZH and enc == "gb18030"
    [doc] = load_bytes("zh.txt", data)
    assert doc.text == ZH and doc.title == "zh.txt"


def test_utf16_with_bom():
    text, enc = decode_bytes(ZH.encode("utf-16"), "w.txt")
    assert text == ZH and enc == "utf-16"


@pytest.mark.parametrize("data", [b"", b"   \n\t\r\n", "\u3000\u3000".encode("utf-8")])
def test_empty_file(data):
    with pytest.raises(LoaderError, match="empty") as e:
        load_bytes("blank.txt", data)
    assert e.value.source == "blank.txt"


@pytest.mark.parametrize("data", [bytes(range(256)) * 4, b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(200)])
def test_binary_file_rejected_with_accepted_formats(data):
    with pytest.raises(LoaderError, match="binary") as e:
        load_bytes("image.txt", data)
    assert ".pdf" in str(e.value) and ".md" in str(e.value)


def test_office_file_named_txt():
    with pytest.raises(LoaderError, match="Office"):
        load_bytes("report.txt", b"PK\x03\x04" + bytes(100))


def test_undecodable_says_save_as_utf8():
    with pytest.raises(LoaderError, match="save it as UTF-8"):
        load_bytes("noise.txt", bytes(range(128, 256)) * 3)  # no encoding reads this as sense


ZH = "退货政策：商品签收后七天内可以无理由退货，运费由买家承担。客服热线的工作时间为每天早上九点到晚上六点。"
TW = "退貨政策：商品簽收後七天內可以無理由退貨，運費由買家承擔。客服熱線的工作時間為每天早上九點到晚上六點。"
JA = "返品ポリシー：商品到着後七日以内であれば理由を問わず返品できます。送料はお客様のご負担となります。"


@pytest.mark.parametrize("text, encoding", [
    (ZH, "gbk"), (ZH, "gb18030"), (TW, "big5"), (JA, "shift_jis"), (ZH, "utf-16-le"), (JA, "utf-16-be"),
    ("Hello, this is plain English text in UTF-16.", "utf-16-le"),
])
def test_each_encoding_comes_out_as_itself_not_mojibake(text, encoding):
    [doc] = load_bytes("doc.txt", text.encode(encoding))
    assert doc.text == text, (encoding, doc.metadata["encoding"])


def test_unknown_extension_lists_supported():
    with pytest.raises(LoaderError) as e:
        load_bytes("slides.pptx", b"hello")
    for ext in (".txt", ".md", ".pdf", ".json", ".jsonl", ".csv"):
        assert ext in str(e.value)


def test_size_limit(monkeypatch):
    monkeypatch.setattr(documents, "MAX_FILE_BYTES", 100)
    with pytest.raises(LoaderError, match="limit"):
        load_bytes("big.txt", b"a" * 101)
    assert MAX_FILE_BYTES >= 10 * 10**6


def test_a_file_just_over_the_limit_never_reads_as_the_limit():
    err = documents.too_big("x.txt", MAX_FILE_BYTES + 1)
    assert f"is {documents.MAX_FILE_MB}.1 MB" in str(err) and f"{documents.MAX_FILE_MB}.1 MB" in err.localized("zh")


def test_missing_path(tmp_path):
    with pytest.raises(LoaderError, match="check the path"):
        load_path(tmp_path / "nope.txt")


# ------------------------------------------------------------------------------------------ PDF


def test_real_small_pdf():
    data = make_pdf(["Hello RAG\nsecond line", "", "Page three (with parens)"], title="Handbook")
    [doc] = load_bytes("handbook v1.pdf", data)
    assert doc.doc_id == "handbook_v1" and doc.title == "Handbook"
    assert doc.metadata["pages"] == "3"
    assert "Hello RAG" in doc.text and "Page three (with parens)" in doc.text
    starts = [int(x) for x in doc.metadata["page_starts"].split(",")]
    assert doc.text[starts[0]:].startswith("Hello RAG")
    assert doc.text[starts[2]:].startswith("Page three")


def test_pdf_title_falls_back_to_file_name():
    [doc] = load_bytes("x.pdf", make_pdf(["only text"]))
    assert doc.title == "x.pdf" and doc.text == "only text"


@pytest.mark.parametrize("data", [b"%PDF-1.4\n1 0 obj << /Type /Catalog", b"%PDF-1.7\n" + bytes(range(256))])
def test_malformed_pdf(data):
    with pytest.raises(LoaderError, match="malformed PDF"):
        load_bytes("broken.pdf", data)


def test_not_a_pdf_at_all():
    with pytest.raises(LoaderError, match="not a PDF"):
        load_bytes("fake.pdf", b"just some text")


def test_scanned_pdf_needs_ocr():
    with pytest.raises(LoaderError, match="OCR"):
        load_bytes("scan.pdf", make_pdf(["", ""]))


# ------------------------------------------------------------------------------------- records


def test_jsonl_records_and_aliases():
    lines = [
        {"id": "faq_001", "title": "退货", "text": "七天内可退。", "url": "https://x", "tags": ["a", "b"], "rank": 3},
        {"question": "How to return?", "answer": "Within 7 days.", "metadata": {"section": "returns"}},
        {"id": "faq_003", "text": "无标题正文"},
    ]
    data = "\n".join(json.dumps(x, ensure_ascii=False) for x in lines).encode() + b"\n\n"
    d1, d2, d3 = load_bytes("faq.jsonl", data)
    assert (d1.doc_id, d1.title, d1.text) == ("faq_001", "退货", "退货\n七天内可退。")
    assert d1.metadata["url"] == "https://x" and d1.metadata["tags"] == '["a", "b"]' and d1.metadata["rank"] == "3"
    assert all(isinstance(v, str) for v in d1.metadata.values())
    assert (d2.doc_id, d2.title, d2.text) == ("faq-2", "How to return?", "How to return?\nWithin 7 days.")
    assert d2.metadata["section"] == "returns"
    assert d3.text == "无标题正文" and d3.title == ""
    assert d1.source == "faq.jsonl" and d1.metadata["format"] == "jsonl"


def test_jsonl_malformed_line_number():
    data = b'{"id": "a", "text": "ok"}\n\n{"id": "b", "text": "broken"\n'
    with pytest.raises(LoaderError, match="line 3"):
        load_bytes("c.jsonl", data)


def test_jsonl_missing_text_names_record():
    data = b'{"id": "a", "text": "ok"}\n{"id": "b7", "title": "no body"}\n'
    with pytest.raises(LoaderError, match=r"line 2.*b7.*text"):
        load_bytes("c.jsonl", data)


@pytest.mark.parametrize("wrap", [lambda r: r, lambda r: {"records": r}, lambda r: {"data": r}, lambda r: {"items": r}])
def test_json_shapes(wrap):
    recs = [{"id": 1, "title": "T", "text": "body"}, {"text": "second"}]
    docs = load_bytes("kb.json", json.dumps(wrap(recs)).encode())
    assert [d.doc_id for d in docs] == ["1", "kb-2"]
    assert docs[0].text == "T\nbody"


def test_json_malformed_reports_line():
    with pytest.raises(LoaderError, match="line 3"):
        load_bytes("kb.json", b'[\n {"text": "a"},\n {"text": }\n]')


def test_json_record_missing_text():
    with pytest.raises(LoaderError, match=r"record 2.*'x'.*text"):
        load_bytes("kb.json", b'[{"text": "a"}, {"id": "x", "title": "t"}]')


def test_json_wrong_shape():
    with pytest.raises(LoaderError, match="records"):
        load_bytes("kb.json", b'{"foo": 1}')


def test_duplicate_ids_within_a_file_are_renamed():
    docs = load_bytes("d.jsonl", b'{"id": "a", "text": "1"}\n{"id": "a", "text": "2"}\n')
    assert [d.doc_id for d in docs] == ["a", "a-2"]
    assert docs[1].metadata["original_id"] == "a"


@pytest.mark.parametrize("sep", [",", "\t"])
def test_csv(sep):
    rows = [["ID", "question", "answer", "url"], ["q1", "怎么退货", "七天内，凭发票", "u1"], ["", "", "", ""],
            ["", "No id", 'Quoted "x", with comma', ""]]
    text = "\n".join(sep.join(f'"{c}"' if ("," in c or '"' in c) and sep == "," else c for c in r) for r in rows)
    text = text.replace('"Quoted "x", with comma"', '"Quoted ""x"", with comma"')
    docs = load_bytes("faq.csv", text.encode("gbk" if sep == "\t" else "utf-8"))
    assert [d.doc_id for d in docs] == ["q1", "faq-2"]
    assert docs[0].text == "怎么退货\n七天内，凭发票" and docs[0].metadata["url"] == "u1"
    assert docs[1].text.endswith('Quoted "x", with comma')


def test_csv_without_text_column():
    with pytest.raises(LoaderError, match="columns found: id, name"):
        load_bytes("t.csv", b"id,name\n1,x\n")


def test_csv_row_missing_text():
    with pytest.raises(LoaderError, match="row 3"):
        load_bytes("t.csv", b"id,text\n1,ok\n2,\n")


# ------------------------------------------------------------------------------------ load_files


def test_load_files_keeps_good_files_and_dedupes():
    files = [
        ("notes.txt", "第一份".encode()),
        ("bad.json", b"[{"),
        ("notes.md", b"# Notes\nsecond file, same stem"),
        ("empty.txt", b""),
        ("scan.pdf", make_pdf([""])),
        ("notes.txt", "third".encode("utf-8")),
    ]
    report = load_files(files)
    assert [d.doc_id for d in report.documents] == ["notes", "notes-2", "notes-3"]
    assert [d.text for d in report.documents] == ["第一份", "# Notes\nsecond file, same stem", "third"]
    assert sorted(e.source for e in report.errors) == ["bad.json", "empty.txt", "scan.pdf"]
    assert all(isinstance(e, LoaderError) for e in report.errors)
    assert report.counts == {"notes.txt": 2, "notes.md": 1}


def test_load_jsonl_corpus_eval_format(tmp_path):
    p = tmp_path / "corpus.jsonl"
    p.write_text('{"id": "DEV_0", "title": "战国无双3", "text": "《战国无双3》是游戏。"}\n', encoding="utf-8")
    [doc] = load_jsonl_corpus(p)
    assert doc == Document("DEV_0", "战国无双3\n《战国无双3》是游戏。", "战国无双3", "corpus.jsonl",
                           {"source": "corpus.jsonl", "format": "jsonl"})


def test_knowledge_base_loads():
    docs = load_knowledge_base()
    assert len(docs) >= 5
    assert len({d.doc_id for d in docs}) == len(docs)
    assert all(d.text.strip() for d in docs)


def test_aes_pdf_with_only_an_owner_password_opens_like_in_any_reader():
    data = encrypt_pdf(make_pdf(["Hello AES"]), user="", owner="owner-secret")
    [doc] = load_bytes("locked.pdf", data)
    assert "Hello AES" in doc.text


def test_aes_pdf_with_a_user_password_asks_for_an_unprotected_copy():
    data = encrypt_pdf(make_pdf(["Hello AES"]), user="user-secret", owner="owner-secret")
    with pytest.raises(LoaderError, match="password-protected") as err:
        load_bytes("locked.pdf", data)
    assert "damaged" not in str(err.value)

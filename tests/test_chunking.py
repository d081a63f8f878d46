"""Chunkers: offsets are exact slices, overlaps are exact, sentences stay whole, parents contain
children, Markdown tables stay whole, and the ref rule that citations depend on."""

from __future__ import annotations

import pytest

from rag.errors import ConfigError
from rag.ingest.chunking import CHUNKERS, Chunk, ChunkSet, chunk_documents, context_for
from rag.ingest.documents import Document, load_bytes
from rag.ingest.sentences import sentence_spans
from tests.fakes import BigramEmbedder
from tests.fixtures_docs import make_pdf

ZH_SENTENCES = [
    "检索增强生成先从知识库中找出相关段落。",
    "然后把段落和问题一起交给语言模型！",
    "模型应该只根据给定的资料回答吗？",
    "是的；",
    "如果资料不足，就要明确说资料不足。",
    "This is an English sentence in the middle.",
    "Does it split on question marks?",
    "Yes!",
    "And on exclamation marks too.",
    "Decimals like 3.14 and hosts like example.com stay inside one sentence.",
    "省略号也算句末……",
    "他说：“好的。”",
    "最后一句没有句号",
]


def _doc_from_sentences(sentences, seps=(" ", "\n", "  ", "\n\n")):
    """Text built from known sentences, with their exact (start, end) spans."""
    text, spans = "", []
    for i, s in enumerate(sentences):
        if i:
            text += seps[i % len(seps)]
        spans.append((len(text), len(text) + len(s)))
        text += s
    return Document("zh_en", text, "mixed"), spans


def _squash(text: str) -> str:
    return "".join(text.split())


def _long_doc(n=40):
    sentences = [ZH_SENTENCES[i % (len(ZH_SENTENCES) - 1)] for i in range(n)]
    return _doc_from_sentences(sentences)[0]


ZH_TEXT = "".join(ZH_SENTENCES) * 6
EN_TEXT = " ".join(ZH_SENTENCES[4:8]) * 10


# -------------------------------------------------------------------------------------- fixed


@pytest.mark.parametrize("text", [ZH_TEXT, EN_TEXT], ids=["zh", "en"])
@pytest.mark.parametrize("size,overlap", [(300, 50), (100, 0), (64, 63), (7, 3), (2, 1), (3, 0), (50, 25)])
def test_fixed_overlap_tail_equals_next_head(text, size, overlap):
    doc = Document("d", text)
    chunks = chunk_documents([doc], "fixed", chunk_size=size, overlap=overlap).chunks
    assert len(chunks) >= 2
    for c in chunks:
        assert c.text == doc.text[c.start:c.end] and 0 < len(c.text) <= size
    for a, b in zip(chunks, chunks[1:]):
        assert b.start == a.end - overlap
        if overlap:
            assert a.text[-overlap:] == b.text[:overlap]
    assert chunks[0].start == 0 and chunks[-1].end == len(text)
    assert all(len(c.text) == size for c in chunks[:-1])


def test_fixed_no_whitespace_only_chunks():
    text = "   开头" + " " * 40 + "中间内容在这里" + "\n" * 100 + "结尾。\n\n   "
    doc = Document("d", text)
    chunks = chunk_documents([doc], "fixed", chunk_size=10, overlap=3).chunks
    assert all(c.text.strip() for c in chunks)
    assert chunks[0].text.startswith("开头") and chunks[-1].text.endswith("结尾。")
    covered = "".join(doc.text[c.start:c.end] for c in chunks)
    for ch in "开头中间内容在这里结尾":
        assert ch in covered
    for a, b in zip(chunks, chunks[1:]):
        if b.start < a.end:  # same run: exact overlap
            assert b.start == a.end - 3 and a.text[-3:] == b.text[:3]
        else:  # a whitespace gap of >= chunk_size separated them
            assert doc.text[a.end:b.start].strip() == "" and b.start - a.end >= 0
    assert any(b.start >= a.end for a, b in zip(chunks, chunks[1:]))


@pytest.mark.parametrize("params,fix", [
    ({"chunk_size": 50, "overlap": 50}, "overlap=50 must be < chunk_size=50"),
    ({"chunk_size": 50, "overlap": 80}, "lower the overlap"),
    ({"chunk_size": 0}, "chunk_size=0 must be >= 1"),
    ({"chunk_size": -5, "overlap": 0}, "chunk_size"),
    ({"overlap": -1}, "overlap=-1"),
    ({"chunk_size": "big"}, "must be an integer"),
])
def test_fixed_bad_params(params, fix):
    with pytest.raises(ConfigError, match=fix):
        chunk_documents([], "fixed", **params)  # checked even for an empty corpus


def test_unknown_method_and_param():
    with pytest.raises(ConfigError) as e:
        chunk_documents([], "paragraph")
    for name in CHUNKERS:
        assert name in str(e.value)
    with pytest.raises(ConfigError, match="chunk_sise.*accepted: chunk_size, overlap"):
        chunk_documents([], "fixed", chunk_sise=10)


# ---------------------------------------------------------------------------- every chunker


PARAMS = {
    "fixed": {"chunk_size": 60, "overlap": 10},
    "sentence": {"target_size": 60},
    "parent_child": {"parent_size": 120, "child_size": 40},
    "markdown": {"max_size": 60},
    "semantic": {"max_size": 60, "min_size": 0},
    "document": {},
    "auto": {"target_size": 60},
}
READS = {"markdown"}  # chunkers whose text is the source read as a document (markup as text), not the slice
EMB = BigramEmbedder()  # semantic chunking embeds sentences; the other chunkers ignore it


@pytest.mark.parametrize("method", list(CHUNKERS))
def test_offsets_are_exact_slices(method):
    md = Document("md", "# 标题\n\n" + ZH_TEXT[:200] + "\n\n## Sub\n" + EN_TEXT[:150])
    docs = [_long_doc(), md, Document("e", " \n")]
    cs = chunk_documents(docs, method, embedder=EMB, **PARAMS[method])
    assert isinstance(cs, ChunkSet) and cs.method == method
    by_doc = {d.doc_id: d for d in docs}
    for c in cs.chunks + list(cs.parents.values()):
        assert isinstance(c, Chunk)
        source = by_doc[c.doc_id].text[c.start:c.end]
        if method in READS:  # read from its source span: the body is the span's text (line breaks joined: no markup here)
            assert source.strip() and _squash(c.text.split("\n", 1)[-1]) in _squash(source)
        else:
            assert c.text == source and c.text.strip()
        assert c.metadata["method"].split(":")[0] == method
        assert c.metadata["title"] == (c.text.split("\n", 1)[0] if method in READS and c.metadata["heading_path"]
                                       else by_doc[c.doc_id].title)
    ids = [c.chunk_id for c in cs.chunks] + list(cs.parents)
    assert len(ids) == len(set(ids))
    assert not [c for c in cs.chunks if c.doc_id == "e"]  # whitespace-only document yields nothing
    assert cs.params == {**{k: v for k, v in cs.params.items()}, **PARAMS[method]}


@pytest.mark.parametrize("method", list(CHUNKERS))
def test_ref_rule_single_chunk_doc(method):
    docs = [Document("faq_003", "退货政策\n七天内可无理由退货。", "退货政策", metadata={"url": "u"}), _long_doc()]
    cs = chunk_documents(docs, method, embedder=EMB, **PARAMS[method])
    [faq] = [c for c in cs.chunks if c.doc_id == "faq_003"]
    assert faq.ref == "faq_003"
    assert faq.metadata["url"] == "u"
    ctx = context_for(cs, faq)
    assert ctx.chunk_id == "faq_003" and ctx.ref == "faq_003"
    long_chunks = [c for c in cs.chunks if c.doc_id == "zh_en"]
    if method == "document":
        assert [c.ref for c in long_chunks] == ["zh_en"]
    elif method == "parent_child":
        parent_refs = sorted({c.ref for c in long_chunks}, key=lambda r: int(r.split("#")[1]))
        assert parent_refs == [f"zh_en#{n}" for n in range(1, len(parent_refs) + 1)]
        assert all(c.chunk_id.startswith(c.ref + ".") for c in long_chunks)
    else:
        assert [c.ref for c in long_chunks] == [f"zh_en#{n}" for n in range(1, len(long_chunks) + 1)]
        assert all(c.chunk_id == c.ref and c.parent_id is None for c in long_chunks)


def test_duplicate_doc_ids_rejected():
    with pytest.raises(ConfigError, match="load_files"):
        chunk_documents([Document("a", "x"), Document("a", "y")], "sentence")


# ----------------------------------------------------------------------------------- sentence


def test_fixture_sentences_are_what_the_splitter_sees():
    """The boundary tests below rely on these spans being the splitter's (rag/ingest/sentences.py) sentences."""
    doc, spans = _doc_from_sentences(ZH_SENTENCES)
    assert sentence_spans(doc.text) == spans
    zh = [s for s in ZH_SENTENCES if not s.isascii()]  # Chinese needs no space after a terminator
    doc, spans = _doc_from_sentences(zh, seps=("",))
    assert sentence_spans(doc.text) == spans


def test_sentence_chunks_in_a_window_keep_absolute_offsets():
    doc, spans = _doc_from_sentences(["前言。"] + ["第二段的句子。"] * 6, seps=("\n",))
    cs = chunk_documents([doc], "parent_child", parent_size=30, child_size=10)
    kid_edges = sorted((c.start, c.end) for c in cs.chunks)
    assert kid_edges == spans  # every child is exactly one sentence, located in the whole document


@pytest.mark.parametrize("target", [30, 60, 100, 250])
def test_sentence_chunker_never_cuts_inside_a_sentence(target):
    terminated = ZH_SENTENCES[:-1]  # the last one has no terminator, so it would run into the next
    doc, spans = _doc_from_sentences([terminated[i % len(terminated)] for i in range(30)])
    assert (max(e - s for s, e in spans) > target) == (target < 100)  # 30 and 60 exercise hard splits
    chunks = chunk_documents([doc], "sentence", target_size=target, min_tail=0).chunks
    starts, ends = {s for s, _ in spans}, {e for _, e in spans}
    long_ones = [(s, e) for s, e in spans if e - s > target]
    for c in chunks:
        inside_long = any(s <= c.start < e for s, e in long_ones) or any(s < c.end <= e for s, e in long_ones)
        if not inside_long:
            assert c.start in starts and c.end in ends
            assert len(c.text) <= target
    # greedy packing: the next sentence would not have fit
    for a, b in zip(chunks, chunks[1:]):
        nxt = next(e for s, e in spans if s == b.start) if b.start in starts else None
        if nxt is not None and a.end in ends:
            assert nxt - a.start > target


def test_sentence_tail_merges_into_previous():
    doc, _ = _doc_from_sentences(["甲" * 50 + "。", "乙" * 50 + "。", "短。"], seps=("",))
    chunks = chunk_documents([doc], "sentence", target_size=52).chunks  # min_tail = 52 // 4 = 13
    assert [c.text for c in chunks] == ["甲" * 50 + "。", "乙" * 50 + "。短。"]
    unmerged = chunk_documents([doc], "sentence", target_size=52, min_tail=0).chunks
    assert [c.text for c in unmerged] == ["甲" * 50 + "。", "乙" * 50 + "。", "短。"]


def test_long_sentence_is_hard_split():
    long = "这是一个没有任何标点的超长句子" * 10  # 150 chars, no terminator
    doc, _ = _doc_from_sentences(["开头一句。", long + "。", "结尾一句话。"], seps=("",))
    chunks = chunk_documents([doc], "sentence", target_size=40, min_tail=0).chunks
    assert all(len(c.text) <= 40 for c in chunks)
    assert chunks[0].text == "开头一句。"
    assert "".join(c.text for c in chunks) == doc.text  # contiguous: nothing lost, nothing repeated
    assert sum(1 for c in chunks if c.text and c.text[-1] not in "。") >= 3


def test_sentence_overlap():
    doc, spans = _doc_from_sentences([f"第{i}句话写在这里。" for i in range(12)], seps=("",))
    chunks = chunk_documents([doc], "sentence", target_size=40, overlap_sentences=1, min_tail=0).chunks
    for a, b in zip(chunks, chunks[1:]):
        last_of_a = next(s for s, e in spans if e == a.end)
        assert b.start == last_of_a  # b repeats exactly a's last sentence
        assert b.end > a.end


def test_sentence_bad_params():
    with pytest.raises(ConfigError, match="target_size"):
        chunk_documents([], "sentence", target_size=0)


# ------------------------------------------------------------------------------- parent_child


def test_parent_child_structure():
    doc = _long_doc(60)
    cs = chunk_documents([doc], "parent_child", parent_size=200, child_size=60)
    assert len(cs.parents) >= 3 and len(cs.chunks) > len(cs.parents)
    for child in cs.chunks:
        parent = cs.parents[child.parent_id]
        assert parent.start <= child.start < child.end <= parent.end
        assert child.text in parent.text and child.ref == parent.ref
        assert context_for(cs, child) is parent
        assert len(child.text) <= 60 + 60 // 4 + 2
    for p in cs.parents.values():
        assert p.parent_id is None and p.chunk_id == p.ref
        kids = [c for c in cs.chunks if c.parent_id == p.chunk_id]
        assert kids and [c.chunk_id for c in kids] == [f"{p.ref}.{m}" for m in range(1, len(kids) + 1)]
        assert kids[0].start == p.start and kids[-1].end == p.end
    spans = sorted((p.start, p.end) for p in cs.parents.values())
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))  # parents do not overlap
    with pytest.raises(ConfigError, match="child_size"):
        chunk_documents([], "parent_child", parent_size=100, child_size=200)


# ----------------------------------------------------------------------------------- markdown

MD = """前言一段。

# 用户手册

## 安装

先安装 Python。然后运行 pip install。

```bash
# 这不是标题
pip install rag
```

## 价格

| 套餐 | 价格 | 说明 |
|---|---|---|
| 基础版 | 0 元 | 适合个人学习使用，功能有限。 |
| 专业版 | 99 元 | 适合团队，包含更多功能和支持。 |
| 企业版 | 面议 | 私有部署，提供专属技术支持服务。 |

价格表之后的说明文字。这里还有第二句话。

### 退款

七天内可退款。
"""


def test_markdown_heading_paths_and_table_whole():
    doc = Document("manual", MD, "用户手册")
    chunks = chunk_documents([doc], "markdown", max_size=80).chunks
    paths = [c.metadata["heading_path"] for c in chunks]
    assert paths[0] == ["用户手册"] and chunks[0].text == "用户手册\n前言一段。"  # the file's title opens the path
    assert ["用户手册", "安装"] in paths and ["用户手册", "价格", "退款"] in paths
    assert not any("这不是标题" in p for path in paths for p in path)  # code fence is not a heading
    install = [c for c in chunks if c.metadata["heading_path"] == ["用户手册", "安装"]]
    assert install[0].text.startswith("用户手册 › 安装\n先安装 Python。")  # the title path, then the section's text
    assert "```bash\n# 这不是标题\npip install rag\n```" in install[0].text  # code stays a fenced unit
    assert install[0].metadata["heading"] == "安装"
    assert doc.text[install[0].start:install[0].end].startswith("先安装 Python")  # the span is the source's
    holders = [c for c in chunks if "| 套餐" in c.text]
    assert len(holders) == 1 and "| 企业版 | 面议 | 私有部署，提供专属技术支持服务。 |" in holders[0].text  # one unit
    assert "|---|" not in holders[0].text  # the rule row is markup
    assert not [c for c in chunks if "| 专业版" in c.text and c is not holders[0]]
    refund = [c for c in chunks if c.metadata["heading_path"][-1:] == ["退款"]]
    assert refund[0].text == "用户手册 › 价格 › 退款\n七天内可退款。"


@pytest.mark.parametrize("indent", ["", "    "])
def test_a_long_code_block_is_cut_where_the_preview_draws_the_cut(indent):
    """Issue 65, item 13: a code block over max_size is cut at line ends, but its source span was shared out in
    proportion, so the preview drew each cut mid-line. Each piece's span now starts at the source line its first
    line came from (a build mark the reader dropped and a code tab's indentation included) and ends where the next
    starts."""
    lines = [f"x{i} = {'y' * (i * 7 % 23)}" for i in range(60)]
    code = ["```python", "#@save", *lines, "```"]
    tab = '=== "Python"\n\n' if indent else ""  # hello_algo's code tabs indent their fences
    text = "# T\n\n文字。\n\n" + tab + "".join(f"{indent}{x}\n" for x in code)
    doc = Document("d", text, "T")
    pieces = [c for c in chunk_documents([doc], "markdown", max_size=200).chunks if c.metadata["kind"] == "code"]
    assert len(pieces) >= 4
    for before, c in zip(pieces, pieces[1:]):
        first = c.text.split("\n")[2]  # the title path, the fence, then the piece's first line of code
        assert text[c.start - 1] == "\n" and text[c.start:c.end].lstrip().startswith(first + "\n"), (first, c.start)
        assert before.end == c.start and text[before.start:before.end].rstrip().endswith(before.text.split("\n")[-2])


def test_markdown_plain_text_is_one_section():
    doc = Document("p", "没有标题的纯文本。第二句。")
    [c] = chunk_documents([doc], "markdown").chunks
    assert c.metadata["heading_path"] == [] and c.ref == "p" and c.text == doc.text


def test_pdf_chunks_carry_page_numbers():
    [doc] = load_bytes("r.pdf", make_pdf(["Alpha page one. " * 5, "Beta page two. " * 5]))
    chunks = chunk_documents([doc], "sentence", target_size=60, min_tail=0).chunks
    assert chunks[0].metadata["page"] == "1" and chunks[-1].metadata["page"] == "2"
    assert "page_starts" not in chunks[0].metadata and chunks[0].metadata["pages"] == "2"


# -------------------------------------------------------------------------------------- speed


@pytest.mark.parametrize("method", list(CHUNKERS))
def test_one_megabyte_is_cut_into_slices_of_the_text(method):
    """Speed is measured in bench/bench_chunking.py; here, that a megabyte comes out whole and exact."""
    text = ("".join(ZH_SENTENCES) + "\n\n## 小节\n\n") * (1_000_000 // 330)
    doc = Document("big", text)
    cs = chunk_documents([doc], method, embedder=EMB)
    if method in READS:  # read as a document: each chunk's body is the text of its span
        assert cs.chunks and all(_squash(c.text.split("\n", 1)[-1]) in _squash(text[c.start:c.end]) for c in cs.chunks)
    else:
        assert cs.chunks and all(c.text == text[c.start:c.end] for c in cs.chunks)
    assert not text[: min(c.start for c in cs.chunks)].strip()  # nothing dropped at the front


def test_a_list_items_marker_is_in_the_chunk_but_not_in_what_is_indexed_or_measured():
    """The Markdown reader keeps a list item's marker ("- ", "2. "); the index reads the chunk without it and the
    sections measure their size without it, so a list is found and cut where it was when the reader dropped markers."""
    from rag.ingest.contextual import index_text

    items = "".join(f"- 第{k}条规则说明了一件事情。\n" for k in range(1, 9))
    doc = Document("rules", f"# 规则\n\n以下是规则。\n\n{items}", "规则")
    chunks = chunk_documents([doc], "markdown", max_size=56).chunks
    plain = chunk_documents([Document("rules", f"# 规则\n\n以下是规则。\n\n{items.replace('- ', '')}", "规则")],
                            "markdown", max_size=56).chunks
    assert "\n- 第1条规则说明了一件事情。" in chunks[0].text
    assert [index_text(c) for c in chunks] == [c.text for c in plain]  # the same pieces, markers left out

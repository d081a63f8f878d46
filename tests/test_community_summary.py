"""Community summaries (rag/graph/summary.py): what the audit keeps of what the model wrote, case by case, each
dropping rule beside a sentence it keeps; the evidence the model is shown; the quote when nothing is left."""

from __future__ import annotations

import pytest

from rag.loops.community import CommunitySummary, audited, written_by
from tests.fake_chat import FakeChat

CHUNKS = {
    "faq_018": "提示词工程是通过设计输入文本来引导大模型输出的方法，不需要改动模型参数。常用技巧：写清楚角色和任务目标，"
               "说明受众和输出格式。",
    "faq_016": "LoRA（Low-Rank Adaptation）是一种参数高效微调方法。它冻结预训练模型的原始权重 W。",
}
QUOTE = "LoRA（Low-Rank Adaptation）是一种参数高效微调方法。"


@pytest.mark.parametrize("written, why", [
    ("提示词工程是通过设计输入文本来引导大模型输出的方法。", None),  # a faithful copy stays
    ("LoRA 是一种参数高效微调方法。", None),
    ("Prompt engineering guides the model's output by designing the input.", "other-language"),
    ("这组实体讲的是提示词工程和 LoRA。", "template-opener"),
    ("这些原文讲的是提示词工程是通过设计输入文本来引导大模型输出的方法。", "template-opener"),
    ("提示词工程、LoRA、角色、任务目标、输出格式。", "not-a-sentence"),
    ("知识工程：通过设计输入文本来引导大模型输出的方法，不需要改动模型参数。", "new-name"),
    ("知识工程是通过设计输入文本来引导大模型输出的方法。", "new-name"),
    ("LoRA 会让模型在训练集上完全记住所有样本。", "weak"),
    ("LoRA 能够显著降低推理阶段的网络延迟并提升吞吐。", "unsupported"),
])
def test_each_sentence_the_model_writes_is_kept_only_when_it_passes(written, why):
    out = audited(written, "zh", CHUNKS, QUOTE)
    if why is None:
        assert out.by == "model" and out.text and not out.dropped
    else:
        assert out.by == "quote" and out.text == QUOTE
        assert [w for _, w in out.dropped] == [why], out.dropped


def test_a_sentence_cut_off_by_the_token_limit_is_dropped_and_a_whole_one_kept():
    out = audited("LoRA 是一种参数高效微调方法。常用技巧：写清楚角色和任务目标，说明受众和输出", "zh", CHUNKS, QUOTE)
    assert out.by == "model" and out.text == "LoRA 是一种参数高效微调方法。"
    assert [w for _, w in out.dropped] == ["cut-off"]


def test_a_summary_keeps_two_sentences():
    three = "LoRA 是一种参数高效微调方法。它冻结预训练模型的原始权重 W。提示词工程不需要改动模型参数。"
    out = audited(three, "zh", CHUNKS, QUOTE)
    assert out.text.count("。") == 2 and [w for _, w in out.dropped] == ["too-long"]


def test_who_wrote_them_is_counted_in_both_languages():
    by = written_by([CommunitySummary("a", "model"), CommunitySummary("b", "quote"), CommunitySummary("c", "quote")],
                    "Qwen (test)")
    assert "Qwen (test)" in by and "(1)" in by and "(2)" in by
    assert "1 个" in by.zh and "2 个" in by.zh


def test_the_evidence_is_the_sentences_that_name_the_community_and_never_a_question():
    from rag.graph.extraction import Entity, Extraction
    from rag.graph.graph import build_graph
    from rag.ingest.chunking import Chunk
    from rag.loops.community import evidence

    texts = {"a": "什么是 LoRA？LoRA 是一种参数高效微调方法，只训练低秩矩阵 A 和 B。它冻结原始权重。",
             "b": "全参数微调更新所有权重。LoRA 和全参数微调都是微调。天气很好。"}
    chunks = [Chunk(chunk_id=k, doc_id=k, ref=k, text=v, start=0, end=len(v), metadata={}) for k, v in texts.items()]
    exs = [Extraction([Entity("LoRA", "方法"), Entity("全参数微调", "方法")], [], "test", 0.0) for _ in chunks]
    graph = build_graph(chunks, exs, None, {})
    c = max(graph.communities, key=lambda x: len(x.entities))
    got = [s for _, s in evidence(graph, c, texts)]
    assert "LoRA 和全参数微调都是微调。" in got and "LoRA 是一种参数高效微调方法，只训练低秩矩阵 A 和 B。" in got
    assert not any(s.endswith("？") or s.startswith("它") or "天气" in s for s in got)


def test_a_subject_is_a_name_only_where_the_chunk_starts_a_word_with_it():
    chunks = {"x": "庆大霉素是一种抗生素，主要用于治疗革兰氏阴性菌感染。"}
    assert audited("大霉素是一种抗生素。", "zh", chunks, "q").dropped[0][1] == "new-name"
    assert audited("庆大霉素是一种抗生素。", "zh", chunks, "q").by == "model"


def test_a_model_that_can_score_chooses_a_sentence_and_writes_none():
    from rag.loops.community import chosen

    sentences = ["LoRA 是一种参数高效微调方法。", "它冻结预训练模型的原始权重 W。"]
    table = {sentences[0]: -0.5, sentences[1]: -1.5}
    out = chosen(FakeChat(score=lambda messages, reply: [table[reply]] * 4), "zh", sentences)
    assert out.by == "chosen" and out.text == sentences[0]
    assert [c for c, _ in out.choices] == sentences and out.choices[0][1] > out.choices[1][1]

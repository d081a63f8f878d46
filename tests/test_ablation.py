"""Gold ablation, the learned gate's and selector's training data: a question over its corpus, and over the corpus
less its gold passage (rag/evaluate/ablation.py)."""

from __future__ import annotations

import numpy as np
import pytest

from rag.answer.learned_gate import GATE_FEATURES
from rag.answer.selector import SELECT_FEATURES
from rag.evaluate.ablation import Question, near_duplicates, run_question, without
from rag.index.build import build_index
from rag.run import RunContext
from rag.trace import AskSettings


def test_near_duplicates_pairs_a_copy_and_leaves_a_different_passage():
    base = "RRF 由 Cormack 等人于 2009 年提出，用于合并多个检索结果列表，k 是平滑常数，通常取 60。"
    texts = {"a": base, "b": base.replace("通常取 60", "一般取 60"), "c": "BM25 的 k1 控制词频饱和，b 控制长度归一化。"}
    dupes = near_duplicates(texts)
    assert dupes["a"] == {"b"} and dupes["b"] == {"a"} and dupes["c"] == set()


def test_without_drops_every_chunk_of_the_named_passages(kb_index):
    rest = without(kb_index.chunk_set, {"faq_030", "faq_029"})
    assert {c.doc_id for c in rest.chunks} == {c.doc_id for c in kb_index.chunks} - {"faq_030", "faq_029"}
    assert len(rest.chunks) == len(kb_index.chunks) - 2


@pytest.fixture(scope="module")
def rrf_runs(kb_index):
    from rag.answer.extractive import ExtractiveGenerator
    from rag.backends import choose_reranker

    reranker = choose_reranker("learned", kb_index.embedder).backend
    ctx = RunContext(kb_index, AskSettings(), ExtractiveGenerator(kb_index.embedder), reranker=reranker)
    q = Question("t1", "倒数排名融合里那个平滑常数 k 一般设成几？", ("faq_030",), ("通常取 60",))
    ablated = build_index(without(kb_index.chunk_set, {"faq_030"}), kb_index.embedder)
    return run_question(kb_index, q, ctx, "whole"), run_question(ablated, q, ctx, "ablated")


def test_the_question_over_its_corpus_is_answerable_and_its_sentence_is_the_positive(rrf_runs):
    (row, group), _ = rrf_runs
    assert row is not None and row.label == 1 and row.variant == "whole" and row.gold_doc == "faq_030"
    assert row.values.shape == (len(GATE_FEATURES),)
    assert group is not None and group.values.shape == (len(group.sentences), len(SELECT_FEATURES))
    positives = [s for s, y in zip(group.sentences, group.labels) if y]
    assert positives and all("通常取 60" in s for s in positives)


def test_the_same_question_without_its_gold_passage_is_a_near_miss(rrf_runs):
    (whole, _), (row, group) = rrf_runs
    assert row is not None and row.label == 0 and row.variant == "ablated" and group is None
    top_words = GATE_FEATURES.index("top_words_idf")
    assert row.values[top_words] < whole.values[top_words]  # its neighbours hold fewer of the question's rare words
    assert not np.isnan(row.values[GATE_FEATURES.index("rerank_top")])  # the learned ranker ran: its score is read

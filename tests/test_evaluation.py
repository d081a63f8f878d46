"""Metrics checked against numbers worked out by hand."""

import math

import pytest

from rag.errors import LoaderError
from rag.evaluate.evaluation import (
    Query,
    doc_ranking,
    evaluate_strategy,
    hit_at,
    load_queries,
    mrr_at,
    ndcg_at,
    recall_at,
)
from rag.search.hits import Hit


def test_metrics_on_a_hand_checked_ranking():
    ranked = ["x", "g1", "y", "g2", "z"]
    gold = ["g1", "g2", "g3"]
    assert hit_at(ranked, gold, 1) == 0.0
    assert hit_at(ranked, gold, 2) == 1.0
    assert recall_at(ranked, gold, 5) == pytest.approx(2 / 3)
    assert mrr_at(ranked, gold, 10) == pytest.approx(1 / 2)
    assert mrr_at(ranked, gold, 1) == 0.0
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at(ranked, gold, 10) == pytest.approx(dcg / idcg)
    assert ndcg_at(["g1"], ["g1"], 10) == pytest.approx(1.0)


def test_doc_ranking_counts_a_document_once_at_its_best_chunk():
    hits = [Hit("d1#2", 0.9, 1, "x"), Hit("d2", 0.8, 2, "x"), Hit("d1#1", 0.7, 3, "x")]
    assert doc_ranking(hits, lambda cid: cid.split("#")[0]) == ["d1", "d2"]


def test_evaluate_skips_unanswerable_and_averages():
    qs = [Query("1", "a", ("A",)), Query("2", "b", ("B",)), Query("3", "oov", (), False)]
    rep = evaluate_strategy("t", "t", qs, lambda q: {"a": ["A"], "b": ["X", "B"]}[q])
    assert len(rep.per_query) == 2
    assert rep.means["Hit@1"] == pytest.approx(0.5)
    assert rep.means["MRR@10"] == pytest.approx(0.75)


def test_load_queries_reports_the_bad_line(tmp_path):
    p = tmp_path / "q.jsonl"
    p.write_text('{"id": "1", "query": "q", "gold_ids": ["a"]}\n{"id": 2\n', encoding="utf-8")
    with pytest.raises(LoaderError, match="line 2"):
        load_queries(p)
    p.write_text('{"id": "1", "query": "q", "gold_ids": ["a"]}\n', encoding="utf-8")
    assert load_queries(p)[0].gold_ids == ("a",)

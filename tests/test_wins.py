"""Fusion against each single retriever, query by query (rag/evaluate/wins.py), on hand-checkable rankings."""

from __future__ import annotations

from rag.evaluate.evaluation import Query, StrategyReport, score_query
from rag.evaluate.wins import format_counts, verdicts, win_tie_loss

QUERIES = [Query("q1", "a", ("d1",)), Query("q2", "b", ("d2",)), Query("q3", "c", ("d3",))]


def report(name: str, rankings: list[list[str]]) -> StrategyReport:
    r = StrategyReport(name, name)
    r.per_query = [score_query(q, name, ranked) for q, ranked in zip(QUERIES, rankings)]
    return r


def test_counts_follow_each_querys_metric():
    dense = report("dense", [["d1"], ["x", "d2"], ["d3"]])       # ranks 1, 2, 1
    bm25 = report("bm25", [["x", "x", "d1"], ["d2"], ["x"]])      # ranks 3, 1, missed
    hybrid = report("hybrid", [["d1"], ["d2"], ["x", "d3"]])     # ranks 1, 1, 2
    counts = win_tie_loss([dense, bm25, hybrid])
    assert counts == {"hybrid": {"dense": {"win": 1, "tie": 1, "loss": 1},
                                 "bm25": {"win": 2, "tie": 1, "loss": 0}}}
    rows = verdicts([dense, bm25, hybrid])
    assert [r["vs dense"] for r in rows] == ["tie", "win", "loss"]
    assert "hybrid vs dense (nDCG@10 per query): 1 wins, 1 ties, 1 losses" in format_counts(counts)


def test_nothing_to_compare_without_a_fused_strategy():
    assert win_tie_loss([report("dense", [["d1"]] * 3)]) == {}
    assert verdicts([report("dense", [["d1"]] * 3)]) == []


def test_span_sets_compare_span_ranks_not_documents():
    from rag.evaluate.wins import default_metric

    dense, hybrid = report("dense", [["d1"]] * 3), report("hybrid", [["d1"]] * 3)
    dense.span_ranks, hybrid.span_ranks = {"q1": 1, "q2": None, "q3": 2}, {"q1": 2, "q2": 1, "q3": 2}
    assert default_metric([dense, hybrid]) == "span MRR@10"
    assert win_tie_loss([dense, hybrid], "span MRR@10") == {"hybrid": {"dense": {"win": 1, "tie": 1, "loss": 1}}}
    assert default_metric([report("dense", [["d1"]] * 3)]) == "nDCG@10"

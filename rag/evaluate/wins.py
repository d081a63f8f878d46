"""Did fusion beat, tie or lose to each single retriever, query by query?

A mean hides this: RRF can raise the average while losing on the very questions one retriever answered
alone. `win_tie_loss` compares a fused strategy's per-query metric (nDCG@10 by default; MRR@10 gives the
same picture for one gold document) with each single retriever's on the same queries; `verdicts` gives the
per-query rows behind the counts, for a page to list the losses.
Not handled here: running the strategies (strategies.py), the metrics themselves (evaluation.py).
"""

from __future__ import annotations

from typing import Sequence

from rag.evaluate.evaluation import StrategyReport, span_figures

FUSED = ("hybrid", "hybrid3", "m3", "hybrid+graph")  # strategies that fuse lists
SINGLES = ("dense", "bm25", "sparse", "multivector", "graph")
TIE = 1e-9


def _by_id(report: StrategyReport, metric: str) -> dict[str, float]:
    if metric.startswith("span "):  # span metrics: does a retrieved context hold the answer span?
        return {qid: span_figures(rank)[metric] for qid, rank in report.span_ranks.items()}
    return {r.query.query_id: r.metrics[metric] for r in report.per_query}


def default_metric(reports: Sequence[StrategyReport]) -> str:
    """span MRR@10 where every report has span ranks (long-form set: documents are too few to tell), else nDCG@10."""
    return "span MRR@10" if reports and all(r.span_ranks for r in reports) else "nDCG@10"


def win_tie_loss(reports: Sequence[StrategyReport], metric: str = "nDCG@10") -> dict[str, dict[str, dict[str, int]]]:
    """{fused: {single: {"win": n, "tie": n, "loss": n}}} for every fused and single strategy present
    (hybrid3, the three-way fusion, also against hybrid)."""
    named = {r.strategy: r for r in reports}
    out: dict[str, dict[str, dict[str, int]]] = {}
    for fused in (f for f in FUSED if f in named):
        f_scores = _by_id(named[fused], metric)
        others = [s for s in SINGLES if s in named] + (["hybrid"] if fused in ("hybrid3", "hybrid+graph") and "hybrid" in named else [])
        for single in others:  # three-way fusion is also set against two-way
            s_scores = _by_id(named[single], metric)
            counts = {"win": 0, "tie": 0, "loss": 0}
            for qid, value in f_scores.items():
                if qid in s_scores:
                    diff = value - s_scores[qid]
                    counts["win" if diff > TIE else "loss" if diff < -TIE else "tie"] += 1
            out.setdefault(fused, {})[single] = counts
    return out


def verdicts(reports: Sequence[StrategyReport], fused: str = "hybrid", metric: str = "nDCG@10") -> list[dict]:
    """One row per query: the query, each strategy's metric, and fused's verdict against each single."""
    named = {r.strategy: r for r in reports}
    if fused not in named:
        return []
    singles = [s for s in SINGLES if s in named]
    scores = {s: _by_id(named[s], metric) for s in singles}
    own = _by_id(named[fused], metric)
    rows = []
    for r in named[fused].per_query:
        if r.query.query_id not in own:
            continue
        row = {"id": r.query.query_id, "query": r.query.query, fused: own[r.query.query_id]}
        for s in singles:
            if r.query.query_id in scores[s]:
                diff = own[r.query.query_id] - scores[s][r.query.query_id]
                row[s] = scores[s][r.query.query_id]
                row[f"vs {s}"] = "win" if diff > TIE else "loss" if diff < -TIE else "tie"
        rows.append(row)
    return rows


def format_counts(counts: dict[str, dict[str, dict[str, int]]], metric: str = "nDCG@10") -> str:
    lines = []
    for fused, against in counts.items():
        for single, c in against.items():
            lines.append(f"{fused} vs {single} ({metric} per query): {c['win']} wins, {c['tie']} ties, "
                         f"{c['loss']} losses")
    return "\n".join(lines)

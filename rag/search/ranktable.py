"""Where each chunk sits in each ranked list: side-by-side rows, RRF arithmetic written out, rank paths.

The retrieval page lines up the dense, BM25 and fused lists rank by rank and writes out, for each fused
row, the Reciprocal Rank Fusion sum it came from: rrf(d) = sum_i w_i / (k + rank_i(d)) (Cormack, Clarke
& Buettcher, SIGIR 2009), using the `Contribution`s that fusion.rrf stored on the hit. The rerank page's
bump chart follows chunks across stages (dense -> BM25 -> RRF -> rerank) with `rank_paths`.
Not handled here: computing any ranking (retrieval.py, fusion.py, rerank.py) or drawing (app_pages/).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from rag.search.hits import Hit


def fusion_arithmetic(hit: Hit, rrf_k: int) -> str:
    """`dense 1/(60+1)=0.01639 + bm25 1/(60+3)=0.01587 = 0.03226` for a fused hit; its score for others."""
    if not hit.contributions:
        return f"{hit.score:.5f}"
    parts = [
        f"{c.retriever} {c.weight:g}/({rrf_k}+{c.rank})={c.term:.5f}" for c in hit.contributions
    ]
    return " + ".join(parts) + f" = {sum(c.term for c in hit.contributions):.5f}"


@dataclass(frozen=True)
class Row:
    rank: int
    cells: dict[str, Hit | None]  # list name -> the hit at this rank (None: the list is shorter)


def side_by_side(lists: Mapping[str, Sequence[Hit]], n: int) -> list[Row]:
    """Rows 1..n: the hit each list has at that rank. Stops early when every list has run out."""
    rows = []
    for r in range(1, n + 1):
        cells = {name: (hits[r - 1] if r <= len(hits) else None) for name, hits in lists.items()}
        if all(v is None for v in cells.values()):
            break
        rows.append(Row(r, cells))
    return rows


def rank_of(hits: Sequence[Hit]) -> dict[str, int]:
    """chunk_id -> 1-based rank in `hits`."""
    return {h.chunk_id: h.rank for h in hits}


def rank_paths(stages: Mapping[str, Sequence[Hit]], chunk_ids: Sequence[str]) -> dict[str, dict[str, int | None]]:
    """For each chunk, its rank at every stage (None: not in that stage's list), stages in the order given."""
    ranks = {stage: rank_of(hits) for stage, hits in stages.items()}
    return {cid: {stage: ranks[stage].get(cid) for stage in stages} for cid in chunk_ids}


def movers(stages: Mapping[str, Sequence[Hit]], top: int) -> list[str]:
    """The chunks worth following in a bump chart: the top `top` of every stage, first appearance order."""
    seen: dict[str, None] = {}
    for hits in stages.values():
        for h in hits[:top]:
            seen.setdefault(h.chunk_id, None)
    return list(seen)


def biggest_moves(moves, n: int = 3) -> list[str]:
    """The `n` chunks whose rank changed most in a rerank (rerank.RerankMove), largest first, ties by the rank
    before. A chunk that fell out of the kept top_k counts as landing just below it (top_k + 1); one that was
    below top_k and stayed there did not move. Chunks that did not move are never listed."""
    top_k = sum(m.after is not None for m in moves)

    def shift(m) -> int:
        if m.after is None:
            return max(0, top_k + 1 - m.before)
        return abs(m.after - m.before)

    ranked = sorted(moves, key=lambda m: (-shift(m), m.before))
    return [m.chunk_id for m in ranked if shift(m) > 0][:n]

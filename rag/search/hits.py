"""Ranked results that flow between retrieval, fusion and reranking.

A `Hit` is one chunk in one ranked list. Fused and reranked hits keep their provenance: the rank and
score the chunk had in every input list, and the exact `w / (k + rank)` term each list contributed, so
a page can show the fusion arithmetic instead of just the final number.
Not handled here: mapping chunk ids back to text (the caller holds the chunks).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Contribution:
    """What one input list contributed to a fused score."""

    retriever: str  # name of the input list: "dense", "bm25", "dense[q2]", ...
    rank: int  # 1-based rank of the chunk in that list
    score: float  # the list's own score (cosine, BM25, ...)
    weight: float  # w_i in the RRF formula
    term: float  # w_i / (k + rank_i): the amount added to the fused score


@dataclass(frozen=True)
class Hit:
    chunk_id: str
    score: float
    rank: int  # 1-based, best first
    retriever: str  # "dense" | "bm25" | "hybrid" | "rerank" | ...
    contributions: tuple[Contribution, ...] = ()  # empty for a single-retriever list

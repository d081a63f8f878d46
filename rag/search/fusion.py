"""Fusing ranked lists: weighted Reciprocal Rank Fusion, and (for comparison) min-max score fusion.

Reciprocal Rank Fusion (Cormack, Clarke & Buettcher, "Reciprocal Rank Fusion outperforms Condorcet
and individual Rank Learning Methods", SIGIR 2009):

    rrf(d) = sum over input lists i that contain d of  w_i / (k + rank_i(d)),   k = 60

Only ranks matter, so a cosine similarity (0..1) and a BM25 score (0..30) can be fused without
making their scales comparable; k dampens the gap between rank 1 and rank 2 (1/61 vs 1/62), so a
document ranked well by several lists beats one ranked first by a single list. The paper's lists are
unweighted (w_i = 1); weights are the usual extension for trusting one retriever more.

Every fused `Hit` keeps one `Contribution` per list it appeared in (rank, that list's score, w_i and
the term w_i / (k + rank_i)), so a page can show the arithmetic. Ties in the fused score are broken
by the best single rank the document had in any list, then by chunk_id, so the output never depends
on dict or set ordering.

`weighted_sum` is the score-based alternative: min-max normalise each list's scores to [0, 1] and add
them with weights (CombSUM with normalisation: Fox & Shaw, TREC-2, 1994; Lee, SIGIR 1997). It is here
so the two can be compared; its result depends on each list's score distribution and depth.
Not handled here: retrieving the lists (retrieval.py) and reranking the fused list (rerank.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rag.errors import ConfigError
from rag.search.hits import Contribution, Hit

_TIE_DIGITS = 12  # fused scores equal to 12 decimals are ties: float sums in another order differ by ~1e-17


def rrf(
    lists: Mapping[str, Sequence[Hit]],
    k: int = 60,
    weights: Mapping[str, float] | None = None,
    top_k: int | None = None,
    name: str = "hybrid",
) -> list[Hit]:
    """Fuse ranked lists (list name -> hits, best first) with weighted RRF.

    A hit's own `rank` (1-based) is the rank used, so a list that was cut or filtered upstream keeps
    its true ranks. A chunk listed twice in one list counts once, at its better rank. Lists missing
    from `weights` get weight 1.0. Returns hits named `name`, best first, at most `top_k` of them.
    """
    if not k > 0:
        raise ConfigError(f"RRF k={k} must be > 0 (60 is the value from Cormack et al. 2009)")
    _check_top_k(top_k)
    w = _weights(lists, weights)

    def term(name_: str, hit: Hit) -> float:
        return w[name_] / (k + hit.rank)

    for list_name, hits in lists.items():
        for hit in hits:
            if hit.rank < 1:
                raise ConfigError(
                    f"hit {hit.chunk_id!r} in list {list_name!r} has rank {hit.rank}: ranks are 1-based"
                )
    return _fuse(lists, w, term, top_k, name)


def weighted_sum(
    lists: Mapping[str, Sequence[Hit]],
    weights: Mapping[str, float] | None = None,
    top_k: int | None = None,
    name: str = "weighted-sum",
) -> list[Hit]:
    """Fuse by scores: each list's scores min-max normalised to [0, 1], times its weight, summed.

    norm(s) = (s - min) / (max - min) over the list's own hits; a list whose scores are all equal
    normalises every hit to 1.0. A document absent from a list gets nothing from it.
    """
    _check_top_k(top_k)
    w = _weights(lists, weights)
    bounds = {
        list_name: (min(h.score for h in hits), max(h.score for h in hits))
        for list_name, hits in lists.items()
        if hits
    }

    def term(name_: str, hit: Hit) -> float:
        lo, hi = bounds[name_]
        return w[name_] * ((hit.score - lo) / (hi - lo) if hi > lo else 1.0)

    return _fuse(lists, w, term, top_k, name)


def _fuse(lists, w, term, top_k, name) -> list[Hit]:
    contributions: dict[str, list[Contribution]] = {}  # chunk_id -> one entry per list it is in
    for list_name, hits in lists.items():
        seen: set[str] = set()
        for hit in sorted(hits, key=lambda h: h.rank):  # a duplicate keeps its better rank
            if hit.chunk_id in seen:
                continue
            seen.add(hit.chunk_id)
            contributions.setdefault(hit.chunk_id, []).append(
                Contribution(
                    retriever=list_name,
                    rank=hit.rank,
                    score=hit.score,
                    weight=w[list_name],
                    term=term(list_name, hit),
                )
            )

    fused = [(cid, sum(c.term for c in cs), tuple(cs)) for cid, cs in contributions.items()]
    fused.sort(key=lambda f: (-round(f[1], _TIE_DIGITS), min(c.rank for c in f[2]), f[0]))
    if top_k is not None:
        fused = fused[:top_k]
    return [
        Hit(chunk_id=cid, score=score, rank=i, retriever=name, contributions=cs)
        for i, (cid, score, cs) in enumerate(fused, start=1)
    ]


def _weights(lists: Mapping[str, Sequence[Hit]], weights: Mapping[str, float] | None) -> dict[str, float]:
    weights = dict(weights or {})
    bad = {list_name: v for list_name, v in weights.items() if not float(v) >= 0}  # also catches NaN
    if bad:
        raise ConfigError(f"fusion weights must be >= 0 (0 switches a list off), got {bad}")
    return {list_name: float(weights.get(list_name, 1.0)) for list_name in lists}


def _check_top_k(top_k: int | None) -> None:
    if top_k is not None and top_k < 1:
        raise ConfigError(f"top_k={top_k} must be >= 1, or None to keep every fused hit")


def rrf_ceiling(weights: Mapping[str, float], k: int) -> tuple[str, float]:
    """The most an RRF score can be with these list `weights` (every list ranks the chunk first), written out
    and summed: ("1/(60+1) + 1/(60+1) + 1/(60+1)", 0.04918) for three lists of weight 1."""
    terms = [f"{w:g}/({k}+1)" for w in weights.values()]
    return " + ".join(terms), sum(weights.values()) / (k + 1)

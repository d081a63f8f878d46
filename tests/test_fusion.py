"""RRF and weighted-sum fusion, checked against arithmetic written out by hand."""

from __future__ import annotations

import pytest

from rag.errors import ConfigError
from rag.search.fusion import rrf, weighted_sum
from rag.search.hits import Contribution, Hit


def ranked(retriever: str, ids: list[str], scores: list[float] | None = None) -> list[Hit]:
    scores = scores or [1.0 - 0.1 * i for i in range(len(ids))]
    return [Hit(cid, s, r, retriever) for r, (cid, s) in enumerate(zip(ids, scores), start=1)]


# dense: a b c        bm25: b d a        (k = 60)
#   a: 1/61 (dense #1) + 1/63 (bm25 #3) = 0.0322664...
#   b: 1/62 (dense #2) + 1/61 (bm25 #1) = 0.0325224...
#   c: 1/63 (dense #3)                  = 0.0158730...
#   d: 1/62 (bm25 #2)                   = 0.0161290...
# fused order: b, a, d, c
LISTS = {"dense": ranked("dense", ["a", "b", "c"], [0.9, 0.8, 0.7]), "bm25": ranked("bm25", ["b", "d", "a"], [12.0, 7.5, 3.0])}


def test_rrf_hand_checked_example():
    fused = rrf(LISTS)
    assert [h.chunk_id for h in fused] == ["b", "a", "d", "c"]
    assert [h.rank for h in fused] == [1, 2, 3, 4]
    assert {h.retriever for h in fused} == {"hybrid"}
    by_id = {h.chunk_id: h for h in fused}
    assert by_id["a"].score == pytest.approx(1 / 61 + 1 / 63)
    assert by_id["b"].score == pytest.approx(1 / 62 + 1 / 61)
    assert by_id["c"].score == pytest.approx(1 / 63)
    assert by_id["d"].score == pytest.approx(1 / 62)
    assert by_id["a"].contributions == (
        Contribution("dense", rank=1, score=0.9, weight=1.0, term=pytest.approx(1 / 61)),
        Contribution("bm25", rank=3, score=3.0, weight=1.0, term=pytest.approx(1 / 63)),
    )
    # a document found by one retriever only still appears, with that single contribution
    assert by_id["d"].contributions == (Contribution("bm25", rank=2, score=7.5, weight=1.0, term=pytest.approx(1 / 62)),)
    for h in fused:
        assert h.score == pytest.approx(sum(c.term for c in h.contributions))


def test_rrf_weights():
    # dense x2, bm25 x0.5:  a = 2/61 + 0.5/63 = 0.04073,  b = 2/62 + 0.5/61 = 0.04046,
    #                       c = 2/63 = 0.03175,           d = 0.5/62 = 0.00806
    fused = rrf(LISTS, weights={"dense": 2.0, "bm25": 0.5})
    assert [h.chunk_id for h in fused] == ["a", "b", "c", "d"]
    assert fused[0].score == pytest.approx(2 / 61 + 0.5 / 63)
    assert fused[1].score == pytest.approx(2 / 62 + 0.5 / 61)
    assert [c.weight for c in fused[0].contributions] == [2.0, 0.5]
    # a list missing from `weights` keeps weight 1
    assert rrf(LISTS, weights={"bm25": 3.0})[0].contributions[0].weight == 1.0


def test_rrf_k_trades_agreement_against_first_place():
    # c is 4th in both lists; a and b are 1st in one list each.
    #   k = 60: c = 2/64 = 0.03125 beats a = b = 1/61 = 0.01639 (agreement wins)
    #   k = 1:  a = b = 1/2 = 0.5 beat c = 2/5 = 0.4             (a single first place wins)
    lists = {"x": ranked("x", ["a", "p", "q", "c"]), "y": ranked("y", ["b", "r", "s", "c"])}
    fused = rrf(lists, k=60)
    assert fused[0].chunk_id == "c" and fused[0].score == pytest.approx(2 / 64)
    fused = rrf(lists, k=1)
    assert [h.chunk_id for h in fused[:3]] == ["a", "b", "c"]
    assert [h.score for h in fused[:3]] == pytest.approx([1 / 2, 1 / 2, 2 / 5])


def test_rrf_ties_are_broken_by_best_rank_then_chunk_id():
    # q and p get 1/61 + 1/62 each (summed in different orders); chunk_id decides: p before q
    fused = rrf({"x": ranked("x", ["q", "p"]), "y": ranked("y", ["p", "q"])})
    assert [h.chunk_id for h in fused] == ["p", "q"]
    # m, n, o each get 1/61 + 1/62 + 1/67, added in three different orders: in floating point these
    # differ in the last bit (0.0474478480153437 vs ...369), but they are the same score and must tie
    def at(retriever, ranks):
        return [Hit(cid, 1.0, r, retriever) for cid, r in ranks.items()]

    lists = {"x": at("x", {"m": 1, "n": 2, "o": 7}), "y": at("y", {"n": 1, "o": 2, "m": 7}), "z": at("z", {"o": 1, "m": 2, "n": 7})}
    assert len({sum(c.term for c in h.contributions) for h in rrf(lists)}) > 1  # the premise above
    assert [h.chunk_id for h in rrf(lists)] == ["m", "n", "o"]
    # zero weights: every score is 0, so the best single rank decides, then chunk_id
    fused = rrf({"x": ranked("x", ["u"]), "y": ranked("y", ["z", "v"])}, weights={"x": 0, "y": 0})
    assert [h.chunk_id for h in fused] == ["u", "z", "v"]
    assert all(h.score == 0 for h in fused)


def test_rrf_uses_the_hits_own_ranks_and_dedupes():
    # a list cut upstream keeps its true ranks; a duplicate counts once, at its better rank
    hits = [Hit("a", 1.0, 4, "dense"), Hit("b", 0.9, 5, "dense"), Hit("a", 0.5, 9, "dense")]
    fused = rrf({"dense": hits})
    assert [h.chunk_id for h in fused] == ["a", "b"]
    assert fused[0].score == pytest.approx(1 / 64)
    assert len(fused[0].contributions) == 1 and fused[0].contributions[0].rank == 4


def test_rrf_top_k_and_name():
    fused = rrf(LISTS, top_k=2, name="multi-query")
    assert [h.chunk_id for h in fused] == ["b", "a"]
    assert {h.retriever for h in fused} == {"multi-query"}
    assert rrf({}) == []
    assert rrf({"dense": []}) == []


@pytest.mark.parametrize(
    "kwargs",
    [{"k": 0}, {"k": -60}, {"weights": {"dense": -1.0}}, {"weights": {"other": -0.5}}, {"weights": {"bm25": float("nan")}}, {"top_k": 0}],
)
def test_rrf_rejects_bad_parameters(kwargs):
    with pytest.raises(ConfigError):
        rrf(LISTS, **kwargs)


def test_rrf_rejects_zero_rank():
    with pytest.raises(ConfigError):
        rrf({"dense": [Hit("a", 1.0, 0, "dense")]})


def test_weighted_sum_min_max():
    # dense scores 0.9 0.8 0.7 -> 1, 0.5, 0;  bm25 12 7.5 3 -> 1, 0.5, 0
    #   a = 1 + 0 = 1;  b = 0.5 + 1 = 1.5;  c = 0;  d = 0.5
    fused = weighted_sum(LISTS)
    assert [(h.chunk_id, h.score) for h in fused] == [
        ("b", pytest.approx(1.5)),
        ("a", pytest.approx(1.0)),
        ("d", pytest.approx(0.5)),
        ("c", pytest.approx(0.0)),
    ]
    fused = weighted_sum(LISTS, weights={"dense": 3.0})  # a = 3, b = 1.5 + 1 = 2.5
    assert [h.chunk_id for h in fused][:2] == ["a", "b"]
    assert fused[0].score == pytest.approx(3.0)
    # a list whose scores are all equal normalises to 1
    assert weighted_sum({"x": ranked("x", ["a", "b"], [2.0, 2.0])})[0].score == 1.0

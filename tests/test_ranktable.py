"""Side-by-side rows, RRF arithmetic and rank paths (rag/search/ranktable.py), on hand-made ranked lists."""

import pytest

from rag.search.fusion import rrf
from rag.search.hits import Hit
from rag.search.ranktable import (
    biggest_moves,
    fusion_arithmetic,
    movers,
    rank_paths,
    side_by_side,
)
from rag.search.rerank import RerankMove


def hits(ids, retriever):
    return [Hit(cid, 1.0 / (i + 1), i + 1, retriever) for i, cid in enumerate(ids)]


DENSE = hits(["a", "b", "c"], "dense")
BM25 = hits(["c", "a"], "bm25")


def test_fusion_arithmetic_writes_out_the_rrf_sum():
    fused = rrf({"dense": DENSE, "bm25": BM25}, k=60)
    top = fused[0]
    assert top.chunk_id == "a"  # 1/61 + 1/62 beats c's 1/63 + 1/61
    text = fusion_arithmetic(top, 60)
    assert "dense 1/(60+1)=0.01639" in text and "bm25 1/(60+2)=0.01613" in text
    assert text.endswith(f"= {1 / 61 + 1 / 62:.5f}")
    weighted = rrf({"dense": DENSE, "bm25": BM25}, k=10, weights={"dense": 2.0, "bm25": 0.5})
    row = next(h for h in weighted if h.chunk_id == "c")
    assert "dense 2/(10+3)" in fusion_arithmetic(row, 10) and "bm25 0.5/(10+1)" in fusion_arithmetic(row, 10)
    assert float(fusion_arithmetic(row, 10).rsplit("=", 1)[1]) == pytest.approx(row.score, abs=1e-5)
    assert fusion_arithmetic(DENSE[0], 60) == "1.00000"  # a plain list's hit: just its score


def test_side_by_side_aligns_by_rank_and_stops_when_all_lists_end():
    rows = side_by_side({"dense": DENSE, "bm25": BM25}, 10)
    assert [r.rank for r in rows] == [1, 2, 3]
    assert rows[0].cells["bm25"].chunk_id == "c" and rows[2].cells["bm25"] is None
    assert len(side_by_side({"dense": DENSE}, 2)) == 2


def test_rank_paths_and_movers():
    rer = hits(["c", "b"], "rerank")
    stages = {"dense": DENSE, "bm25": BM25, "rerank": rer}
    paths = rank_paths(stages, ["a", "b", "c"])
    assert paths["a"] == {"dense": 1, "bm25": 2, "rerank": None}
    assert paths["b"] == {"dense": 2, "bm25": None, "rerank": 2}
    assert paths["c"] == {"dense": 3, "bm25": 1, "rerank": 1}
    assert movers(stages, 1) == ["a", "c"]
    assert movers(stages, 2) == ["a", "b", "c"]


def test_biggest_moves_counts_a_drop_as_landing_just_below_the_cut():
    moves = [RerankMove("a", 1, 2, 0.5), RerankMove("b", 2, None, 0.1),  # b fell out of the top 3: 2 -> "4"
             RerankMove("c", 3, 3, 0.4), RerankMove("d", 4, 1, 0.9),     # d rose 3 places
             RerankMove("e", 5, None, 0.0)]                               # e was below the cut and stayed there
    assert biggest_moves(moves, 3) == ["d", "b", "a"]
    assert biggest_moves([RerankMove("x", 1, 1, 1.0)]) == []  # nothing moved: nothing to highlight


def test_two_chunks_of_a_table_never_share_a_colour():
    from ui.render import distinct_colours

    ids = [f"doc_{i}#{j}" for i in range(6) for j in range(4)]  # 24 chunks: more than a palette of six
    palette = distinct_colours(ids + ids[:5] + ["", None])
    assert len(palette) == 24 and len(set(palette.values())) == 24  # one colour each, the same one when repeated
    hues = sorted(int(c.split("(")[1].split(",")[0]) for c in palette.values())
    assert min(b - a for a, b in zip(hues, hues[1:])) >= 5


def test_the_bump_charts_rank_axis_starts_at_one():
    from ui.charts import bump_chart

    fig = bump_chart({"a": {"dense": 1, "bm25": 3}, "b": {"dense": 2, "bm25": None}}, ["dense", "bm25"], ["dense", "BM25"])
    low, high = fig.layout.yaxis.range
    assert (low, high) == (3.5, 0.5) and fig.layout.yaxis.tick0 == 1  # no tick at 0 or -1

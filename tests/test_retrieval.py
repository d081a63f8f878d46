"""Retrieval over an Index: dense exact top-1, BM25, and RRF hybrid with visible provenance."""

from __future__ import annotations

import numpy as np
import pytest

from rag.errors import ConfigError
from rag.index.build import build_index
from rag.ingest.chunking import chunk_documents
from rag.ingest.documents import Document
from rag.models.embedding import EmbedderBase
from rag.search.retrieval import Search, retrieve, retrieve_many


class TableEmbedder(EmbedderBase):
    """A deterministic stand-in embedder: each text's vector is looked up by keyword.

    It lets a test decide exactly what the dense retriever sees, so the fusion logic (the thing under
    test) can be checked against hand-computed ranks."""

    name = label = "table"
    dim = 3
    axes = {"猫": 0, "狗": 1, "鱼": 2}

    def _vec(self, text: str) -> np.ndarray:
        v = np.array([text.count(k) for k in self.axes], dtype=np.float32) + 1e-3
        return v / np.linalg.norm(v)

    def embed_documents(self, texts, progress=None):
        out = np.stack([self._vec(t) for t in texts]) if texts else np.zeros((0, 3), np.float32)
        if progress:
            progress(len(texts), len(texts))
        return out

    def embed_queries(self, texts):
        return self.embed_documents(texts)


DOCS = [
    Document("a", "猫猫猫 喜欢 晒太阳"),
    Document("b", "狗狗 喜欢 散步 型号 ZX-81"),
    Document("c", "鱼 在 水里 游"),
    Document("d", "猫 和 狗 是 朋友"),
]


@pytest.fixture(scope="module")
def tiny_index():
    return build_index(chunk_documents(DOCS, "fixed", chunk_size=100, overlap=10), TableEmbedder())


def test_dense_top1_is_the_nearest_vector(tiny_index):
    res = retrieve(tiny_index, "猫", Search("dense", k=2, depth=4))
    assert res.ranked()[0].chunk_id == "a"
    scores = [h.score for h in res.dense]
    assert scores == sorted(scores, reverse=True)
    # dense scores are cosines of unit vectors
    q = TableEmbedder()._vec("猫")
    assert res.dense[0].score == pytest.approx(float(q @ TableEmbedder()._vec(DOCS[0].text)), rel=1e-5)


def test_hybrid_recovers_a_chunk_only_bm25_finds(tiny_index):
    # Dense sees only the animal axes: "ZX-81" means nothing to it, so with depth=1 the dense list is [a].
    # BM25 matches the rare token "zx" / "81" exactly and finds b. Hybrid must contain both.
    res = retrieve(tiny_index, "猫 ZX-81", Search("hybrid", k=2, depth=1))
    assert [h.chunk_id for h in res.dense] == ["a"]
    assert "b" in [h.chunk_id for h in res.bm25]
    assert "b" not in [h.chunk_id for h in res.dense]
    fused_ids = [h.chunk_id for h in res.ranked()]
    assert set(fused_ids) == {"a", "b"}


def test_fused_score_is_the_sum_of_its_visible_terms(tiny_index):
    res = retrieve(tiny_index, "猫 狗", Search("hybrid", k=4, depth=4, rrf_k=60, weights={"bm25": 0.5}))
    for h in res.hybrid:
        assert h.score == pytest.approx(sum(c.term for c in h.contributions))
        for c in h.contributions:
            own = {x.chunk_id: x for x in getattr(res, c.retriever)}[h.chunk_id]
            assert c.rank == own.rank and c.score == pytest.approx(own.score)
            assert c.term == pytest.approx(c.weight / (60 + c.rank))
            assert c.weight == (0.5 if c.retriever == "bm25" else 1.0)


def test_bad_parameters_say_what_to_change(tiny_index):
    with pytest.raises(ConfigError, match="mode"):
        retrieve(tiny_index, "猫", Search("lexical"))
    with pytest.raises(ConfigError, match="with_sparse"):  # a valid mode the index was not built for
        retrieve(tiny_index, "猫", Search("sparse"))
    with pytest.raises(ConfigError, match="k=0"):
        retrieve(tiny_index, "猫", Search(k=0))


def test_multi_query_fuses_every_query(tiny_index):
    results, fused = retrieve_many(tiny_index, ["猫", "鱼"], Search(k=3, depth=4))
    assert len(results) == 2
    top = {h.chunk_id for h in fused[:3]}
    assert {"a", "c"} <= top  # each query's best chunk survives the fusion
    assert {c.retriever for h in fused for c in h.contributions} == {"q1", "q2"}

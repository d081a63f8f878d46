"""The searchable index of one corpus: chunks + their vectors (dense) + a BM25 index (lexical).

Built once per (corpus, chunker, embedder) and then only read: changing the question, k, RRF weights
or the reranker never rebuilds it. Document vectors go through the embedder's disk cache, so
re-indexing the same text with the same model costs nothing.
Dense search runs on the exact store unless `dense_index` holds an approximate index or a vector
database over the same rows (dense_index.py `use_index`).
Not handled here: ranking (see retrieval.py) and persistence of BM25 (it rebuilds in milliseconds).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, Protocol

import numpy as np

from rag.index.bm25 import BM25
from rag.index.lexicon import Lexicon
from rag.index.sparse import LearnedSparse
from rag.index.token_cache import tokenize_many
from rag.index.tokenize import jieba_tokenize
from rag.index.vectorstore import VectorStore
from rag.ingest.chunking import Chunk, ChunkSet
from rag.ingest.contextual import index_text
from rag.models.embedding import Embedder


class DenseSearcher(Protocol):
    """What dense search can run on instead of the exact store (ann.AnnIndex, milvus.MilvusStore)."""

    kind: str  # "hnsw", "ivfpq", "milvus"

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]: ...


@dataclass
class Index:
    chunk_set: ChunkSet
    embedder: Embedder
    vectors: VectorStore  # row i <-> chunk_set.chunks[i]
    bm25: BM25  # doc i <-> chunk_set.chunks[i]
    by_id: dict[str, Chunk] = field(default_factory=dict)  # chunk_id -> chunk (parents included)
    cache_hits: int | None = None  # vectors the build found in the embedder's disk cache (None: no cache)
    cache_misses: int | None = None  # ... and had to compute
    token_stats: dict | None = None  # what the BM25 build's tokenizing cost (token_cache.tokenize_many)
    sparse: LearnedSparse | None = None  # over the same rows, when asked for (dense_index.py)
    dense_index: DenseSearcher | None = None  # what dense search runs on; None: the exact store
    # rag.graph.graph.CorpusGraph over the same chunks, once built (rag.graph.store.attach); typed Any because the
    # index wing comes before the graph wing and may not import it
    graph: Any = None
    origin: str | None = None  # the knowledge base it was opened from (kb.py), read from disk; None: built here

    @property
    def searcher(self):
        """The vector index dense retrieval uses: the chosen ANN index or database, else the exact store."""
        return self.dense_index if self.dense_index is not None else self.vectors

    @property
    def index_kind(self) -> str:
        return self.dense_index.kind if self.dense_index is not None else "exact"

    @property
    def chunks(self) -> list[Chunk]:
        return self.chunk_set.chunks

    @cached_property
    def lexicon(self) -> Lexicon:
        """The words the corpus uses at all (read once, on first use; then only read)."""
        return Lexicon.of(c.text for c in self.chunk_set.chunks)

    def chunk(self, chunk_id: str) -> Chunk:
        return self.by_id[chunk_id]

    def position(self, chunk_id: str) -> int:
        """Row of an indexed chunk in `vectors` / `bm25`."""
        return self._positions[chunk_id]

    def __post_init__(self) -> None:
        self.by_id = {c.chunk_id: c for c in self.chunk_set.chunks}
        self.by_id.update(self.chunk_set.parents)
        self._positions = {c.chunk_id: i for i, c in enumerate(self.chunk_set.chunks)}


def build_index(
    chunk_set: ChunkSet,
    embedder: Embedder,
    progress: Callable[[int, int], None] | None = None,
    tokenizer: Callable[[str], list[str]] = jieba_tokenize,
    stopwords: frozenset[str] = frozenset(),
    persist_tokens: bool = False,
) -> Index:
    """Embed every indexed chunk and build BM25 over the same chunks, in the same order.

    jieba tokens come through token_cache.py (a text seen before is not tokenized again; `persist_tokens`
    also keeps them on disk, which the CLI does and the app does not)."""
    texts = [index_text(c) for c in chunk_set.chunks]  # contextual chunking: the context sentence first
    # a cached embedder says what this build found, without shared counters; any other says nothing
    vecs, stats = embedder.embed_documents_with_stats(texts, progress=progress)
    hits, misses = (stats.hits, stats.misses) if stats is not None else (None, None)
    store = VectorStore(vecs.shape[1] if vecs.ndim == 2 and vecs.shape[0] else embedder.dim)
    store.add(np.asarray(vecs, dtype=np.float32), [c.chunk_id for c in chunk_set.chunks])
    bm25 = BM25(tokenizer=tokenizer, stopwords=stopwords)
    token_stats = None
    if tokenizer is jieba_tokenize and texts:
        tokens, token_stats = tokenize_many(texts, persist=persist_tokens)
        bm25.index_tokens(tokens)
    else:
        bm25.index(texts)
    return Index(chunk_set=chunk_set, embedder=embedder, vectors=store, bm25=bm25, cache_hits=hits,
                 cache_misses=misses, token_stats=token_stats)

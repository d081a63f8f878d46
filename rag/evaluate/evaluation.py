"""Retrieval metrics and the evaluation loop that compares strategies on a queries file.

Metrics work on document ids (a query's gold ids are documents; several chunks of one document count
once, at the rank of the first):
- Hit@k      1 if any gold id is in the top k.
- Recall@k   |gold in top k| / |gold|.
- MRR@k      1 / rank of the first gold id (0 if none in the top k)  (Voorhees, TREC-8 QA, 1999).
- nDCG@k     DCG = sum_i rel_i / log2(i + 1) over ranks i = 1..k, binary rel; divided by the ideal DCG
             (Jarvelin & Kekalainen, 2002).
Queries without gold ids (unanswerable) are skipped by the retrieval metrics; they matter for answers.
Not handled here: graded relevance, statistical significance tests.
"""

from __future__ import annotations

import json
import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

from rag.errors import ConfigError, LoaderError
from rag.ingest.documents import MAX_FILE_BYTES, too_big
from rag.messages import Msg
from rag.search.hits import Hit


@dataclass(frozen=True)
class Query:
    query_id: str
    query: str
    gold_ids: tuple[str, ...]
    answerable: bool = True
    answer: str = ""  # a span of the gold document that answers it (span metrics: does a context hold it?)
    kind: str = ""  # what makes it hard (long-form set: table, boundary, heading, plain, unanswerable)
    reference: str = ""  # a reference answer in words (multi-hop set), for the judge's context recall
    facts: tuple[tuple[str, ...], ...] = ()  # each fact the answer must state: any of its spellings


def _query_of(rec) -> Query:
    """One parsed line as a Query; TypeError (or KeyError) saying what is wrong with it."""
    if not isinstance(rec, dict):  # valid JSON, but a list, a string, a number or null
        raise TypeError(f"it is a JSON {_json_kind(rec)}, not an object like "
                        '{"id": "q1", "query": "...", "gold_ids": ["faq_001"]}')
    raw_gold = rec.get("gold_ids", [])
    if not isinstance(raw_gold, list):  # a bare string would be split into characters
        raise TypeError(f"gold_ids must be a list of ids, e.g. [\"faq_001\"], not {type(raw_gold).__name__}")
    if not isinstance(rec.get("query"), str) or not rec["query"].strip():
        raise TypeError("query must be a non-empty string")
    gold = tuple(str(g) for g in raw_gold)
    answer = rec.get("answer", "")
    if not isinstance(answer, str):
        raise TypeError(f"answer must be a string (a span of the gold document), not {type(answer).__name__}")
    facts = _facts_of(rec)  # checked before the id is read, so a line's first fault is the one said
    return Query(str(rec["id"]), str(rec["query"]), gold, bool(rec.get("answerable", bool(gold))), answer,
                 str(rec.get("type", "")), str(rec.get("reference", "")), facts)


def _facts_of(rec: dict) -> tuple[tuple[str, ...], ...]:
    """The key facts, each a tuple of spellings; the public sets' gold answer spans are one fact where none is given."""
    facts = rec.get("facts", [])
    if not isinstance(facts, list) or not all(isinstance(f, list) and f for f in facts):
        raise TypeError("facts must be a list of lists of spellings, e.g. [[\"60\"], [\"排名\", \"名次\"]]")
    answers = rec.get("answers", [])  # the public sets' gold answer spans: one fact, any of them states it
    if not facts and isinstance(answers, list) and answers and all(isinstance(x, str) and x.strip() for x in answers):
        facts = [answers]
    return tuple(tuple(str(x) for x in f) for f in facts)


def load_queries(path: str | Path) -> list[Query]:
    """Read the ../shared/eval queries format: one JSON object per line with id, query, gold_ids."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_FILE_BYTES:  # the uploaders' one limit; refused before reading
            raise too_big(path.name, path.stat().st_size)
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise LoaderError(str(path), Msg(en=f"cannot read queries file ({exc}); expected UTF-8 JSONL",
                                         zh=f"无法读取查询文件（{exc}）：应当是 UTF-8 编码的 JSONL")) from exc
    out: list[Query] = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append(_query_of(json.loads(line)))
        except RecursionError as exc:  # not Python's own words: they name no line and no fix
            raise LoaderError(str(path), Msg(en=f"line {n} is nested too deeply to read (more than about 1,000 levels of "
                                             "[ or {); each line is one flat query record with id, query, gold_ids",
                                             zh=f"第 {n} 行嵌套太深，无法读取（[ 或 {{ 超过约 1000 层）：每行应是含 id、query、gold_ids 的查询记录")
                              ) from exc
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise LoaderError(
                str(path), Msg(en=f"line {n} is not a query record ({exc}); each line needs id, query, gold_ids",
                               zh=f"第 {n} 行不是查询记录（{exc}）：每行需要 id、query、gold_ids"),
            ) from exc
    if not out:
        raise LoaderError(str(path), Msg(en="no queries found; expected JSONL lines with id, query, gold_ids",
                                         zh="没有找到查询：应当是每行含 id、query、gold_ids 的 JSONL"))
    return out


def facts_found(answer: str, facts: Sequence[Sequence[str]]) -> float | None:
    """Share of `facts` stated in `answer`: a fact is stated when any of its spellings appears (case and
    whitespace ignored). None when the query lists no facts."""
    if not facts:
        return None
    text = _squash(answer)
    return sum(any(_squash(s) in text for s in spellings) for spellings in facts) / len(facts)


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text).lower()


def _json_kind(value) -> str:
    return {list: "list", str: "string", bool: "true/false", type(None): "null"}.get(type(value), "number")


def doc_ranking(hits: Sequence[Hit], doc_of: Callable[[str], str]) -> list[str]:
    """Chunk hits -> document ids in rank order, each document once (at its best chunk)."""
    seen: dict[str, None] = {}
    for h in hits:
        seen.setdefault(doc_of(h.chunk_id), None)
    return list(seen)


def normalise_space(text: str) -> str:
    """Whitespace runs -> one space, none between two CJK (non-ASCII) characters: a PDF's line break
    inside a Chinese sentence is not a word boundary."""
    text = re.sub(r"\s+", " ", text).strip()
    return re.sub(r"(?<=[^\x00-\x7f]) (?=[^\x00-\x7f])", "", text)


def span_rank(contexts: Sequence[str], answer: str) -> int | None:
    """1-based rank of the first context that holds the whole answer span (whitespace-insensitive), else
    None. A chunker that cuts the span in two loses it: that is what span metrics measure."""
    want = normalise_space(answer)
    return next((i for i, c in enumerate(contexts, 1) if want and want in normalise_space(c)), None)


SPAN_METRICS = ("span Hit@1", "span Hit@5", "span MRR@10")


def span_figures(rank: int | None) -> dict[str, float]:
    return {"span Hit@1": float(rank == 1), "span Hit@5": float(rank is not None and rank <= 5),
            "span MRR@10": 1.0 / rank if rank is not None and rank <= 10 else 0.0}


def hit_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    gold = set(gold)
    return float(any(d in gold for d in ranked[:k]))


def recall_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    gold = set(gold)
    return len(gold.intersection(ranked[:k])) / len(gold) if gold else 0.0


def mrr_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    gold = set(gold)
    for i, d in enumerate(ranked[:k], 1):
        if d in gold:
            return 1.0 / i
    return 0.0


def ndcg_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    gold = set(gold)
    dcg = sum(1.0 / math.log2(i + 1) for i, d in enumerate(ranked[:k], 1) if d in gold)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(len(gold), k) + 1))
    return dcg / ideal if ideal else 0.0


METRICS: dict[str, Callable[[Sequence[str], Iterable[str]], float]] = {
    "Hit@1": lambda r, g: hit_at(r, g, 1),
    "Hit@5": lambda r, g: hit_at(r, g, 5),
    "Recall@10": lambda r, g: recall_at(r, g, 10),
    "MRR@10": lambda r, g: mrr_at(r, g, 10),
    "nDCG@10": lambda r, g: ndcg_at(r, g, 10),
}


# Figures that are not shares in 0..1, and which way is better for each figure that has a better way. A chart on a
# 0..1 axis draws only shares, and "best" is the highest only where higher is better.
NOT_SHARES = frozenset({"context chars@5", "hallucinated refs", "first token s", "decode tok/s"})
LOWER_IS_BETTER = frozenset({"context chars@5", "hallucinated refs", "first token s", "unsupported rate",
                             "false refusal@answerable"})


def _base(metric: str) -> str:
    """A figure's name without its citation-mode suffix ("citation validity · free" -> "citation validity")."""
    return metric.split(" · ")[0]


def is_share(metric: str) -> bool:
    """True for a figure in 0..1 (a rate, a mean of 0/1 outcomes, MRR, nDCG)."""
    return _base(metric) not in NOT_SHARES


def better(metric: str) -> str:
    """"higher" or "lower": which way this figure improves."""
    return "lower" if _base(metric) in LOWER_IS_BETTER else "higher"


@dataclass(frozen=True)
class QueryResult:
    query: Query
    strategy: str
    ranked_docs: list[str]  # top documents, best first
    metrics: dict[str, float]
    first_gold_rank: int | None  # 1-based rank of the first gold doc, None if not retrieved


@dataclass
class StrategyReport:
    strategy: str
    label: str  # what ran, e.g. "hybrid (RRF k=60) + sentence-maxsim (offline fallback)"
    per_query: list[QueryResult] = field(default_factory=list)
    seconds: float = 0.0
    extra: dict[str, float] = field(default_factory=dict)  # answer-level figures, when measured
    span_ranks: dict[str, int | None] = field(default_factory=dict)  # query id -> span_rank, for queries with an answer

    @property
    def means(self) -> dict[str, float]:
        rows = [r.metrics for r in self.per_query]
        out = {m: sum(r[m] for r in rows) / len(rows) for m in METRICS} if rows else {}  # no answerable: none
        out.update(self.extra)
        return out


def score_query(q: Query, strategy: str, ranked_docs: list[str]) -> QueryResult:
    metrics = {name: fn(ranked_docs, q.gold_ids) for name, fn in METRICS.items()}
    first = next((i for i, d in enumerate(ranked_docs, 1) if d in set(q.gold_ids)), None)
    return QueryResult(q, strategy, ranked_docs[:10], metrics, first)


def evaluate_strategy(
    strategy: str,
    label: str,
    queries: Sequence[Query],
    search: Callable[[str], list[str]],
    progress: Callable[[int, int], None] | None = None,
) -> StrategyReport:
    """Run `search` (query text -> ranked doc ids) on every answerable query and score it."""
    answerable = [q for q in queries if q.gold_ids]
    if not answerable:
        raise ConfigError("no query has gold_ids; retrieval metrics need at least one answerable query")
    report = StrategyReport(strategy, label)
    t0 = time.perf_counter()
    for i, q in enumerate(answerable, 1):
        report.per_query.append(score_query(q, strategy, search(q.query)))
        if progress:
            progress(i, len(answerable))
    report.seconds = time.perf_counter() - t0
    return report


def fixed_sample(queries: Sequence[Query], n: int) -> list[Query]:
    """`n` queries evenly spaced through `queries` (positions round(i * len / n)): the same sample every
    run, spread over the whole file, so a set whose unanswerable questions come last keeps some."""
    if n <= 0:
        raise ConfigError(f"sample size {n} must be > 0")
    if n >= len(queries):
        return list(queries)
    return [queries[round(i * len(queries) / n)] for i in range(n)]


def format_table(reports: Sequence[StrategyReport], digits: int = 3) -> str:
    """A Markdown table: one row per strategy, one column per metric (+ answer-level extras)."""
    extras = sorted({k for r in reports for k in r.extra})
    cols = list(METRICS) + extras
    lines = ["| strategy | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for r in reports:
        m = r.means
        lines.append(
            f"| {r.strategy} | " + " | ".join(f"{m[c]:.{digits}f}" if c in m else "-" for c in cols) + " |"
        )
    return "\n".join(lines)

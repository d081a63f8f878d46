"""Answer loops side by side on a question set: what each answer states, what it read, what it cost.

Per question and loop (rag/loops/registry.py):
- "facts found": the share of the query's facts the answer states (any listed spelling, case and spaces
  ignored; data/multihop.jsonl lists two per question, one from each gold chunk); "all facts": both;
- "evidence recall": the share of the gold chunks among the contexts the answer was written from;
- "retrieved": did it search at all (a greeting should not); "searches", "steps", "seconds";
- with a judge (rag/evaluate/judge.py): faithfulness, answer relevancy, context precision, context recall.
Means over the questions, seconds as a median (one slow question should not hide the typical wait).
Not handled here: the loops (self_rag.py, agent.py), the judge's prompts (rag/evaluate/judge.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import median
from typing import Callable, Sequence

from rag.evaluate.evaluation import Query, facts_found
from rag.evaluate.judge import METRICS, Gold, JudgeResult, judge_answer
from rag.loops.registry import run_loop
from rag.loops.steps import LoopTrace
from rag.models.llm import ChatBackend
from rag.run import RunContext

FIGURES = ("facts found", "all facts", "evidence recall", "retrieved", "searches", "steps", "seconds")


@dataclass
class QueryRun:
    query: Query
    name: str  # the loop's name (registry.LOOPS)
    loop: LoopTrace
    figures: dict[str, float | None] = field(default_factory=dict)
    judged: JudgeResult | None = None


@dataclass
class LoopRuns:
    name: str  # the loop's name (registry.LOOPS)
    runs: list[QueryRun] = field(default_factory=list)

    @property
    def means(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for name in FIGURES + METRICS:
            xs = [x for r in self.runs if (x := r.figures.get(name)) is not None]
            if xs:
                out[name] = median(xs) if name == "seconds" else sum(xs) / len(xs)
        return out


def run_query(q: Query, name: str, ctx: RunContext, *, judge: ChatBackend | None = None) -> QueryRun:
    """One loop on one query, its figures, and the judge's (the model `judge`) when one is given."""
    loop = run_loop(name, q.query, ctx)
    contexts = loop.final.contexts if loop.final else []
    gold = set(q.gold_ids)
    fig: dict[str, float | None] = {
        "facts found": facts_found(loop.answer, q.facts),
        "evidence recall": (len(gold & {c.doc_id for c in contexts}) / len(gold)) if gold else None,
        "retrieved": float(loop.retrieved),
        "searches": float(loop.searches),
        "steps": float(len(loop.steps)),
        "seconds": loop.seconds,
    }
    fig["all facts"] = None if fig["facts found"] is None else float(fig["facts found"] == 1.0)
    run = QueryRun(q, name, loop, fig)
    if judge is not None:
        gold_text = "\n".join(c.text for c in ctx.index.chunks if c.doc_id in gold) if not q.reference else ""
        run.judged = judge_answer(ctx.with_(chat=judge), q.query, loop.answer, contexts,
                                  gold=Gold(q.reference, gold_text, q.gold_ids),
                                  audit=loop.final.audit if loop.final else None)
        fig.update(run.judged.scores)
    return run


def compare_loops(queries: Sequence[Query], names: Sequence[str], ctx: RunContext, *,
                  judge: ChatBackend | None = None,
                  progress: Callable[[int, int, str], None] | None = None) -> list[LoopRuns]:
    """Every loop on every query (query by query, so a slow run shows progress on all of them). `ctx.control`
    is the whole run's handle: every model call in it is queued with a notice and can be stopped."""
    out = [LoopRuns(n) for n in names]
    total = len(queries) * len(names)
    done = 0
    for q in queries:
        for sr in out:
            ctx.control.check("the comparison")
            sr.runs.append(run_query(q, sr.name, ctx, judge=judge))
            done += 1
            if progress:
                progress(done, total, sr.name)
    return out


def format_runs(results: Sequence[LoopRuns], digits: int = 3) -> str:
    """A Markdown table: one row per loop, the figures that any loop has."""
    cols = [c for c in FIGURES + METRICS if any(c in r.means for r in results)]
    lines = ["| loop | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for r in results:
        m = r.means
        cells = [f"{m[c]:.1f}" if c in ("seconds", "searches", "steps") and c in m else
                 (f"{m[c]:.{digits}f}" if c in m else "-") for c in cols]
        lines.append(f"| {r.name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)

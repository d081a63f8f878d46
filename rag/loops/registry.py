"""Answer loops by name: plain (single-shot RAG), self-rag, agent, graph and graph-global (GraphRAG's local
and global search, graph_rag.py): each a `Loop` taking (question, RunContext), behind one `run_loop`.

Each returns a `LoopTrace`; plain's has one "retrieve" and one "draft" step around an ordinary `ask`, so
a page or a table treats the three alike. The error for an unknown name is built from LOOPS.
("Strategy" is the retrieval meaning only: rag/evaluate/strategies.py.)
Not handled here: the loops themselves (self_rag.py, agent.py).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Callable, Protocol

from rag.errors import ConfigError
from rag.loops.agent import MAX_STEPS, agent
from rag.loops.graph_rag import GLOBAL_COMMUNITIES, graph_global, graph_local
from rag.loops.self_rag import MAX_ROUNDS, self_rag
from rag.loops.steps import LoopTrace, Recorder, Step, hits_of
from rag.messages import Msg
from rag.pipeline import ask
from rag.run import RunContext

LOOPS = ("plain", "self-rag", "agent", "graph", "graph-global")
BUDGETS = {"plain": 1, "self-rag": MAX_ROUNDS, "agent": MAX_STEPS, "graph": 1,  # retrieval rounds / agent steps
           "graph-global": GLOBAL_COMMUNITIES}  # / communities mapped


class Loop(Protocol):
    """One way to answer a question from a RunContext, every step on a LoopTrace (`on_step` sees each as it lands)."""

    def __call__(self, question: str, ctx: RunContext, *, on_step: Callable[[Step], None] | None = None
                 ) -> LoopTrace: ...


def plain(question: str, ctx: RunContext, *, on_step: Callable[[Step], None] | None = None,
          on_delta: Callable[[str], None] | None = None) -> LoopTrace:
    """Single-shot RAG: retrieve once, answer once (rag/pipeline.ask), as a two-step LoopTrace."""
    t0 = time.perf_counter()
    index = ctx.index
    trace = ask(question, ctx.with_(settings=replace(ctx.settings, compare_no_rag=False)), on_delta=on_delta)
    lt = LoopTrace("plain", trace.question, budget=1)
    rec = Recorder(lt, on_step)
    rec.add(kind="retrieve", thought="Search once with the question.",
            decision=Msg(en=f"{len(trace.contexts)} chunks to the prompt", zh=f"{len(trace.contexts)} 个块进入提示词"),
            query=trace.question, hits=hits_of(index, trace.final),
            seconds=sum(v for k, v in trace.timings.items() if k in ("retrieve", "rerank", "rewrite")))
    rec.add(kind="draft", thought="Answer from them.", decision=Msg(en="answered", zh="已回答"),
            prompt=trace.prompt.messages if trace.prompt else None, raw=trace.answer,
            seconds=trace.timings.get("generate", 0.0))
    lt.final = trace
    lt.seconds = time.perf_counter() - t0
    return lt


RUNNERS: dict[str, Loop] = {"plain": plain, "self-rag": self_rag, "agent": agent, "graph": graph_local,
                                "graph-global": graph_global}


def run_loop(name: str, question: str, ctx: RunContext, *,
                 on_step: Callable[[Step], None] | None = None) -> LoopTrace:
    """`name` is one of LOOPS; `ctx.budget` overrides its rounds (self-rag) or steps (agent)."""
    if name not in LOOPS:
        raise ConfigError(f"unknown loop {name!r}; choose one of {', '.join(LOOPS)}")
    if ctx.budget is not None and ctx.budget < 1:
        raise ConfigError(f"budget={ctx.budget} must be 1 or more")
    return RUNNERS[name](question, ctx, on_step=on_step)

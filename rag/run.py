"""One context object for a run: what every retrieval strategy, answer loop, comparison and judge call needs
besides its question.

    RunContext(index, settings, generator, chat=None, reranker=None, control=RunControl(), budget=None, opinion=None)
      -> ask(question, ctx) / gather(question, ctx)  rag/pipeline.py (the one-shot pipeline and its first half)
      -> run_loop(name, question, ctx)              rag/loops/registry.py (plain, self-rag, agent, graph, graph-global)
      -> compare_loops(queries, names, ctx)         rag/loops/compare.py (each query, each loop, judged)
      -> answer_figures(ctx, queries, strategy)     rag/evaluate/strategies.py (the evaluation page's answer table)
      -> judge_answer(ctx, question, answer, ...)   rag/evaluate/judge.py (the model as judge)

It is frozen: a loop that needs other settings for one call (no no-RAG answer inside a loop, a narrower top-k)
makes a changed copy with `ctx.with_(...)`, and the caller's context is untouched. `control` is the run's one
handle (queue notices, Stop, what the backend could not honour), shared by every call made with the context.
Not handled here: building any of the parts (rag/backends.py, ui/models.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from rag.models.control import RunControl

if TYPE_CHECKING:
    from rag.answer.generation import Generator
    from rag.backends import Choice
    from rag.index.build import Index
    from rag.models.llm import ChatBackend
    from rag.search.rerank import Reranker
    from rag.trace import AskSettings


@dataclass(frozen=True)
class RunContext:
    """The parts of one run. `generator` writes the answers (None: a retrieval-only run, such as compare() without
    answer figures; `writer` then says so); `chat` is the model the loops' decisions and the judge ask (None: no
    model, and a loop that needs one says so); `budget` overrides a loop's rounds (self-rag), steps (agent) or communities
    (graph-global), None for the loop's own; `opinion` is the model asked for the audit's second opinion when
    `settings.second_opinion` is on (None: the audit's rules alone)."""

    index: Index
    settings: AskSettings
    generator: Generator | None
    chat: ChatBackend | None = None
    reranker: Reranker | None = None
    control: RunControl = field(default_factory=RunControl)
    budget: int | None = None
    opinion: ChatBackend | None = None

    @classmethod
    def chosen(cls, index: Index, settings: AskSettings, generator: Choice | None, reranker: Choice | None = None,
               **more: Any) -> RunContext:
        """The context of a run from what the app's session or the CLI chose (rag/backends.py Choice: the backend and
        its label; None: no writer, a retrieval-only run, or no reranker); `more` sets the other fields (chat,
        control, budget, opinion). The one builder both use."""
        return cls(index, settings, generator.backend if generator is not None else None,
                   reranker=reranker.backend if reranker is not None else None, **more)

    def with_(self, **changes: Any) -> RunContext:
        """A copy with `changes` (field=value); this one is unchanged."""
        return replace(self, **changes)

    @property
    def writer(self) -> Generator:
        """The generator, for a step that writes an answer; a ConfigError in a retrieval-only run."""
        if self.generator is None:
            from rag.errors import ConfigError

            raise ConfigError("this run has no generator: it was set up for retrieval figures only")
        return self.generator

    @property
    def embedder(self):
        """The index's embedder (the judge's and the audit's cosines use it)."""
        return self.index.embedder

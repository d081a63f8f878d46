"""What a loop records: one `Step` per decision or action, and the `LoopTrace` that holds them.

A step keeps what a page needs to show it on a timeline: the kind of step, the model's thought (the
agent's own words; for Self-RAG, what the step is for), the query it searched with and the hits it got,
every yes/no `Verdict` with its exact prompt and raw reply, the decision in words, the raw model output
for generated actions, and the seconds it took. The answer itself is an ordinary `Trace` (contexts,
prompt, answer, citation audit), so everything the answer page shows applies to a loop's answer too.
Not handled here: running a loop (self_rag.py, agent.py), rendering it (app_pages/7_loops.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from rag import jsonout
from rag.audit.support import Support
from rag.messages import localized
from rag.models.yes_no import Verdict
from rag.trace import Trace, label_in, to_plain, words

STEP_KINDS = ("decide", "retrieve", "grade", "draft", "check", "rewrite", "search", "read", "repeat", "answer",
              "link", "walk", "map")  # the last three: GraphRAG's steps (graph_rag.py)


@dataclass(frozen=True)
class StepHit:
    """One hit as a step saw it."""

    ref: str
    chunk_id: str
    score: float
    title: str
    snippet: str  # the first characters of the chunk, as the agent's observation showed them


@dataclass(frozen=True)
class Step:
    n: int  # 1-based position in the loop
    kind: str  # one of STEP_KINDS
    thought: str  # the agent's own words, or what a Self-RAG step is for
    decision: str  # what was decided, in words
    query: str | None = None  # the search query, for retrieve / search / rewrite
    hits: tuple[StepHit, ...] = ()
    verdicts: tuple[Verdict, ...] = ()  # yes/no decisions, each with its prompt and raw reply
    supports: tuple[Support, ...] = ()  # a check step: the fact checker's finding per sentence (span, reasons)
    prompt: list[dict] | None = None  # a generated step's exact prompt (agent actions, rewrites, drafts)
    raw: str = ""  # what the model wrote for it (the agent's JSON action, the rewrite, the draft)
    seconds: float = 0.0


@dataclass
class LoopTrace:
    name: str  # the loop: plain | self-rag | agent | graph | graph-global (registry.LOOPS)
    question: str
    steps: list[Step] = field(default_factory=list)
    final: Trace | None = None  # the answer: its contexts, prompt, answer text and citation audit
    retrieved: bool = True  # False when the loop answered without searching at all
    budget: int = 0  # steps (agent) or retrieval rounds (Self-RAG) allowed
    notes: list[str] = field(default_factory=list)  # budget reached, fallbacks, why it stopped
    seconds: float = 0.0
    graph: dict | None = None  # GraphRAG: linked entities, the walked subgraph, the relation block (graph_rag.py)

    @property
    def answer(self) -> str:
        return self.final.answer if self.final is not None else ""

    @property
    def searches(self) -> int:
        """Retrieval calls made (Self-RAG rounds, agent searches)."""
        return sum(s.kind in ("retrieve", "search") for s in self.steps)

    def to_dict(self) -> dict[str, Any]:
        out = to_plain(self)
        out["answer"] = self.answer
        out["searches"] = self.searches
        return out

    def to_json(self, indent: int | None = 2) -> str:
        return jsonout.dumps(self.to_dict(), indent=indent)

    def to_markdown(self, lang: str = "en") -> str:
        """A handout in `lang`: the timeline, step by step with every verdict, then the answer's own trace."""
        w = words(lang)
        out = [f"# {self.name}: {self.question}", "",
               w(en=f"- steps: {len(self.steps)} (budget {self.budget}), searches: {self.searches}, "
                 f"retrieved: {'yes' if self.retrieved else 'no'}, {self.seconds:.1f} s",
                 zh=f"- 步数：{len(self.steps)}（预算 {self.budget}），检索次数：{self.searches}，"
                 f"{'检索了' if self.retrieved else '没有检索'}，{self.seconds:.1f} 秒")]
        out += [f"- {w(en='note', zh='说明')}: {localized(n, lang)}" for n in self.notes]
        for st in self.steps:
            out += _step_markdown(st, lang)
        if self.final is not None:
            out += ["", "---", "", self.final.to_markdown(lang)]
        return "\n".join(out) + "\n"


def _step_markdown(st: Step, lang: str) -> list[str]:
    """One step of the handout: its thought, query, hits, verdicts, supports, decision and the model's raw output."""
    w = words(lang)
    out = ["", f"## {st.n}. {st.kind} ({st.seconds:.1f} s)", ""]
    if st.thought:
        out.append(f"- {w(en='thought', zh='想法')}: {st.thought}")
    if st.query:
        out.append(f"- {w(en='query', zh='查询')}: {st.query}")
    out += [f"- {w(en='hit', zh='结果')} [{h.ref}] {h.score:.4f} {h.title or h.snippet}" for h in st.hits]
    out += [f"- {w(en='verdict', zh='判定')}: {w(en='yes', zh='是') if v.answer else w(en='no', zh='否')} · {localized(v.asked, lang)} · {v.raw}"
            for v in st.verdicts]
    sep = w(en="; ", zh="；")
    out += [f"- {w(en='support', zh='支撑')}: {label_in(x.label, lang)} · {x.sentence} · {sep.join(x.reasons(lang))}"
            for x in st.supports]
    out.append(f"- {w(en='decision', zh='决定')}: {localized(st.decision, lang)}")
    if st.raw and st.kind in ("search", "read", "answer", "rewrite", "repeat"):
        out += ["", "```", st.raw, "```"]
    return out


class Recorder:
    """Appends numbered steps to a LoopTrace as a loop takes them, and tells `on_step` (a page's progress box)."""

    def __init__(self, lt: LoopTrace, on_step: Callable[[Step], None] | None):
        self.lt, self.on_step = lt, on_step

    def add(self, **kw) -> Step:
        step = Step(n=len(self.lt.steps) + 1, **kw)
        self.lt.steps.append(step)
        if self.on_step:
            self.on_step(step)
        return step


def hits_of(index, hits, snippet_chars: int = 120) -> tuple[StepHit, ...]:
    """`Hit`s as a step records them: ref, title and the first characters of each chunk."""
    out = []
    for h in hits:
        c = index.chunk(h.chunk_id)
        out.append(StepHit(c.ref, c.chunk_id, float(h.score), str(c.metadata.get("title", "")),
                           " ".join(c.text.split())[:snippet_chars]))
    return tuple(out)

"""What each stage of `ask` returns: a frozen result, which rag/pipeline.py assembles into the Trace.

A stage function takes what it needs (the question, the settings, the index, a model) and returns one of these; it
changes nothing it was given. Besides its own result every stage reports the same three things, in `Report`: the notes
a reader should see (a rewrite that failed, a list the index lacks), what served it (`backends`: stage -> label) and the
seconds it took (`timings`: stage -> seconds). The Trace keeps one dict and one list of each, in the order the stages
ran, so the pages read the same fields as before.

    rewrite + retrieve -> Retrieved    rerank -> Reranked    contexts -> a tuple of chunks
    gate -> Gated    prompt -> Prompted    generate -> Generated    rebind -> Rebinding    fill-in -> FilledIn
    the lead -> Led
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from rag.answer.answerability import Answerability
from rag.answer.compress import Compression
from rag.answer.fill_in import FillIn
from rag.answer.lead import LeadChoice
from rag.answer.prompt import Prompt
from rag.answer.rebind import Rebound
from rag.audit.citations import CitationAudit, CitationEvent
from rag.messages import Msg
from rag.search.hits import Hit
from rag.search.rerank import RerankResult
from rag.search.retrieval import RetrievalResult


def _none() -> Mapping[str, Any]:
    return MappingProxyType({})


@dataclass(frozen=True)
class Report:
    """What every stage says besides its result: notes, what served it, and its seconds."""

    notes: tuple[str, ...] = ()  # Msg where it has a Chinese text (a backend's own note may not)
    backends: Mapping[str, str | Msg] = field(default_factory=_none)  # stage -> what served it
    timings: Mapping[str, float] = field(default_factory=_none)  # stage -> seconds


class Clock:
    """Seconds per stage name, added up over every `with clock("stage"):` block (multi-query retrieves twice)."""

    def __init__(self) -> None:
        self._seconds: dict[str, float] = {}

    @contextmanager
    def __call__(self, stage: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self._seconds[stage] = self._seconds.get(stage, 0.0) + time.perf_counter() - t0

    def read(self) -> Mapping[str, float]:
        return MappingProxyType(dict(self._seconds))


@dataclass(frozen=True)
class Rewritten:
    """The rewrite stage: HyDE's passage (`rewrites["hyde"]`) and its query vector, or multi-query's rewordings
    (`rewrites["queries"]`, the question first). Nothing asked: empty."""

    rewrites: Mapping[str, Any] = field(default_factory=_none)
    query_vector: Any = None  # HyDE's vector (None: search with the question)
    report: Report = field(default_factory=Report)


@dataclass(frozen=True)
class Retrieved:
    """The retrieval stage (with its rewrites): the lists for the question, one per rewording with multi-query, and
    the recall_n candidates that go on to the rerank."""

    retrieval: RetrievalResult
    candidates: tuple[Hit, ...]
    per_query: tuple[RetrievalResult, ...] = ()
    rewrites: Mapping[str, Any] = field(default_factory=_none)
    report: Report = field(default_factory=Report)


@dataclass(frozen=True)
class Reranked:
    """The rerank stage: the top_k hits (the retrieval order's first top_k where nothing reranks) and the reranker's
    own result (None then)."""

    final: tuple[Hit, ...]
    rerank: RerankResult | None = None
    report: Report = field(default_factory=Report)


def joined(*reports: Report) -> Report:
    """The reports of stages run one after the other: notes in order, backends and seconds merged (a stage name
    seen twice adds up its seconds, a backend named twice keeps the later label in the earlier place)."""
    notes: list[str] = []
    backends: dict[str, str | Msg] = {}
    timings: dict[str, float] = {}
    for r in reports:
        notes.extend(r.notes)
        backends.update(r.backends)
        for stage, seconds in r.timings.items():
            timings[stage] = timings.get(stage, 0.0) + seconds
    return Report(tuple(notes), MappingProxyType(backends), MappingProxyType(timings))


@dataclass(frozen=True)
class Gated:
    """The answerability gate: its decision and the evidence behind it."""

    answerability: Answerability
    report: Report = field(default_factory=Report)

    @property
    def refused(self) -> bool:
        return not self.answerability.answerable


@dataclass(frozen=True)
class Prompted:
    """The prompt stage: the prompt the model reads (over the compressed contexts when asked), what compression left
    out, and the contexts' refs a model window too small for them dropped (whole blocks, the lowest-ranked first)."""

    prompt: Prompt
    compression: Compression | None = None
    dropped: tuple[str, ...] = ()
    report: Report = field(default_factory=Report)


@dataclass(frozen=True)
class Rebinding:
    """The answer with each model citation moved to the chunk that states its sentence, and the moves."""

    answer: str
    moves: tuple[Rebound, ...] = ()
    report: Report = field(default_factory=Report)


@dataclass(frozen=True)
class Generated:
    """The generation stage: the answer shown (the stand-in's picks where the model's was garbled), the citation
    events as they streamed, the model's figures (first token, tokens, decode speed), and what went wrong: `error`
    (it broke mid-answer; `answer` is what arrived) or `garbled` (why the model's text was no answer; it is kept in
    `model_answer`)."""

    answer: str
    events: tuple[CitationEvent, ...] = ()
    figures: Mapping[str, float] = field(default_factory=_none)
    error: str | None = None
    garbled: str | None = None
    model_answer: str | None = None
    report: Report = field(default_factory=Report)


@dataclass(frozen=True)
class FilledIn:
    """Fill-in: the model's sentences that state nothing, come off the question or are unsupported, set aside; the
    stand-in's quotes the rest does not state, appended (the learned selector's sentence leading)."""

    answer: str
    fill_in: tuple[FillIn, ...] = ()
    restated: tuple[str, ...] = ()
    off_question: tuple[str, ...] = ()
    unsupported: tuple[str, ...] = ()
    model_audit: CitationAudit | None = None  # the audit of what the model wrote, before anything was set aside
    model_answer: str | None = None  # what the model wrote, where something was set aside or appended
    report: Report = field(default_factory=Report)


@dataclass(frozen=True)
class Led:
    """The model's choice of the quote that leads (None: no choice was made)."""

    choice: LeadChoice | None = None
    report: Report = field(default_factory=Report)

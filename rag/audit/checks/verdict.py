"""What a check reads and what it says: the claim a sentence makes, aligned to its evidence span (`Claim`, the one
thing every check is given), and one check's verdict on it with its reason in both UI languages (`Check`, the audit
table shows it per row). A check is a module of this folder with a `NAME` (its file's name, "_" written "-") and
`check(claim) -> Check | None` (None: it has nothing to say of this sentence): the `Rule` protocol."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from rag.messages import Msg

if TYPE_CHECKING:
    from rag.audit.fact_text import Reading


@dataclass(frozen=True)
class Check:
    """One check's verdict on a sentence, with its reason in both UI languages."""

    name: str  # the check's module: numbers | new-number | quantity | binding | swap | scope | polarity | ...
    passed: bool
    why: Msg  # the reason, in both UI languages

    def reason(self, lang: str) -> str:
        return self.why.localized(lang)


@dataclass(frozen=True)
class Evidence:
    """The span of a chunk a sentence was aligned to (support.py's `align`)."""

    ref: str
    text: str  # chunk[start:end]
    start: int
    end: int
    matched: tuple[tuple[int, int], ...] = ()  # offsets in `text` of the units the sentence shares with it


@dataclass(frozen=True)
class Claim:
    """One sentence against one chunk, as every check reads it: the sentence, its evidence span in the chunk, the
    question it answers, and the audit's settings that a check's verdict depends on."""

    text: str  # the sentence as checked: its lead-in removed, read as simplified
    sentence: Reading  # `text` as the checks read it (units, clauses)
    chunk: str  # the whole chunk, read as simplified
    whole: Reading  # the chunk as the checks read it
    evidence: Evidence  # the span the sentence was aligned to
    span: Reading  # the evidence span as the checks read it
    title: Reading | None  # the chunk's first sentence (what it is about), support.title_of
    question: str  # "" when none is given
    coverage: float  # share of the sentence's content units found in the span
    supported: float  # the coverage a "supported" needs (Checker.supported_coverage)
    beyond_question: bool  # read what the sentence adds to the question (rebind's checker does not)


class Rule(Protocol):
    """A check: a module of rag/audit/checks/ with its name and one function (support.RULES runs them in order)."""

    NAME: str

    def check(self, claim: Claim) -> Check | None: ...

"""What a check reads and what it says: the evidence span a sentence was aligned to, and one check's verdict on the
sentence with its reason in both UI languages (the audit table shows it per row)."""

from __future__ import annotations

from dataclasses import dataclass

from rag.messages import Msg


@dataclass(frozen=True)
class Check:
    """One check's verdict on a sentence, with its reason in both UI languages."""

    name: str  # numbers | new-number | binding | swap | polarity | new-term | restates | coverage | model | ...
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

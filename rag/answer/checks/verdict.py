"""One check's verdict on one sentence, with its reason in both UI languages (the audit table shows it per row)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Check:
    """One check's verdict on a sentence, with its reason in both UI languages."""

    name: str  # numbers | new-number | binding | swap | polarity | new-term | restates | coverage | model | ...
    passed: bool
    zh: str
    en: str

    def reason(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en

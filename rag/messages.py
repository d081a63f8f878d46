"""Words for people, in both of the app's languages: `Msg` is a str (the English text, which the CLI prints and the
JSON trace holds) that also carries the Chinese text, so a page can show a backend's note or label in its UI language
without rag/ knowing which language a page is in.

    note = Msg(en=f"rerank: {n} candidates judged", zh=f"重排：评了 {n} 个候选")
    str(note) == "rerank: 3 candidates judged"; note.localized("zh") == "重排：评了 3 个候选"

A Msg behaves as its English text everywhere a str does (joins, f-strings, JSON); what is built from it by str
operations is plain English again, so a message that should stay bilingual is made with `Msg` or `join`.
It is the project's one bilingual text: backend notes, the audit's check reasons, test-set verdicts, lesson texts
and glossary entries all hold one, always built with keywords (`Msg(en=..., zh=...)`: no argument order to get
wrong). The pages' inline text, `ui.i18n.tr(zh=..., en=...)`, is keyword-only too.
Not handled here: choosing the language (ui/i18n.py); the errors a page shows hold a Msg too (rag/errors.py, Bilingual).
"""

from __future__ import annotations

from collections.abc import Iterable


class Msg(str):
    """English text (the str itself) with its Chinese beside it (`zh`)."""

    zh: str

    def __new__(cls, *, en: str, zh: str) -> Msg:
        obj = super().__new__(cls, en)
        obj.zh = zh
        return obj

    def __reduce__(self):  # pickling and deepcopy keep both languages
        return (_rebuilt, (str(self), self.zh))

    @property
    def en(self) -> str:
        return str(self)

    def localized(self, lang: str) -> str:
        return self.zh if lang == "zh" else str(self)


def _rebuilt(en: str, zh: str) -> Msg:  # pickle's call: positional only
    return Msg(en=en, zh=zh)


def localized(text: object, lang: str) -> str:
    """`text` in `lang`: a Msg's own translation; any other text as it is (a name, a model's words, a corpus's)."""
    return text.localized(lang) if isinstance(text, Msg) else str(text)


def join(parts: Iterable[object], sep_en: str = "; ", sep_zh: str = "；") -> Msg:
    """Messages joined, each part in its language (a plain str part is the same in both)."""
    parts = list(parts)
    return Msg(en=sep_en.join(str(p) for p in parts), zh=sep_zh.join(localized(p, "zh") for p in parts))

"""Is a question's answering sentence in the contexts, and does the answer show it? A plain-text comparison.

A set's evidence (hello_algo's `evidence`, a public set's answer span) is written as its source writes it: Markdown
with list markers, emphasis, `<u>` tags, backticks and `$…$`, or a PDF's text with its line breaks. The contexts and
an answer hold the same words in another form (a quote drops markup; a PDF reader joins lines; a Kangxi radical is
its CJK twin). So both sides are compared as `plain` text: list markers, emphasis, HTML tags, backticks and `$`
removed, a link's text kept, whitespace removed, NFKC applied (as ../shared/eval/hello_algo_pdf/README.md
describes). An evidence is split into its sentences; one counts as in the contexts (or shown by the answer) when
its first PREFIX plain characters occur there.
Not handled here: key facts (evaluation.facts_found), whether the sentence shown is cited right (the audit).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from rag.ingest.sentences import split_sentences

PREFIX = 12  # plain characters of an evidence sentence that must occur (the pdf README's comparison)
MIN_CHARS = 6  # an evidence sentence shorter than this (a list label, "例如：") is not one to look for

_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_TAGS = re.compile(r"</?[A-Za-z][^>]*>")
_LIST = re.compile(r"(?m)^\s*(?:[-*+]|\d+[.)])\s+")
_MARKS = re.compile(r"[*_`$#>]|\s+")


def plain(text: str) -> str:
    """`text` as the comparison reads it (see the module docstring)."""
    text = unicodedata.normalize("NFKC", text or "")
    text = _LINK.sub(r"\1", text)
    text = _TAGS.sub("", text)
    text = _LIST.sub("", text)
    return _MARKS.sub("", text)


def evidence_sentences(evidence: str) -> list[str]:
    """The evidence's sentences as plain text, each at least MIN_CHARS long."""
    out = []
    for line in (evidence or "").splitlines():
        for s in split_sentences(line) or [line]:
            p = plain(s)
            if len(p) >= MIN_CHARS:
                out.append(p)
    return out


def found(sentences: Sequence[str], text: str) -> list[str]:
    """The `sentences` (plain) whose first PREFIX characters occur in `text` (read as plain)."""
    body = plain(text)
    return [s for s in sentences if s[:PREFIX] in body]


def shown(evidence: str, contexts: Sequence[str], answer: str) -> tuple[bool, bool]:
    """(an evidence sentence is in the contexts, the answer shows one of those)."""
    there = found(evidence_sentences(evidence), "\n".join(contexts))
    return bool(there), bool(there) and bool(found(there, answer))

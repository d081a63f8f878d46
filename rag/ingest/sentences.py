"""Sentence splitting for Chinese and English text, small enough to read in one sitting.

A sentence ends at a terminator and keeps it:
- Chinese full-width 。！？；… and ASCII ! ? ; end a sentence wherever they appear (semicolons can be
  switched off: `semicolons=False` keeps "常用办法：A；B；C。" whole);
- an ASCII "." ends one only when whitespace or the end of the text follows ("3.5" and "v1.2" stay
  whole), and not after a few common abbreviations ("e.g.", "Mr.", "No.");
- a line break always ends one (titles, list items and table rows are their own "sentences"); a list marker opening
  a line ("- ", "* ", "• ", "1. ", "2) ") is no part of the sentence after it (`LIST_MARKER`), so "1." is no sentence and
  a quoted list item carries no bullet.
Closing quotes/brackets right after a terminator stay with the sentence (他说：“好。”), and so do
citation markers written after the full stop ("七天内可退货。[faq_003]", "...days. [faq_003]"), so an
answer sentence keeps the ids that cite it.

Used by the extractive generator (candidate sentences), the citation audit (one verdict per answer
sentence) and the sentence-maxsim reranker. Not handled here: chunking (rag/ingest/chunking.py has its own
size-aware splitting), quotations spanning several sentences, and the long tail of English
abbreviations (a missed one only splits a sentence in two, which every user of this module tolerates).
"""

from __future__ import annotations

import re

_ALWAYS = "。！？；!?;…"  # end a sentence wherever they appear
_CLOSERS = "”’\"')）】」』》]"  # stay with the sentence they close
_ABBREVIATIONS = frozenset({"e.g", "i.e", "mr", "mrs", "ms", "dr", "prof", "vs", "no", "fig", "cf", "st"})
# A citation marker written after the terminator: "[faq_003]", "【faq_003】", "[a#1, b#2]".
# Kept with the sentence before it; not a markdown link "[text](url)".
_TRAILING_CITATION = re.compile(r"[ \t]*[\[【][\w.\-#:，,、;； ]{1,80}[\]】](?!\()")
# A list item's marker at a line's start: a bullet, or a number with "." or ")" (then a blank: "3.5" is none).
LIST_MARKER = re.compile(r"[ \t]*(?:[-*+•·▪●◦]|\d{1,2}[.)])[ \t]+(?=\S)")


def sentence_spans(text: str, semicolons: bool = True, markers: bool = False) -> list[tuple[int, int]]:
    """(start, end) character offsets of every sentence in `text`; `text[start:end]` is the sentence
    without surrounding whitespace. Spans are in order and never overlap; empty pieces are dropped.

    semicolons=False keeps "；" / ";" inside the sentence: list-like sentences ("常用办法：A；B；C。")
    stay whole, which reads better as a quoted answer and as one claim to audit.
    markers=True reads a line's list marker as the text it is (the audit's outline rule reads a model's "1." labels).
    """
    enders = _ALWAYS if semicolons else _ALWAYS.replace("；", "").replace(";", "")
    spans: list[tuple[int, int]] = []
    skip = (lambda _text, at: at) if markers else _after_marker
    start = skip(text, 0)
    i = start
    n = len(text)
    while i < n:
        ch = text[i]
        end = None  # exclusive end of the sentence if one ends at i
        if ch == "\n":
            end = i
        elif ch in enders or (ch == "." and _full_stop(text, i)):
            end = _after_stop(text, i + 1, enders)
        if end is None:
            i += 1
            continue
        _add_span(text, start, end, spans)
        start = end if ch != "\n" else skip(text, end + 1)
        i = max(start, i + 1)
    _add_span(text, start, n, spans)
    return spans


def _after_marker(text: str, start: int) -> int:
    """Where a line that begins at `start` begins its text: after a list item's marker, if it has one."""
    m = LIST_MARKER.match(text, start)
    return m.end() if m else start


def _after_stop(text: str, j: int, enders: str) -> int:
    """Where a sentence that stops just before `j` ends: after further stops ("？！", "……", "..."), closing quotes and
    brackets, and the citations written after the full stop ("[faq_003]", " [a#1][b#2]")."""
    n = len(text)
    while j < n and (text[j] in enders or text[j] == "."):
        j += 1
    while j < n and text[j] in _CLOSERS:
        j += 1
    while m := _TRAILING_CITATION.match(text, j):
        j = m.end()
    return j


_MARKER_LINES = re.compile(r"(?m)^" + LIST_MARKER.pattern)


def without_line_markers(text: str) -> str:
    """`text` with every line's list marker taken out ("- 缓存友好。" -> "缓存友好。")."""
    return _MARKER_LINES.sub("", text)


def split_sentences(text: str, semicolons: bool = True) -> list[str]:
    """The sentences of `text` (terminators kept, surrounding whitespace stripped)."""
    return [text[a:b] for a, b in sentence_spans(text, semicolons)]


def hard_split(text: str, span: tuple[int, int], size: int) -> list[tuple[int, int]]:
    """A span longer than `size` -> consecutive pieces of at most `size` characters (whitespace trimmed off
    their ends, empty pieces dropped): the chunkers' cut of a sentence too long to keep whole."""
    pieces: list[tuple[int, int]] = []
    for a in range(span[0], span[1], size):
        _add_span(text, a, min(a + size, span[1]), pieces)  # trimmed like every sentence span
    return pieces


def _full_stop(text: str, i: int) -> bool:
    """Is the "." at text[i] the end of a sentence (not a decimal point, file name or abbreviation)?"""
    nxt = text[i + 1] if i + 1 < len(text) else ""
    if nxt and not nxt.isspace() and nxt not in _CLOSERS and nxt not in "[【":
        return False
    word = re.search(r"([A-Za-z][A-Za-z.]*)$", text[max(0, i - 12) : i])
    return not (word and word.group(1).lower() in _ABBREVIATIONS)


def _add_span(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        spans.append((start, end))

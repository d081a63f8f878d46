"""What a sentence and a span share: a content unit found in a span (with the chunk's title counting for a name), and
the coverage the alignment and the checks read; the unit written after a number, and units as a reason shows them.
Not handled here: aligning the sentence to its span and the order the checks run in (rag/audit/support.py).
"""

from __future__ import annotations

import re

from rag.audit import fact_lexicon as lex
from rag.audit.fact_text import Reading, Unit


def asks(text: str) -> bool:
    """Is `text` a question (it ends with a question mark, closing quotes and brackets aside, or with the particle 吗 or
    呢 before a full stop: the 0.5B writes "什么是检索增强生成（RAG）呢。")? It states nothing."""
    end = text.rstrip().rstrip("”’\"')）")
    return end.endswith(("?", "？")) or bool(_PARTICLE_END.search(end))


_PARTICLE_END = re.compile(r"[吗呢][。.！!]?$")


def coverage(s: Reading, span: Reading, title: Reading | None = None) -> float:
    """Mean credit of the sentence's content units in the span (fact_text.Reading.credit). A name in the chunk's
    first sentence (its title) is what the whole chunk is about, so it counts as found in every span of it:
    the span for "RRF 中 k 通常取 60" is the sentence about k, not that one plus the title."""
    if not s.units:
        return 0.0
    return sum(unit_credit(u, span, title) for u in s.units) / len(s.units)


def unit_credit(u: Unit, span: Reading, title: Reading | None) -> float:
    """One unit's credit in the span, a name in the chunk's title counting as found (see `coverage`)."""
    return max(span.credit(u), 1.0 if title is not None and u.kind == "term" and title.found(u) else 0.0)


def same_unit(u: Unit, v: Unit) -> bool:
    if u.kind == "num" or v.kind == "num":
        return u.kind == v.kind and u.key == v.key
    return u.key == v.key or (not u.key.isascii() and (u.key in v.key or v.key in u.key))


def numbers_of(r: Reading) -> list[Unit]:
    """The number units of a text, in order."""
    return [u for u in r.units if u.kind == "num"]


def shown(units, sep: str = "、") -> str:
    """The units as the reason shows them: 、 between them in Chinese, a comma in English (`sep=", "`)."""
    return sep.join(dict.fromkeys(u.shown for u in units))


def unit_after(text: str, end: int) -> str | None:
    """The unit written right after a number ending at `end` (hours, GB, 天), singular; None if there is none."""
    rest = text[end:end + 12].lstrip().lower()
    for unit in lex.UNITS:
        if rest.startswith(unit) and not (unit.isascii() and rest[len(unit):len(unit) + 1].isalpha()):
            return unit.removesuffix("s") if unit.isascii() and unit not in ("bits", "bytes") else unit.removesuffix("s")
    return None


def measure_after(text: str, end: int) -> str | None:
    """The Chinese measure word right after a number ending at `end` (2 层, 3 个), or a unit (16 KB); else None."""
    rest = text[end:end + 3].lstrip()
    return rest[0] if rest and rest[0] in lex.MEASURE_ZH else unit_after(text, end)

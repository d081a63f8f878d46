"""Every number of the sentence is the span's ("numbers"); one the span has nothing against is a new number.
Not handled here: aligning the sentence to its span and the order the checks run in (rag/audit/support.py).
"""

from __future__ import annotations

from rag.audit import fact_lexicon as lex
from rag.audit.checks.verdict import Check
from rag.audit.fact_text import Reading
from rag.messages import Msg


def shown(units, sep: str = "、") -> str:
    """The units as the reason shows them: 、 between them in Chinese, a comma in English (`sep=", "`)."""
    return sep.join(dict.fromkeys(u.shown for u in units))


def check(s: Reading, span: Reading, whole: Reading) -> Check | None:
    nums = [u for u in s.units if u.kind == "num"]
    if not nums:
        return None
    missing = [u for u in nums if not span.found(u)]
    here = [u for u in span.units if u.kind == "num"]
    for u in nums:  # "B+ 树有 2 层" is not backed by the 2 of "WHERE b = 2": a counted 2 against an assigned one
        measure = measure_after(s.text, u.end)
        same = [v for v in here if v.key == u.key]
        if measure and same and all(_assigned(span.text, v.start) for v in same):
            where = span.text[max(0, same[0].start - 12):same[0].end].strip()
            return Check("new-number", False, Msg(zh=f"句子说 {u.shown} {measure}，证据里的 {u.shown} 是赋给别的量的值（“{where}”）",
                         en=f"the sentence counts {u.shown} {measure}; the evidence's {u.shown} is a value given to something "
                         f"else (\"{where}\")"))
    for u in nums:
        unit = unit_after(s.text, u.end)
        after = {unit_after(span.text, v.end) for v in here if v.key == u.key}
        theirs = sorted(x for x in after if x is not None)
        if u not in missing and unit and theirs and None not in after and unit not in theirs:
            return Check("numbers", False, Msg(zh=f"句子说 {u.shown} {unit}，证据说 {u.shown} {'、'.join(theirs)}",
                         en=f"the sentence says {u.shown} {unit}; the evidence says {u.shown} {', '.join(theirs)}"))
    if not missing:
        return Check("numbers", True, Msg(zh=f"数字 {shown(nums)} 都在证据里", en=f"the numbers {shown(nums, ', ')} are all in the evidence"))
    if not here:  # the span states no number at all: the sentence adds one ("2019 年", "两个指标"), it contradicts none
        return Check("new-number", False, Msg(zh=f"证据里没有数字，句中的 {shown(missing)} 没有出处",
                     en=f"the evidence states no number; the sentence's {shown(missing, ', ')} has no source"))
    return Check("numbers", False,
                 Msg(zh=f"句中的 {shown(missing)} 在证据里找不到（证据这里的数字是 {shown(here) or '—'}）",
                 en=f"the sentence says {shown(missing, ', ')}, which the evidence does not (its numbers here: "
                 f"{shown(here, ', ') or '—'})"))


def measure_after(text: str, end: int) -> str | None:
    """The Chinese measure word right after a number ending at `end` (2 层, 3 个), or a unit (16 KB); else None."""
    rest = text[end:end + 3].lstrip()
    return rest[0] if rest and rest[0] in lex.MEASURE_ZH else unit_after(text, end)


def _assigned(text: str, start: int) -> bool:
    """Is the number at `start` a value given to a name ("b = 2", "k：60", "top_k=5")?"""
    before = text[max(0, start - 4):start].rstrip()
    return bool(before) and before[-1] in "=＝:：<>≤≥"


def unit_after(text: str, end: int) -> str | None:
    """The unit written right after a number ending at `end` (hours, GB, 天), singular; None if there is none."""
    rest = text[end:end + 12].lstrip().lower()
    for unit in lex.UNITS:
        if rest.startswith(unit) and not (unit.isascii() and rest[len(unit):len(unit) + 1].isalpha()):
            return unit.removesuffix("s") if unit.isascii() and unit not in ("bits", "bytes") else unit.removesuffix("s")
    return None

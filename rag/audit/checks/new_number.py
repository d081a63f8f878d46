"""A number the span has nothing against ("new-number"): the span states no number at all ("2019 年" added), or the
sentence counts what the span's same number only assigns ("B+ 树有 2 层" against "WHERE b = 2"). Unsupported, not
contradicted: it adds a number, it contradicts none (the numbers check says nothing then).
Not handled here: a number the span gives otherwise (numbers.py), the order the checks run in (rag/audit/support.py).
"""

from __future__ import annotations

from rag.audit.checks.units import measure_after, numbers_of, shown
from rag.audit.checks.verdict import Check, Claim
from rag.audit.fact_text import Reading, Unit
from rag.messages import Msg

NAME = "new-number"


def check(claim: Claim) -> Check | None:
    s, span = claim.sentence, claim.span
    nums = numbers_of(s)
    if not nums:
        return None
    here = numbers_of(span)
    counted = _counted_where_assigned(s, span, nums, here)
    if counted is not None:
        return counted
    missing = [u for u in nums if not span.found(u)]
    if missing and not here:  # the span states no number at all: the sentence adds one ("2019 年", "两个指标")
        return Check(NAME, False, Msg(zh=f"证据里没有数字，句中的 {shown(missing)} 没有出处",
                     en=f"the evidence states no number; the sentence's {shown(missing, ', ')} has no source"))
    return None


def _counted_where_assigned(s: Reading, span: Reading, nums: list[Unit], here: list[Unit]) -> Check | None:
    """"B+ 树有 2 层" is not backed by the 2 of "WHERE b = 2": a counted number against the span's assigned one."""
    for u in nums:
        measure = measure_after(s.text, u.end)
        same = [v for v in here if v.key == u.key]
        if measure and same and all(_assigned(span.text, v.start) for v in same):
            where = span.text[max(0, same[0].start - 12):same[0].end].strip()
            return Check(NAME, False, Msg(zh=f"句子说 {u.shown} {measure}，证据里的 {u.shown} 是赋给别的量的值（“{where}”）",
                         en=f"the sentence counts {u.shown} {measure}; the evidence's {u.shown} is a value given to something "
                         f"else (\"{where}\")"))
    return None


def _assigned(text: str, start: int) -> bool:
    """Is the number at `start` a value given to a name ("b = 2", "k：60", "top_k=5")?"""
    before = text[max(0, start - 4):start].rstrip()
    return bool(before) and before[-1] in "=＝:：<>≤≥"

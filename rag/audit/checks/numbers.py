"""Every number of the sentence is the span's, with the span's unit ("numbers").
Not handled here: a number the span has nothing against (new_number.py), aligning the sentence to its span and the
order the checks run in (rag/audit/support.py).
"""

from __future__ import annotations

from rag.audit.checks import new_number
from rag.audit.checks.units import numbers_of, shown, unit_after
from rag.audit.checks.verdict import Check, Claim
from rag.audit.fact_text import Reading, Unit
from rag.messages import Msg

NAME = "numbers"


def check(claim: Claim) -> Check | None:
    """Every number of the sentence is in its span, with the unit the span gives it; None when the sentence states no
    number, or where one is a new number (new_number.py says so)."""
    s, span = claim.sentence, claim.span
    nums = numbers_of(s)
    if not nums or new_number.check(claim) is not None:
        return None
    missing = [u for u in nums if not span.found(u)]
    here = numbers_of(span)
    other_unit = next((c for u in nums if u not in missing and (c := _other_unit(s, span, u, here)) is not None), None)
    if other_unit is not None:
        return other_unit
    if not missing:
        return Check(NAME, True, Msg(zh=f"数字 {shown(nums)} 都在证据里", en=f"the numbers {shown(nums, ', ')} are all in the evidence"))
    return Check(NAME, False,
                 Msg(zh=f"句中的 {shown(missing)} 在证据里找不到（证据这里的数字是 {shown(here) or '—'}）",
                 en=f"the sentence says {shown(missing, ', ')}, which the evidence does not (its numbers here: "
                 f"{shown(here, ', ') or '—'})"))


def _other_unit(s: Reading, span: Reading, u: Unit, here: list[Unit]) -> Check | None:
    """The span gives number `u` (which it holds) only with another unit ("two weeks" is not "two months")."""
    unit = unit_after(s.text, u.end)
    after = {unit_after(span.text, v.end) for v in here if v.key == u.key}
    theirs = sorted(x for x in after if x is not None)
    if unit and theirs and None not in after and unit not in theirs:
        return Check(NAME, False, Msg(zh=f"句子说 {u.shown} {unit}，证据说 {u.shown} {'、'.join(theirs)}",
                     en=f"the sentence says {u.shown} {unit}; the evidence says {u.shown} {', '.join(theirs)}"))
    return None

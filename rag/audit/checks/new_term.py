"""A name or identifier of the sentence that the chunk never mentions ("new-term": Google, GPU): unsupported,
whatever else the chunk shares with it.
Not handled here: aligning the sentence to its span and the order the checks run in (rag/audit/support.py).
"""

from __future__ import annotations

from rag.audit.checks.units import shown
from rag.audit.checks.verdict import Check, Claim
from rag.messages import Msg

NAME = "new-term"


def check(claim: Claim) -> Check | None:
    s, whole = claim.sentence, claim.whole
    new = [u for u in s.units if u.kind == "term" and not whole.found(u)]
    if not new:
        return None
    return Check(NAME, False, Msg(zh=f"资料里没有提到 {shown(new)}", en=f"the chunk never mentions {shown(new, ', ')}"))

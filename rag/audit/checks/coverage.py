"""The share of the sentence's content units found in its evidence span ("coverage"), against the share a "supported"
needs; and the two sentences with nothing to cover (no content word, no chunk).
Not handled here: measuring the share (units.coverage, read by the alignment), the order the checks run in
(rag/audit/support.py).
"""

from __future__ import annotations

from rag.audit.checks.verdict import Check, Claim
from rag.messages import Msg

NAME = "coverage"

NO_CONTENT = Check(NAME, False, Msg(zh="这句话没有可以核对的内容词。", en="the sentence has no content words to check."))
NO_CHUNK = Check(NAME, False, Msg(zh="没有可以核对的资料。", en="there is no chunk to check it against."))


def check(claim: Claim) -> Check | None:
    cov = claim.coverage
    return Check(NAME, cov >= claim.supported, Msg(zh=f"证据覆盖了这句话 {cov:.0%} 的内容词",
                                                   en=f"the evidence covers {cov:.0%} of the sentence's content words"))

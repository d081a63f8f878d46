"""The coverage of what the sentence says beyond the question ("adds"): the question's own words are in any chunk on
its topic, so they lift the coverage of a sentence whatever it answers.
Not handled here: aligning the sentence to its span and the order the checks run in (rag/audit/support.py).
"""

from __future__ import annotations

from rag.audit.checks.restates import own_units
from rag.audit.checks.units import shown, unit_credit
from rag.audit.checks.verdict import Check, Claim
from rag.audit.fact_text import Unit
from rag.messages import Msg

NAME = "adds"


def check(claim: Claim) -> Check | None:
    """How much of what the sentence says beyond the question the span covers (`share`); no check without a question,
    with nothing beyond it, or where the audit does not read it (rebind's checker). "RRF 属于混合检索中的分数加权融合方
    法。" to "RRF 属于混合检索中的哪一类融合方法？" covers 71% of its words with faq_030, which never says 加权, the word that
    answers (RRF fuses by rank). The share is read against the same thresholds as the coverage (weak, unsupported
    below them); no new threshold. The question's words still count in the coverage: they are part of what the
    sentence claims."""
    own = _own(claim)
    if not own:
        return None
    credit = [unit_credit(u, claim.span, claim.title) for u in own]
    share = sum(credit) / len(own)
    if share >= claim.supported:
        return Check(NAME, True, Msg(zh=f"这句话在问题之外说的内容，证据覆盖了 {share:.0%}",
                     en=f"the evidence covers {share:.0%} of what the sentence says beyond the question"))
    missing = [u for u, c in zip(own, credit) if c < 1.0]
    return Check(NAME, False, Msg(zh=f"这句话说了 {shown(missing)}，证据里没有（问题之外的内容只覆盖了 {share:.0%}）",
                 en=f"the sentence says {shown(missing, ', ')}, which the evidence does not (it covers {share:.0%} of what the "
                 "sentence adds to the question)"))


def share(claim: Claim) -> float:
    """The share of what the sentence says beyond the question that its span covers; 1.0 where `check` has nothing to
    say (the label reads it beside the coverage)."""
    own = _own(claim)
    return sum(unit_credit(u, claim.span, claim.title) for u in own) / len(own) if own else 1.0


def _own(claim: Claim) -> list[Unit]:
    """The sentence's units the question does not hold, where the audit reads them."""
    return own_units(claim.sentence, claim.question) if claim.question.strip() and claim.beyond_question else []

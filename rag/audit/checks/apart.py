"""A claim whose parts sit in different places of the chunk ("apart"): the chunk's words stitched into a claim it
never makes.
Not handled here: aligning the sentence to its span and the order the checks run in (rag/audit/support.py).
"""

from __future__ import annotations

from rag.audit.checks.binding import best_clause, clause_has
from rag.audit.checks.units import asks, same_unit
from rag.audit.checks.verdict import Check, Claim
from rag.audit.fact_text import Unit, read
from rag.ingest.sentences import sentence_spans
from rag.messages import Msg

NAME = "apart"


def check(claim: Claim) -> Check | None:
    """A name the sentence says something of, where the chunk names it only apart from what is said: "k=60 是 BM25
    的平滑常数" against "k 是平滑常数，通常取 60。例如某文档在 BM25 中排第 1" stitches the chunk's words into a claim
    it never makes. A name goes with what is said when it is in the same sentence of the chunk, or opens an earlier
    sentence (the subject the chunk goes on about: "HNSW 是… 。参数 M 控制…"), or is in the chunk's title."""
    s, span, whole, evidence, title = claim.sentence, claim.span, claim.whole, claim.evidence, claim.title
    cuts = sentence_spans(whole.text)
    head = whole.text.split("\n", 1)[0] if "\n" in whole.text.strip() else ""
    titles = [r for r in (title, read(head) if asks(head) else None) if r is not None]

    def sentence_of(pos: int) -> int:
        return next((i for i, (a, b) in enumerate(cuts) if a <= pos < b), -1)

    openers: dict[int, Unit] = {}  # sentence of the chunk -> the content unit it opens with
    for v in whole.units:
        if v.kind != "num":
            openers.setdefault(sentence_of(v.start), v)
    for c in s.clauses:
        g, _ = best_clause(c, span)
        if g is None:
            continue
        here = sentence_of(evidence.start + g.start)
        for u in c.units:
            if u.kind != "term" or clause_has(span, g, u) or not whole.found(u) or any(t.found(u) for t in titles):
                continue
            homes = {sentence_of(v.start) for v in whole.units if same_unit(u, v)}
            if here in homes or any(i < here and i in openers and same_unit(u, openers[i]) for i in homes):
                continue
            said = span.text[g.start:g.end].strip()
            return Check(NAME, False, Msg(zh=f"证据在“{said}”里没有提到 {u.shown}：资料没有把它们放在一起说",
                         en=f"the evidence says \"{said}\" without {u.shown}: the chunk never says the two together"))
    return None

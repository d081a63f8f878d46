"""A claim whose parts sit in different places of the chunk ("apart"): the chunk's words stitched into a claim it
never makes.
Not handled here: aligning the sentence to its span and the order the checks run in (rag/audit/support.py).
"""

from __future__ import annotations

from rag.audit.checks.binding import best_clause, clause_has
from rag.audit.checks.units import asks, same_unit
from rag.audit.checks.verdict import Check, Claim
from rag.audit.fact_text import Reading, Unit, read
from rag.ingest.sentences import sentence_spans
from rag.messages import Msg

NAME = "apart"


def check(claim: Claim) -> Check | None:
    """A name the sentence says something of, where the chunk names it only apart from what is said: "k=60 是 BM25
    的平滑常数" against "k 是平滑常数，通常取 60。例如某文档在 BM25 中排第 1" stitches the chunk's words into a claim
    it never makes. A name goes with what is said when it is in the same sentence of the chunk, or opens an earlier
    sentence (the subject the chunk goes on about: "HNSW 是… 。参数 M 控制…"), or is in the chunk's title."""
    s, span, whole = claim.sentence, claim.span, claim.whole
    chunk = _Sentences(whole, claim.title)
    for c in s.clauses:
        g, _ = best_clause(c, span)
        if g is None:
            continue
        here = chunk.of(claim.evidence.start + g.start)
        for u in c.units:
            if u.kind != "term" or clause_has(span, g, u) or not whole.found(u) or chunk.goes_with(u, here):
                continue
            said = span.text[g.start:g.end].strip()
            return Check(NAME, False, Msg(zh=f"证据在“{said}”里没有提到 {u.shown}：资料没有把它们放在一起说",
                         en=f"the evidence says \"{said}\" without {u.shown}: the chunk never says the two together"))
    return None


class _Sentences:
    """The chunk's sentences, each with the content unit it opens with, and its titles (its first sentence; a first
    line that asks, an FAQ entry's question)."""

    def __init__(self, whole: Reading, title: Reading | None):
        self.whole = whole
        self.cuts = sentence_spans(whole.text)
        head = whole.text.split("\n", 1)[0] if "\n" in whole.text.strip() else ""
        self.titles = [r for r in (title, read(head) if asks(head) else None) if r is not None]
        self.openers: dict[int, Unit] = {}  # sentence of the chunk -> the content unit it opens with
        for v in whole.units:
            if v.kind != "num":
                self.openers.setdefault(self.of(v.start), v)

    def of(self, pos: int) -> int:
        """The chunk sentence that holds offset `pos`; -1 where none does."""
        return next((i for i, (a, b) in enumerate(self.cuts) if a <= pos < b), -1)

    def goes_with(self, u: Unit, here: int) -> bool:
        """Is name `u` said with chunk sentence `here`: in a title, in that sentence, or opening an earlier one?"""
        if any(t.found(u) for t in self.titles):
            return True
        homes = {self.of(v.start) for v in self.whole.units if same_unit(u, v)}
        return here in homes or any(i < here and i in self.openers and same_unit(u, self.openers[i]) for i in homes)

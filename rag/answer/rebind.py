"""Bind each of the model's citations to the chunk that states its sentence.

The bundled 0.5B writes a sentence about one entry and cites its neighbour ("过拟合…" citing the 欠拟合 entry):
under the citation grammar it must cite a real ref, but which ref it picks is its weakest choice. So after it has
written, each cited sentence is checked against the chunk it cites, by the audit's own checker (support.py);
when that chunk does not support it and another context does ("supported", the checker's top label), the
citation is moved there and the move is kept, with both refs and why, for the page to show. A sentence no
context supports keeps the model's citation, and the audit says so. No threshold: the label is the audit's.

Measured before it was built (bench/bench_answers.py's sample, the bundled 0.5B, the model's own cited
sentences): 12 citations moved on golden and xquad_zh, 11 onto a gold chunk and none away from one.
Not handled here: whether the sentence is true (the audit, on the answer as rebound), quotes (fill_in.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rag.audit.citations import CITATION_RE, is_not_enough, parse_citations, sentence_claims
from rag.audit.support import Checker

MOVE_TO = "supported"  # the label another chunk must give the sentence for its citation to move there


@dataclass(frozen=True)
class Rebound:
    sentence: str  # the claim, citations removed
    cited: tuple[str, ...]  # what the model cited
    cited_label: str  # how the cited chunk supports it (support.LABELS)
    ref: str  # the chunk it now cites, which supports it


def rebind(answer: str, contexts: Mapping[str, str], question: str = "") -> tuple[str, list[Rebound]]:
    """(the answer with each moved citation rewritten, the moves). Unchanged where every cited chunk supports
    its sentence, or no other context does. Only the checker's label is read, so no embedder: the cosine the
    audit shows beside a label would be computed here for nothing."""
    # which chunk states a sentence is a matter of all its words: a true paraphrase ("RRF 把各路名次的倒数相加" under
    # "什么是 RRF？") covers less of what it adds beyond the question than of its whole, and would be moved off the
    # entry that says it; the audit's label still reads what it adds (support._adds)
    checker = Checker(beyond_question=False)
    out, moves, last = [], [], 0
    for start, end, claim in sentence_claims(answer):  # as the audit reads them
        sentence = answer[start:end]
        move = _move(checker, sentence, claim, contexts, question)
        if move is None:
            continue
        out.append(answer[last:start] + _recite(sentence, move.ref))
        last = end
        moves.append(move)
    return ("".join(out) + answer[last:], moves) if moves else (answer, [])


def _move(checker: Checker, sentence: str, claim: str, contexts: Mapping[str, str], question: str
          ) -> Rebound | None:
    refs = tuple(dict.fromkeys(r for r in parse_citations(sentence) if r in contexts))
    claim = claim.strip()
    if not refs or not claim or is_not_enough(claim):
        return None
    cited = checker.check(claim, {r: contexts[r] for r in refs}, question)
    if cited.label == MOVE_TO:
        return None
    others = {r: t for r, t in contexts.items() if r not in refs}
    if not others:
        return None
    best = checker.check(claim, others, question)
    if best.label != MOVE_TO or best.evidence is None:
        return None
    return Rebound(claim, refs, cited.label, best.evidence.ref)


def _recite(sentence: str, ref: str) -> str:
    """The sentence with its citation markers replaced by one, [ref], where the first one stood."""
    first = CITATION_RE.search(sentence)
    if first is None:
        return sentence
    head, tail = sentence[: first.start()], CITATION_RE.sub("", sentence[first.start():])
    return f"{head}[{ref}]{tail}"

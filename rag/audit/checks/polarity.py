"""Negations agree clause by clause, and no opposite pair differs (增大/减小, 乘以/除以): "polarity".
Not handled here: aligning the sentence to its span and the order the checks run in (rag/audit/support.py).
"""

from __future__ import annotations

from rag.audit import fact_lexicon as lex
from rag.audit.checks import scope as scope_check
from rag.audit.checks.binding import best_clause, clause_has
from rag.audit.checks.swap import has_word
from rag.audit.checks.verdict import Check, Claim
from rag.audit.fact_text import Clause, Reading, read
from rag.messages import Msg

NAME = "polarity"


def check(claim: Claim) -> Check | None:
    """The clauses' polarity (below), except where the opposite is said under another condition of the chunk: the
    sentence's own condition agrees there ("误差很大" under 测试集 is not contradicted by "误差很小" under 训练集)."""
    found = _clauses_agree(claim.sentence, claim.span)
    if found is not None and not found.passed and scope_check.said_there(claim.text, claim.chunk):
        return None
    return found


def in_scope(scope: list[str], other: Reading) -> bool:
    """A negation counts when what it negates is also on the other side (or it negates nothing named)."""
    if not scope:
        return True
    return any((k in other.stems) if k.isascii() else (k in other.low) for k in scope if k)


def _clauses_agree(s: Reading, span: Reading) -> Check | None:
    """Each group of aligned clauses holds as many negations on either side (counting only a negation whose
    object is on the other side too: "没见过的验证集" paraphrased without 没见过 is not a contradiction), and no
    opposite pair differs between a sentence clause and a span clause aligned with it."""
    edges: dict[int, set[int]] = {}
    for i, c in enumerate(s.clauses):
        g, count = best_clause(c, span)
        if g is None:
            continue
        shared = [sum(clause_has(span, h, u) for u in c.units) for h in span.clauses]
        edges[i] = {j for j, h in enumerate(span.clauses) if h is g or shared[j] >= max(2, count)}
        opposite = _opposite_aligned(s, c, span, [span.clauses[j] for j in sorted(edges[i])]) \
            or _opposite_near(s, c, span)
        if opposite is not None:
            return opposite
    for mine, theirs in _groups(edges):
        differ = _negations_differ(s, span, mine, theirs)
        if differ is not None:
            return differ
    if edges:
        return Check(NAME, True, Msg(zh="否定和反义词与证据一致", en="negations and opposites agree with the evidence"))
    return None


def _opposite_aligned(s: Reading, c: Clause, span: Reading, closest: list[Clause]) -> Check | None:
    """An opposite pair that differs between sentence clause `c` and a span clause aligned with it (`closest`: "位于检索
    召回之后、大模型生成之前": both halves are as close)."""
    for h in closest:
        for a, b in lex.OPPOSITES_ZH + lex.OPPOSITES_EN:
            for x, y in ((a, b), (b, a)):
                if (has_word(s, c.start, c.end, x) and not has_word(s, c.start, c.end, y)
                        and has_word(span, h.start, h.end, y) and not has_word(span, h.start, h.end, x)):
                    return _opposite(x, y)
    return None


def _groups(edges: dict[int, set[int]]) -> list[tuple[set[int], set[int]]]:
    """(sentence clauses, span clauses) joined by alignment: two sentence clauses aligned to one span clause are one
    group."""
    groups: list[tuple[set[int], set[int]]] = []
    for i, js in edges.items():
        merged = [grp for grp in groups if grp[1] & js]
        new = ({i} | set().union(*(g[0] for g in merged)), set(js).union(*(g[1] for g in merged)))
        groups = [grp for grp in groups if grp not in merged] + [new]
    return groups


def _negations_differ(s: Reading, span: Reading, mine: set[int], theirs: set[int]) -> Check | None:
    """One group's negations, counted on either side (only those whose object the other side holds), differ."""
    ours_text = " ".join(s.text[s.clauses[i].start:s.clauses[i].end] for i in mine)
    evid_text = " ".join(span.text[span.clauses[j].start:span.clauses[j].end] for j in theirs)
    ours = [t for i in mine for t, scope in s.negations(s.clauses[i].start, s.clauses[i].end)
            if in_scope(scope, read(evid_text))]
    evid = [t for j in theirs for t, scope in span.negations(span.clauses[j].start, span.clauses[j].end)
            if in_scope(scope, read(ours_text))]
    if len(ours) == len(evid):
        return None
    if evid:
        return Check(NAME, False, Msg(zh=f"证据这里有否定（{'、'.join(evid)}），句子没有",
                     en=f"the evidence negates this ({', '.join(evid)}) and the sentence does not"))
    return Check(NAME, False, Msg(zh=f"句子有否定（{'、'.join(ours)}），证据这里没有",
                 en=f"the sentence negates this ({', '.join(ours)}) and the evidence does not"))


def _opposite_near(s: Reading, c: Clause, span: Reading) -> Check | None:
    """The sentence says x, the span never does, and says x's opposite in a clause that shares a content unit
    with the sentence's clause ("要乘以 d_k" against "除以 √d_k 防止数值过大")."""
    for a, b in lex.OPPOSITES_ZH + lex.OPPOSITES_EN:
        for x, y in ((a, b), (b, a)):
            if not has_word(s, c.start, c.end, x) or has_word(s, 0, len(s.text), y) \
                    or has_word(span, 0, len(span.text), x):
                continue
            for h in span.clauses:
                if has_word(span, h.start, h.end, y) and any(clause_has(span, h, u) for u in c.units
                                                               if u.kind != "num" and u.key not in (x, y)):
                    return _opposite(x, y)
    return None


def _opposite(x: str, y: str) -> Check:
    """The failed check: the sentence says `x` where the evidence says its opposite `y`."""
    return Check(NAME, False, Msg(zh=f"句子说“{x}”，证据说“{y}”",
                 en=f"the sentence says \"{x}\" where the evidence says \"{y}\""))

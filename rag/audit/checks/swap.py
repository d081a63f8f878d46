"""The span says the same thing of a sibling term (L1 for L2, 验证集 for 测试集): "swap".
Not handled here: aligning the sentence to its span and the order the checks run in (rag/audit/support.py).
"""

from __future__ import annotations

from rag.audit import fact_lexicon as lex
from rag.audit.checks.binding import (
    Facing,
    aliases,
    best_clause,
    clause_has,
    opposites,
    script,
    siblings,
    topic,
)
from rag.audit.checks.units import same_unit
from rag.audit.checks.verdict import Check, Claim, Evidence
from rag.audit.fact_text import Clause, Reading, Unit, read
from rag.audit.words import pos_tags
from rag.ingest.sentences import sentence_spans
from rag.messages import Msg

NAME = "swap"


def check(claim: Claim) -> Check | None:
    """The span clause that says what the sentence clause says holds a sibling term where the sentence has
    its own term, and the chunk knows that term from elsewhere: it is said of something else. A name in the
    chunk's title is what the whole chunk is about, never a swap."""
    s, span, whole, evidence, title = claim.sentence, claim.span, claim.whole, claim.evidence, claim.title
    for c in s.clauses:
        found = _clause_swap(s, c, span, whole, evidence, title)
        if found is None:
            found = _subject_swap(c, span, whole, evidence)
        if found is not None:
            return found
    return _opener_swap(s, span, whole)


def _clause_swap(s: Reading, c: Clause, span: Reading, whole: Reading, evidence: Evidence,
                 title: Reading | None) -> Check | None:
    """A swap in the span clause that says what sentence clause `c` says, or in one that holds one of its names."""
    best, _ = best_clause(c, span)
    names = [u for u in c.units if u.kind == "term"]
    away = [u for u in names if best is None or not clause_has(span, best, u)]  # said apart from its content
    homes = [g for u in away for g in span.clauses if clause_has(span, g, u)]
    mine = c.units + c.inherited
    seen: list[Clause] = []
    for g in [best, *homes]:  # where the sentence's content is, and where its names are
        if g is None or any(g is h for h in seen):
            continue
        seen.append(g)
        found = _swapped(mine, Facing(s, c, span, g, whole), evidence, title, names_too=g is best)
        if found is not None:
            return found
    return None


def _opener_swap(s: Reading, span: Reading, whole: Reading) -> Check | None:
    """The sentence opens with a word (过拟合) that a span sentence saying the rest lacks, and that span sentence opens
    with a sibling of it (欠拟合是指…，因此训练误差和测试误差都偏高): the span is about the other one."""
    own = [u for u in s.units if u.kind != "num"]
    if len(own) < 3:
        return None
    m = own[0]
    for a, b in sentence_spans(span.text):
        v = _sibling_opener(own, span, whole, a, b)
        if v is not None:
            where = span.text[a:b].strip()
            return _said_of(where, v, m)
    return None


def _sibling_opener(own: list[Unit], span: Reading, whole: Reading, a: int, b: int) -> Unit | None:
    """The unit the span sentence span.text[a:b] opens with, where it is a sibling of the sentence's opener and the span
    sentence says at least half the rest; None otherwise (it names the sentence's subject itself, or says little)."""
    m = own[0]
    theirs = [u for u in span.units if a <= u.start < b and u.kind != "num"]
    if not theirs or any(same_unit(theirs[0], u) for u in own) or span.low.find(m.key, a, b) >= 0:
        return None
    v = theirs[0]
    shared = sum(1 for u in own[1:] if span.low.find(u.key, a, b) >= 0)
    return v if _named_alike(m, v) and shared >= (len(own) - 1) / 2 and not aliases(whole, m, v) else None


def _named_alike(m: Unit, v: Unit) -> bool:
    """Two Chinese names of three characters or more that end alike (过拟合, 欠拟合), or an opposite pair."""
    cjk = not m.key.isascii() and not v.key.isascii()
    return (cjk and len(m.key) == len(v.key) >= 3 and m.key[-1] == v.key[-1]) or opposites(m.key, v.key)


def _subject_swap(c: Clause, span: Reading, whole: Reading, evidence: Evidence) -> Check | None:
    """The sentence clause opens with a name (m) and goes on with a word (nxt) that no span clause says with m; a span
    clause says nxt after a sibling of m instead: the span says it of the other one."""
    own = [u for u in c.units if u.kind != "num"]
    if len(own) < 3:
        return None
    m, nxt = own[0], own[1]
    if any(clause_has(span, g, m) and clause_has(span, g, nxt) for g in span.clauses) or not span.found(m):
        return None
    found = None
    for g in span.clauses:
        v = _other_subject(g, own, span, whole)
        if v is None:
            continue
        shared = sum(clause_has(span, g, u) for u in own[1:])
        if found is None or shared > found[0]:
            found = (shared, g, v)
    if found is None:
        return None
    _, g, v = found
    where = span.text[g.start:g.end].strip()
    return _said_of(where, v, m)


def _other_subject(g: Clause, own: list[Unit], span: Reading, whole: Reading) -> Unit | None:
    """The unit span clause `g` opens with, where it says the sentence clause's second word of another name of the
    same kind and script (not an alias of the first); None where `g` is not such a clause."""
    m, nxt = own[0], own[1]
    theirs = [u for u in g.units if u.kind != "num"]
    if len(theirs) < 2 or not same_unit(theirs[1], nxt) or clause_has(span, g, m):
        return None
    v = theirs[0]
    if any(same_unit(v, u) or v.key == u.key for u in own) or v.key in lex.GENERIC_ZH or not _same_kind(m, v, whole):
        return None
    if not _names_another(v):
        return None  # a clause that opens with a function word (曾, 至, 虽然) names no other subject
    if len(theirs) > 2 and not any(clause_has(span, g, u) for u in own[2:]):
        return None  # the span clause goes on to say something else ("上层节点稀疏" vs "下层节点稠密")
    return v


# adverbs, conjunctions, prepositions, pronouns, particles...; not asked._FUNCTION_FLAGS, whose x (a string jieba does
# not know) is often a name here, and which leaves time words in
_FUNCTION = ("d", "c", "p", "r", "u", "f", "m", "q", "t")


def _names_another(v: Unit) -> bool:
    """Can `v`, which opens a span clause, be another subject than the sentence's? Not where jieba tags it a function
    word (曾, 至, 虽然: an adverb, a conjunction, a preposition, a pronoun, a particle, a localizer, a numeral, a
    measure or a time word): such a clause goes on about the subject it left unsaid. A verb may name a step (生成 for
    检索), so verbs stay. A Latin word is a name."""
    if v.key.isascii():
        return True
    tags = pos_tags(v.shown)
    return not tags or not tags[0][1].startswith(_FUNCTION)


def _same_kind(m: Unit, v: Unit, whole: Reading) -> bool:
    """Two units of one kind and script, not written as aliases of each other in the chunk."""
    return m.kind == v.kind and script(m.key) == script(v.key) and not aliases(whole, m, v)


def _swapped(mine: list[Unit], at: Facing, evidence: Evidence, title: Reading | None,
             names_too: bool = True) -> Check | None:
    """A sibling of a unit of the sentence clause in span clause `at.g`; `names_too=False` (a clause found only
    because it holds one of the sentence's names) leaves out name-for-name swaps, which the best clause checks."""
    g, span, whole = at.g, at.span, at.whole
    missing = [u for u in mine if u.kind != "num" and not clause_has(span, g, u) and not topic(u, title)]
    extra = [v for v in g.units + g.inherited if v.kind != "num" and not any(same_unit(v, u) for u in mine)]
    rest = whole.low[: evidence.start + g.start] + " " + whole.low[evidence.start + g.end:]
    for m in missing:
        known = (m.key in read(rest).stems) if m.key.isascii() else (m.key in rest)
        v = _sibling(m, extra, at, names_too) if known else None
        if v is not None:
            where = span.text[g.start:g.end].strip()
            return _said_of(where, v, m)
    return None


def _sibling(m: Unit, extra: list[Unit], at: Facing, names_too: bool) -> Unit | None:
    """The first unit of the span clause that is a sibling of the sentence's `m` (a name for a name only with
    `names_too`)."""
    for v in extra:
        if not names_too and m.kind == "term" and v.kind == "term":
            continue
        if siblings(m, v, at):
            return v
    return None


def _said_of(where: str, v: Unit, m: Unit) -> Check:
    """The failed check: the span `where` says this of `v`, not of the sentence's `m`."""
    return Check(NAME, False, Msg(zh=f"证据“{where}”说的是 {v.shown}，不是 {m.shown}",
                 en=f"the evidence \"{where}\" says this of {v.shown}, not of {m.shown}"))


def has_word(r: Reading, a: int, b: int, word: str) -> bool:
    if word.isascii():
        return any(t == word or t.rstrip("s") == word for t in r.tokens_in(a, b))
    if len(word) == 1:  # 快 / 慢: the token itself, or a degree word made with it (越慢, 更快, 太大)
        return any(t == word or (len(t) <= 3 and t.endswith(word) and t[0] in "越更太很较过最偏") for t in r.tokens_in(a, b))
    return word in r.low[a:b]

"""A number and the term it is said of sit together in the span ("binding": b's 0.75 is not k1's 1.2 到 2.0), and the
clause-level helpers the swap and polarity checks share.
Not handled here: aligning the sentence to its span and the order the checks run in (rag/audit/support.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from rag.audit import fact_lexicon as lex
from rag.audit.checks.units import shown
from rag.audit.checks.verdict import Check, Claim
from rag.audit.fact_text import Clause, Reading, Unit
from rag.ingest.sentences import sentence_spans
from rag.messages import Msg


def clause_has(span: Reading, g: Clause, unit: Unit) -> bool:
    if unit.kind == "num":
        return any(v.key == unit.key for v in g.units if v.kind == "num")
    if any(v.key == unit.key for v in g.inherited):
        return True
    if unit.key.isascii():
        return any(v.key == unit.key for v in g.units) or unit.key in {t for t in span.tokens_in(g.start, g.end)}
    return unit.key in span.low[g.start:g.end]


NAME = "binding"


def check(claim: Claim) -> Check | None:
    """A number of the sentence and a term of the same clause must share a clause of the span too.

    It fails when nothing the sentence clause names shares a clause with the number in the span, and a term
    it names (k1, b, Adam) is in a clause with another number there; an English word ("default") only when
    every clause it is in holds another number."""
    s, span = claim.sentence, claim.span
    for c in s.clauses:
        found = _other_numbers_there(c, span) or _said_of_another(s, c, span)
        if found is not None:
            return found
    if any(u.kind == "num" for u in s.units) and any(v.kind == "num" for v in span.units):
        return Check(NAME, True, Msg(zh="数字和它所说的对象在证据里在一起", en="each number sits with what it is said of in the evidence"))
    return None  # no number in the sentence, or none in the evidence: nothing to bind (the numbers check says so)


def _other_numbers_there(c: Clause, span: Reading) -> Check | None:
    """The span clause the sentence clause is about holds numbers, and none of the sentence's."""
    mine = [u for u in c.units if u.kind == "num"]
    g, _ = best_clause(c, span)
    theirs = [v for v in g.units if v.kind == "num"] if g is not None else []
    if g is None or not mine or not theirs or any(clause_has(span, g, n) for n in mine):
        return None
    where = span.text[g.start:g.end].strip()
    return Check(NAME, False, Msg(zh=f"证据“{where}”这里的数字是 {shown(theirs)}，不是 {shown(mine)}",
                 en=f"the evidence \"{where}\" says {shown(theirs)} here, not {shown(mine)}"))


def _said_of_another(s: Reading, c: Clause, span: Reading) -> Check | None:
    """A number of the clause the span has, said there of something else than what the clause names, while a term
    the clause names sits with other numbers."""
    nums = [u for u in c.units if u.kind == "num" and span.found(u)]
    named = _named(s, c)
    for n in nums:
        homes_of = {m.key: [g for g in span.clauses if clause_has(span, g, m)] for m in named}
        if any(any(clause_has(span, g, n) for g in homes) for homes in homes_of.values()):
            continue  # one of the things the sentence names goes with this number: "RRF 中 k 通常取 60"
        for m in named:
            found = _bound_elsewhere(span, n, m, homes_of[m.key])
            if found is not None:
                return found
    return None


def _named(s: Reading, c: Clause) -> list[Unit]:
    """What the clause names (its terms; an English sentence's words too), a unit written after a number aside: "hours"
    is the number's unit, not what it is said of."""
    return [u for u in c.units + c.inherited if (u.kind == "term" or (u.kind == "word" and not s.zh))
            and u.shown.lower() not in lex.UNITS]


def _values(g: Clause, span: Reading) -> list[Unit]:
    """The numbers said in a clause; not a formula's ("max(0, x)")."""
    return [v for v in g.units if v.kind == "num" and not span.depth[v.start]]


def _bound_elsewhere(span: Reading, n: Unit, m: Unit, homes: list[Clause]) -> Check | None:
    """The term `m` goes with other numbers in the span (in every clause it is in, for an English word), so the
    number `n` is said of something else: the failed check, or None."""
    with_numbers = [g for g in homes if _values(g, span)]
    if not with_numbers or (m.kind == "word" and len(with_numbers) < len(homes)):
        return None
    theirs = [v for g in with_numbers for v in _values(g, span)]
    said_of = _said_of(span, n)
    about, about_en = shown(said_of), shown(said_of, ", ")
    return Check(NAME, False,
                 Msg(zh=f"证据中 {n.shown} 说的是 {about or '别的'}，不是 {m.shown}（{m.shown} 对应的是 {shown(theirs)}）",
                 en=f"in the evidence {n.shown} is said of {about_en or 'something else'}, not of {m.shown} "
                 f"({m.shown} goes with {shown(theirs, ', ')})"))


def _said_of(span: Reading, n: Unit) -> list[Unit]:
    """What the span says number `n` of: the names of the clauses that hold it, else their first two content units."""
    owner = [g for g in span.clauses if clause_has(span, g, n)]
    return [v for g in owner for v in g.units + g.inherited if v.kind == "term"] or \
        [v for g in owner for v in g.units if v.kind != "num"][:2]


_WEIGHT = {"term": 2, "num": 2, "word": 1}  # a name or a number says more about where a clause belongs


def best_clause(c: Clause, span: Reading) -> tuple[Clause | None, int]:
    """The span clause that shares the most with sentence clause `c`: names and numbers count double, and two
    units that follow each other in both ("重新 训练") once more; divided by the root of the clause's length."""
    units = c.units + c.inherited
    pairs = list(zip(c.units, c.units[1:]))
    best, score, count = None, 0.0, 0
    for g in span.clauses:
        hits = [u for u in units if clause_has(span, g, u)]
        keys = [v.key for v in g.units]
        runs = sum(1 for a, b in pairs if any(x == a.key and y == b.key for x, y in zip(keys, keys[1:])))
        size = len(set(keys)) or 1
        n = (sum(_WEIGHT[u.kind] for u in hits) + runs) / size ** 0.5  # a long clause shares more by chance
        if n > score + 1e-9:
            best, score, count = g, n, len(hits)
    needed = 2 if len(units) > 2 else 1
    return (best, count) if count >= needed else (None, 0)


def _content_neighbours(r: Reading, unit: Unit) -> tuple[str | None, str | None]:
    """The content units right before and after `unit` in its text (None at either end)."""
    keys = [u for u in r.units if u.kind != "num"]
    for i, u in enumerate(keys):
        if u.start == unit.start:
            return (keys[i - 1].key if i else None, keys[i + 1].key if i + 1 < len(keys) else None)
    return None, None


def aliases(whole: Reading, m: Unit, v: Unit) -> bool:
    """Does the chunk give one as the other's name in brackets: "双编码器（bi-encoder）", "MAE (mean absolute error)"?"""
    low = whole.low
    for x, y in ((m.key, v.key), (v.key, m.key)):
        i = low.find(x)
        while i >= 0:
            after = low[i + len(x): i + len(x) + 3].lstrip()
            if after[:1] in "（(" and y in low[i + len(x): i + len(x) + 40].split("）")[0].split(")")[0]:
                return True
            i = low.find(x, i + 1)
    return False


@dataclass(frozen=True)
class Facing:
    """Where a swap is looked for: clause `c` of the sentence `s`, set against clause `g` of the evidence span
    `span`, within the whole chunk `whole`."""

    s: Reading
    c: Clause
    span: Reading
    g: Clause
    whole: Reading


def siblings(m: Unit, v: Unit, at: Facing) -> bool:
    """Could `v` (in the span) stand where the sentence has `m`: two names, an opposite pair, two Chinese words
    with the same last character (three or more long: 编码器 / 解码器; two long with contrasting first ones:
    父块 / 子块), or two words that open clauses before the same head word, in the sentence and in the chunk."""
    if m.kind == "num" or v.kind == "num" or m.key == v.key or m.key in v.key or v.key in m.key:
        return False
    if aliases(at.whole, m, v):
        return False
    if m.kind == "term" and v.kind == "term":
        return True
    if opposites(m.key, v.key):
        return True
    if _same_ending(m.key, v.key):
        return True  # 编码器 / 解码器, 父块 / 子块, 上层 / 下层: one kind of thing, a different one
    return _open_before_same_head(m, v, at) or other_subject(m, v, at)


def _same_ending(x: str, y: str) -> bool:
    """Two Chinese words of one length with the same last character: three or more long, or two long with
    contrasting first ones (父块 / 子块)."""
    cjk = not x.isascii() and not y.isascii()
    return cjk and len(x) == len(y) and x[-1] == y[-1] and (
        len(x) >= 3 or (x[0] in lex.CONTRAST_FIRST and y[0] in lex.CONTRAST_FIRST))


def _open_before_same_head(m: Unit, v: Unit, at: Facing) -> bool:
    """批量[梯度下降] / 随机[梯度下降]: two words of one script opening a clause before the same head, in the sentence
    and in the chunk."""
    s, span, whole = at.s, at.span, at.whole
    _, head = _content_neighbours(s, m)
    _, theirs = _content_neighbours(span, v)
    return head is not None and head == theirs and script(m.key) == script(v.key) != "" \
        and all(opens(r, x, head) for r, x in ((s, m.key), (whole, m.key), (span, v.key)))


def opposites(x: str, y: str) -> bool:
    """Is (x, y) one of the lexicon's opposite pairs, either way round (增大 / 减小)?"""
    pairs = lex.OPPOSITES_ZH + lex.OPPOSITES_EN
    return (x, y) in pairs or (y, x) in pairs


def topic(u: Unit, title: Reading | None) -> bool:
    """Is `u` the one name in the chunk's title (RRF in "RRF 是怎么计算的？")? A title that names two
    ("BatchNorm 和 LayerNorm 有什么区别？") is about the difference, so neither is exempt from the swap check."""
    if title is None or u.kind != "term":
        return False
    names = {v.key for v in title.units if v.kind == "term"}
    return names == {u.key}


def script(word: str) -> str:
    if any("\u4e00" <= ch <= "\u9fff" for ch in word):
        return "zh"
    return "latin" if any(ch.isascii() and ch.isalpha() for ch in word) else ""


def other_subject(m: Unit, v: Unit, at: Facing) -> bool:
    """The span clause continues a sentence about `v` (BM25 …，擅长专有名词) where the sentence names `m`
    (向量检索擅长…), and `m` is the subject of a clause of its own elsewhere in the chunk, not in that sentence."""
    g, span, whole = at.g, at.span, at.whole
    if not any(u.key == v.key for u in g.inherited):
        return False
    there = whole.low.find(span.text[g.start:g.end].lower())
    own = [(a, b) for a, b in sentence_spans(whole.text) if a <= max(there, 0) < b]
    a, b = own[0] if own else (0, 0)
    if m.key in whole.low[a:b]:
        return False
    return any(cl.units and cl.units[0].key == m.key and not (a <= cl.start < b) for cl in whole.clauses)


def opens(r: Reading, word: str, head: str) -> bool:
    """Does some clause of `r` open with `word` followed by `head` (批量梯度…, 测试集…, "Dense search …"): a
    subject named by a modifier and a head, not a verb and its object ("…来模拟人类偏好")?"""
    for clause in r.clauses:
        keys = [u.key for u in clause.units if u.kind != "num"][:2]
        if keys == [word, head]:
            return True
    return False

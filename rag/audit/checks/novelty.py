"""What the sentence says that the chunk does not: a name the chunk never mentions ("new-term"), a claim whose parts sit
in different places of the chunk ("apart"), the coverage of what it adds beyond the question ("adds"), and a sentence
that asserts nothing: a question inside it, or a bare noun phrase ("no-claim").
Not handled here: aligning the sentence to its span and the order the checks run in (rag/audit/support.py).
"""

from __future__ import annotations

import re

import numpy as np

from rag.audit.checks.binding import best_clause, clause_has
from rag.audit.checks.numbers import shown
from rag.audit.checks.restates import own_units
from rag.audit.checks.units import asks, same_unit, unit_credit
from rag.audit.checks.verdict import Check, Evidence
from rag.audit.fact_text import Reading, Unit, read
from rag.ingest.sentences import sentence_spans
from rag.messages import Msg


def in_scope(scope: list[str], other: Reading) -> bool:
    """A negation counts when what it negates is also on the other side (or it negates nothing named)."""
    if not scope:
        return True
    return any((k in other.stems) if k.isascii() else (k in other.low) for k in scope if k)


def new_terms(s: Reading, whole: Reading) -> Check | None:
    new = [u for u in s.units if u.kind == "term" and not whole.found(u)]
    if not new:
        return None
    return Check("new-term", False, Msg(zh=f"资料里没有提到 {shown(new)}", en=f"the chunk never mentions {shown(new, ', ')}"))


def apart(s: Reading, span: Reading, whole: Reading, evidence: Evidence, title: Reading | None) -> Check | None:
    """A name the sentence says something of, where the chunk names it only apart from what is said: "k=60 是 BM25
    的平滑常数" against "k 是平滑常数，通常取 60。例如某文档在 BM25 中排第 1" stitches the chunk's words into a claim
    it never makes. A name goes with what is said when it is in the same sentence of the chunk, or opens an earlier
    sentence (the subject the chunk goes on about: "HNSW 是… 。参数 M 控制…"), or is in the chunk's title."""
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
            return Check("apart", False, Msg(zh=f"证据在“{said}”里没有提到 {u.shown}：资料没有把它们放在一起说",
                         en=f"the evidence says \"{said}\" without {u.shown}: the chunk never says the two together"))
    return None


def adds(s: Reading, span: Reading, title: Reading | None, question: str, *, beyond_question: bool,
         supported: float) -> tuple[Check | None, float]:
    """How much of what the sentence says beyond the question the span covers, as a check, and that share (1.0, and
    no check, without a question or with nothing beyond it). The question's own words are in any chunk on its topic,
    so they lift the coverage of a sentence whatever it answers: "RRF 属于混合检索中的分数加权融合方法。" to "RRF 属于
    混合检索中的哪一类融合方法？" covers 71% of its words with faq_030, which never says 加权, the word that answers (RRF
    fuses by rank). The share is read against the same thresholds as the coverage (weak, unsupported below them);
    no new threshold. The question's words still count in the coverage: they are part of what the sentence claims."""
    own = own_units(s, question) if question.strip() and beyond_question else []
    if not own:
        return None, 1.0
    credit = [unit_credit(u, span, title) for u in own]
    share = sum(credit) / len(own)
    if share >= supported:
        return Check("adds", True, Msg(zh=f"这句话在问题之外说的内容，证据覆盖了 {share:.0%}",
                     en=f"the evidence covers {share:.0%} of what the sentence says beyond the question")), share
    missing = [u for u, c in zip(own, credit) if c < 1.0]
    return Check("adds", False, Msg(zh=f"这句话说了 {shown(missing)}，证据里没有（问题之外的内容只覆盖了 {share:.0%}）",
                 en=f"the sentence says {shown(missing, ', ')}, which the evidence does not (it covers {share:.0%} of what the "
                 "sentence adds to the question)")), share


_ASKING = re.compile(r"为什么|为何|是不是|能不能|是否|怎么会|吗[，,]|呢[，,。]|[?？]")


def no_claim(claim: str) -> Check | None:
    """A sentence that asserts nothing: one that holds a question ("数组的下标为什么是从 0 开始数，而不是从 1 开始呢，因为从 1
    开始计数会更自然": the question written back, and a clause of the chunk after it), or, in Chinese, a bare noun
    phrase "X 的 Y" with no verb before its 的 and no 是 or 有 ("快速排序的分治策略。" names a topic). Such a sentence is
    not supported by any chunk, whatever words it shares with one. (jieba's part-of-speech tags are too rough to call
    every sentence without a tagged verb a noun phrase: "BM25 里 b 常用 0.75" has none.)"""
    if _ASKING.search(claim.rstrip("。.！! ")):
        return Check("no-claim", False, Msg(zh="这句话里有一个问句：把问题写回来了，不是它自己的陈述",
                                            en="the sentence holds a question: it writes the question back, not a claim of its own"))
    if not _CJK_TEXT.search(claim):
        return None
    if not _noun_phrase(claim):
        return None
    return Check("no-claim", False, Msg(zh="这句话只是一个名词短语（“甲的乙”），没有陈述事实",
                                        en="the sentence is a bare noun phrase (\"X 的 Y\"): it states nothing"))


def _noun_phrase(claim: str) -> bool:
    """"快速排序的分治策略。": X 的 Y with no predicate before the 的, nothing said of it (jieba tags 分治 a verb)."""
    import jieba.posseg as posseg

    tagged = [(p.word, p.flag) for p in posseg.cut(claim.rstrip("。.！! ")) if p.word.strip()]
    last_de = max((i for i, (w, _) in enumerate(tagged) if w == "的"), default=-1)
    after = [f for _, f in tagged[last_de + 1:]]
    before = [f for _, f in tagged[:last_de]]
    return (last_de >= 0 and bool(after) and after[-1].startswith("n") and len(after) <= 2
            and not any(f.startswith("v") for f in before) and not re.search(r"[，,；;]|是|有", claim))


_CJK_TEXT = re.compile("[\u4e00-\u9fff]{2,}")


def cosine(embedder, claim: str, span: str) -> float | None:
    a = np.asarray(embedder.embed_transient([claim]), dtype=np.float32)[0]
    b = np.asarray(embedder.embed_documents([span]), dtype=np.float32)[0]
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b / norm) if norm else None

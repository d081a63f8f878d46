"""A sentence that asserts nothing ("no-claim"): a question inside it, or a bare noun phrase.
Not handled here: a sentence that only restates the question (restates.py), the order the checks run in
(rag/audit/support.py).
"""

from __future__ import annotations

import re

from rag.audit.checks.verdict import Check, Claim
from rag.audit.words import pos_tags
from rag.messages import Msg

NAME = "no-claim"


_ASKING = re.compile(r"为什么|为何|是不是|能不能|是否|怎么会|吗[，,]|呢[，,。]|[?？]")


def check(at: Claim) -> Check | None:
    """A sentence that asserts nothing: one that holds a question ("数组的下标为什么是从 0 开始数，而不是从 1 开始呢，因为从 1
    开始计数会更自然": the question written back, and a clause of the chunk after it), or, in Chinese, a bare noun
    phrase "X 的 Y" with no verb before its 的 and no 是 or 有 ("快速排序的分治策略。" names a topic). Such a sentence is
    not supported by any chunk, whatever words it shares with one. (jieba's part-of-speech tags are too rough to call
    every sentence without a tagged verb a noun phrase: "BM25 里 b 常用 0.75" has none.) Not read where the audit
    does not read what a sentence adds (rebind's checker: is it stated at all?)."""
    if not at.beyond_question:
        return None
    claim = at.text
    if _ASKING.search(claim.rstrip("。.！! ")):
        return Check(NAME, False, Msg(zh="这句话里有一个问句：把问题写回来了，不是它自己的陈述",
                                            en="the sentence holds a question: it writes the question back, not a claim of its own"))
    if not _CJK_TEXT.search(claim):
        return None
    if not _noun_phrase(claim):
        return None
    return Check(NAME, False, Msg(zh="这句话只是一个名词短语（“甲的乙”），没有陈述事实",
                                        en="the sentence is a bare noun phrase (\"X 的 Y\"): it states nothing"))


def _noun_phrase(claim: str) -> bool:
    """"快速排序的分治策略。": X 的 Y with no predicate before the 的, nothing said of it (jieba tags 分治 a verb)."""
    tagged = pos_tags(claim.rstrip("。.！! "))
    last_de = max((i for i, (w, _) in enumerate(tagged) if w == "的"), default=-1)
    after = [f for _, f in tagged[last_de + 1:]]
    before = [f for _, f in tagged[:last_de]]
    return (last_de >= 0 and bool(after) and after[-1].startswith("n") and len(after) <= 2
            and not any(f.startswith("v") for f in before) and not re.search(r"[，,；;]|是|有", claim))


_CJK_TEXT = re.compile("[\u4e00-\u9fff]{2,}")

"""Is a model's answer an answer, or garbled? A small model sometimes writes a list of refs ("资料编号：faq_030,
faq_029, faq_028, faq_030, …" until its token limit), a bare "1.", or one phrase over and over.

- `RepetitionGuard` watches an answer as it streams and says stop as soon as its tail repeats: the same stretch of
  REPEAT_CHARS or more characters REPEAT_TIMES times in a row, or REF_RUN refs in a row with no words between them.
- `garbled(answer)` says why a finished answer is not one: nothing but refs and labels, a bare list marker or
  bullet, a bare number, or a repeated stretch (the guard's rule, over the whole answer). A bare number is not
  shown as the model's answer even where the question asks for one: with nothing it is said of, the audit can only
  find the number somewhere in the chunk, so "11次。" to "托马斯·戴维斯有多少次迫使掉球？" (xquad_zh; the passage says
  四次, and 11 is another player's) would read as supported. Each case says what it is: a number is not "only refs".
The pipeline stops a generation the guard flags, and replaces a garbled answer, visibly, with the extractive
stand-in's picks over the same contexts (pipeline._generate); the trace keeps what the model wrote. The model's
other writing is checked the same way, each time with a note: a garbled HyDE passage is not searched with and a
garbled multi-query rewording is left out (pipeline._hyde, pipeline._multi_query; both stream through the guard, so a
loop stops there and not at the token limit); a garbled Self-RAG rewrite or agent query is replaced by the question,
and a garbled graph-global point is left out (rag/loops/).
Not handled here: whether a readable answer is right (the audit: support.py).
"""

from __future__ import annotations

import re

from rag.messages import Msg

REPEAT_CHARS = 6  # a repeated stretch at least this long (CJK characters count one each) ...
REPEAT_TIMES = 3  # ... this many times in a row is a loop, not an answer
REF_RUN = 4  # this many bare refs in a row, nothing but separators between them, is a list of refs
_REF = r"\[?\s*[A-Za-z][\w.-]*[_#-]\d+\s*\]?"
# bare ids in a row ("faq_030, faq_029, …"): a sentence citing several refs writes them in brackets, "[faq_030][faq_029]"
_REF_RUN = re.compile(rf"(?:(?<![\[\w])[A-Za-z][\w.-]*[_#-]\d+(?![\]\w])\s*[,，、;；]?\s*){{{REF_RUN},}}")
_LOOP = re.compile(rf"(.{{{REPEAT_CHARS},80}}?)\1{{{REPEAT_TIMES - 1},}}", re.S)
_BARE = re.compile(r"^\s*(?:\d+\s*[.、)）]?|[-*•·]|[（(]?\d+[)）])\s*$")
_LIST_MARK = re.compile(r"^\s*\d\s*[.、)）]\s*$")  # "1." "2、": a list's first mark, not a number stated
_LABELS = re.compile(r"资料编号|资料|编号|来源|参考|references?|sources?|refs?|citations?", re.I)


class RepetitionGuard:
    """Feed it the answer's deltas; `feed` returns why to stop (a Msg) once the text loops, else None."""

    def __init__(self) -> None:
        self.text = ""

    def feed(self, delta: str) -> Msg | None:
        self.text += delta
        tail = self.text[-400:]
        return _looping(tail)


def _looping(text: str) -> Msg | None:
    squeezed = re.sub(r"\s+", "", text)
    m = _LOOP.search(squeezed)
    if m and len(m.group(0)) >= REPEAT_TIMES * REPEAT_CHARS:
        piece = m.group(1)[:30]
        return Msg(en=f"it repeats '{piece}' {len(m.group(0)) // len(m.group(1))} times in a row",
                   zh=f"“{piece}”连续重复了 {len(m.group(0)) // len(m.group(1))} 次")
    if _REF_RUN.search(text):
        return Msg(en=f"it lists {REF_RUN} or more refs in a row instead of saying anything",
                   zh=f"连续列出 {REF_RUN} 个以上的资料编号，没有说任何内容")
    return None


def states_nothing(claim: str) -> bool:
    """True when a sentence's claim (citations and a leading list number already removed: citations.sentence_claims)
    holds nothing but bare refs and labels: "资料编号：DEV_27。", "Super_Bowl_50。", or "" (a sentence that was only
    "1."). "4 到 64。" and "不。" state something."""
    return not re.search(r"[\w\u4e00-\u9fff]", _LABELS.sub("", re.sub(_REF, "", claim or "")))


def garbled(answer: str) -> Msg | None:
    """Why `answer` is not an answer (see the module docstring), or None when it reads as one."""
    text = (answer or "").strip()
    if not text:
        return None  # nothing written: the caller says so in its own words
    if _BARE.match(text):
        return Msg(en=f"it is only '{text[:10]}', a number or a list marker", zh=f"只有“{text[:10]}”：一个序号或列表符号")
    words = _LABELS.sub("", re.sub(_REF, "", text))
    if not re.search(r"[\w\u4e00-\u9fff]{2,}", re.sub(r"\d", "", words)):
        if not re.search(r"\d", words):
            return Msg(en="it holds only refs and labels, no statement", zh="只有资料编号和标签，没有陈述任何内容")
        shown = re.sub(r"\s+", " ", words).strip()[:20]
        if _LIST_MARK.match(words):
            return Msg(en=f"it is only '{shown}', a list marker", zh=f"只有“{shown}”：一个列表序号")
        number = shown.rstrip("。.！!，,；; ")
        return Msg(en=f"it is only a number ('{number}') with nothing it is said of, which the audit cannot check",
                   zh=f"只有一个数字（“{number}”），没有说它指什么，审计无从核对")
    return _looping(text)

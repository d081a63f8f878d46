"""The words by which a question asks for a kind of answer: one table, read two ways.

| kind | asked by (zh / en) |
|---|---|
| formula | 怎么算, 如何计算, 公式是, 什么公式, 怎么求 / how is … computed or calculated; formula |
| number | 多少, 多大, 多快, 多慢, 多远, 几 before a measure word (几个, 几月, 第几部), 取值, 填几 / how many (much, fast, slow, far, old, often), what value, what is the time complexity |
| list | 有哪些, 哪几 before a measure word (哪几种, 哪几步), 哪些, 分别是什么 / what are the, which kinds (types, ways, steps, methods), "List …" |
| comparison | 区别, 不同 (not 不同意 "disagree", nor 不同的 before a noun: 不同的分值, 不同的物种), 对比, 相比, 哪个更, 哪个好, 还是 / difference, differ, compare, versus, better, worse |
| reason | 为什么 (not 称为什么, 命名为什么: asked.py reads those "called what"), 为何, 原因, 怎么会 / why, what causes, how come, reason |

`asked.asked_slot` reads all five in the asking clause of a question (the slot an answer must fill: the audit's slot
check, the selector's "fills" signal, the answer's token budget); `answer_form.question_form` reads the first three
over the whole question (the form the stand-in prefers among sentences about equally relevant). Until 2026-12-06
each kept its own copy, and the two had drifted (公式 alone, 统计 and "how is … scored" asked for a formula in one;
多快, 几轮, 分别是什么 asked for a number or a list in the other). Merged by what the words ask: computing, or the
formula itself (公式是, 什么公式), asks for a formula; a formula named as the topic does not ("RRF 公式里的 k 是什么意思"
asks what k means), nor does counting or scoring, which asks how something is done (统计, scored, measured). The
cues are words of questions, not of any corpus, and are read on simplified text (callers fold a traditional
question first). "List" counts only as the verb that opens a sentence: "a linked list" asks for no list.
Not handled here: what fills a slot (asked.py), what form a sentence has (answer_form.py).
"""

from __future__ import annotations

import re

# Chinese measure words and units a count or a date is given in: 几 before one asks for a number (几月, 几位, 第几部), and a
# numeral before one gives it (asked.fills); not 乎, 内, 何 (几乎 almost, 几内亚, 几何 geometry)
MEASURES = "个种类次步层倍轮项位条行列维月天年点级张分枚名号部集岁届代座班所股门家本周场首季局支只件台辆架艘颗篇章节页句人期版"

ASKS = {
    "formula": re.compile(r"怎么算|怎样算|如何算|怎么计算|怎样计算|如何计算|计算公式|公式是|公式为|什么公式|哪个公式|公式怎么|公式如何|怎么求|如何求|"
                          r"\bhow (?:is|are|do|does|to)\b.*\b(?:comput|calculat)|\bformula\b", re.I),
    "number": re.compile(r"多少|多大|多长|多久|多高|多快|多小|多短|多低|多慢|多远|几[" + MEASURES + r"]|取值|取几|"
                         r"设几|取多|设多|填几|填多|"
                         r"\bhow (?:many|much|long|big|large|fast|small|short|high|low|slow|far|old|often)\b|\bwhat value\b|"
                         r"\bwhat is the (?:time|space) complexity\b",
                         re.I),
    "list": re.compile(r"有哪些|有哪几|哪几[" + MEASURES + r"]|哪些|分别是什么|\bwhat are the\b|"
                       r"\bwhich\b.*\b(?:kinds|types|ways|steps|methods)\b|(?:^|[.?!;:]\s*)list\b", re.I),
    "comparison": re.compile(r"区别|不同(?!意)(?!的(?!地方|是|点))|差别|差异|对比|相比|比较|有何异同|异同|哪个更|哪种更|还是|哪(?:个|种|一个|一种)(?:[^，,。？?！!；;]{0,8}[更最])?好(?!处)|"
                             r"\bdifference\b|\bdiffer\b|\bcompare|\bversus\b|\bvs\.?\b|\bbetter\b|\bworse\b", re.I),
    "reason": re.compile(r"为什么|为何|原因|怎么会|何以|干嘛|凭什么|\bwhy\b|\bwhat causes\b|\bhow come\b|\breason", re.I),
}

# 几 before a measure word asks "how many", except where it means "a few": after a verb of offering (推荐几部好看的电影) or
# where another word of the text asks (那几年什么帮派最大, 同一法人的几家公司算不算关联企业)
_JI = re.compile(r"几[" + MEASURES + r"]")
_A_FEW = re.compile(r"(?:推荐|介绍|列举|列出|举出|举|说出|给出|写出|找出)" + _JI.pattern)
_OTHER_ASKING = re.compile(r"什么|啥|谁|哪|吗|怎么|怎样|如何|为什么|为何|是否|是不是|算不算|能不能|可不可以|有没有|要不要")


def asks(kind: str, text: str) -> bool:
    """Does `text` (simplified) ask for `kind` by ASKS's words, 几 read as "a few" where it means that?"""
    found = [m.group(0) for m in ASKS[kind].finditer(text)]
    if kind != "number" or not found or not all(_JI.fullmatch(f) for f in found):
        return bool(found)
    return not (_A_FEW.search(text) or _OTHER_ASKING.search(_JI.sub("", text)))

"""A sentence that states no fact of its own ("restates"): a lead-in only ("根据资料"), a question of the chunk copied,
a question, or only the question's own words.
A copy of the evidence (verbatim.py) and an echo of the prompt (echo.py) are their own checks.
Not handled here: aligning the sentence to its span and the order the checks run in (rag/audit/support.py).
"""

from __future__ import annotations

import re

from rag.audit import fact_lexicon as lex
from rag.audit.answer_form import question_parts_of
from rag.audit.checks.units import asks
from rag.audit.checks.verdict import Check, Claim
from rag.audit.fact_text import Reading, Unit, read
from rag.index.tokenize import load_stopwords
from rag.messages import Msg
from rag.models.script import fold_script

NAME = "restates"

COPIED_QUESTION = Check(NAME, False, Msg(zh="抄的是资料里的问句（如条目标题），没有陈述事实",
                        en="copies a question of the chunk (its title): it states no fact"))


LEAD_IN_ONLY = Check(NAME, False, Msg(zh="只是套话（如“根据资料”），没有陈述事实",
                     en="only a lead-in (\"according to the context\"): it states no fact"))


# Lead-ins that say where an answer comes from and nothing else: "根据资料中的原词、数字和公式，", "According to the
# context, ". Only a lead-in: the sentence states no fact; with more after it, what follows is checked.
_LEAD_IN = re.compile(
    r"^\s*(?:(?:根据|依据|按照|基于|参考|结合)(?:所给|提供的|给定的|上述|以上|上面的|检索到的)?(?:资料|上下文|文档|材料|内容|参考资料|信息)"
    r"[^，,。；;：:]{0,24}[，,：:]?|(?:according to|based on|from|as stated in) the (?:context|contexts|documents?|"
    r"materials?|sources?|passages?)[^,;:.]{0,40}[,:]?)\s*", re.I)


def strip_lead_in(claim: str) -> str:
    """`claim` without a lead-in that only says where the answer comes from ("" when that is all it is)."""
    m = _LEAD_IN.match(claim)
    return claim[m.end():].strip() if m else claim


def restates_question(claim: str, question: str) -> bool:
    """Is `claim` a question, or are all its content words the question's own (brackets that only gloss aside)?
    Stricter than the audit's restates check, which also allows one new word ("RRF 是一种融合方法" is labelled a
    restatement but kept by this): the answer page sets aside what this says, so it must be sure. To a yes/no
    question a restatement is the answer ("是的，向量归一化后，点积和 cosine 是一回事。" to "…是一回事吗"), and a reply
    with no content word at all ("是的。") is left to the audit."""
    s, question = read(fold_script(claim)), fold_script(question)  # either may be written in traditional
    if not s.units or not question.strip() or yes_no(question):
        return False
    return asks(s.text) or not own_units(s, question)


_YES_NO = re.compile(r"[吗嘛][\s？?。]*$|是否|是不是|能不能|可不可以|会不会|有没有|要不要|需不需要|对不对|^\s*(is|are|can|could|does|do|"
                     r"did|should|will|would|was|were|has|have|may)\b", re.IGNORECASE)


def yes_no(question: str) -> bool:
    """Does the question ask yes or no ("…是一回事吗", "可不可以…", "Is …?")? Its caller reads a traditional question
    as simplified first (restates_question). A question that asks two things is yes/no only when both parts are:
    "HNSW 查询时用哪个参数控制候选队列大小？数据只有几千条时需要专门的向量数据库吗？" asks for a name first, and the
    0.5B's "HNSW 查询时用哪个参数控制候选队列大小，数据只有几千条时需要专门的向量数据库吗。" answers neither part."""
    parts = question_parts_of(question.strip())
    return bool(parts) and all(_YES_NO.search(p.strip()) for p in parts)


def own_units(s: Reading, question: str) -> list[Unit]:
    """The sentence's content units the question does not hold, generic words and glosses in brackets aside."""
    q = read(question)
    return [u for u in s.units if not q.found(u) and not all_generic(u.key) and not s.depth[u.start]]


def check(claim: Claim) -> Check | None:
    return restates(claim.sentence, claim.question)


def restates(s: Reading, question: str) -> Check | None:
    """Every content unit of the sentence is the question's, but at most one new word: it states no fact. A word in
    brackets only glosses the one before it ("RRF（Reciprocal Rank Fusion，倒数排名融合）"): "RRF 是通过 RRF（…）来计算的"
    names RRF's full name and says nothing of how it is computed. A question asks, it states nothing."""
    if asks(s.text):
        return Check(NAME, False, Msg(zh="这句是问句，没有陈述事实", en="it is a question: it states no fact"))
    if not question.strip():
        return None
    own = own_units(s, question)
    shared = len(s.units) - len(own)
    restated = not own or (len(own) == 1 and own[0].kind == "word" and shared >= len(s.units) / 2)
    if not restated:
        return Check(NAME, True, Msg(zh="这句话说出了问题之外的内容", en="the sentence says more than the question"))
    if own:  # one word more than the question: mostly a restatement, and the word alone is not shown to be the answer
        word = own[0].shown
        return Check(NAME, False, Msg(
            zh=f"这句话只在问题的原词上多了一个词（“{word}”）：基本是在复述问题，审计无法确认这个词就是资料给出的答案",
            en=f"besides the question's own words it adds one word (\"{word}\"): mostly a restatement, and the audit "
               "cannot tell that this word is the chunk's answer"))
    return Check(NAME, False, Msg(zh="这句话只是在复述问题，没有陈述事实", en="the sentence only restates the question: it states no fact"))


def all_generic(word: str) -> bool:
    """"值来" (jieba's cut of 值来计算): every character a generic word or a stop word: no information."""
    stop = load_stopwords()
    return not word.isascii() and all(ch in lex.GENERIC_ZH or ch in stop for ch in word)

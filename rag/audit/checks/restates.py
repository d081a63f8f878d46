"""A sentence that states no fact of its own: copied verbatim from the evidence, a lead-in ("根据资料"), an echo of the
prompt's rules, or only the question's own words ("restates").
Not handled here: aligning the sentence to its span and the order the checks run in (rag/audit/support.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rag.audit import fact_lexicon as lex
from rag.audit.answer_form import question_parts_of
from rag.audit.checks.units import asks
from rag.audit.checks.verdict import Check
from rag.audit.fact_text import Reading, Unit, read
from rag.audit.shape import states_nothing
from rag.index.tokenize import load_stopwords
from rag.messages import Msg
from rag.models.script import fold_script

VERBATIM = Check("verbatim", True, Msg(zh="逐字抄自证据（引号、省略号和空白之外一字不差）",
                 en="copied word for word from the evidence (but for quote marks, ellipses and spaces)"))


COPIED_QUESTION = Check("restates", False, Msg(zh="抄的是资料里的问句（如条目标题），没有陈述事实",
                        en="copies a question of the chunk (its title): it states no fact"))


LEAD_IN_ONLY = Check("restates", False, Msg(zh="只是套话（如“根据资料”），没有陈述事实",
                     en="only a lead-in (\"according to the context\"): it states no fact"))


_ELLIPSIS = re.compile(r"…+|\.{3,}|⋯+")


_QUOTES = "「」『』“”‘’\"'《》"


_WIDTH = str.maketrans("，。；：！？（）［］【】％＋－＝／", ",.;:!?()[][]%+-=/")


MIN_COPY = 8  # characters of a copied piece (after normalising) for it to count as a copy, not a phrase


# Lead-ins that say where an answer comes from and nothing else: "根据资料中的原词、数字和公式，", "According to the
# context, ". Only a lead-in: the sentence states no fact; with more after it, what follows is checked.
_LEAD_IN = re.compile(
    r"^\s*(?:(?:根据|依据|按照|基于|参考|结合)(?:所给|提供的|给定的|上述|以上|上面的|检索到的)?(?:资料|上下文|文档|材料|内容|参考资料|信息)"
    r"[^，,。；;：:]{0,24}[，,：:]?|(?:according to|based on|from|as stated in) the (?:context|contexts|documents?|"
    r"materials?|sources?|passages?)[^,;:.]{0,40}[,:]?)\s*", re.I)


def _flat(text: str) -> str:
    """Text for a verbatim comparison: no spaces or quote marks, full-width punctuation as ASCII, lower case, traditional
    Chinese read as simplified (a copy in the other script is a copy)."""
    text = re.sub(r"\n+", ".", fold_script(text).translate(_WIDTH).lower())  # a line break ends a heading or a line: a boundary
    return "".join(ch for ch in text if not ch.isspace() and ch not in _QUOTES)


def copied_from(claim: str, chunk: str) -> bool:
    """Is `claim` the chunk's own words: each piece between ellipses (…) a stretch of the chunk, and the copied
    pieces MIN_COPY characters at least? Quote marks, spaces and the width of punctuation do not count."""
    pieces = [_flat(p).strip(",.;:!?、") for p in _ELLIPSIS.split(claim)]  # the audit strips citations first
    pieces = [p for p in pieces if p]
    if not pieces or sum(map(len, pieces)) < MIN_COPY:
        return False
    text = _flat(chunk)
    return all(_clause_copy(p, text) for p in pieces)


_CLAUSES = re.compile(r"[,;:.!?、…]+")


def echoes_prompt(claim: str, rules: str, asked: Sequence[str] = ()) -> bool:
    """Does `claim` repeat the prompt instead of answering: a clause of it copied from the rules ("问是什么就给出定义"),
    or every clause copied from a context's own question (an FAQ title written with 。 for ？: "知识库内容更新后，RAG
    系统需要做什么。")? Clauses of MIN_COPY characters or more count; a shorter one is a phrase anyone may write.
    A clause that is only a label ("资料：提示词工程有哪些实用技巧。") is no content of its own, and the rules' numbers
    read the same in either script ("第1句话直接回答问题" copies the rule "第一句话直接回答问题")."""
    clauses = [c for c in _CLAUSES.split(_numerals(_flat(claim))) if c and not states_nothing(c)]
    long = [c for c in clauses if len(c) >= MIN_COPY]
    flat_rules = _numerals(_flat(rules)) if rules.strip() else ""
    if flat_rules and any(_clause_copy(c, flat_rules) for c in long):
        return True
    flat_asked = [_numerals(_flat(q)) for q in asked]
    return bool(long) and all(any(_clause_copy(c, q) for q in flat_asked) for c in clauses)


_NUMERALS = str.maketrans("〇一二三四五六七八九", "0123456789")


def _numerals(text: str) -> str:
    """Chinese numerals as digits, for comparing a copy with what it copies ("第一" and "第1" alike)."""
    return text.translate(_NUMERALS)


def _clause_copy(piece: str, text: str) -> bool:
    """`piece` occurs in `text` from a clause's start to a clause's end: "叶子节点只存键" inside "非叶子节点只存键" is
    not the chunk's claim (it drops the 非), nor is "可以用上" inside "可以用上索引"."""
    i = text.find(piece)
    while i >= 0:
        before = text[i - 1] if i else ","
        after = text[i + len(piece)] if i + len(piece) < len(text) else "."
        if not before.isalnum() and not after.isalnum():
            return True
        i = text.find(piece, i + 1)
    return False


def strip_lead_in(claim: str) -> str:
    """`claim` without a lead-in that only says where the answer comes from ("" when that is all it is)."""
    m = _LEAD_IN.match(claim)
    return claim[m.end():].strip() if m else claim


def echoes(s: Reading, question: str, instructions: str) -> Check | None:
    """A sentence whose every content word is the prompt's rules' (and the question's): it repeats the prompt."""
    if not instructions.strip() or not s.units or any(u.kind == "num" for u in s.units):
        return None  # a number is content (the rules' own numbers are list markers)
    rules = read(f"{question}\n{instructions}")
    if all(rules.found(u) or all_generic(u.key) for u in s.units) and not all(read(question).found(u) for u in s.units):
        return Check("echo", False, Msg(zh="这句话只是在复述提示词里的要求，没有陈述事实",
                     en="the sentence only repeats the prompt's instructions: it states no fact"))
    return None


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


def restates(s: Reading, question: str) -> Check | None:
    """Every content unit of the sentence is the question's, but at most one new word: it states no fact. A word in
    brackets only glosses the one before it ("RRF（Reciprocal Rank Fusion，倒数排名融合）"): "RRF 是通过 RRF（…）来计算的"
    names RRF's full name and says nothing of how it is computed. A question asks, it states nothing."""
    if asks(s.text):
        return Check("restates", False, Msg(zh="这句是问句，没有陈述事实", en="it is a question: it states no fact"))
    if not question.strip():
        return None
    own = own_units(s, question)
    shared = len(s.units) - len(own)
    restated = not own or (len(own) == 1 and own[0].kind == "word" and shared >= len(s.units) / 2)
    if not restated:
        return Check("restates", True, Msg(zh="这句话说出了问题之外的内容", en="the sentence says more than the question"))
    return Check("restates", False, Msg(zh="这句话只是在复述问题，没有陈述事实", en="the sentence only restates the question: it states no fact"))


def all_generic(word: str) -> bool:
    """"值来" (jieba's cut of 值来计算): every character a generic word or a stop word: no information."""
    stop = load_stopwords()
    return not word.isascii() and all(ch in lex.GENERIC_ZH or ch in stop for ch in word)

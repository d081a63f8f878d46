"""A sentence that only repeats the prompt ("echo"): its rules, or a context's own question, copied instead of an
answer. The audit looks for it before aligning the sentence (rag/audit/support.py); fill-in sets such sentences aside
(echoes_prompt).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rag.audit.checks.restates import all_generic
from rag.audit.checks.verbatim import MIN_COPY, clause_copy, flat
from rag.audit.checks.verdict import Check
from rag.audit.fact_text import Reading, read
from rag.audit.shape import states_nothing
from rag.messages import Msg

NAME = "echo"


_CLAUSES = re.compile(r"[,;:.!?、…]+")


def echoes_prompt(claim: str, rules: str, asked: Sequence[str] = ()) -> bool:
    """Does `claim` repeat the prompt instead of answering: a clause of it copied from the rules ("问是什么就给出定义"),
    or every clause copied from a context's own question (an FAQ title written with 。 for ？: "知识库内容更新后，RAG
    系统需要做什么。")? Clauses of MIN_COPY characters or more count; a shorter one is a phrase anyone may write.
    A clause that is only a label ("资料：提示词工程有哪些实用技巧。") is no content of its own, and the rules' numbers
    read the same in either script ("第1句话直接回答问题" copies the rule "第一句话直接回答问题")."""
    clauses = [c for c in _CLAUSES.split(_numerals(flat(claim))) if c and not states_nothing(c)]
    long = [c for c in clauses if len(c) >= MIN_COPY]
    flat_rules = _numerals(flat(rules)) if rules.strip() else ""
    if flat_rules and any(clause_copy(c, flat_rules) for c in long):
        return True
    flat_asked = [_numerals(flat(q)) for q in asked]
    return bool(long) and all(any(clause_copy(c, q) for q in flat_asked) for c in clauses)


_NUMERALS = str.maketrans("〇一二三四五六七八九", "0123456789")


def _numerals(text: str) -> str:
    """Chinese numerals as digits, for comparing a copy with what it copies ("第一" and "第1" alike)."""
    return text.translate(_NUMERALS)


def echoes(s: Reading, question: str, instructions: str) -> Check | None:
    """A sentence whose every content word is the prompt's rules' (and the question's): it repeats the prompt."""
    if not instructions.strip() or not s.units or any(u.kind == "num" for u in s.units):
        return None  # a number is content (the rules' own numbers are list markers)
    rules = read(f"{question}\n{instructions}")
    if all(rules.found(u) or all_generic(u.key) for u in s.units) and not all(read(question).found(u) for u in s.units):
        return Check(NAME, False, Msg(zh="这句话只是在复述提示词里的要求，没有陈述事实",
                     en="the sentence only repeats the prompt's instructions: it states no fact"))
    return None

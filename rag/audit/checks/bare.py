"""A bare answer ("bare"): a phrase with no predicate (a name, a number, a list of them) states something only as the
answer to the question, so the chunk supports it only where the chunk says it of what the question asks.

"日本歷史。" answered "長崎三福寺包括福濟寺、興福寺以及哪一個?": the chunk holds 日本歷史 ("…是日本歷史最古老的現存木造洋館"),
so every word of the phrase was found, and the audit called it supported. A phrase is the question's answer where the
chunk's sentence that holds it is the chunk's sentence about the question: no other sentence of the chunk holds more
of the question's words (its telling ones, words.telling: a Chinese word of two characters or more, or a Latin word), and it holds
one at least. Chosen on public questions before any evaluation set was read (docs/audit.md, "Bare answers"): on the
held-apart questions of the three Chinese training sets, the gold answer written as a bare claim was called supported
90% of the time and another phrase of its passage 95%; with this check 78% and 27%.
Read in Chinese only: "bare" is told by jieba's part-of-speech tags (no verb, adjective, adverb or preposition, no
是, 有 or 为), and no tagger here reads English that way. Not read where the audit does not read what a sentence adds
(rebind's checker: is it stated at all?), nor without a question.
Not handled here: a bare "X 的 Y" noun phrase, which states nothing even with a question (no_claim.py); aligning the
sentence to its span and the order the checks run in (rag/audit/support.py).
"""

from __future__ import annotations

import re

from rag.audit.asked import question_words
from rag.audit.checks.verbatim import flat
from rag.audit.checks.verdict import Check, Claim
from rag.audit.words import pos_tags, telling, terms_found
from rag.ingest.sentences import sentence_spans
from rag.messages import Msg

NAME = "bare"

_CJK = re.compile("[\u4e00-\u9fff]")
_PREDICATE_FLAGS = ("v", "a", "d", "p")  # a verb, an adjective, an adverb or a preposition says something of a thing
_PREDICATE_WORDS = re.compile(r"是|有|为")
_NOUN_USES = ("vn", "an")  # a verb or an adjective used as a noun (检索 in 向量检索, 管理 in 制药管理): still a name


def check(at: Claim) -> Check | None:
    if not at.beyond_question or not at.question or not is_bare(at.text):
        return None
    words = telling(question_words(at.question))
    if not words or on_the_question(at, words):
        return None
    shown = at.text.strip()
    return Check(NAME, False, Msg(
        zh=f"“{shown}”只是一个短语，要靠问题才成一句话；资料里有它，却不在讲问题所问的那句里：它不是资料给出的答案",
        en=f"\"{shown}\" is a bare phrase, a claim only as the question's answer; the chunk has it, but not in its "
           "sentence about what the question asks: the chunk does not give it as the answer"))


def on_the_question(at: Claim, words: list[str]) -> bool:
    """Does the chunk sentence that holds the phrase (each one that holds it as written; else its evidence span) hold
    at least one of the question's `words`, and no fewer than any other sentence of the chunk?"""
    spans = sentence_spans(at.chunk) or [(0, len(at.chunk))]
    held = [len(terms_found(words, at.chunk[a:b])) for a, b in spans]
    phrase = flat(at.text).strip(",.;:!?、")
    holders = [n for (a, b), n in zip(spans, held) if phrase and phrase in flat(at.chunk[a:b])]
    here = max(holders) if holders else len(terms_found(words, at.evidence.text))
    return bool(here) and here >= max(held)


def is_bare(claim: str) -> bool:
    """A Chinese phrase with no predicate: no word jieba tags a verb, adjective, adverb or preposition (one it tags a
    verb or adjective used as a noun is a name: 向量检索), and no 是, 有 or 为 ("日本历史", "向量检索", "欧尼康、金德里德医疗
    保健和PharMerica"; not "1754年到1760年", whose 到 is tagged a verb)."""
    body = claim.rstrip("。.！! ")
    if not _CJK.search(body) or _PREDICATE_WORDS.search(body):
        return False
    return not any(flag.startswith(_PREDICATE_FLAGS) and flag not in _NOUN_USES for _, flag in pos_tags(body))

"""How long an answer may run: a token budget that fits what the question asks, so a one-sentence answer is not
decoded to the model's cap.

With fill-in on, the model writes the direct answer only (at most pipeline.ANSWER_SENTENCES sentences, which the
citation grammar enforces); a number is a few tokens, a reason or a comparison a sentence or two. The budget is set
from the slot the question asks (asked.asked_slot) and the number of parts it asks at once, never above the backend's
own cap (RAG_LLM_MAX_TOKENS). The figures are sizes of an answer of that kind written out, not values fitted to any
set: two Chinese sentences of about 60 characters are about 100 tokens of Qwen's vocabulary.
On the held-out runs of the answers issue, 11 of 31 and 14 of 34 of the 0.5B's answers ran to the 384-token cap
(a sentence with no end, or blank space after the last citation: the grammar now allows one space there).
Not handled here: stopping a loop (shape.RepetitionGuard), the grammar (citation_grammar.py).
"""

from __future__ import annotations

from rag.audit.answer_form import question_parts_of
from rag.audit.asked import asked_slot

TOKENS = {"number": 64, "formula": 96}  # slot -> the budget of one part's answer; any other slot or none: SENTENCES
SENTENCES = 160  # two sentences that explain (a reason, a comparison, a list, a definition)
MAX_PARTS = 3  # a question asking more at once gets no more than this many parts' budget


def answer_tokens(question: str, cap: int | None = None) -> int:
    """The budget of the model's answer to `question`: each part's slot budget, summed (a two-part question asks two
    things), at most `cap`."""
    parts = question_parts_of(question) or [question]
    total = sum(TOKENS.get(asked_slot(p) or "", SENTENCES) for p in parts[:MAX_PARTS])
    return min(total, cap) if cap else total

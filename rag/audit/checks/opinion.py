"""The optional second opinion: a bundled model's yes/no on the sentence and its evidence span, and what it does to a
label.
Not handled here: aligning the sentence to its span and the order the checks run in (rag/audit/support.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from rag.audit.checks.verdict import Check
from rag.messages import Msg

if TYPE_CHECKING:
    from rag.models.yes_no import Verdict

Opinion = Callable[[str, str, str], "Verdict"]  # (sentence, evidence span, lang) -> the model's yes/no

NAME = "opinion"


def check(verdict: Verdict, doubt_below: float) -> Check:
    """The model's verdict on a sentence the rules call supported, as a check: it doubts where its P(yes) is below
    `doubt_below` (or, with no probability, where it said no); the label is then "weak" (support.py)."""
    p = verdict.p_yes
    doubt = (p is not None and p < doubt_below) or (p is None and not verdict.answer)
    shown = f"P(yes)={p:.2f}" if p is not None else verdict.raw
    return Check(NAME, not doubt, Msg(zh=f"模型的第二意见：{'存疑' if doubt else '支持'}（{shown}）",
                 en=f"the model's second opinion: {'doubts it' if doubt else 'supports it'} ({shown})"))


OPINION = {
    "zh": ("你核对一句话有没有证据支持，只回答“是”或“否”。",
           "证据：{e}\n\n句子：{s}\n\n这句话里的每个事实（数字、说的是谁、肯定还是否定）都和证据一致吗？只回答“是”或“否”。"),
    "en": ("You check whether a sentence is backed by its evidence. Answer only yes or no.",
           "Evidence: {e}\n\nSentence: {s}\n\nDoes every fact in the sentence (numbers, what it is said of, yes or no) "
           "agree with the evidence? Answer only yes or no."),
}


CONTENT_FREE = "N/A"


def opinion_messages(sentence: str, evidence: str, lang: str) -> list[dict]:
    """The second opinion's prompt: one sentence and one evidence span, nothing else (short, so a small model
    reads all of it, and the system prompt stays in llama.cpp's KV cache from one sentence to the next)."""
    system, user = OPINION[lang if lang in OPINION else "en"]
    return [{"role": "system", "content": system}, {"role": "user", "content": user.format(e=evidence, s=sentence)}]


def model_opinion(chat, calibrate: bool = False, control=None) -> Opinion:
    """An Opinion backed by `chat`: its yes/no Verdict (rag/models/yes_no.py) on the sentence and its span.

    `calibrate` divides by the model's verdict on a content-free sentence over the same span (Zhao et al.
    2021). Whether either reading helps was measured (bench/bench_audit.py) before any default used it.
    `control` (a RunControl) queues, stops and times each question like any other model call."""
    from rag.models.yes_no import YesNoRule, ask_yes_no

    def ask(sentence: str, evidence: str, lang: str):
        null = [opinion_messages(CONTENT_FREE, evidence, lang)] if calibrate else None
        return ask_yes_no(chat, opinion_messages(sentence, evidence, lang), lang,
                          Msg(en="does the evidence span support the sentence?", zh="证据片段支持这句话吗？"),
                          YesNoRule(null=null), control=control)

    return ask

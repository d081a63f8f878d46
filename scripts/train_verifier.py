"""Train the support verifier (rag/audit/verifier.py); write data/answering/verifier/.

    python scripts/train_verifier.py --rows /tmp/verifier_rows.npz           # build the claims (minutes), then train
    python scripts/train_verifier.py --rows /tmp/verifier_rows.npz --reuse   # train again from saved rows

The data: public reading-comprehension sets only (data/train; provenance in data/README.md): cmrc2018 trial, the
cmrc2018 dev questions outside ../shared/eval/cmrc2018_dev's 300, and xquad's zh questions outside the evaluation
sample. Nothing of golden, multihop, hello_algo, DRCD or bench/supported_labels.jsonl is read. Each corpus is chunked
as the app chunks an upload; a question's gold chunk is the one of its passage that holds its answer. Per question,
claims written the way the bundled model answers ("剃刀嘴凤冠雉体长为多少？" -> "剃刀嘴凤冠雉体长为91厘米。": the answer put where
the question asks, `claim`):
  right   the claim against its gold chunk; the answer alone, and the chunk's sentence that holds it (the model
          also answers so)
  wrong   the claim against the chunk of another passage that shares most with the question (its subject put on
          another entity's chunk); the question and its claim with their name replaced by another name of the
          corpus, against the gold chunk (a sibling entity's question answered from this one's chunk); the claim
          with another span of the gold chunk as its answer (another number, or another name the question does not
          hold); the gold chunk's title alone (a fragment)
Only the claims the audit's rules call supported are kept: the verifier only doubts what they pass.
Split by passage (sha1 of its id): TRAIN for fitting, VALID for early stopping, HELD apart for the operating point:
the highest step at which at most FALSE_DOUBTS of the held-apart right claims (the claims proper, not the bare answers or
copied sentences) are doubted. Set before any
evaluation: the rules already pass most right sentences, and a doubt costs a right sentence its place in the answer.
Not handled here: the features and using the model (rag/audit/verifier.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SEED = 20261206
TRAIN_DIR = ROOT / "data" / "train"
SETS = ("cmrc2018_trial", "cmrc2018_dev_rest", "xquad_rest_zh")
FALSE_DOUBTS = 0.05  # the held-apart right claims the operating point may doubt (see the docstring)
PARAMS = {"objective": "binary", "metric": "binary_logloss", "learning_rate": 0.05, "num_leaves": 15,
          "min_data_in_leaf": 40, "feature_fraction": 0.9, "lambda_l2": 1.0, "verbosity": -1, "num_threads": 1,
          "deterministic": True, "force_col_wise": True}
# where a Chinese question asks: its interrogative, replaced by the answer to make the claim
_ASKS = re.compile(r"哪一年|哪年|哪一天|哪天|哪一个|哪个|哪些|哪里|哪儿|哪位|哪种|哪家|哪国|哪座|哪部|哪所|哪条|哪一|哪|"
                   r"什么时候|什么地方|什么|是谁|谁|多少|多久|多长|多大|多高|几|何时|何地|何处|何人|啥")
_NUMBER = re.compile(r"\d[\d,.，]*\s*(?:年|月|日|%|个|位|万|亿|千|百|米|公里|元|人|次|届|岁|号|天|名|种|架|座|部)?")


def bucket(key: str) -> float:
    return int(hashlib.sha1(key.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF


def part(key: str) -> str:
    b = bucket(key)
    return "held" if b < 0.2 else "valid" if b < 0.3 else "train"


def claim(question: str, answer: str) -> str | None:
    """The question stated with `answer` where it asks, as the bundled model answers; None where it asks nowhere."""
    m = _ASKS.search(question)
    if m is None:
        return None
    text = question[: m.start()] + answer + question[m.end():]
    text = re.sub(r"[\s？?！!。.呢吗]+$", "", text)
    return text + "。" if text else None


def other_span(chunk: str, answer: str, question: str, rng: random.Random) -> str | None:
    """Another span of `chunk` of the answer's kind: a number for a number, else a name the question does not hold."""
    if any(ch.isdigit() for ch in answer):
        spans = {m.group(0).strip() for m in _NUMBER.finditer(chunk)}
    else:
        import jieba.posseg as pseg

        spans = {w.word for w in pseg.cut(chunk) if w.flag in ("nr", "ns", "nt", "nz", "n", "eng") and len(w.word) >= 2}
    spans = [s for s in spans if s and s not in answer and answer not in s and s not in question]
    return rng.choice(sorted(spans)) if spans else None


def name_words(text: str) -> list[str]:
    """The names jieba finds in `text` (people, places, organisations, other proper names), of two characters or more."""
    import jieba.posseg as pseg

    return [w.word for w in pseg.cut(text) if w.flag in ("nr", "ns", "nt", "nz") and len(w.word) >= 2]


def another_subject(question: str, text: str, chunk: str, names: list[str], rng: random.Random) -> tuple[str, str] | None:
    """(question, claim) about another entity: the question's longest name that `chunk` holds replaced, in both, by a
    name of the corpus `chunk` never mentions: the question of a sibling entity answered from this one's chunk."""
    own = sorted((w for w in name_words(question) if w in chunk and w in text), key=len, reverse=True)
    others = [n for n in names if n not in chunk and n not in question]
    if not own or not others:
        return None
    other = rng.choice(others)
    return question.replace(own[0], other), text.replace(own[0], other)


def bigrams(text: str) -> set[str]:
    return {text[i:i + 2] for i in range(len(text) - 1)}


def build_rows(per_set: int, seed: int):
    from rag import defaults
    from rag.audit.support import check_sentence
    from rag.audit.verifier import _title, verify_values
    from rag.ingest.chunking import chunk_documents
    from rag.ingest.documents import load_jsonl_corpus
    from rag.ingest.sentences import sentence_spans

    xs, ys, kinds, keys = [], [], [], []
    for name in SETS:
        folder = TRAIN_DIR / name
        docs = load_jsonl_corpus(folder / "corpus.jsonl")
        chunks = chunk_documents(docs, defaults.CHUNKER, **dict(defaults.CHUNK_PARAMS)).chunks
        grams = [bigrams(c.text) for c in chunks]
        names = sorted({w for c in chunks[:: max(1, len(chunks) // 400)] for w in name_words(c.text)})
        qs = [json.loads(line) for line in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines() if line]
        qs = [q for q in qs if q.get("answers")]
        rng = random.Random(f"{seed}:{name}")
        rng.shuffle(qs)
        t0, made = time.perf_counter(), 0
        for q in qs[:per_set]:
            answer, gold = q["answers"][0], q["gold_ids"][0]
            text = claim(q["query"], answer)
            home = next((c for c in chunks if c.doc_id == gold and answer in c.text), None)
            if text is None or home is None:
                continue
            qg = bigrams(q["query"])
            near = max((i for i, c in enumerate(chunks) if c.doc_id != gold and answer not in c.text),
                       key=lambda i: len(qg & grams[i]) / (len(qg | grams[i]) or 1), default=None)
            cases = [(text, home.text, 1, "right")]
            # the model also answers with the bare answer, or copies the sentence that holds it
            cases.append((answer + "。", home.text, 1, "right: the answer alone"))
            holder = next((home.text[a:b] for a, b in sentence_spans(home.text) if answer in home.text[a:b]), None)
            if holder:
                cases.append((holder, home.text, 1, "right: its sentence"))
            if near is not None:
                cases.append((text, chunks[near].text, 0, "another chunk"))
            wrong = other_span(home.text, answer, q["query"], rng)
            if wrong is not None:
                cases.append((claim(q["query"], wrong) or "", home.text, 0, "another span"))
            swapped = another_subject(q["query"], text, home.text, names, rng)
            if swapped is not None:
                cases.append((swapped[1], home.text, 0, "another subject"))
            title = _title(home.text).split(" › ")[-1].strip()
            if title and answer not in title and title not in q["query"]:
                cases.append((title + "。", home.text, 0, "title alone"))
            for sentence, chunk, label, kind in cases:
                if not sentence:
                    continue
                asked = swapped[0] if kind == "another subject" and swapped is not None else q["query"]
                s = check_sentence(sentence, {"c": chunk}, asked)
                if s.label != "supported":
                    continue
                xs.append(verify_values(s.sentence, chunk, asked, s)[0])
                ys.append(label)
                kinds.append(kind)
                keys.append(f"{name}:{gold}")
                made += 1
        print(f"{name}: {min(per_set, len(qs))} questions, {made} supported claims, {time.perf_counter() - t0:.0f} s",
              file=sys.stderr, flush=True)
    return np.vstack(xs), np.array(ys, dtype=np.int64), np.array(kinds, dtype=str), np.array(keys, dtype=str)


def train(x, y, kinds, keys, seed: int):
    from train_answering import fit_binary  # the gate's fitting (early stopping on the validation part)

    from rag.audit.verifier import VERIFY_FEATURES

    booster, sets = fit_binary(x, y, np.array([part(k) for k in keys]), VERIFY_FEATURES, PARAMS, seed)
    held = sets["held"]
    p = booster.predict(x[held], num_iteration=booster.best_iteration)
    yh, kh = y[held], kinds[held]
    right = p[(yh == 1) & (kh == "right")]  # the point is set on the claims, as the model writes them
    point = 0.0
    for step in np.arange(0.99, 0.0, -0.01):  # the highest step doubting at most FALSE_DOUBTS of the right claims
        if (right < step).mean() <= FALSE_DOUBTS:
            point = round(float(step), 2)
            break
    kept = p >= point
    figures = {"held claims": int(held.sum()), "held right": int((yh == 1).sum()),
               "right doubted at the point": round(float((right < point).mean()), 4),
               "precision of supported, rules alone": round(float(yh.mean()), 4),
               "precision of supported, with the verifier": round(float(yh[kept].mean()), 4) if kept.any() else None}
    for kind in sorted(set(kh) - {"right"}):
        figures[f"{kind}: doubted"] = round(float((p[kh == kind] < point).mean()), 4)
    return booster, point, figures, {k: int(v.sum()) for k, v in sets.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--per-set", type=int, default=1500, help="questions per training set (seeded sample)")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--rows", type=Path, required=True, help="where the rows are saved (.npz)")
    ap.add_argument("--reuse", action="store_true", help="train from the saved rows instead of building them")
    ap.add_argument("--out", type=Path, default=ROOT / "data" / "answering" / "verifier")
    args = ap.parse_args()
    t0 = time.perf_counter()
    if not args.reuse:
        x, y, kinds, keys = build_rows(args.per_set, args.seed)
        np.savez_compressed(args.rows, x=x, y=y, kinds=kinds, keys=keys)
    d = dict(np.load(args.rows, allow_pickle=False))
    booster, point, figures, split = train(d["x"], d["y"], d["kinds"], d["keys"], args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    booster.save_model(str(args.out / "verifier.txt"), num_iteration=booster.best_iteration)
    recipe = {"trained_on": "claims made from cmrc2018 trial + dev rest and xquad zh rest (scripts/train_verifier.py)",
              "data": [f"data/train/{s}" for s in SETS], "per_set": args.per_set, "seed": args.seed,
              "split": "sha1 of the gold passage: < 0.2 held apart, < 0.3 validation (early stopping), else training",
              "params": PARAMS, "best_iteration": booster.best_iteration, "rows": split, "operating_point": point,
              "false_doubt_target": FALSE_DOUBTS, "figures": figures,
              "kinds": {k: int((d["kinds"] == k).sum()) for k in sorted(set(d["kinds"].tolist()))}}
    (args.out / "recipe.json").write_text(json.dumps(recipe, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({"operating point": point, **figures, "seconds": round(time.perf_counter() - t0, 1)},
                     ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

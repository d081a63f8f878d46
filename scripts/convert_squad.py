"""Convert a SQuAD-format file (cmrc2018_trial.json) into the corpus/queries/meta layout of ../shared/eval.

    python scripts/convert_squad.py /tmp/cmrc2018_trial.json data/train/cmrc2018_trial \
        --repo ymcui/cmrc2018 --commit c0eb1b6ba219847457e6af3180da722bbeb656af \
        --file squad-style-data/cmrc2018_trial.json --blob 020e3559e914d23404ffc5bf9411ee52a9c38451

Each paragraph is a passage (`title` = its article title, `text` = its context); paragraphs with the same
text are kept once. Every question is a query whose only gold id is its own passage, with its answers.
Questions with the same text are kept once (the first). No sampling: the training script takes all of them.
Also written: which passages also appear, word for word, in the evaluation sets (`--check` folders), so a
training set that leaks evaluation text is caught here, not after the model ships.
Not handled here: training (scripts/train_reranker.py).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def convert(squad: dict) -> tuple[list[dict], list[dict], dict]:
    corpus: list[dict] = []
    queries: list[dict] = []
    by_text: dict[str, str] = {}  # passage text -> the id kept for it
    seen_q: set[str] = set()
    raw_q = 0
    for article in squad["data"]:
        for para in article["paragraphs"]:
            text = para["context"].strip()
            pid = by_text.setdefault(text, para["id"])
            if pid == para["id"]:
                corpus.append({"id": pid, "title": article.get("title", ""), "text": text})
            for qa in para["qas"]:
                raw_q += 1
                q = qa["question"].strip()
                if not q or q in seen_q:
                    continue
                seen_q.add(q)
                answers = list(dict.fromkeys(a["text"] for a in qa.get("answers", []) if a["text"].strip()))
                queries.append({"id": qa["id"], "query": q, "gold_ids": [pid], "answers": answers})
    counts = {"source_queries_raw": raw_q, "corpus_size": len(corpus), "num_queries": len(queries),
              "avg_passage_chars": round(sum(len(c["text"]) for c in corpus) / max(1, len(corpus)), 1)}
    return corpus, queries, counts


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("source", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--repo", required=True)
    p.add_argument("--commit", required=True)
    p.add_argument("--file", required=True)
    p.add_argument("--blob", required=True)
    p.add_argument("--licence", default="CC-BY-SA-4.0 (LICENCE file in repo)")
    p.add_argument("--language", default="zh-Hans")
    p.add_argument("--check", type=Path, nargs="*", default=[], help="evaluation folders whose passages must not appear")
    args = p.parse_args()
    corpus, queries, counts = convert(json.loads(args.source.read_text(encoding="utf-8")))
    texts = {c["text"] for c in corpus}
    overlap = {}
    for folder in args.check:
        rows = [json.loads(line) for line in (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines() if line]
        overlap[folder.name] = sum(r["text"].strip() in texts for r in rows)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, rows in (("corpus.jsonl", corpus), ("queries.jsonl", queries)):
        with open(args.out / name, "w", encoding="utf-8") as f:
            f.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    meta = {"repo": args.repo, "commit": args.commit, "files": [args.file], "blob": {args.file: args.blob},
            "licence": args.licence, "language": args.language, "name": args.out.name,
            "kind": "question -> Wikipedia paragraph (span-extraction MRC, SQuAD format); training data only",
            **counts, "passages_also_in_evaluation_sets": overlap}
    (args.out / "meta.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(meta, ensure_ascii=False))
    return 1 if any(overlap.values()) else 0


if __name__ == "__main__":
    raise SystemExit(main())

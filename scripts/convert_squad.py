"""Convert a SQuAD-format file (cmrc2018_trial.json) into the corpus/queries/meta layout of ../shared/eval.

    python scripts/convert_squad.py /tmp/cmrc2018_trial.json data/train/cmrc2018_trial \
        --repo ymcui/cmrc2018 --commit c0eb1b6ba219847457e6af3180da722bbeb656af \
        --file squad-style-data/cmrc2018_trial.json --blob 020e3559e914d23404ffc5bf9411ee52a9c38451

Each paragraph is a passage (`title` = its article title, `text` = its context); paragraphs with the same
text are kept once. Every question is a query whose only gold id is its own passage, with its answers.
Questions with the same text are kept once (the first). No sampling: the training script takes all of them.
Also written: which passages also appear, word for word, in the evaluation sets (`--check` folders), so a
training set that leaks evaluation text is caught here, not after the model ships.
`--exclude-queries` leaves out the questions of evaluation files (cmrc2018_dev's and xquad's 300 sampled ones) so the
rest of a public dev file can train the answer gate and selector (scripts/train_answering.py); their passages are the
evaluation corpus's, so `--shared-passages` records that instead of failing, and figures on those sets are in-sample
as to passages. A paragraph without an id (xquad) gets the evaluation sets' `a<article>-p<paragraph>` id.

    python scripts/convert_squad.py /tmp/xquad.zh.json data/train/xquad_rest_zh --repo google-deepmind/xquad \
        --commit 7d30520c717524000f0d9d2f9c10a069acd9d285 --file xquad.zh.json \
        --blob 40aa6cb87e4369235e763d3554b7a25ea832e924 --exclude-queries ../shared/eval/xquad_zh/queries.jsonl \
        --shared-passages --licence "CC-BY-SA-4.0 (README.md + CC-BY-SA4.0.txt)"
Not handled here: training (scripts/train_reranker.py).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def convert(squad: dict, exclude: frozenset[str] = frozenset()) -> tuple[list[dict], list[dict], dict]:
    """(passages, questions, counts) of a SQuAD-format file, less the questions whose ids are in `exclude`."""
    corpus: list[dict] = []
    queries: list[dict] = []
    by_text: dict[str, str] = {}  # passage text -> the id kept for it
    seen_q: set[str] = set()
    raw_q = 0
    left_out = 0
    for a, article in enumerate(squad["data"]):
        for k, para in enumerate(article["paragraphs"]):
            text = para["context"].strip()
            own = para.get("id") or f"a{a:03d}-p{k:02d}"
            pid = by_text.setdefault(text, own)
            if pid == own:
                corpus.append({"id": pid, "title": article.get("title", ""), "text": text})
            for qa in para["qas"]:
                raw_q += 1
                q = qa["question"].strip()
                if qa["id"] in exclude:
                    left_out += 1
                    continue
                if not q or q in seen_q:
                    continue
                seen_q.add(q)
                answers = list(dict.fromkeys(a["text"] for a in qa.get("answers", []) if a["text"].strip()))
                queries.append({"id": qa["id"], "query": q, "gold_ids": [pid], "answers": answers})
    counts = {"source_queries_raw": raw_q, "left_out_evaluation_queries": left_out, "corpus_size": len(corpus), "num_queries": len(queries),
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
    p.add_argument("--exclude-queries", type=Path, nargs="*", default=[],
                   help="queries.jsonl files of evaluation sets whose questions are left out")
    p.add_argument("--shared-passages", action="store_true",
                   help="the passages are an evaluation set's too (recorded in meta.json, not an error)")
    p.add_argument("--kind", default="question -> Wikipedia paragraph (span-extraction MRC, SQuAD format); training data only")
    args = p.parse_args()
    exclude = frozenset(json.loads(line)["id"] for f in args.exclude_queries
                        for line in f.read_text(encoding="utf-8").splitlines() if line.strip())
    corpus, queries, counts = convert(json.loads(args.source.read_text(encoding="utf-8")), exclude)
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
            "kind": args.kind, **counts, "passages_also_in_evaluation_sets": overlap}
    if args.exclude_queries:
        meta["evaluation_queries_left_out_from"] = [str(f) for f in args.exclude_queries]
        meta["passages_shared_with_evaluation"] = args.shared_passages
    (args.out / "meta.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(meta, ensure_ascii=False))
    return 1 if any(overlap.values()) and not args.shared_passages else 0


if __name__ == "__main__":
    raise SystemExit(main())

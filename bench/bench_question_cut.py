"""BM25 with a question's words as jieba cuts them, against the same with the words the corpus never uses cut again into
words it does (rag/index/tokenize.py `recut`, what BM25.query_tokens does since 2026-12-07).

    .venv/bin/python bench/bench_question_cut.py                       # cmrc2018_dev, xquad_zh
    RAG_EVAL_DIR=DIR .venv/bin/python bench/bench_question_cut.py --sets cmrc2018_dev,xquad_zh,dureader_dev

Each set's passages indexed whole (title + text, as the reference figures are), BM25 with the app's stop words, every
question of the set. Prints, per set: how many questions have a word the corpus never uses that the recut cuts, and
Hit@1, Hit@5, MRR@10 of the gold passage both ways. No model is loaded; none of these sets chose anything in the recut
(it has no constant to choose).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from rag import config  # noqa: E402
from rag.evaluate.evaluation import load_queries  # noqa: E402
from rag.index.bm25 import BM25  # noqa: E402
from rag.index.tokenize import load_stopwords  # noqa: E402
from rag.ingest.documents import load_jsonl_corpus  # noqa: E402


def figures(ranks: list[int | None]) -> str:
    n = len(ranks)
    hit1 = sum(r == 1 for r in ranks) / n
    hit5 = sum(r is not None and r <= 5 for r in ranks) / n
    mrr = sum(1 / r for r in ranks if r is not None and r <= 10) / n
    return f"{hit1:.3f} | {hit5:.3f} | {mrr:.3f}"


def rank_of(bm: BM25, tokens: list[str], ids: list[str], gold: set[str]) -> int | None:
    rows, _ = bm.search_tokens(tokens, 10)
    return next((k + 1 for k, row in enumerate(rows.tolist()) if ids[row] in gold), None)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sets", default="cmrc2018_dev,xquad_zh", help="folders of RAG_EVAL_DIR with corpus/queries.jsonl")
    args = p.parse_args()
    folder = config.value("RAG_EVAL_DIR")
    print("| set (questions) | questions with a word cut again | as jieba cuts: Hit@1 | Hit@5 | MRR@10 "
          "| cut again: Hit@1 | Hit@5 | MRR@10 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in [s for s in args.sets.split(",") if s]:
        corpus, queries = load_jsonl_corpus(folder / name / "corpus.jsonl"), load_queries(folder / name / "queries.jsonl")
        ids = [d.doc_id for d in corpus]
        bm = BM25(stopwords=load_stopwords()).index([d.text for d in corpus])  # a record's text: title + "\n" + text
        plain, cut, changed = [], [], 0
        for q in queries:
            gold = set(q.gold_ids)
            changed += bool(bm.recuts(q.query))
            plain.append(rank_of(bm, bm.tokenize(q.query), ids, gold))
            cut.append(rank_of(bm, bm.query_tokens(q.query), ids, gold))
        print(f"| {name} ({len(queries)}) | {changed} | {figures(plain)} | {figures(cut)} |", flush=True)


if __name__ == "__main__":
    main()

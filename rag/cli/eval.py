"""`python -m rag eval`: one queries file, three kinds of comparison, each its own function.

    eval --chunker a,b,c | all          chunkers on span metrics, overall and per kind of question
    eval --loops plain,self-rag,...     answer loops (loops.py), with --judge the LLM judge
    eval [--strategies ...]             retrieval strategies: Hit@k, MRR, nDCG, spans, answers (--answers),
                                        fusion vs each list query by query, an approximate --index vs exact

Long runs print progress per question with the time left. Tables by default, JSON with --json.
Not handled here: the figures themselves (rag/evaluate/), argument parsing (main.py).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

from rag import jsonout
from rag.cli.common import (
    build,
    corpus_docs,
    corpus_label,
    embedder,
    err,
    eval_chunker,
    generator,
    judge_totals,
    kb_conflict,
    reranker,
    settings,
)
from rag.evaluate.chunkers import ChunkerTrial, compare_chunkers, format_chunker_table
from rag.evaluate.evaluation import fixed_sample, format_table, load_queries
from rag.evaluate.index_check import with_exact_reference
from rag.evaluate.strategies import (
    ALL_STRATEGIES,
    REWRITE_STRATEGIES,
    SPARSE_STRATEGIES,
    compare,
)
from rag.evaluate.wins import default_metric, format_counts, win_tie_loss
from rag.ingest.chunking import CHUNKERS
from rag.run import RunContext
from rag.trace import AskSettings


def cmd_eval(args: argparse.Namespace) -> int:
    conflict = kb_conflict(args)  # before any branch: `--kb NAME --chunker a,b` was accepted (issue 65, item 3)
    if conflict:
        err(f"error: {conflict}")
        return 2
    if args.chunker and ("," in args.chunker or args.chunker == "all"):
        names = list(CHUNKERS) if args.chunker == "all" else [c.strip() for c in args.chunker.split(",") if c.strip()]
        bad = [c for c in names if c not in CHUNKERS]
        if bad:
            err(f"error: --chunker {', '.join(bad)}: choose from {', '.join(CHUNKERS)} (comma-separated, or all)")
            return 2
        return eval_chunkers(args, names)
    if args.loops is not None or args.judge:
        return eval_answer_loops(args)
    return eval_retrieval(args)


def _queries(args: argparse.Namespace):
    queries = load_queries(args.queries)
    if args.limit:
        queries = queries[: args.limit]
    if args.sample:
        queries = fixed_sample(queries, args.sample)
    return queries


class Progress:
    """Per-question progress on stderr with the time left, for runs that answer with a model."""

    EVERY_S = 5.0  # at most one line per this many seconds (and the last one), so a fast run stays short

    def __init__(self, what: str):
        self.what, self.t0, self.last, self.shown = what, time.perf_counter(), "", 0.0

    def __call__(self, done: int, total: int, label: str = "") -> None:
        now = time.perf_counter()
        if label and label != self.last:
            self.last = label
            err(f"{self.what}: {label} ...")
        if total <= 0 or done <= 0 or (done < total and now - self.shown < self.EVERY_S):
            return
        self.shown = now
        spent = now - self.t0
        left = spent / done * (total - done)
        err(f"  {done}/{total} ({done / total:.0%}), {spent:.0f} s so far, about {left:.0f} s left")


def eval_chunkers(args: argparse.Namespace, names: list[str]) -> int:
    """rag eval --chunker a,b,c: one index per chunker, span metrics overall and per kind of question."""
    from rag.cli.common import contextualize

    queries = load_queries(args.queries)
    docs = corpus_docs(args)
    emb = embedder(args)
    strategy = (args.strategies or "hybrid").split(",")[0].strip()
    err(f"comparing {len(names)} chunkers on {len(docs)} documents with {strategy} ({emb.label}) ...")
    contextual = (lambda cs: contextualize(args, cs, docs)) if args.contextual else None
    trial = ChunkerTrial(docs, queries, emb, strategy, AskSettings(depth=max(args.depth, args.k), rrf_k=args.rrf_k),
                         contextual)
    reports = compare_chunkers(trial, names, progress=lambda d, n, c: err(f"  {c}: done ({d}/{n})"))
    if args.json:
        print(jsonout.dumps([{"chunker": r.chunker, "params": r.params, "chunks": r.n_chunks, "mean_length": r.mean_length,
                           **r.figures, "by_kind": r.by_kind} for r in reports], indent=2))
        return 0
    print(f"corpus: {corpus_label(args)}   queries: {args.queries}   strategy: {strategy}\n")
    print(format_chunker_table(reports))
    print("\nspan metrics: a retrieved context (a child's parent, for parent_child) holds the whole answer span")
    return 0


def eval_answer_loops(args: argparse.Namespace) -> int:
    """eval --loops plain,self-rag,agent [--judge]: answer loops compared (rag/cli/loops.py)."""
    from rag.cli.loops import cmd_eval_loops, parse_loops

    names = parse_loops(args.loops if args.loops is not None else "plain")
    if names is None:
        return 2
    queries = _queries(args)
    index = build(args)
    gen_choice, chat = generator(args, index.embedder)
    rr = reranker(args, index.embedder, chat)
    ctx = RunContext.chosen(index, settings(args), gen_choice, rr, chat=chat, budget=args.budget)
    return cmd_eval_loops(args, ctx, queries, names, gen_choice.label)


def _strategy_names(args: argparse.Namespace, chat) -> list[str] | None:
    wanted = [n.strip() for n in (args.strategies or "").split(",") if n.strip()]
    known = ALL_STRATEGIES
    bad = [n for n in wanted if n not in known]
    if bad or (args.strategies is not None and not wanted):
        err(f"error: --strategies {args.strategies!r}: choose from {', '.join(known)}")
        return None
    if wanted:
        return wanted
    names = ["dense", "bm25", "hybrid"] + (list(SPARSE_STRATEGIES) if args.sparse else []) + \
        (["hybrid+rerank"] if args.rerank else [])
    if chat is not None and not args.no_rewrites:
        names += list(REWRITE_STRATEGIES)
        err(f"language model available ({chat.label}): adding {', '.join(REWRITE_STRATEGIES)}")
    return names


def _check_gold(index, queries) -> bool:
    known = {c.doc_id for c in index.chunks}
    gold = {g for q in queries for g in q.gold_ids}
    unknown = sorted(gold - known)
    if unknown and not gold & known:
        err(f"error: none of the queries' gold_ids is in the corpus (e.g. {unknown[0]!r}): every metric would be "
            "0. Check --corpus / --queries belong together (data/golden.jsonl goes with the bundled knowledge base)")
        return False
    if unknown:
        err(f"warning: {len(unknown)} gold ids are not in the corpus (e.g. {unknown[0]!r}); those queries cannot score")
    return True


def eval_retrieval(args: argparse.Namespace) -> int:
    """eval [--strategies ...]: the retrieval strategies' figures, answers with --answers."""
    wanted = [n.strip() for n in (args.strategies or "").split(",") if n.strip()]
    if any(n in SPARSE_STRATEGIES or n == "m3" for n in wanted):
        args.sparse = True  # those strategies need the learned-sparse list
    if _strategy_names(args, None) is None:  # a bad --strategies fails before the corpus is embedded
        return 2
    queries = load_queries(args.queries)  # and so does a bad queries file
    index = build(args, eval_chunker(args.corpus))
    if not _check_gold(index, queries):
        return 2
    queries = _queries(args)
    gen_choice, chat = generator(args, index.embedder)
    names = _strategy_names(args, chat) or []  # checked above: the names were valid then and still are
    rr = reranker(args, index.embedder, chat) if args.rerank or "hybrid+rerank" in names else None
    if args.answers:
        err(f"answer-level figures with {gen_choice.label}, citations {args.cite}")
    run = RunContext.chosen(index, settings(args, depth=max(args.depth, args.k)), gen_choice if args.answers else None,
                            rr, chat=chat)  # without --answers, retrieval figures only: no writer
    reports = compare(run, queries, names, cites=(args.cite,), progress=Progress("evaluating"))
    reports, agreement = with_exact_reference(run, queries, reports, args.k)
    judged = [r for r in reports if not r.strategy.endswith("[exact]")]
    judged = [replace(r, strategy=r.strategy.split(" [")[0]) for r in judged]
    wins_metric = default_metric(judged)
    counts = win_tie_loss(judged, wins_metric)  # fusion vs each single list, query by query
    if args.json:
        out = {
            "corpus": corpus_label(args),
            "queries": str(args.queries),
            "n_queries": len(reports[0].per_query),
            "embedder": index.embedder.label,
            "strategies": [{"strategy": r.strategy, "label": r.label, **r.means} for r in reports],
            "dense_index": {"index": agreement.index, **agreement.figures()} if agreement else None,
            "win_tie_loss": counts,
        }
        print(jsonout.dumps(out, indent=2))
        return 0
    print(f"corpus: {corpus_label(args)}   queries: {args.queries} "
          f"({len(reports[0].per_query)} with gold ids)")
    print(f"embedder: {index.embedder.label}\n")
    print(format_table(reports))
    for r in reports:
        print(f"  {r.strategy}: {r.label}")
    totals = judge_totals(rr)
    if totals:
        print("\n" + totals)
    if counts:
        print("\nfusion, query by query:\n" + "\n".join("  " + line for line in
                                                        format_counts(counts, wins_metric).split("\n")))
    if agreement:
        print(f"\ndense index: {agreement.index}")
        print("  " + "   ".join(f"{k}: {v:.4g}" for k, v in agreement.figures().items()))
    return 0

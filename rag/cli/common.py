"""What every `python -m rag` command shares: argument types, printing to stderr, and turning the common
arguments into a corpus, an index, an embedder, a generator, a reranker and the AskSettings.

Each command module (main.py for search and ask, eval.py, loops.py, audit.py, graph.py, testset.py) imports this one,
never another command module, so the CLI has no import circle.
Not handled here: parsing (main.py), anything the pipeline computes.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from rag import defaults
from rag.backends import Choice, choose_generator, choose_reranker
from rag.errors import LoaderError
from rag.index.build import Index, build_index
from rag.index.dense_index import use_index, with_sparse
from rag.index.tokenize import load_stopwords
from rag.ingest.chunking import chunk_documents
from rag.ingest.documents import (
    Document,
    load_files,
    load_knowledge_base,
    load_path,
    unread_pages_warning,
)
from rag.messages import Msg
from rag.models.embedding import default_embedder_name, load_embedder
from rag.models.embedding_cache import CachedEmbedder
from rag.models.llm import ChatBackend
from rag.search.llm_judge import LLMJudgeReranker
from rag.trace import AskSettings

QUESTION_MAX_CHARS = defaults.QUESTION_MAX_CHARS  # what a link to the app may carry too (ui/links.py)


def err(msg: str) -> None:
    print(msg, file=sys.stderr)


def short(text: str, n: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def at_least(lo: int, meaning: str):
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


positive = at_least(1, "1 or more")
non_negative = at_least(0, "0 (all) or more")


def renamed(new: str) -> type[argparse.Action]:
    """An argparse action for a flag's old name: it sets the new flag's value and says, on stderr, that the flag is
    now called `new` (the old name keeps working: scripts and notes that use it still run)."""

    class Renamed(argparse.Action):
        def __call__(self, parser, namespace, values, option_string=None):
            err(f"note: {option_string} is now {new} (the old name still works)")
            setattr(namespace, self.dest, values)

    return Renamed


def question_text(text: str) -> str:
    """argparse type for a question or query: not empty, and not longer than the app allows."""
    if not text.strip():
        raise argparse.ArgumentTypeError("is empty: type a question or query")
    if len(text) > QUESTION_MAX_CHARS:
        raise argparse.ArgumentTypeError(f"is {len(text):,} characters long; a question may have at most "
                                         f"{QUESTION_MAX_CHARS:,} (ask a shorter question, or put the text in --corpus)")
    return text


def corpus_docs(args: argparse.Namespace) -> list[Document]:
    """The documents of --kb (a named knowledge base, as it was read) or of --corpus (load_corpus)."""
    if vars(args).get("kb"):
        from rag.index import kb

        return kb.documents(args.kb)
    return load_corpus(args.corpus)


def corpus_label(args: argparse.Namespace) -> str:
    if vars(args).get("kb"):
        return f"knowledge base {args.kb}"
    return args.corpus or "bundled knowledge base"


def load_corpus(path: str | None) -> list[Document]:
    """The bundled knowledge base, one file, or every file of a folder (e.g. data/longform)."""
    if path is None:
        return load_knowledge_base()
    if os.path.isdir(path):
        files = sorted(f for f in os.listdir(path) if not f.startswith("."))
        report = load_files([(f, Path(path, f).read_bytes()) for f in files])
        for e in report.errors + report.warnings:
            err(f"warning: {e}")
        if not report.documents:
            raise LoaderError(path, Msg(en="no file in this folder could be read; see the warnings above",
                                        zh="这个文件夹里没有一个文件能读取；见上面的警告"))
        return report.documents
    docs = load_path(path)
    for doc in docs:
        warning = unread_pages_warning(doc)
        if warning is not None:
            err(f"warning: {warning}")
    return docs


def embedder(args: argparse.Namespace):
    """--embedder (else the default) with --threads, behind the vector cache unless --no-cache."""
    inner = load_embedder(args.embedder or default_embedder_name(), threads=args.threads)
    return inner if args.no_cache else CachedEmbedder(inner)


def local_model(args: argparse.Namespace) -> str:
    """The bundled model a command runs: --local-model where the command has it (search has not), else the default."""
    from rag.models.local_llm import DEFAULT_MODEL

    return vars(args).get("local_model") or DEFAULT_MODEL


def contextualize(args: argparse.Namespace, chunk_set, docs):
    from rag.ingest.contextual import contextualize as run
    from rag.models.local_llm import LocalChat

    chat = LocalChat(local_model(args))

    def progress(done: int, total: int) -> None:
        if sys.stderr.isatty():
            print(f"\rcontexts {done}/{total}", end="", file=sys.stderr)

    chunk_set, stats = run(chunk_set, docs, chat, persist=not args.no_cache, progress=progress)
    if sys.stderr.isatty():
        print(file=sys.stderr)
    err(f"contextual chunking with {chat.label}: {stats['generated']} contexts written "
        f"({stats['seconds_per_generated']:.1f} s each), {stats['cached']} from the cache, {stats['seconds']:.0f} s")
    return chunk_set


def eval_chunker(corpus: str | None) -> str:
    """The chunker `rag eval` reads a corpus with by default: a passage file (JSONL, JSON, CSV: ../shared/eval's
    corpora) one passage a chunk, as the reference figures do; the knowledge base, a folder or a document as the app
    does (a teacher's folder of Markdown chapters by their structure)."""
    if corpus is not None and not os.path.isdir(corpus) and Path(corpus).suffix.lower() in (".jsonl", ".json", ".csv"):
        return defaults.EVAL_CHUNKER
    return defaults.CHUNKER


def chunker_choice(args: argparse.Namespace, default_chunker: str = defaults.CHUNKER) -> tuple[str, dict]:
    """(the chunker, its parameters): --chunker with its own defaults, else `default_chunker`, with the app's
    parameters when that is the app's chunker."""
    chunker = args.chunker or default_chunker
    return chunker, (defaults.CHUNK_PARAMS if chunker == defaults.CHUNKER and not args.chunker else {})


def kb_conflict(args: argparse.Namespace) -> str | None:
    """What --kb cannot go with (the bundle fixes the corpus, its chunks and its embedder); None when nothing."""
    if not vars(args).get("kb"):
        return None
    for flag, given in (("--corpus", args.corpus), ("--chunker", args.chunker), ("--contextual", args.contextual),
                        ("--stopwords", args.stopwords)):
        if given and flag == "--corpus":
            return f"--kb {args.kb} and --corpus {args.corpus} are two corpora: give one of them"
        if given:
            return (f"--kb {args.kb} is already chunked and indexed: {flag} does not apply to it; drop {flag}, or "
                    f"build another knowledge base with it (python -m rag kb build NAME PATH {flag} ...)")
    return None


def open_kb(args: argparse.Namespace) -> Index:
    """--kb's index read from its bundle (nothing embedded); its embedder unless --embedder names another."""
    from rag.errors import ConfigError
    from rag.index import kb

    conflict = kb_conflict(args)
    if conflict:
        raise ConfigError(conflict)
    t0 = time.perf_counter()
    m = kb.manifest(args.kb)
    if args.embedder and args.embedder != m.embedder:
        raise ConfigError(f"knowledge base {args.kb} was embedded with {m.embedder}: --embedder {args.embedder} cannot "
                          "search it (drop --embedder, or rebuild the knowledge base with it)")
    emb = kb.embedder_of(args.kb, m, lambda name: load_embedder(name, threads=args.threads))
    index = kb.open_index(args.kb, embedder=emb)
    err(f"knowledge base {args.kb}: {m.documents} documents -> {m.chunks} chunks ({m.chunker}) with {m.embedder}, "
        f"vectors loaded from its bundle in {time.perf_counter() - t0:.1f}s (nothing embedded)")
    return index


class EmbeddingProgress:
    """The embedding's progress on stderr: one line redrawn on a terminal; where stderr is a file or a pipe (a job, a
    log), a line at each tenth with the time so far and an estimate of what is left, so a long build is never silent
    (issue 65: `rag ask` over an 8 MB file printed nothing for ten minutes)."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.said = -1  # the last tenth said

    def __call__(self, done: int, total: int) -> None:
        if sys.stderr.isatty():
            print(f"\rembedding {done}/{total}", end="", file=sys.stderr)
            return
        tenth = 10 * done // max(total, 1)
        if tenth <= self.said:
            return
        self.said = tenth
        spent = time.perf_counter() - self.t0
        left = spent * (total - done) / done if done else float("nan")
        err(f"embedding {done}/{total} ({tenth * 10}%): {spent:.0f}s spent" + (f", {left:.0f}s to go" if done else ""))


def build(args: argparse.Namespace, default_chunker: str = defaults.CHUNKER) -> Index:
    """Load, chunk (chunker_choice) and index the corpus; or open --kb's bundle."""
    if vars(args).get("kb"):
        return _searchers(args, open_kb(args))
    t0 = time.perf_counter()
    chunker, params = chunker_choice(args, default_chunker)
    docs = load_corpus(args.corpus)
    err(f"read {len(docs)} documents ({sum(len(d.text) for d in docs):,} characters) in {time.perf_counter() - t0:.1f}s")
    emb = embedder(args)
    chunk_set = chunk_documents(docs, chunker, embedder=emb, **params)  # semantic chunking embeds sentences
    err(f"cut into {len(chunk_set.chunks)} chunks ({chunker}); embedding and indexing them (cached vectors are reused)")
    if args.contextual:
        chunk_set = contextualize(args, chunk_set, docs)
    stopwords = load_stopwords() if args.stopwords else frozenset()
    index = build_index(chunk_set, emb, progress=EmbeddingProgress(), stopwords=stopwords,
                        persist_tokens=not args.no_cache)  # the CLI reads files on the user's own machine
    if sys.stderr.isatty():
        print(file=sys.stderr)
    err(f"indexed {len(docs)} documents -> {len(chunk_set.chunks)} chunks ({chunker}) with "
        f"{emb.label} in {time.perf_counter() - t0:.1f}s")
    return _searchers(args, index)


def _searchers(args: argparse.Namespace, index: Index) -> Index:
    """--sparse and --index on a built or opened index."""
    if args.sparse:
        t1 = time.perf_counter()
        index = with_sparse(index)
        assert index.sparse is not None  # with_sparse built it
        err(f"{index.sparse.label}: {len(index.chunks)} chunks in {time.perf_counter() - t1:.1f}s (a third list in RRF)")
    if args.index != "exact":
        t1 = time.perf_counter()
        index = use_index(index, args.index)
        err(f"dense search on {index.searcher.label}, built in {time.perf_counter() - t1:.2f}s")
    return index


def generator(args: argparse.Namespace, emb) -> tuple[Choice, ChatBackend | None]:
    """(the generator that answers, the chat backend rewrites and judges use, or None); says which on stderr."""
    choice, chat = choose_generator(emb, args.generator, local_model(args), offline=bool(vars(args).get("offline")))
    err(f"generator: {choice.label}" + (f" ({choice.reason})" if choice.reason else ""))
    return choice, chat


def reranker(args: argparse.Namespace, emb, chat=None) -> Choice:
    """--reranker (else the offline fallback). The LLM judge reuses `chat` when it is the same bundled model,
    so the model is not loaded twice."""
    from rag.models.local_llm import LocalChat

    def judge_chat():
        wanted = local_model(args)
        return chat if isinstance(chat, LocalChat) and chat.spec.key == wanted else LocalChat(wanted)

    rr = choose_reranker(args.reranker, emb, chat=judge_chat)
    if args.reranker and rr.reason:  # the reranker the user named did not load: say so, do not hide it
        err(f"reranker: {rr.reason}")
    return rr


def judge_totals(rr: Choice | None) -> str:
    """The LLM judge's totals over the run, in one line ("" for any other reranker)."""
    backend = rr.backend if rr is not None else None
    if not isinstance(backend, LLMJudgeReranker) or not backend.totals["pairs"]:
        return ""
    t = backend.totals
    return (f"{backend.name}: {t['pairs']} (question, passage) pairs judged, {t['seconds_per_pair']:.2f} s per pair, "
            f"{t['reached']:.0%} of the candidates reached within {backend.budget_s:g} s per query")


def settings(args: argparse.Namespace, **over) -> AskSettings:
    """The AskSettings the common arguments give (recall_n, depth, RRF k, sparse, citations), with `over`."""
    recall_n = vars(args).get("recall_n") or defaults.RECALL_N
    base = dict(recall_n=recall_n, depth=max(args.depth, recall_n), rrf_k=args.rrf_k, sparse=bool(args.sparse),
                cite=vars(args).get("cite") or defaults.CITE)
    base.update(over)
    return AskSettings(**base)

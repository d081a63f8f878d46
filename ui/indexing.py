"""One session's chunks and index, rebuilt only when what they depend on changes.

The index key hashes (corpus content, chunker, chunker parameters, embedder, BM25 stopwords on/off, BM25's
tokenizer, the learned-sparse list on/off, contextual chunking on/off):
changing the question or a slider never re-embeds the corpus; toggling the stopwords rebuilds BM25 and
reads every vector back from the embedding cache. Building shows a progress bar.
Not handled here: chunking and indexing themselves (rag/ingest/chunking.py, rag/index/build.py).
"""

from __future__ import annotations

import json
import time
from contextlib import nullcontext
from typing import Any, Mapping, MutableMapping

import streamlit as st

from rag.errors import RagError
from rag.index.build import Index, build_index
from rag.index.dense_index import with_sparse
from rag.index.tokenize import load_stopwords, tokenizer_named
from rag.ingest.chunking import NEEDS_EMBEDDER, ChunkSet, chunk_documents
from rag.models.local_llm import DEFAULT_MODEL as DEFAULT_LOCAL_MODEL

from . import indexes, kb, models
from .i18n import t, tr
from .memo import memo
from .render import md_escape
from .settings import index_key
from .worker import run_in_worker


def chunk_set(ss: MutableMapping, method: str, params: Mapping[str, Any]) -> ChunkSet:
    """Chunks of this session's corpus (memoised; chunking is cheap but the preview asks often). Semantic
    chunking embeds sentences with the index's embedder (applied.embedder), through its vector cache."""
    name = ss.get("applied.embedder") if method in NEEDS_EMBEDDER else None
    key = (ss["corpus.hash"], method, json.dumps(dict(params), sort_keys=True), name)
    embedder = models.embedder(name) if name else None
    return memo("chunks", key, lambda: chunk_documents(ss["corpus.docs"], method, embedder=embedder, **params),
                keep=4, ss=ss)


def apply_chunking(ss: MutableMapping, method: str, params: Mapping[str, Any], embedder_name: str) -> None:
    """Make these the settings the index is built with; raises (and changes nothing) when invalid."""
    chunk_set(ss, method, params)  # ConfigError for bad parameters
    models.embedder(embedder_name)  # ModelUnavailableError before we switch
    ss["applied.chunk"] = (method, dict(params))
    ss["applied.embedder"] = embedder_name


def _contextual(ss: MutableMapping, chunks: ChunkSet, bar) -> ChunkSet:
    """Contextual chunking with the session's local model; on failure the plain chunks, with the reason."""
    from rag.ingest.contextual import contextualize

    try:
        chat = models.local_chat(ss.get("llm.local_model") or DEFAULT_LOCAL_MODEL)
        docs = ss["corpus.docs"]
        out, stats = run_in_worker(  # queued behind another session it says so; leaving the page stops it
            lambda control, emit: contextualize(chunks, docs, chat, persist=False,  # an upload stays off disk
                                                progress=lambda d, n: emit("progress", (d, n)), control=control),
            lambda kind, p: bar.progress(p[0] / p[1] if p[1] else 1.0, text=f"{t('context_progress')} {p[0]}/{p[1]}"))
    except RagError as e:
        ss["index.contextual_error"] = str(e)
        return chunks
    ss.pop("index.contextual_error", None)
    ss["index.contextual_stats"] = stats
    return out


def time_left(done: int, total: int, elapsed: float) -> str:
    """"about 3 min left" from the rate so far; nothing until a few seconds and some items have passed."""
    if done <= 0 or done >= total or elapsed < 3:
        return ""
    seconds = (total - done) * elapsed / done
    text = f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"
    return t("time_left").format(text)


def embedding_rate(ss: Mapping) -> float | None:
    """Chunks a second in this session's last build that embedded enough to say (None before one)."""
    info = ss.get("index.info") or {}
    misses, seconds = info.get("cache_misses") or 0, info.get("seconds") or 0
    return misses / seconds if misses >= 200 and seconds > 0 else None


def current_index() -> Index | None:
    """The session's index if it is up to date, else None (never builds)."""
    ss = st.session_state
    return ss.get("index.obj") if ss.get("index.key") == index_key(ss) else None


def get_index() -> Index:
    """The session's index, (re)built with a progress bar only when its key changed."""
    ss = st.session_state
    key = index_key(ss)
    if ss.get("index.key") == key and ss.get("index.obj") is not None:
        return ss["index.obj"]
    held = ss.get("corpus.kb")  # the class's knowledge base with its own settings: the one shared copy
    name = md_escape(held[0]) if held else ""
    with st.spinner(tr(zh=f"正在打开班级知识库 {name}（全班共用一份；另一个会话正在载入它时，这里等它载完）…",
                       en=f"Opening the class knowledge base {name} (one copy for the class; when another session is "
                       "loading it, this waits for that load)…")) if held and held[1] == key else nullcontext():
        shared = kb.shared_index(ss, key)
    if shared is not None:
        return _installed(ss, shared, key, 0.0)
    method, params = ss["applied.chunk"]
    chunks = chunk_set(ss, method, params)
    embedder = models.embedder(ss["applied.embedder"])
    bar = st.progress(0.0, text=f"{t('embedding_progress')} 0/{len(chunks.chunks)}")
    started = time.perf_counter()

    def progress(done: int, total: int) -> None:
        left = time_left(done, total, time.perf_counter() - started)
        bar.progress(min(1.0, done / total) if total else 1.0,
                     text=f"{t('embedding_progress')} {done}/{total}" + (f" · {left}" if left else ""))

    t0 = time.perf_counter()
    if ss.get("index.contextual"):
        chunks = _contextual(ss, chunks, bar)
    stopwords = load_stopwords() if ss.get("index.stopwords") else frozenset()
    index = build_index(chunks, embedder, progress=progress, stopwords=stopwords,
                        tokenizer=tokenizer_named(ss.get("index.tokenizer") or "jieba"))
    if ss.get("index.sparse"):
        bar.progress(0.0, text=t("sparse_progress"))
        try:
            index = with_sparse(index, lambda d, n: bar.progress(min(1.0, d / n) if n else 1.0,
                                                               text=f"{t('sparse_progress')} {d}/{n}"))
        except RagError as e:  # an embedder without a sparse head: the two-way index still works
            ss["index.sparse_error"] = str(e)
        else:
            ss.pop("index.sparse_error", None)
    bar.empty()
    return _installed(ss, index, key, time.perf_counter() - t0)


def _installed(ss: MutableMapping, index: Index, key: str, seconds: float) -> Index:
    """`index` as the session's, the old one's searchers and results let go."""
    ss["index.obj"], ss["index.key"] = index, key
    ss["index.info"] = {
        "seconds": seconds,
        "cache_hits": index.cache_hits,
        "cache_misses": index.cache_misses,
        "kb": index.origin,
    }
    indexes.release(ss)  # the old index's approximate indexes and Milvus collection
    for kind in ("retrieval", "rerank", "pca"):  # results of the old index are stale
        ss.pop(f"memo.{kind}", None)
    return index

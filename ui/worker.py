"""Run a model call (an answer, a loop, an evaluation, a judge, a rewrite) in a worker thread, so the page can
say it is queued, show its progress, and stop it when the user presses Stop, reruns or leaves.

`run_in_worker(work, on_event)` calls `work(control, emit)` in another thread. `control` is the run's
RunControl: every model call in the run takes it, so a call waiting behind another session says "queued"
(shown here as a notice) and a stopped page stops the call at its next token or while it waits. `emit(kind,
payload)` is how the work reports progress; `on_event(kind, payload)` draws it, in the page's thread (only
the page's thread touches Streamlit). While it waits, the page touches a placeholder twice a second: that is
when Streamlit notices a Stop or a rerun, raises in the page's thread, and the `finally` below stops the run.
The work's exception is re-raised here without its traceback, so no frame of the worker (and no generator
holding the shared model) outlives the run.
Not handled here: what the work does (rag/), drawing its result (the page).
"""

from __future__ import annotations

import queue
import threading
import time
from typing import Any, Callable, TypeVar

import streamlit as st

from rag.models.control import RunControl

from .i18n import tr

T = TypeVar("T")
_DONE = object()
HEARTBEAT_S = 0.5  # how often a waiting page gives Streamlit the chance to see a Stop


def queued_text() -> str:
    return tr(zh="本地模型正被另一个会话使用：已排队，轮到时会自动开始。可以随时停止。",
              en="The local model is busy with another session: this is queued and starts by itself when it is free. "
              "You can stop it at any time.")


def run_in_worker(work: Callable[[RunControl, Callable[[str, Any], None]], T],
                  on_event: Callable[[str, Any], None] | None = None, name: str = "rag-work",
                  observe: Callable[[str, Any], None] | None = None) -> T:
    """`work(control, emit)` in a worker thread; its result, or its exception re-raised here. `observe(kind,
    payload)`, if given, sees every event first, the backend's "queued" and "running" too (the classroom
    bench, bench/bench_sessions.py, counts and times them through it)."""
    events: queue.Queue = queue.Queue()
    control = RunControl(on_status=lambda message: events.put(("status", message)))
    outcome: dict = {}

    def emit(kind: str, payload=None) -> None:
        events.put((kind, payload))

    def target() -> None:
        try:
            outcome["value"] = work(control, emit)
        except BaseException as exc:  # handed to the page's thread, which shows or re-raises it
            outcome["error"] = exc.with_traceback(None)
        finally:
            events.put(_DONE)

    notice = st.empty()
    beat = st.empty()
    worker = threading.Thread(target=target, name=name, daemon=True)
    worker.start()
    last = time.monotonic()
    try:
        while True:
            try:
                item = events.get(timeout=HEARTBEAT_S)
            except queue.Empty:
                beat.empty()  # a Streamlit call: a Stop or a rerun raises here, and the finally stops the run
                continue
            if item is _DONE:
                break
            kind, payload = item
            if observe is not None:
                observe(kind, payload)
            if kind == "status":
                if payload == "queued":
                    notice.info(queued_text(), icon=":material/hourglass_top:")
                elif payload == "running":
                    notice.empty()
                elif on_event is not None:
                    on_event("status", payload)
            elif on_event is not None:
                on_event(kind, payload)
            if time.monotonic() - last > HEARTBEAT_S:
                beat.empty()
                last = time.monotonic()
    finally:
        control.stop()  # a no-op when the work is done; otherwise the page went away mid-run
    worker.join()
    notice.empty()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]

"""The handle every model call takes (`RunControl`), and taking a model's lock in a queue (`acquire_queued`).

A call to a model runs in another thread while the page waits; the caller keeps a RunControl to stop it, to hear
that it is queued behind another session, and to read its figures. Any backend (the endpoint client, llm.py; the
bundled model, local_llm.py; llama.cpp's server) takes one, so it lives apart from every client.
Not handled here: the backends themselves.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from rag.errors import GenerationCancelled


class RunControl:
    """One call's handle, held by the caller while a backend works in another thread.

    - `stop()` asks the backend to end the call at its next token (it then raises GenerationCancelled and
      frees the model); a loop between model calls calls `check()`, which raises once stopped;
    - `status(msg)` is how a backend says it is waiting ("queued" behind another session) or running;
    - `stats` is where a backend reports this call's figures (first-token latency, tokens, decode time, and
      "waited_s", the seconds spent queued for the model), so a shared backend keeps no per-call state;
    - `note(msg)` is where a backend says what it could not honour (an endpoint given a grammar); the
      pipeline copies these notes into the trace.
    One control may serve every call of a run (a question's rewrite, rerank, answer, audit).
    """

    def __init__(self, on_status: Callable[[str], None] | None = None):
        self._stop = threading.Event()
        self.on_status = on_status
        self.stats: dict[str, float] = {}
        self.notes: list[str] = []

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def check(self, what: str = "the run") -> None:
        """Raise GenerationCancelled if the caller has stopped this run (between two model calls)."""
        if self._stop.is_set():
            raise GenerationCancelled(f"{what} was stopped")

    def status(self, message: str) -> None:
        if self.on_status is not None:
            self.on_status(message)

    def note(self, message: str) -> None:
        if message not in self.notes:
            self.notes.append(message)

    def waited(self, seconds: float) -> None:
        self.stats["waited_s"] = self.stats.get("waited_s", 0.0) + seconds


def acquire_queued(lock: threading.Lock | threading.Semaphore, control: RunControl | None, label: str,
                   what: str) -> None:
    """Take `lock` (a model's lock, a server's slots) for a call: a caller that has to wait hears "queued", may stop
    while it waits (GenerationCancelled), and the seconds it waited go to control.stats["waited_s"], so a time
    budget can count only the time it held the model. `what` names the thing waited for, in the stop message."""
    if control is not None:
        control.check(f"{label}: the call")
    if lock.acquire(blocking=False):
        return
    t0 = time.perf_counter()
    if control is not None:
        control.status("queued")
    try:
        while not lock.acquire(timeout=0.05):
            if control is not None and control.stopped:
                raise GenerationCancelled(f"{label}: stopped while queued for {what}")
    finally:
        if control is not None:
            control.waited(time.perf_counter() - t0)

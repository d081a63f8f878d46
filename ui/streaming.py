"""Stream `rag.pipeline.ask` into the page while it runs.

`ask` reports each answer delta through a callback; `st.write_stream` wants an iterator. The pipeline
runs in a worker thread that puts deltas on a queue, and the page's thread drains the queue into
`st.write_stream`. Only the page's thread touches Streamlit. The worker's exception, if any, is
re-raised in the page's thread after the stream ends, so the page shows it with st.error.
Not handled here: what `ask` does (rag/pipeline.py), rendering the finished trace (app_pages/5_answer.py).
"""

from __future__ import annotations

import queue
import threading
from typing import Iterator

import streamlit as st

from rag.pipeline import ask
from rag.trace import AskSettings, Trace

_DONE = object()


def ask_streaming(question: str, index, settings: AskSettings, generator, reranker=None, chat=None) -> Trace:
    """Run `ask`, showing the answer as it is written; returns the finished Trace."""
    deltas: queue.Queue = queue.Queue()
    outcome: dict = {}

    def work() -> None:
        try:
            outcome["trace"] = ask(question, index, settings, generator, reranker=reranker, chat=chat,
                                   on_delta=deltas.put)
        except BaseException as exc:  # handed to the page's thread, which shows or re-raises it
            outcome["error"] = exc
        finally:
            deltas.put(_DONE)

    def stream() -> Iterator[str]:
        while True:
            item = deltas.get()
            if item is _DONE:
                return
            yield item

    worker = threading.Thread(target=work, name="rag-ask", daemon=True)
    worker.start()
    st.write_stream(stream())
    worker.join()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["trace"]

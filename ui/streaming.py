"""Stream `rag.pipeline.ask` into the page while it runs, and stop it when the page goes away.

`ask` reports each answer delta through a callback; `st.write_stream` wants an iterator. The pipeline
runs in a worker thread that puts deltas on a queue, and the page's thread drains the queue into
`st.write_stream`. Only the page's thread touches Streamlit. The worker's exception, if any, is
re-raised in the page's thread after the stream ends, so the page shows it with st.error.

Stopping: the worker gets a RunControl. When the page's run ends early (the Stop button, a rerun
because a widget changed, leaving the page, closing the tab), Streamlit raises in the page's thread;
the `finally` below then stops the worker's generation at its next token, so it neither keeps the
shared local model busy nor goes on to the no-RAG answer. A generation queued behind another
session's says so on the page while it waits.
Not handled here: what `ask` does (rag/pipeline.py), rendering the finished trace (app_pages/5_answer.py).
"""

from __future__ import annotations

import queue
import threading
from typing import Iterator

import streamlit as st

from rag.models.llm import RunControl
from rag.pipeline import ask
from rag.trace import AskSettings, Trace

from .i18n import tr

_DONE = object()


class _Status(str):
    """A status message from the backend, told apart from answer text on the same queue."""


def ask_streaming(question: str, index, settings: AskSettings, generator, reranker=None, chat=None,
                  opinion_chat=None) -> Trace:
    """Run `ask`, showing the answer as it is written; returns the finished Trace."""
    deltas: queue.Queue = queue.Queue()
    outcome: dict = {}
    control = RunControl(on_status=lambda message: deltas.put(_Status(message)))
    notice = st.empty()

    def work() -> None:
        try:
            outcome["trace"] = ask(question, index, settings, generator, reranker=reranker, chat=chat,
                                   on_delta=deltas.put, control=control, opinion_chat=opinion_chat)
        except BaseException as exc:  # handed to the page's thread, which shows or re-raises it
            outcome["error"] = exc
        finally:
            deltas.put(_DONE)

    def stream() -> Iterator[str]:
        while True:
            item = deltas.get()
            if item is _DONE:
                return
            if isinstance(item, _Status):
                if item == "queued":
                    notice.info(tr("本地模型正被另一个会话使用：你的问题已排队，轮到时会自动开始。",
                                   "The local model is busy with another session: your question is queued "
                                   "and starts by itself when it is free."), icon=":material/hourglass_top:")
                elif item == "running":
                    notice.empty()
                elif item == "no-rag":
                    notice.caption(tr("正在生成“无 RAG”对照回答…", "Now answering without RAG, for comparison…"))
                continue
            yield item

    worker = threading.Thread(target=work, name="rag-ask", daemon=True)
    worker.start()
    try:
        st.write_stream(stream())
    finally:
        control.stop()  # a no-op when the work is done; otherwise the page went away mid-answer
    worker.join()
    notice.empty()
    if "error" in outcome:
        raise outcome["error"]
    return outcome["trace"]

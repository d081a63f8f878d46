"""Stream `rag.pipeline.ask` into the page while it runs, and stop it when the page goes away.

`ask` reports each answer delta through a callback; the run goes through ui/worker.py, so the pipeline works
in a worker thread and the page's thread draws what arrives: the answer so far (as escaped text, never
Markdown: it is the model's), a "queued behind another session" notice while the shared model is busy, and
"now answering without RAG" before the control answer. Stop, a rerun, leaving the page or closing the tab
stop the run's RunControl: its model call ends at the next token (or while it waits) and nothing after it
starts. The worker's exception is re-raised in the page's thread, so the page shows it with st.error.
Not handled here: what `ask` does (rag/pipeline.py), rendering the finished trace (app_pages/5_answer.py).
"""

from __future__ import annotations

import html
import time

import streamlit as st

from rag.pipeline import ask
from rag.run import RunContext
from rag.trace import AskSettings, Trace

from .i18n import tr
from .worker import run_in_worker

REDRAW_S = 0.1  # the answer box is redrawn at most this often while text streams in


def ask_streaming(question: str, index, settings: AskSettings, generator, reranker=None, chat=None,
                  opinion_chat=None, observe=None) -> Trace:
    """Run `ask`, showing the answer as it is written; returns the finished Trace. `observe(kind, payload)`
    sees every event of the run (ui/worker.py), for a measurement."""
    box = st.empty()
    note = st.empty()
    box.caption(":material/hourglass_top: " + tr(
        zh="检索、重排、判断能否回答、压缩资料，然后模型读提示词；回答一开始就会逐字出现在这里。",
        en="Retrieving, reranking, checking the contexts can answer, compressing them, then the model reads the prompt; "
        "the answer appears here word by word as soon as it starts."))
    text: list[str] = []
    drawn = [0.0]

    def draw(force: bool = False) -> None:
        if force or time.monotonic() - drawn[0] >= REDRAW_S:
            drawn[0] = time.monotonic()
            box.html(f"<div style='white-space:pre-wrap;line-height:1.8'>{html.escape(''.join(text))}▍</div>")

    def on_event(kind: str, payload) -> None:
        if kind == "delta":
            text.append(payload)
            draw()
        elif kind == "status" and payload == "no-rag":
            draw(force=True)
            note.caption(tr(zh="正在生成“无 RAG”对照回答…", en="Now answering without RAG, for comparison…"))

    def work(control, emit) -> Trace:
        return ask(question, RunContext(index, settings, generator, chat, reranker, control, opinion=opinion_chat),
                   on_delta=lambda d: emit("delta", d))

    try:
        return run_in_worker(work, on_event, name="rag-ask", observe=observe)
    finally:
        box.empty()
        note.empty()

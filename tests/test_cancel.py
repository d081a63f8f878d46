"""Stopping an answer: when the page's run ends mid-answer (Stop, a rerun, leaving the page), the
generation ends at its next delta, the stream to the model is closed, and the no-RAG answer is never
requested. Against the fake OpenAI server with a slow trickle, through the real `openai` client."""

from __future__ import annotations

import threading

import pytest

from rag.answer.generation import LLMGenerator
from rag.errors import GenerationCancelled
from rag.models.control import RunControl
from rag.models.llm import OpenAIChat
from rag.pipeline import ask
from rag.run import RunContext
from rag.trace import AskSettings

SLOW = {"content": "第一句很长很长很长。" * 20, "chunk_size": 2, "chunk_delay": 0.05}


def test_stopping_mid_answer_ends_the_stream_and_skips_the_no_rag_call(fake_llm, kb_index):
    fake_llm.queue(SLOW, SLOW)
    gen = LLMGenerator(OpenAIChat(fake_llm.config()))
    control = RunControl()
    seen: list[str] = []

    def on_delta(d: str) -> None:
        seen.append(d)
        if len(seen) == 3:
            control.stop()  # what ui/streaming does when the page's run is interrupted

    with pytest.raises(GenerationCancelled):
        ask("什么是过拟合？", RunContext(kb_index, AskSettings(compare_no_rag=True), gen, control=control), on_delta=on_delta)
    assert len(seen) == 3  # not one delta more
    assert len(fake_llm.chat_requests) == 1  # the no-RAG answer was never asked for


def test_the_page_going_away_stops_the_worker(fake_llm, kb_index, monkeypatch):
    """ui/streaming.ask_streaming: Streamlit raises in the page's thread (here: when the first delta is drawn);
    the worker must stop at its next delta and never start the no-RAG answer."""
    from ui import streaming, worker

    fake_llm.queue(SLOW, SLOW)
    gen = LLMGenerator(OpenAIChat(fake_llm.config()))

    class PageGone(Exception):
        """Stands in for Streamlit's StopException / RerunException raised into the script thread."""

    class Placeholder:
        def html(self, *a, **k):
            raise PageGone  # the first redraw of the answer box is where the page notices it is gone

        def empty(self, *a, **k):
            pass

        info = caption = empty

    started: list[threading.Thread] = []

    class Recorded(threading.Thread):  # the worker thread itself, however quickly it ends
        def start(self):
            started.append(self)
            super().start()

    monkeypatch.setattr(streaming.st, "empty", Placeholder)
    monkeypatch.setattr(worker.st, "empty", Placeholder)
    monkeypatch.setattr(worker.threading, "Thread", Recorded)
    with pytest.raises(PageGone):
        streaming.ask_streaming("什么是过拟合？", kb_index, AskSettings(compare_no_rag=True), gen)
    workers = [t for t in started if t.name == "rag-ask"]
    assert len(workers) == 1
    workers[0].join(timeout=60)
    assert not workers[0].is_alive()  # it stopped at its next delta (the answer is 200 chars at 0.05 s a delta)
    assert len(fake_llm.chat_requests) == 1  # the worker is done, and it never started the no-RAG answer


def test_a_queued_run_shows_the_notice_and_clears_it_when_it_runs(monkeypatch):
    """ui/worker.py, which every page's model call goes through (answer, loops, evaluation, judge, rewrites):
    the backend's "queued" status becomes the notice in the page, and "running" clears it."""
    from ui import worker

    shown: list[tuple[str, str]] = []

    class Placeholder:
        def info(self, text, **k):
            shown.append(("info", text))

        def empty(self):
            shown.append(("empty", ""))

    monkeypatch.setattr(worker.st, "empty", Placeholder)

    def work(control, emit):
        control.status("queued")
        control.status("running")
        return "done"

    assert worker.run_in_worker(work) == "done"
    infos = [i for i, (kind, _) in enumerate(shown) if kind == "info"]
    assert len(infos) == 1 and shown[infos[0]][1] == worker.queued_text()
    assert ("empty", "") in shown[infos[0] + 1:]  # cleared once the run had the model

"""Contextual chunking (rag/ingest/contextual.py): one generated sentence per chunk, prepended for the index
only, cached, and with the document first in the prompt so its chunks share the prompt's start."""

from __future__ import annotations

from collections import OrderedDict

import pytest

from rag.errors import ConfigError
from rag.index.build import build_index
from rag.ingest import contextual
from rag.ingest.chunking import chunk_documents
from rag.ingest.contextual import contextualize, index_text
from rag.ingest.documents import Document
from tests.fake_chat import FakeChat
from tests.fakes import BigramEmbedder

DOC = Document("h", "# 手册\n\n## 期中项目\n\n提交方式：第 10 周周五之前上传压缩包。\n\n## 期末项目\n\n提交方式：第 15 周周日之前提交代码。")


class RecordingChat(FakeChat):
    """A chat stand-in for this test only: it answers with a fixed sentence and records the prompts."""

    def __init__(self):
        super().__init__(reply=self._answer, label="recording chat (test)")
        self.prompts = []

    def _answer(self, messages, grammar):
        self.prompts.append(messages[-1]["content"])
        return f"这段讲的是第 {len(self.prompts)} 个项目的提交方式。后面的话不要。"


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch, tmp_path):
    monkeypatch.setattr(contextual, "_memory", OrderedDict())
    monkeypatch.setenv("RAG_CACHE_DIR", str(tmp_path))


def test_each_chunk_gets_one_sentence_for_the_index_only():
    cs = chunk_documents([DOC], "markdown")
    chat = RecordingChat()
    out, stats = contextualize(cs, [DOC], chat)
    assert stats["generated"] == len(cs.chunks) == 2
    for before, after in zip(cs.chunks, out.chunks):
        assert (after.text, after.start, after.end) == (before.text, before.start, before.end)  # the chunk is unchanged
        assert after.metadata["context"].endswith("提交方式。")  # the first sentence only
        assert index_text(after) == after.metadata["context"] + "\n" + after.text
    # every prompt opens with the whole document, so the chunks of one document share the prompt's start
    assert all(p.startswith("<文档>\n" + DOC.text) for p in chat.prompts)
    index = build_index(out, BigramEmbedder())
    assert "这段" in index.bm25.vocab and "这段" not in DOC.text  # BM25 counted the contexts' words


def test_contexts_are_cached_in_memory_and_on_disk_when_asked(monkeypatch):
    cs = chunk_documents([DOC], "markdown")
    first, _ = contextualize(cs, [DOC], RecordingChat(), persist=True)
    again, stats = contextualize(cs, [DOC], RecordingChat())
    assert stats == {**stats, "generated": 0, "cached": 2}
    monkeypatch.setattr(contextual, "_memory", OrderedDict())  # a new process: the disk cache answers
    disk, stats = contextualize(cs, [DOC], RecordingChat(), persist=True)
    assert stats["generated"] == 0 and [c.metadata["context"] for c in disk.chunks] == \
        [c.metadata["context"] for c in first.chunks]


def test_a_whole_document_chunk_needs_no_context_and_no_model_is_an_error():
    cs = chunk_documents([DOC], "document")
    out, stats = contextualize(cs, [DOC], RecordingChat())
    assert stats["generated"] == 0 and "context" not in out.chunks[0].metadata
    with pytest.raises(ConfigError, match="language model"):
        contextualize(cs, [DOC], None)


def test_contextual_chunking_runs_through_a_real_openai_client_against_an_endpoint(fake_llm):
    """Bug: contextualize passed max_tokens and temperature, which OpenAIChat.complete did not take (TypeError
    on any endpoint). Now through the real `openai` client against the local fake server."""
    from rag.models.llm import OpenAIChat

    fake_llm.queue({"content": "这段讲期中项目怎么交。其余不要。"}, {"content": "这段讲期末项目怎么交。"})
    cs = chunk_documents([DOC], "markdown")
    out, stats = contextualize(cs, [DOC], OpenAIChat(fake_llm.config()))
    assert stats["generated"] == 2
    assert [c.metadata["context"] for c in out.chunks] == ["这段讲期中项目怎么交。", "这段讲期末项目怎么交。"]
    sent = [r.body for r in fake_llm.chat_requests]
    assert all(b["max_tokens"] == contextual.MAX_TOKENS and b["temperature"] == 0.0 for b in sent)
    assert all(DOC.text in b["messages"][-1]["content"] for b in sent)


def test_stopping_contextual_chunking_ends_it_between_chunks():
    from rag.errors import GenerationCancelled
    from rag.models.control import RunControl

    cs = chunk_documents([DOC], "markdown")
    control = RunControl()
    chat = RecordingChat()
    with pytest.raises(GenerationCancelled):
        contextualize(cs, [DOC], chat, progress=lambda i, n: control.stop(), control=control)
    assert len(chat.prompts) == 1  # the first chunk's call ran; the second never started

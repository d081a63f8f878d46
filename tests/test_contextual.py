"""Contextual chunking (rag/ingest/contextual.py): one generated sentence per chunk, prepended for the index
only, cached, and with the document first in the prompt so its chunks share the prompt's start."""

from __future__ import annotations

import pytest

from rag.errors import ConfigError
from rag.index.build import build_index
from rag.ingest import contextual
from rag.ingest.chunking import chunk_documents
from rag.ingest.contextual import contextualize, index_text
from rag.ingest.documents import Document
from tests.fakes import BigramEmbedder

DOC = Document("h", "# 手册\n\n## 期中项目\n\n提交方式：第 10 周周五之前上传压缩包。\n\n## 期末项目\n\n提交方式：第 15 周周日之前提交代码。")


class RecordingChat:
    """A chat stand-in for this test only: it answers with a fixed sentence and records the prompts."""

    label = "recording chat (test)"

    def __init__(self):
        self.prompts = []

    def complete(self, messages, stream=False, temperature=None, *, max_tokens=None, **_):
        self.prompts.append(messages[-1]["content"])
        return f"这段讲的是第 {len(self.prompts)} 个项目的提交方式。后面的话不要。"


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch, tmp_path):
    monkeypatch.setattr(contextual, "_memory", {})
    monkeypatch.setenv("RAG_CACHE_DIR", str(tmp_path))


def test_each_chunk_gets_one_sentence_for_the_index_only():
    cs = chunk_documents([DOC], "markdown")
    chat = RecordingChat()
    out, stats = contextualize(cs, [DOC], chat)
    assert stats["generated"] == len(cs.chunks) == 2
    for before, after in zip(cs.chunks, out.chunks):
        assert after.text == before.text == DOC.text[after.start:after.end]  # the chunk itself is unchanged
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
    monkeypatch.setattr(contextual, "_memory", {})  # a new process: the disk cache answers
    disk, stats = contextualize(cs, [DOC], RecordingChat(), persist=True)
    assert stats["generated"] == 0 and [c.metadata["context"] for c in disk.chunks] == \
        [c.metadata["context"] for c in first.chunks]


def test_a_whole_document_chunk_needs_no_context_and_no_model_is_an_error():
    cs = chunk_documents([DOC], "document")
    out, stats = contextualize(cs, [DOC], RecordingChat())
    assert stats["generated"] == 0 and "context" not in out.chunks[0].metadata
    with pytest.raises(ConfigError, match="language model"):
        contextualize(cs, [DOC], None)

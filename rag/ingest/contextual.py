"""Contextual chunking (Anthropic, "Contextual Retrieval", 2024): before a chunk is embedded and indexed for
BM25, the local model writes one sentence that places it in its document, and that sentence is prepended.

A chunk such as "提交方式：第 10 周周五 18:00 之前……" does not say which project it is about; its document
does. The model reads the whole document, then the chunk, and writes the missing context ("这段是课程手册第五章
期中项目的提交要求。"). Only the index sees it: `index_text(chunk)` is context + chunk for the embedder and
BM25, while the chunk itself (what a page highlights, what the generator reads, what a citation points to)
stays the document's own slice. The document comes first in the prompt and the chunk last, so every chunk of
one document shares the prompt's start and llama.cpp keeps it in its KV cache: the cost is per chunk (its own
tokens and one sentence of output), not per document.

Contexts are cached by sha1(model, prompt version, document, chunk): in memory for everyone, on disk (next to
the embedding cache) only when the caller asks, as the CLI does; the app keeps an upload's contexts out of
files, because they paraphrase it. A document longer than the model's window is cut to the part around the
chunk (those chunks then share less of their prompt).
Not handled here: the model (rag/models/local_llm.py), the chunkers (chunking.py).
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
from collections import OrderedDict
from dataclasses import replace
from pathlib import Path
from typing import Callable, Sequence

from rag.errors import ConfigError
from rag.ingest.chunking import Chunk, ChunkSet
from rag.ingest.documents import Document
from rag.ingest.language import detect_lang
from rag.ingest.sentences import without_line_markers
from rag.models.control import RunControl
from rag.models.embedding_cache import default_cache_dir

PROMPT_VERSION = "ctx-v1"
MAX_TOKENS = 80  # one sentence
PROMPTS = {
    "zh": ("你为一个检索系统写上下文说明。",
           "<文档>\n{doc}\n</文档>\n\n下面是这篇文档中的一段：\n<段落>\n{chunk}\n</段落>\n\n"
           "用一句话说明这一段在整篇文档中讲的是什么、属于哪一部分，让人不看全文也能明白它的主题。只输出这一句话。"),
    "en": ("You write context notes for a search index.",
           "<document>\n{doc}\n</document>\n\nHere is a passage of this document:\n<passage>\n{chunk}\n</passage>\n\n"
           "In one sentence, say what this passage is about and which part of the document it belongs to, so that "
           "it makes sense without the rest. Output only that sentence."),
}
MEMORY_ENTRIES = 4096  # contexts kept in memory (about 100 bytes each), least recently used dropped first
_memory: OrderedDict[str, str] = OrderedDict()  # key -> context sentence, shared by every session: bounded, and
_memory_lock = threading.Lock()  # keyed by a hash of the text, so one user's upload is never shown to another


def index_text(chunk: Chunk) -> str:
    """What the embedder and BM25 read for a chunk: its context sentence first, when it has one; a list item without
    its marker ("- ", "2. " say where an item begins, which a quote needs and a search does not)."""
    context = chunk.metadata.get("context", "")
    text = without_line_markers(chunk.text)
    return f"{context}\n{text}" if context else text


def _key(model: str, doc: str, chunk: str) -> str:
    h = hashlib.sha1(f"{PROMPT_VERSION}\0{model}\0".encode())
    h.update(doc.encode("utf-8", "surrogatepass") + b"\0" + chunk.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def _db_path() -> Path:
    return default_cache_dir() / "contexts.sqlite"


def _disk(path: Path, key: str, value: str | None = None) -> str | None:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=30)
    try:
        with db:
            db.execute("CREATE TABLE IF NOT EXISTS contexts (key TEXT PRIMARY KEY, context TEXT NOT NULL)")
            if value is not None:
                db.execute("INSERT OR REPLACE INTO contexts VALUES (?, ?)", (key, value))
                return value
            row = db.execute("SELECT context FROM contexts WHERE key = ?", (key,)).fetchone()
            return row[0] if row else None
    finally:
        db.close()


def _first_sentence(text: str) -> str:
    text = " ".join(text.replace("<段落>", "").replace("</段落>", "").split())
    for end in ("。", "！", "？", ". ", "! ", "? "):
        i = text.find(end)
        if 0 < i < len(text) - len(end):
            return text[: i + len(end)].strip()
    return text.strip()


def _document_part(chat, doc: str, chunk: Chunk, messages_for: Callable[[str], list[dict]]) -> str:
    """The whole document if the prompt fits the model's window, else the part around the chunk."""
    budget, count = chat.prompt_budget, chat.count_tokens
    if budget is None or count(messages_for(doc)) <= budget:  # an endpoint says no budget: it gets the document
        return doc
    width = max(len(chunk.text) * 2, 400)
    while width > len(chunk.text):
        a, b = max(0, chunk.start - width), min(len(doc), chunk.end + width)
        part = ("…" if a else "") + doc[a:b] + ("…" if b < len(doc) else "")
        if count(messages_for(part)) <= budget:
            return part
        width //= 2
    return chunk.text


def _remembered(key: str, persist: bool) -> str | None:
    """A context written before for this chunk of this document by this model: in memory, else on disk (`persist`)."""
    with _memory_lock:
        context = _memory.get(key)
        if context is not None:
            _memory.move_to_end(key)
    if context is None and persist:
        context = _disk(_db_path(), key)
    return context


def _written(chat, doc: Document, chunk, control: RunControl) -> str:
    """The model's one sentence situating `chunk` in `doc`, in the document's language."""
    lang = "zh" if detect_lang(doc.text) == "zh" else "en"
    system, user = PROMPTS[lang]

    def messages_for(text: str) -> list[dict]:
        return [{"role": "system", "content": system},
                {"role": "user", "content": user.format(doc=text, chunk=chunk.text)}]

    answer = chat.complete(messages_for(_document_part(chat, doc.text, chunk, messages_for)),
                           max_tokens=MAX_TOKENS, temperature=0.0, control=control)
    return _first_sentence(str(answer))


def contextualize(chunk_set: ChunkSet, docs: Sequence[Document], chat, persist: bool = False,
                  progress: Callable[[int, int], None] | None = None,
                  control: RunControl | None = None) -> tuple[ChunkSet, dict]:
    """`chunk_set` with metadata["context"] on every indexed chunk, and what it cost:
    {"generated": n, "cached": n, "seconds": s, "seconds_per_generated": s}. `control` queues, stops and
    times each model call (and is checked between chunks)."""
    if chat is None:
        raise ConfigError("contextual chunking needs a language model (the bundled local model, or an endpoint)")
    control = control if control is not None else RunControl()
    by_id = {d.doc_id: d for d in docs}
    model = chat.label
    out, generated, cached = [], 0, 0
    t0 = time.perf_counter()
    for i, chunk in enumerate(chunk_set.chunks, 1):
        control.check("contextual chunking")
        doc = by_id.get(chunk.doc_id)
        if doc is None or doc.text.strip() == chunk.text.strip():  # a whole-document chunk needs no context
            out.append(chunk)
        else:
            key = _key(model, doc.text, chunk.text)
            context = _remembered(key, persist)
            if context is None:
                context = _written(chat, doc, chunk, control)
                generated += 1
                if persist:
                    _disk(_db_path(), key, context)
            else:
                cached += 1
            with _memory_lock:
                _memory[key] = context
                while len(_memory) > MEMORY_ENTRIES:
                    _memory.popitem(last=False)
            out.append(replace(chunk, metadata={**chunk.metadata, "context": context}))
        if progress is not None:
            progress(i, len(chunk_set.chunks))
    seconds = time.perf_counter() - t0
    stats = {"generated": generated, "cached": cached, "seconds": seconds,
             "seconds_per_generated": seconds / generated if generated else 0.0}
    return replace(chunk_set, chunks=out, params={**chunk_set.params, "contextual": model}), stats

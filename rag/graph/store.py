"""The graph of an index, built once and kept on it (`index.graph`).

`attach(index)` with no model uses, for every chunk, the bundled model's extraction when one is cached or
shipped (data/graph/extractions.jsonl covers the bundled corpora), and jieba's for the others; the label says
how many came from each. With a chat backend, the chunks without an extraction are sent to that model (cost:
model seconds per chunk). Building holds a lock of that index, so two callers sharing one index build it once
and a long extraction of one session's upload never waits on, or blocks, another's.

Not handled here: extraction (extraction.py), the graph itself (graph.py), community summaries (rag/loops/community.py: they read the audit, a later wing).
"""

from __future__ import annotations

import threading
import time
import weakref
from typing import Any

from rag.graph import extraction
from rag.graph.graph import CorpusGraph, build_graph
from rag.messages import Msg, join, localized
from rag.models.control import RunControl
from rag.models.local_llm import local_label

_lock = threading.Lock()


_index_locks: dict[int, threading.Lock] = {}  # id(index) -> its graph's lock, dropped when the index is collected


def _index_lock(index) -> threading.Lock:
    """One lock per index, kept here: a session extracting its upload for minutes holds its own index, nobody
    else's."""
    with _lock:
        lock = _index_locks.get(id(index))
        if lock is None:
            lock = _index_locks[id(index)] = threading.Lock()
            weakref.finalize(index, _index_locks.pop, id(index), None)
        return lock


def attach(index, chat=None, control: RunControl | None = None, progress=None, only_missing: bool = False) -> CorpusGraph:
    """`index.graph`, built now if it is missing. With `chat`, every chunk that `chat`'s model has not extracted
    is sent to it (its cache answers for those it has seen); with `only_missing`, only the chunks that have no
    model extraction at all (jieba's stand-in). A Stop or a failing endpoint raises, and the graph the index had
    stays."""
    with _index_lock(index):
        have = index.graph
        if have is not None and not _to_extract(have.extractions.values(), chat, only_missing):
            return have
        chunks = index.chunks
        t0 = time.perf_counter()
        bundled = local_label()
        exs: list = []
        for c in chunks:  # what the graph has, else the shipped or cached extraction, else jieba's stand-in
            ex = have.extractions.get(c.chunk_id) if have is not None else None
            if ex is None or ex.extractor == extraction.JIEBA_LABEL:
                ex = extraction.cached(bundled, c.text) or extraction.jieba_extract(c.text)
            exs.append(ex)
        cost: dict[str, Any] = {"generated": 0, "cached": 0, "failed": 0, "model_seconds": 0.0}
        todo = _to_extract(exs, chat, only_missing)
        if todo:
            done, cost = extraction.extract_all([chunks[i].text for i in todo], chat, control, progress)
            for i, ex in zip(todo, done):
                exs[i] = ex
        from_model = sum(ex.extractor != extraction.JIEBA_LABEL for ex in exs)
        models = sorted({ex.extractor for ex in exs if ex.extractor != extraction.JIEBA_LABEL})
        named = join([bundled if m == bundled else m for m in models], " + ", " + ") if models else bundled
        cost.update(extractor=_mixed_label(named, from_model, len(chunks), shipped=chat is None),
                    model_seconds=sum(ex.seconds for ex in exs if ex.extractor != extraction.JIEBA_LABEL),
                    seconds=time.perf_counter() - t0)
        graph = build_graph(chunks, exs, index.embedder, cost)
        index.graph = graph
        return graph


def _to_extract(exs, chat, only_missing: bool) -> list[int]:
    """Positions of the extractions `chat` should (re)do: none without a chat; jieba's with `only_missing`; else
    every one that is not `chat`'s own."""
    if chat is None:
        return []
    if only_missing:
        return [i for i, ex in enumerate(exs) if ex.extractor == extraction.JIEBA_LABEL]
    return [i for i, ex in enumerate(exs) if ex.extractor != chat.label]


def unextracted(graph: CorpusGraph) -> int:
    """How many of the graph's chunks have jieba's stand-in extraction rather than a model's."""
    return sum(ex.extractor == extraction.JIEBA_LABEL for ex in graph.extractions.values())


def _mixed_label(models, from_model: int, total: int, shipped: bool) -> str:
    source, source_zh = (" (shipped)", "（随附）") if shipped else ("", "")
    jieba = extraction.JIEBA_LABEL
    zh = localized(models, "zh")
    if from_model == total:
        return Msg(en=f"{models}{' (shipped extractions)' if shipped else ''}", zh=f"{zh}{'（随附的抽取结果）' if shipped else ''}")
    if from_model == 0:
        return jieba
    return Msg(en=f"{models} for {from_model} of {total} chunks{source}; {jieba} for the rest",
               zh=f"{total} 个块中 {from_model} 个由 {zh} 抽取{source_zh}；其余的用{jieba.zh}")

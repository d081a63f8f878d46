"""The graph of an index, built once and kept on it (`index.graph`), and the community summaries.

`attach(index)` with no model uses, for every chunk, the bundled model's extraction when one is cached or
shipped (data/graph/extractions.jsonl covers the bundled corpora), and jieba's for the others; the label says
how many came from each. With a chat backend, the chunks without an extraction are sent to that model (cost:
model seconds per chunk). Building holds a lock of that index, so two callers sharing one index build it once
and a long extraction of one session's upload never waits on, or blocks, another's.

A community's summary is one or two sentences the model writes from its entities and relations (cached by
sha1(prompt version, model, content) and shipped for the bundled corpora in data/graph/summaries.jsonl);
without a model it is an extractive stand-in, labelled: its main entities and one relation.
Not handled here: extraction (extraction.py), the graph itself (graph.py).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
import weakref
from collections import OrderedDict
from pathlib import Path
from typing import Any

from rag.graph import extraction
from rag.graph.graph import Community, CorpusGraph, build_graph
from rag.ingest.language import detect_lang
from rag.messages import Msg, join, localized, say
from rag.models.llm import RunControl
from rag.models.local_llm import local_label

SUMMARIES = Path(__file__).resolve().parents[2] / "data" / "graph" / "summaries.jsonl"
SUMMARY_VERSION = "community-v1"
SUMMARY_TOKENS = 120
STAND_IN = say("extractive stand-in (no model): the community's main entities and one relation",
               "抽取式替代（没有模型）：社区的主要实体和一条关系")
SUMMARY_ENTRIES = 2000  # model-written summaries kept in memory: about 2,000 communities of every session's uploads
_lock = threading.Lock()
_summaries: OrderedDict[str, str] = OrderedDict()  # key -> summary, shared by every session: bounded, under _lock
_shipped_summaries: dict[str, str] | None = None


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
        return say(f"{models}{' (shipped extractions)' if shipped else ''}", f"{zh}{'（随附的抽取结果）' if shipped else ''}")
    if from_model == 0:
        return jieba
    return say(f"{models} for {from_model} of {total} chunks{source}; {jieba} for the rest",
               f"{total} 个块中 {from_model} 个由 {zh} 抽取{source_zh}；其余的用{jieba.zh}")


# -------------------------------------------------------------------------------------- summaries

def _content(graph: CorpusGraph, c: Community) -> tuple[str, str]:
    ents = "、".join(c.entities[:12])
    rels = "\n".join(f"- {h} —{r}→ {t}" for h, r, t, _ in c.relations[:10])
    lang = "zh" if detect_lang(ents + rels) == "zh" else "en"
    return lang, f"实体：{ents}\n关系：\n{rels}" if lang == "zh" else f"Entities: {ents}\nRelations:\n{rels}"


def _summary_key(model: str, content: str) -> str:
    return hashlib.sha1(f"{SUMMARY_VERSION}\0{model}\0{content}".encode("utf-8", "surrogatepass")).hexdigest()


def shipped_summaries() -> dict[str, str]:
    global _shipped_summaries
    if _shipped_summaries is None:
        table = {}
        if SUMMARIES.is_file():
            for line in SUMMARIES.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    rec = json.loads(line)
                    table[rec["key"]] = rec["summary"]
        _shipped_summaries = table
    return _shipped_summaries


def summary_messages(lang: str, content: str) -> list[dict]:
    if lang == "zh":
        return [{"role": "system", "content": "你为知识图谱的一个社区写概要。"},
                {"role": "user", "content": f"{content}\n\n用一两句话概括这组实体讲的是什么主题、彼此有什么关系。只输出概要。"}]
    return [{"role": "system", "content": "You write the summary of one community of a knowledge graph."},
            {"role": "user", "content": f"{content}\n\nIn one or two sentences, say what topic these entities are "
                                        "about and how they relate. Output only the summary."}]


def stand_in_summary(c: Community, lang: str) -> str:
    main = "、".join(c.entities[:5]) if lang == "zh" else ", ".join(c.entities[:5])
    rel = c.relations[0] if c.relations else None
    if lang == "zh":
        return f"主要实体：{main}" + (f"；例如 {rel[0]} —{rel[1]}→ {rel[2]}。" if rel else "。")
    return f"Main entities: {main}" + (f"; for example {rel[0]} —{rel[1]}→ {rel[2]}." if rel else ".")


def _remembered(key: str) -> str | None:
    with _lock:
        text = _summaries.get(key)
        if text is not None:
            _summaries.move_to_end(key)
        return text


def _remember(key: str, text: str) -> None:
    with _lock:
        _summaries[key] = text
        while len(_summaries) > SUMMARY_ENTRIES:
            _summaries.popitem(last=False)


def summaries(graph: CorpusGraph, chat=None, control: RunControl | None = None,
              model: str | None = None) -> tuple[dict[int, str], Msg]:
    """(community id -> summary, who wrote them). Cached or shipped summaries of `model` (default: the chat's
    label, else the bundled model's) are used first; the rest are written by `chat`, or by the stand-in."""
    model = model or (chat.label if chat is not None else local_label())
    out: dict[int, str] = {}
    written_by: set[str] = set()
    for c in graph.communities:
        lang, content = _content(graph, c)
        key = _summary_key(model, content)
        text = _remembered(key) or shipped_summaries().get(key)
        if text is None and chat is not None:
            text = str(chat.complete(summary_messages(lang, content), max_tokens=SUMMARY_TOKENS, temperature=0.0,
                                     control=control)).strip()
            _remember(key, text)
        if text is None:
            out[c.cid] = stand_in_summary(c, lang)
            written_by.add(STAND_IN)
        else:
            out[c.cid] = text
            written_by.add(model)
    return out, join(sorted(written_by)) if written_by else say("none", "无")


def summary_record(graph: CorpusGraph, c: Community, model: str, text: str) -> dict:
    _, content = _content(graph, c)
    return {"key": _summary_key(model, content), "model": model, "summary": text}

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
from pathlib import Path

from rag.graph import extraction
from rag.graph.graph import Community, CorpusGraph, build_graph
from rag.ingest.language import detect_lang
from rag.models.llm import RunControl
from rag.models.local_llm import local_label

SUMMARIES = Path(__file__).resolve().parents[2] / "data" / "graph" / "summaries.jsonl"
SUMMARY_VERSION = "community-v1"
SUMMARY_TOKENS = 120
STAND_IN = "extractive stand-in (no model): the community's main entities and one relation"
_lock = threading.Lock()
_summaries: dict[str, str] = {}
_shipped_summaries: dict[str, str] | None = None


def _index_lock(index) -> threading.Lock:
    """One lock per index: a session extracting its upload for minutes holds its own index, nobody else's."""
    with _lock:
        lock = getattr(index, "_graph_lock", None)
        if lock is None:
            lock = index._graph_lock = threading.Lock()
        return lock


def attach(index, chat=None, control: RunControl | None = None, progress=None) -> CorpusGraph:
    """`index.graph`, built now if it is missing (or when `chat` should extract chunks it has not)."""
    with _index_lock(index):
        have = getattr(index, "graph", None)
        if have is not None and (chat is None or have.extractor.startswith(chat.label)):
            return have
        chunks = index.chunks
        t0 = time.perf_counter()
        if chat is not None:
            exs, cost = extraction.extract_all([c.text for c in chunks], chat, control, progress)
        else:
            bundled = local_label()
            exs, from_model = [], 0
            for c in chunks:
                ex = extraction.cached(bundled, c.text)
                if ex is None:
                    ex = extraction.jieba_extract(c.text)
                else:
                    from_model += 1
                exs.append(ex)
            cost = {"extractor": _mixed_label(bundled, from_model, len(chunks)), "generated": 0, "cached": from_model,
                    "model_seconds": sum(e.seconds for e in exs if e.extractor == bundled),
                    "seconds": time.perf_counter() - t0}
        graph = build_graph(chunks, exs, index.embedder, cost)
        index.graph = graph
        return graph


def _mixed_label(bundled: str, from_model: int, total: int) -> str:
    if from_model == total:
        return f"{bundled} (shipped extractions)"
    if from_model == 0:
        return extraction.JIEBA_LABEL
    return f"{bundled} for {from_model} of {total} chunks (shipped); {extraction.JIEBA_LABEL} for the rest"


def model_extracted(graph: CorpusGraph) -> bool:
    return not graph.extractor.startswith(extraction.JIEBA_LABEL)


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


def summaries(graph: CorpusGraph, chat=None, control: RunControl | None = None,
              model: str | None = None) -> tuple[dict[int, str], str]:
    """(community id -> summary, who wrote them). Cached or shipped summaries of `model` (default: the chat's
    label, else the bundled model's) are used first; the rest are written by `chat`, or by the stand-in."""
    model = model or (chat.label if chat is not None else local_label())
    out, written_by = {}, set()
    for c in graph.communities:
        lang, content = _content(graph, c)
        key = _summary_key(model, content)
        text = _summaries.get(key) or shipped_summaries().get(key)
        if text is None and chat is not None:
            text = str(chat.complete(summary_messages(lang, content), max_tokens=SUMMARY_TOKENS, temperature=0.0,
                                     control=control)).strip()
            _summaries[key] = text
        if text is None:
            out[c.cid] = stand_in_summary(c, lang)
            written_by.add(STAND_IN)
        else:
            out[c.cid] = text
            written_by.add(model)
    return out, "; ".join(sorted(written_by)) or "none"


def summary_record(graph: CorpusGraph, c: Community, model: str, text: str) -> dict:
    _, content = _content(graph, c)
    return {"key": _summary_key(model, content), "model": model, "summary": text}

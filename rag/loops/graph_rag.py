"""GraphRAG as answer loops: "graph" (local search) and "graph-global" (community summaries).

graph: retrieval in the "hybrid+graph" mode (RRF of dense, BM25 and the graph's local search: link the
question's entities, walk two hops, rank the chunks the walk reaches), then the ordinary rerank, contexts and
answer, with one addition: the walked subgraph's relations whose source chunk is among the contexts go into
the prompt as a compact block after the contexts, each ending with that chunk's [ref], so the answer may cite
a relation by its source. Steps: link (the entities found, and how), walk (the subgraph), retrieve (which
chunks the graph brought that hybrid alone would not have), draft.

graph-global, for questions about the whole corpus ("这份资料主要讲了哪几类方法？"): the communities are
ranked by how close their summaries are to the question (the embedder); map: for each of the top
GLOBAL_COMMUNITIES, the model writes what that community says about the question (or "无关"); reduce: the
answer is written from those points as the graph block, over each kept community's most-mentioned chunks as
contexts, so its citations are audited like any other. Without a model, map is skipped and the summaries
themselves are the block (the stand-in answers).
Not handled here: the graph (rag/graph/), retrieval (rag/search/retrieval.py).
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Callable

import numpy as np

from rag.audit.shape import garbled
from rag.errors import ConfigError
from rag.graph.graph import relation_line
from rag.graph.store import attach
from rag.ingest.language import detect_lang
from rag.loops.community import summaries
from rag.loops.steps import LoopTrace, Recorder, Step, hits_of
from rag.messages import Msg, localized
from rag.models.control import RunControl
from rag.models.llm import short_reply
from rag.pipeline import answer_from, gather
from rag.run import RunContext

GLOBAL_COMMUNITIES = 4
CHUNKS_PER_COMMUNITY = 2
MAP_TOKENS = 80
IRRELEVANT = ("无关", "irrelevant")


def graph_block(relations: list[dict], refs: dict[str, str]) -> str:
    """The relation lines whose source chunk is a context (`refs`: chunk_id -> ref) and whose sentence states them
    (rag/graph/verify.py: a relation the text does not state would mislead the model), in the walk's order."""
    return "\n".join(relation_line(r, refs[r["chunk_id"]]) for r in relations
                     if r["chunk_id"] in refs and r.get("verified"))


def graph_local(question: str, ctx: RunContext, *, on_step: Callable[[Step], None] | None = None,
                on_delta: Callable[[str], None] | None = None) -> LoopTrace:
    """GraphRAG's local search: hybrid retrieval plus the graph walk from the question's entities, one answer."""
    index, settings = ctx.index, ctx.settings
    t0 = time.perf_counter()
    graph = attach(index)
    lt = LoopTrace("graph", question, budget=1)
    rec = Recorder(lt, on_step)
    trace = gather(question, ctx.with_(settings=replace(settings, mode="hybrid+graph", compare_no_rag=False)))
    retrieval = trace.retrieval
    walk = retrieval.graph_walk if retrieval is not None else None
    if retrieval is None or walk is None:  # hybrid+graph always walks; a retriever that did not cannot go on here
        raise ConfigError("the graph loop's retrieval returned no graph walk; search with mode hybrid+graph")
    linked = ", ".join(f"{x.entity} ({x.how}{'' if x.how == 'in the question' else f' {x.score:.3f}'})"
                       for x in walk.linked) or "none"
    linked_zh = "、".join(f"{x.entity}（{'出现在问题里' if x.how == 'in the question' else f'按相似度 {x.score:.3f}'}）"
                         for x in walk.linked) or "无"
    rec.add(kind="link", thought="Find the question's entities in the graph.",
            decision=Msg(en=f"linked: {linked}", zh=f"链接到：{linked_zh}"), query=trace.question)
    nodes = walk.subgraph()["nodes"]
    rec.add(kind="walk", thought="Walk two hops from them; keep the relations on the way.",
            decision=Msg(en=f"{len(nodes)} entities reached, {len(walk.relations)} relations: "
                         + "; ".join(relation_line(r, r["chunk_id"]) for r in walk.relations[:4]),
                         zh=f"走到 {len(nodes)} 个实体、{len(walk.relations)} 条关系："
                         + "；".join(relation_line(r, r["chunk_id"]) for r in walk.relations[:4])))
    plain = {h.chunk_id for h in retrieval.hybrid[: settings.recall_n]}
    brought = [h.chunk_id for h in trace.candidates if h.chunk_id not in plain]
    rec.add(kind="retrieve", thought="Fuse the graph's chunks with dense + BM25 (RRF).",
            decision=Msg(en=f"{len(trace.contexts)} chunks to the prompt; the graph brought in "
                         f"{', '.join(index.chunk(c).ref for c in brought) or 'nothing hybrid had not'}",
                         zh=f"{len(trace.contexts)} 个块进入提示词；图谱带来了 "
                         f"{', '.join(index.chunk(c).ref for c in brought) or '混合检索没有的：无'}"),
            query=trace.question, hits=hits_of(index, trace.final),
            seconds=sum(v for k, v in trace.timings.items() if k in ("retrieve", "rerank")))
    trace.graph_block = graph_block(walk.relations, {c.chunk_id: c.ref for c in trace.contexts})
    trace.backends["graph"] = graph.extractor
    trace = answer_from(trace, ctx, on_delta)
    rec.add(kind="draft", thought="Answer from the chunks and the relations.", decision=Msg(en="answered", zh="已回答"),
            prompt=trace.prompt.messages if trace.prompt else None, raw=trace.answer,
            seconds=trace.timings.get("generate", 0.0))
    lt.final = trace
    lt.graph = {"extractor": graph.extractor, "linked": [vars(x) for x in walk.linked], **walk.subgraph(),
                "brought_in": brought, "block": trace.graph_block}
    lt.seconds = time.perf_counter() - t0
    return lt


def graph_global(question: str, ctx: RunContext, *, on_step: Callable[[Step], None] | None = None,
                 on_delta: Callable[[str], None] | None = None) -> LoopTrace:
    """GraphRAG's global search: community summaries mapped to points by the model, then one answer from them. The
    context's reranker is not used: the contexts are the chosen communities' chunks, not a ranked list."""
    index, settings, chat, control = ctx.index, ctx.settings, ctx.chat, ctx.control
    t0 = time.perf_counter()
    graph = attach(index)
    lt = LoopTrace("graph-global", question, budget=GLOBAL_COMMUNITIES)
    rec = Recorder(lt, on_step)
    found, written_by = summaries(graph, {c.chunk_id: c.text for c in index.chunks}, chat, control)
    texts = {cid: s.text for cid, s in found.items()}
    ids = [c.cid for c in graph.communities if texts.get(c.cid)]
    if not ids:
        lt.notes.append(Msg(en="the graph has no communities (no entities were extracted)",
                            zh="图里没有社区（没有抽取到实体）"))
    top = _closest_communities(index.embedder, question, ids, texts)
    rec.add(kind="decide", thought="Rank the communities by how close their summaries are to the question.",
            decision=Msg(en=f"communities {', '.join(str(c) for c in top) or 'none'} (summaries by {written_by})",
                         zh=f"社区 {', '.join(str(c) for c in top) or '无'}（概要由 {localized(written_by, 'zh')} 写）"))
    points = _map(question, top, texts, chat, rec, control)
    community = {c.cid: c for c in graph.communities}
    chunk_ids = list(dict.fromkeys(ch for cid, _ in points for ch in community[cid].chunk_ids[:CHUNKS_PER_COMMUNITY]))
    # the gate, compression and fill-in serve a question one passage answers; a question about the whole corpus is
    # answered from its communities' points, so they are off here (the trace says so)
    trace = gather(question, ctx.with_(settings=replace(settings, rerank=False, gate=False, compress=False, fill_in=False,
                                                        rewrite="none", compare_no_rag=False), reranker=None))
    trace.notes.append(Msg(en="graph-global: the answerability gate, compression and fill-in are off (the question is "
                           "about the whole corpus; the communities' points are the evidence)",
                           zh="全局图谱：能否回答的判断、资料压缩和补原文都关闭了（问题关于整个语料；社区要点就是证据）"))
    trace.contexts = [index.chunk(c) for c in chunk_ids] or trace.contexts
    refs = {c.chunk_id: c.ref for c in trace.contexts}
    lines = []
    for cid, point in points:
        cites = "".join(f"[{refs[ch]}]" for ch in community[cid].chunk_ids[:CHUNKS_PER_COMMUNITY] if ch in refs)
        lines.append(f"- {point} {cites}".rstrip())
    trace.graph_block = "\n".join(lines)
    trace.backends["graph"] = Msg(en=f"{graph.extractor}; community summaries by {written_by}",
                                  zh=f"{localized(graph.extractor, 'zh')}；社区概要由 {localized(written_by, 'zh')} 写")
    trace = answer_from(trace, ctx, on_delta)
    rec.add(kind="draft", thought="Reduce: answer from the communities' points.", decision=Msg(en="answered", zh="已回答"),
            prompt=trace.prompt.messages if trace.prompt else None, raw=trace.answer,
            seconds=trace.timings.get("generate", 0.0))
    lt.final = trace
    lt.graph = {"extractor": graph.extractor, "summaries_by": written_by, "communities": top,
                "points": [{"community": c, "point": p} for c, p in points], "block": trace.graph_block}
    lt.seconds = time.perf_counter() - t0
    return lt


def _closest_communities(embedder, question: str, ids: list[int], texts: dict) -> list[int]:
    """The GLOBAL_COMMUNITIES communities whose summaries are closest to the question (cosine), closest first."""
    if not ids:
        return []
    vecs = np.asarray(embedder.embed_documents([texts[i] for i in ids]), dtype=np.float32)
    qv = np.asarray(embedder.embed_queries([question])[0], dtype=np.float32)
    sims = vecs @ qv / (np.linalg.norm(vecs, axis=1) * np.linalg.norm(qv) + 1e-12)
    return [ids[i] for i in np.argsort(-sims)[:GLOBAL_COMMUNITIES]]


def _map(question: str, top: list[int], texts: dict, chat, rec: Recorder, control: RunControl) -> list[tuple]:
    """Map: (community, what it says about the question) for each of `top` that says something; without a model,
    its summary."""
    if chat is None:
        return [(cid, texts[cid]) for cid in top]
    lang = detect_lang(question)
    points = []
    for cid in top:
        messages = _map_messages(lang, texts[cid], question)
        t1 = time.perf_counter()
        said = short_reply(chat, messages, MAP_TOKENS, control).strip()
        mess = garbled(said)  # a loop or a list of refs is no point
        keep = bool(said) and not said.startswith(IRRELEVANT) and mess is None
        decision = Msg(en=("kept: " if keep else "left out: ") + said[:120], zh=("保留：" if keep else "略去：") + said[:120])
        if mess is not None:
            decision = Msg(en=f"left out, garbled ({mess}): {said[:80]}", zh=f"略去，写乱了（{localized(mess, 'zh')}）：{said[:80]}")
        rec.add(kind="map", thought=f"What does community {cid} say about the question?", decision=decision,
                prompt=messages, raw=said, seconds=time.perf_counter() - t1)
        if keep:
            points.append((cid, said))
    return points


def _map_messages(lang: str, summary: str, question: str) -> list[dict]:
    if lang == "zh":
        return [{"role": "system", "content": "你根据知识图谱一个社区的概要，判断它对回答问题有没有用。"},
                {"role": "user", "content": f"概要：{summary}\n\n问题：{question}\n\n"
                                            "用一句话写出这段概要里与问题有关的要点；如果无关，只输出“无关”。"}]
    return [{"role": "system", "content": "You judge whether one community summary of a knowledge graph helps answer a question."},
            {"role": "user", "content": f"Summary: {summary}\n\nQuestion: {question}\n\nIn one sentence, write what "
                                        "the summary says that bears on the question; if nothing, output only \"irrelevant\"."}]

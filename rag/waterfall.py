"""Where one question's time went: the trace's measured stages, in the order they ran, as a waterfall.

The pipeline times each stage (trace.timings), retrieval times its own parts (RetrievalResult.timings: the query's
embedding, each retriever, the fusion) and the generator reports its first token and decode (trace.generation), so
the answer's time splits into "prompt read, first token" and "decode". Stages run one after another, so each row
starts where the one before it ended. Only measured figures appear; what a run did not do has no row.
Not handled here: drawing (ui/timing.py), measuring (rag/pipeline.py, rag/search/retrieval.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from rag.messages import Msg, localized

STAGE_ORDER = ("rewrite", "embed", "dense", "bm25", "sparse", "graph", "fusion", "retrieve", "rerank", "gate",
               "compress", "first_token", "decode", "rebind", "fill_in", "lead", "audit", "no_rag",
               "no_rag_check")
STAGE_NAMES: dict[str, Msg] = {  # one Msg a stage (rag/trace.py COMPONENTS names the timed ones by these)
    "rewrite": Msg(en="query rewrite", zh="查询改写"), "embed": Msg(en="embed the question", zh="问题向量化"),
    "dense": Msg(en="dense search", zh="向量检索"), "bm25": Msg(en="BM25 search", zh="BM25 检索"),
    "sparse": Msg(en="sparse search", zh="稀疏检索"), "graph": Msg(en="graph search", zh="图检索"),
    "fusion": Msg(en="RRF fusion", zh="RRF 融合"), "retrieve": Msg(en="retrieval (rest)", zh="检索（其余）"),
    "rerank": Msg(en="rerank", zh="重排"), "gate": Msg(en="answerable?", zh="能否回答"),
    "compress": Msg(en="compression", zh="资料压缩"), "first_token": Msg(en="read prompt, first token", zh="读提示、出首字"),
    "decode": Msg(en="decode", zh="逐字生成"), "rebind": Msg(en="citation rebinding", zh="核对引用指向"),
    "fill_in": Msg(en="fill-in", zh="补上漏掉的原文"), "lead": Msg(en="model picks the lead quote", zh="模型选领头原文"),
    "audit": Msg(en="citation audit", zh="引用审计"), "no_rag": Msg(en="answer without RAG", zh="无 RAG 回答"),
    "no_rag_check": Msg(en="no-RAG answer vs corpus", zh="无 RAG 回答对照语料")}
TRACE_KEYS = {"rewrite": "rewrite", "rerank": "rerank", "gate": "gate", "compress": "compress", "rebind": "rebind",
              "fill_in": "fill_in", "lead": "lead",
              "audit": "audit", "generate_no_rag": "no_rag", "ground_no_rag": "no_rag_check"}  # Trace.timings -> stage


@dataclass(frozen=True)
class Row:
    stage: str  # one of STAGE_ORDER
    start: float  # seconds from the question
    seconds: float


def stage_name(stage: str, lang: str) -> str:
    return localized(STAGE_NAMES.get(stage, stage), lang)


def measured(trace) -> dict[str, float]:
    """stage -> seconds, every figure the trace holds, split as finely as it was measured."""
    t = dict(trace.timings)
    out: dict[str, float] = {}
    for key, stage in TRACE_KEYS.items():
        if key in t:
            out[stage] = t[key]
    retrieve = t.get("retrieve")
    parts = dict(getattr(trace.retrieval, "timings", None) or {}) if trace.retrieval is not None else {}
    if retrieve is not None:
        if parts and not trace.per_query:  # multi-query retrieves several times: one row, not one query's parts
            out.update(parts)
            rest = retrieve - sum(parts.values())
            if rest > 0.001:
                out["retrieve"] = rest
        else:
            out["retrieve"] = retrieve
    generate = t.get("generate")
    if generate is not None:
        first = trace.generation.get("first_token_s")
        if first is not None and 0 <= first <= generate:
            out["first_token"], out["decode"] = first, generate - first
        else:
            out["decode"] = generate
    return out


def stages(trace) -> list[Row]:
    """The measured stages in the order they ran, each starting where the last ended."""
    rows, start = [], 0.0
    m = measured(trace)
    for stage in STAGE_ORDER:
        if stage in m:
            rows.append(Row(stage, start, m[stage]))
            start += m[stage]
    return rows

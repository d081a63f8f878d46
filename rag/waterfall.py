"""Where one question's time went: the trace's measured stages, in the order they ran, as a waterfall.

The pipeline times each stage (trace.timings), retrieval times its own parts (RetrievalResult.timings: the query's
embedding, each retriever, the fusion) and the generator reports its first token and decode (trace.generation), so
the answer's time splits into "prompt read, first token" and "decode". Stages run one after another, so each row
starts where the one before it ended. Only measured figures appear; what a run did not do has no row.
Not handled here: drawing (ui/timing.py), measuring (rag/pipeline.py, rag/search/retrieval.py).
"""

from __future__ import annotations

from dataclasses import dataclass

STAGE_ORDER = ("rewrite", "embed", "dense", "bm25", "sparse", "graph", "fusion", "retrieve", "rerank", "gate",
               "compress", "first_token", "decode", "rebind", "fill_in", "lead", "audit", "no_rag",
               "no_rag_check")
STAGE_ZH = {"rewrite": "查询改写", "embed": "问题向量化", "dense": "向量检索", "bm25": "BM25 检索", "sparse": "稀疏检索",
            "graph": "图检索", "fusion": "RRF 融合", "retrieve": "检索（其余）", "rerank": "重排", "gate": "能否回答",
            "compress": "压缩资料", "first_token": "读提示、出首字", "decode": "逐字生成", "rebind": "核对引用指向",
            "fill_in": "补上漏掉的原文", "lead": "模型选领头原文",
            "audit": "引用审计", "no_rag": "无 RAG 回答", "no_rag_check": "无 RAG 回答对照语料"}
STAGE_EN = {"rewrite": "query rewrite", "embed": "embed the question", "dense": "dense search", "bm25": "BM25 search",
            "sparse": "sparse search", "graph": "graph search", "fusion": "RRF fusion", "retrieve": "retrieval (rest)",
            "rerank": "rerank", "gate": "answerable?", "compress": "compression", "first_token": "read prompt, first token",
            "decode": "decode", "rebind": "citation rebinding", "fill_in": "fill-in", "lead": "model picks the lead quote", "audit": "citation audit", "no_rag": "answer without RAG",
            "no_rag_check": "no-RAG answer vs corpus"}
_TRACE_KEYS = {"rewrite": "rewrite", "rerank": "rerank", "gate": "gate", "compress": "compress", "rebind": "rebind",
               "fill_in": "fill_in", "lead": "lead",
               "audit": "audit", "generate_no_rag": "no_rag", "ground_no_rag": "no_rag_check"}


@dataclass(frozen=True)
class Row:
    stage: str  # one of STAGE_ORDER
    start: float  # seconds from the question
    seconds: float


def stage_name(stage: str, lang: str) -> str:
    return (STAGE_ZH if lang == "zh" else STAGE_EN).get(stage, stage)


def measured(trace) -> dict[str, float]:
    """stage -> seconds, every figure the trace holds, split as finely as it was measured."""
    t = dict(trace.timings)
    out: dict[str, float] = {}
    for key, stage in _TRACE_KEYS.items():
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

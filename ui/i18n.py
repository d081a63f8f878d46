"""UI language: Chinese first with the English technical term ("检索 Retrieval"), or English only.

Shared labels (page titles, stage names, recurring terms) live in LABELS; page prose uses `tr(zh, en)`
inline so the two versions sit next to each other. The choice is per session ("ui.lang").
Not handled here: translating content (the corpus, the answers and the prompt stay in their language).
"""

from __future__ import annotations

import streamlit as st

from rag.messages import localized

LANGS = {"zh": "中文", "en": "English"}

# key -> (Chinese-first label, English label)
LABELS: dict[str, tuple[str, str]] = {
    "app.title": ("RAG 透视：一步一步看检索增强生成", "Inspectable RAG: retrieval-augmented generation, stage by stage"),
    "page.home": ("首页 Home", "Home"),
    "page.upload": ("上传与分块 Upload & chunks", "Upload & chunks"),
    "page.embeddings": ("向量 Embeddings", "Embeddings"),
    "page.retrieval": ("检索 Retrieval", "Retrieval"),
    "page.graph": ("图谱 GraphRAG", "Graph (GraphRAG)"),
    "page.rerank": ("重排 Rerank", "Rerank"),
    "page.answer": ("回答与引用审计 Answer & audit", "Answer & audit"),
    "page.evaluation": ("评估 Evaluation", "Evaluation"),
    "page.loops": ("自主检索 Self-RAG & agent", "Self-RAG & agent"),
    "question": ("问题 Question", "Question"),
    "question.help": ("所有页面共用这个问题", "Every page uses this question"),
    "lang": ("界面语言 Language", "Language"),
    "llm.settings": ("大模型设置 LLM settings", "LLM settings"),
    "llm.base_url": ("接口地址 Base URL", "Base URL"),
    "llm.model": ("模型 Model", "Model"),
    "llm.api_key": ("API 密钥 API key", "API key"),
    "llm.offline": ("离线：不用网络接口 Offline: no endpoint", "Offline: ignore any endpoint"),
    "corpus": ("语料 Corpus", "Corpus"),
    "chunker": ("分块器 Chunker", "Chunker"),
    "embedder": ("向量模型 Embedder", "Embedder"),
    "reranker": ("重排模型 Reranker", "Reranker"),
    "generator": ("生成器 Generator", "Generator"),
    "real": ("真实模型 real model", "real model"),
    "fallback": ("离线替身 offline fallback", "offline fallback"),
    "chunk": ("块 Chunk", "Chunk"),
    "rank": ("名次 Rank", "Rank"),
    "score": ("分数 Score", "Score"),
    "text": ("文本 Text", "Text"),
    "dense": ("向量 Dense", "Dense"),
    "bm25": ("关键词 BM25", "BM25"),
    "hybrid": ("融合 RRF", "RRF (hybrid)"),
    "rerank": ("重排 Rerank", "Rerank"),
    "no_question": ("请先在左侧输入一个问题。", "Type a question in the sidebar first."),
    "embedding_progress": ("正在计算向量 Embedding", "Embedding"),
    "time_left": ("约剩 {}", "about {} left"),
    "sparse_progress": ("正在计算学习型稀疏向量 Sparse", "Learned-sparse vectors"),
    "context_progress": ("本地大模型正在为每块写上下文 Contexts", "The local model writes each chunk's context"),
}


def lang() -> str:
    return st.session_state.get("ui.lang", "zh")


def t(key: str) -> str:
    """The label for `key` in the session's language (KeyError on a typo: tests check every key used)."""
    zh, en = LABELS[key]
    return zh if lang() == "zh" else en


def tr(*, zh: str, en: str) -> str:
    """Inline text in both languages, by keyword (as rag.messages.Msg); the session's language picks one."""
    return zh if lang() == "zh" else en


def loc(text: object) -> str:
    """A backend's words (rag.messages.Msg: a note, a label, a decision) in the session's language; any other text
    (a model's answer, a corpus's title, a name) as it is."""
    return localized(text, lang())


def plural(n: int, en_one: str, en_many: str, zh_unit: str) -> str:
    """"1 chunk" / "3 chunks" in English, "3 个块" in Chinese."""
    return f"{n} {zh_unit}" if lang() == "zh" else f"{n} {en_one if n == 1 else en_many}"


# The trace's stage names (Trace.backends and Trace.timings keys), for tables in the UI's language.
STAGES = {"embedder": "向量模型", "generator": "生成器", "reranker": "重排模型", "rewrite": "查询改写", "retrieve": "检索",
          "rerank": "重排", "gate": "能否回答", "answerability": "能否回答", "compression": "资料压缩", "compress": "资料压缩",
          "citations": "引用", "second opinion": "模型复核", "graph": "图谱", "generate": "生成", "audit": "引用审计",
          "fill_in": "补原文", "lead": "模型选领头原文", "generate_no_rag": "无 RAG 生成", "ground_no_rag": "无 RAG 的支撑检查", "answer": "回答"}


def stage(name: str) -> str:
    return STAGES.get(name, name) if lang() == "zh" else name

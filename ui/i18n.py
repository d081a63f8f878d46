"""UI language: Chinese first with the English technical term ("检索 Retrieval"), or English only.

Shared labels (page titles, stage names, recurring terms) live in LABELS; page prose uses `tr(zh=..., en=...)`
inline so the two versions sit next to each other. The choice is per session ("ui.lang").
Not handled here: translating content (the corpus, the answers and the prompt stay in their language).
"""

from __future__ import annotations

import streamlit as st

from rag.messages import Msg, localized
from rag.trace import COMPONENTS

LANGS = {"zh": "中文", "en": "English"}

# key -> the label: Chinese-first ("检索 Retrieval") and English
LABELS: dict[str, Msg] = {
    "app.title": Msg(zh="RAG 透视：一步一步看检索增强生成", en="Inspectable RAG: retrieval-augmented generation, stage by stage"),
    "page.home": Msg(zh="首页 Home", en="Home"),
    "page.upload": Msg(zh="上传与分块 Upload & chunks", en="Upload & chunks"),
    "page.embeddings": Msg(zh="向量 Embeddings", en="Embeddings"),
    "page.retrieval": Msg(zh="检索 Retrieval", en="Retrieval"),
    "page.graph": Msg(zh="图谱 GraphRAG", en="Graph (GraphRAG)"),
    "page.rerank": Msg(zh="重排 Rerank", en="Rerank"),
    "page.answer": Msg(zh="回答与引用审计 Answer & audit", en="Answer & audit"),
    "page.evaluation": Msg(zh="评估 Evaluation", en="Evaluation"),
    "page.loops": Msg(zh="自主检索 Self-RAG & agent", en="Self-RAG & agent"),
    "question": Msg(zh="问题 Question", en="Question"),
    "question.help": Msg(zh="所有页面共用这个问题", en="Every page uses this question"),
    "lang": Msg(zh="界面语言 Language", en="Language"),
    "llm.settings": Msg(zh="大模型设置 LLM settings", en="LLM settings"),
    "llm.base_url": Msg(zh="接口地址 Base URL", en="Base URL"),
    "llm.model": Msg(zh="模型 Model", en="Model"),
    "llm.api_key": Msg(zh="API 密钥 API key", en="API key"),
    "llm.offline": Msg(zh="离线：不用网络接口 Offline: no endpoint", en="Offline: ignore any endpoint"),
    "corpus": Msg(zh="语料 Corpus", en="Corpus"),
    "chunker": Msg(zh="分块器 Chunker", en="Chunker"),
    "embedder": Msg(zh="向量模型 Embedder", en="Embedder"),
    "reranker": Msg(zh="重排模型 Reranker", en="Reranker"),
    "generator": Msg(zh="生成器 Generator", en="Generator"),
    "real": Msg(zh="真实模型 real model", en="real model"),
    "fallback": Msg(zh="离线替身 offline fallback", en="offline fallback"),
    "chunk": Msg(zh="块 Chunk", en="Chunk"),
    "rank": Msg(zh="名次 Rank", en="Rank"),
    "score": Msg(zh="分数 Score", en="Score"),
    "text": Msg(zh="文本 Text", en="Text"),
    "dense": Msg(zh="向量 Dense", en="Dense"),
    "bm25": Msg(zh="关键词 BM25", en="BM25"),
    "hybrid": Msg(zh="融合 RRF", en="RRF (hybrid)"),
    "rerank": Msg(zh="重排 Rerank", en="Rerank"),
    "no_question": Msg(zh="请先在左侧输入一个问题。", en="Type a question in the sidebar first."),
    "embedding_progress": Msg(zh="正在计算向量 Embedding", en="Embedding"),
    "time_left": Msg(zh="约剩 {}", en="about {} left"),
    "sparse_progress": Msg(zh="正在计算学习型稀疏向量 Sparse", en="Learned-sparse vectors"),
    "context_progress": Msg(zh="本地大模型正在为每块写上下文 Contexts", en="The local model writes each chunk's context"),
}


def lang() -> str:
    return st.session_state.get("ui.lang", "zh")


def t(key: str) -> str:
    """The label for `key` in the session's language (KeyError on a typo: tests check every key used)."""
    return LABELS[key].localized(lang())


def tr(*, zh: str, en: str) -> str:
    """Inline text in both languages: a Msg (by keyword) in the session's language, `loc(Msg(en=en, zh=zh))`."""
    return Msg(en=en, zh=zh).localized(lang())


def loc(text: object) -> str:
    """A backend's words (rag.messages.Msg: a note, a label, a decision) in the session's language; any other text
    (a model's answer, a corpus's title, a name) as it is."""
    return localized(text, lang())


def plural(n: int, *, one: str, many: str, zh: str) -> str:
    """"1 chunk" / "3 chunks" in English, "3 个块" in Chinese: plural(n, one="chunk", many="chunks", zh="个块")."""
    return f"{n} {zh}" if lang() == "zh" else f"{n} {one if n == 1 else many}"


def stage(name: str) -> str:
    """A Trace.backends or Trace.timings key named in the session's language (rag/trace.py COMPONENTS)."""
    return localized(COMPONENTS.get(name, name), lang())

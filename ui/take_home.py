"""Take it home: this session's question and settings as a script and a notebook (rag/export.py) to download.
Not handled here: writing them (rag/export.py)."""

from __future__ import annotations

from typing import MutableMapping

import streamlit as st

from rag.export import Recipe, notebook, script

from . import lesson, settings
from .i18n import tr


def recipe(ss: MutableMapping) -> Recipe:
    method, params = ss["applied.chunk"]
    kind = lesson.corpus_kind(ss)
    files = tuple(f["file"] for f in ss.get("corpus.files") or [])
    with_kb = kind == "upload" and bool(files) and files[0] == "faq.jsonl"
    return Recipe(
        question=settings.question(ss), settings=settings.ask_settings(ss),
        corpus={"knowledge-base": "knowledge-base", "longform": "longform"}.get(kind, "files"),
        files=files[1:] if with_kb else files, with_knowledge_base=with_kb,
        chunker=method, chunk_params=dict(params), embedder=ss["applied.embedder"],
        stopwords=bool(ss.get("index.stopwords")), tokenizer=ss.get("index.tokenizer") or "jieba",
        contextual=bool(ss.get("index.contextual")),
        reranker=ss["rerank.name"] if ss["rerank.enabled"] else None,
        generator=_generator(ss), local_model=ss["llm.local_model"])


def _generator(ss: MutableMapping) -> str:
    """The generator as the script can make it: an endpoint typed in the sidebar is read from the environment."""
    g = ss["llm.generator"]
    if g == "auto" and (ss.get("llm.offline") or not str(ss.get("llm.base_url") or "").strip()):
        return "auto"
    return g


def buttons() -> None:
    ss = st.session_state
    r = recipe(ss)
    st.caption(tr(zh="把这个问题和各页的设置带回家：脚本和笔记本都调用本项目自己的 API，在项目目录里运行就能重现这里的排名和回答"
                  "（贪心解码）。API 密钥不会写进去：接口从运行处的环境变量读取。",
                  en="Take this question and every page's settings home: the script and the notebook call this "
                  "project's own API and, run in the project's folder, reproduce the rankings and the answer shown "
                  "here (greedy decoding). No API key is written: an endpoint is read from the environment where "
                  "it runs."))
    if r.corpus == "files":
        st.caption(tr(zh="你上传的文件不在导出里：把它们放进脚本旁边的 my_documents 文件夹。",
                      en="Your uploaded files are not in the export: put them in a folder named my_documents next to "
                      "the script."))
    c1, c2 = st.columns(2)
    c1.download_button(tr(zh="下载 Python 脚本", en="Download a Python script"), script(r), file_name="rag_question.py",
                       mime="text/x-python", icon=":material/code:", key="export.script")
    c2.download_button(tr(zh="下载 Jupyter 笔记本", en="Download a Jupyter notebook"), notebook(r),
                       file_name="rag_question.ipynb", mime="application/x-ipynb+json", icon=":material/book:",
                       key="export.notebook")

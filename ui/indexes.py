"""The approximate indexes and the Milvus collection of this session's index, built on first use and kept
per session (memo), so a page can set their top-k beside the exact one without rebuilding on every rerun.

A backend that cannot start (Milvus unreachable, faiss missing) is reported as that backend's error; the
other rows still show. Milvus Lite lives in a temporary folder of the server process (app_milvus_uri). A session's
Milvus collection holds its chunks' text: it is dropped when the session's index changes (`release`, called by
indexing.get_index), when the memo lets it go, and when the session ends (MilvusStore drops it when collected).
Not handled here: what the indexes are (rag/index/ann.py, rag/index/milvus.py).
"""

from __future__ import annotations

import atexit
import functools
import os
import shutil
import tempfile
from typing import Sequence

import streamlit as st

from rag import config
from rag.errors import RagError
from rag.index.build import Index
from rag.index.dense_index import build_searcher
from rag.index.milvus import MilvusStore

from .memo import memo

_milvus_dir: list[str] = []  # this server process's Milvus Lite folder, made on first use


def app_milvus_uri() -> str:
    """RAG_MILVUS_URI when set (a server), else a Milvus Lite file in a temporary folder of this process,
    removed when it exits: the collections hold the chunks' text, and an upload must not outlive the
    server on disk (the vector cache stores vectors only)."""
    uri = config.value("RAG_MILVUS_URI")
    if uri:
        return uri
    if not _milvus_dir:
        folder = tempfile.mkdtemp(prefix="rag-milvus-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _milvus_dir.append(folder)
    return os.path.join(_milvus_dir[0], "app.db")


def searchers(index: Index, kinds: Sequence[str]) -> tuple[list, dict[str, str]]:
    """(built searchers in `kinds` order, {kind: error message} for those that failed)."""
    built, errors = [], {}
    key = st.session_state.get("index.key", id(index))
    for kind in kinds:
        params = {"uri": app_milvus_uri()} if kind == "milvus" else {}
        try:
            built.append(memo("ann", (key, kind), functools.partial(build_searcher, index, kind, **params), keep=6))
        except RagError as e:
            errors[kind] = str(e)
    return built, errors


def query_vector(index: Index, question: str):
    """The question's vector for this index's embedder (memoised per session)."""
    key = (st.session_state.get("index.key", id(index)), question)
    return memo("qvec", key, lambda: index.embedder.embed_queries([question])[0], keep=8)


def release(ss) -> None:
    """Close every searcher this session built (a Milvus collection is dropped on its server) and forget them:
    the index they were built over is being replaced."""
    for searcher in dict(ss.pop("memo.ann", {})).values():
        if isinstance(searcher, MilvusStore):
            searcher.close()

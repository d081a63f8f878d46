"""The approximate indexes and the Milvus collection of this session's index, built on first use and kept
per session (memo), so a page can set their top-k beside the exact one without rebuilding on every rerun.

A backend that cannot start (Milvus unreachable, faiss missing) is reported as that backend's error; the
other rows still show.
Not handled here: what the indexes are (rag/index/ann.py, rag/index/milvus.py).
"""

from __future__ import annotations

from typing import Sequence

import streamlit as st

from rag.errors import RagError
from rag.index.build import Index
from rag.index.dense_index import build_searcher

from .memo import memo


def searchers(index: Index, kinds: Sequence[str]) -> tuple[list, dict[str, str]]:
    """(built searchers in `kinds` order, {kind: error message} for those that failed)."""
    built, errors = [], {}
    key = st.session_state.get("index.key", id(index))
    for kind in kinds:
        try:
            built.append(memo("ann", (key, kind), lambda k=kind: build_searcher(index, k), keep=6))
        except RagError as e:
            errors[kind] = str(e)
    return built, errors


def query_vector(index: Index, question: str):
    """The question's vector for this index's embedder (memoised per session)."""
    key = (st.session_state.get("index.key", id(index)), question)
    return memo("qvec", key, lambda: index.embedder.embed_queries([question])[0], keep=8)

"""Models shared by every browser session, loaded once through `st.cache_resource`.

Everything returned here is treated as read-only: a user's corpus, index and traces never go in here
(they live in st.session_state, see corpus.py and indexing.py). The document-vector disk cache inside CachedEmbedder is
keyed by sha1(text), so sharing it cannot mix one user's results into another's.
Not handled here: which model a session uses (ui/choices.py reads the session's settings).
"""

from __future__ import annotations

import streamlit as st

from rag.backends import Choice, choose_reranker
from rag.ingest.documents import Document, load_knowledge_base
from rag.models.embedding import Embedder, load_embedder
from rag.models.embedding_cache import CachedEmbedder
from rag.models.local_llm import DEFAULT_MODEL as DEFAULT_LOCAL_MODEL
from rag.models.local_llm import LocalChat
from rag.search.rerank import load_reranker

from .i18n import tr

# (kind, name) this server has loaded, so only a first load shows a spinner: names only, no session's data, and
# bounded (a name is added after a successful load; past 64 the set starts again, which costs one more spinner)
_loaded: set[tuple[str, str]] = set()


def _announced(kind: str, name: str, zh: str, en: str, load):
    """`load()`, with a spinner that says what is loading the first time this server loads it (a first visit
    is never a silent wait)."""
    if (kind, name) in _loaded:
        return load()
    with st.spinner(tr(zh, en)):
        out = load()
    if len(_loaded) >= 64:
        _loaded.clear()
    _loaded.add((kind, name))
    return out


def embedder(name: str) -> Embedder:
    """The embedder `name`, wrapped in the disk cache of document vectors. Raises ModelUnavailableError."""
    return _announced("embedder", name, f"正在加载向量模型 {name}（服务器第一次用它）…",
                      f"Loading the embedder {name} (the server's first use of it)…", lambda: _embedder(name))


@st.cache_resource(show_spinner=False, max_entries=4)
def _embedder(name: str) -> Embedder:
    return CachedEmbedder(load_embedder(name))


@st.cache_resource(show_spinner=False, max_entries=4)
def cross_encoder(name: str):
    """A cross-encoder by name or path. Raises ModelUnavailableError, which st.cache_resource does not cache: a transient hub failure is tried again
    by the next session instead of pinning the fallback."""
    return load_reranker(name)


def reranker(name: str, embedder_name: str) -> Choice:
    """The reranker `name` (or the labelled offline fallback, with the reason) for an embedder. Not cached
    itself: the choice is cheap, and a cached Choice would cache a fallback made after a failure."""
    return choose_reranker(name, embedder(embedder_name), loader=cross_encoder,
                           chat=lambda: local_chat(st.session_state.get("llm.local_model") or DEFAULT_LOCAL_MODEL))


def local_chat(model: str) -> LocalChat:
    """The bundled local LLM, one per model for the whole server: it serialises generations itself
    (a lock; a waiting session hears "queued"). Only a successful load is cached: an exception is not,
    so a later session tries again."""
    return _announced("llm", model, f"正在加载随附的语言模型 {model}（服务器第一次用它，几秒钟）…",
                      f"Loading the bundled language model {model} (the server's first use of it: a few seconds)…",
                      lambda: _local_chat(model))


@st.cache_resource(show_spinner=False, max_entries=2)
def _local_chat(model: str) -> LocalChat:
    return LocalChat(model)


@st.cache_resource(show_spinner=False)
def knowledge_base() -> tuple[Document, ...]:
    """The bundled FAQ (frozen Documents; a tuple so no session can append to the shared copy)."""
    return tuple(load_knowledge_base())


embedder.clear = _embedder.clear  # type: ignore[attr-defined]  # tests empty the shared caches
local_chat.clear = _local_chat.clear  # type: ignore[attr-defined]

"""Models shared by every browser session, loaded once through `st.cache_resource`.

Everything returned here is treated as read-only: a user's corpus, index and traces never go in here
(they live in st.session_state, see corpus.py and indexing.py). The document-vector disk cache inside CachedEmbedder is
keyed by sha1(text), so sharing it cannot mix one user's results into another's.
Not handled here: which model a session uses (ui/choices.py reads the session's settings).
"""

from __future__ import annotations

import threading

import streamlit as st

from rag import config
from rag.backends import Choice, choose_reranker
from rag.errors import ConfigError, ModelUnavailableError
from rag.ingest.documents import Document, load_knowledge_base
from rag.messages import Msg
from rag.models.embedding import EMBEDDERS, Embedder, load_embedder
from rag.models.embedding_cache import CachedEmbedder
from rag.models.local_llm import DEFAULT_MODEL as DEFAULT_LOCAL_MODEL
from rag.models.local_llm import LocalChat
from rag.search.rerank import load_reranker

from .i18n import loc, tr

# (kind, name) this server has loaded, so only a first load shows a spinner: names only, no session's data, and
# bounded (a name is added after a successful load; past 64 the set starts again, which costs one more spinner)
_loaded: set[tuple[str, str]] = set()


def _announced(kind: str, name: str, says: Msg, load):
    """`load()`, with a spinner that says what is loading (`says`) the first time this server loads it (a first
    visit is never a silent wait)."""
    if (kind, name) in _loaded:
        return load()
    with st.spinner(loc(says)):
        out = load()
    if len(_loaded) >= 64:
        _loaded.clear()
    _loaded.add((kind, name))
    return out


# What users can make the server load by typing a name or a path (a sentence-transformers model is hundreds of MB
# to a few GB of memory, held for the server's life): at most this many distinct typed names for the whole server,
# and this many per browser session. The bundled embedders never count.
CUSTOM_PER_SESSION = 2


def custom_total() -> int:
    """$RAG_MAX_CUSTOM_MODELS (default 3): distinct typed model names the whole server will load."""
    try:
        return config.value("RAG_MAX_CUSTOM_MODELS")
    except ConfigError:  # a bad value: the strictest reading, nothing typed is loaded
        return 0


class TypedModels:
    """The typed model names this server has agreed to load (names only, bounded by custom_total, locked)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.names: set[str] = set()


@st.cache_resource(show_spinner=False)
def _typed_models() -> TypedModels:
    return TypedModels()


def admit_typed_model(name: str) -> bool:
    """Refuse, with what to do, a typed model name past this session's or the server's limit; else count it.
    True when it was counted now (forget_typed_model undoes that when the load then fails)."""
    ss = st.session_state
    mine: list[str] = ss.setdefault("models.typed", [])
    if name in mine:
        return False
    if len(mine) >= CUSTOM_PER_SESSION:
        raise ModelUnavailableError(tr(
            zh=f"这个会话已经加载过 {len(mine)} 个自己输入的模型（每个会话最多 {CUSTOM_PER_SESSION} 个）：请改用其中一个"
            "或随附的向量模型。",
            en=f"This session has already loaded {len(mine)} models typed by name (at most {CUSTOM_PER_SESSION} a "
            "session): use one of them or a bundled embedder."))
    typed = _typed_models()
    with typed.lock:
        if name not in typed.names and len(typed.names) >= custom_total():
            raise ModelUnavailableError(tr(
                zh=f"这台服务器已经加载了 {len(typed.names)} 个用户输入的模型（上限 {custom_total()}，"
                "由 RAG_MAX_CUSTOM_MODELS 设定），为了不占满内存不再加载新的：请用随附的向量模型，或请老师调整上限。",
                en=f"This server has already loaded {len(typed.names)} models typed by users (the limit is "
                f"{custom_total()}, set by RAG_MAX_CUSTOM_MODELS) and loads no more, so its memory is not filled: "
                "use a bundled embedder, or ask whoever runs the server to raise the limit."))
        typed.names.add(name)
    mine.append(name)
    return True


def forget_typed_model(name: str) -> None:
    """A typed name whose load failed holds no memory: it no longer counts."""
    typed = _typed_models()
    with typed.lock:
        typed.names.discard(name)
    mine = st.session_state.get("models.typed", [])
    if name in mine:
        mine.remove(name)


def embedder(name: str) -> Embedder:
    """The embedder `name`, wrapped in the disk cache of document vectors. Raises ModelUnavailableError (also for a
    typed name past the limits: admit_typed_model)."""
    counted = name not in EMBEDDERS and admit_typed_model(name)
    try:
        return _announced("embedder", name, Msg(zh=f"正在加载向量模型 {name}（服务器第一次用它）…",
                                                en=f"Loading the embedder {name} (the server's first use of it)…"),
                          lambda: _embedder(name))
    except Exception:
        if counted:
            forget_typed_model(name)
        raise


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
    return _announced("llm", model, Msg(zh=f"正在加载随附的语言模型 {model}（服务器第一次用它，几秒钟）…",
                                        en=f"Loading the bundled language model {model} (the server's first use of it: "
                                           "a few seconds)…"),
                      lambda: _local_chat(model))


@st.cache_resource(show_spinner=False, max_entries=2)
def _local_chat(model: str) -> LocalChat:
    return LocalChat(model)


def server_chat(model: str):
    """The bundled model behind llama.cpp's server (rag/models/llama_server.py), one server and one client for
    the whole app, started on first use; a session that finds every slot busy hears "queued"."""
    from rag.answer.prompt import build_prompt
    from rag.models.llama_server import shared_chat

    # the answer rules in both languages, evaluated into the slots before the class asks (the rules do not
    # depend on the question or the contexts: only the system message is kept): three slots in four Chinese
    heads = [build_prompt("?", [], lang).messages[:1] for lang in ("zh", "zh", "zh", "en")]
    return _announced("server", model, Msg(zh=f"正在启动 llama.cpp 服务器（模型 {model}，第一次要几秒钟）…",
                                           en=f"Starting llama.cpp's server with {model} (the first time: a few seconds)…"),
                      lambda: shared_chat(model, prime=heads))


@st.cache_resource(show_spinner=False)
def knowledge_base() -> tuple[Document, ...]:
    """The bundled FAQ (frozen Documents; a tuple so no session can append to the shared copy)."""
    return tuple(load_knowledge_base())


embedder.clear = _embedder.clear  # type: ignore[attr-defined]  # tests empty the shared caches
local_chat.clear = _local_chat.clear  # type: ignore[attr-defined]

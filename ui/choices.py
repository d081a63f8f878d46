"""Which backends this session runs: the reranker and the generator its settings lead to, and the LLM
endpoint from the sidebar, secrets.toml or the environment (sidebar first). The API key stays in this
session's state; memo keys carry only a digest of it.
Not handled here: choosing with fallbacks (rag/backends.py), loading shared models (models.py).
"""

from __future__ import annotations

import hashlib
import os
from typing import Any, Mapping, MutableMapping

import streamlit as st

from rag.backends import ChatMakers, Choice, choose_generator
from rag.models.llm import LLMConfig, llm_config_from_env

from . import models


def reranker_choice(ss: MutableMapping | None = None) -> Choice:
    ss = st.session_state if ss is None else ss
    return models.reranker(ss["rerank.name"], ss["applied.embedder"])


def read_secrets() -> Mapping | None:
    """st.secrets as a dict, or None when there is no secrets.toml (which must not crash the app)."""
    try:
        return st.secrets.to_dict()
    except FileNotFoundError:
        return None
    except Exception as exc:  # a malformed secrets.toml: say so, run without it
        if type(exc).__name__ == "StreamlitSecretNotFoundError":
            return None
        st.warning(f".streamlit/secrets.toml could not be read ({type(exc).__name__}); ignoring it")
        return None


def llm_config(ss: MutableMapping | None = None, environ: Mapping[str, str] | None = None,
               secrets: Mapping | None = None) -> LLMConfig | None:
    """Sidebar fields > secrets.toml > environment; None when nothing is configured or offline is on.

    Raises ConfigError for an unusable combination (e.g. a base URL without a model)."""
    ss = st.session_state if ss is None else ss
    if ss.get("llm.offline"):
        return None
    typed = {
        field: str(ss.get(f"llm.{field}") or "").strip() for field in ("base_url", "model", "api_key")
    }
    typed = {k: v for k, v in typed.items() if v}
    merged = dict(secrets or {})
    if typed:  # the sidebar wins: pass it as the highest-priority source, the [llm] secrets table
        found = merged.get("llm")
        table = dict(found) if isinstance(found, Mapping) else {}
        merged["llm"] = {**table, **typed}
    return llm_config_from_env(os.environ if environ is None else environ, merged or None)


def generator_choice(embedder, ss: MutableMapping | None = None) -> tuple[Choice, Any]:
    """(Choice of generator, chat backend or None). Raises ConfigError for a bad LLM configuration."""
    ss = st.session_state if ss is None else ss
    offline = bool(ss.get("llm.offline"))
    config = None if offline else llm_config(ss, secrets=read_secrets())
    return choose_generator(embedder, ss["llm.generator"], ss["llm.local_model"], config=config, offline=offline,
                            makers=ChatMakers(models.local_chat, models.server_chat))


def no_model_hint(gen: Choice) -> str:
    """What to do when a step needs a language model and the session has none, in the UI's language: with the
    bundled model installed but the stand-in chosen, choose it (installing again would change nothing)."""
    from rag.pipeline import model_not_chosen

    from .i18n import tr

    if model_not_chosen(gen.backend):
        return tr(zh=f"现在选的生成器（{gen.backend.name}）没有语言模型：在左侧“大模型设置”里把生成器选为 local，或填写接口。",
                  en=f"the chosen generator ({gen.backend.name}) has no language model: choose 'local' in the "
                  "sidebar's LLM settings, or fill in an endpoint.")
    return tr(zh="请安装随附的本地模型（README 的第一条命令），或在左侧“大模型设置”里填写接口。",
              en="install the bundled local model (the README's first command), or fill in an endpoint in the "
              "sidebar's LLM settings.")


def opinion_chat(ss: MutableMapping | None = None):
    """The model asked for the audit's second opinion: the bundled 1.5B where installed, else the 0.5B (the
    judge's choice, rag/backends.judge_model); None when neither can run or the option is off."""
    from rag.backends import judge_model
    from rag.models.local_llm import local_available

    ss = st.session_state if ss is None else ss
    if not ss.get("answer.second_opinion"):
        return None
    key, _ = judge_model("auto")
    if not local_available(key)[0]:
        return None
    return models.local_chat(key)


def sidebar_generator(ss: MutableMapping | None = None) -> Choice:
    """The generator the sidebar settings lead to, for its caption (the embedder loads from its cache)."""
    ss = st.session_state if ss is None else ss
    return generator_choice(models.embedder(ss["applied.embedder"]), ss)[0]


def generator_identity(ss: MutableMapping) -> tuple:
    """What identifies the generator a session's settings lead to, for memoising, read from the settings alone:
    building the generator to name it would let a bad endpoint setting stop pages that need no generator
    (retrieval, rerank). The key is only digested, never kept."""
    key = str(ss.get("llm.api_key") or "")
    return (ss.get("llm.generator"), ss.get("llm.local_model"), bool(ss.get("llm.offline")),
            str(ss.get("llm.base_url") or "").strip(), str(ss.get("llm.model") or "").strip(),
            hashlib.sha256(key.encode()).hexdigest()[:12] if key else "")

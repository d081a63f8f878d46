"""The sidebar every page shows: the shared question, the UI language and the LLM settings.

The API key field is a password field: the value stays in this browser session's state, is never
echoed back, and never reaches a trace, an export or a log (traces record the generator's label,
which names the model and host only).
Not handled here: building the generator (state.generator_choice does, from these fields).
"""

from __future__ import annotations

import streamlit as st

from rag.errors import RagError

from . import state
from .i18n import LANGS, t, tr


def render() -> None:
    with st.sidebar:
        st.text_area(t("question"), key="question", height=90, help=t("question.help"))
        st.radio(t("lang"), list(LANGS), format_func=LANGS.get, key="ui.lang", horizontal=True)
        with st.expander(t("llm.settings"), expanded=False):
            st.caption(tr(
                "任何 OpenAI 兼容接口（OpenAI、DeepSeek、通义千问、Ollama…）。留空则读取环境变量 "
                "OPENAI_BASE_URL / OPENAI_API_KEY / OPENAI_MODEL 或 .streamlit/secrets.toml；都没有时用离线的抽取式生成器。",
                "Any OpenAI-compatible endpoint (OpenAI, DeepSeek, Qwen, Ollama, ...). Empty fields fall back to "
                "OPENAI_BASE_URL / OPENAI_API_KEY / OPENAI_MODEL or .streamlit/secrets.toml; with none of them the "
                "offline extractive generator answers.",
            ))
            st.text_input(t("llm.base_url"), key="llm.base_url", placeholder="https://api.deepseek.com/v1")
            st.text_input(t("llm.model"), key="llm.model", placeholder="deepseek-chat")
            st.text_input(t("llm.api_key"), key="llm.api_key", type="password", placeholder="sk-...")
            st.toggle(t("llm.offline"), key="llm.offline")
            try:
                config = None if st.session_state["llm.offline"] else state.llm_config(secrets=state.read_secrets())
            except RagError as exc:
                st.error(str(exc))
            else:
                if config is None:
                    st.caption("🔌 " + tr("离线：抽取式生成器（不是语言模型）", "offline: extractive generator (no LLM)"))
                else:
                    st.caption("🤖 " + config.describe())

"""The sidebar every page shows: the shared question, the UI language, the page's terms (glossary.py), a link to
share and the LLM settings.

The API key field is a password field: the value stays in this browser session's state, is never
echoed back, and never reaches a trace, an export or a log (traces record the generator's label,
which names the model and host only).
Not handled here: building the generator (choices.generator_choice does, from these fields).
"""

from __future__ import annotations

import streamlit as st

from rag import config
from rag.errors import RagError
from rag.messages import Msg
from rag.models.gguf_parts import GGUF_MODELS
from rag.models.local_llm import local_model_names

from . import choices, glossary, links
from .i18n import LANGS, loc, t, tr
from .render import md_escape

# One label in both UI languages: a radio whose option labels change with the language loses its value.
GENERATOR_LABELS = {"auto": Msg(zh="自动 auto", en="auto"), "local": Msg(zh="本地 local", en="local"),
                    "endpoint": Msg(zh="接口 endpoint", en="endpoint"), "server": Msg(zh="服务器 server", en="server"),
                    "extractive": Msg(zh="抽取式 extractive", en="extractive")}


def render(page: str = "home") -> None:
    with st.sidebar:
        for message in config.problems():  # a bad RAG_* value: said on every page, with the fix, not a crash later
            st.error(tr(zh="环境变量有误：", en="A setting in the environment is wrong: ") + md_escape(message),
                     icon=":material/settings_alert:")
        st.text_area(t("question"), key="question", height=90, help=t("question.help"))
        st.radio(t("lang"), list(LANGS), format_func=LANGS.get, key="ui.lang", horizontal=True)
        glossary.panel(page)
        with st.expander(tr(zh="分享这个页面的链接", en="Share a link to this page"), icon=":material/link:"):
            # st.code has a copy button; the link holds the question and the settings, never the uploads or a key
            st.code(links.share_url(st.context.url or "", st.session_state), language=None, wrap_lines=True)
            st.caption(tr(zh="链接里有问题和各页的设置；上传的文件和 API 密钥不在其中。",
                          en="The link holds the question and every page's settings; uploaded files and API keys are "
                          "not in it."))
        with st.expander(t("llm.settings"), expanded=False):
            st.radio(t("generator"), list(GENERATOR_LABELS), key="llm.generator", horizontal=True,
                     format_func={k: loc(v) for k, v in GENERATOR_LABELS.items()}.__getitem__,  # in this run's language
                     help=tr(zh="自动：配置了接口就用接口，否则用随附的本地模型，都没有时用抽取式替身。"
                             "服务器：同一个随附模型，由 llama.cpp 自己的服务器在本机运行，几个会话同时生成"
                             "（一个班级同时使用时；先运行 bash scripts/build_server.sh）。",
                             en="auto: a configured endpoint, else the bundled local model, else the extractive stand-in. "
                             "server: the same bundled model run by llama.cpp's own server on this machine, several "
                             "sessions generating at once (for a class; run bash scripts/build_server.sh first)."))
            if st.session_state["llm.generator"] in ("auto", "local", "server"):
                st.radio(tr(zh="本地模型 Local model", en="Local model"), local_model_names(), key="llm.local_model",
                         horizontal=True, format_func=lambda k: GGUF_MODELS[k].title,
                         help=tr(zh="随附的 Qwen2.5 GGUF，由 llama.cpp 在本机运行；1.5B 更强但更慢。",
                                 en="The bundled Qwen2.5 GGUF, run here by llama.cpp; 1.5B is stronger but slower."))
            st.caption(tr(
                zh="任何 OpenAI 兼容接口（OpenAI、DeepSeek、通义千问、Ollama…）。留空则读取环境变量 "
                "OPENAI_BASE_URL / OPENAI_API_KEY / OPENAI_MODEL 或 .streamlit/secrets.toml。",
                en="Any OpenAI-compatible endpoint (OpenAI, DeepSeek, Qwen, Ollama, ...). Empty fields fall back to "
                "OPENAI_BASE_URL / OPENAI_API_KEY / OPENAI_MODEL or .streamlit/secrets.toml.",
            ))
            st.text_input(t("llm.base_url"), key="llm.base_url", placeholder="https://api.deepseek.com/v1")
            st.text_input(t("llm.model"), key="llm.model", placeholder="deepseek-chat")
            st.text_input(t("llm.api_key"), key="llm.api_key", type="password", placeholder="sk-...")
            st.toggle(t("llm.offline"), key="llm.offline")
            try:
                choice = choices.sidebar_generator()
            except RagError as exc:
                st.error(md_escape(exc))
            else:
                icon = ":material/power_off: " if choice.is_fallback else ":material/smart_toy: "
                st.caption(icon + md_escape(loc(choice.label)) + (f" · {md_escape(loc(choice.reason))}" if choice.reason else ""))

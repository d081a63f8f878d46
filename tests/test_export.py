"""Take it home: the notebook the answer page exports runs, as a student would run it (nbclient, a real kernel),
and prints the same top 5 as the app for its question, from every list; the script is the same code.

The app runs the answer page with settings that differ from the defaults in every list (a question of the lesson,
RRF k = 20, BM25 with stop words, the fallback reranker), so a setting the export forgot would show as a
different ranking.
Not handled here: the answer's wording (greedy decoding repeats it, but the test runs the extractive stand-in to
stay quick; tests/test_pipeline.py covers generation).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_app import go, new_app

ROOT = Path(__file__).resolve().parent.parent
QUESTION = "关键词检索里，一个词重复出现很多次为什么加分越来越少"
KEYS = ("applied.chunk", "applied.embedder", "corpus.files", "corpus.hash", "index.stopwords", "index.tokenizer",
        "index.contextual", "index.sparse", "rerank.enabled", "rerank.name", "rerank.top_k", "retrieval.mode",
        "retrieval.recall_n", "retrieval.depth", "retrieval.rrf_k", "retrieval.w_dense", "retrieval.w_bm25",
        "answer.rewrite", "answer.n_queries", "answer.compare", "answer.lang", "answer.cite", "answer.second_opinion",
        "answer.gate", "answer.compress", "answer.fill_in", "answer.prompt_style", "question", "llm.generator",
        "llm.local_model", "llm.offline", "llm.base_url")


@pytest.fixture(scope="module")
def app_run(app_test):
    at = new_app()
    at.sidebar.radio(key="llm.generator").set_value("extractive")
    at.sidebar.text_area(key="question").set_value(QUESTION)
    at.run()
    at = go(at, "upload")
    at.checkbox(key="index.stopwords").set_value(True).run()
    at = go(at, "retrieval")
    at.slider(key="retrieval.rrf_k").set_value(20).run()
    at = go(at, "rerank")
    at.selectbox(key="rerank.name").set_value("sentence-maxsim").run()
    at = go(at, "answer")
    assert not at.exception
    return at


def test_the_exported_notebook_reproduces_the_apps_rankings(app_run, tmp_path, notebook_kernel):
    nbformat = pytest.importorskip("nbformat")
    nbclient = notebook_kernel
    from ui import take_home

    at = app_run
    ss = {k: at.session_state[k] for k in KEYS}
    trace = at.session_state["answer.last_trace"]
    recipe = take_home.recipe(ss)
    assert recipe.settings.rrf_k == 20 and recipe.stopwords and recipe.reranker == "sentence-maxsim"
    nb = nbformat.reads(take_home.notebook(recipe), as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    last = nb.cells[-1].outputs
    printed = "".join(o.get("text", "") for o in last if o.get("output_type") == "stream")
    got = json.loads(printed.strip().splitlines()[-1])
    k = trace.settings.top_k
    app = {name: [h.chunk_id for h in getattr(trace.retrieval, name)[:k]] for name in ("dense", "bm25", "hybrid")}
    app["final"] = [h.chunk_id for h in trace.final]
    assert {name: got[name] for name in app} == app
    assert got["answer"] == trace.answer  # the stand-in is deterministic: the same picks, word for word


def test_the_script_is_the_notebooks_code_and_compiles(app_run):
    from rag.export import cells
    from ui import take_home

    recipe = take_home.recipe({k: app_run.session_state[k] for k in KEYS})
    text = take_home.script(recipe)
    compile(text, "rag_question.py", "exec")
    for kind, source in cells(recipe):
        if kind == "code":
            assert source in text
    assert "api_key" not in text.lower() and "sk-" not in text

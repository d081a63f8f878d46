"""Every combination works: answer strategy x retrieval mode x rewrite x reranker x generator kind, through the
CLI's `ask --json` (every pair of values at least once), and the answer and loops pages through AppTest.

A cell either answers (exit 0, strict JSON with an answer), or refuses with a clear message (exit 2, one line on
stderr that says what to do, no traceback), and which of the two is decided up front by `expected_refusal`: a
cell that should answer and refuses fails, and so does one that should refuse and answers. The generator kinds
are the extractive stand-in, an OpenAI-compatible endpoint (tests/fake_openai.py on 127.0.0.1) and the bundled
local model (short answers: RAG_LLM_MAX_TOKENS).
Not handled here: the quality of the answers (tests/test_pipeline.py, bench/), each stage on its own.
"""

from __future__ import annotations

import json
import math
from itertools import combinations

import pytest

from rag.cli.main import main

FACTORS: dict[str, tuple] = {
    "strategy": ("plain", "self-rag", "agent", "graph", "graph-global"),
    "mode": ("default", "dense", "bm25", "hybrid", "hybrid+graph", "graph"),
    "rewrite": ("none", "hyde", "multi-query"),
    "reranker": ("none", "learned", "sentence-maxsim", "token-maxsim", "llm-judge"),
    "generator": ("extractive", "endpoint", "local"),
}
QUESTION = "RRF 融合时常数 k 通常取多少？"


def offered(row: dict) -> str | None:
    """Why a (partial) row is not offered, in the words its refusal must contain; None when it is offered."""
    strategy, generator = row.get("strategy"), row.get("generator")
    if strategy in ("graph", "graph-global") and row.get("mode", "default") != "default":
        return "--mode"
    if strategy == "graph-global" and row.get("rewrite", "none") != "none":
        return "--rewrite"
    if strategy == "graph-global" and row.get("reranker", "none") != "none":
        return "--reranker"
    if generator == "extractive" and strategy in ("self-rag", "agent"):
        return "language model"
    if generator == "extractive" and row.get("rewrite", "none") != "none":
        return "language model"
    return None


def pairwise(factors: dict[str, tuple], allowed) -> list[dict]:
    """Offered rows that hold every offered pair of values of every two factors at least once (greedy and
    deterministic: each row starts from the first pair not yet held and adds the value that holds most new pairs)."""
    names = list(factors)

    def pair_ok(i, a, j, b) -> bool:
        return allowed({names[i]: a, names[j]: b})

    todo = {(i, a, j, b) for i, j in combinations(range(len(names)), 2)
            for a in factors[names[i]] for b in factors[names[j]] if pair_ok(i, a, j, b)}
    rows = []
    while todo:
        i, a, j, b = min(todo, key=lambda p: (p[0], p[2], factors[names[p[0]]].index(p[1]),
                                              factors[names[p[2]]].index(p[3])))
        row = {i: a, j: b}
        for k in range(len(names)):
            if k in row:
                continue

            def gain(v, k=k):
                return sum(((m, row[m], k, v) if m < k else (k, v, m, row[m])) in todo for m in row)

            fits = [v for v in factors[names[k]] if allowed({names[m]: row[m] for m in row} | {names[k]: v})]
            row[k] = max(fits, key=lambda v: (gain(v), -factors[names[k]].index(v)))
        todo -= {(m, row[m], n, row[n]) for m, n in combinations(sorted(row), 2)}
        rows.append({names[k]: row[k] for k in sorted(row)})
    return rows


CELLS = pairwise(FACTORS, lambda row: offered(row) is None)
# Combinations that are not offered: each must be refused with a message that says which flag to drop.
REFUSED = [
    {"strategy": "graph", "mode": "dense", "rewrite": "none", "reranker": "learned", "generator": "endpoint"},
    {"strategy": "graph-global", "mode": "default", "rewrite": "hyde", "reranker": "none", "generator": "endpoint"},
    {"strategy": "graph-global", "mode": "default", "rewrite": "none", "reranker": "learned", "generator": "extractive"},
    {"strategy": "self-rag", "mode": "default", "rewrite": "none", "reranker": "none", "generator": "extractive"},
    {"strategy": "plain", "mode": "hybrid", "rewrite": "multi-query", "reranker": "none", "generator": "extractive"},
]


def test_the_cells_cover_every_offered_pair():
    for x, y in combinations(FACTORS, 2):
        seen = {(c[x], c[y]) for c in CELLS}
        wanted = {(a, b) for a in FACTORS[x] for b in FACTORS[y] if offered({x: a, y: b}) is None}
        assert seen >= wanted, (x, y, wanted - seen)
    assert all(offered(c) is None for c in CELLS) and all(offered(c) for c in REFUSED)
    assert len(CELLS) < 45  # pairwise, not the 1,350 cells of the full product


def argv(cell: dict) -> list[str]:
    out = ["ask", QUESTION, "--json", "--loop", cell["strategy"], "--generator", cell["generator"],
           "--top-k", "3", "--recall-n", "8"]
    if cell["rewrite"] != "none":
        out += ["--rewrite", cell["rewrite"]]
    if cell["mode"] != "default":
        out += ["--mode", cell["mode"]]
    if cell["reranker"] != "none":
        out += ["--reranker", cell["reranker"]]
    elif cell["strategy"] != "graph-global":
        out += ["--no-rerank"]
    if cell["strategy"] in ("self-rag", "agent"):
        out += ["--budget", "2"]
    return out


def strict_json(text: str):
    def refuse(constant):
        raise AssertionError(f"not JSON: {constant}")
    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def cell_env(monkeypatch, fake_llm, cache_dir):
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-matrix")
    monkeypatch.setenv("OPENAI_MODEL", fake_llm.model)
    monkeypatch.setenv("RAG_LLM_MAX_TOKENS", "40")
    monkeypatch.setenv("RAG_JUDGE_BUDGET_S", "1")
    return fake_llm


def _needs_local(cell: dict) -> bool:
    return cell["generator"] == "local" or cell["reranker"] == "llm-judge"


@pytest.mark.parametrize("cell", [c for c in CELLS if not _needs_local(c)], ids=lambda c: "-".join(c.values()))
def test_ask_cell_answers(cell, cell_env, capsys):
    _ask_cell(cell, capsys)


@pytest.mark.parametrize("cell", [c for c in CELLS if _needs_local(c)], ids=lambda c: "-".join(c.values()))
def test_ask_cell_answers_on_the_local_model(cell, cell_env, capsys, local_model):
    _ask_cell(cell, capsys)


def _ask_cell(cell, capsys) -> None:
    code = main(argv(cell))
    out, err = capsys.readouterr()
    assert code == 0 and "Traceback" not in err, err
    trace = strict_json(out)  # NaN (a candidate the LLM judge never reached) would fail here
    assert isinstance(trace["answer"], str) and trace["answer"].strip(), trace
    final = (trace["final"] or {}) if "steps" in trace else trace  # a loop's JSON holds its answer's trace as "final"
    for h in (final.get("rerank") or {}).get("hits", []):
        assert h["score"] is None or math.isfinite(h["score"])


@pytest.mark.parametrize("cell", REFUSED, ids=lambda c: "-".join(c.values()))
def test_ask_cell_that_is_not_offered_is_refused_with_the_fix(cell, cell_env, capsys):
    code = main(argv(cell))
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "Traceback" not in err, (code, out[:300], err)
    last = err.strip().splitlines()[-1]
    assert last.startswith("error: ") and offered(cell) in last, err


# ------------------------------------------------------------------------------------- the pages, through AppTest

PAGE_FACTORS: dict[str, tuple] = {  # what the answer page takes (the retrieval page's radio offers these modes)
    "mode": ("dense", "bm25", "hybrid"),
    "rewrite": ("none", "hyde", "multi-query"),
    "reranker": ("off", "learned", "sentence-maxsim", "token-maxsim", "llm-judge"),
    "generator": ("extractive", "endpoint"),
}
PAGE_CELLS = pairwise(PAGE_FACTORS, lambda row: True)


def _app(fake_llm, generator: str):
    from tests.test_app import new_app

    at = new_app()
    at.sidebar.radio(key="llm.generator").set_value(generator)
    if generator == "endpoint":
        at.sidebar.text_input(key="llm.base_url").set_value(fake_llm.url)
        at.sidebar.text_input(key="llm.model").set_value(fake_llm.model)
        at.sidebar.text_input(key="llm.api_key").set_value("sk-pages")
    at.sidebar.text_area(key="question").set_value(QUESTION)
    return at


@pytest.mark.parametrize("cell", PAGE_CELLS, ids=lambda c: "-".join(c.values()))
def test_answer_page_cell_answers_or_says_what_is_missing(cell, fake_llm, monkeypatch, cache_dir, app_test, request):
    from tests.test_app import go

    if cell["reranker"] == "llm-judge":
        request.getfixturevalue("local_model")  # the judge needs the bundled model: skipped (CI: failed) without it
    monkeypatch.setenv("RAG_JUDGE_BUDGET_S", "1")
    at = _app(fake_llm, cell["generator"])
    at.session_state["retrieval.mode"] = cell["mode"]
    at.session_state["answer.rewrite"] = cell["rewrite"]
    at.session_state["rerank.enabled"] = cell["reranker"] != "off"
    if cell["reranker"] != "off":
        at.session_state["rerank.name"] = cell["reranker"]
    at.run()
    at = go(at, "answer")  # no exception box (go asserts it)
    if cell["generator"] == "extractive" and cell["rewrite"] != "none":  # the page says so instead of running
        assert any("language model" in e.value or "语言模型" in e.value for e in at.error), [e.value for e in at.error]
        return
    assert not at.error, [e.value for e in at.error]
    trace = at.session_state["answer.last_trace"]
    assert trace.answer.strip() and trace.settings.mode == cell["mode"] and trace.settings.rewrite == cell["rewrite"]
    strict_json(trace.to_json())


def test_loops_page_runs_every_loop_it_offers(fake_llm, cache_dir, app_test):
    from rag.loops.registry import LOOPS
    from tests.test_app import go

    at = _app(fake_llm, "endpoint")
    at.run()
    at = go(at, "loops")
    at.multiselect(key="loops.strategies").set_value(list(LOOPS)).run()
    at.button(key="loops.run").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    ran = {lt.name for lt in at.session_state["memo.loop"].values()}
    assert ran == set(LOOPS)

"""The pipeline's stages return frozen results and the Trace is assembled from them (issue 66, item 1).

No function of `rag/pipeline.py` writes into a Trace: `gather` builds one from the retrieval's results, `answer_from`
and `ask` make new ones with `Trace.then` (a stage's report and fields), so the trace a loop hands `answer_from` is
the same afterwards."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from rag.stages import Clock, Report, joined

PIPELINE = Path(__file__).resolve().parents[1] / "rag" / "pipeline.py"
MUTATORS = {"append", "extend", "update", "insert", "pop", "clear", "setdefault", "remove"}



def _root(node: ast.AST) -> str | None:
    """The name an attribute or subscript chain starts from (`trace` for trace.notes[0].x)."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _writes_trace(fn: ast.FunctionDef) -> bool:
    for node in ast.walk(fn):
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        for t in targets:
            for part in (t.elts if isinstance(t, ast.Tuple) else [t]):
                if isinstance(part, (ast.Attribute, ast.Subscript)) and _root(part) == "trace":
                    return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            held = node.func.value
            if node.func.attr in MUTATORS and isinstance(held, (ast.Attribute, ast.Subscript)) and _root(held) == "trace":
                return True
    return False


def _writers() -> set[str]:
    tree = ast.parse(PIPELINE.read_text(encoding="utf-8"))
    return {fn.name for fn in ast.walk(tree) if isinstance(fn, ast.FunctionDef) and _writes_trace(fn)}


def test_no_function_of_the_pipeline_writes_into_a_trace():
    assert not _writers(), f"these write into a Trace; return a stage result instead: {sorted(_writers())}"


@pytest.mark.parametrize("name", ["ask", "answer_from", "_no_rag", "_audited", "gather", "_retrieve", "_hyde", "_multi_query", "_rerank", "_contexts", "_gate",
                                  "_prompt", "_asked", "_rebind", "_rebound_notes", "_generate", "_stand_in",
                                  "_fill_in", "_lead", "_show_lead", "_opinion", "_kept_notes", "ask_no_rag"])
def test_the_stages_write_nothing(name):
    assert name not in _writers()


def test_the_detector_sees_each_kind_of_write():
    def writes(src: str) -> bool:
        return _writes_trace(ast.parse(src).body[0])  # type: ignore[arg-type]

    assert writes("def f(trace):\n    trace.answer = 'x'")
    assert writes("def f(trace):\n    trace.timings['a'] += 1")
    assert writes("def f(trace):\n    a, trace.rebound = 1, 2")
    assert writes("def f(trace):\n    trace.notes.append('x')")
    assert not writes("def f(trace):\n    x = trace.answer\n    notes = [trace.question]\n    notes.append(1)")


def test_joined_reports_keep_order_and_add_up_seconds():
    a = Report(notes=("one",), backends={"rewrite": "A"}, timings={"retrieve": 1.0})  # type: ignore[arg-type]
    b = Report(notes=("two",), backends={"reranker": "B"}, timings={"retrieve": 0.5, "rerank": 2.0})  # type: ignore[arg-type]
    both = joined(a, b)
    assert both.notes == ("one", "two")
    assert list(both.backends) == ["rewrite", "reranker"]
    assert both.timings == {"retrieve": 1.5, "rerank": 2.0}


def test_clock_adds_up_a_stage_timed_twice():
    clock = Clock()
    with clock("retrieve"):
        pass
    first = clock.read()["retrieve"]
    with clock("retrieve"):
        pass
    assert clock.read()["retrieve"] >= first
    assert list(clock.read()) == ["retrieve"]


def test_then_makes_a_new_trace_and_leaves_this_one_alone():
    from rag.trace import AskSettings, Trace

    first = Trace(question="q", settings=AskSettings(), notes=["a"], backends={"embedder": "e"}, timings={"gate": 1.0})
    second = first.then(Report(notes=("b",), backends={"verifier": "v"}, timings={"gate": 0.5, "audit": 2.0}),  # type: ignore[arg-type]
                        answer="x")
    assert (second.answer, second.notes, second.backends) == ("x", ["a", "b"], {"embedder": "e", "verifier": "v"})
    assert second.timings == {"gate": 1.5, "audit": 2.0}
    assert (first.answer, first.notes, first.backends, first.timings) == ("", ["a"], {"embedder": "e"}, {"gate": 1.0})


def test_answer_from_leaves_the_gathered_trace_as_it_was(kb_index):
    """A loop gathers, looks at the contexts, then answers: the trace it gathered is not changed under it."""
    from rag.backends import choose_generator, choose_reranker
    from rag.pipeline import answer_from, gather
    from rag.run import RunContext
    from rag.trace import AskSettings

    gen, _ = choose_generator(kb_index.embedder, "extractive", offline=True)
    rr = choose_reranker(None, kb_index.embedder)
    ctx = RunContext(kb_index, AskSettings(), gen.backend, reranker=rr.backend)
    gathered = gather("什么是 RRF？", ctx)
    before = (list(gathered.notes), dict(gathered.backends), dict(gathered.timings), gathered.answer,
              [c.ref for c in gathered.contexts])
    answered = answer_from(gathered, ctx)
    assert answered is not gathered and answered.audit is not None and answered.answer
    assert (list(gathered.notes), dict(gathered.backends), dict(gathered.timings), gathered.answer,
            [c.ref for c in gathered.contexts]) == before
    assert gathered.audit is None and "audit" in answered.timings and "audit" not in gathered.timings

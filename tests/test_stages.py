"""The pipeline's stages return frozen results and the Trace is assembled from them (issue 66, item 1).

`rag/pipeline.py` may change a Trace it holds only in the functions listed in `STILL_WRITING` below: the answer's
stages, not yet turned into results. The list only shrinks: a function that no longer writes must leave it (the test
says so), and a function not on it that starts writing fails."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from rag.stages import Clock, Report, joined

PIPELINE = Path(__file__).resolve().parents[1] / "rag" / "pipeline.py"
MUTATORS = {"append", "extend", "update", "insert", "pop", "clear", "setdefault", "remove"}

# Where rag/pipeline.py writes into a Trace: the two functions that assemble it from the stages' results.
STILL_WRITING = {"ask", "answer_from"}


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
            if node.func.attr == "add" and isinstance(held, ast.Name) and held.id == "trace":  # Trace.add(report)
                return True
    return False


def _writers() -> set[str]:
    tree = ast.parse(PIPELINE.read_text(encoding="utf-8"))
    return {fn.name for fn in ast.walk(tree) if isinstance(fn, ast.FunctionDef) and _writes_trace(fn)}


def test_only_listed_functions_write_into_the_trace():
    writers = _writers()
    assert not writers - STILL_WRITING, f"new functions write into the Trace; return a stage result instead: " \
                                        f"{sorted(writers - STILL_WRITING)}"
    assert not STILL_WRITING - writers, f"these no longer write into the Trace: take them off STILL_WRITING: " \
                                        f"{sorted(STILL_WRITING - writers)}"


@pytest.mark.parametrize("name", ["gather", "_retrieve", "_hyde", "_multi_query", "_rerank", "_contexts", "_gate",
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
    assert writes("def f(trace):\n    trace.add(report)")
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

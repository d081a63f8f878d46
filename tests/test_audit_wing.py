"""Issue 66, item 4: the audit wing's one shape. Every check is a module of rag/audit/checks/ that reports under its
own file's name and reads one thing (a `Claim`: the sentence, its evidence span, the question); support.py runs them
in order and makes no verdict of its own."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from rag.audit import support
from rag.audit.checks.verdict import Check, Claim, Evidence
from rag.audit.fact_text import read

CHECKS = Path(__file__).resolve().parents[1] / "rag" / "audit" / "checks"


def _check_names(path: Path) -> list[ast.expr]:
    """The first argument of every Check(...) a file writes."""
    tree = ast.parse(path.read_text("utf-8"))
    return [n.args[0] for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "Check" and n.args]


def test_each_rule_reports_under_its_own_file_name():
    names = [rule.NAME for rule in support.RULES]
    files = [Path(rule.__file__).stem.replace("_", "-") for rule in support.RULES]  # type: ignore[attr-defined]
    assert names == files
    assert len(set(names)) == len(names)


@pytest.mark.parametrize("path", sorted(CHECKS.glob("*.py")), ids=lambda p: p.name)
def test_a_check_module_writes_no_other_name(path):
    """quantity.py reported as "numbers" and scope.py as "swap", and novelty.py held four checks: a check module
    now writes only its own NAME into a Check."""
    for arg in _check_names(path):
        assert isinstance(arg, ast.Name) and arg.id == "NAME", f"{path.name}: Check({ast.unparse(arg)}, ...)"


def test_support_runs_the_rules_and_writes_no_verdict_of_its_own():
    assert _check_names(Path(support.__file__)) == []


def test_the_registry_runs_every_check_module_that_has_the_one_signature():
    """Every module of checks/ with a `check(claim)` is in RULES, so a check cannot be written and not run."""
    with_signature = set()
    for path in CHECKS.glob("*.py"):
        for node in ast.parse(path.read_text("utf-8")).body:
            if isinstance(node, ast.FunctionDef) and node.name == "check" and len(node.args.args) == 1:
                ann = node.args.args[0].annotation
                if isinstance(ann, ast.Name) and ann.id == "Claim":
                    with_signature.add(path.stem)
    assert with_signature == {Path(rule.__file__).stem for rule in support.RULES}  # type: ignore[attr-defined]


def _claim(sentence: str, chunk: str, question: str = "") -> Claim:
    ev = Evidence("c", chunk, 0, len(chunk))
    return Claim(sentence, read(sentence), chunk, read(chunk), ev, read(chunk), support.title_of(chunk), question,
                 1.0, support.SUPPORTED_COVERAGE, True)


def test_the_renamed_checks_still_contradict():
    """The quantity and scope checks report under their own names and still make a sentence contradicted (they
    were counted as numbers and swap before)."""
    int8 = "INT8 量化把模型权重从 32 位浮点数压缩成 8 位整数，显存占用约为原来的四分之一。"
    quantity = support.check_sentence("INT8 量化把权重压缩成 32 位整数。", {"c": int8})
    assert quantity.label == "contradicted" and "quantity" in {c.name for c in quantity.failed}, quantity.reasons("en")
    split = "在训练集上误差很小，在测试集上误差很大，这就是过拟合。"
    scoped = support.check_sentence("过拟合时在测试集上误差很小。", {"c": split})
    assert scoped.label == "contradicted" and "scope" in {c.name for c in scoped.failed}, scoped.reasons("en")


def test_a_rule_reads_only_the_claim():
    """One signature: each rule answers from a Claim alone (here a number the span has nothing against)."""
    from rag.audit.checks import new_number, numbers

    found = new_number.check(_claim("这个方法是 2019 年提出的。", "这个方法很常用，也很简单。"))
    assert isinstance(found, Check) and found.name == "new-number" and not found.passed
    assert numbers.check(_claim("这个方法是 2019 年提出的。", "这个方法很常用，也很简单。")) is None

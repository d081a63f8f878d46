"""rag/config.py: every RAG_* variable read in one place, checked one way, and listed in the README."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rag import config
from rag.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]

BAD = {"int": ["many", "1.5", "nan"], "float": ["fast", "nan", "inf"], "bool": ["maybe"]}


@pytest.mark.parametrize("name", sorted(config.VARIABLES))
def test_every_bad_value_gets_the_same_message_shape(name):
    var = config.VARIABLES[name]
    bad = BAD.get(var.kind, [] if var.kind in ("text", "secret", "path") else ["no-such-choice"])
    if var.minimum is not None:
        bad = bad + [str(int(var.minimum) - 1)]
    for raw in bad:
        with pytest.raises(ConfigError) as err:
            config.value(name, {name: raw})
        msg = str(err.value)
        assert msg.startswith(f"{name}=") and " must be " in msg and f"e.g. {name}=" in msg and "unset it" in msg
    assert config.value(name, {}) == var.default == config.value(name, {name: "  "})  # unset or empty: default


def test_good_values_are_read_as_their_kind():
    assert config.value("RAG_THREADS", {"RAG_THREADS": " 2 "}) == 2
    assert config.value("RAG_LLM_TIMEOUT", {"RAG_LLM_TIMEOUT": "2.5"}) == 2.5
    assert config.value("RAG_SHIPPED_VECTORS", {"RAG_SHIPPED_VECTORS": "off"}) is False
    assert config.value("RAG_GENERATOR", {"RAG_GENERATOR": "Local"}) == "local"
    assert config.value("RAG_CACHE_DIR", {"RAG_CACHE_DIR": "~/x"}) == Path.home() / "x"


def test_a_secret_is_never_in_the_message():
    secret = [n for n, v in config.VARIABLES.items() if v.kind == "secret"]
    assert secret == ["RAG_MILVUS_TOKEN", "RAG_TEACHER_KEY"]
    for name in secret:
        assert config.value(name, {name: "user:pw"}) == "user:pw"
        bad = config._bad(config.VARIABLES[name], "user:pw", "x")
        assert "user:pw" not in str(bad) and "(hidden)" in str(bad)


def test_the_configuration_guide_lists_exactly_the_variables():
    readme = (ROOT / "docs" / "configuration.md").read_text("utf-8")
    section = readme.split("## Settings (environment variables)", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| `(RAG_[A-Z0-9_]+)` \|", section, re.MULTILINE)
    assert listed == list(config.VARIABLES)


# a read: environ.get("RAG_X"), getenv("RAG_X"), environ["RAG_X"] not assigned to (a bench may set one for its run)
READS = re.compile(r"""(?:environ\.get\s*\(|getenv\s*\(|environ\s*\[)\s*["'](RAG_[A-Z0-9_]+)["']\s*(?![\]]\s*=[^=])""")


def test_no_other_module_reads_a_rag_variable_itself():
    """Only rag/config.py reads RAG_* from the environment (the app, the CLI, the benches ask it)."""
    files = [p for d in ("rag", "ui", "app_pages", "bench") for p in (ROOT / d).rglob("*.py")] + [ROOT / "app.py"]
    readers = {str(p.relative_to(ROOT)): READS.findall(p.read_text("utf-8")) for p in files}
    assert {f: names for f, names in readers.items() if names and f != "rag/config.py"} == {}
    assert READS.findall('os.environ.get("RAG_THREADS", "1")') == READS.findall('x = os.environ["RAG_THREADS"]') \
        == ["RAG_THREADS"] and not READS.findall('os.environ["RAG_THREADS"] = "2"')  # the pattern sees reads only


def test_every_variable_the_code_names_is_registered():
    named = set()
    for d in ("rag", "ui", "app_pages"):
        for p in (ROOT / d).rglob("*.py"):
            named |= set(re.findall(r"""config\.(?:value|parse)\(\s*["'](RAG_[A-Z0-9_]+)""", p.read_text("utf-8")))
    assert named and named <= set(config.VARIABLES)


def test_the_command_line_says_every_bad_value_before_it_starts(monkeypatch, capsys):
    from rag.cli.main import main

    monkeypatch.setenv("RAG_THREADS", "many")
    monkeypatch.setenv("RAG_JUDGE_BUDGET_S", "-1")
    assert main(["search", "什么是 RRF？"]) == 2
    err = capsys.readouterr().err
    assert "RAG_THREADS='many' must be a whole number" in err and "RAG_JUDGE_BUDGET_S='-1' must be" in err

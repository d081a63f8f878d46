"""`python -m rag` end to end, in process: search, ask (offline and against the fake LLM server), eval."""

from __future__ import annotations

import json

import pytest

from rag.cli.main import main


@pytest.fixture(autouse=True)
def _no_llm_env(monkeypatch, cache_dir):
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL", "RAG_LLM_MODEL"):
        monkeypatch.delenv(var, raising=False)


def _json_out(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_search_json_has_ranked_hits_with_fusion_provenance(capsys, kb_index):
    out = _json_out(capsys, ["search", "RRF 融合公式里的 k 是什么", "--k", "3", "--json"])
    assert [h["rank"] for h in out["hits"]] == [1, 2, 3]
    top = out["hits"][0]
    assert {p["retriever"] for p in top["provenance"]} <= {"dense", "bm25"}
    assert top["score"] == pytest.approx(sum(p["term"] for p in top["provenance"]))


def test_ask_offline_json_every_citation_valid(capsys, kb_index):
    trace = _json_out(capsys, ["ask", "什么是过拟合？怎么缓解？", "--json"])
    audit = trace["audit"]
    assert audit["cited"] and audit["hallucinated"] == [] and audit["validity_rate"] == 1.0
    assert "faq_001" in audit["cited"]
    assert "no language model" in trace["backends"]["generator"]
    assert "not a cross-encoder" in trace["backends"]["reranker"]


def test_ask_uses_the_configured_llm_and_audits_its_real_citations(capsys, monkeypatch, fake_llm, kb_index):
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-cli-secret")
    monkeypatch.setenv("OPENAI_MODEL", fake_llm.model)
    assert main(["ask", "什么是过拟合？怎么缓解？", "--json", "--generator", "auto"]) == 0
    raw = capsys.readouterr().out
    trace = json.loads(raw)
    assert "sk-cli-secret" not in raw
    # the audit of what the model wrote keeps the made-up ref; the answer shown cites only real ones
    assert "faq_999" in trace["model_audit"]["hallucinated"] and trace["audit"]["valid"]
    assert not trace["audit"]["hallucinated"]
    assert fake_llm.model in trace["backends"]["generator"]
    assert fake_llm.chat_requests[-1].body["stream"] is True


def test_ask_no_rag_offline_says_it_has_no_knowledge(capsys):
    from rag.answer.extractive import NO_RAG_MESSAGE

    trace = _json_out(capsys, ["ask", "什么是过拟合？", "--no-rag", "--json", "--generator", "extractive"])
    assert trace["no_rag_answer"] == NO_RAG_MESSAGE.zh and trace["contexts"] == []  # says so, invents nothing
    assert "extractive" in trace["backends"]["generator"]


def test_eval_prints_all_strategies(tmp_path, capsys):
    corpus = tmp_path / "c.jsonl"
    queries = tmp_path / "q.jsonl"
    rows = [("p1", "猫", "猫喜欢晒太阳，也喜欢吃鱼。"), ("p2", "狗", "狗喜欢散步和捡球。"), ("p3", "鸟", "鸟会飞，也会唱歌。")]
    corpus.write_text("\n".join(json.dumps({"id": i, "title": t, "text": x}, ensure_ascii=False) for i, t, x in rows))
    queries.write_text(
        "\n".join(json.dumps({"id": f"q{n}", "query": q, "gold_ids": [g]}, ensure_ascii=False)
                  for n, (q, g) in enumerate([("什么动物喜欢散步", "p2"), ("谁会唱歌", "p3")]))
    )
    out = _json_out(capsys, ["eval", "--corpus", str(corpus), "--queries", str(queries), "--rerank", "--json", "--no-cache"])
    assert [s["strategy"] for s in out["strategies"]] == ["dense", "bm25", "hybrid", "hybrid+rerank"]
    assert all(0.0 <= s["Hit@1"] <= 1.0 for s in out["strategies"])
    assert out["strategies"][1]["Hit@1"] == 1.0  # BM25 finds both by their exact words


def test_bad_corpus_gives_a_message_and_exit_code_2(tmp_path, capsys):
    bad = tmp_path / "x.bin"
    bad.write_bytes(b"\x00\x01\x02")
    assert main(["search", "q", "--corpus", str(bad)]) == 2
    assert "error:" in capsys.readouterr().err


def test_eval_adds_rewrite_strategies_when_an_llm_is_configured(tmp_path, capsys, monkeypatch, fake_llm):
    monkeypatch.setenv("OPENAI_BASE_URL", fake_llm.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("OPENAI_MODEL", fake_llm.model)
    corpus = tmp_path / "c.jsonl"
    queries = tmp_path / "q.jsonl"
    corpus.write_text("\n".join(json.dumps({"id": i, "title": "", "text": t}, ensure_ascii=False)
                                for i, t in [("p1", "猫喜欢晒太阳。"), ("p2", "狗喜欢散步。")]))
    queries.write_text(json.dumps({"id": "q", "query": "谁喜欢散步", "gold_ids": ["p2"]}, ensure_ascii=False))
    out = _json_out(capsys, ["eval", "--corpus", str(corpus), "--queries", str(queries), "--json", "--no-cache",
                             "--generator", "endpoint"])
    assert [s["strategy"] for s in out["strategies"]] == ["dense", "bm25", "hybrid", "hyde", "multi-query"]
    # HyDE asked for one hypothetical passage, multi-query for variants: both prompts reached the server
    assert len(fake_llm.chat_requests) == 2


@pytest.mark.parametrize("argv, says", [
    (["search", "RRF", "--k", "0"], "must be 1 or more"),
    (["search", "RRF", "--k", "-1"], "must be 1 or more"),
    (["search", ""], "is empty"),
    (["search", "   "], "is empty"),
    (["ask", ""], "is empty"),
    (["ask", "q", "--top-k", "0"], "must be 1 or more"),
    (["ask", "q", "--rrf-k", "zero"], "not a whole number"),
    (["eval", "--queries", "data/golden.jsonl", "--limit", "-1"], "must be 0"),
    (["eval", "--queries", "data/golden.jsonl", "--recall-n", "0"], "must be 1 or more"),
    (["eval", "--queries", "data/golden.jsonl", "--k", "0"], "must be 1 or more"),
])
def test_bad_arguments_fail_before_any_work_with_the_fix(argv, says, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2 and says in capsys.readouterr().err


def test_top_k_above_recall_n_and_unknown_strategies_fail_first(capsys):
    assert main(["ask", "什么是 RRF？", "--top-k", "9", "--recall-n", "3"]) == 2
    assert "--top-k 9 must be <= --recall-n 3" in capsys.readouterr().err
    assert main(["eval", "--queries", "data/golden.jsonl", "--strategies", "hybird"]) == 2
    assert "choose from" in capsys.readouterr().err


def test_eval_refuses_gold_ids_that_are_not_in_the_corpus_and_string_gold_ids(tmp_path, capsys):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "p1", "title": "", "text": "猫喜欢晒太阳。"}, ensure_ascii=False))
    wrong = tmp_path / "q.jsonl"
    wrong.write_text(json.dumps({"id": "q", "query": "猫", "gold_ids": ["faq_001"]}, ensure_ascii=False))
    assert main(["eval", "--corpus", str(corpus), "--queries", str(wrong), "--no-cache"]) == 2
    assert "none of the queries' gold_ids is in the corpus" in capsys.readouterr().err
    stringy = tmp_path / "s.jsonl"
    stringy.write_text(json.dumps({"id": "q", "query": "猫", "gold_ids": "p1"}, ensure_ascii=False))
    assert main(["eval", "--corpus", str(corpus), "--queries", str(stringy), "--no-cache"]) == 2
    assert "gold_ids must be a list" in capsys.readouterr().err


def test_a_named_reranker_that_does_not_load_is_reported(tmp_path, capsys, kb_index):
    assert main(["ask", "什么是 RRF？", "--reranker", str(tmp_path / "no-such-model"), "--json",
                 "--generator", "extractive"]) == 0
    err = capsys.readouterr().err
    assert "reranker:" in err and "no-such-model" in err and "fallback" in err


def test_ask_records_the_rrf_k_and_depth_it_was_given(capsys, kb_index):
    trace = _json_out(capsys, ["ask", "什么是 RRF？", "--rrf-k", "5", "--depth", "30", "--json",
                               "--generator", "extractive"])
    assert trace["settings"]["rrf_k"] == 5 and trace["settings"]["depth"] == 30
    assert trace["retrieval"]["rrf_k"] == 5 and trace["retrieval"]["depth"] == 30  # and retrieval used them


def test_index_and_sparse_flags_on_search_and_eval(capsys, kb_index):
    out = _json_out(capsys, ["search", "什么是重排？", "--k", "3", "--json", "--index", "hnsw", "--sparse"])
    assert out["index"].startswith("hnsw (faiss")
    assert any(p["retriever"] == "sparse" for h in out["hits"] for p in h["provenance"])
    out = _json_out(capsys, ["eval", "--queries", "data/golden.jsonl", "--limit", "12", "--index", "ivfpq",
                             "--strategies", "dense,hybrid,hybrid3", "--json"])
    names = [s["strategy"] for s in out["strategies"]]
    assert names == ["dense [ivfpq]", "hybrid [ivfpq]", "hybrid3 [ivfpq]", "dense [exact]"]
    assert 0 <= out["dense_index"]["recall@10 vs exact"] <= 1
    wins = out["win_tie_loss"]
    assert sum(wins["hybrid3"]["hybrid"].values()) == sum(wins["hybrid"]["dense"].values()) > 0


def test_a_bad_index_name_is_refused_before_any_work(capsys):
    with pytest.raises(SystemExit) as e:
        main(["search", "q", "--index", "annoy"])
    assert e.value.code == 2 and "annoy" in capsys.readouterr().err


def test_eval_loops_compares_answer_loops_and_the_loops_need_a_model(capsys, kb_index):
    out = _json_out(capsys, ["eval", "--queries", "data/multihop.jsonl", "--limit", "2", "--loops", "plain",
                             "--generator", "extractive", "--json"])
    row = out["loops"][0]
    assert row["name"] == "plain" and 0 <= row["facts found"] <= 1 and 0 <= row["evidence recall"] <= 1
    assert row["searches"] == 1 and len(out["runs"]) == 2 and out["runs"][0]["loop"]["steps"][0]["kind"] == "retrieve"
    assert main(["eval", "--queries", "data/multihop.jsonl", "--loops", "react"]) == 2
    assert "plain, self-rag, agent" in capsys.readouterr().err
    assert main(["ask", "你好", "--loop", "self-rag", "--generator", "extractive"]) == 2
    assert "needs a language model" in capsys.readouterr().err


def test_the_old_name_of_the_loop_flags_still_works_and_says_so(capsys, kb_index):
    """Issue 66, item 6: "strategy" named both a retrieval strategy (eval --strategies) and an answer loop (ask
    --strategy, eval --strategy); the loops are --loop and --loops now, and a script or a note that says --strategy
    still runs, told the new name."""
    assert main(["ask", "你好", "--strategy", "self-rag", "--generator", "extractive"]) == 2
    err = capsys.readouterr().err
    assert "--strategy is now --loop" in err and "needs a language model" in err
    out = _json_out(capsys, ["eval", "--queries", "data/multihop.jsonl", "--limit", "1", "--strategy", "plain",
                             "--generator", "extractive", "--json"])
    assert out["loops"][0]["name"] == "plain" and "strategies" not in out  # "strategy" is the retrieval meaning


def test_a_long_eval_with_answers_says_its_progress_and_the_time_left(tmp_path, capsys, monkeypatch):
    """Each answered question is a line on stderr with the share done and an estimate of the time left (a 40-
    question run with a model printed nothing for a quarter of an hour)."""
    from rag.cli import eval as cli_eval

    monkeypatch.setattr(cli_eval.Progress, "EVERY_S", 0.0)  # every question, not one line per 5 s
    golden = [json.loads(line) for line in open("data/golden.jsonl", encoding="utf-8")][:6]
    q = tmp_path / "q.jsonl"
    q.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in golden) + "\n", encoding="utf-8")
    assert main(["eval", "--queries", str(q), "--answers", "--generator", "extractive",
                 "--strategies", "hybrid", "--no-rewrites"]) == 0
    err = capsys.readouterr().err
    assert "evaluating: hybrid ..." in err
    lines = [line.strip() for line in err.splitlines() if "so far, about" in line]
    # one step per question for the retrieval figures and one per answered question: 12
    assert [line.split(" ")[0] for line in lines] == [f"{i}/12" for i in range(1, 13)], err[-800:]
    assert lines[0].startswith("1/12 (8%)") and lines[-1].startswith("12/12 (100%)") and "s left" in lines[-1]


def test_the_console_script_names_the_cli_entry_point():
    """pyproject's `rag-teach` must name a callable (a moved module once left it pointing at a package)."""
    import importlib
    import tomllib
    from pathlib import Path

    target = tomllib.loads(Path("pyproject.toml").read_text("utf-8"))["project"]["scripts"]["rag-teach"]
    module, _, attr = target.partition(":")
    assert getattr(importlib.import_module(module), attr) is main


def test_eval_over_a_folder_of_markdown_keeps_the_fields_a_grader_reads(capsys, tmp_path):
    """`rag eval --corpus FOLDER --queries F --loops plain --json` over a teacher's Markdown: each run's final trace
    keeps its answer, the model's own text, the contexts (ref and readable text), the audited sentences and the gate."""
    from tests.test_markdown import CHAPTER

    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "lstm.md").write_text(CHAPTER, encoding="utf-8")
    queries = tmp_path / "q.jsonl"
    queries.write_text(json.dumps({"id": "q1", "query": "LSTM 的门的值在什么范围？", "gold_ids": ["lstm"],
                                   "facts": [["(0, 1)"]]}, ensure_ascii=False) + "\n", encoding="utf-8")
    out = _json_out(capsys, ["eval", "--corpus", str(folder), "--queries", str(queries), "--loops", "plain",
                             "--generator", "extractive", "--json"])
    final = out["runs"][0]["loop"]["final"]
    assert isinstance(final["answer"], str) and final["answer"].strip() and "model_answer" in final
    assert final["contexts"] and all({"ref", "text"} <= c.keys() for c in final["contexts"])
    assert all(":numref:" not in c["text"] and "<!--" not in c["text"] for c in final["contexts"])  # read, not raw
    assert final["audit"]["sentences"] and all({"sentence", "label"} <= s.keys() for s in final["audit"]["sentences"])
    assert "answerability" in final and final["answerability"]["answerable"] in (True, False)


def test_a_build_says_what_it_is_doing_when_stderr_is_not_a_terminal(capsys):
    """Issue 65, item 10: `rag ask` over an 8 MB file printed nothing for ten minutes when its output was not a
    terminal. Each stage says so on stderr, the embedding with how far it is and an estimate of what is left."""
    assert main(["ask", "课程的期末项目占总成绩多少？", "--corpus", "data/longform", "--generator", "extractive",
                 "--no-cache"]) == 0
    err = capsys.readouterr().err
    assert "read 3 documents" in err and "cut into" in err and "chunks" in err
    assert "embedding" in err and "100%" in err and "s spent" in err and "\r" not in err

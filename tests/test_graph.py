"""GraphRAG (rag/graph/, rag/loops/graph_rag.py): extraction under the grammar with the real model, parsing
against the text, jieba's fallback, resolution and Leiden on small hand-made graphs with known answers, local
search on a two-hop case, the graph retrieval modes, the CLI's `ask --loop graph --json`, and the shipped
extractions, summaries and two-hop set."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import networkx as nx
import pytest

from rag.errors import ConfigError, LLMError
from rag.graph import extraction
from rag.graph.extraction import Entity, Extraction, Relation, jieba_extract, parse
from rag.graph.graph import build_graph, leiden
from rag.graph.local_search import local_search
from rag.graph.resolve import resolve
from rag.ingest.chunking import Chunk
from rag.models.local_llm import DEFAULT_MODEL, LocalChat, local_label
from tests.conftest import require

ROOT = Path(__file__).resolve().parent.parent


def _chunk(cid: str, text: str) -> Chunk:
    return Chunk(chunk_id=cid, doc_id=cid, ref=cid, text=text, start=0, end=len(text), metadata={})


# ------------------------------------------------------------------------------------ extraction

def test_the_bundled_model_writes_the_grammars_json_and_what_it_names_is_in_the_text(local_model):
    chat = LocalChat(DEFAULT_MODEL, n_ctx=2048)
    text = "张衡发明了地动仪。地动仪曾在洛阳测到陇西的地震。"
    ex = extraction.llm_extract(text, chat)
    data = json.loads(ex.raw)  # the grammar's shape, whatever the model chose to say
    assert set(data) == {"entities", "relations"}
    assert all(len(e) == 2 and e[1] in extraction.TYPES for e in data["entities"])
    assert all(len(r) == 4 and isinstance(r[3], int) for r in data["relations"])
    assert ex.entities, ex.raw
    assert all(e.name in text for e in ex.entities)
    names = {e.name for e in ex.entities}
    assert all(r.head in names and r.tail in names and r.sentence in text for r in ex.relations)
    assert ex.prompt[-1]["content"].endswith("[1] 张衡发明了地动仪。\n[2] 地动仪曾在洛阳测到陇西的地震。")
    assert extraction.cached(chat.label, text).raw == ex.raw  # a second visit reads the cache


def test_parse_keeps_what_the_text_has_and_counts_what_it_drops():
    text = "RRF（倒数排名融合）合并 BM25 与向量检索的排名。k 通常取 60。"
    raw = json.dumps({"entities": [["RRF", "method"], ["RF", "method"], ["倒数排名融合", "method"], ["Transformer", "model"]],
                      "relations": [["RRF", "合并", "BM25", 1], ["RRF", "别名", "倒数排名融合", 1],
                                    ["RRF", "取值", "k", 9], ["Transformer", "用于", "RRF", 1]]}, ensure_ascii=False)
    ex = parse(raw, text, "m")
    names = [e.name for e in ex.entities]
    assert "RF" not in names  # inside "RRF", not a word of the text
    assert "Transformer" not in names  # not in the text at all
    assert "BM25" in names  # a relation's end the text has becomes an entity
    assert [(r.head, r.relation, r.tail) for r in ex.relations] == [("RRF", "合并", "BM25"), ("RRF", "别名", "倒数排名融合")]
    assert ex.relations[0].sentence == "RRF（倒数排名融合）合并 BM25 与向量检索的排名。"
    assert ex.dropped == {"entities": 2, "relations": 2}  # sentence 9 does not exist; Transformer is not an entity
    with pytest.raises(LLMError, match="not the expected JSON"):
        parse("The entities are RRF and BM25.", text, "m")


def test_jieba_finds_names_and_joins_them_by_the_verb_between():
    ex = jieba_extract("鲍比·霍顿接替戚务生成为中国国家足球队主教练。")
    names = {e.name for e in ex.entities}
    assert "戚务生" in names and any("足球队" in n for n in names)
    assert ex.extractor == extraction.JIEBA_LABEL
    assert any(r.relation != extraction.CO_OCCURS for r in ex.relations)
    assert all(r.sentence.startswith("鲍比") for r in ex.relations)


# ------------------------------------------------------------------------------------ resolution

def test_resolution_merges_spellings_and_the_texts_own_aliases_but_not_a_disambiguation():
    counts = Counter({"交叉编码器": 3, "cross-encoder": 1, "Cross Encoder": 1, "双塔模型": 2, "马赛": 1, "香港": 2})
    texts = ["交叉编码器（cross-encoder）把问题和文档拼在一起打分。", "马赛（香港）是一位演员。"]
    canonical, merges = resolve(counts, texts)
    assert canonical["cross-encoder"] == canonical["Cross Encoder"] == "交叉编码器"
    assert canonical["双塔模型"] == "双塔模型" and canonical["马赛"] == "马赛"
    reasons = {(m.merged, m.reason) for m in merges}
    assert ("Cross Encoder", "spelling") in reasons or ("cross-encoder", "spelling") in reasons
    assert any(m.reason == "alias in the text" and "交叉编码器（cross-encoder）" in m.evidence for m in merges)
    assert len(merges) == 2


def test_leiden_finds_two_cliques_joined_by_one_edge_with_their_modularity():
    require("leidenalg")
    g = nx.Graph()
    left, right = ["a", "b", "c", "d"], ["w", "x", "y", "z"]
    for group in (left, right):
        for i, u in enumerate(group):
            for v in group[i + 1:]:
                g.add_edge(u, v, weight=1.0)
    g.add_edge("d", "w", weight=1.0)
    groups, q = leiden(g)
    assert sorted(map(sorted, groups)) == [left, right]
    assert q == pytest.approx(nx.community.modularity(g, [set(left), set(right)], weight="weight"), abs=1e-9)
    assert q == pytest.approx(12 / 13 - 0.5, abs=1e-9)  # 2 x (6/13 - (13/26)^2): known by hand


# ------------------------------------------------------------------------------------ local search

HOPS = [_chunk("c1", "甲公司收购了乙工厂。"), _chunk("c2", "乙工厂位于丙市，生产齿轮。"),
        _chunk("c3", "丁银行在戊市开设分行。"), _chunk("c4", "齿轮是一种机械零件。")]
EXS = [Extraction([Entity("甲公司", "organization"), Entity("乙工厂", "organization")],
                  [Relation("甲公司", "收购", "乙工厂", "甲公司收购了乙工厂。")], "hand"),
       Extraction([Entity("乙工厂", "organization"), Entity("丙市", "place"), Entity("齿轮", "tool")],
                  [Relation("乙工厂", "位于", "丙市", "乙工厂位于丙市，生产齿轮。")], "hand"),
       Extraction([Entity("丁银行", "organization"), Entity("戊市", "place")],
                  [Relation("丁银行", "开设分行于", "戊市", "丁银行在戊市开设分行。")], "hand"),
       Extraction([Entity("齿轮", "tool")], [], "hand")]


def test_local_search_walks_two_hops_to_the_chunk_the_question_does_not_name():
    graph = build_graph(HOPS, EXS)
    walk = local_search(graph, "甲公司收购的那家工厂在哪座城市？")
    assert [x.entity for x in walk.linked] == ["甲公司"]
    assert walk.reached["乙工厂"][1] == 1 and walk.reached["丙市"][1] == 2
    assert [cid for cid, _ in walk.chunks[:2]] == ["c1", "c2"]
    assert "c3" not in {cid for cid, _ in walk.chunks}  # nothing joins the bank to the question
    lines = {(r["head"], r["relation"], r["tail"], r["chunk_id"]) for r in walk.relations}
    assert ("乙工厂", "位于", "丙市", "c2") in lines and ("甲公司", "收购", "乙工厂", "c1") in lines
    sub = walk.subgraph()
    assert {n["entity"] for n in sub["nodes"]} >= {"甲公司", "乙工厂", "丙市"}


def test_a_name_in_either_script_is_one_entity_and_a_traditional_question_finds_it():
    """倒數排名融合 and 倒数排名融合 are one name: before, the two spellings were two nodes, and a question typed in
    traditional linked no entity of a simplified corpus by name."""
    canonical, merges = resolve(Counter({"倒数排名融合": 3, "倒數排名融合": 1}), [])
    assert canonical["倒數排名融合"] == "倒数排名融合" and [m.reason for m in merges] == ["spelling"]
    walk = local_search(build_graph(HOPS, EXS), "乙工廠生產什麼？")
    assert [x.entity for x in walk.linked] == ["乙工厂"] and "齿轮" in walk.reached


def test_the_graph_modes_need_a_graph_and_fuse_it_with_hybrid(kb_index):
    from rag.graph.store import attach
    from rag.search.retrieval import Search, retrieve

    kb_index.graph = None
    with pytest.raises(ConfigError, match="build it first"):
        retrieve(kb_index, "RRF 怎么算？", Search("graph"))
    graph = attach(kb_index)
    assert graph is attach(kb_index)  # built once, kept on the index
    res = retrieve(kb_index, "RRF 怎么算？", Search("hybrid+graph", k=5, depth=20))
    assert res.graph and res.graph_walk is not None and res.graph_walk.linked
    assert {c.retriever for h in res.ranked() for c in h.contributions} <= {"dense", "bm25", "graph"}
    assert res.ranked()[0].chunk_id == "faq_030"


# ------------------------------------------------------------------------------------ shipped data

def test_every_knowledge_base_chunk_has_a_shipped_model_extraction():
    from rag.graph.corpora import corpus_chunks

    missing = [c.chunk_id for c in corpus_chunks("kb") if extraction.cached(local_label(), c.text) is None]
    assert not missing, f"run scripts/precompute_graph.py: {missing}"


def test_the_shipped_summaries_of_the_knowledge_base_are_chinese_and_each_sentence_is_supported(kb_index):
    """Every community of the knowledge base's graph has a shipped summary, in Chinese, and every sentence of it is
    one the audit calls supported against that community's chunks (the audit ran when it was written; a change to
    the audit or the graph shows here)."""
    from rag.audit.citations import sentence_claims
    from rag.audit.support import check_sentence
    from rag.graph.store import attach
    from rag.ingest.language import detect_lang
    from rag.loops.community import EVIDENCE_CHUNKS, summaries

    kb_index.graph = None
    graph = attach(kb_index)
    texts = {c.chunk_id: c.text for c in kb_index.chunks}
    found, _ = summaries(graph, texts)
    assert {s.by for s in found.values()} <= {"chosen", "model", "quote"}, \
        "a community has no shipped summary: run scripts/precompute_graph.py --summaries"
    for c in graph.communities:
        s = found[c.cid]
        assert s.text and detect_lang(s.text) == "zh", (c.cid, s.text)
        assert not s.text.startswith(("这组实体", "这些原文", "这个文档")), (c.cid, s.text)
        chunks = {cid: texts[cid] for cid in c.chunk_ids[:EVIDENCE_CHUNKS]}
        for _, _, claim in sentence_claims(s.text):
            assert check_sentence(claim, chunks).label == "supported", (c.cid, claim)
    assert sum(s.by in ("chosen", "model") for s in found.values()) >= len(found) // 2, "most are the model's"


def test_the_two_hop_set_is_what_its_builder_writes():
    rows = [json.loads(x) for x in (ROOT / "data/graph_multihop/queries.jsonl").read_text(encoding="utf-8").splitlines()]
    corpus = {json.loads(x)["id"]: json.loads(x) for x in
              (ROOT / "data/graph_multihop/corpus.jsonl").read_text(encoding="utf-8").splitlines()}
    assert len(rows) >= 40
    for r in rows:
        a, b = r["gold_ids"]
        assert a in corpus and b in corpus
        assert any(f in corpus[b]["text"] for f in r["facts"][-1])
        assert not any(f in corpus[a]["text"] for f in r["facts"][-1])  # the last fact needs the second hop
        assert corpus[b]["title"] not in r["query"]


def test_ask_strategy_graph_json_returns_the_answer_linked_entities_and_subgraph(capsys, cache_dir):
    from rag.cli.main import main

    rc = main(["ask", "大莱龙铁路是哪条铁路干线的组成部分？那条干线全长多少公里？", "--loop", "graph", "--json",
               "--corpus", str(ROOT / "data/graph_multihop/corpus.jsonl"), "--chunker", "document"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["answer"]
    assert [x["entity"] for x in out["graph"]["linked"]][0] == "大莱龙铁路"
    assert out["graph"]["nodes"] and out["graph"]["relations"]
    assert [s["kind"] for s in out["steps"]] == ["link", "walk", "retrieve", "draft"]
    refs = {c["ref"] for c in out["final"]["contexts"]}
    assert {"DEV_3", "DEV_17"} <= refs


def test_an_endpoint_extracts_and_a_reply_that_is_not_the_json_falls_back_to_jieba_for_that_chunk(kb_index):
    from rag.graph.store import attach
    from tests.fake_chat import FakeChat

    def reply(messages, grammar):
        text = messages[-1]["content"]
        if "BM25" in text:
            return "Sorry, I cannot help with that."  # an endpoint ignores grammars: not JSON
        return json.dumps({"entities": [["过拟合", "concept"]], "relations": []}, ensure_ascii=False)

    chat = FakeChat(reply, grammar=False, label="endpoint model (test)")
    kb_index.graph = None
    graph = attach(kb_index, chat)
    failed = graph.cost["failed"]
    n = len(kb_index.chunks)  # the label says the graph is not all the endpoint's
    assert graph.extractor == f"endpoint model (test) for {n - failed} of {n} chunks; {extraction.JIEBA_LABEL} for the rest"
    assert failed == sum("BM25" in c.text for c in kb_index.chunks) > 0
    by_jieba = [ex for ex in graph.extractions.values() if ex.extractor == extraction.JIEBA_LABEL]
    assert len(by_jieba) == failed  # only those chunks, and labelled
    assert chat.calls and all(c["grammar"] == extraction.GRAMMAR for c in chat.calls)
    kb_index.graph = None


# ------------------------------------------------------------------ the graph without a model: prose, whole words

TEXTBOOK = """## 长短期记忆网络

遗忘门决定记忆元 $\\mathbf{C}_{t-1}$ 的内容保留多少，输入门控制候选记忆元 $\\tilde{\\mathbf{C}}_t$ 进入多少。

```python
import numpy as np
import matplotlib.pyplot as plt
from d2l import torch as d2l
plt.figure(figsize=(3.5, 2.5))
```

$$\\hat{\\mathbf{y}} = \\frac{1}{n}\\sum_i \\mathbf{x}_i$$

门控循环单元把遗忘门和输入门合并为更新门，计算量比长短期记忆网络小。
"""


def test_without_a_model_the_graph_takes_entities_from_prose_only():
    """Issue 65, item 11: the graph without a model was built from formula and code words (mathbf, hat, frac,
    figsize, numpy, plt, d2l). Entities come from the prose; a relation keeps its sentence as written."""
    ex = jieba_extract(TEXTBOOK)
    names = {e.name.casefold() for e in ex.entities}
    assert not names & {"mathbf", "hat", "tilde", "frac", "sum", "figsize", "numpy", "plt", "d2l", "torch", "import",
                        "matplotlib", "pyplot", "python", "figure"}, names
    assert {"记忆网络", "循环单元"} <= names  # the prose's nouns, as jieba tags them
    sentences = {r.sentence for r in ex.relations}
    assert all(s in TEXTBOOK for s in sentences)  # the evidence is the text's own sentence, math and all
    prose = extraction.prose_view(TEXTBOOK)  # what jieba reads: as long as the text, only its prose left
    assert len(prose) == len(TEXTBOOK) and "mathbf" not in prose and "numpy" not in prose and "长短期记忆网络\n" not in prose
    assert "遗忘门决定记忆元" in prose and "门控循环单元把遗忘门和输入门合并为更新门" in prose


def test_an_english_question_links_whole_words_not_pieces_of_them():
    """Issue 65, item 11: "what does the forget gate" linked "for", "the", "get" and "hat" (pieces of its words).
    A Latin name is found only as whole words; a Chinese one still inside a sentence with no spaces."""
    chunks = [_chunk("c1", "The forget gate decides what to keep. A hat is for the head. Get it."),
              _chunk("c2", "遗忘门决定保留多少记忆。")]
    exs = [Extraction([Entity("forget gate", "concept"), Entity("hat", "other"), Entity("for", "other"),
                       Entity("get", "other"), Entity("head", "other")],
                      [Relation("forget gate", "decides", "head", "The forget gate decides what to keep.")], "hand"),
           Extraction([Entity("遗忘门", "concept"), Entity("记忆", "concept")],
                      [Relation("遗忘门", "决定", "记忆", "遗忘门决定保留多少记忆。")], "hand")]
    graph = build_graph(chunks, exs)
    assert [x.entity for x in local_search(graph, "What does the forget gate do?").linked] == ["forget gate"]
    assert [x.entity for x in local_search(graph, "什么是遗忘门？").linked] == ["遗忘门"]
    assert [x.entity for x in local_search(graph, "LSTM的遗忘门和forget gate一样吗").linked] == ["forget gate", "遗忘门"]
    # an inflected word is the name's word ("heads"), a longer word that starts with it is not ("header", "hatch")
    assert [x.entity for x in local_search(graph, "Which heads does it use?").linked] == ["head"]
    assert local_search(graph, "Which headline or hatch?").linked == []


def test_the_form_with_word_gaps_is_the_normal_form():
    """resolve.normal_with_gaps keeps where words end so linking can match whole Latin words; its text must stay the
    very form `normal` gives (the entities' keys), in both scripts and through case folding."""
    from rag.graph.resolve import normal, normal_with_gaps

    for text in ("What does the Forget-Gate do?", "倒數排名融合（RRF）", "Straße · “BM25”  top_k", "交叉编码器 cross-encoder"):
        form, gaps = normal_with_gaps(text)
        assert form == normal(text) and 0 in gaps and len(form) in gaps, text

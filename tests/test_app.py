"""The Streamlit app through streamlit.testing.v1.AppTest: every page renders on the bundled knowledge
base with its key elements; settings survive page switches; a question change or a slider never
re-embeds; uploads (good and bad files) through the file uploader; two sessions stay apart; the answer
page against the fake OpenAI-compatible server (tests/fake_openai.py), with the API key kept out of
the trace.

One AppTest session is shared by the read-only page checks (module fixture) so the index is built once;
the embedding cache lives under pytest's temp dir (the `cache_dir` fixture sets RAG_CACHE_DIR).
"""

from __future__ import annotations

import html as html_lib
import json
import os
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from rag.messages import localized

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
TIMEOUT = 240  # seconds per run: the first build embeds the corpus on a slow machine
LLM_ENV = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_MODEL", "RAG_LLM_MODEL")
PAGES = {
    "home": "app_pages/0_home.py",
    "upload": "app_pages/1_upload.py",
    "embeddings": "app_pages/2_embeddings.py",
    "retrieval": "app_pages/3_retrieval.py",
    "graph": "app_pages/3b_graph.py",
    "rerank": "app_pages/4_rerank.py",
    "answer": "app_pages/5_answer.py",
    "loops": "app_pages/6_loops.py",
    "evaluation": "app_pages/7_evaluation.py",
}


@pytest.fixture(scope="module", autouse=True)
def offline_env(cache_dir, app_test):
    """No LLM from the environment (the app must run keyless), vectors cached under tmp. Every test here runs the
    app through AppTest (`app_test`: slow)."""
    saved = {k: os.environ.pop(k) for k in LLM_ENV if k in os.environ}
    yield
    os.environ.update(saved)


def new_app() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def go(at: AppTest, page: str) -> AppTest:
    at.switch_page(PAGES[page]).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def plotly_charts(at: AppTest) -> list:
    return list(at.get("plotly_chart"))


def frames(at: AppTest) -> list:
    return [d.value for d in at.dataframe]


def html_of(at: AppTest) -> str:
    """Everything rendered as HTML or Markdown on the page."""
    return "\n".join([m.value for m in at.markdown] + [h.value for h in at.get("html")])


def all_text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [s.value for s in at.success]
    parts += [w.value for w in at.warning] + [i.value for i in at.info]
    return "\n".join(str(p) for p in parts)


@pytest.fixture
def app() -> AppTest:
    """A fresh app per test, so no test depends on what an earlier one left in the session. The corpus
    vectors come from the disk cache after the first build, so a fresh index takes well under a second."""
    at = new_app()
    go(at, "upload")  # builds the index (from cached vectors)
    return at


# ------------------------------------------------------------------------------------ every page


def test_home_shows_pipeline_links_and_what_runs(app):
    at = go(app, "home")
    links = [p.proto.page for p in at.get("page_link")]
    assert len(links) == len(PAGES) - 1  # one link per stage page (every page but home)
    table = at.table[0].value
    text = table.to_string()
    for needle in ("faq.jsonl", "auto", "document", "multilingual-e5-small", "learned ranker", "extractive"):
        assert needle in text, needle
    # keyless: the generator row is the labelled fallback, with the reason
    gen_row = table[table.iloc[:, 0].str.contains("extractive")].iloc[0]
    assert "fallback" in gen_row.iloc[1] and "按名字选了抽取式" in gen_row.iloc[2]  # RAG_GENERATOR=extractive (conftest)
    emb_row = table[table.iloc[:, 0].str.contains("multilingual-e5-small")].iloc[0]
    assert "real" in emb_row.iloc[1]
    assert "off" in table.loc["BM25"].iloc[0]  # stop words are off by default: the plain BM25 formula
    # a card's link label wraps instead of being cut to "5. 回答与引用审计 Answer & audi…"
    assert "white-space: normal" in html_of(at) and "st-key-home-stages" in html_of(at)
    assert at.sidebar.text_area[0].value  # the shared question box is on every page


def test_upload_page_preview_histogram_and_index(app):
    at = go(app, "upload")
    assert at.get("file_uploader")
    assert len(plotly_charts(at)) == 1  # chunk-length histogram
    chunks = next(f for f in frames(at) if "chunk_id" in f.columns)
    assert len(chunks) >= 1 and {"start", "end", "ref"} <= set(chunks.columns)
    assert "faq_001" in all_text(at) or "faq_001" in chunks["chunk_id"].tolist()
    assert any("50" in s.value for s in at.success)  # "Index ready: 50 chunks"
    assert [m.value for m in at.metric][0] == "50"
    hist = json.loads(plotly_charts(at)[0].proto.spec)
    assert hist["layout"]["yaxis"]["dtick"] == 1  # at most a handful of chunks per bin: whole-number ticks


def test_length_histogram_counts_whole_chunks():
    from ui.charts import length_histogram

    few = length_histogram([350, 371, 372, 380, 399], target=400).to_dict()
    assert few["layout"]["yaxis"]["dtick"] == 1  # 5 chunks: never 0.2, 0.4, ... on the count axis
    many = length_histogram([100] * 40 + [200] * 3).to_dict()  # one bin of 40: let Plotly choose whole steps
    assert many["layout"]["yaxis"].get("dtick") is None and many["layout"]["yaxis"]["tickformat"] == "d"


def test_pca_labels_do_not_sit_on_each_other():
    from ui.charts import LABEL_SPOTS, place_labels

    # the query and the #3 ring 20 px apart (as in the knowledge-base picture): "query" goes right, and
    # "#3" must not take "top center", where it would cover the query's marker
    spots = place_labels([(300, 300, 8, "query"), (302, 280, 7.5, "#3")], first_choice=["middle right", "top center"])
    assert spots[0] == "middle right" and spots[1] != "top center" and spots[1] in LABEL_SPOTS
    # three markers on one spot: three different label spots
    assert len(set(place_labels([(100, 100, 7.5, "#1"), (100, 100, 7.5, "#2"), (100, 100, 7.5, "#3")]))) == 3


def test_upload_page_fixed_chunker_colours_overlaps(app):
    at = go(app, "upload")
    at.selectbox(key="chunk.method").set_value("fixed").run()
    at.number_input(key="chunk.fixed.chunk_size").set_value(60).run()
    at.number_input(key="chunk.fixed.overlap").set_value(20).run()
    html = html_of(at)
    assert "#f59e0b" in html  # the overlap colour is used: neighbours share 20 characters
    assert at.button(key="chunk.apply").disabled is False  # pending settings differ from the index
    # parent-child: the parent/child table, and the parents' view of the preview
    at.selectbox(key="chunk.method").set_value("parent_child").run()
    assert not at.exception
    fams = next(f for f in frames(at) if "parent" in f.columns and len(f.columns) == 4)
    assert len(fams) == 50 and (fams.iloc[:, 2] >= 1).all()  # every FAQ entry is one parent with children
    at.toggle(key="upload.parents").set_value(True).run()
    assert not at.exception
    # back to the indexed settings: nothing is pending any more
    at.selectbox(key="chunk.method").set_value("auto").run()
    assert at.button(key="chunk.apply").disabled is True


def test_an_embedder_that_cannot_load_is_an_error_and_the_index_is_kept(app):
    at = go(app, "upload")
    key = at.session_state["index.key"]
    at.selectbox(key="embed.name").set_value("custom").run()
    at.text_input(key="embed.custom").set_value("no-such-org/no-such-model").run()
    at.button(key="chunk.apply").click().run()
    assert not at.exception
    assert at.error and "no-such-model" in at.error[0].value
    said = at.error[0].value  # in the page's language (Chinese first): it was English in Chinese mode
    assert at.session_state["ui.lang"] == "zh" and "Hugging Face 缓存" in said and "is not in the local" not in said
    assert at.session_state["applied.embedder"] != "no-such-org/no-such-model"
    assert at.session_state["index.key"] == key
    at.selectbox(key="embed.name").set_value(at.session_state["applied.embedder"]).run()


def test_embeddings_page_pca_variance_and_distortion(app):
    at = go(app, "embeddings")
    assert len(plotly_charts(at)) == 1
    fig = json.loads(plotly_charts(at)[0].proto.spec)
    names = [tr.get("name") for tr in fig["data"]]
    assert "query" in names and any("top-" in (n or "") for n in names)
    query = next(tr for tr in fig["data"] if tr.get("name") == "query")
    top = next(tr for tr in fig["data"] if "top-" in (tr.get("name") or ""))
    assert query["textposition"] == "middle right" and len(top["textposition"]) == len(top["text"]) == 5
    metrics = {m.label: m.value for m in at.metric}
    assert "PC1" in metrics and metrics["PC1"].endswith("%")
    (emap,) = at.session_state["memo.pca"].values()  # the map the page drew
    if emap.check.distorted:  # the page takes the branch the check computed, and names the culprits
        assert any("distortion" in w.value or "失真" in w.value for w in at.warning)
        assert not any("match the true" in s.value or "一致" in s.value for s in at.success)
    else:
        assert any("一致" in s.value or "match the true" in s.value for s in at.success)
        assert not any("失真" in w.value for w in at.warning)
    table = frames(at)[-1]
    assert len(table) == 5
    at.radio(key="embeddings.dims").set_value("3D").run()
    fig3 = json.loads(plotly_charts(at)[0].proto.spec)
    assert fig3["data"][0]["type"] == "scatter3d"
    assert "PC3" in {m.label for m in at.metric}


def test_retrieval_page_sets_ann_indexes_and_milvus_beside_exact(app, tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_MILVUS_URI", str(tmp_path / "app.db"))
    at = go(app, "retrieval")
    ann = next(f for f in frames(at) if any(c.startswith("recall@") for c in f.columns))
    recall = next(c for c in ann.columns if c.startswith("recall@"))
    labels = list(ann.iloc[:, 0])
    assert labels[0].startswith("exact") and any(x.startswith("hnsw") for x in labels)
    assert any(x.startswith("ivfpq") for x in labels) and ann[recall].iloc[0] == 1.0
    assert (ann[recall] >= 0).all() and (ann[recall] <= 1).all()
    at.multiselect(key="retrieval.indexes").set_value(["milvus"]).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    ann = next(f for f in frames(at) if any(c.startswith("recall@") for c in f.columns))
    assert any("Milvus Lite" in x for x in ann.iloc[:, 0]) and ann[recall].iloc[-1] == 1.0  # FLAT: exact
    bm25 = next(f for f in frames(at) if "Milvus chunk" in f.columns)
    assert (bm25.iloc[:, -1] == "✓").all()  # same segmentation, same formula: the same ranking
    assert "Milvus" in html_of(at)


def test_retrieval_page_side_by_side_with_rrf_arithmetic(app):
    at = go(app, "retrieval")
    table = frames(at)[0]
    arith = [c for c in table.columns if "Σ" in c][0]
    first = table[arith].iloc[0]
    assert first.count("/(60+") == 2 and "dense" not in first  # short: "1/(60+1) + 1/(60+1) = 0.03279"
    assert max(len(a) for a in table[arith]) <= 34  # fits its column at 1400 px, "= total" included
    # the first fused row's arithmetic adds up to its RRF score, term by term
    terms, total = first.split(" = ")
    by_terms = 0.0
    for term in terms.split(" + "):  # "w/(k+rank)", or "0" for a list without the chunk
        if term != "0":
            w, denominator = term.split("/")
            k, rank = denominator.strip("()").split("+")
            by_terms += float(w) / (int(k) + int(rank))
    assert float(total) == pytest.approx(float(table["RRF"].iloc[0]), abs=1e-5) == pytest.approx(by_terms, abs=1e-5)
    # the chunk picked for the explanation gets the long form, list names included
    cid = at.selectbox(key="retrieval.explain").value
    from ui.render import md_escape

    assert any(m.value.startswith(f"**RRF({md_escape(cid)})** = dense ") for m in at.markdown)  # the id, escaped
    assert any("Stop words are off" in c.value or "停用词关闭" in c.value for c in at.caption)
    # BM25 explain: per-term contributions sum to the chunk's BM25 score
    explain = next(f for f in frames(at) if "idf" in f.columns)
    assert len(explain) >= 1
    assert "jieba" in html_of(at)
    # multi-vector: the picked chunk's MaxSim heat map, query tokens x chunk tokens, with each best match ringed
    heat = next(json.loads(c.proto.spec) for c in plotly_charts(at) if "MaxSim" in json.loads(c.proto.spec)["layout"]
                .get("title", {}).get("text", ""))
    z, rings = heat["data"][0]["z"], heat["data"][1]
    assert len(z) == len(rings["y"]) >= 3 and len(z[0]) >= 10  # a row per question token, a column per chunk token
    assert all(max(row) == pytest.approx(row[x]) for row, x in zip(z, rings["x"]))  # the ring is each row's max
    # changing RRF k re-fuses without re-embedding
    index_before = at.session_state["index.obj"]
    at.slider(key="retrieval.rrf_k").set_value(10).run()
    assert not at.exception
    table2 = frames(at)[0]
    assert "/(10+" in table2[arith].iloc[0]
    assert at.session_state["index.obj"] is index_before


def test_bm25_stopwords_switch_rebuilds_bm25_without_reembedding(app):
    import numpy as np

    at = go(app, "upload")
    assert at.checkbox(key="index.stopwords").value is False  # default off: the plain formula, as the CLI
    index, key = at.session_state["index.obj"], at.session_state["index.key"]
    assert not index.bm25.stopwords
    go(at, "retrieval")
    off_bm25 = frames(at)[0]["BM25"].tolist()
    off_terms = next(f for f in frames(at) if "idf" in f.columns).iloc[:, 0].tolist()
    assert "的" in off_terms  # the question "...里的 RRF 是怎么计算的？" has 的 twice; off, it scores
    assert "<del" not in html_of(at)  # nothing struck out

    go(at, "upload")
    at.checkbox(key="index.stopwords").check().run()
    assert not at.exception
    new_index = at.session_state["index.obj"]
    assert at.session_state["index.key"] != key and new_index is not index  # in the index key: rebuilt
    assert new_index.bm25.stopwords and "的" in new_index.bm25.stopwords
    info = at.session_state["index.info"]
    assert info["cache_misses"] == 0 and info["cache_hits"] == len(index.chunks)  # nothing re-embedded
    assert np.array_equal(new_index.vectors.vectors, index.vectors.vectors)
    assert any("stop words on" in s.value or "停用词 开" in s.value for s in at.success)

    go(at, "retrieval")
    struck = re.findall(r"<del[^>]*>([^<]*)</del>", html_of(at))
    assert "的" in struck and "？" in struck and "rrf" not in struck  # the dropped tokens, struck out
    assert any("Stop words are on" in c.value or "停用词已开启" in c.value for c in at.caption)
    on_terms = next(f for f in frames(at) if "idf" in f.columns).iloc[:, 0].tolist()
    assert "的" not in on_terms and "？" not in on_terms and "rrf" in on_terms
    assert frames(at)[0]["BM25"].tolist() != off_bm25  # BM25 scores without 的 and ？ differ

    go(at, "upload")
    at.checkbox(key="index.stopwords").uncheck().run()
    assert at.session_state["index.key"] == key and at.session_state["index.info"]["cache_misses"] == 0
    assert not at.session_state["index.obj"].bm25.stopwords


def test_graph_page_draws_the_shipped_graph_and_shows_an_entitys_sources(app):
    at = go(app, "graph")
    assert "随附的抽取结果" in at.success[0].value  # the bundled KB: no model call, no jieba fallback
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["实体"]) > 100 and float(metrics["模块度"]) > 0.3
    charts = plotly_charts(at)
    assert len(charts) == 1
    fig = json.loads(charts[0].proto.spec)
    nodes = fig["data"][-1]
    assert all(d.startswith("entity:") for d in nodes["customdata"])
    assert any(nodes["marker"]["size"][i] > 8 for i in range(len(nodes["customdata"])))  # the question's subgraph
    assert "RRF" in html_of(at)  # the default question's linked entity and its relations
    at.selectbox(key="graph.entity").set_value("BM25").run()
    assert not at.exception
    assert any("BM25" in m.value for m in at.markdown) or "BM25" in html_of(at)
    chunk_refs = [m.value for m in at.markdown if m.value.startswith("**[faq\\_")]  # the refs, escaped, in bold
    assert chunk_refs, "the entity's source chunks"
    at.selectbox(key="graph.chunk").set_value("faq_030").run()
    code = "\n".join(c.value for c in at.code)
    assert '"entities"' in code and "[1]" in code  # the extraction's raw JSON and its numbered prompt


def test_the_graph_page_names_the_stand_ins_co_occurrence_in_the_ui_language(tmp_path):
    """Issue 65, item 14: the English UI showed '同句' (the stored name of jieba's "no verb between them") in the graph's
    relation table and hover text. It is "same sentence" in English, 同句 in Chinese."""
    doc = "# 城市\n\n北京、上海和广州是中国的大城市，北京、上海的地铁很长。\n".encode()
    for lang, shown, hidden in (("en", "same sentence", "同句"), ("zh", "同句", "same sentence")):
        at = AppTest.from_file(APP, default_timeout=TIMEOUT)
        at.query_params.update({"ui.lang": lang, "question": "北京和上海"})
        at.run()
        go(at, "upload")
        at.radio(key="upload.mode").set_value("replace").run()
        at.file_uploader(key="upload.files").set_value([("cities.md", doc, "text/markdown")]).run()
        go(at, "graph")
        page = html_of(at) + json.dumps([json.loads(c.proto.spec) for c in plotly_charts(at)], ensure_ascii=False)
        assert shown in page and hidden not in page


def test_rerank_page_moves_bump_chart_and_why_each_chunk_moved(app):
    at = go(app, "rerank")
    assert any("learned ranker" in s.value and "不是交叉编码器" in s.value for s in at.success)  # zh: the UI's language
    table = frames(at)[0]
    assert len(table) == at.session_state["retrieval.recall_n"]
    assert (table.iloc[:, 0] != "—").sum() == at.session_state["rerank.top_k"]  # ranks after rerank
    assert table.iloc[:, 5].str.contains(r"[+-]\d").all()  # every candidate's main reasons, signed
    fig = json.loads(plotly_charts(at)[0].proto.spec)
    assert fig["data"] and len(fig["data"][0]["x"]) == 4  # dense -> BM25 -> RRF -> rerank
    # why: the chosen candidate's contributions, largest first, and the model's feature importance
    why = frames(at)[1]
    contrib = why.iloc[:, 1].abs().tolist()
    assert contrib == sorted(contrib, reverse=True) and len(why) == 17
    chart = json.loads(plotly_charts(at)[1].proto.spec)
    assert "=" in chart["layout"]["title"]["text"]  # score = bias + contributions
    assert len(plotly_charts(at)) == 3  # + the importance chart
    pick = at.selectbox(key="rerank.why_chunk")
    other = pick.options[-1]
    pick.select(other).run()
    assert not at.exception and at.session_state["rerank.why_chunk"] == other.split(" · ")[0]


def test_rerank_page_labels_the_fallback_when_chosen(app):
    at = go(app, "rerank")
    at.selectbox(key="rerank.name").select("sentence-maxsim").run()
    assert any("sentence-maxsim" in w.value and "fallback" in w.value.lower() for w in at.warning)
    assert len(frames(at)) == 1 and not [s for s in at.subheader if "Why" in s.value]  # no reasons to show


def test_answer_page_offline_answer_audit_prompt_and_export(app):
    at = go(app, "answer")
    assert any("extractive" in w.value for w in at.warning)  # which generator ran, labelled
    trace = at.session_state["answer.last_trace"]
    assert trace.answer and trace.audit is not None
    html = html_of(at)
    for ref in trace.audit.valid:
        assert f"href='#ref-{ref}'" in html  # clickable marker -> the cited chunk's anchor
        assert f"id='ref-{ref}'" in html
    assert "[system]" in html and "[context]" in html and "[question]" in html  # colour-coded prompt
    labels = [m.label for m in at.metric]
    assert any("valid" in lbl for lbl in labels) and any("hallucinated" in lbl for lbl in labels)
    assert {b.key for b in at.get("download_button")} == {"answer.export_md", "answer.export_json", "export.script",
                                                          "export.notebook"}  # the handouts, the script, the notebook
    assert plotly_charts(at)  # where the time went
    assert trace.no_rag_answer is not None  # side-by-side comparison is on by default
    # the notes under the answer: each said once (the page adds the fallback reasons, the backend no longer does)
    notes = [line for c in at.caption for line in c.value.split("  \n") if line.startswith(":material/info:")]
    assert notes and len(notes) == len(set(notes)) == len(trace.notes)
    assert sum("生成器" in n for n in notes) == 1 and sum("重排" in n for n in notes) == 0  # the learned one ran
    # every audited sentence is on the page in full (a wrapping table, not a grid cut to one line)
    for sent in trace.audit.sentences:
        assert html_lib.escape(sent.sentence) in html
    assert html_lib.escape(localized(trace.backends["reranker"], "zh")) in html  # "what ran": the whole label, in Chinese
    # switching pages and back reuses the trace instead of answering again
    go(at, "retrieval")
    assert "trace" in all_text(at)  # "(from the answer page's trace; nothing recomputed)"
    go(at, "answer")
    assert at.session_state["answer.last_trace"] is trace


def test_answer_page_rewrite_without_an_llm_says_how_to_fix_it(app):
    at = go(app, "answer")
    from rag.models.local_llm import local_available

    at.radio(key="answer.rewrite").set_value("hyde").run()
    assert not at.exception
    # installed but the stand-in chosen: choose it; not installed: install it (never both pieces of advice)
    wanted, not_wanted = (("把生成器选为 local", "安装") if local_available()[0] else ("安装随附的本地模型", "选为 local"))
    assert any(wanted in e.value and not_wanted not in e.value for e in at.error), [e.value for e in at.error]
    at.radio(key="answer.rewrite").set_value("none").run()
    assert not at.error


def test_evaluation_page_with_an_uploaded_queries_file(app):
    at = go(app, "evaluation")
    at.radio(key="eval.source").set_value("upload").run()
    lines = [
        {"id": "q1", "query": "RRF 怎么算", "gold_ids": ["faq_030"]},
        {"id": "q2", "query": "什么是 LoRA", "gold_ids": ["faq_016"]},
    ]
    body = "\n".join(json.dumps(x, ensure_ascii=False) for x in lines).encode("utf-8")
    at.file_uploader(key="eval.file").set_value(("mine.jsonl", body, "application/json")).run()
    at.multiselect(key="eval.strategies").set_value(["bm25", "hybrid"]).run()
    at.button(key="eval.run").click().run()
    assert not at.exception and not at.error
    table = frames(at)[0]
    assert list(table.iloc[:, 0]) == ["bm25", "hybrid"]
    assert (table["Hit@5"] == 1.0).all()  # two easy queries, both answered in the top 5
    at.file_uploader(key="eval.file").set_value(("bad.jsonl", b"{not json", "application/json")).run()
    assert any("bad.jsonl" in e.value and "line 1" in e.value for e in at.error)
    at.radio(key="eval.source").set_value("golden").run()
    at.multiselect(key="eval.strategies").set_value(["dense", "bm25", "hybrid", "hybrid+rerank"]).run()


def test_evaluation_page_runs_strategies(app):
    at = go(app, "evaluation")
    at.number_input(key="eval.limit").set_value(4).run()
    at.button(key="eval.run").click().run()
    assert not at.exception and not at.error
    table = frames(at)[0]
    assert list(table.iloc[:, 0]) == ["dense", "bm25", "hybrid", "hybrid+rerank"]
    assert {"Hit@1", "MRR@10", "nDCG@10"} <= set(table.columns)
    assert ((table["MRR@10"] >= 0) & (table["MRR@10"] <= 1)).all()
    assert len(plotly_charts(at)) == 1
    assert "learned ranker（LightGBM LambdaMART" in html_of(at)  # what ran, in full, in the UI's language
    wins = next(f for f in frames(at) if "wins" in f.columns or "赢" in f.columns)
    assert len(wins) == 2 and (wins.iloc[:, 2:5].sum(axis=1) == 4).all()  # hybrid vs dense, vs bm25: 4 queries each
    drill = next(f for f in frames(at) if "gold" in f.columns)
    assert len(drill) == 4 and "hybrid" in drill.columns


# ----------------------------------------------------------------------------- state behaviour


def test_settings_survive_page_switches_and_question_change_does_not_reembed(app):
    at = go(app, "retrieval")
    at.slider(key="retrieval.w_bm25").set_value(2.0).run()
    go(at, "rerank")
    go(at, "retrieval")
    assert at.slider(key="retrieval.w_bm25").value == 2.0
    index, key = at.session_state["index.obj"], at.session_state["index.key"]
    at.sidebar.text_area[0].set_value("BM25 的 k1 和 b 是什么意思？").run()
    assert not at.exception
    assert at.session_state["index.obj"] is index and at.session_state["index.key"] == key
    assert "k1" in frames(at)[0].to_string() or "faq_026" in frames(at)[0].to_string()
    at.slider(key="retrieval.w_bm25").set_value(1.0).run()


def test_upload_through_the_file_uploader_with_a_bad_file_and_session_isolation():
    at = new_app()
    go(at, "upload")
    kb_hash = at.session_state["corpus.hash"]
    good = "# 测试文档\n\n这是上传测试用的一段中文。它讲的是检索评测。\n\n## 第二节\n\n第二节也有几句话。".encode("utf-8")
    bad = b"%PDF-1.4 this is not really a pdf \x00\x01\x02"
    up = at.file_uploader(key="upload.files")
    up.set_value([("notes.md", good, "text/markdown"), ("broken.pdf", bad, "application/pdf")]).run()
    assert not at.exception
    assert any("broken.pdf" in e.value for e in at.error)  # the bad file's error, with its name
    assert at.session_state["corpus.name"] == "notes.md"
    assert [d.doc_id for d in at.session_state["corpus.docs"]] == ["notes"]
    assert at.session_state["index.obj"].chunks[0].doc_id == "notes"  # re-indexed the new corpus
    uploaded_hash = at.session_state["corpus.hash"]
    # a bad upload alone keeps the corpus that was loaded before
    at.file_uploader(key="upload.files").set_value([("empty.txt", b"", "text/plain")]).run()
    assert any("empty.txt" in e.value for e in at.error)
    assert at.session_state["corpus.hash"] == uploaded_hash
    # another browser session never sees this upload
    other = new_app()
    assert other.session_state["corpus.hash"] == kb_hash != uploaded_hash


def test_apply_upload_keeps_the_previous_corpus_when_every_file_fails():
    from rag.ingest.documents import load_knowledge_base
    from ui import corpus

    ss: dict = {}
    corpus.set_corpus(ss, load_knowledge_base(), "kb", [])
    before = ss["corpus.hash"]
    report = corpus.apply_upload(ss, [("x.pdf", b"not a pdf"), ("y.bin", b"\x00\x01")])
    assert not report.documents and len(ss["corpus.errors"]) == 2
    assert ss["corpus.hash"] == before and ss["corpus.name"] == "kb"
    report = corpus.apply_upload(ss, [("a.txt", "第一句。第二句。".encode()), ("z.pdf", b"junk")], mode="append")
    assert len(report.documents) == 1 and len(ss["corpus.errors"]) == 1
    assert len(ss["corpus.docs"]) == 51 and ss["corpus.docs"][-1].doc_id == "a"


# ----------------------------------------------------------------------------------- LLM page


def test_answer_page_against_the_fake_openai_server(fake_llm):
    key = "sk-test-SECRET-4242"
    at = new_app()
    at.sidebar.radio(key="llm.generator").set_value("endpoint")
    at.sidebar.text_input(key="llm.base_url").set_value(fake_llm.url)
    at.sidebar.text_input(key="llm.model").set_value(fake_llm.model)
    at.sidebar.text_input(key="llm.api_key").set_value(key)
    at.run()
    assert not at.exception
    go(at, "answer")
    assert not at.error, [e.value for e in at.error]
    trace = at.session_state["answer.last_trace"]
    # the fake's canned answer, streamed through the real client, audited as written: its made-up ref on record, its
    # sentences (a lead-in, a citation of nothing) set aside; the answer leads with the selector's quote
    assert trace.model_audit is not None and trace.model_audit.hallucinated == ["faq_999"]
    assert any(s.startswith("根据资料") for s in trace.unsupported + trace.restated)
    assert "fake-model" in trace.backends["generator"]
    assert trace.answer.startswith("「") and trace.audit.valid and not trace.audit.hallucinated
    html = html_of(at)
    assert "line-through" in html and "faq_999" in html  # the set-aside sentence and its made-up ref, struck through
    requests = fake_llm.chat_requests
    assert len(requests) == 2  # the RAG answer and the no-RAG comparison
    assert requests[0].headers.get("authorization") == f"Bearer {key}"
    assert requests[0].body["stream"] is True
    # the key never reaches the trace, its exports or the page
    assert key not in trace.to_json() and key not in trace.to_markdown()
    assert key not in all_text(at) and key not in html


def test_bad_llm_settings_show_an_error_not_a_crash():
    at = new_app()
    at.sidebar.text_input(key="llm.base_url").set_value("ftp://nowhere").run()
    assert not at.exception
    assert any("http" in e.value for e in at.sidebar.error)


def test_a_bad_endpoint_setting_does_not_stop_pages_that_need_no_generator():
    """Bug: every page built the generator just to make a trace key, so a bad endpoint stopped retrieval and
    rerank too. Only the answer page needs the generator now."""
    at = new_app()
    at.sidebar.radio(key="llm.generator").set_value("endpoint")
    at.sidebar.text_input(key="llm.base_url").set_value("ftp://nowhere").run()
    assert not at.exception
    for page in ("retrieval", "rerank"):
        go(at, page)
        assert not at.main.error, [e.value for e in at.main.error]
        assert frames(at), f"the {page} page drew no table"


def test_a_bad_rag_variable_is_said_in_the_sidebar_and_the_pages_still_run(monkeypatch):
    monkeypatch.setenv("RAG_LLM_MAX_TOKENS", "lots")
    at = new_app()
    shown = [e.value.replace("\\", "") for e in at.sidebar.error]  # md_escape: RAG\\_LLM...
    assert any("RAG_LLM_MAX_TOKENS='lots' must be a whole number" in m for m in shown), shown
    go(at, "retrieval")  # a page that does not read the variable draws as usual
    assert frames(at)


# --------------------------------------------------------------------------------------- i18n


def test_every_label_key_used_exists_and_english_switch_works():
    from ui.i18n import LABELS

    used = set()
    for path in [ROOT / "app.py", *ROOT.glob("app_pages/*.py"), *ROOT.glob("ui/*.py")]:
        used |= set(re.findall(r"\bt\(\"([a-z_.]+)\"\)", path.read_text(encoding="utf-8")))
    assert used and used <= set(LABELS), used - set(LABELS)
    at = new_app()
    at.sidebar.radio(key="ui.lang").set_value("en").run()
    assert not at.exception
    assert at.title[0].value.endswith("Inspectable RAG: retrieval-augmented generation, stage by stage")
    at.run()  # the English labels give the widgets new labels: the choice must survive that rerun
    assert at.session_state["ui.lang"] == "en"
    assert "Inspectable RAG" in at.title[0].value and "透视" not in at.title[0].value


def test_llm_configured_in_secrets_is_used_and_the_sidebar_overrides_it(fake_llm):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.secrets["llm"] = {"base_url": fake_llm.url, "model": "fake-model", "api_key": "sk-from-secrets"}
    at.run()
    at.sidebar.radio(key="llm.generator").set_value("auto").run()  # auto: a configured endpoint comes first
    assert not at.exception
    table = at.table[0].value
    gen = table[table.iloc[:, 0].str.contains("OpenAI-compatible")]
    assert len(gen) == 1 and "fake-model" in gen.iloc[0, 0] and "real" in gen.iloc[0, 1]
    at.sidebar.text_input(key="llm.model").set_value("other-model").run()
    assert "other-model" in at.table[0].value.to_string()
    at.sidebar.radio(key="llm.generator").set_value("extractive").run()
    assert "extractive" in at.table[0].value.to_string()


def test_rerank_page_shows_the_multi_query_list_as_the_rerank_input(fake_llm):
    at = new_app()
    at.sidebar.radio(key="llm.generator").set_value("endpoint")
    at.sidebar.text_input(key="llm.base_url").set_value(fake_llm.url)
    at.sidebar.text_input(key="llm.model").set_value(fake_llm.model)
    at.run()
    go(at, "answer")
    at.radio(key="answer.rewrite").set_value("multi-query").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    trace = at.session_state["answer.last_trace"]
    assert trace.per_query  # multi-query ran
    go(at, "rerank")
    caption = " ".join(c.value for c in at.caption)
    assert "多查询 RRF" in caption and f"{len(trace.per_query)} 个查询" in caption
    fig = json.loads(plotly_charts(at)[0].proto.spec)
    assert "多查询 RRF" in json.dumps(fig, ensure_ascii=False)  # the bump chart names the real input


def test_uploader_list_and_corpus_agree_after_random_adds_and_removes():
    """ui.corpus.sync_uploads, which the upload page calls on every run with the uploader's files."""
    import random

    from ui import corpus

    pool = {f"f{i}.txt": f"第{i}个文件的内容。它只讲第{i}件事。".encode() for i in range(6)}
    for mode in ("replace", "append"):
        rng = random.Random(7 if mode == "replace" else 11)
        ss: dict = {}
        corpus.use_knowledge_base(ss)
        kb = [d.doc_id for d in ss["corpus.docs"]]
        current: list[str] = []
        for _ in range(60):
            if current and rng.random() < 0.45:
                current.remove(rng.choice(current))
            else:
                current.append(rng.choice([n for n in pool if n not in current] or list(pool)[:1]))
                current = list(dict.fromkeys(current))
            corpus.sync_uploads(ss, [(n, pool[n]) for n in current], mode)
            ids = [d.doc_id for d in ss["corpus.docs"]]
            uploaded = [n.removesuffix(".txt") for n in current]
            expected = kb if not current else uploaded if mode == "replace" else kb + uploaded
            assert ids == expected, (mode, current)
            assert not ss["corpus.errors"], ss["corpus.errors"]  # no false "already in the corpus"
            files = [f["file"] for f in ss["corpus.files"]]
            assert files == (["faq.jsonl"] if not current else current if mode == "replace"
                             else ["faq.jsonl", *current])


def test_append_then_remove_through_the_real_uploader():
    at = new_app()
    go(at, "upload")
    kb = len(at.session_state["corpus.docs"])
    at.radio(key="upload.mode").set_value("append").run()
    a, b = ("a.txt", "甲文件。只有一句。".encode(), "text/plain"), ("b.txt", "乙文件。也只有一句。".encode(), "text/plain")
    at.file_uploader(key="upload.files").set_value([a]).run()
    at.file_uploader(key="upload.files").set_value([a, b]).run()
    assert not at.error, [e.value for e in at.error]
    assert len(at.session_state["corpus.docs"]) == kb + 2
    at.file_uploader(key="upload.files").set_value([b]).run()
    assert [d.doc_id for d in at.session_state["corpus.docs"]][kb:] == ["b"]
    at.file_uploader(key="upload.files").set_value([]).run()
    assert len(at.session_state["corpus.docs"]) == kb and not at.error


def test_a_link_carries_the_question_and_settings_and_bad_values_are_ignored():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["question"] = "什么是 BM25？**粗体** [链接](http://x)"
    at.query_params["retrieval.mode"] = "bm25"
    at.query_params["rerank.top_k"] = "999"  # out of range: ignored
    at.query_params["answer.cite"] = "whatever"  # not an option: ignored
    at.run()
    assert not at.exception
    ss = at.session_state
    assert ss["question"].startswith("什么是 BM25？") and ss["retrieval.mode"] == "bm25"
    assert ss["rerank.top_k"] == 5 and ss["answer.cite"] == "constrained"  # the defaults stand
    assert any("**粗体**" in tx.value for tx in at.text)  # the question is shown as text, not Markdown
    at.sidebar.radio(key="ui.lang").set_value("en").run()
    params = dict(at.query_params)
    assert params.get("ui.lang") in ("en", ["en"]) and "retrieval.mode" in params and "rerank.top_k" not in params


def test_what_a_chunk_reads_as_shows_its_code_as_code_not_fence_marks(tmp_path):
    """Issue 65, item 13: the upload page's "what a chunk reads as" showed a code chunk with its literal fences
    (```{.python .input} … ```) escaped into the text. The code is drawn as code, in the file's language, in both
    languages; the words around it stay text."""
    doc = ("# 门控循环单元\n\n门控循环单元是一个稍微简化的变体。\n\n```{.python .input}\n#@tab pytorch\n"
           "def gru(inputs, state):\n    return state\n```\n").encode()
    for lang in ("zh", "en"):
        at = AppTest.from_file(APP, default_timeout=TIMEOUT)
        at.query_params.update({"ui.lang": lang})
        at.run()
        go(at, "upload")
        at.radio(key="upload.mode").set_value("replace").run()
        at.file_uploader(key="upload.files").set_value([("gru.md", doc, "text/markdown")]).run()
        assert not at.exception, [e.value for e in at.exception]
        codes = [c.value for c in at.code]
        assert "def gru(inputs, state):\n    return state" in codes, codes
        assert [c.language for c in at.code if "def gru" in c.value] == ["python"]
        shown = " ".join(m.value for m in at.markdown)
        assert "```" not in shown and "\\`\\`\\`" not in shown and "input}" not in shown
        assert any("稍微简化的变体" in m.value for m in at.markdown)


def test_a_hostile_file_name_is_shown_as_text_not_markdown():
    at = new_app()
    go(at, "upload")
    name = "**粗体**[点我](evil.example) $x^2$ :smile:.txt"  # no "/": a path part would be cut off
    at.file_uploader(key="upload.files").set_value([(name, b"", "text/plain")]).run()
    assert not at.exception
    (err,) = [e.value for e in at.error]
    assert r"\*\*粗体\*\*\[点我\](evil.example)" in err and r"\$x^2\$" in err and r"\:smile\:" in err


def test_the_learned_sparse_list_joins_the_fusion_when_switched_on(app):
    go(app, "upload")
    app.checkbox(key="index.sparse").check().run()
    assert not app.exception and not app.warning or all("sparse" not in w.value for w in app.warning)
    at = go(app, "retrieval")
    table = frames(at)[0]
    sparse_col = next(c for c in table.columns if c.endswith("sparse chunk") or c == "稀疏 sparse chunk")
    assert table[sparse_col].iloc[0]
    arith = [c for c in table.columns if "Σ" in c][0]
    assert "sparse" in arith and table[arith].iloc[0].count("/(60+") == 3  # three lists in the RRF sum
    assert any("sparse(" in c.value for c in at.caption)  # the shared-feature explanation
    assert at.session_state["index.obj"].sparse is not None


def test_semantic_chunking_shows_its_similarity_curve(app):
    at = go(app, "upload")
    at.selectbox(key="chunk.method").set_value("semantic").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    at.selectbox(key="upload.doc").set_value(at.session_state["corpus.docs"][0].doc_id).run()
    assert not at.exception
    assert any("red crosses" in c.value or "红叉" in c.value or "single sentence" in c.value or "只有一句" in c.value
               for c in at.caption)
    assert len(plotly_charts(at)) >= 2  # the length histogram and the curve


def test_chunkers_compared_on_the_long_form_set(app):
    at = go(app, "upload")
    at.button(key="upload.compare_chunkers").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    table = next(f for f in frames(at) if "span MRR@10" in f.columns)
    assert len(table) == 7 and set(table.iloc[:, 0]) >= {"auto", "fixed", "sentence", "markdown", "semantic"}
    assert ((table["span Hit@5"] >= 0) & (table["span Hit@5"] <= 1)).all()
    at.button(key="upload.longform").click().run()
    assert {d.doc_id for d in at.session_state["corpus.docs"]} == {"handbook_zh", "lab_guide_zh", "cluster_guide_en"}


def test_contextual_chunking_shows_each_chunks_context(app, monkeypatch, local_model):
    at = go(app, "upload")
    text = ("# 课程手册\n\n## 期中项目\n\n" + "期中项目两人一组，题目是为一个真实的中文文档集合搭建检索系统。" * 9
            + "\n\n## 期末项目\n\n" + "提交方式：第 15 周周日 23:59 之前提交代码和报告，第 16 周答辩。" * 9)
    at.file_uploader(key="upload.files").set_value([("manual.md", text.encode(), "text/markdown")]).run()
    from ui import models

    models.local_chat.clear()  # this test's model is its own, with a short answer length
    monkeypatch.setenv("RAG_LLM_MAX_TOKENS", "48")
    try:
        at.checkbox(key="index.contextual").check().run()
    finally:
        models.local_chat.clear()  # no later test inherits it
    assert not at.exception and not at.warning, [w.value for w in at.warning]
    contexts = next(f for f in frames(at) if any("context" in c or "上下文" in c for c in f.columns))
    assert len(contexts) >= 2 and all(isinstance(x, str) and x for x in contexts.iloc[:, 1])
    index = at.session_state["index.obj"]
    assert all(c.metadata.get("context") for c in index.chunks)
    doc = next(d for d in at.session_state["corpus.docs"])  # a Markdown chunk is read text; its span is the source's
    assert all(0 <= c.start < c.end <= len(doc.text) for c in index.chunks)


def test_rerank_page_with_the_local_model_as_a_judge(app, monkeypatch, local_model):
    monkeypatch.setenv("RAG_JUDGE_BUDGET_S", "1")  # a second: only the first few candidates are judged
    at = go(app, "rerank")
    at.selectbox(key="rerank.name").set_value("llm-judge").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("LLM judge" in s.value and "不是交叉编码器" in s.value for s in at.success)
    assert any("judge" in i.value.lower() or "评审" in i.value for i in at.info)  # how many it reached
    table = frames(at)[0]
    scores = next(c for c in table.columns if "score" in c or "分数" in c)
    judged = table[scores] != "—"  # "—": the budget did not reach that candidate
    assert judged.sum() >= 1 and (~judged).sum() >= 1
    assert all(0 < float(v) < 1 for v in table[scores][judged])


def test_loops_page_without_a_language_model_says_what_is_needed(app):
    at = go(app, "loops")  # the tests' default generator is the extractive stand-in: no model to decide
    assert not at.exception and any("language model" in w.value or "语言模型" in w.value for w in at.warning)


def test_loops_page_runs_self_rag_and_the_agent_on_the_local_model(app, monkeypatch, local_model):
    from ui import models

    models.local_chat.clear()  # this test's model is its own, with a short answer length
    monkeypatch.setenv("RAG_LLM_MAX_TOKENS", "48")
    try:
        app.sidebar.radio(key="llm.generator").set_value("local")
        app.sidebar.text_area(key="question").set_value("你好").run()
        at = go(app, "loops")
        at.button(key="loops.run").click().run()
    finally:
        models.local_chat.clear()
    assert not at.exception and not at.error, [e.value for e in at.error]
    loops = [v for k, v in at.session_state["memo.loop"].items()]
    assert {lt.name for lt in loops} == {"self-rag", "agent"}
    assert all(not lt.retrieved for lt in loops)  # a greeting: neither searched, and the page says why
    html = html_of(at)
    assert "P(B)=" in html and "content-free" in html  # the decision's raw verdict, on the timeline
    assert any("没有检索" in i.value or "No retrieval" in i.value for i in at.info)


def test_evaluation_page_judges_an_answer_with_every_verdict_shown(app, monkeypatch, local_model):
    from ui import models

    models.local_chat.clear()
    monkeypatch.setenv("RAG_LLM_MAX_TOKENS", "48")
    try:
        app.sidebar.radio(key="llm.generator").set_value("local").run()
        at = go(app, "evaluation")
        at.number_input(key="judge.n").set_value(1).run()
        at.button(key="judge.run").click().run()
    finally:
        models.local_chat.clear()
    assert not at.exception and not at.error, [e.value for e in at.error]
    _, results = at.session_state["judge.result"]
    judged = results[0].runs[0].judged
    assert judged is not None and judged.reference_source == "written reference"
    assert set(judged.scores) == {"faithfulness", "answer relevancy", "context precision", "context recall"}
    html = html_of(at)
    assert "context recall" in html and ("P(是)=" in html or "P(Yes/yes)=" in html)  # raw verdicts on the page


def test_a_link_opens_the_class_knowledge_base_once_for_every_session_and_uploads_stay_private(tmp_path, monkeypatch,
                                                                                              embedder):
    """?kb=course (issue 56): a fresh session lands on the teacher's documents in either language and answers
    from them; two sessions hold one copy of its vectors; one student's upload is not in the other's corpus."""
    from rag.index import kb

    monkeypatch.setenv("RAG_KB_DIR", str(tmp_path / "kbs"))
    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "hash_map.md").write_text("# 哈希表\n\n哈希表通过哈希函数把键映射到桶。\n\n## 哈希冲突\n\n两个不同的键映射到"
                                        "同一个桶，叫作哈希冲突；链式地址法在每个桶里放一个链表来解决它。\n", encoding="utf-8")
    (folder / "quick_sort.md").write_text("# 快速排序\n\n快速排序选一个基准数，把小的放左边、大的放右边，再递归。\n",
                                          encoding="utf-8")
    kb.build("course", [folder], embedder=embedder)
    sessions = []
    for lang in ("zh", "en"):
        at = AppTest.from_file(APP, default_timeout=TIMEOUT)
        at.query_params.update({"kb": "course", "ui.lang": lang, "question": "哈希冲突是什么？",
                                "llm.generator": "extractive"})
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        go(at, "upload")
        assert ("班级知识库 course" if lang == "zh" else "class knowledge base course") in all_text(at)
        assert {d.doc_id for d in at.session_state["corpus.docs"]} == {"hash_map", "quick_sort"}
        go(at, "answer")
        assert not at.error, [e.value for e in at.error]
        trace = at.session_state["answer.last_trace"]
        assert trace.contexts and trace.contexts[0].ref.startswith("hash_map")
        assert "course" in str(trace.backends["index"])
        assert dict(at.query_params).get("kb") in ("course", ["course"])  # the link keeps it
        sessions.append(at)
    a, b = sessions
    assert a.session_state["index.obj"] is not b.session_state["index.obj"]
    assert a.session_state["index.obj"].vectors is b.session_state["index.obj"].vectors  # one copy for the class
    go(b, "upload")
    b.radio(key="upload.mode").set_value("append").run()
    b.file_uploader(key="upload.files").set_value([("mine.md", "# 我的笔记\n\n只有我自己能看到的笔记。".encode(),
                                                    "text/markdown")]).run()
    assert not b.exception and "mine" in {d.doc_id for d in b.session_state["corpus.docs"]}
    assert "corpus.kb" not in b.session_state  # a new, private corpus: the shared copy is not hers to change
    go(a, "upload")
    assert "mine" not in {d.doc_id for d in a.session_state["corpus.docs"]}
    assert a.session_state["corpus.kb"][0] == "course"


def test_a_link_to_a_knowledge_base_with_no_question_asks_for_one(tmp_path, monkeypatch, embedder):
    """Issue 65, item 2: `?kb=course` with no question ran the bundled FAQ's example question on every page (the answer
    page refused it) and the evaluation page defaulted to the FAQ's golden set (warning every metric would be 0). On
    a class's base, the pages ask for a question and name its documents; the evaluation offers its own questions."""
    from rag.index import kb

    monkeypatch.setenv("RAG_KB_DIR", str(tmp_path / "kbs"))
    folder = tmp_path / "course"
    folder.mkdir()
    (folder / "hash_map.md").write_text("# 哈希表\n\n哈希表通过哈希函数把键映射到桶。\n", encoding="utf-8")
    kb.build("course", [folder], embedder=embedder)
    for lang, ask, docs in (("zh", "请先在左侧输入一个问题", "这个班级知识库的文档：哈希表"),
                            ("en", "Type a question in the sidebar", "This class knowledge base's documents: 哈希表")):
        at = AppTest.from_file(APP, default_timeout=TIMEOUT)
        at.query_params.update({"kb": "course", "ui.lang": lang, "llm.generator": "extractive"})
        at.run()
        assert not at.exception and at.session_state["question"] == ""
        for page in ("retrieval", "answer"):
            go(at, page)
            assert any(ask in i.value for i in at.info) and docs in all_text(at)
            assert not at.error and "answer.last_trace" not in at.session_state
        go(at, "evaluation")
        assert at.session_state["eval.source"] == "generate"
        assert not any("gold_ids" in w.value for w in at.warning), [w.value for w in at.warning]
        at.text_area(key="question").set_value("哈希表是什么？").run()
        go(at, "answer")
        assert at.session_state["answer.last_trace"].contexts[0].ref.startswith("hash_map")


def test_a_session_on_a_rebuilt_knowledge_base_is_told_and_loads_the_new_build(tmp_path, monkeypatch, embedder):
    """Issue 65, item 7: a session open on `live` kept the old copy with no notice after the teacher rebuilt it, while
    ui/kb.py's docstring said every session reloads it. It keeps its copy (mid-lesson answers stay consistent), every
    page says a newer build exists, in the UI's language, and a button loads it."""
    from rag.index import kb

    monkeypatch.setenv("RAG_KB_DIR", str(tmp_path / "kbs"))
    folder = tmp_path / "live"
    folder.mkdir()
    (folder / "hash_map.md").write_text("# 哈希表\n\n哈希表通过哈希函数把键映射到桶。\n", encoding="utf-8")
    kb.build("live", [folder], embedder=embedder)
    sessions = {}
    for lang in ("zh", "en"):
        at = AppTest.from_file(APP, default_timeout=TIMEOUT)
        at.query_params.update({"kb": "live", "ui.lang": lang, "question": "堆是什么？", "llm.generator": "extractive"})
        at.run()
        go(at, "answer")
        assert not any("重新构建" in i.value or "rebuilt" in i.value for i in at.info)  # nothing newer yet
        sessions[lang] = at
    (folder / "heap.md").write_text("# 堆\n\n堆是一棵完全二叉树，大顶堆的每个节点都不小于它的子节点。\n", encoding="utf-8")
    kb.build("live", [folder], embedder=embedder)
    for lang, said in (("zh", "重新构建了班级知识库 live"), ("en", "rebuilt the class knowledge base live")):
        at = sessions[lang]
        go(at, "retrieval")
        assert any(said in i.value for i in at.info), [i.value for i in at.info]
        assert {d.doc_id for d in at.session_state["corpus.docs"]} == {"hash_map"}  # its copy, until it asks
        at.button(key="kb.load_newer").click().run()
        assert not at.exception and {d.doc_id for d in at.session_state["corpus.docs"]} == {"hash_map", "heap"}
        assert not any(said in i.value for i in at.info)
        go(at, "answer")
        assert at.session_state["answer.last_trace"].contexts[0].ref.startswith("heap")


def test_repeated_wrong_teacher_keys_are_slowed_down_and_the_page_says_so(tmp_path, monkeypatch):
    """Issue 65, item 8, on the upload page: after three wrong keys the page says how long to wait, in the UI's
    language; the teacher's right key typed at once is refused unchecked and nothing is saved."""
    import ui.kb
    from ui.kb import key_throttle

    key_throttle.clear()  # the server's count starts at zero for this test
    monkeypatch.setattr(ui.kb, "CLOCK", lambda: 1000.0)  # frozen: the wait has not passed when the right key comes
    monkeypatch.setenv("RAG_KB_DIR", str(tmp_path / "kbs"))
    monkeypatch.setenv("RAG_TEACHER_KEY", "s3cret-teacher")
    files = [("notes.md", "# 期中复习\n\n期中考试考前六章。\n".encode(), "text/markdown")]
    for lang, wait_said in (("zh", "请等"), ("en", "wait")):
        at = AppTest.from_file(APP, default_timeout=TIMEOUT)
        at.query_params.update({"ui.lang": lang})
        at.run()
        go(at, "upload")
        at.file_uploader(key="upload.files").set_value(files).run()
        at.text_input(key="upload.kb_name").set_value("midterm").run()
        for _ in range(3):
            at.text_input(key="upload.kb_key").set_value("guess").run()
            at.button(key="upload.kb_save").click().run()
        assert any(wait_said in w.value for w in at.warning), [w.value for w in at.warning]
        at.text_input(key="upload.kb_key").set_value("s3cret-teacher").run()
        at.button(key="upload.kb_save").click().run()
        assert any(wait_said in w.value for w in at.warning)
        assert not any("已保存知识库" in x.value or "Saved the knowledge base" in x.value for x in at.success)
        assert not (tmp_path / "kbs" / "midterm").exists()
        assert "s3cret-teacher" not in all_text(at)
    key_throttle.clear()


def _damaged_course(kb_dir: Path, embedder) -> None:
    from rag.index import kb

    folder = kb_dir.parent / "damaged_files"
    folder.mkdir(exist_ok=True)
    (folder / "a.md").write_text("# 哈希表\n\n哈希表把键映射到桶。\n", encoding="utf-8")
    kb.build("broken", [folder], embedder=embedder, base=kb_dir)
    (kb_dir / "broken" / "vectors.npy").write_bytes(b"cut short")


@pytest.mark.parametrize("value, shown", [("course", "course"), ("broken", "broken"), ("../etc", "../etc"),
                                          ("x" * 5000, "5,000"), ("y" * 20000, "20,000")])
def test_a_link_that_cannot_be_opened_says_so_on_every_page_and_runs_on_no_other_corpus(value, shown, tmp_path,
                                                                                         monkeypatch, embedder):
    """Issue 65, item 1: ?kb=missing, a damaged bundle, ?kb=../etc or a 5,000-character value dropped the class on the
    bundled FAQ without a word, kb= vanished from the URL, and the message was only on the upload page. Now the page
    the link lands on says so, in the UI's language, with the value cut; no page runs on the FAQ until the student
    chooses it; the link keeps its kb=."""
    kb_dir = tmp_path / "kbs"
    monkeypatch.setenv("RAG_KB_DIR", str(kb_dir))
    if value == "broken":
        _damaged_course(kb_dir, embedder)
    for lang, words in (("zh", "打不开"), ("en", "cannot be opened")):
        long_said = "个字符" if lang == "zh" else "characters"
        at = AppTest.from_file(APP, default_timeout=TIMEOUT)
        at.query_params.update({"kb": value, "ui.lang": lang, "question": "哈希冲突是什么？",
                                "llm.generator": "extractive"})
        at.run()  # the home page: where the link lands
        assert not at.exception, [e.value for e in at.exception]
        errors = [e.value for e in at.error]
        assert any(words in e and shown in e for e in errors), errors
        assert len(value) < 64 or all(long_said in e for e in errors)  # the length said in the UI's language
        assert lang == "en" or not any("characters" in e or "cannot" in e for e in errors)  # no English in zh mode
        assert all(len(e) < 1200 for e in errors)  # a long value does not fill the page
        assert dict(at.query_params).get("kb") in (value, [value])  # the link keeps it: a reload tries again
        go(at, "answer")
        assert any(words in e.value for e in at.error) and "answer.last_trace" not in at.session_state
        go(at, "upload")  # where a corpus is chosen: the page runs, the failure said once
        assert sum(words in e.value for e in at.error) == 1
    at.button(key="kb.leave_link").click().run()  # the student's choice: go on with the bundled corpus
    assert not at.error and "kb" not in dict(at.query_params)
    go(at, "answer")
    assert at.session_state["answer.last_trace"].contexts


def test_only_the_teacher_key_saves_uploads_as_a_class_knowledge_base(tmp_path, monkeypatch):
    """Saving is offered only on a server started with RAG_TEACHER_KEY, and only after that key is typed: a student
    cannot overwrite the class's base (issue 56). The key itself is never shown."""
    monkeypatch.setenv("RAG_KB_DIR", str(tmp_path / "kbs"))
    files = [("notes.md", "# 期中复习\n\n期中考试考前六章，闭卷，带一张手写的 A4 纸。\n".encode(), "text/markdown")]
    monkeypatch.delenv("RAG_TEACHER_KEY", raising=False)
    at = new_app()
    go(at, "upload")
    at.file_uploader(key="upload.files").set_value(files).run()
    assert not [b for b in at.button if b.key == "upload.kb_save"]  # no key on this server: nothing to save with

    monkeypatch.setenv("RAG_TEACHER_KEY", "s3cret-teacher")
    at = new_app()
    go(at, "upload")
    at.file_uploader(key="upload.files").set_value(files).run()
    at.text_input(key="upload.kb_name").set_value("midterm").run()
    at.text_input(key="upload.kb_key").set_value("guess").run()
    at.button(key="upload.kb_save").click().run()
    assert any("教师密钥不对" in e.value for e in at.error) and not (tmp_path / "kbs" / "midterm").exists()
    at.text_input(key="upload.kb_key").set_value("s3cret-teacher").run()
    at.button(key="upload.kb_save").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert (tmp_path / "kbs" / "midterm" / "manifest.json").is_file()
    assert at.session_state["corpus.kb"][0] == "midterm"
    assert "s3cret-teacher" not in all_text(at) + "".join(str(e.value) for e in at.error)

"""Page 7 · Evaluation: run the bundled golden set, an uploaded queries file or test questions generated from this
corpus (reviewed and edited first) against this session's index and compare retrieval strategies (Hit@k, MRR,
nDCG, Recall, and optionally citation validity) in a table and a chart, with a per-query drill-down. The
generated questions: ui/testset_panel.py."""

import hashlib
import tempfile
from pathlib import Path

import pandas as pd
import streamlit as st

from rag.answer.citation_grammar import CITE_MODES
from rag.evaluate.evaluation import METRICS, better, is_share, load_queries
from rag.evaluate.strategies import (
    REWRITE_STRATEGIES,
    STRATEGIES,
    compare,
)
from rag.evaluate.wins import SINGLES, default_metric, verdicts, win_tie_loss
from rag.run import RunContext
from ui import charts, choices, corpus, indexing, judge_panel, settings, testset_panel
from ui.i18n import loc, t, tr
from ui.render import attempt, html_table, upload_limit_note
from ui.worker import run_in_worker


def strategies_table(reports: list) -> None:
    """Each strategy's mean figures, the best of each column marked, what ran, and the shares as bars."""
    extras = sorted({k for r in reports for k in r.extra})
    metrics = list(METRICS) + extras
    table = pd.DataFrame([
        {tr(zh="策略", en="strategy"): r.strategy, **{m: round(r.means.get(m, float("nan")), 3) for m in metrics},
         tr(zh="秒", en="seconds"): round(r.seconds, 2)}
        for r in reports
    ])
    st.subheader(tr(zh="策略对比 Strategies", en="Strategies"))
    higher = [m for m in metrics if better(m) == "higher"]
    lower = [m for m in metrics if better(m) == "lower"]
    st.dataframe(table.style.highlight_max(subset=higher, color="#dcfce7").highlight_min(subset=lower, color="#dcfce7")
                 .format(precision=3), hide_index=True, key="eval.table")
    st.caption(tr(zh="绿色：每列最好的值（大多数指标越高越好；" + "、".join(lower) + " 越低越好）。" if lower else
                  "绿色：每列最好的值（越高越好）。",
                  en="Green: the best value of each column (higher is better" + (f"; lower for {', '.join(lower)}" if lower else "")
                  + ")."))
    # What ran, in full and outside the grid (which would cut a long fallback label to one line).
    st.html(html_table(pd.DataFrame([{tr(zh="策略", en="strategy"): r.strategy, tr(zh="实际运行", en="what ran"): loc(r.label)}
                                     for r in reports])))
    st.plotly_chart(charts.eval_bars(reports, [m for m in metrics if is_share(m)]), key="eval.chart")  # 0..1 axis


def fusion_wins(reports: list) -> None:
    """Fusion against each single list, query by query (a mean hides the losses), and the queries it lost."""
    wins_metric = default_metric(reports)
    counts = win_tie_loss(reports, wins_metric)
    if counts:
        st.subheader(tr(zh="融合是赢、平还是输？逐题比较", en="Did fusion win, tie or lose? Query by query"))
        st.caption(tr(zh=f"均值会掩盖：融合可能提高了平均分，却在某个单一检索器独自答对的问题上输掉。每个问题比较 {wins_metric}。",
                      en="A mean hides this: fusion can raise the average and still lose on the questions one retriever "
                      f"answered alone. Each query's {wins_metric} is compared."))
        st.dataframe(pd.DataFrame([{tr(zh="融合", en="fused"): f, tr(zh="对比", en="against"): single,
                                    tr(zh="赢", en="wins"): c["win"], tr(zh="平", en="ties"): c["tie"], tr(zh="输", en="losses"): c["loss"]}
                                   for f, against in counts.items() for single, c in against.items()]),
                     hide_index=True, key="eval.wins")
        fused = next(iter(counts))
        losses = [v for v in verdicts(reports, fused, wins_metric) if "loss" in [v.get(f"vs {x}") for x in SINGLES]]
        if losses:
            with st.expander(tr(zh=f"{fused} 输掉的 {len(losses)} 个问题", en=f"The {len(losses)} queries {fused} lost")):
                st.dataframe(pd.DataFrame(losses).round(3), hide_index=True, key="eval.losses")


def drill_down(reports: list, depth: int) -> None:
    """Each query's first gold rank under every strategy, and one query's ranked lists side by side."""
    st.subheader(tr(zh="逐题查看 Per-query drill-down", en="Per-query drill-down"))
    by_query: dict[str, dict] = {}
    for r in reports:
        for qr in r.per_query:
            row = by_query.setdefault(qr.query.query_id, {"id": qr.query.query_id, "query": qr.query.query,
                                                          "gold": ", ".join(qr.query.gold_ids)})
            row[r.strategy] = "✗" if qr.first_gold_rank is None else str(qr.first_gold_rank)
    drill = pd.DataFrame(list(by_query.values()))
    st.caption(tr(zh=f"每格是第一个正确文档的名次（✗ = 前 {depth} 个候选里都没有）。",
                  en=f"Each cell: rank of the first gold document (✗ = not among the top {depth} candidates)."))
    st.dataframe(drill, hide_index=True, key="eval.drill")
    if by_query:
        qid = st.selectbox(tr(zh="查看一个问题", en="Inspect one query"), list(by_query), key="eval.query",
                           format_func=lambda i: f"{i} · {by_query[i]['query']}")
        cols = st.columns(len(reports))
        for col, r in zip(cols, reports):
            qr = next(x for x in r.per_query if x.query.query_id == qid)
            with col:
                st.markdown(f"**{r.strategy}**")
                st.dataframe(pd.DataFrame([
                    {t("rank"): i, "doc": d, "gold": "✓" if d in qr.query.gold_ids else ""}
                    for i, d in enumerate(qr.ranked_docs, 1)
                ]), hide_index=True, key=f"eval.drill.{r.strategy}")


ss = st.session_state
GOLDEN = Path(__file__).resolve().parent.parent / "data" / "golden.jsonl"
st.header(":material/leaderboard: " + t("page.evaluation"))
st.caption(tr(
    zh="黄金集：每个问题标注了能回答它的文档（gold_ids）。指标只看检索：Hit@k 前 k 个里有没有正确文档；MRR 第一个正确文档名次的倒数；"
    "nDCG 按名次打折的命中；Recall@k 找回了多少正确文档。",
    en="A golden set lists, for each question, the documents that answer it (gold_ids). Retrieval metrics: Hit@k — is a "
    "gold document in the top k; MRR — 1 / rank of the first gold document; nDCG — hits discounted by rank; "
    "Recall@k — the share of gold documents found.",
))
index = attempt(indexing.get_index)

gen, chat = attempt(choices.generator_choice, index.embedder)
c1, c2 = st.columns([1, 2])
with c1:
    source = st.radio(tr(zh="问题集", en="Queries"), ["golden", "upload", "generate"], key="eval.source",
                      format_func={"golden": tr(zh="内置黄金集 data/golden.jsonl", en="bundled data/golden.jsonl"),
                                   "upload": tr(zh="上传 JSONL", en="upload a JSONL file"),
                                   "generate": tr(zh="从当前语料生成", en="generate from this corpus")}.__getitem__)
    if source == "upload":
        up = st.file_uploader(tr(zh="查询文件：每行 {id, query, gold_ids}", en="Queries: one {id, query, gold_ids} per line"),
                              type=["jsonl"], key="eval.file", max_upload_size=corpus.TRANSFER_MB)
        upload_limit_note("eval.file", ".jsonl")
        if up is None:
            st.info(tr(zh="请上传查询文件。", en="Upload a queries file."))
            st.stop()
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / Path(up.name).name
            path.write_bytes(up.getvalue())
            queries = attempt(load_queries, path)
        queries_sig = hashlib.sha1(up.getvalue()).hexdigest()
    elif source == "golden":
        queries = attempt(load_queries, GOLDEN)
        queries_sig = "golden"
if source == "generate":
    with st.container(border=True):
        st.markdown("**" + tr(zh="从当前语料生成测试题", en="Test questions from this corpus") + "**")
        st.caption(tr(zh="从语料里抽一些片段，每个片段出一道它能回答的题；片段就是标准答案。再加几道语料答不了的“近似题”，"
                      "用来看拒答。每道题都记着出处和每项检查的结论。",
                      en="A sample of chunks, one question each that its chunk answers; the chunk is the gold. A few near "
                      "misses that the corpus cannot answer are added for the abstention figures. Every question keeps "
                      "where it came from and every check's verdict."))
        generated = testset_panel.render(index, chat)
    if not generated:
        if generated is not None:
            st.warning(tr(zh="没有保留下来的题：编辑后重新检查，或者多选一些片段再生成。",
                          en="No question was kept: edit and check again, or generate from more chunks."))
        st.stop()
    queries = generated
    queries_sig = testset_panel.signature(queries)
with c2:
    offered = list(STRATEGIES) + (list(REWRITE_STRATEGIES) if chat is not None else [])
    ss["eval.strategies"] = [s for s in ss["eval.strategies"] if s in offered]
    strategies = st.multiselect(tr(zh="策略", en="Strategies"), offered, key="eval.strategies",
                                help=tr(zh="HyDE 和多查询由语言模型改写问题：", en="HyDE and multi-query rewrite the question with ")
                                + (loc(chat.label) if chat is not None else tr(zh="没有可用的语言模型", en="no language model available")))
    settings.clamp("eval.limit", 0, len(queries))
    st.number_input(tr(zh="只用前 N 个问题（0 = 全部）", en="Only the first N queries (0 = all)"), 0, len(queries),
                    key="eval.limit")
    st.toggle(tr(zh="同时生成回答并审计引用（慢）", en="Also answer and audit citations (slow)"), key="eval.answers",
              help=tr(zh="每个策略对每个问题生成一次回答", en="generates one answer per query per strategy"))
    if ss["eval.answers"]:
        st.multiselect(tr(zh="引用方式（并排比较）", en="Citation modes (side by side)"), list(CITE_MODES), key="eval.cites",
                       help=tr(zh="约束：语法只允许资料里的 ref；只对本地模型生效。",
                               en="constrained: a grammar allows only context refs; applies to the local model."))

limit = int(ss["eval.limit"] or 0)
queries = queries[:limit] if limit else queries
answerable = [q for q in queries if q.gold_ids]
doc_ids = {c.doc_id for c in index.chunks}
gold = {g for q in answerable for g in q.gold_ids}
if gold and not gold & doc_ids:
    st.warning(tr(zh="这些问题的 gold_ids 一个都不在当前语料里：指标会全是 0。内置黄金集对应内置知识库。",
                  en="None of these queries' gold_ids is in the current corpus, so every metric will be 0. The bundled "
                  "golden set belongs to the bundled knowledge base."))
st.caption(tr(zh=f"{len(queries)} 个问题，其中 {len(answerable)} 个有 gold_ids（无答案的问题只用于回答层面的拒答率）。",
              en=f"{len(queries)} queries, {len(answerable)} with gold_ids (unanswerable ones only count for the "
              "answer-level abstention rate)."))

s = settings.ask_settings()
rr = attempt(choices.reranker_choice) if "hybrid+rerank" in strategies else None
answer_gen = gen if ss["eval.answers"] else None  # the strategies' answers; the judge panel always answers
cites = tuple(ss["eval.cites"]) or ("free",)
# Everything the figures depend on: the whole AskSettings (weights, top_k, gate, compression, fill-in, prompt
# style, answer language ...), so a changed setting marks the shown figures as the last run's.
run_key = (ss["index.key"], queries_sig, limit, tuple(strategies), s, rr.label if rr else None,
           answer_gen.label if answer_gen else None, cites if answer_gen else None)
if st.button(tr(zh="运行评估", en="Run the evaluation"), type="primary", icon=":material/play_arrow:", key="eval.run", disabled=not strategies):
    bar = st.progress(0.0, text=tr(zh="评估中…", en="Evaluating…"))

    def progress(done: int, total: int, name: str) -> None:
        bar.progress(min(1.0, done / total) if total else 1.0, text=f"{name}: {done}/{total}")

    reports = attempt(run_in_worker, lambda control, emit: compare(
        RunContext.chosen(index, s, answer_gen, rr, chat=chat, control=control),
        queries, strategies, cites=cites, progress=lambda d, n, name: emit("progress", (d, n, name))),
        lambda kind, p: progress(*p))
    bar.empty()
    ss["eval.result"] = (run_key, reports)

with st.expander(tr(zh="LLM 评委：给回答打分（忠实度、相关性、上下文精确率与召回率）",
                   en="LLM judge: answers scored for faithfulness, relevancy, context precision and recall"),
                icon=":material/gavel:", expanded=bool(ss.get("judge.result"))):
    judge_panel.render(index, gen, chat)

stored = ss.get("eval.result")
if not stored:
    st.info(tr(zh="选择策略后点击“运行评估”。", en="Pick strategies and press Run."))
    st.stop()
key, reports = stored
if key != run_key:
    st.caption(":material/warning: " + tr(zh="下面是上一次运行的结果；设置已改变，重新运行以更新。",
                         en="These are the last run's results; the settings changed since, run again to update."))

strategies_table(reports)
fusion_wins(reports)
drill_down(reports, s.depth)

"""The evaluation page's LLM-judge panel: answer a few questions with a strategy, then let the model judge
them (faithfulness, answer relevancy, context precision, context recall), with every verdict visible.

Not handled here: the judge's prompts and formulas (rag/evaluate/judge.py), the strategies (rag/loops/).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import streamlit as st

from rag.backends import JUDGE_MODELS, choose_judge
from rag.evaluate.evaluation import fixed_sample, load_queries
from rag.evaluate.judge import METRICS, audit_agreement
from rag.loops.compare import compare_loops
from rag.loops.registry import LOOPS
from rag.run import RunContext

from . import choices, models, settings
from .i18n import tr
from .render import attempt, html_table, md_escape, plain_text
from .timeline import judge_checks_frame
from .worker import run_in_worker

DATA = Path(__file__).resolve().parent.parent / "data"
SETS = {"multihop": DATA / "multihop.jsonl", "golden": DATA / "golden.jsonl"}


def render(index, gen, chat) -> None:
    ss = st.session_state
    st.subheader(tr(zh="LLM 评委 LLM-judged answers", en="LLM-judged answers"))
    st.caption(tr(
        zh="评委是随附的本地模型（或左侧配置的接口）。忠实度：回答每句话能否在资料中找到依据；答案相关性：评委根据回答反推问题，"
        "与原问题的余弦相似度；上下文精确率：有用的资料是否排在前面；上下文召回率：参考答案的每句话能否在资料中找到。"
        "每个判定都附有提示词和模型的原始输出。",
        en="The judge is the bundled local model (or the endpoint set in the sidebar). Faithfulness: is each answer "
        "sentence supported by the contexts; answer relevancy: the judge writes the question the answer answers, "
        "cosine to the real one; context precision: are the useful contexts ranked first; context recall: is each "
        "reference sentence found in the contexts. Every verdict comes with its prompt and the model's raw output."))
    if chat is None:
        st.info(tr(zh="评委需要语言模型：安装随附的本地模型，或在左侧填写接口。",
                   en="The judge needs a language model: install the bundled local model, or fill in the sidebar."))
        return
    local = chat is not None and chat.name == "local"  # an endpoint judges itself; the bundled models can be picked
    c1, c2, c3, c4 = st.columns([2, 2, 1, 1])
    c1.radio(tr(zh="问题集", en="Questions"), list(SETS), key="judge.source", horizontal=True,
             format_func={"multihop": tr(zh="多跳 data/multihop.jsonl", en="multi-hop data/multihop.jsonl"),
                          "golden": tr(zh="黄金集 data/golden.jsonl", en="golden data/golden.jsonl")}.__getitem__)
    c2.radio(tr(zh="回答方式", en="Answer loop"), list(LOOPS), key="judge.strategy", horizontal=True)
    c3.number_input(tr(zh="问题数", en="questions"), 1, 20, key="judge.n")
    if local:
        c4.selectbox(tr(zh="评委模型", en="judge model"), list(JUDGE_MODELS), key="judge.model",
                     help=tr(zh="auto：装了 1.5B 就用 1.5B。0.5B 几乎对每句话都说“否”（见 docs/loops.md）。",
                             en="auto: the 1.5B where installed. The 0.5B says no to nearly every claim (see docs/loops.md)."))
    run = c4.button(tr(zh="评审", en="Judge"), icon=":material/gavel:", key="judge.run")
    queries = fixed_sample(attempt(load_queries, SETS[ss["judge.source"]]), int(ss["judge.n"]))
    key = (ss["index.key"], ss["judge.source"], ss["judge.strategy"], int(ss["judge.n"]),
           choices.generator_identity(ss), settings.ask_settings(), ss["judge.model"] if local else None)
    if run:
        ss["judge.result"] = (key, _judge(index, gen, chat, queries, local))
    stored = ss.get("judge.result")
    if not stored:
        st.caption(tr(zh="本地小模型上每题约一到两分钟。", en="About one to two minutes a question on the bundled small model."))
        return
    stored_key, results = stored
    if stored_key != key:
        st.caption(":material/warning: " + tr(zh="下面是上一次评审的结果；设置已改变。", en="These are the last judging run's results; "
                                              "the settings changed since."))
    _results(results[0])


def _judge(index, gen, chat, queries, local: bool):
    """Answer and judge `queries` with the chosen loop in the worker, a progress bar meanwhile."""
    ss = st.session_state
    bar = st.progress(0.0, text=tr(zh="回答并评审中…", en="Answering and judging…"))

    def progress(done: int, total: int, name: str) -> None:
        bar.progress(done / total, text=f"{name}: {done}/{total}")

    rr = attempt(choices.reranker_choice) if ss["rerank.enabled"] else None
    judge = attempt(choose_judge, "local", ss["judge.model"], local_chat=models.local_chat) if local else None
    if judge is not None and judge.reason:
        st.caption(":material/info: " + md_escape(judge.reason))
    loop, ask = ss["judge.strategy"], settings.ask_settings()  # the worker must not touch session_state
    results = attempt(run_in_worker, lambda control, emit: compare_loops(
        queries, [loop], RunContext.chosen(index, ask, gen, rr, chat=chat, control=control),
        judge=judge.backend if judge else chat, progress=lambda d, n, name: emit("progress", (d, n, name))),
        lambda kind, p: progress(*p))
    bar.empty()
    return results


def _results(sr) -> None:
    """The loop's mean scores, the judge against the audit, and one question's verdicts with their prompts."""
    means = sr.means
    judged_by = next((r.judged.judge for r in sr.runs if r.judged is not None), "")
    st.caption(tr(zh="评委：", en="judge: ") + md_escape(judged_by))
    st.html(html_table(pd.DataFrame([{tr(zh="回答方式", en="loop"): sr.name,
                                      **{m: f"{means[m]:.3f}" if m in means else "—" for m in METRICS},
                                      tr(zh="事实命中", en="facts found"): f"{means['facts found']:.3f}"
                                      if "facts found" in means else "—"}])))
    _agreement([r.judged for r in sr.runs if r.judged is not None])
    ids = [r.query.query_id for r in sr.runs]
    qid = st.selectbox(tr(zh="查看一个问题的评审", en="Inspect one question's verdicts"), ids, key="judge.query",
                       format_func={r.query.query_id: f"{r.query.query_id} · {r.query.query}" for r in sr.runs}.__getitem__)
    run_ = next(r for r in sr.runs if r.query.query_id == qid)
    st.caption(tr(zh="回答", en="answer"))
    plain_text(run_.loop.answer or "—", quote=True)
    if run_.judged is not None:
        _verdicts(run_.judged)


def _agreement(judged: list) -> None:
    """The judge's faithfulness verdicts against the citation audit's labels, one row per label (nothing if none)."""
    table = audit_agreement(judged)
    if table:
        st.caption(tr(zh="评委的忠实度判定与引用审计的标签对照：", en="The judge's faithfulness verdicts against the citation "
                      "audit's labels:"))
        st.html(html_table(pd.DataFrame([{tr(zh="审计标签", en="audit label"): label, tr(zh="评委：有依据", en="judge: supported"): row["yes"],
                                          tr(zh="评委：无依据", en="judge: not supported"): row["no"]}
                                         for label, row in sorted(table.items())])))


def _verdicts(j) -> None:
    """One answer's scores, the judge's generated question and reference, every check and the prompts."""
    st.html(html_table(pd.DataFrame([{m: "—" if j.scores.get(m) is None else f"{j.scores[m]:.3f}" for m in METRICS}])))
    if j.generated_question:
        st.caption(tr(zh="评委反推的问题（答案相关性）：", en="The question the judge read off the answer (relevancy): ")
                   + md_escape(j.generated_question))
    if j.reference_source:
        st.caption(tr(zh="参考答案来源：", en="reference: ") + md_escape(j.reference_source))
    st.html(html_table(judge_checks_frame(j)))
    with st.expander(tr(zh="评委的提示词", en="The judge's prompts")):
        for c in j.checks:
            if c.verdict is not None:
                st.caption(md_escape(f"{c.metric}: {c.item[:80]}"))
                st.json(c.verdict.messages, expanded=False)
        if j.question_prompt:
            st.caption("answer relevancy")
            st.json(j.question_prompt, expanded=False)

"""A loop's steps drawn as a timeline: each step's kind, thought, query, hits, verdicts and prompt.

Every model-written or corpus string goes through escaping (plain_text, html_table, md_escape): a thought,
a query or a chunk title is shown as text, never read as Markdown or HTML.
Not handled here: running the loop (rag/loops/), the page around it (app_pages/6_loops.py).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from rag.evaluate.judge import JudgeResult
from rag.loops.steps import Step

from .audit_view import support_table_html
from .i18n import loc, tr
from .render import html_table, md_escape, plain_text

ICONS = {"decide": ":material/help:", "retrieve": ":material/search:", "search": ":material/search:",
         "grade": ":material/rule:", "draft": ":material/edit_note:", "check": ":material/fact_check:",
         "rewrite": ":material/edit:", "read": ":material/menu_book:", "repeat": ":material/repeat:",
         "answer": ":material/chat:", "link": ":material/link:", "walk": ":material/hub:",
         "map": ":material/grid_view:"}


def kind_label(kind: str) -> str:
    return {"decide": tr(zh="决定是否检索", en="decide: retrieve?"), "retrieve": tr(zh="检索", en="retrieve"),
            "search": tr(zh="检索（工具调用）", en="search (tool call)"), "grade": tr(zh="给块打分", en="grade the chunks"),
            "draft": tr(zh="起草回答", en="draft the answer"), "check": tr(zh="核对支撑", en="check support"),
            "rewrite": tr(zh="改写查询", en="rewrite the query"), "read": tr(zh="读全文", en="read a chunk"),
            "repeat": tr(zh="重复的检索", en="repeated search"), "answer": tr(zh="回答", en="answer"),
            "link": tr(zh="链接实体", en="link entities"), "walk": tr(zh="在图上走", en="walk the graph"),
            "map": tr(zh="社区要点（map）", en="community point (map)")}.get(kind, kind)


def purpose(step: Step) -> str:
    """What a Self-RAG or plain step is for, in the UI's language (the agent's thoughts are its own words)."""
    zh = {"decide": "这条消息需要知识库里的事实吗？", "retrieve": "在知识库中检索。", "grade": "这些块里哪些含有回答问题所需的信息？",
          "draft": "根据保留下来的块起草回答。", "check": "回答的每句话都有保留的块支撑吗？", "rewrite": "改写查询，再检索一次。",
          "answer": "用模型自己的知识回答。", "link": "在图中找到问题里的实体。", "walk": "从这些实体出发走两跳，记下路上的关系。"}
    return tr(zh=zh.get(step.kind, step.thought), en=step.thought)


def verdicts_frame(verdicts) -> pd.DataFrame:
    return pd.DataFrame([{tr(zh="问了什么", en="asked"): loc(v.asked), tr(zh="判定", en="verdict"): tr(zh="✓ 是", en="✓ yes") if v.answer else tr(zh="✗ 否", en="✗ no"),
                          "P(yes)": "—" if v.p_yes is None else f"{v.p_yes:.3f}",
                          tr(zh="模型原始输出", en="raw verdict"): v.raw, tr(zh="读法", en="read as"): loc(v.how)} for v in verdicts])


def step_summary(step: Step) -> str:
    """The one line a progress box shows while the loop runs (escaped: it may quote the model)."""
    return md_escape(f"{step.n}. {kind_label(step.kind)} · {loc(step.decision)} · {step.seconds:.1f} s")


def render_step(step: Step, model_thoughts: bool = False) -> None:
    """One step in a bordered box; `model_thoughts`: the thought is the model's (the agent), shown as written."""
    with st.container(border=True):
        st.markdown(f"{ICONS.get(step.kind, '')} **{step.n} · {md_escape(kind_label(step.kind))}** · "
                    f"{step.seconds:.1f} s")
        if step.thought:
            st.caption(tr(zh="模型的想法 thought", en="the model's thought") if model_thoughts else tr(zh="这一步做什么", en="what this step is for"))
            plain_text(step.thought if model_thoughts else purpose(step), quote=True)
        if step.query:
            st.caption(tr(zh="查询 query", en="query"))
            plain_text(step.query)
        if step.hits:
            st.html(html_table(pd.DataFrame([{"ref": h.ref, tr(zh="分数", en="score"): f"{h.score:.4f}",
                                              tr(zh="标题", en="title"): h.title, tr(zh="开头", en="start"): h.snippet}
                                             for h in step.hits])))
        if step.supports:
            st.html(support_table_html([(x.sentence, x.label, "", x) for x in step.supports]))
        if step.verdicts:
            st.html(html_table(verdicts_frame(step.verdicts)))
        st.caption(tr(zh="决定 decision", en="decision"))
        plain_text(loc(step.decision))
        if step.prompt or step.verdicts or step.raw:
            with st.expander(tr(zh="提示词与模型原始输出", en="Prompts and the model's raw output")):
                model_io(step)


def model_io(step: Step) -> None:
    """What the model wrote in this step, the prompt it read, and each verdict's own messages."""
    if step.raw:
        st.caption(tr(zh="模型写的", en="what the model wrote"))
        st.code(step.raw, language="json" if step.raw.lstrip().startswith("{") else None)
    if step.prompt:
        st.caption(tr(zh="这一步的提示词", en="this step's prompt"))
        st.json(step.prompt, expanded=False)
    for i, v in enumerate(step.verdicts, 1):
        st.caption(f"{tr(zh='判定', en='verdict')} {i}: {md_escape(loc(v.asked))}")
        st.json(v.messages, expanded=False)


def judge_checks_frame(result: JudgeResult) -> pd.DataFrame:
    rows = []
    for c in result.checks:
        v = c.verdict
        rows.append({tr(zh="指标", en="metric"): c.metric, tr(zh="评的是", en="item"): c.item,
                     tr(zh="判定", en="verdict"): "—" if v is None else ("✓ yes" if v.answer else "✗ no"),
                     tr(zh="模型原始输出", en="raw verdict"): "—" if v is None else v.raw,
                     tr(zh="引用审计", en="citation audit"): c.audit_label or "—"})
    return pd.DataFrame(rows)

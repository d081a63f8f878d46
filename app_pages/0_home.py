"""Home: the lessons first (a newcomer starts there), then the pipeline drawn as stages (each links to its page)
and what runs at each stage right now."""

import pandas as pd
import streamlit as st

from rag.ingest.chunking import auto_method
from ui import choices, indexing, lesson, models, settings
from ui.i18n import loc, plural, t, tr
from ui.render import attempt, choice_line, md_escape, params_text

ss = st.session_state
st.title(":material/search: " + t("app.title"))
st.caption(tr(
    zh="每一页只讲一个阶段：同一个问题从上传、分块、向量、检索、重排一路走到回答和引用审计。左侧的问题在所有页面共用。",
    en="Each page shows one stage: the same question travels from upload and chunking through embeddings, retrieval "
    "and reranking to the answer and its citation audit. The question in the sidebar is shared by every page.",
))

st.subheader(tr(zh="从一课开始 Lessons", en="Start with a lesson"))
st.caption(tr(zh="课程带你一页一页走：每一步告诉你看哪里（从这次运行里实时算出），再出一道按这次运行评分的题。",
              en="A lesson walks you from page to page: each step says where to look (computed from this very run) and "
              "asks a question graded against it."))
lesson.home_panel()

STAGES = [
    ("app_pages/1_upload.py", ":material/description:", "page.upload", "rag/ingest/documents.py · rag/ingest/chunking.py",
     tr(zh="上传文件、切块、看重叠与长度分布", en="load files, cut chunks, see overlaps and lengths")),
    ("app_pages/2_embeddings.py", ":material/scatter_plot:", "page.embeddings", "rag/models/embedding.py · rag/index/projection.py",
     tr(zh="向量空间的 PCA 投影和它的失真", en="PCA of the vector space, and how it distorts")),
    ("app_pages/3_retrieval.py", ":material/manage_search:", "page.retrieval", "rag/search/retrieval.py · rag/index/bm25.py · rag/search/fusion.py",
     tr(zh="向量、BM25、RRF 三个排名并排对比", en="dense, BM25 and RRF rankings side by side")),
    ("app_pages/3b_graph.py", ":material/hub:", "page.graph", "rag/graph/extraction.py · rag/graph/graph.py · rag/graph/local_search.py",
     tr(zh="实体和关系连成的图、社区、问题的两跳子图", en="the entity graph, its communities, the question's two-hop subgraph")),
    ("app_pages/4_rerank.py", ":material/swap_vert:", "page.rerank", "rag/search/rerank.py",
     tr(zh="重排前后谁上谁下", en="who moved up or down after reranking")),
    ("app_pages/5_answer.py", ":material/forum:", "page.answer", "rag/answer/prompt.py · rag/answer/generation.py · rag/audit/citations.py",
     tr(zh="流式回答、引用标记与审计、确切的提示词", en="streamed answer, citations and their audit, the exact prompt")),
    ("app_pages/6_loops.py", ":material/account_tree:", "page.loops", "rag/loops/self_rag.py · rag/loops/agent.py",
     tr(zh="Self-RAG 与智能体：每个决定的时间线", en="Self-RAG and the agent: every decision on a timeline")),
    ("app_pages/7_evaluation.py", ":material/leaderboard:", "page.evaluation", "rag/evaluate/evaluation.py · rag/evaluate/strategies.py",
     tr(zh="在黄金集上比较检索策略；LLM 评委给回答打分", en="compare retrieval strategies on a golden set; an LLM judges answers")),
]

st.subheader(tr(zh="流水线 Pipeline", en="Pipeline"))
# A page link's label is one line cut with "…" by default; in a card it may wrap instead.
st.html("<style>.st-key-home-stages [data-testid='stPageLink-NavLink'] span, "
        ".st-key-home-stages [data-testid='stPageLink-NavLink'] p "
        "{white-space: normal; overflow: visible; text-overflow: clip;}</style>")
PER_ROW = 3
stages_box = st.container(key="home-stages")
for row_start in range(0, len(STAGES), PER_ROW):
    row = STAGES[row_start : row_start + PER_ROW]
    cols = stages_box.columns([6, 1] * (len(row) - 1) + [6], vertical_alignment="center")
    for j, (path, icon, key, files, what) in enumerate(row):
        n = row_start + j + 1
        with cols[2 * j].container(border=True, height="stretch"):
            st.page_link(path, label=f"{n}. {t(key)}", icon=icon, width="stretch")
            st.write(what)
            st.caption(files)
        if j < len(row) - 1:
            cols[2 * j + 1].markdown("<div style='text-align:center;font-size:1.6em;color:#64748b'>→</div>",
                                     unsafe_allow_html=True)

st.subheader(tr(zh="当前设置 Current settings", en="Current settings"))
q = settings.question()
st.markdown(f"**{t('question')}:**")
st.text(q or "—")  # the user's own words (and a link's), never rendered as Markdown
method, params = ss["applied.chunk"]


def _auto_chose(method: str) -> str:
    """What `auto` chose for this corpus's documents ("auto（document）"), as the upload page says per file."""
    if method != "auto":
        return ""
    chosen = sorted({auto_method(d)[0] for d in ss["corpus.docs"]})
    return tr(zh=f"（{'、'.join(chosen)}）", en=f" ({', '.join(chosen)})") if chosen else ""



chunks = attempt(indexing.chunk_set, ss, method, params)
embedder = attempt(models.embedder, ss["applied.embedder"])
rows = [
    choice_line(t("corpus"), f"{loc(ss['corpus.name'])}: {plural(len(ss['corpus.docs']), one='document', many='documents', zh='篇文档')}",
                None),
    choice_line(t("chunker"), f"{method}{_auto_chose(method)} {params_text(params)} → "
                              f"{plural(len(chunks.chunks), one='chunk', many='chunks', zh='块')}", None),
    choice_line(t("embedder"), embedder.label, False),
    choice_line("BM25", (tr(zh="jieba 分词", en="jieba tokens") if ss["index.tokenizer"] == "jieba"
                         else tr(zh="只按空格切词", en="split on spaces only")) + tr(zh=" · 停用词 ", en=" · stop words ")
                + (tr(zh="开 on", en="on") if ss["index.stopwords"] else tr(zh="关 off（原始公式）", en="off (the plain formula)")),
                None),
]
rr = attempt(choices.reranker_choice, stop=False)
if rr is not None:
    enabled = ss["rerank.enabled"]
    rows.append(choice_line(t("reranker"), rr.label if enabled else tr(zh="关闭 off", en="off"),
                            rr.is_fallback and enabled, rr.reason if enabled else ""))
gen = attempt(choices.generator_choice, embedder, stop=False)
if gen is not None:
    choice = gen[0]
    rows.append(choice_line(t("generator"), choice.label, choice.is_fallback, choice.reason))
st.table(pd.DataFrame(rows).set_index(tr(zh="阶段 Stage", en="Stage")))

index = indexing.current_index()
if index is None:
    st.info(tr(zh="索引还没有按当前设置建立；打开任何需要它的页面时会自动建立（显示进度）。",
               en="The index for these settings is not built yet; any page that needs it builds it (with a progress bar)."))
else:
    info = ss.get("index.info", {})
    if info.get("kb"):
        st.success(tr(zh=f"索引已就绪：班级知识库 {md_escape(info['kb'])}，{len(index.chunks)} 块，{index.vectors.vectors.shape[1]} 维，"
                      "从它的存档读入（全班共用一份，没有重新计算向量）。",
                      en=f"Index ready: the class knowledge base {md_escape(info['kb'])}, {len(index.chunks)} chunks, "
                      f"{index.vectors.vectors.shape[1]} dimensions, read from its bundle (one copy for the class, "
                      "nothing re-embedded)."))
    else:
        st.success(tr(
            zh=f"索引已就绪：{len(index.chunks)} 块，{index.vectors.vectors.shape[1]} 维，用时 {info.get('seconds', 0):.1f} 秒。",
            en=f"Index ready: {len(index.chunks)} chunks, {index.vectors.vectors.shape[1]} dimensions, "
            f"built in {info.get('seconds', 0):.1f} s.",
        ))

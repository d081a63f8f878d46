"""Page 4 · Rerank: which reranker ran (a real cross-encoder, the learned ranker or the labelled offline fallback,
and why), the candidate list before and after with arrows for what moved, the scores, a bump chart that
follows each chunk across dense -> BM25 -> RRF -> rerank, and for the learned ranker why each chunk moved
(its features' contributions per candidate, and the model's feature importance)."""

import math

import pandas as pd
import streamlit as st

from rag.backends import reranker_names
from rag.search.ranktable import biggest_moves, movers, rank_paths
from rag.search.rerank import FALLBACK, LEARNED, LLM_JUDGE, TOKEN_MAXSIM
from ui import charts, choices, indexing, results, settings, why_view
from ui.i18n import loc, t, tr
from ui.render import attempt, md_escape, need_question, short

ss = st.session_state


def what_it_does(name: str) -> str:
    """The page's introduction for the reranker that runs (it once described a cross-encoder whatever ran)."""
    if name == LEARNED:
        return tr(zh="检索（双塔 bi-encoder）分别编码问题和文档，快但粗。这里的重排是学习型排序器：LightGBM LambdaMART 读检索已经算好的 "
                  "17 个信号（向量余弦、BM25、名次、最匹配句子的相似度、问题词覆盖……），在 cmrc2018 试验集上学会怎样组合它们；"
                  "问题和文档并没有在一个模型里交互，所以它不是交叉编码器。下面每个块都列出把它推上去或拉下来的特征。",
                  en="Retrieval (a bi-encoder) encodes question and documents separately: fast but coarse. The reranker here is "
                  "the learned ranker: LightGBM LambdaMART reads 17 signals retrieval already computed (dense cosine, BM25, "
                  "ranks, the best sentence's similarity, question-word coverage...) and learned on cmrc2018 trial how to "
                  "combine them; question and document never meet inside one model, so it is not a cross-encoder. Below, "
                  "each chunk lists the features that pushed it up or pulled it down.")
    if name == FALLBACK:
        return tr(zh="检索（双塔）分别编码问题和文档。这里的重排是离线替身：把每个候选切成句子，用同一个向量模型算问题和每句的余弦，"
                  "取最匹配的一句（再混入整块余弦）。它不是交叉编码器，只是更细地比较。",
                  en="Retrieval (a bi-encoder) encodes question and documents separately. The reranker here is the offline "
                  "stand-in: each candidate is cut into sentences, the same embedder scores the question against each, and "
                  "the best sentence counts (blended with the whole chunk's cosine). It is not a cross-encoder, only a finer "
                  "comparison.")
    if name == TOKEN_MAXSIM:
        return tr(zh="这里的重排是后期交互（ColBERT 式 MaxSim）：问题的每个词元向量找到候选里最像的词元向量，相似度相加。比整块一个向量细，"
                  "但问题和文档仍然是分别编码的，不是交叉编码器。",
                  en="The reranker here is late interaction (ColBERT-style MaxSim): each of the question's token vectors finds "
                  "its most similar token vector in the candidate, and the similarities add up. Finer than one vector per "
                  "chunk, but question and document are still encoded apart: not a cross-encoder.")
    if name == LLM_JUDGE:
        return tr(zh="这里的重排是让本地大模型逐个判断“这段资料能回答问题吗？”，读下一个词是“是”的概率。模型读到了问题和资料，"
                  "但它是生成模型，不是训练来打相关性分的交叉编码器，而且很慢：有时间预算。",
                  en="The reranker here asks the local language model, one candidate at a time, \"does this passage answer the "
                  "question?\" and reads the probability that its next word is yes. The model reads question and passage "
                  "together, but it is a generator, not a cross-encoder trained to score relevance, and it is slow: it has "
                  "a time budget.")
    return tr(zh="检索（双塔 bi-encoder）分别编码问题和文档，快但粗；交叉编码器把问题和每个候选放在一起打分，慢但准，所以只对前 "
              "recall_n 个候选做。",
              en="Retrieval (a bi-encoder) encodes question and documents separately: fast but coarse. A cross-encoder "
              "scores the question together with each candidate: slow but sharper, so it only sees the top recall_n "
              "candidates.")


st.header(":material/swap_vert: " + t("page.rerank"))
index = attempt(indexing.get_index)
q = settings.question()
need_question(q)

c1, c2, c3 = st.columns([1, 2, 1])
c1.toggle(tr(zh="启用重排", en="Rerank"), key="rerank.enabled")
c2.selectbox(t("reranker"), reranker_names(), key="rerank.name")
max_k = max(2, min(50, len(index.chunks)))
settings.clamp("rerank.top_k", 1, max_k)
c3.slider("top_k", 1, max_k, key="rerank.top_k", help=tr(zh="交给大模型的上下文数", en="contexts given to the generator"))

with st.spinner(tr(zh="加载重排模型…", en="Loading the reranker…")):
    rr = attempt(choices.reranker_choice)
st.caption(what_it_does(rr.backend.name))
if rr.is_fallback:
    st.warning(f"{t('fallback')}: **{md_escape(loc(rr.label))}**" + (f"\n\n{tr(zh='原因', en='Why')}: {md_escape(loc(rr.reason))}" if rr.reason else ""),
               icon=":material/warning:")
else:
    st.success(f"{t('real')}: **{md_escape(loc(rr.label))}**", icon=":material/check_circle:")

trace = results.current_trace(rr if ss["rerank.enabled"] else None)
res = attempt(results.retrieval_result, index, q, trace)
s = settings.ask_settings()
if not ss["rerank.enabled"]:
    st.info(tr(zh="重排已关闭：回答直接使用检索列表的前 top_k 个。下面仍然显示重排“会”怎样排序，供对比。",
               en="Reranking is off: the answer uses the retrieval list's top_k as is. Below is what the reranker "
               "would do, for comparison."))
result = attempt(results.rerank_result, index, q, rr, trace if ss["rerank.enabled"] else None)
# What the reranker really got: the mode's list, or, with multi-query, the fused list of every variant.
multi = trace is not None and bool(trace.per_query) and ss["rerank.enabled"]
rerank_input = trace.candidates if multi else res.ranked()[: s.recall_n]
input_name = tr(zh="多查询 RRF", en="multi-query RRF") if multi else {"dense": t("dense"), "bm25": t("bm25"),
                                                               "hybrid": t("hybrid")}[s.mode]
st.caption(tr(zh=f"输入：{input_name} 列表的前 {len(result.moves)} 个候选 → 输出 top {s.top_k}",
              en=f"Input: the top {len(result.moves)} candidates of the {input_name} list → output: top {s.top_k}")
           + (tr(zh=f"（{len(trace.per_query)} 个查询的混合检索列表再做一次 RRF）",
                 en=f" ({len(trace.per_query)} queries' hybrid lists fused again with RRF)") if multi else ""))


def arrow(before: int, after: int | None) -> str:
    if after is None:
        return "✗ " + tr(zh="落选", en="dropped")
    if after < before:
        return f"▲ {before - after}"
    if after > before:
        return f"▼ {after - before}"
    return "="


rows = sorted(result.moves, key=lambda m: (m.after is None, m.after or 0, m.before))
why = {w.chunk_id: w for w in result.why}  # the learned ranker's reasons (empty for the others)
top_movers = biggest_moves(result.moves, 3)
REASONS = tr(zh="主要原因（特征贡献）", en="main reasons (feature contributions)")
frame = pd.DataFrame([
    {tr(zh="重排后", en="after"): "—" if m.after is None else str(m.after), tr(zh="重排前", en="before"): m.before,
     tr(zh="变化", en="move"): arrow(m.before, m.after), t("chunk"): m.chunk_id,
     # "—": a judge's time budget did not reach it (st.dataframe shows NaN as "None", whatever the Styler says)
     tr(zh="重排分数", en="rerank score"): "—" if math.isnan(m.score) else f"{m.score:.4f}",
     **({REASONS: why_view.reasons(why[m.chunk_id])} if why else {}),
     t("text"): short(index.chunk(m.chunk_id).text, 70)}
    for m in rows
])


def move_colour(v: str) -> str:
    if isinstance(v, str) and v.startswith("▲"):
        return "color: #15803d; font-weight: 600"
    if isinstance(v, str) and (v.startswith("▼") or v.startswith("✗")):
        return "color: #b91c1c"
    return ""


st.subheader(tr(zh="重排前后 Before / after", en="Before / after"))
if result.note and getattr(rr.backend, "name", "") == LLM_JUDGE:  # an LLM judge with a time budget: how far it got
    judged = sum(not math.isnan(m.score) for m in result.moves)
    st.info(tr(zh=f"大模型评审在时间预算内评了 {judged} / {len(result.moves)} 个候选；其余的（分数为空）按检索顺序排在后面。"
               "分数是 P(是) / (P(是) + P(否))。",
               en=f"The LLM judge scored {judged} of {len(result.moves)} candidates within its time budget; the rest "
               "(empty score) follow in retrieval order. The score is P(yes) / (P(yes) + P(no))."),
            icon=":material/timer:")
elif result.note:  # e.g. the learned ranker on another embedder's cosines
    st.info(md_escape(result.note), icon=":material/info:")


def mover_row(row: pd.Series) -> list[str]:
    return ["background-color: #fef9c3" if row[t("chunk")] in top_movers else ""] * len(row)


st.dataframe(
    frame.style.map(move_colour, subset=[tr(zh="变化", en="move")]).apply(mover_row, axis=1),
    hide_index=True, key="rerank.table",
    column_config={t("text"): st.column_config.TextColumn(width="large")},
)

st.subheader(tr(zh="名次变化 Bump chart", en="Bump chart"))
stages = {"dense": res.dense, "bm25": res.bm25, "input": rerank_input, "rerank": result.hits}
follow = movers({"input": rerank_input, "rerank": result.hits}, s.top_k)
paths = rank_paths(stages, follow)
labels = [t("dense"), t("bm25"), input_name, t("rerank")]
st.plotly_chart(charts.bump_chart(paths, list(stages), labels, highlight=[h.chunk_id for h in result.hits]),
                key="rerank.bump")
st.caption(tr(
    zh=f"跟踪重排输入（{input_name}）和重排各自前 {s.top_k} 名的块；断开的线表示该块不在那个列表的前 {res.depth} 名里。粗线是最终交给大模型的块。",
    en=f"Following the chunks in the top {s.top_k} of the rerank input ({input_name}) or of the rerank; a broken line "
    f"means the chunk is not in "
    f"that list's top {res.depth}. Thick lines are the chunks that go to the generator.",
))

if why:
    st.subheader(tr(zh="为什么这样排", en="Why each chunk moved"))
    st.caption(tr(
        zh="学习型排序器（LightGBM LambdaMART）的分数 = 基线 + 每个特征的贡献（LightGBM 的 pred_contrib，即 TreeSHAP 值，"
        "相加正好等于分数）。正的贡献把块往上推，负的往下拉。黄色行是名次变化最大的块。",
        en="The learned ranker's (LightGBM LambdaMART) score = bias + each feature's contribution (LightGBM's pred_contrib, "
        "TreeSHAP values, which add up to the score exactly). A positive contribution pushes a chunk up, a negative one "
        "pulls it down. Yellow rows are the chunks whose rank changed most."))
    ids = [m.chunk_id for m in rows]
    first = top_movers[0] if top_movers else ids[0]
    settings.clamp_choice("rerank.why_chunk", ids, first)
    arrows = {m.chunk_id: arrow(m.before, m.after) for m in rows}
    pick = st.selectbox(t("chunk"), ids, key="rerank.why_chunk", format_func=lambda c: f"{c} · {arrows[c]}")
    left, right = st.columns([1, 1])
    left.plotly_chart(charts.contribution_chart(why[pick]), key="rerank.why_chart")
    right.dataframe(why_view.contribution_frame(why[pick]), hide_index=True, key="rerank.why_table")
    with st.expander(tr(zh="模型整体：特征重要性", en="The model as a whole: feature importance")):
        st.plotly_chart(charts.importance_chart(rr.backend.importance()), key="rerank.importance")
        st.caption(tr(
            zh="每个特征在所有树的分裂中带来的增益（目标函数的改进）占总增益的比例。每个内置向量模型一个排序模型；训练数据、种子和特征见 "
            "`data/reranker/<向量模型>/recipe.json`；训练脚本 `scripts/train_reranker.py`。",
            en="Each feature's share of the total gain (improvement of the objective) of all the trees' splits. One model per bundled embedder; training "
            "data, seed and features: `data/reranker/<embedder>/recipe.json`; the training script: `scripts/train_reranker.py`."))

"""Page 2 · Embeddings: PCA of every chunk vector in 2-D or 3-D, the query (and its rewrites) as marked
points, the true top-k ringed, the explained variance, and a flag when the picture's nearest neighbours
disagree with the true cosine top-k."""

import pandas as pd
import streamlit as st

from rag.index.projection import embedding_map
from rag.models.script import has_traditional
from rag.search.rewrite import make_rewrites, query_points
from ui import charts, choices, indexing, memo, results, settings
from ui.i18n import loc, t, tr
from ui.render import attempt, md_escape, need_question, short
from ui.worker import run_in_worker

ss = st.session_state
st.header(":material/scatter_plot: " + t("page.embeddings"))
st.caption(tr(
    zh="每个点是一个块的向量，用 PCA 从几百维压到 2 维或 3 维。查询也被放进同一张图。注意：压缩会丢信息，图上看起来近的点不一定真的近。",
    en="Each point is one chunk's vector, squeezed from hundreds of dimensions to 2 or 3 by PCA. The query lands in "
    "the same picture. Beware: squeezing loses information, so points that look close may not be close.",
))
index = attempt(indexing.get_index)
q = settings.question()
need_question(q)
if has_traditional(q):
    st.caption(tr(zh="问题里有繁体字：向量模型按简体读它（OpenCC 繁→简，和 BM25 的切词一样），所以它和简体写法得到同一个向量。",
                  en="The question has traditional Chinese characters: the embedder reads them as simplified (OpenCC, "
                  "traditional to simplified, as BM25's tokenizer does), so it gets the same vector as the question "
                  "written in simplified."))

if len(index.chunks) < 4:
    st.info(tr(zh="至少需要 4 个块才能画出这张图；换一个更小的块大小或上传更多文件。",
               en="The picture needs at least 4 chunks; use a smaller chunk size or upload more files."))
    st.stop()
c1, c2, c3 = st.columns([1, 1, 2])
dims = c1.radio(tr(zh="维度", en="Dimensions"), ["2D", "3D"], key="embeddings.dims", horizontal=True)
max_k = min(20, len(index.chunks) - 1)
settings.clamp("embeddings.k", 1, max_k)
k = c2.slider("top-k", 1, max_k, key="embeddings.k")
group_by = c3.radio(tr(zh="颜色 Colour by", en="Colour by"), ["section", "document"], horizontal=True, key="embeddings.group",
                    format_func={"section": tr(zh="分区 section", en="section"),
                                 "document": tr(zh="文档 document", en="document")}.__getitem__)

# Rewrites: from the answer page's trace for this question, or generated here on request.
rr = choices.reranker_choice() if ss["rerank.enabled"] else None
trace = results.current_trace(rr)
gen_choice = attempt(choices.generator_choice, index.embedder, stop=False)  # only the rewrite buttons need it
chat = gen_choice[1] if gen_choice else None
rewrites = dict(trace.rewrites) if trace is not None else {}
with st.expander(tr(zh="查询改写（HyDE / 多查询）", en="Query rewrites (HyDE / multi-query)"),
                 expanded=bool(rewrites)):
    st.caption(tr(zh="改写由语言模型写出：", en="A language model writes the rewrites: ")
               + (loc(chat.label) if chat is not None else tr(zh="现在没有可用的（安装随附的本地模型，或在左侧设置接口）",
                                                         en="none is available now (install the bundled local model, or set an endpoint in the sidebar)"))
               + tr(zh="。生成后它们作为单独的点出现在图中。", en=". Once made, they appear as their own points."))
    b1, b2 = st.columns(2)
    for col, kind in ((b1, "hyde"), (b2, "multi-query")):
        if col.button(f"{tr(zh='生成', en='Generate')} {kind}", key=f"embeddings.make_{kind}", disabled=chat is None,
                      help=None if chat else tr(zh="没有可用的语言模型", en="no language model available")):
            made = attempt(run_in_worker, lambda control, emit, kind=kind: make_rewrites(
                kind, q, chat, int(ss["answer.n_queries"]), control), stop=False)
            if made is not None:
                memo.remember("rewrites", (q, kind, choices.generator_identity(ss)), made)
    for kind in ("hyde", "multi-query"):
        made = memo.peek("rewrites", (q, kind, choices.generator_identity(ss)))
        if made:
            rewrites.update(made)
    if rewrites.get("hyde"):
        st.markdown("**HyDE:** " + short(rewrites["hyde"], 300))
    for i, variant in enumerate(rewrites.get("queries", [])[1:], 2):
        st.markdown(f"**q{i}:** {md_escape(variant)}")

queries, texts = query_points(index, q, rewrites)

n = 3 if dims == "3D" else 2
key = (ss["index.key"], n, k, tuple(texts.items()))
emap = attempt(memo.memo, "pca", key, lambda: embedding_map(index.vectors.vectors, queries, k, n))
ss["embeddings.map"] = emap  # this run's map, for a lesson's notice (ui/lesson.py)
chunks = index.chunks
groups = [
    (c.metadata.get("section") or c.doc_id) if group_by == "section" else c.doc_id for c in chunks
]
st.plotly_chart(
    charts.pca_figure(emap, [c.chunk_id for c in chunks], [c.text for c in chunks], groups, texts),
    key="embeddings.pca",
)

ev = emap.projection.explained_variance_ratio
cols = st.columns(n + 1)
for i in range(n):
    cols[i].metric(f"PC{i + 1}", f"{ev[i]:.1%}")
cols[n].metric(tr(zh="合计保留的方差", en="variance kept"), f"{ev.sum():.1%}")
st.caption(tr(
    zh=f"解释方差比：这张图只保留了原始 {index.vectors.vectors.shape[1]} 维空间中 {ev.sum():.1%} 的方差，其余都看不见。",
    en=f"Explained variance ratio: the picture keeps {ev.sum():.1%} of the variance of the original "
    f"{index.vectors.vectors.shape[1]}-dimensional space; the rest is invisible here.",
))

chk = emap.check
ids = [c.chunk_id for c in chunks]
if chk.distorted:
    st.warning(tr(
        zh=f"投影失真：图上离查询最近的 {chk.k} 个点里只有 {chk.k - len(chk.missing)} 个属于真正的余弦 top-{chk.k}。"
        f"真正近但图上不近：{', '.join(ids[i] for i in chk.missing)}；图上近但其实不在 top-k：{', '.join(ids[i] for i in chk.spurious)}。",
        en=f"Projection distortion: of the {chk.k} points nearest the query in the picture, only "
        f"{chk.k - len(chk.missing)} {'is' if chk.k - len(chk.missing) == 1 else 'are'} in the true cosine top-{chk.k}. Truly near but not in the picture: "
        f"{', '.join(ids[i] for i in chk.missing)}; near in the picture only: {', '.join(ids[i] for i in chk.spurious)}.",
    ))
else:
    st.success(tr(zh=f"图上最近的 {chk.k} 个点与真实余弦 top-{chk.k} 一致。",
                  en=f"The picture's {chk.k} nearest points match the true cosine top-{chk.k}."))
rows = [{
    t("rank"): r + 1,
    tr(zh="真实余弦 top-k", en="true cosine top-k"): ids[ti],
    "cosine": round(tc, 4),
    tr(zh="图上最近", en="nearest in the picture"): ids[pi] + ("" if pi in chk.true_top else " ✗"),
    tr(zh="它的余弦", en="its cosine"): round(pc, 4),
} for r, (ti, tc, pi, pc) in enumerate(zip(chk.true_top, chk.true_cos, chk.projected_top, chk.projected_cos))]
st.dataframe(pd.DataFrame(rows), hide_index=True, key="embeddings.table")

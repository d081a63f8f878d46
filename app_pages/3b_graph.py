"""Page 3b · Graph (GraphRAG): the corpus graph the extractions make, coloured by community, with the question's
entities and the two-hop walk from them highlighted; a click on an entity or an edge shows its source chunks;
any chunk's extraction prompt and the model's raw output beside what was kept; the merges, the communities
and their summaries, and what the graph cost to build."""

import pandas as pd
import streamlit as st

from rag.graph import extraction
from rag.graph.graph import relation_line
from rag.graph.local_search import local_search
from rag.graph.store import attach, unextracted
from rag.loops.community import BY, WHY, summaries
from ui import choices, graph_view, indexing, settings
from ui.i18n import lang, loc, t, tr
from ui.render import attempt, html_table, md_escape, plain_text, short
from ui.worker import run_in_worker


def co_occurs() -> str:
    """The stand-in's "no verb between them" relation, in the UI's language (stored as 同句; issue 65, item 14)."""
    return tr(zh="同句", en="same sentence")


def shown_line(r: dict, ref: str) -> str:
    """relation_line as the page shows it: the co-occurrence relation named in the UI's language."""
    return relation_line({**r, "relation": co_occurs()} if r["relation"] == extraction.CO_OCCURS else r, ref)

ss = st.session_state


def checked(r: dict) -> dict:
    """A relation's check against its source sentence, as a table cell (rag/graph/verify.py)."""
    mark = ("✓ " if r.get("verified") else "✗ ") + loc(r.get("why", ""))
    return {tr(zh="原句证实了吗", en="stated by its sentence?"): mark}


MERGE_RULES = {"spelling": "写法相同（规范化后）", "alias in the text": "原文里写成“X（Y）”", "embedding": "跨语言的嵌入最近邻"}


def graph_figures(graph) -> None:
    """What the graph holds (entities, stated relations, merges, communities, modularity, storage) and what it cost."""
    info = graph.summary()
    cols = st.columns(6)
    cols[0].metric(tr(zh="实体", en="entities"), info["entities"])
    cols[1].metric(tr(zh="关系（原句证实）", en="relations (stated)"), f"{info['relations']} ({info['verified_relations']})",
                   help=tr(zh="括号里是经原句证实、画成事实的关系数（rag/graph/verify.py）",
                           en="in brackets: the relations their source sentence states, drawn as facts (rag/graph/verify.py)"))
    cols[2].metric(tr(zh="合并", en="merges"), info["merges"])
    cols[3].metric(tr(zh="社区", en="communities"), info["communities"])
    cols[4].metric(tr(zh="模块度", en="modularity"), f"{info['modularity']:.3f}")
    cols[5].metric(tr(zh="存储", en="storage"), f"{info['storage_bytes'] / 1024:.0f} KB")
    per_chunk = [e.seconds for e in graph.extractions.values() if e.extractor != extraction.JIEBA_LABEL]
    st.caption(tr(
        zh=f"建图成本：模型抽取 {sum(per_chunk):.0f} 秒（{len(per_chunk)} 个块，平均每块 {sum(per_chunk) / max(1, len(per_chunk)):.1f} 秒，"
        f"随附的抽取不必再算），合并与社区发现 {info['build_seconds']:.2f} 秒；向量索引每块只需 1.5 KB。",
        en=f"Build cost: model extraction {sum(per_chunk):.0f} s ({len(per_chunk)} chunks, {sum(per_chunk) / max(1, len(per_chunk)):.1f} s "
        f"a chunk on average; shipped extractions are not recomputed), merging and communities {info['build_seconds']:.2f} s; "
        f"a dense vector takes 1.5 KB a chunk."))


def walk_view(graph, index) -> None:
    """The graph with the question's entities and their two-hop walk highlighted, and a picked entity's or edge's sources."""
    q = settings.question()
    walk = local_search(graph, q, index.embedder) if q else None
    highlight, walked = set(), set()
    if walk is not None:
        highlight = set(list(walk.reached)[:40]) | {x.entity for x in walk.linked}
        walked = {e for e in walk.edges if e[0] in highlight and e[1] in highlight}

    labels = {"co_occurs": co_occurs(), "edge": tr(zh="关系", en="relation"), "entity": tr(zh="实体", en="entity"), "community": tr(zh="社区", en="community"),
              "chunks": tr(zh="个块", en="chunks"), "checked": tr(zh="原句说了这条关系", en="its sentence states it"),
              "unchecked": tr(zh="未经原句证实", en="not stated by its sentence"),
              "caption": tr(zh="画出 {shown} / {total} 个实体（问题的子图和连接最多的）；实线：原句说了的关系；点线：原句没有证实的关系；点实体或边中间的菱形看来源",
                            en="{shown} of {total} entities drawn (the question's subgraph and the most connected); solid: a relation its "
                            "sentence states; dotted: one it does not; click an entity or an edge's diamond for its sources")}
    linked = tuple(x.entity for x in walk.linked) if walk is not None else ()
    event = st.plotly_chart(graph_view.figure(graph, highlight, walked, labels, linked), on_select="rerun",
                            selection_mode="points", key="graph.chart", width="stretch")
    subgraph(walk, q, index)
    entity_panel(graph, index, walk, graph_view.picked(event))


def subgraph(walk, q: str, index) -> None:
    """The question's linked entities, the relations walked and the chunks they lead to (a hint with no question)."""
    if walk is None:
        st.info(tr(zh="在侧栏输入问题，图上会高亮它的实体和两跳子图。", en="Type a question in the sidebar to highlight its entities and two-hop subgraph."))
        return
    st.subheader(tr(zh="问题的子图", en="The question's subgraph"))
    plain_text(q, quote=True)
    how = {True: tr(zh="出现在问题里", en="in the question"), False: tr(zh="按相似度", en="by similarity")}
    linked = [f"{x.entity}{tr(zh='（', en=' (')}{how[x.how == 'in the question']}"
              f"{'' if x.how == 'in the question' else f' {x.score:.3f}'}{tr(zh='）', en=')')}" for x in walk.linked]
    st.caption(tr(zh="链接到的实体：", en="Linked entities: ") + md_escape(tr(zh="、", en=", ").join(linked) or tr(zh="无", en="none")))
    if walk.relations:
        relations_table(index, walk.relations)
    st.html(html_table(pd.DataFrame([{"#": i, "ref": index.chunk(cid).ref, tr(zh="图分数", en="graph score"): f"{s:.3f}",
                                      tr(zh="开头", en="start"): short(index.chunk(cid).text, 70)}
                                     for i, (cid, s) in enumerate(walk.chunks[:8], 1)])))


def entity_panel(graph, index, walk, clicked) -> None:
    """A picked entity (or the edge clicked): its type and other names, the chunks that mention it, its relations."""
    names = sorted(graph.g.nodes, key=lambda n: (-graph.g.degree(n, weight="weight"), n))
    follow_click(graph, clicked)
    if not names:
        return
    if ss.get("graph.entity") not in graph.g:
        ss["graph.entity"] = walk.linked[0].entity if walk is not None and walk.linked else names[0]
    entity = st.selectbox(tr(zh="实体", en="Entity"), names, key="graph.entity")
    node = graph.g.nodes[entity]
    st.caption(tr(zh=f"类型 {node['type']} · 社区 {node.get('community')} · 其他写法：", en=f"type {node['type']} · community "
                  f"{node.get('community')} · also written: ") + md_escape(tr(zh="、", en=", ").join(node["aliases"]) or "—"))
    if clicked and clicked.startswith("edge:"):
        a, _, b = clicked[5:].partition("\t")
        st.markdown(f"**{tr(zh='边', en='Edge')}: {md_escape(a)} — {md_escape(b)}**")
        relations_table(index, graph.relations_between(a, b))
    with st.container(border=True):
        st.caption(tr(zh="提到它的块", en="Chunks that mention it"))
        for cid in graph.mentions.get(entity, [])[:6]:
            st.markdown(f"**[{md_escape(index.chunk(cid).ref)}]**")
            plain_text(index.chunk(cid).text)
    rels = [r for _, _, d in graph.g.edges(entity, data=True) for r in d.get("relations", [])]
    if rels:
        relations_table(index, rels[:20])


def follow_click(graph, clicked) -> None:
    """The chart keeps its selection across reruns: a click picks the entity once, and the picker stays free after it."""
    if clicked != ss.get("graph.last_click"):
        ss["graph.last_click"] = clicked
        if clicked and clicked.startswith("entity:") and clicked[7:] in graph.g:
            ss["graph.entity"] = clicked[7:]


def relations_table(index, relations) -> None:
    """Relations as a table: the relation with its chunk's ref, whether its sentence states it, the sentence."""
    st.html(html_table(pd.DataFrame([{tr(zh="关系", en="relation"): shown_line(r, index.chunk(r["chunk_id"]).ref),
                                      **checked(r), tr(zh="出自的句子", en="sentence"): r["sentence"]} for r in relations])))


def extraction_view(graph, index) -> None:
    """One chunk's extraction: the prompt, the model's raw output, what was kept."""
    with st.expander(tr(zh="某个块的抽取：提示词和模型原始输出", en="One chunk's extraction: the prompt and the model's raw output")):
        refs = [c.ref for c in index.chunks]
        ref = st.selectbox(tr(zh="块", en="Chunk"), refs, key="graph.chunk")
        chunk = index.chunks[refs.index(ref)]
        ex = graph.extractions[chunk.chunk_id]
        st.caption(f"{md_escape(ex.extractor)} · {ex.seconds:.1f} s" + (tr(zh="（随附/缓存）", en=" (shipped/cached)") if ex.cached else ""))
        if ex.prompt:
            st.code("\n\n".join(f"[{m['role']}]\n{m['content']}" for m in ex.prompt), language=None)
            st.caption(tr(zh="模型写的（语法约束下的 JSON）", en="What the model wrote (JSON under the grammar)"))
            st.code(ex.raw, language="json")
            st.caption(tr(zh=f"对照原文丢掉的：实体 {ex.dropped.get('entities', 0)} 个、关系 {ex.dropped.get('relations', 0)} 条（原文里没有的名字，或两端不是实体）",
                          en=f"Dropped against the text: {ex.dropped.get('entities', 0)} entities, {ex.dropped.get('relations', 0)} "
                          "relations (names not in the text, or ends that are not entities)"))
        else:
            st.caption(tr(zh="jieba 的抽取没有提示词：词性标注找名词和专名，同一句里的两个实体用它们之间的动词相连。",
                          en="jieba's extraction has no prompt: part-of-speech tags find nouns and names, and two entities "
                          "of one sentence are joined by the verb between them."))
        st.dataframe(pd.DataFrame([{tr(zh="名字", en="name"): e.name, tr(zh="类型", en="type"): e.type}
                                   for e in ex.entities]), hide_index=True)
        st.dataframe(pd.DataFrame([{tr(zh="头实体", en="head"): r.head,
                                    tr(zh="关系", en="relation"): co_occurs() if r.relation == extraction.CO_OCCURS else r.relation,
                                    tr(zh="尾实体", en="tail"): r.tail, tr(zh="出自的句子", en="sentence"): r.sentence}
                                   for r in ex.relations]), hide_index=True)


def merges_view(graph) -> None:
    """The entity merges, each with its rule."""
    with st.expander(tr(zh=f"实体合并（{len(graph.merges)}）", en=f"Entity merges ({len(graph.merges)})")):
        st.caption(tr(zh="同一实体的不同写法：规范化后相同、原文里写成“X（Y）”、或跨语言的嵌入最近邻且同块出现。",
                      en="Spellings of one entity: the same after normalising, written “X（Y）” in the text, or each other's "
                      "nearest name across languages by embedding and mentioned in one chunk."))
        if graph.merges:
            st.html(html_table(pd.DataFrame([{tr(zh="保留", en="kept"): m.kept, tr(zh="并入", en="merged"): m.merged,
                                              tr(zh="依据", en="rule"): MERGE_RULES.get(m.reason, m.reason) if lang() == "zh" else m.reason,
                                              tr(zh="证据", en="evidence"): m.evidence}
                                             for m in graph.merges])))


def fragments_view(graph) -> None:
    """Extracted 'entities' that are no names, and why (not drawn)."""
    frags = [(n, d["fragment"]) for n, d in graph.g.nodes(data=True) if d.get("fragment")]
    with st.expander(tr(zh=f"不是名称的“实体”（{len(frags)}）：不画在图上", en=f"“Entities” that are no names ({len(frags)}): not drawn")):
        st.caption(tr(zh="抽取时模型列出的分句、公式片段和截断的短语：它们不是实体的名称，所以不画在图上，以它们为一端的关系也不算事实。",
                      en="Clauses, pieces of formulas and phrases cut mid-way that the model listed as entities: they name nothing, "
                      "so they are not drawn, and no relation with one at either end counts as a fact."))
        if frags:
            st.html(html_table(pd.DataFrame([{tr(zh="抽取出的“实体”", en="listed as"): n, tr(zh="为什么不是名称", en="why it is no name"): loc(why)}
                                             for n, why in frags[:60]])))


def _candidates(s) -> str:
    """The model's choices with their per-token probability, or the sentences dropped with why."""
    if s.choices:
        return tr(zh="；", en="; ").join(tr(zh=f"{short(c, 50)}（每词概率 {p:.2f}）", en=f"{short(c, 50)} (per token {p:.2f})")
                                  for c, p in s.choices)
    return tr(zh="；", en="; ").join(tr(zh=f"{short(d, 80)}（{loc(WHY.get(why, why))}）", en=f"{short(d, 80)} ({loc(WHY.get(why, why))})")
                              for d, why in s.dropped)


def communities_view(graph, index) -> None:
    """Leiden's communities and their summaries."""
    with st.expander(tr(zh="社区与概要（Leiden）", en="Communities and their summaries (Leiden)")):
        found, by = summaries(graph, {c.chunk_id: c.text for c in index.chunks})
        st.caption(tr(zh=f"Leiden 社区发现（igraph + leidenalg），模块度 {graph.modularity:.3f}。概要：",
                      en=f"Leiden communities (igraph + leidenalg), modularity {graph.modularity:.3f}. Summaries: ")
                   + md_escape(loc(by)))
        st.caption(tr(zh="候选是社区里点名实体最多的几句原文。随附的小模型只做选择：把每一句当作“概括”的回答，算它续写这句的每词概率，"
                      "选最高的一句（它自己写的概要常把名称写错）。不能打分的模型（远程接口）才自己写一两句，每句都用审计对照社区的块核对，"
                      "没有支撑、主语是原文没有的名称、或只是套话的句子都删去。没有模型时，概要是社区里最有代表性的一句原文。最后一列是候选的概率或删去的原因。",
                      en="The candidates are the community's sentences that name most of its entities. The bundled small model only "
                      "chooses: each candidate, as the whole reply to 'summarize', gets its per-token probability, and the most "
                      "likely one is the summary (written in its own words, its summaries got names wrong). A model that cannot "
                      "score (an endpoint) writes one or two sentences, each checked by the audit against the community's "
                      "chunks; one that is unsupported, whose subject is a name the chunks never use, or that is only a template "
                      "is dropped. With no model, the summary is the community's most central sentence. The last column gives "
                      "each candidate's probability, or why a sentence was dropped."))
        rows = []
        for c in graph.communities[:30]:
            s = found.get(c.cid)
            rows.append({"#": c.cid, tr(zh="实体", en="entities"): tr(zh="、", en=", ").join(c.entities[:8]),
                         tr(zh="块", en="chunks"): len(c.chunk_ids), tr(zh="概要", en="summary"): s.text if s else "",
                         tr(zh="写法", en="written by"): loc(BY[s.by]) if s else "",
                         tr(zh="候选的概率，或删去的句子（原因）", en="candidates' probability, or dropped sentences (why)"):
                             _candidates(s) if s else ""})
        st.html(html_table(pd.DataFrame(rows)))


st.header(":material/hub: " + t("page.graph"))
st.caption(tr(
    zh="GraphRAG：建索引时从每个块抽取实体和关系，连成一张图；提问时先在图里找到问题中的实体，沿关系走两跳，把走到的块和关系交给回答。"
    "它擅长“A 和 B 有什么关系”“顺着 A → B → C 找”的问题；对单跳的 FAQ 问题，建图的代价远大于收益（见 docs/graphrag.md 的测量）。",
    en="GraphRAG: at index time, entities and relations are extracted from every chunk and joined into a graph; at "
    "question time the question's entities are found in it, the walk follows relations two hops, and the chunks "
    "and relations it reaches go to the answer. It pays on “how are A and B related” and “follow A → B → C” "
    "questions; on single-hop FAQ questions building the graph costs far more than it returns (docs/graphrag.md, measured).",
))
index = attempt(indexing.get_index)
with st.spinner(tr(zh="建图…", en="Building the graph…")):
    graph = attempt(attach, index)

missing = unextracted(graph)
if missing == 0:
    st.success(f"{tr(zh='抽取', en='Extraction')}: **{md_escape(loc(graph.extractor))}**", icon=":material/check_circle:")
else:
    st.warning(f"{t('fallback')}: **{md_escape(loc(graph.extractor))}**\n\n" + tr(
        zh=f"{missing} 个块没有模型的抽取结果，用的是 jieba 的词性标注（替代方案）；下面的按钮让语言模型逐块抽取（本地小模型每块约 17 秒）。",
        en=f"{missing} chunks have no model extraction and use jieba's part-of-speech tags (the stand-in); the button "
        "below has the language model extract them one by one (about 17 s a chunk with the bundled small model)."),
        icon=":material/warning:")
    if st.button(tr(zh=f"用模型抽取这 {missing} 个块（约 {missing * 17 // 60 + 1} 分钟）",
                    en=f"Extract these {missing} chunks with the model (about {missing * 17 // 60 + 1} min)"),
                 key="graph.extract"):
        gen, chat = attempt(choices.generator_choice, index.embedder)
        if chat is None:
            st.error(tr(zh="没有可用的语言模型：", en="No language model can run: ") + md_escape(gen.reason))
        else:
            bar = st.progress(0.0)
            # A Stop or a failing endpoint ends the run with its message (attempt); the graph built so far stays.
            attempt(run_in_worker, lambda control, emit: attach(
                index, chat, control, lambda i, n: emit("progress", (i, n)), only_missing=True),
                lambda kind, p: bar.progress(p[0] / p[1]) if kind == "progress" else None)
            bar.empty()
            st.rerun()  # the banner above was drawn before the extraction: draw it again from the new graph

graph_figures(graph)
walk_view(graph, index)
extraction_view(graph, index)
merges_view(graph)
fragments_view(graph)
communities_view(graph, index)

"""The upload page's class knowledge base: the picker of the bases on this server, the notice when the session is on
one, and the teacher's form that saves the uploaded files as one (only on a server started with RAG_TEACHER_KEY).
Not handled here: the bases and their shared copy (ui/kb.py), the bundle (rag/index/kb.py).
"""

from __future__ import annotations

from typing import MutableMapping, Sequence

import streamlit as st

from rag.errors import RagError

from . import corpus, kb
from .i18n import plural, tr
from .render import error_text, md_escape


def picker(ss: MutableMapping) -> None:
    """The bases on this server, each with its counts, and a button that opens the chosen one (drawn only when
    there is one)."""
    rows = {r["name"]: r for r in kb.available() if "error" not in r}
    if not rows:
        return

    def _open_base() -> None:  # a callback: it runs before any widget whose value it sets is drawn
        try:
            kb.use(ss, ss["upload.kb_pick"])
            kb.ask_about_base(ss)  # a callback: before the sidebar's question box is drawn
        except RagError as e:
            ss["corpus.kb_error"] = e

    pick = st.selectbox(tr(zh="班级知识库（老师构建，全班共用）", en="Class knowledge base (built by the teacher, shared)"),
                        list(rows), key="upload.kb_pick")
    if pick in rows:
        r = rows[pick]
        st.caption(tr(zh=f"{r['documents']} 篇文档 · {r['chunks']} 块 · {r['chunker']} · {r['embedder']}",
                      en=f"{plural(r['documents'], one='document', many='documents', zh='篇文档')} · "
                      f"{plural(r['chunks'], one='chunk', many='chunks', zh='块')} · {r['chunker']} · {r['embedder']}"))
    st.button(tr(zh="打开这个知识库", en="Open this knowledge base"), icon=":material/school:", width="stretch",
              key="upload.kb_open", on_click=_open_base)


def failed_link(ss: MutableMapping, page: str) -> bool:
    """On every page of a session whose ?kb= link could not be opened: what the link asked for and why it cannot be
    opened, and the two ways on. Whether the page should stop: every page but the upload page (where a corpus is
    chosen) stops rather than run on a corpus the student did not ask for (issue 65, item 1: the class landed on the
    bundled FAQ without a word, the message only on the upload page)."""
    value = ss.get("corpus.kb_link")
    if not value:
        return False
    name = md_escape(kb.shown_name(str(value)))
    why = md_escape(error_text(ss["corpus.kb_error"])) if ss.get("corpus.kb_error") is not None else ""
    st.error(tr(zh=f"这个链接要打开班级知识库 {name}，但它打不开：{why}",
                en=f"This link opens the class knowledge base {name}, but it cannot be opened: {why}"),
             icon=":material/link_off:")
    st.markdown(tr(zh="所以这些页面**没有**在它上面运行，也没有悄悄换成别的语料。请向老师确认链接；或者在“上传与分块”页"
                   "选一个班级知识库、上传你自己的文件；也可以先用内置的示例语料。",
                   en="So the pages are **not** running on it, nor quietly on another corpus. Check the link with your "
                   "teacher; or, on the upload page, open a class knowledge base or upload your own files; or go on "
                   "with the bundled example corpus for now."))
    left, right = st.columns(2)
    if page != "upload":
        left.page_link("app_pages/1_upload.py", label=tr(zh="去“上传与分块”页选语料", en="Choose a corpus on the upload page"),
                       icon=":material/description:", width="stretch")
    right.button(tr(zh="先用内置示例语料", en="Go on with the bundled example corpus"), key="kb.leave_link",
                 icon=":material/arrow_forward:", width="stretch", on_click=kb.leave_failed_link, args=(ss,))
    return page != "upload"


def newer_build(ss: MutableMapping) -> None:
    """On every page of a session whose knowledge base the teacher rebuilt since it was opened: say so, with a button
    that loads the new build (issue 65, item 7: the session kept the old copy with no notice)."""
    created = kb.newer_build(ss)
    if created is None:
        return
    name = md_escape(ss["corpus.kb"][0])
    st.info(tr(zh=f"老师在 {md_escape(created)} 重新构建了班级知识库 {name}；这些页面还在用你打开时的那一版。",
               en=f"The teacher rebuilt the class knowledge base {name} at {md_escape(created)}; these pages still use "
               "the build you opened."), icon=":material/update:")
    st.button(tr(zh="载入新版本", en="Load the new build"), key="kb.load_newer", icon=":material/refresh:",
              on_click=kb.load_newer_build, args=(ss,))


def notice(ss: MutableMapping) -> None:
    """Why a base could not be opened, or that the corpus is the class's shared base."""
    if ss.get("corpus.kb_error") is not None and not ss.get("corpus.kb_link"):  # a link's failure: failed_link says it
        st.error(md_escape(error_text(ss["corpus.kb_error"])))
    if ss.get("corpus.kb"):
        name = md_escape(ss["corpus.kb"][0])
        st.info(tr(zh=f"当前语料是班级知识库 {name}：服务器上只存一份，所有打开它的会话共用，只读。你自己上传的文件仍只在你的会话"
                   "里；换了分块或向量模型，会在你的会话里另建一份索引。",
                   en=f"The corpus is the class knowledge base {name}: the server holds one read-only copy that every "
                   "session on it shares. Files you upload stay in your session only; another chunker or embedder "
                   "builds a separate index in your session."), icon=":material/school:")


def teacher_form(ss: MutableMapping, files: Sequence) -> None:
    """Save the uploaded files as a base: offered only on a server with RAG_TEACHER_KEY, after that key is typed."""
    if not kb.teacher_may_save() or not files:
        return
    with st.expander(tr(zh="把上传的文件保存为班级知识库（老师）", en="Save the uploaded files as a class knowledge base (teacher)")):
        st.caption(tr(zh="保存后，学生打开带 ?kb=名字 的链接就直接用这些文件，不必再上传；同名的知识库会被替换。需要启动服务器时设"
                      "的教师密钥（RAG_TEACHER_KEY）。",
                      en="Once saved, students on a link with ?kb=NAME use these files without uploading them; a "
                      "knowledge base of the same name is replaced. Needs the teacher key the server was started with "
                      "(RAG_TEACHER_KEY)."))
        name = st.text_input(tr(zh="知识库名字", en="Knowledge base name"), key="upload.kb_name", max_chars=64)
        key = st.text_input(tr(zh="教师密钥", en="Teacher key"), type="password", key="upload.kb_key")
        if not st.button(tr(zh="保存", en="Save"), key="upload.kb_save", icon=":material/save:"):
            return
        verdict = kb.key_throttle().check(ss, key)
        if verdict is not True:
            if verdict is False:
                st.error(tr(zh="教师密钥不对，没有保存。", en="That is not the teacher key; nothing was saved."))
            wait = kb.key_throttle().wait_left(ss)
            if wait > 0:  # said with the wrong key that started it, and with each try refused meanwhile
                st.warning(tr(zh=f"连续输错了好几次密钥：请等 {wait:.0f} 秒再试（每多错一次，等待时间加倍）。这次没有检查密钥。"
                              if verdict is not False else
                              f"连续输错了好几次密钥：下一次请等 {wait:.0f} 秒再试（每多错一次，等待时间加倍）。",
                              en=f"Several wrong keys in a row: wait {wait:.0f} s before trying again (the wait doubles "
                              "with each wrong key). This try was not checked." if verdict is not False else
                              f"Several wrong keys in a row: wait {wait:.0f} s before the next try (the wait doubles "
                              "with each wrong key)."), icon=":material/hourglass_top:")
            return
        try:
            with st.spinner(tr(zh="正在构建知识库…", en="Building the knowledge base…")):
                saved = kb.save(ss, name.strip(), [(corpus.browser_name(f.name), f.getvalue()) for f in files])
        except RagError as e:
            st.error(md_escape(error_text(e)))
            return
        m = saved.manifest
        st.success(tr(zh=f"已保存知识库 {md_escape(m.name)}：{m.documents} 篇文档，{m.chunks} 块。学生的链接：?kb={md_escape(m.name)}",
                      en=f"Saved the knowledge base {md_escape(m.name)}: {m.documents} documents, {m.chunks} chunks. "
                      f"Students' link: ?kb={md_escape(m.name)}"))

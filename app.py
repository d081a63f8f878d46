"""The Streamlit entrypoint: `streamlit run app.py`.

Sets up the page, this session's settings and corpus (ui/settings.py) and the sidebar shared by every page, then hands
over to the page the user picked. The pages are registered here with st.navigation, so their titles follow
the UI language. They live in app_pages/, not pages/: a folder named pages/ next to this file switches
Streamlit into its older folder-based multipage mode, in which some reruns skip this entrypoint (and with
it the shared sidebar and session setup).
Not handled here: any page's content (app_pages/*.py) or computation (rag/).
"""

import streamlit as st

from ui import kb, kb_panel, lesson, links, settings, sidebar
from ui.i18n import t

# The projector view (a lesson's) folds the sidebar; Streamlit applies the state when the page loads.
st.set_page_config(page_title="RAG 透视 Inspectable RAG", page_icon=":material/search:", layout="wide",
                   initial_sidebar_state="collapsed" if st.session_state.get("lesson.present") else "auto")
settings.init()
first_run = not st.session_state.get("links.restored")
kb.from_link(st.session_state, st.query_params)  # ?kb=NAME: the class's knowledge base, before the link's settings
links.restore(st.session_state, st.query_params)  # a link or a reload brings its question and settings
if first_run:
    lesson.from_link(st.session_state, st.query_params)  # a link to a lesson's step brings the steps' settings

PAGES = {
    "home": st.Page("app_pages/0_home.py", title=t("page.home"), icon=":material/home:", default=True),
    "upload": st.Page("app_pages/1_upload.py", title=t("page.upload"), icon=":material/description:", url_path="upload"),
    "embeddings": st.Page("app_pages/2_embeddings.py", title=t("page.embeddings"), icon=":material/scatter_plot:", url_path="embeddings"),
    "retrieval": st.Page("app_pages/3_retrieval.py", title=t("page.retrieval"), icon=":material/manage_search:", url_path="retrieval"),
    "graph": st.Page("app_pages/3b_graph.py", title=t("page.graph"), icon=":material/hub:", url_path="graph"),
    "rerank": st.Page("app_pages/4_rerank.py", title=t("page.rerank"), icon=":material/swap_vert:", url_path="rerank"),
    "answer": st.Page("app_pages/5_answer.py", title=t("page.answer"), icon=":material/forum:", url_path="answer"),
    "loops": st.Page("app_pages/6_loops.py", title=t("page.loops"), icon=":material/account_tree:", url_path="loops"),
    "evaluation": st.Page("app_pages/7_evaluation.py", title=t("page.evaluation"), icon=":material/leaderboard:", url_path="evaluation"),
}

page = st.navigation(list(PAGES.values()))
here = next(key for key, p in PAGES.items() if p.url_path == page.url_path)
goto = lesson.follow(st.session_state)  # a lesson step just entered: go to its page
if goto is not None and goto != here:
    st.switch_page(PAGES[goto])
sidebar.render(here)
waits_for = lesson.draw(here)  # a lesson's current step, above the page
try:
    if not kb_panel.failed_link(st.session_state, here):  # a ?kb= that cannot be opened: said on every page
        kb_panel.newer_build(st.session_state)  # the teacher rebuilt the session's knowledge base since it opened it
        page.run()
finally:  # also when a page stops early (st.stop): the URL always says what this run used
    st.query_params.from_dict(links.publish(st.session_state))
if waits_for is not None and lesson.fingerprint(st.session_state) != waits_for:
    st.rerun()  # the page has computed what the step was waiting for: draw the step from it

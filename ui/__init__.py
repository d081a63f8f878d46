"""Streamlit plumbing shared by the pages: per-session state, cached models, sidebar, rendering helpers.

This package imports streamlit; `rag/` never does. Modules:
- i18n.py     the labels (Chinese first with the English term, or English only)
- models.py   models shared by every session through st.cache_resource (read-only)
- state.py    one user's corpus, index, settings and results, all in st.session_state
- sidebar.py  the question box and the LLM settings shown on every page
- render.py   small rendering helpers (tables, coloured prompt, citation markers, chunk preview)
- charts.py   the Plotly figures
It lives outside `app_pages/`, which holds only pages.
"""

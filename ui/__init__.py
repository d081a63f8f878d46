"""Streamlit plumbing shared by the pages: per-session state, cached models, sidebar, rendering helpers.

This package imports streamlit; `rag/` never does. Modules:
- i18n.py       the labels (Chinese first with the English term, or English only)
- models.py     models shared by every session through st.cache_resource (read-only or locked)
- settings.py   every setting's key and default, and the AskSettings the pipeline reads
- memo.py       per-session memoisation of results
- links.py      the question and main settings in the URL, so a reload or a shared link keeps them
- corpus.py     this session's corpus: the knowledge base or its uploads
- indexing.py   this session's chunks and index, rebuilt only when their key changes
- choices.py    which reranker and generator this session runs; the LLM endpoint fields
- results.py    the current question's trace, retrieval and rerank lists, shared by the pages
- streaming.py  the answer streamed into the page, stopped when the page goes away
- sidebar.py    the question box and the LLM settings shown on every page
- render.py     small rendering helpers (tables, coloured prompt, citation markers, chunk preview)
- charts.py     the Plotly figures
All of one user's state lives in st.session_state, never in a module global or a cache_resource.
It lives outside `app_pages/`, which holds only pages.
"""

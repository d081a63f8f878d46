"""Streamlit plumbing shared by the pages: per-session state, cached models, sidebar, rendering helpers.

This package imports streamlit; `rag/` never does. Modules:
- i18n.py       the labels (Chinese first with the English term, or English only)
- models.py     models shared by every session through st.cache_resource (read-only or locked)
- settings.py   every setting's key and default, and the AskSettings the pipeline reads
- memo.py       per-session memoisation of results
- links.py      the question and main settings in the URL, so a reload or a shared link keeps them
- corpus.py     this session's corpus: the knowledge base or its uploads
- kb.py         a class knowledge base (rag kb build) opened by link, page or lesson; one shared copy, bounded
- kb_panel.py   the upload page's picker, notice and teacher's save form for those bases
- indexing.py   this session's chunks and index, rebuilt only when their key changes
- choices.py    which reranker and generator this session runs; the LLM endpoint fields
- results.py    the current question's trace, retrieval and rerank lists, shared by the pages
- worker.py     any model call run in a worker thread: queued notice, progress, stopped when the page goes away
- streaming.py  the answer streamed into the page through worker.py
- audit_view.py the citation audit: each sentence, its evidence span, every check and its reason
- timeline.py   a loop's steps drawn as a timeline; judge_panel.py the evaluation page's LLM judge
- sidebar.py    the question box and the LLM settings shown on every page
- render.py     small rendering helpers (tables, coloured prompt, citation markers, chunk preview)
- charts.py     the Plotly figures
All of one user's state lives in st.session_state, never in a module global or a cache_resource.
It lives outside `app_pages/`, which holds only pages.

What is shared by every session, and why it is safe:
- st.cache_resource (models.py): the embedders, cross-encoders and the bundled local model (read-only; the
  local model serialises its calls behind one lock and tells a waiting session it is queued), and the
  bundled knowledge base (a tuple of frozen Documents); the class knowledge bases a teacher built (kb.py: at
  most RAG_KB_CACHE, loaded once under a lock; each session gets a shallow copy, so what it adds stays its own);
- module caches in rag/, each bounded and keyed by a hash of the text, so they cannot show one user's text
  to another or grow without end: the embedder's query vectors (256, LRU, rag/models/embedding_cache.py),
  jieba tokens per text (200,000 texts, LRU, rag/index/token_cache.py), contextual chunking's context
  sentences (4,096, LRU, rag/ingest/contextual.py) and the fact checker's reading of a text (4,096, LRU,
  rag/audit/fact_text.py). From the app, an upload's tokens and context sentences never go to disk; its chunk
  vectors do, in the vector cache, keyed by sha1 of the text, without the text (rag/models/embedding_cache.py).
"""

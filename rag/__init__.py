"""An inspectable RAG pipeline: load -> chunk -> embed -> retrieve (dense, BM25, RRF) -> rerank ->
generate with citations -> audit -> evaluate. Every stage returns typed, inspectable results.

This package never imports streamlit; the app in `app.py` and `pages/` renders what it returns.
"""

import os as _os

# Two contended cores: numeric libraries default to one thread unless the user says otherwise.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    _os.environ.setdefault(_var, _os.environ.get("RAG_THREADS", "1"))
_os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

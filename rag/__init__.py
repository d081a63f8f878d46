"""An inspectable RAG pipeline: load -> chunk -> embed -> retrieve (dense, BM25, RRF) -> rerank ->
generate with citations -> audit -> evaluate. Every stage returns typed, inspectable results.

One folder per stage, in pipeline order; a wing imports only the wings before it:

- `models/`: embedders, the hub loader and the chat client, which every stage may use;
- `ingest/`: loaders and chunkers;
- `index/`: the vector store, BM25 and its tokens, the index build, the PCA projection;
- `graph/`: GraphRAG's entity graph over the chunks (extraction, resolution, communities) and its local search;
- `search/`: retrieval, fusion, reranking, query rewriting;
- `answer/`: the prompt, generators and the citation audit;
- `evaluate/`: metrics and the strategy comparison, which run the whole pipeline.

At the top sit the files that join the stages: `pipeline.py` (`ask()`), `stages.py` (what each stage returns),
`trace.py` (one question's journey), `backends.py` (which model runs, or which labelled fallback), `errors.py`, `defaults.py` and
the command line (`cli/`, `__main__.py`).

This package never imports streamlit; the app in `app.py` and `app_pages/` renders what it returns.
"""

import os as _os

from rag import config as _config
from rag.errors import ConfigError as _ConfigError

# Two contended cores: numeric libraries default to one thread unless the user says otherwise. This runs at
# import, before any numeric library loads; a bad RAG_THREADS is left for the first reader to report (with
# config's message), so importing the package never fails.
try:
    _threads = str(_config.value("RAG_THREADS"))
except _ConfigError:
    _threads = "1"
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    _os.environ.setdefault(_var, _threads)
_os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
# Idle OpenMP threads sleep instead of spinning, so a parallel embedder yields a contended core
# (rag/models/e5_engine.py has the measurements).
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

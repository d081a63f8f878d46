"""The vectors shipped in data/vectors/: a fresh install embeds nothing for the bundled corpora, the vectors
are the model's own, a changed text recomputes only itself, and another model never reads them.

When this fails after a change to data/faq.jsonl, data/sample_docs/, a chunker or an embedder's version,
run `.venv/bin/python scripts/precompute_vectors.py` and commit data/vectors/.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from rag import defaults
from rag.index.build import build_index
from rag.ingest.chunking import chunk_documents
from rag.models import embedding_cache
from rag.models.embedding import load_embedder
from rag.models.embedding_cache import CachedEmbedder
from tests.fakes import BigramEmbedder

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import precompute_vectors  # noqa: E402


@pytest.fixture(scope="module")
def model():
    from rag.models.embedding import default_embedder_name

    return load_embedder(default_embedder_name())


@pytest.mark.parametrize("corpus", ["knowledge base", "sample documents"])
def test_a_fresh_cache_embeds_nothing_for_the_bundled_corpora(model, tmp_path, corpus):
    docs = precompute_vectors.corpora()[corpus]
    cached = CachedEmbedder(model, cache_dir=tmp_path)
    assert cached.seed_path.is_file(), f"no shipped vectors for {model.name}: run scripts/precompute_vectors.py"
    index = build_index(chunk_documents(docs, defaults.CHUNKER, **defaults.CHUNK_PARAMS), cached)
    assert index.cache_misses == 0, "shipped vectors are stale: run scripts/precompute_vectors.py"


def test_shipped_vectors_are_the_models_own(model, tmp_path):
    texts = precompute_vectors.texts_to_embed()[::97]  # a spread of chunks and sentences
    shipped = CachedEmbedder(model, cache_dir=tmp_path).embed_documents(texts)
    fresh = np.asarray(model.embed_documents(texts), dtype=np.float32)
    assert (np.sum(shipped * fresh, axis=1) >= 0.9999).all()


def test_a_changed_text_recomputes_only_itself(model, tmp_path):
    docs = precompute_vectors.corpora()["knowledge base"]
    texts = [c.text for c in chunk_documents(docs, defaults.CHUNKER, **defaults.CHUNK_PARAMS).chunks]
    texts[3] = texts[3] + " 新加的一句。"
    _, stats = CachedEmbedder(model, cache_dir=tmp_path).embed_documents_with_stats(texts)
    assert (stats.hits, stats.misses) == (len(texts) - 1, 1)


def test_another_model_or_version_never_reads_them(model, tmp_path, monkeypatch):
    other = CachedEmbedder(BigramEmbedder(), cache_dir=tmp_path / "a")
    texts = precompute_vectors.texts_to_embed()[:20]
    assert other.embed_documents_with_stats(texts)[1].hits == 0
    # the same file name with another fingerprint inside (an upgraded package): ignored
    seed_dir = tmp_path / "seed"
    seed_dir.mkdir()
    real = CachedEmbedder(model, cache_dir=tmp_path / "b")
    with np.load(real.seed_path) as data:
        meta = {**json.loads(str(data["meta"])), "fingerprint": "another-version"}
        np.savez(seed_dir / real.seed_path.name, sha1=data["sha1"], vectors=data["vectors"], meta=np.array(json.dumps(meta)))
    monkeypatch.setattr(embedding_cache, "SEED_DIR", seed_dir)
    stale = CachedEmbedder(model, cache_dir=tmp_path / "c")
    assert stale.embed_documents_with_stats(texts[:3])[1].hits == 0
    monkeypatch.setenv("RAG_SHIPPED_VECTORS", "0")
    monkeypatch.setattr(embedding_cache, "SEED_DIR", real.seed_path.parent)
    off = CachedEmbedder(model, cache_dir=tmp_path / "d")
    assert off.embed_documents_with_stats(texts[:3])[1].hits == 0

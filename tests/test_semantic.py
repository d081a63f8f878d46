"""Semantic chunking (rag/ingest/semantic.py): cuts where adjacent sentences drift apart, within the size
limits, every chunk a slice of its document; the curve the page plots is the one that cut."""

from __future__ import annotations

import numpy as np
import pytest

from rag.errors import ConfigError
from rag.ingest.chunking import chunk_documents, chunker_params
from rag.ingest.documents import Document
from rag.ingest.semantic import semantic_curve
from tests.fakes import BigramEmbedder

A = ["向量检索把文本变成向量。", "向量检索按余弦相似度排序。", "向量检索适合语义相近的问题。"]
B = ["猫喜欢晒太阳和睡觉。", "猫每天要睡很久的觉。", "猫晒太阳时会眯起眼睛。"]
DOC = Document("d", "".join(A + B), title="t")


def test_the_cut_falls_where_the_topic_changes():
    cs = chunk_documents([DOC], "semantic", embedder=BigramEmbedder(), breakpoint_percentile=75, min_size=0)
    assert [c.text for c in cs.chunks] == ["".join(A), "".join(B)]
    assert all(c.text == DOC.text[c.start:c.end] for c in cs.chunks)
    assert cs.chunks[1].metadata["semantic_break"] and cs.params["breakpoint_percentile"] == 75


def test_the_curve_is_adjacent_cosine_and_marks_the_cut():
    e = BigramEmbedder()
    curve = semantic_curve(DOC, e, breakpoint_percentile=75, min_size=0)
    vecs = e.embed_documents(A + B)
    assert np.allclose(curve.similarity, np.sum(vecs[:-1] * vecs[1:], axis=1), atol=1e-6)
    assert curve.breaks == [2] and curve.similarity[2] == min(curve.similarity)
    assert curve.boundaries[2] == len("".join(A))


def test_size_limits_win_over_the_curve():
    e = BigramEmbedder()
    never = chunk_documents([DOC], "semantic", embedder=e, breakpoint_percentile=100, max_size=40, min_size=0)
    assert all(len(c.text) <= 40 for c in never.chunks) and len(never.chunks) >= 2  # too long: cut anyway
    merged = chunk_documents([DOC], "semantic", embedder=e, breakpoint_percentile=0, min_size=60)
    assert all(len(c.text) >= 30 for c in merged.chunks)  # tiny pieces joined their closer neighbour
    assert "".join(c.text for c in merged.chunks) == DOC.text


def test_parameters_and_the_embedder_are_checked():
    assert chunker_params("semantic") == {"breakpoint_percentile": 95, "max_size": 800, "min_size": 100}
    with pytest.raises(ConfigError, match="needs an embedder"):
        chunk_documents([DOC], "semantic")
    with pytest.raises(ConfigError, match="breakpoint_percentile"):
        chunk_documents([DOC], "semantic", embedder=BigramEmbedder(), breakpoint_percentile=120)
    with pytest.raises(ConfigError, match="min_size"):
        chunk_documents([DOC], "semantic", embedder=BigramEmbedder(), max_size=50, min_size=80)
    one = chunk_documents([Document("x", "只有一句。")], "semantic")  # nothing to cut: no embedder needed
    assert [c.text for c in one.chunks] == ["只有一句。"]

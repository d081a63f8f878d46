"""Chunkers compared on span metrics (rag/evaluate/chunkers.py, rag eval --chunker a,b): a context holds the
answer only when it holds the whole span, so a cut span is a miss; figures are per kind of question."""

from __future__ import annotations

import pytest

from rag.errors import ConfigError
from rag.evaluate.chunkers import ChunkerTrial, compare_chunkers, format_chunker_table
from rag.evaluate.evaluation import Query, span_rank
from rag.ingest.documents import Document
from tests.fakes import BigramEmbedder

DOC = Document("d", "第一段讲检索。" * 20 + "答案就在这里：宽限日一共三天，用完以后每天扣十分。" + "第三段讲生成。" * 20)
QUERY = Query("q", "宽限日有几天", ("d",), True, "宽限日一共三天，用完以后每天扣十分。", "boundary")


def test_span_rank_needs_the_whole_span():
    assert span_rank(["前文 宽限日一共三天，用完以后\n每天扣十分。后文"], QUERY.answer) == 1  # whitespace aside
    assert span_rank(["宽限日一共三天，", "用完以后每天扣十分。"], QUERY.answer) is None  # cut in two: a miss


def test_a_window_that_cuts_the_span_loses_it_and_the_table_says_so():
    reports = compare_chunkers(ChunkerTrial([DOC], [QUERY], BigramEmbedder()), ["document", "fixed"])
    by = {r.chunker: r for r in reports}
    assert by["document"].figures["span Hit@1"] == 1.0 and by["document"].n_chunks == 1
    assert by["fixed"].n_chunks > 1 and by["fixed"].params["chunk_size"] == 300
    assert by["document"].by_kind["boundary"]["span Hit@5"] == 1.0
    table = format_chunker_table(reports)
    assert "span Hit@5 · boundary" in table and "context chars@5" in table
    with pytest.raises(ConfigError, match="unknown chunker"):
        compare_chunkers(ChunkerTrial([DOC], [QUERY], BigramEmbedder()), ["nope"])
    with pytest.raises(ConfigError, match="answer span"):
        compare_chunkers(ChunkerTrial([DOC], [Query("q", "x", ("d",))], BigramEmbedder()), ["fixed"])

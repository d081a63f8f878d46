"""Chunk preview logic (rag/ingest/preview.py): coverage segments, overlaps, gaps, length stats, parent/child."""

from dataclasses import dataclass

import pytest

from rag.errors import ConfigError
from rag.ingest.chunking import chunk_documents
from rag.ingest.documents import Document
from rag.ingest.preview import (
    chunks_of,
    coverage_segments,
    coverage_summary,
    length_stats,
    parent_children,
)


@dataclass(frozen=True)
class S:
    chunk_id: str
    start: int
    end: int
    doc_id: str = "d"


def test_segments_by_hand_overlap_and_gap():
    text = "0123456789ABCDEF"  # 16 chars
    spans = [S("a", 0, 6), S("b", 4, 10), S("c", 12, 16)]
    segs = coverage_segments(text, spans)
    assert [(s.start, s.end, s.chunk_ids) for s in segs] == [
        (0, 4, ("a",)),
        (4, 6, ("a", "b")),  # overlap of a and b
        (6, 10, ("b",)),
        (10, 12, ()),  # gap: in no chunk
        (12, 16, ("c",)),
    ]
    assert "".join(s.text for s in segs) == text
    assert [s.is_overlap for s in segs] == [False, True, False, False, False]
    assert segs[3].is_gap
    cov = coverage_summary(segs)
    assert (cov.covered, cov.overlapped, cov.uncovered) == (14, 2, 2)


def test_segments_reject_spans_outside_the_text():
    with pytest.raises(ConfigError, match="this document only"):
        coverage_segments("abc", [S("x", 1, 9)])


def test_fixed_chunker_overlap_shows_up_as_exactly_overlap_characters():
    doc = Document("d1", "这是一个用于测试固定窗口切块的句子。" * 10)
    cs = chunk_documents([doc], "fixed", chunk_size=40, overlap=10)
    segs = coverage_segments(doc.text, chunks_of(cs.chunks, "d1"))
    assert "".join(s.text for s in segs) == doc.text
    overlaps = [s for s in segs if s.is_overlap]
    assert len(overlaps) == len(cs.chunks) - 1
    assert all(s.end - s.start == 10 and len(s.chunk_ids) == 2 for s in overlaps)
    for s in segs:  # every segment's text really lies inside each chunk said to cover it
        for cid in s.chunk_ids:
            c = next(c for c in cs.chunks if c.chunk_id == cid)
            assert c.start <= s.start and s.end <= c.end and s.text in c.text


def test_sentence_chunker_without_overlap_has_no_overlap_segments():
    doc = Document("d2", "第一句话。第二句话比较长一些。第三句。" * 6)
    cs = chunk_documents([doc], "sentence", target_size=30)
    segs = coverage_segments(doc.text, chunks_of(cs.chunks, "d2"))
    assert not any(s.is_overlap for s in segs)
    assert coverage_summary(segs).covered == sum(len(c.text) for c in cs.chunks)


def test_chunks_of_filters_by_document_and_sorts():
    spans = [S("b2", 5, 9, "b"), S("a1", 0, 3, "a"), S("b1", 0, 5, "b")]
    assert [c.chunk_id for c in chunks_of(spans, "b")] == ["b1", "b2"]
    assert chunks_of(spans, "zzz") == []


def test_length_stats():
    st = length_stats(["a" * 10, "b" * 20, "c" * 30, "d" * 40])
    assert (st.count, st.min, st.max) == (4, 10, 40)
    assert st.mean == 25.0 and st.median == 25.0
    assert st.p90 == pytest.approx(37.0)  # 30 + 0.7 * (40 - 30)
    assert st.lengths == (10, 20, 30, 40)
    assert length_stats([]).count == 0


def test_parent_children_relation_from_the_real_chunker():
    doc = Document("p", "。".join(f"第{i}句话写了一些内容" for i in range(40)) + "。")
    cs = chunk_documents([doc], "parent_child", parent_size=120, child_size=40)
    fams = parent_children(cs.chunks, cs.parents)
    assert len(fams) == len(cs.parents) >= 2
    assert sum(len(f.child_ids) for f in fams) == len(cs.chunks)
    for f in fams:
        parent = cs.parents[f.parent_id]
        assert f.parent_length == len(parent.text)
        for cid in f.child_ids:
            child = next(c for c in cs.chunks if c.chunk_id == cid)
            assert parent.start <= child.start and child.end <= parent.end
            assert child.ref == parent.ref
    with pytest.raises(ConfigError, match="not in the chunk set"):
        parent_children([type("C", (), {"chunk_id": "x", "parent_id": "nope", "start": 0})()], {})

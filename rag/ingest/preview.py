"""What a chunker did to one document, in a form a page can colour: which chunk(s) cover each span.

`coverage_segments` cuts the source text at every chunk boundary; each piece lists the chunks that cover
it, so a piece covered by two chunks is an overlap and a piece covered by none is a gap (text the
chunker dropped, usually whitespace between sentences). Offsets are `Chunk.start` / `Chunk.end` into
`Document.text`, so the preview shows exactly what was indexed. `length_stats` summarises chunk lengths
(in characters: for Chinese text a character is close to a token) for the histogram, and
`parent_children` lists the parent/child relation of a parent-child chunk set.
Not handled here: chunking itself (chunking.py) and the colours (the page picks them).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np

from rag.errors import ConfigError


class Span(Protocol):  # rag.ingest.chunking.Chunk satisfies this
    chunk_id: str
    start: int
    end: int


@dataclass(frozen=True)
class Segment:
    start: int
    end: int
    text: str  # source[start:end]
    chunk_ids: tuple[str, ...]  # chunks covering this span, in the order given

    @property
    def is_overlap(self) -> bool:
        return len(self.chunk_ids) > 1

    @property
    def is_gap(self) -> bool:
        return not self.chunk_ids


def coverage_segments(text: str, chunks: Sequence[Span]) -> list[Segment]:
    """Split `text` at every chunk start/end; each segment names the chunks that cover it.

    Joining the segments' text gives back `text` exactly. Chunks of other documents must be filtered out
    by the caller (see `chunks_of`).
    """
    n = len(text)
    for c in chunks:
        if not 0 <= c.start <= c.end <= n:
            raise ConfigError(
                f"chunk {c.chunk_id} spans [{c.start}, {c.end}) outside the text (length {n}); "
                "pass the chunks of this document only"
            )
    cuts = sorted({0, n, *(c.start for c in chunks), *(c.end for c in chunks)})
    cover: list[list[str]] = [[] for _ in range(len(cuts) - 1)]  # segment i = [cuts[i], cuts[i+1])
    for c in chunks:
        # a sweep instead of testing every chunk against every segment: O(total covered segments)
        for i in range(bisect.bisect_left(cuts, c.start), bisect.bisect_left(cuts, c.end)):
            cover[i].append(c.chunk_id)
    return [
        Segment(a, b, text[a:b], tuple(ids)) for (a, b), ids in zip(zip(cuts, cuts[1:]), cover) if a < b
    ]


@dataclass(frozen=True)
class Coverage:
    covered: int  # characters inside at least one chunk
    overlapped: int  # characters inside two or more chunks (indexed, embedded and paid for twice)
    uncovered: int  # characters in no chunk (dropped by the chunker)


def coverage_summary(segments: Sequence[Segment]) -> Coverage:
    size = lambda s: s.end - s.start  # noqa: E731
    return Coverage(
        covered=sum(size(s) for s in segments if not s.is_gap),
        overlapped=sum(size(s) for s in segments if s.is_overlap),
        uncovered=sum(size(s) for s in segments if s.is_gap),
    )


def chunks_of(chunks: Sequence[Span], doc_id: str) -> list:
    """The chunks of one document, in text order."""
    return sorted((c for c in chunks if getattr(c, "doc_id", None) == doc_id), key=lambda c: (c.start, c.end))


@dataclass(frozen=True)
class LengthStats:
    count: int
    min: int
    max: int
    mean: float
    median: float
    p90: float  # 90th percentile (linear interpolation, numpy's default)
    lengths: tuple[int, ...]  # one per chunk, in the order given (for the histogram)


def length_stats(texts: Sequence[str]) -> LengthStats:
    """Character lengths of chunk texts."""
    lengths = tuple(len(t) for t in texts)
    if not lengths:
        return LengthStats(0, 0, 0, 0.0, 0.0, 0.0, ())
    arr = np.asarray(lengths, dtype=np.float64)
    return LengthStats(
        count=len(lengths),
        min=min(lengths),
        max=max(lengths),
        mean=float(arr.mean()),
        median=float(np.median(arr)),
        p90=float(np.percentile(arr, 90)),
        lengths=lengths,
    )


@dataclass(frozen=True)
class Family:
    parent_id: str
    parent_length: int
    child_ids: tuple[str, ...]  # indexed children, in text order


def parent_children(chunks: Sequence, parents: dict) -> list[Family]:
    """Parent-child chunking: each parent with the children that are indexed (and cite as the parent).

    `chunks` are the indexed chunks (children carry `parent_id`), `parents` maps parent id -> parent chunk.
    Children whose parent is missing raise, since their citations would point nowhere.
    """
    kids: dict[str, list] = {pid: [] for pid in parents}
    for c in chunks:
        pid = getattr(c, "parent_id", None)
        if pid is None:
            continue
        if pid not in kids:
            raise ConfigError(f"chunk {c.chunk_id} names parent {pid!r}, which is not in the chunk set's parents")
        kids[pid].append(c)
    return [
        Family(pid, len(parents[pid].text), tuple(c.chunk_id for c in sorted(kids[pid], key=lambda c: c.start)))
        for pid in sorted(parents, key=lambda p: (parents[p].doc_id, parents[p].start))
    ]

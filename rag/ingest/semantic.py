"""Semantic chunking: cut a document where the meaning shifts, measured by embeddings.

Each sentence (sentences.py) is embedded; the cosine similarity of every pair of adjacent sentences gives
a curve along the document, and a chunk ends where the curve drops: at every boundary whose distance
(1 - similarity) is above the `breakpoint_percentile`-th percentile of this document's distances (95: the
5% sharpest drops, the usual default of percentile-based semantic chunkers; not tuned on our sets). Then
size limits apply: a piece longer than `max_size` characters is cut again at its own sharpest drop, until
it fits (a single sentence longer than that is hard-split, as in the sentence chunker), and a piece shorter
than `min_size` joins the neighbour it is most similar to.
`semantic_curve` returns the curve with its threshold and breakpoints, so the chunk page can plot it.
Not handled here: choosing the embedder (the caller passes the index's), the other chunkers (chunking.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rag.errors import ConfigError
from rag.ingest.documents import Document
from rag.ingest.sentences import (  # the sentence chunker's cut of an over-long sentence
    hard_split,
    sentence_spans,
)

Span = tuple[int, int]


@dataclass(frozen=True)
class Curve:
    """Adjacent-sentence similarity along one document."""

    boundaries: list[int]  # character offset where sentence i+1 starts (one per adjacent pair)
    similarity: list[float]  # cosine(sentence i, sentence i+1)
    threshold: float  # similarity below which a boundary is a breakpoint
    breaks: list[int]  # indexes into boundaries that cut (after the size limits too)
    sentences: list[Span]


def _check(breakpoint_percentile, max_size, min_size) -> tuple[float, int, int]:
    try:
        p = float(breakpoint_percentile)
    except (TypeError, ValueError):
        raise ConfigError(f"breakpoint_percentile={breakpoint_percentile!r} must be a number from 0 to 100") from None
    if not 0 <= p <= 100:
        raise ConfigError(f"breakpoint_percentile={p:g} must be from 0 (cut everywhere) to 100 (cut nowhere)")
    for name, v in (("max_size", max_size), ("min_size", min_size)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < (1 if name == "max_size" else 0):
            raise ConfigError(f"{name}={v!r} must be a whole number >= {1 if name == 'max_size' else 0}")
    if min_size > max_size:
        raise ConfigError(f"min_size={min_size} must be <= max_size={max_size}")
    return p, int(max_size), int(min_size)


def semantic_curve(doc: Document, embedder, breakpoint_percentile: float = 95, max_size: int = 800,
                   min_size: int = 100) -> Curve:
    p, max_size, min_size = _check(breakpoint_percentile, max_size, min_size)
    sentences: list[Span] = []
    for span in sentence_spans(doc.text):
        sentences.extend(hard_split(doc.text, span, max_size) if span[1] - span[0] > max_size else [span])
    if len(sentences) < 2:
        return Curve([], [], 1.0, [], sentences)
    vecs = np.asarray(embedder.embed_documents([doc.text[s:e] for s, e in sentences]), dtype=np.float32)
    sims = np.sum(vecs[:-1] * vecs[1:], axis=1).astype(float)  # unit vectors: dot = cosine
    threshold = 1.0 - float(np.percentile(1.0 - sims, p))
    cuts = {i for i, s in enumerate(sims) if s < threshold - 1e-9}
    size = lambda a, b: sentences[b - 1][1] - sentences[a][0]  # noqa: E731  characters of sentences [a, b)
    groups = []
    for a, b in _groups(len(sentences), cuts):  # too long: cut again at the sharpest drop inside, until it fits
        stack = [(a, b)]
        while stack:
            a, b = stack.pop()
            if b - a > 1 and size(a, b) > max_size:
                i = a + int(np.argmin(sims[a:b - 1]))
                stack += [(i + 1, b), (a, i + 1)]  # left half comes off the stack first
            else:
                groups.append((a, b))
    merged: list[tuple[int, int]] = []  # too short: join the more similar neighbour, if the join still fits
    carry = None
    for a, b in groups:
        if carry is not None:
            if size(carry[0], b) <= max_size:
                a = carry[0]
            else:
                merged.append(carry)
            carry = None
        if size(a, b) >= min_size:
            merged.append((a, b))
            continue
        back = bool(merged) and size(merged[-1][0], b) <= max_size
        forward = b < len(sentences)
        if back and (not forward or sims[a - 1] >= sims[b - 1]):
            merged[-1] = (merged[-1][0], b)
        elif forward:
            carry = (a, b)
        else:
            merged.append((a, b))
    if carry is not None:
        merged.append(carry)
    cuts = {b - 1 for a, b in merged[:-1]}
    boundaries = [sentences[i + 1][0] for i in range(len(sentences) - 1)]
    return Curve(boundaries, sims.tolist(), threshold, sorted(cuts), sentences)


def _groups(n: int, cuts: set[int]) -> list[tuple[int, int]]:
    """Sentence index ranges [a, b) between the cut boundaries (cut i: between sentence i and i+1)."""
    out, a = [], 0
    for i in sorted(cuts):
        out.append((a, i + 1))
        a = i + 1
    out.append((a, n))
    return out


def semantic_spans(doc: Document, embedder, **params) -> list[tuple[Span, dict]]:
    curve = semantic_curve(doc, embedder, **params)
    if not curve.sentences:
        return []
    pieces = []
    for a, b in _groups(len(curve.sentences), set(curve.breaks)):
        extra = {"semantic_break": f"{curve.similarity[a - 1]:.3f}"} if a > 0 else {}
        pieces.append(((curve.sentences[a][0], curve.sentences[b - 1][1]), extra))
    return pieces

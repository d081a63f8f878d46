"""A Markdown document cut into chunks by its structure: heading sections, packed by sentence, units kept whole.

Each section (the blocks under one heading path, rag/ingest/markdown.py) is packed greedily up to `max_size`
characters of readable text: paragraphs and list items whole while they fit, a longer paragraph by sentence;
a code block, a display formula and a table are units that are never split mid-line (code longer than `max_size`
is cut at line ends, each piece fenced again; a table and a formula stay whole, whatever their size). A chunk never spans two sections. A last piece
shorter than `min_tail` joins the one before it in its section.
A chunk's text is what the model, the retrievers and the audit read: the title path on its first line
(file title › section › subsection, the way an FAQ entry's first line is its question), then the readable
blocks, one a line. Its source span [start, end) covers the blocks it holds, so the preview colours the
file as written.
Not handled here: reading the Markdown (markdown.py), the Chunk and its ref (chunking.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from rag.ingest.markdown import CODE, HEADING, UNITS, Block, MarkdownDoc
from rag.ingest.sentences import sentence_spans, without_line_markers

PATH_SEP = " › "


@dataclass(frozen=True)
class Piece:
    start: int  # [start, end) in the source text
    end: int
    text: str  # readable: the title line, then the blocks
    path: tuple[str, ...]  # the file title, then the headings
    kinds: tuple[str, ...]  # the kinds of the blocks it holds, in order


@dataclass(frozen=True)
class _Unit:
    start: int
    end: int
    text: str
    kind: str


def title_path(doc: MarkdownDoc, fallback: str, path: tuple[str, ...]) -> tuple[str, ...]:
    root = doc.title or fallback
    return ((root,) if root else ()) + tuple(path)


def pieces(doc: MarkdownDoc, source: str, fallback_title: str, max_size: int, min_tail: int,
           with_title: bool = True) -> list[Piece]:
    """The document's chunks as Pieces, in order (see the module docstring)."""
    out: list[Piece] = []
    for path, blocks in _sections(doc.blocks):
        units = [u for b in blocks for u in _units(b, source, max_size)]
        full = title_path(doc, fallback_title, path)
        head = PATH_SEP.join(full)
        for group in _pack(units, max_size, min_tail):
            body = "\n".join(u.text for u in group)
            text = f"{head}\n{body}" if with_title and head else body
            out.append(Piece(group[0].start, group[-1].end, text, full, tuple(u.kind for u in group)))
    return out


def _sections(blocks: list[Block]) -> list[tuple[tuple[str, ...], list[Block]]]:
    """(heading path, its body blocks) per section: every heading starts one (two sections may share a path: a book
    that repeats a heading), and a heading with no body of its own adds nothing."""
    out: list[tuple[tuple[str, ...], list[Block]]] = []
    fresh = True
    for b in blocks:
        if b.kind == HEADING:
            fresh = True
            continue
        if fresh or not out:
            out.append((b.path, []))
            fresh = False
        out[-1][1].append(b)
    return out


def _size(text: str) -> int:
    """A unit's size, its list marker not counted (a marker only says where an item begins: the sections cut where
    they cut when the reader kept none)."""
    return len(without_line_markers(text))


def _units(b: Block, source: str, max_size: int) -> list[_Unit]:
    if _size(b.text) <= max_size:
        return [_Unit(b.start, b.end, b.text, b.kind)]
    if b.kind in UNITS:
        return _cut_lines(b, source, max_size)
    return _cut_sentences(b, source)


def _cut_lines(b: Block, source: str, max_size: int) -> list[_Unit]:
    """Code over max_size cut at line ends (each piece fenced again); a table (its rows mean nothing without its
    header) and a formula (one line) are kept whole, whatever their size. Each piece's source span starts at the
    start of the source line its first line was read from, so the preview draws the cut where the chunk cuts."""
    if b.kind != CODE:
        return [_Unit(b.start, b.end, b.text, b.kind)]
    lines = b.text.split("\n")
    fence = ""
    if b.kind == CODE and lines[0].startswith("```"):
        fence, lines = lines[0], lines[1:-1]
    groups: list[list[str]] = [[]]
    for line in lines:
        if groups[-1] and sum(len(x) + 1 for x in groups[-1]) + len(line) > max_size:
            groups.append([])
        groups[-1].append(line)
    starts = _source_line_starts(source, b.start, b.end, groups)
    out = []
    for k, g in enumerate(groups):
        text = "\n".join(g)
        e = starts[k + 1] if k + 1 < len(groups) else b.end
        out.append(_Unit(starts[k], e, f"{fence}\n{text}\n```" if fence else text, b.kind))
    return out


def _source_line_starts(source: str, start: int, end: int, groups: list[list[str]]) -> list[int]:
    """Where each group of code lines starts in source[start:end]: the first source line, at or after the previous
    group's, that reads as the group's first non-blank line (indentation aside; the reader may have dropped build
    marks, so lines are matched, not counted). A group not found starts at the line start nearest its share."""
    offsets = [start] + [pos + 1 for pos in range(start, end - 1) if source[pos] == "\n"]  # each source line's start
    found, cursor = [start], 0
    for k, g in enumerate(groups[1:], 1):
        first = next((x.strip() for x in g if x.strip()), "")
        hit = next((i for i in range(cursor + 1, len(offsets))
                    if first and _line_at(source, offsets[i], end).strip() == first), None)
        if hit is None:
            share = start + (end - start) * k // len(groups)
            hit = min(range(len(offsets)), key=lambda i: abs(offsets[i] - share))
            hit = max(hit, cursor + 1) if cursor + 1 < len(offsets) else cursor
        cursor = hit
        found.append(max(offsets[hit], found[-1]))
    return found


def _line_at(source: str, pos: int, end: int) -> str:
    stop = source.find("\n", pos, end)
    return source[pos:stop if stop >= 0 else end]


def _cut_sentences(b: Block, source: str) -> list[_Unit]:
    """A paragraph over max_size as its sentences; each one's source offset found by its first characters."""
    spans = sentence_spans(b.text)
    out, at = [], b.start
    for k, (s, e) in enumerate(spans):
        text = b.text[0 if k == 0 else s:e]  # the first keeps the item's marker
        probe = text[:4]
        found = source.find(probe, at, b.end) if probe else -1
        start = found if found >= 0 else at
        out.append(_Unit(start, b.end, text, b.kind))
        at = start
    fixed = []
    for k, u in enumerate(out):  # each ends where the next starts
        end = out[k + 1].start if k + 1 < len(out) else b.end
        fixed.append(_Unit(u.start, max(u.start, end), u.text, u.kind))
    return fixed


def _pack(units: list[_Unit], max_size: int, min_tail: int) -> list[list[_Unit]]:
    groups: list[list[_Unit]] = []
    size = 0
    for u in units:
        length = _size(u.text)
        if groups and size + 1 + length <= max_size:
            groups[-1].append(u)
            size += 1 + length
        else:
            groups.append([u])
            size = length
    if len(groups) > 1 and sum(_size(u.text) for u in groups[-1]) < min_tail:
        last = groups.pop()
        groups[-1].extend(last)
    return groups


def chunk_kind(kinds: tuple[str, ...]) -> str:
    """"code" when code is most of what a chunk holds, else "text": the label the pages show."""
    if kinds and sum(k == CODE for k in kinds) * 2 > len(kinds):
        return "code"
    return "text"


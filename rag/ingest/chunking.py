"""Chunking: cut each Document into the passages that get embedded, indexed and cited.

Every chunk is a slice of its document: `chunk.text == doc.text[chunk.start:chunk.end]`, so a page can
highlight exactly where a chunk came from. Sentence-based chunks never start or end with whitespace.
Methods (CHUNKERS):
- "fixed": windows of `chunk_size` characters, each starting `chunk_size - overlap` after the last, so
  neighbours share exactly `overlap` characters. Leading/trailing whitespace of the document is skipped;
  a whitespace stretch of at least `chunk_size` characters would make a window of nothing but
  whitespace, so such a window is not emitted and the grid restarts at the next non-whitespace
  character: neighbours either share exactly `overlap` characters or are separated by pure whitespace.
- "sentence": whole sentences (rag/ingest/sentences.py: after 。！？；!?;… , after a "." followed by
  whitespace, and at line breaks) packed greedily up to `target_size`; a sentence longer than that is
  hard-split; a final chunk shorter than `min_tail` is merged into the previous one (so that chunk may
  exceed the target).
- "parent_child": sentence-packed parents of `parent_size`, each cut into sentence-packed children of
  `child_size`. Children are indexed (small, precise); the LLM reads the parent (`context_for`).
- "markdown": one chunk per heading section (#..######, outside code fences) with its heading path;
  a section over `max_size` is sentence-packed, but a table (consecutive lines starting with "|") is
  never split, even when it alone exceeds `max_size`.
- "semantic": cut where the embeddings of adjacent sentences drift apart (semantic.py), within
  `max_size` / `min_size`; needs the embedder (`chunk_documents(..., embedder=...)`).
- "document": the whole document as one chunk (passage corpora, FAQ entries).
ref rule: a document that yields one chunk cites as its doc_id ([faq_003]); otherwise as doc_id#n
(n 1-based). Children cite their parent's ref and have chunk_id f"{parent_ref}.{m}".
Not handled here: token counting (sizes are characters, which suits Chinese).
"""

from __future__ import annotations

import functools
import inspect
import operator
import re
from bisect import bisect_right
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable

from rag.errors import ConfigError
from rag.ingest.documents import Document
from rag.ingest.markdown import is_markdown, read_markdown
from rag.ingest.sections import PATH_SEP, chunk_kind, pieces
from rag.ingest.sentences import hard_split, sentence_spans

Span = tuple[int, int]  # [start, end) character offsets into Document.text


@dataclass(frozen=True)
class Chunk:
    chunk_id: str  # unique in a corpus
    doc_id: str
    text: str  # == document.text[start:end]
    start: int
    end: int
    ref: str  # the id cited as [ref] in answers
    parent_id: str | None = None  # parent-child: chunk_id of the parent (in ChunkSet.parents)
    metadata: dict = field(default_factory=dict)  # title, source, method, heading_path, page, + document metadata


@dataclass(frozen=True)
class ChunkSet:
    chunks: list[Chunk]  # the indexed units (children for parent-child)
    parents: dict[str, Chunk]  # parent chunk_id -> parent (empty unless parent-child)
    method: str
    params: dict  # every parameter the chunker ran with, defaults included


# --------------------------------------------------------------------------------- sentences

_NONWS = re.compile(r"\S")


def _stripped(text: str, a: int, b: int) -> Span | None:
    """[a, b) without leading/trailing whitespace, or None if nothing is left."""
    m = _NONWS.search(text, a, b)
    if m is None:
        return None
    e = b
    while text[e - 1].isspace():
        e -= 1
    return m.start(), e


def _sentences_in(text: str, a: int, b: int) -> list[Span]:
    """Sentence spans inside text[a:b] (what a sentence is: see rag/ingest/sentences.py)."""
    return [(a + s, a + e) for s, e in sentence_spans(text[a:b])]


def _units(text: str, a: int, b: int, size: int, atomic: Iterable[Span] = ()) -> list[Span]:
    """Packing units in [a, b): sentences (hard-split above `size`) and `atomic` spans kept whole."""
    units, pos = [], a
    for s, e in list(atomic) + [(b, b)]:
        for sent in _sentences_in(text, pos, s):
            units.extend(hard_split(text, sent, size) if sent[1] - sent[0] > size else [sent])
        if e > s:
            units.append((s, e))
        pos = e
    return units


def pack(units: list[Span], target: int, min_tail: int = 0, overlap_units: int = 0) -> list[Span]:
    """Greedy packing: add the next unit while the chunk (first start .. last end) stays <= target.

    A unit longer than `target` becomes a chunk on its own. With `overlap_units`, a chunk restarts
    that many units back (dropping carried units that would not leave room for a new one). A last
    chunk shorter than `min_tail` is merged into the previous chunk.
    """
    ranges, i, n = [], 0, len(units)
    while i < n:
        j = i
        while j + 1 < n and units[j + 1][1] - units[i][0] <= target:
            j += 1
        ranges.append((i, j))
        if j == n - 1:
            break
        i = max(j + 1 - overlap_units, i + 1)
        while i <= j and units[j + 1][1] - units[i][0] > target:
            i += 1
    spans = [(units[i][0], units[j][1]) for i, j in ranges]
    if len(spans) > 1 and spans[-1][1] - spans[-1][0] < min_tail:
        last = spans.pop()
        spans[-1] = (spans[-1][0], last[1])
    return spans


# ----------------------------------------------------------------------------- chunk building


def _int(name: str, value, minimum: int) -> int:
    try:
        value = operator.index(value)
    except TypeError:
        raise ConfigError(f"{name}={value!r} must be an integer") from None
    if value < minimum:
        raise ConfigError(f"{name}={value} must be >= {minimum}")
    return value


def _page_label(starts: list[int], s: int, e: int) -> str:
    first, last = bisect_right(starts, s), bisect_right(starts, e - 1)
    return str(first) if first == last else f"{first}-{last}"


def _base_meta(doc: Document, method: str) -> dict:
    base = {"title": doc.title, "source": doc.source}
    base.update({k: v for k, v in doc.metadata.items() if k not in ("page_starts", "pdf_blocks")})
    base["method"] = method
    return base


def _build(doc: Document, method: str, pieces: list[tuple[Span, dict]]) -> list[Chunk]:
    """Spans -> Chunks with the ref rule: one chunk cites as doc_id, several as doc_id#n."""
    base = _base_meta(doc, method)
    starts = [int(x) for x in doc.metadata["page_starts"].split(",")] if doc.metadata.get("page_starts") else []
    chunks = []
    for n, ((s, e), extra) in enumerate(pieces, 1):
        ref = doc.doc_id if len(pieces) == 1 else f"{doc.doc_id}#{n}"
        meta = {**base, **({"page": _page_label(starts, s, e)} if starts else {}), **extra}
        chunks.append(Chunk(ref, doc.doc_id, doc.text[s:e], s, e, ref, None, meta))
    return chunks


# ---------------------------------------------------------------------------------- chunkers


def chunk_fixed(doc: Document, chunk_size: int = 300, overlap: int = 50) -> list[Chunk]:
    chunk_size, overlap = _int("chunk_size", chunk_size, 1), _int("overlap", overlap, 0)
    if overlap >= chunk_size:
        raise ConfigError(f"overlap={overlap} must be < chunk_size={chunk_size}: lower the overlap or raise chunk_size")
    whole = _stripped(doc.text, 0, len(doc.text))
    if whole is None:
        return []
    s, hi = whole
    spans = []
    while True:
        e = min(s + chunk_size, hi)
        if _NONWS.search(doc.text, s, e) is None:  # inside a long whitespace run: restart after it
            found = _NONWS.search(doc.text, e)
            assert found is not None  # text[hi - 1] is not a space (stripped) and e < hi here
            s = found.start()
            continue
        spans.append((s, e))
        if e >= hi:
            break
        s = e - overlap
    return _build(doc, "fixed", [(sp, {}) for sp in spans])


def chunk_sentence(doc: Document, target_size: int = 300, min_tail: int | None = None,
                   overlap_sentences: int = 0) -> list[Chunk]:
    target_size = _int("target_size", target_size, 1)
    min_tail = target_size // 4 if min_tail is None else _int("min_tail", min_tail, 0)
    overlap_sentences = _int("overlap_sentences", overlap_sentences, 0)
    units = _units(doc.text, 0, len(doc.text), target_size)
    spans = pack(units, target_size, min_tail, overlap_sentences)
    return _build(doc, "sentence", [(sp, {}) for sp in spans])


def chunk_parent_child(doc: Document, parent_size: int = 800, child_size: int = 200) -> list[Chunk]:
    """Parents first, then their children; chunk_documents files the parents into ChunkSet.parents."""
    parent_size, child_size = _int("parent_size", parent_size, 1), _int("child_size", child_size, 1)
    if child_size > parent_size:
        raise ConfigError(f"child_size={child_size} must be <= parent_size={parent_size}: lower child_size")
    text = doc.text
    parent_spans = pack(_units(text, 0, len(text), parent_size), parent_size, parent_size // 4)
    parents = _build(doc, "parent_child", [(sp, {"role": "parent"}) for sp in parent_spans])
    children = []
    for p in parents:
        spans = pack(_units(text, p.start, p.end, child_size), child_size, child_size // 4)
        for m, (s, e) in enumerate(spans, 1):
            meta = {**p.metadata, "role": "child", "parent": p.chunk_id}
            children.append(Chunk(f"{p.ref}.{m}", doc.doc_id, text[s:e], s, e, p.ref, p.chunk_id, meta))
    return parents + children


def chunk_markdown(doc: Document, max_size: int = 800, min_tail: int | None = None) -> list[Chunk]:
    """Heading sections packed by sentence, code, formulas and tables kept whole, markup read as text
    (sections.py, markdown.py); each chunk's text opens with its title path."""
    max_size = _int("max_size", max_size, 1)
    min_tail = max_size // 4 if min_tail is None else _int("min_tail", min_tail, 0)
    md = read_markdown(doc.text)
    built = []
    got = pieces(md, doc.text, doc.title if doc.title != doc.source else "", max_size, min_tail)
    for n, p in enumerate(got, 1):
        ref = doc.doc_id if len(got) == 1 else f"{doc.doc_id}#{n}"
        meta = {**_base_meta(doc, "markdown"), "title": PATH_SEP.join(p.path), "heading_path": list(p.path),
                "heading": " > ".join(p.path[1:]), "kind": chunk_kind(p.kinds), "blocks": list(p.kinds)}
        built.append(Chunk(ref, doc.doc_id, p.text, p.start, p.end, ref, None, meta))
    return built


def chunk_pdf(doc: Document, max_size: int = 800, min_tail: int | None = None) -> list[Chunk]:
    """A PDF read as a page layout (pdf_layout.py), cut as a Markdown chapter is: heading sections packed by sentence,
    code, formulas and figure labels kept whole, each chunk's text opening with its title path, each chunk's pages
    (`page`: "132" or "132-133") in its metadata. A PDF read as a text layer (no layout blocks) is cut by sentence."""
    from pathlib import PurePath

    from rag.ingest.markdown import MarkdownDoc

    raw = doc.metadata.get("pdf_blocks")
    if not raw:
        return chunk_sentence(doc, target_size=max_size)
    max_size = _int("max_size", max_size, 1)
    min_tail = max_size // 4 if min_tail is None else _int("min_tail", min_tail, 0)
    blocks = _pdf_blocks(doc, raw)
    title = doc.title if doc.title != doc.source else PurePath(doc.source or doc.doc_id).stem  # no title: the file's
    if title and blocks and blocks[0].kind == "heading" and blocks[0].text == title:  # the title is the path's root
        blocks = [replace(b, path=b.path[1:]) if b.path[:1] == (title,) else b for b in blocks[1:]]
    starts = [int(x) for x in doc.metadata["page_starts"].split(",")] if doc.metadata.get("page_starts") else []
    got = pieces(MarkdownDoc(title, blocks), doc.text, title, max_size, min_tail)
    return [_pdf_chunk(doc, piece, doc.doc_id if len(got) == 1 else f"{doc.doc_id}#{n}", starts)
            for n, piece in enumerate(got, 1)]


def _pdf_blocks(doc: Document, raw: str) -> list:
    """The layout's blocks (kind, start, end, level, page) as Markdown blocks, each with the headings above it."""
    import json

    from rag.ingest.markdown import Block

    kinds = {"prose": "prose", "heading": "heading", "code": "code", "math": "math", "caption": "caption"}
    blocks: list[Block] = []
    path: list[tuple[int, str]] = []  # (level, heading) above the current block
    for kind, start, end, level, _page in json.loads(raw):
        text = doc.text[start:end]
        if kind == "heading":
            path = [(lv, h) for lv, h in path if lv < level] + [(level, text)]
            blocks.append(Block("heading", start, end, text, tuple(h for _, h in path[:-1]), level))
        else:
            blocks.append(Block(kinds.get(kind, "prose"), start, end, text, tuple(h for _, h in path)))
    return blocks


def _pdf_chunk(doc: Document, piece, ref: str, starts: list[int]) -> Chunk:
    """One piece of a PDF's sections as a chunk, with its title path and, where the pages' starts are known, its
    pages."""
    meta = {**_base_meta(doc, "pdf"), "title": PATH_SEP.join(piece.path), "heading_path": list(piece.path),
            "heading": " > ".join(piece.path[1:]), "kind": chunk_kind(piece.kinds), "blocks": list(piece.kinds),
            **({"page": _page_label(starts, piece.start, piece.end)} if starts else {})}
    return Chunk(ref, doc.doc_id, piece.text, piece.start, piece.end, ref, None, meta)


def chunk_auto(doc: Document, target_size: int = 400) -> list[Chunk]:
    """The chunker the document's form asks for (`auto_method`): Markdown by its headings and blocks, a record
    (an FAQ entry, a JSON/CSV row) whole, other text by sentence; `target_size` characters a chunk."""
    target_size = _int("target_size", target_size, 1)
    method, _, _ = auto_method(doc)
    if method == "markdown":
        chunks = chunk_markdown(doc, max_size=target_size)
    elif method == "pdf":
        chunks = chunk_pdf(doc, max_size=target_size)
    elif method == "document":
        chunks = chunk_whole(doc)
    else:
        chunks = chunk_sentence(doc, target_size=target_size)
    return [replace(c, metadata={**c.metadata, "method": f"auto: {method}"}) for c in chunks]


RECORD_MAX = 1500  # characters: a record longer than this (a whole article in one CSV cell) is cut by sentence


def auto_method(doc: Document) -> tuple[str, str, str]:
    """(method, why in English, why in Chinese) for one document under the "auto" chunker."""
    fmt = str(doc.metadata.get("format", ""))
    if is_markdown(fmt):
        return ("markdown", "Markdown: cut at its headings, code, formulas and tables kept whole, markup read as text",
                "Markdown：按标题切分，代码、公式和表格整块保留，标记读成文字")
    if fmt == "pdf" and doc.metadata.get("pdf_blocks"):
        return ("pdf", "PDF read as a page layout: cut at its headings, code, formulas and figures kept whole, running "
                "headers and footers left out", "按版面读取的 PDF：按标题切分，代码、公式和图整块保留，页眉页脚不计入")
    if fmt in ("json", "jsonl", "csv") and len(doc.text) <= RECORD_MAX:
        return ("document", "a record (an FAQ entry, a row): one chunk, whole", "一条记录（FAQ 条目、一行数据）：整条一块")
    return ("sentence", "plain text: sentences packed up to the target size", "纯文本：按句子打包到目标长度")


def chunk_semantic(doc: Document, breakpoint_percentile: float = 95, max_size: int = 800, min_size: int = 100,
                   *, embedder=None) -> list[Chunk]:
    """Cut where adjacent sentences' embeddings drift apart (semantic.py has the rule and the curve)."""
    from rag.ingest.semantic import semantic_spans

    if embedder is None and len(sentence_spans(doc.text)) > 1:
        raise ConfigError("semantic chunking needs an embedder: chunk_documents(docs, 'semantic', embedder=...)")
    return _build(doc, "semantic", semantic_spans(doc, embedder, breakpoint_percentile=breakpoint_percentile,
                                                  max_size=max_size, min_size=min_size))


def chunk_whole(doc: Document) -> list[Chunk]:
    span = _stripped(doc.text, 0, len(doc.text))
    return _build(doc, "document", [(span, {})]) if span else []


CHUNKERS: dict[str, Callable[..., list[Chunk]]] = {
    "fixed": chunk_fixed,
    "sentence": chunk_sentence,
    "parent_child": chunk_parent_child,
    "markdown": chunk_markdown,
    "auto": chunk_auto,
    "semantic": chunk_semantic,
    "document": chunk_whole,
}
NEEDS_EMBEDDER = frozenset({"semantic"})


def chunker_params(method: str) -> dict:
    """name -> default of a chunker's parameters (what a page shows as widgets)."""
    if method not in CHUNKERS:
        raise ConfigError(f"unknown chunking method {method!r}; choose one of: {', '.join(CHUNKERS)}")
    sig = inspect.signature(CHUNKERS[method])
    return {name: p.default for name, p in list(sig.parameters.items())[1:] if p.kind != p.KEYWORD_ONLY}


def chunk_documents(docs: Iterable[Document], method: str = "fixed", embedder=None, **params) -> ChunkSet:
    """Chunk every document with `method`; `embedder` is used by the methods in NEEDS_EMBEDDER only."""
    defaults = chunker_params(method)
    unknown = sorted(set(params) - set(defaults))
    if unknown:
        raise ConfigError(
            f"unknown parameter(s) {', '.join(unknown)} for chunking method {method!r}; "
            f"accepted: {', '.join(defaults) or 'none'}"
        )
    chunker = CHUNKERS[method]
    if method in NEEDS_EMBEDDER:
        chunker = functools.partial(chunker, embedder=embedder)
    chunker(Document("", ""), **params)  # validates the values even for an empty corpus
    produced = [c for doc in docs for c in chunker(doc, **params)]
    seen: set[str] = set()
    for c in produced:
        if c.chunk_id in seen:
            raise ConfigError(
                f"duplicate chunk id {c.chunk_id!r}: two documents share a doc_id; load them with "
                "documents.load_files (which renames clashes) or give the records unique ids"
            )
        seen.add(c.chunk_id)
    parent_ids = {c.parent_id for c in produced if c.parent_id is not None}
    parents = {c.chunk_id: c for c in produced if c.chunk_id in parent_ids}
    chunks = [c for c in produced if c.chunk_id not in parent_ids]
    return ChunkSet(chunks=chunks, parents=parents, method=method, params={**defaults, **params})


def context_for(chunk_set: ChunkSet, chunk: Chunk) -> Chunk:
    """What the LLM reads for a retrieved chunk: its parent for a child, else the chunk itself."""
    if chunk.parent_id is None:
        return chunk
    try:
        return chunk_set.parents[chunk.parent_id]
    except KeyError:
        raise ConfigError(
            f"chunk {chunk.chunk_id!r} names parent {chunk.parent_id!r}, which this ChunkSet lacks; chunk again"
        ) from None

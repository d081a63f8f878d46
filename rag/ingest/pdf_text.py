"""From a PDF's regions to the text a reader keeps: paragraphs joined line by line, code, formula and figure runs as one
block each, margin notes after the paragraph they sit beside, headings on their own line; and the whole reading of a
PDF (`read_pdf`): its pages read and classified (pdf_layout.py), its text, blocks and title.

Lines are joined as a reader joins them: no space between two CJK characters, a hyphen at a Latin line end rejoined,
letter-spacing taken out; a new paragraph starts at a list item, a vertical gap PARAGRAPH_GAP times the document's usual
one, an indented first line, or a short line that ends a sentence. A code run keeps its indentation (from the glyphs'
positions); after a printed MkDocs tab marker only the first tab's code is kept, as the Markdown reader keeps it.
Not handled here: telling the regions apart (pdf_layout.py), cutting the text into chunks (chunking.chunk_pdf).
"""

from __future__ import annotations

import re
import statistics
from dataclasses import replace

from rag.ingest.pdf_layout import (
    CJK,
    CODE,
    FIGURE,
    FOOTER,
    FORMULA,
    HEADER,
    HEADING,
    MAIN,
    MARGIN,
    MARKUP,
    PARAGRAPH_GAP,
    SENTENCE_END,
    Block,
    PageLayout,
    PdfReading,
    Segment,
    classify,
    read_pages,
    readable,
)

_LIST_ITEM = re.compile(r"^(?:\d{1,2}[.)、]\s|[-•·▪●◦*]\s)")
_CJK_CHAR = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LETTER_SPACED = re.compile("(?<=[\u3400-\u9fff\uff0c\u3002]) (?=[\u3400-\u9fff\uff0c\u3002])")


_SPACED_LETTERS = re.compile(r"(?<![A-Za-z])(?:[A-Za-z] ){2,}[A-Za-z](?![A-Za-z])")


def _tidy(text: str) -> str:
    """A segment's text with letter-spacing taken out ("神 经 元" -> "神经元", "R e L U" -> "ReLU": margin notes are
    often set so), and runs of blanks made one."""
    text = _SPACED_LETTERS.sub(lambda m: m.group(0).replace(" ", ""), _LETTER_SPACED.sub("", text))
    return re.sub(r"[ \t\u3000]{2,}", " ", text).strip()


def join_lines(first: str, second: str) -> str:
    """Two lines of one paragraph joined as a reader reads them: nothing between two CJK characters (or after CJK
    punctuation), a hyphenated Latin word rejoined ("recur-" + "rent"), else one space."""
    if not first:
        return second
    if not second:
        return first
    a, b = first[-1], second[0]
    if CJK.match(a) and (CJK.match(b) or not b.isascii() or not b.isalnum()) or CJK.match(b) and not a.isalnum():
        return first + second
    if a == "-" and len(first) > 1 and first[-2].isalpha() and first[-2].isascii() and b.islower():
        return first[:-1] + second
    return first + " " + second


class _Writer:
    """Blocks appended in reading order, with their offsets in the text."""

    def __init__(self, lang: str):
        self.parts: list[str] = []
        self.at = 0
        self.blocks: list[Block] = []
        self.lang = lang

    def add(self, kind: str, text: str, page: int, level: int = 0) -> None:
        text = text.strip()
        if not text:
            return
        if self.parts:
            self.parts.append("\n")
            self.at += 1
        self.blocks.append(Block(kind, self.at, self.at + len(text), level, page))
        self.parts.append(text)
        self.at += len(text)

    def text(self) -> str:
        return "".join(self.parts)


def assemble(pages: list[PageLayout], body: float, lang: str) -> tuple[str, list[Block], list[int]]:
    """(the kept text, its blocks, each page's first offset) from classified pages (see the module docstring)."""
    gaps = [a.box[1] - b.box[3] for p in pages for a, b in zip(p.segments, p.segments[1:])
            if a.region == b.region == MAIN and 0 < a.box[1] - b.box[3] < 3 * body]
    a = _Assembler(body, lang, statistics.median(gaps) if gaps else body / 2)
    for p in pages:
        a.page(p)
    return a.finish()


class _Assembler:
    """Segments in reading order -> blocks: paragraphs joined line by line, code, formula and figure runs as one block
    each, margin notes after the paragraph they sit beside, headings on their own."""

    def __init__(self, body: float, lang: str, line_gap: float):
        self.w = _Writer(lang)
        self.body, self.lang, self.line_gap = body, lang, line_gap
        self.firsts: list[str] = []  # each page's first kept line (its first characters): where the page starts
        self.para: list[str] = []
        self.para_page = 1
        self.notes: list[tuple[str, int]] = []
        self.last: Segment | None = None
        self.run: tuple[str, list[str], int] | None = None  # a code, formula or figure run being collected
        self.tabbed = False  # a printed tab marker came after the last code block (MkDocs: the first tab stands)
        self.code: list[Segment] = []  # the code run's segments, for its indentation

    def page(self, p: PageLayout) -> None:
        self.firsts.append("")
        for s in _notes_joined(p.segments):
            if s.region in (HEADER, FOOTER):
                continue
            if s.region == MARKUP:
                self._flush_run()
                self.tabbed = True
                continue
            if not self.firsts[-1]:
                self.firsts[-1] = (_tidy(s.text) if s.region != CODE else s.text.strip())[:24]
            self.segment(s, _tidy(s.text) if s.region != CODE else s.text.rstrip())
            if s.region == CODE and self.run is not None and self.run[0] == CODE:
                self.code.append(s)

    def segment(self, s: Segment, text: str) -> None:
        if s.region == MARGIN:
            self.notes.append((text, s.page))
            return
        if s.region in (CODE, FORMULA, FIGURE):
            if self.run is not None and self.run[0] != s.region:
                self._flush_run()
            if self.run is None:
                self._flush_para()
                self.run = (s.region, [], s.page)
            self.run[1].append(text)
            return
        self._flush_run()
        self.tabbed = False
        if s.region == HEADING:
            self._flush_para()
            self.w.add("heading", text, s.page, s.level)
            self.last = None
            return
        if self.para and self.last is not None and _new_paragraph(self.last, s, self.body, self.line_gap):
            self._flush_para()
        if not self.para:
            self.para_page = s.page
        self.para.append(text)
        self.last = s

    def _flush_para(self) -> None:
        if self.para:
            text = self.para[0]
            for line in self.para[1:]:
                text = join_lines(text, line)
            self.w.add("prose", text, self.para_page)
            self.para = []
        for note, page in self.notes:
            self.w.add("prose", f"（旁注：{note}）" if self.lang == "zh" else f"(Margin note: {note})", page)
        self.notes.clear()

    def _flush_run(self) -> None:
        if self.run is None:
            return
        kind, lines, page = self.run
        self.run = None
        if kind == CODE:
            lines = _indented(self.code) if len(self.code) == len(lines) else lines
            self.code = []
            code = [x for x in lines if not re.fullmatch(r"`{3,}.*", x.strip())]
            if code and not self.tabbed:  # another tab's code after a printed tab marker: the first tab's stands
                self.w.add("code", "```\n" + "\n".join(code) + "\n```", page)
        elif kind == FORMULA:
            self.w.add("math", "$$ " + " ".join(lines).replace("$$", "") + " $$", page)
        else:
            joined = "、".join(lines) if self.lang == "zh" else "; ".join(lines)
            self.w.add("caption", f"（图：{joined}）" if self.lang == "zh" else f"(Figure: {joined})", page)

    def finish(self) -> tuple[str, list[Block], list[int]]:
        self._flush_run()
        self._flush_para()
        text = self.w.text()
        starts, at = [], 0
        for first in self.firsts:  # a page starts where its first kept line is (a paragraph may run on into it)
            found = text.find(first, at) if first else -1
            at = found if found >= 0 else at  # a page with nothing kept (or a line not found) starts where the last did
            starts.append(at)
        return text, self.w.blocks, starts


def _notes_joined(segs: list[Segment]) -> list[Segment]:
    """A page's segments with each margin note's lines joined into one segment where its first line stands: a line
    set right below the note's last one (no more than a line of its size between them, its left edge within a font
    size) continues it. A note is read whole though its lines come between the body lines they sit beside."""
    out: list[Segment] = []
    last = -1  # where the note being read stands in `out`
    for s in segs:
        if s.region == MARGIN and last >= 0 and _continues(out[last], s):
            note = out[last]
            box = (min(note.box[0], s.box[0]), s.box[1], max(note.box[2], s.box[2]), note.box[3])
            out[last] = replace(note, text=join_lines(note.text, s.text), box=box)
            continue
        if s.region == MARGIN:
            last = len(out)
        out.append(s)
    return out


def _continues(note: Segment, s: Segment) -> bool:
    return 0 <= note.box[1] - s.box[3] <= s.size and abs(note.box[0] - s.box[0]) <= s.size


def _indented(code: list[Segment]) -> list[str]:
    """A code run's lines with their indentation put back: a line starting k advances right of the run's leftmost line
    gets k spaces (the PDF draws indentation as position, not as space characters)."""
    left = min(s.start_x for s in code)
    pitch = statistics.median(s.pitch for s in code) or 1.0
    return [" " * max(0, round((s.start_x - left) / pitch)) + s.text.strip() for s in code]


def _new_paragraph(last: Segment, s: Segment, body: float, line_gap: float) -> bool:
    """Does `s` start a new paragraph after `last`? A list item; a vertical gap PARAGRAPH_GAP times the document's
    usual one between lines (`line_gap`, the median) on the same page; an indented first line; a short last line that
    ends a sentence; across a page break only when the last line ended a sentence."""
    if _LIST_ITEM.match(s.text):
        return True  # a list item starts on its own
    if last.page != s.page:
        return bool(SENTENCE_END.search(last.text))
    gap = last.box[1] - s.box[3]
    if gap > PARAGRAPH_GAP * max(line_gap, 1.0) or gap < -body * 2:  # far below, or a new column above
        return True
    if s.box[0] - last.box[0] > body * 1.5:
        return True  # an indented first line
    return bool(SENTENCE_END.search(last.text)) and last.box[2] < s.box[2] - body * 3




# ------------------------------------------------------------------------------------------- the document

def outline_of(pdf) -> list[tuple[str, int, int]]:
    """(title, level, 1-based page) of the PDF's bookmarks; [] when it has none."""
    out = []
    try:
        for item in pdf.get_toc():
            if item.page_index is not None and item.title:
                out.append((item.title.strip(), int(item.level) + 1, int(item.page_index) + 1))
    except Exception:  # a damaged outline is no outline
        return []
    return out


def read_pdf(pdf, name: str) -> PdfReading:
    """The whole reading of an open pypdfium2 document: regions, the kept text, its blocks."""
    pages = read_pages(pdf)
    outline = outline_of(pdf)
    pages, body = classify(pages, outline)
    sample = "".join(s.text for p in pages for s in p.segments if s.region == MAIN)[:4000]
    cjk = len(_CJK_CHAR.findall(sample))
    lang = "zh" if cjk >= 0.3 * max(1, len(re.findall(r"[A-Za-z]+", sample)) + cjk) else "en"
    text, blocks, starts = assemble(pages, body, lang)
    title = _title(pdf, outline, blocks, text, name)
    return PdfReading(title, text, blocks, pages, starts, body)


def _title(pdf, outline, blocks: list[Block], text: str, name: str) -> str:
    try:
        meta = (pdf.get_metadata_dict().get("Title") or "").strip()
    except Exception:
        meta = ""
    if meta and meta.lower() not in ("untitled", "(anonymous)", "anonymous"):  # reportlab and others write "untitled"
        return readable(meta)
    if outline:
        return readable(outline[0][0])
    heads = [b for b in blocks if b.kind == "heading"]
    if heads:
        top = min(b.level for b in heads)
        first = next(b for b in heads if b.level == top)
        return text[first.start:first.end]
    return name

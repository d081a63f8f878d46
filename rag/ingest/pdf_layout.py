"""A PDF read as a page layout, not a text dump: which region each line of a page is, and the text a reader keeps.

pypdf's text layer puts everything on a page into the text in extraction order: the running header and footer at
every page break (often in the middle of a word), margin notes spliced into sentences, figure labels and axis ticks
as lines, hard line breaks inside Chinese words, CJK characters as their Kangxi-radical twins. This reader takes the
characters with their boxes, font sizes and font names from PDFium (pypdfium2: Apache-2.0 / BSD-3, one 4 MB wheel,
C speed; chosen over pdfminer.six, pure Python and several times slower on a 200-page book, docs/own-documents.md)
and tells the regions apart:

- lines: PDFium's own line breaks, each line cut again where a gap of GAP_EMS font sizes opens between two characters
  (a margin note set on the same baseline as the body is another segment);
- running header and footer: a line in the top or bottom BAND of the page whose text, digits aside, recurs on
  RUNNING_PAGES pages or more (the page number varies), and any line at such a line's height in the same band;
  removed from the text, kept as the page's metadata;
- the main text block: the x-range of the lines in the body font (the commonest size); a line outside it in a
  smaller font is a margin note, attached after the paragraph it sits beside, never spliced into a sentence;
- headings: the PDF's outline where it has one, else lines in a larger font than the body (or a numbered line
  such as "6.2 简单循环网络" a little larger), the level by size; every chunk then gets a title path as a Markdown
  chapter's does (chunking.chunk_pdf);
- code: lines in a monospaced font, kept whole as a fenced block;
- figures and formulas, not prose: text inside an image's box, a short line with no sentence's end set right after
  a small image on its line (an image's label: a browser prints a picture it could not load as an icon and the alt
  text), runs of FIGURE_RUN short label lines with no sentence in them, lines of tick numbers, lines set in a maths
  font or holding private-use glyphs (a flattened formula's brackets); kept out of quotes, test questions and audit
  spans (marked as markdown.nonprose_spans reads: a caption "(图：…)" or a display formula "$$ … $$");
- lines joined as a reader would: no space between two CJK characters, a hyphen at a Latin line end rejoined;
  Kangxi radicals, CJK compatibility ideographs and ligatures mapped to the characters they stand for (NFKC on those
  code points only: the text shows the same glyphs, and BM25, the word rules and evidence strings find them; a
  full-width comma stays a full-width comma).
This module reads the pages and tells the regions apart (`read_pages`, `classify`); pdf_text.py turns the regions
into the kept text with its blocks (kind, offsets, heading level, page) for the chunker (`read_pdf`); each page's
regions (boxes by kind) feed the upload page's region view (pdf_regions.py).
Not handled here: OCR of scanned pages (documents.py says so), tables as tables (their cells are read as lines),
reading order across more than two columns.
"""

from __future__ import annotations

import re
import statistics
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace

BAND = 0.09  # the top and bottom share of a page where running headers and footers live
RUNNING_PAGES = 3  # a line's text (digits aside) on this many pages or more in the band is a running header/footer
RUNNING_SHARE = 0.3  # ... and on at least this share of the pages (a 2-page PDF has no running header)
GAP_EMS = 3.0  # a horizontal gap of this many font sizes inside a line cuts it into two segments
SMALLER = 0.92  # a segment in a font below this share of the body size is "smaller" (a note, a label)
LARGER = 1.15  # a line in a font at least this share of the body size may be a heading
NUMBERED_LARGER = 1.03  # a numbered line ("6.2 简单循环网络") this much larger is a heading
HEADING_CHARS = 60  # a heading is a short line
FIGURE_RUN = 3  # this many short label lines in a row are a figure's labels
LABEL_CHARS = 12  # a figure label is at most this many characters
PARAGRAPH_GAP = 1.8  # a vertical gap this many times the document's usual gap between two lines starts a paragraph

MAIN, HEADER, FOOTER, MARGIN, FIGURE, FORMULA, HEADING, CODE, MARKUP = (
    "main", "header", "footer", "margin", "figure", "formula", "heading", "code", "markup")
REGIONS = (MAIN, HEADING, CODE, FORMULA, FIGURE, MARGIN, HEADER, FOOTER, MARKUP)  # the region view's legend order

CJK = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")
_TWINS = re.compile("[\u2e80-\u2eff\u2f00-\u2fdf\uf900-\ufaff\ufb00-\ufb06]")  # radicals, compat ideographs, ligatures
_PRIVATE = re.compile("[\ue000-\uf8ff]")
_NUMBERED = re.compile(r"^(?:第\s*[\d一二三四五六七八九十]+\s*[章节]|\d+(?:\.\d+){0,3})\s*\S")
_TICKS = re.compile(r"^[\s\d.,+\-−–×%()]+$")
SENTENCE_END = re.compile(r"[。！？；.!?;:：]$")
# an MkDocs tab or admonition marker, printed (with an image carousel's alt text after it); a URL-encoded line (a
# printed link's address); neither is text a reader reads
_TAB_MARKER = re.compile(r'^(?:===|\?\?\?|!!!)\+?\s*(?:[\w-]+\s*)?"[^"]*"|^(?:\?\?\?|!!!)\+?\s*[\w-]+\s*$')
_ENCODED = re.compile(r"%[0-9A-Fa-f]{2}")
_MATH_FONT = re.compile(r"CMMI|CMSY|CMEX|CMBSY|MSAM|MSBM|Math|Symbol|STIX|Cambria Math|Euclid|rsfs", re.I)
_MONO_FONT = re.compile(r"Mono|Courier|Consolas|Menlo|Code|Typewriter|CMTT|SFTT|LMMono|Inconsolata", re.I)


@dataclass(frozen=True)
class Segment:
    """One line of a page, or one part of it cut at a wide gap, with where it sits and how it is set."""

    page: int  # 1-based
    text: str  # as the PDF has it (twins mapped: `readable`)
    box: tuple[float, float, float, float]  # x0, y0, x1, y1 in PDF points, y up
    size: float  # the median font size of its characters
    mono: bool  # set in a monospaced font
    maths: bool  # set (mostly) in a maths font
    region: str = MAIN
    level: int = 0  # a heading's level (1 outermost)
    start_x: float = 0.0  # where its first glyph's advance begins (code indentation is measured from it)
    pitch: float = 0.0  # the median advance of its glyphs (a monospaced font's one width)

    @property
    def height(self) -> float:
        return self.box[3] - self.box[1]

    @property
    def middle(self) -> float:
        return (self.box[1] + self.box[3]) / 2


@dataclass(frozen=True)
class PageLayout:
    number: int  # 1-based
    width: float
    height: float
    segments: list[Segment]  # in reading order
    figures: list[tuple[float, float, float, float]] = field(default_factory=list)  # image boxes
    icons: list[tuple[float, float, float, float]] = field(default_factory=list)  # the smaller images' boxes
    running: list[str] = field(default_factory=list)  # the header and footer lines it had, as read
    images: int = 0  # image objects on the page, any size (a page of them and no text is a scan)


@dataclass(frozen=True)
class Block:
    kind: str  # prose | heading | code | math | caption | note (a margin note: prose, after its paragraph)
    start: int  # [start, end) in the reader's text
    end: int
    level: int = 0
    page: int = 0


@dataclass(frozen=True)
class PdfReading:
    title: str
    text: str  # what a reader keeps, in reading order; blocks separated by "\n"
    blocks: list[Block]
    pages: list[PageLayout]
    page_starts: list[int]  # offset in `text` where each page's first block starts
    body_size: float


# CJK Radicals Supplement code points that stand for a whole character and have no NFKC mapping (a PDF font that
# holds 页 as its radical glyph ⻚ gives U+2EDA): each checked against its Unicode name (C-SIMPLIFIED LEAF -> 页)
RADICALS = dict(zip("⺝⺟⺠⻁⻄⻅⻈⻉⻋⻑⻓⻔⻘⻙⻚⻛⻜⻝⻠⻢⻣⻤⻥⻦⻧⻨⻩⻬⻮⻰⻳",
                    "月母民虎西见讠贝车長长门青韦页风飞食饣马骨鬼鱼鸟卤麦黄齐齿龙龟"))


def readable(text: str) -> str:
    """`text` with the code points that only look like others mapped to them: Kangxi radicals (⼊ for 入) and the
    whole-character CJK radicals (⻚ for 页: RADICALS), CJK compatibility ideographs and Latin ligatures (ﬁ for fi); a
    soft hyphen dropped. Other characters, full-width punctuation included, stay as the PDF has them."""
    text = _TWINS.sub(lambda m: RADICALS.get(m.group(0)) or unicodedata.normalize("NFKC", m.group(0)), text)
    return text.replace("\u00ad", "").replace("\x00", "")


# ------------------------------------------------------------------------------------------- reading

def read_pages(pdf) -> list[PageLayout]:
    """Every page of a pypdfium2 PdfDocument as segments (not yet classified) with its image boxes; a line that a
    drawn bullet opens reads with a "- " (`_bulleted`)."""
    out = []
    for number in range(1, len(pdf) + 1):
        page = pdf[number - 1]
        width, height = page.get_size()
        objects = [(o.type, tuple(o.get_bounds())) for o in page.get_objects() if o.type in (_PATH, _IMAGE)]
        images = [b for kind, b in objects if kind == _IMAGE]
        marks = [b for kind, b in objects if kind == _PATH and max(b[2] - b[0], b[3] - b[1]) <= MARK_POINTS]
        segments = _bulleted(_segments(page.get_textpage(), number), marks)
        out.append(PageLayout(number, width, height, segments, [b for b in images if _big(b)],
                              icons=[b for b in images if not _big(b)], images=len(images)))
    return out


_PATH, _IMAGE = 2, 3  # FPDF_PAGEOBJ_PATH, FPDF_PAGEOBJ_IMAGE
BULLET_EMS = 0.7  # a drawn bullet is a mark at most this many font sizes wide and high ...
BULLET_GAP_EMS = 2.5  # ... ending at most this many font sizes left of its line's first glyph
MARK_POINTS = 16.0  # paths larger than this are no bullet in any font size a page's text is set in (a figure's are)


def _bulleted(segments: list[Segment], paths: list[tuple]) -> list[Segment]:
    """The segments, a list item's first line opening with "- " where the PDF draws its bullet as a small mark (a
    browser or a word processor prints a Markdown list's "•" as a path, not a character: hello_algo's PDF chapters), so
    the item reads as the Markdown reader reads it and a sentence announcing the list is quoted with it
    (rag/answer/lead_ins.py). A mark on its line's height, left of its first glyph, small and about square."""
    if not paths:
        return segments
    out = []
    for s in segments:
        if any(_bullet_of(b, s) for b in paths) and not s.text.lstrip().startswith(("-", "•", "·", "*")):
            s = replace(s, text="- " + s.text)
        out.append(s)
    return out


def _bullet_of(box: tuple, s: Segment) -> bool:
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    return (0 < w <= BULLET_EMS * s.size and 0 < h <= BULLET_EMS * s.size and 0.5 <= w / h <= 2
            and s.box[1] <= (y0 + y1) / 2 <= s.box[3] and 0 <= s.box[0] - x1 <= BULLET_GAP_EMS * s.size)


def _big(box) -> bool:
    x0, y0, x1, y1 = box
    return (x1 - x0) >= 40 and (y1 - y0) >= 30


def _segments(textpage, number: int) -> list[Segment]:
    """The page's lines, built from its characters' boxes (PDFium's own line breaks are not trusted: some printers
    place every glyph on its own and PDFium then breaks after each), each cut where a gap of GAP_EMS font sizes opens.
    A space is put between two Latin characters whose advances (PDFium's loose boxes, not the ink: "." and "1" leave an
    ink gap) are SPACE_EMS of a font size apart when the PDF has no space character there."""
    out = []
    for chars in _lines(_chars(textpage)):
        for piece in _cut(chars):
            seg = _segment(piece, number)
            if seg is not None:
                out.append(seg)
    return out


def _chars(textpage) -> Iterator[tuple]:
    """The page's characters as (char, x0, y0, x1, y1, font size, font name, advance left, advance right), line
    breaks left out and PDFium's end-of-line hyphen mark read as a hyphen."""
    import ctypes

    import pypdfium2.raw as raw

    buf = ctypes.create_string_buffer(96)
    flags = ctypes.c_int()
    x0, x1, y0, y1 = ctypes.c_double(), ctypes.c_double(), ctypes.c_double(), ctypes.c_double()
    loose = raw.FS_RECTF()
    fonts: dict[bytes, str] = {}
    for i in range(textpage.count_chars()):
        ch = chr(raw.FPDFText_GetUnicode(textpage.raw, i))
        if ch in "\r\n":
            continue
        if ch in "\x02\ufffe":  # PDFium's mark for a hyphen that ends a line: a hyphen, rejoined by join_lines
            ch = "-"
        raw.FPDFText_GetCharBox(textpage.raw, i, x0, x1, y0, y1)
        raw.FPDFText_GetLooseCharBox(textpage.raw, i, ctypes.byref(loose))  # the glyph's advance, not its ink
        size = raw.FPDFText_GetFontSize(textpage.raw, i)
        n = raw.FPDFText_GetFontInfo(textpage.raw, i, buf, 96, ctypes.byref(flags))
        key = buf.raw[: max(0, n - 1)]
        font = fonts.get(key) or fonts.setdefault(key, key.decode("latin-1", "replace"))
        yield (ch, x0.value, y0.value, x1.value, y1.value, size, font, loose.left, loose.right)


def _lines(chars: Iterable[tuple]) -> list[list]:
    """The characters in lines (a blank goes with the line it is in; a missing space between two Latin characters is
    put back)."""
    lines: list[list] = []
    line: list = []
    for c in chars:
        ch, size = c[0], c[5]
        if not ch.strip():
            if line:
                line.append(c)
            continue
        ink = [d for d in line if d[0].strip()]
        if ink and _new_line(ink[-1], c):
            lines.append(line)
            line = []
        elif ink and line[-1][0].strip() and c[7] - ink[-1][8] > SPACE_EMS * max(size, 1.0) \
                and not (CJK.match(ch) or CJK.match(ink[-1][0])):
            line.append((" ",) + c[1:])
        line.append(c)
    if line:
        lines.append(line)
    return lines


SPACE_EMS = 0.15  # an advance gap this wide between two Latin characters with no space character between them is one


MONO_PITCH = 0.6  # a monospaced font's advance, in font sizes, where a glyph has no advance of its own


def _new_line(prev: tuple, c: tuple) -> bool:
    """Does character `c` start a new line after `prev`? Its middle is off the line's by more than 0.6 of a font size
    (a sub- or superscript stays), or it starts left of where the last one began (the next line)."""
    size = max(prev[5], c[5], 1.0)
    off = abs((c[2] + c[4]) / 2 - (prev[2] + prev[4]) / 2)
    return off > 0.6 * size or c[1] < prev[1] - 0.5 * size


def _cut(line: list) -> list[list]:
    """A line cut into segments where a gap of GAP_EMS font sizes opens, or a gap wider than one font size where the
    type size changes (a margin note set in a smaller size beside the body, a gutter of an em and a half away: a
    sub- or superscript sits right against its base)."""
    pieces: list[list] = [[]]
    last: tuple | None = None
    for c in line:
        ch, x0, _, x1, _, size = c[:6]
        if ch.strip() and last is not None and pieces[-1]:
            gap, em = x0 - last[3], max(size, last[5], 1.0)
            if gap > GAP_EMS * max(size, 1.0) or (gap > em and min(size, last[5]) < SMALLER * em):
                pieces.append([])
        pieces[-1].append(c)
        if ch.strip():
            last = c
    return [p for p in pieces if p]


def _segment(chars: list, number: int) -> Segment | None:
    ink = [c for c in chars if c[0].strip()]
    if not ink:
        return None
    text = readable("".join(c[0] for c in chars)).strip()
    if not text:
        return None
    box = (min(c[1] for c in ink), min(c[2] for c in ink), max(c[3] for c in ink), max(c[4] for c in ink))
    size = statistics.median(c[5] for c in ink)
    maths, mono = _set_in(ink)
    advances = [c[8] - c[7] for c in ink if c[8] > c[7]]
    return Segment(number, text, box, float(size), mono, maths, start_x=ink[0][7],
                   pitch=statistics.median(advances) if advances else float(size) * MONO_PITCH)


def _set_in(ink: list[tuple]) -> tuple[bool, bool]:
    """(maths: most of the line set in a maths font, code: mostly monospaced, or opening in a monospaced font with
    every ASCII character in it: a code comment's Chinese words are set in a CJK font, "# 初始化小顶堆")."""
    fonts = Counter(c[6] for c in ink)
    maths = sum(k for f, k in fonts.items() if _MATH_FONT.search(f)) * 2 > len(ink)
    mono_chars = [c for c in ink if _MONO_FONT.search(c[6])]
    latin = [c for c in ink if c[0].isascii()]
    mono = len(mono_chars) * 2 > len(ink) or (bool(mono_chars) and mono_chars[0] is ink[0]
                                               and len(mono_chars) == len(latin))
    return maths, mono


# ------------------------------------------------------------------------------------------- regions

def classify(pages: list[PageLayout], outline: Sequence[tuple[str, int, int]] = ()) -> tuple[list[PageLayout], float]:
    """The pages with every segment's region (and a heading's level) set, and the body font size. `outline`:
    (title, level, 1-based page) of the PDF's bookmarks, when it has them."""
    # the body font: the commonest size of the characters not set in a monospaced font (a programming book's code can
    # outnumber its prose)
    sizes = Counter(round(s.size * 2) / 2 for p in pages for s in p.segments if not s.mono for _ in s.text)
    body = sizes.most_common(1)[0][0] if sizes else 10.0
    running = _running(pages)
    blocks = _main_blocks(pages, body)
    heading_sizes = sorted({round(s.size * 2) / 2 for p in pages for s in p.segments if s.size >= body * LARGER},
                           reverse=True)
    by_page: dict[int, list[tuple[str, int]]] = {}
    for title, level, page in outline:
        by_page.setdefault(page, []).append((_key(title), level))
    out = []
    for p in pages:
        main_x = blocks[p.number % 2]
        look = _Look(running, main_x, body, tuple(heading_sizes), bool(outline))
        segs = []
        for s in p.segments:
            region, level = _region(s, p, look, by_page.get(p.number, []))
            segs.append(replace(s, region=region, level=level))
        segs = _label_runs(_columns(segs, main_x, body))
        kept = [s.text for s in segs if s.region in (HEADER, FOOTER)]
        out.append(replace(p, segments=segs, running=kept))
    return out, body


def _key(text: str) -> str:
    return re.sub(r"\s+", "", readable(text)).lower()


def _digitless(text: str) -> str:
    return re.sub(r"\d+", "#", re.sub(r"\s+", "", text))


def _in_band(s: Segment, p: PageLayout) -> str | None:
    if s.box[1] >= p.height * (1 - BAND):
        return HEADER
    if s.box[3] <= p.height * BAND:
        return FOOTER
    return None


def _running(pages: list[PageLayout]) -> dict[int, set]:
    """page -> the (band, text digits aside) of its running lines, and the heights they sit at, by band."""
    seen: Counter = Counter()
    for p in pages:
        keys = {(band, _digitless(s.text)) for s in p.segments if (band := _in_band(s, p))}
        seen.update(keys)
    # on RUNNING_PAGES pages, or on every page of a shorter PDF of two or more (one page alone cannot tell)
    least = max(min(RUNNING_PAGES, len(pages)), 2, int(RUNNING_SHARE * len(pages) + 0.999))
    repeated = {k for k, n in seen.items() if n >= least}
    heights: dict[str, set] = {HEADER: set(), FOOTER: set()}
    for p in pages:
        for s in p.segments:
            band = _in_band(s, p)
            if band and (band, _digitless(s.text)) in repeated:
                heights[band].add(round(s.middle))
    return {0: repeated, 1: heights}  # type: ignore[dict-item]


def _main_blocks(pages: list[PageLayout], body: float) -> dict[int, tuple[float, float]]:
    """The main text block of the even (0) and the odd (1) pages: a two-sided book shifts its block between left and
    right pages, its margin notes beside it on the outer side (page 3's notes where page 4's body text runs). A
    parity with no line in the body font takes the whole document's block."""
    whole = _main_block(pages, body) or (0.0, max((p.width for p in pages), default=600.0))
    return {parity: _main_block([p for p in pages if p.number % 2 == parity], body) or whole for parity in (0, 1)}


def _main_block(pages: list[PageLayout], body: float) -> tuple[float, float] | None:
    """The x-range of the lines set in the body font: their 5th percentile left edge and 95th right edge; None when
    `pages` have no such line."""
    lines = [s for p in pages for s in p.segments if abs(s.size - body) <= 0.6 and len(s.text) > 8]
    if not lines:
        return None
    lefts = sorted(s.box[0] for s in lines)
    rights = sorted(s.box[2] for s in lines)
    return lefts[len(lefts) // 20], rights[min(len(rights) - 1, len(rights) * 19 // 20)]


@dataclass(frozen=True)
class _Look:
    """What the whole document says a line's region is read against."""

    running: dict  # _running's: the running lines (band, text digits aside) and the heights they sit at
    main_x: tuple[float, float]  # the main text block's x-range
    body: float  # the body font size
    heading_sizes: tuple[float, ...]  # the sizes larger than the body's, largest first (a heading's level)
    has_outline: bool  # the PDF has bookmarks: headings come from them


def _region(s: Segment, p: PageLayout, look: _Look, outline: list[tuple[str, int]]) -> tuple[str, int]:
    """The region of segment `s` of page `p`, and a heading's level (0 for the others). `outline`: the bookmarks on
    this page, (title as a key, level). The first reading that places it wins: the running header or footer, a region
    that is no prose (markup, a figure, the margin, code, a formula), a heading, axis ticks; else the main text."""
    return (_running_band(s, p, look) or _not_prose(s, p, look) or _heading(s, look, outline) or _ticks(s)
            or (MAIN, 0))


def _running_band(s: Segment, p: PageLayout, look: _Look) -> tuple[str, int] | None:
    """The page's header or footer band, where the segment repeats there across pages (its text, digits aside, or its
    height)."""
    band = _in_band(s, p)
    if band is not None and ((band, _digitless(s.text)) in look.running[0] or
                             any(abs(s.middle - h) <= 2 for h in look.running[1][band])):
        return band, 0
    return None


def _not_prose(s: Segment, p: PageLayout, look: _Look) -> tuple[str, int] | None:
    """Markup left in the text, a line inside a figure's box, a smaller line out in the margin, code, a formula."""
    if _TAB_MARKER.match(s.text) or (len(s.text) > 12 and 3 * len(_ENCODED.findall(s.text)) >= 0.3 * len(s.text)):
        return MARKUP, 0
    if any(f[0] - 1 <= (s.box[0] + s.box[2]) / 2 <= f[2] + 1 and f[1] - 1 <= s.middle <= f[3] + 1 for f in p.figures):
        return FIGURE, 0
    if _labels_icon(s, p, look.main_x[1]):
        return FIGURE, 0
    if _in_margin(s, look.main_x, look.body):
        return MARGIN, 0
    if s.mono:
        return CODE, 0
    if s.maths or _PRIVATE.search(s.text):
        return FORMULA, 0
    return None


def _labels_icon(s: Segment, p: PageLayout, right: float) -> bool:
    """A short line with no sentence's end that starts right after a small image on its line and stops short of the
    main block's `right` edge: the image's label (a page printed from the web shows a picture it could not load as an
    icon followed by its alt text, "爬楼梯对应递归树"). Right after: the icon ends where the line starts, or closer than
    the gap that would cut a line (GAP_EMS font sizes); short of the edge by as much, so the first line of a paragraph
    that opens with an inline icon, which runs on to the next line, stays prose."""
    if len(s.text) > HEADING_CHARS or SENTENCE_END.search(s.text) or s.box[2] > right - GAP_EMS * s.size:
        return False
    return any(s.box[0] - GAP_EMS * s.size <= i[2] <= s.box[0] + 1 and i[1] < s.box[3] and s.box[1] < i[3]
               for i in p.icons)


def _in_margin(s: Segment, main_x: tuple[float, float], body: float) -> bool:
    """A line smaller than the body text whose centre lies outside the main block, or that ends before it or starts
    after it (within a body size)."""
    center = (s.box[0] + s.box[2]) / 2
    slack = body
    return s.size < body * SMALLER and (center < main_x[0] - slack or center > main_x[1] + slack
                                        or s.box[2] <= main_x[0] + slack or s.box[0] >= main_x[1] - slack)


def _heading(s: Segment, look: _Look, outline: list[tuple[str, int]]) -> tuple[str, int] | None:
    """A heading and its level: a bookmark's title, or a short line without a sentence's end set larger than the body
    (its level by its size among the headings' sizes), or a numbered one a little larger ("2.3 …": its dots)."""
    key = _key(s.text)
    if look.has_outline:
        for title, level in outline:
            if key and (key == title or (len(key) >= 2 and title.endswith(key) and len(key) * 2 >= len(title))):
                return HEADING, level
    short = len(s.text) <= HEADING_CHARS and not SENTENCE_END.search(s.text)
    if short and s.size >= look.body * LARGER:
        size = round(s.size * 2) / 2
        return HEADING, (look.heading_sizes.index(size) + 1 if size in look.heading_sizes else 1)
    if short and s.size >= look.body * NUMBERED_LARGER and _NUMBERED.match(s.text):
        return HEADING, s.text.split()[0].count(".") + 1
    return None


def _ticks(s: Segment) -> tuple[str, int] | None:
    """Axis ticks: −6 −4 −2 2 4 6."""
    if _TICKS.match(s.text) and sum(ch.isdigit() for ch in s.text) >= 2 and len(s.text.split()) >= 3:
        return FIGURE, 0
    return None


def _columns(segs: list[Segment], main_x: tuple[float, float], body: float) -> list[Segment]:
    """A two-column page in reading order: the left column's segments, then the right's (a line that spans the gutter,
    a title across both, stays where it was among the left column's). A page is two-column when most of its body
    lines sit wholly on one side of the main block's middle and some sit on each side."""
    mid = (main_x[0] + main_x[1]) / 2
    if not _two_columns(segs, mid, body):
        return segs
    first = [s for s in segs if s.box[0] < mid - body * 0.5 or s.region in (HEADER, FOOTER)]
    return first + [s for s in segs if not (s.box[0] < mid - body * 0.5 or s.region in (HEADER, FOOTER))]


def _two_columns(segs: list[Segment], mid: float, body: float) -> bool:
    """Most body lines sit wholly on one side of `mid` (within half a body size) and at least three on each side."""
    body_lines = [s for s in segs if s.region == MAIN and len(s.text) > 3]
    left = [s for s in body_lines if s.box[2] <= mid + body * 0.5]
    right = [s for s in body_lines if s.box[0] >= mid - body * 0.5]
    return not (len(body_lines) < 6 or len(left) + len(right) < 0.8 * len(body_lines) or min(len(left), len(right)) < 3)


def _label_runs(segs: list[Segment]) -> list[Segment]:
    """Runs of FIGURE_RUN or more short main or margin lines with no sentence in them ("Conv", "1x1+1(S)", "输入层";
    a word set letter by letter down a figure in the margin) are a figure's labels."""
    out = list(segs)
    run: list[int] = []

    def close() -> None:
        if len(run) >= FIGURE_RUN:
            for k in run:
                out[k] = replace(out[k], region=FIGURE)
        run.clear()

    for i, s in enumerate(segs):
        label = s.region in (MAIN, MARGIN) and len(s.text) <= LABEL_CHARS and not SENTENCE_END.search(s.text) \
            and not re.search(r"[，,、]", s.text)
        if label:
            run.append(i)
        else:
            close()
    close()
    return out

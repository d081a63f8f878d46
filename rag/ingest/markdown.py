"""A Markdown file read as a document: blocks with their source spans, their kind and their readable text.

A teacher's chapter is not a string. Headings give every block a title path (file title › section ›
subsection); a fenced code block, a display formula ($$ … $$) and a table are units that a chunker keeps
whole (never cut mid-line); the markup of the two documentation dialects course books are written in becomes
readable text for the model, the audit and every quote:
- Sphinx/d2l roles: :numref:`fig_x` -> the figure's caption (or the label), :cite:`Key` -> (Key), :eqref:,
  :ref:, :label: lines and :width: lines dropped, :begin_tab:/:end_tab: dropped (the tab's body kept);
- MkDocs Material: admonitions (!!! note "title", ??? collapsible) and content tabs (=== "Python") with their
  4-space-indented bodies (the body is read, the marker is not; of a group of tabs that hold only code, the
  first tab's code stands for the others), include markers (```src [file]{...}```, --8<--) dropped,
  `<p align="center"> 表 <id> &nbsp; caption </p>` and `<div align=center>图 2.1 caption</div>` -> (表：caption), (图：caption);
- images -> their alt text as a caption, "(图：alt)" / "(Figure: alt)", or nothing when the alt is the file's
  stem (an image carousel's "binary_search_step2"); links -> their text; HTML tags and comments dropped (the
  text inside a tag kept), entities read (&nbsp; -> a space); **bold**, *emphasis*, <u>…</u> -> their text;
- soft line breaks inside a paragraph are joined (no space between two Chinese characters), as a Markdown
  renderer joins them, so a sentence wrapped over three lines is one sentence;
- a list item's first paragraph opens with its marker: "- " for a bullet, the renderer's number for an ordered list
  ("3. ", counted from the list's start): where an item begins is structure a quote needs (a sentence announcing a
  list runs into its items, rag/answer/lead_ins.py). A sentence is read without its marker (sentences.py), and the
  index, the rerankers and the sections' sizes read the text without markers, so a chunk is found and cut as before.
Inline code keeps its backticks and inline maths its $…$: they are text a reader needs (`nums[m]`,
$O(n \\log n)$), and the pages draw $…$ as formulas.

Readable text marks what is not prose, so no quote, test question or audit span is built from it
(`nonprose_spans`): code stays fenced (```lang … ```), a display formula is one line of its own between $$, a
table keeps its | rows, a caption is wrapped as above. The same marks hold in any text, so the rule is one.
The structure is CommonMark's: the reader walks the tree markdown-it-py parses (rag/ingest/markdown_rules.py adds
front matter, admonitions, content tabs and display formulas), so setext headings, indented code, a list item's
fence, HTML blocks and link reference definitions read as any renderer reads them; this module says what each node
is as a block of a chapter. The text inside a block (roles, links, emphasis) is read by `inline_text`'s rules.
Offsets: every Block keeps [start, end) in the source, so the upload page's preview shows the file as written.
Not handled here: HTML documents, reStructuredText, Jupyter notebooks; packing blocks into chunks (chunking.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# A block's kind: "prose" (a paragraph, a list item, a quote, an admonition's title), "code", "math", "table",
# "caption" (an image's alt text, a table caption), "heading" (only sets the title path). Dropped markup
# (labels, comments, include markers, tab markers) makes no block.
PROSE, CODE, MATH, TABLE, CAPTION, HEADING = "prose", "code", "math", "table", "caption", "heading"
UNITS = frozenset({CODE, MATH, TABLE})  # kept whole by the chunker (a longer one is cut at line ends only)


@dataclass(frozen=True)
class Block:
    kind: str
    start: int  # [start, end) in the source text
    end: int
    text: str  # readable text ("" never: such a block is not made)
    path: tuple[str, ...] = ()  # the headings above it, outermost first (the file's title not included)
    level: int = 0  # a heading's level (1-6); 0 otherwise
    lang: str = ""  # a code block's language


@dataclass(frozen=True)
class MarkdownDoc:
    title: str  # the first level-1 heading, readable ("" when there is none)
    blocks: list[Block] = field(default_factory=list)

    def body(self) -> list[Block]:
        """The blocks a chunk is made of (headings only name the path)."""
        return [b for b in self.blocks if b.kind != HEADING]


# ---------------------------------------------------------------------------------------- reading

_Line = tuple[str, int]  # (a line of the source, its offset)

_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")  # for the label pass (_labels)
_LABEL_LINE = re.compile(r"^\s*:(label|eqlabel|width|height|begin_tab|end_tab)\s*:(`[^`]*`)?\s*$")
_INCLUDE = re.compile(r"^\s*(--8<--|\{%\s*include|\[file\]\{)")
_CAPTION_P = re.compile(r"^\s*<p[^>]*>\s*(表|图|Table|Figure|Fig\.)\s*(?:<id>|[\w.\-]*)\s*(?:&nbsp;|\s)*(.*?)\s*</p>\s*$",
                        re.I)
# `<div align=center>图 3.30 Sarsa代码实现示意</div>` (datawhale's books: easy-rl draws 82 figures so): a caption only with
# a figure number, so "<div>图灵机是……</div>" stays a sentence
_CAPTION_DIV = re.compile(r"^\s*<(div|center|figcaption)\b[^>]*>\s*(表|图|Table|Figure|Fig\.)\s*\d+(?:[.\-]\d+)*[:：.]?"
                          r"\s*(?:&nbsp;|\s)*(.*?)\s*</\1>\s*$", re.I)
_IMAGE_LINE = re.compile(r"^\s*(!\[[^\]]*\]\([^)]*\)\s*)+(\{[^}]*\})?\s*$")
_HTML_ONLY = re.compile(r"^\s*</?[A-Za-z][^>]*>\s*$")
_COMMENT_LINES = re.compile(r"<!--.*?(-->|\Z)", re.S)


def _lines(text: str) -> list[_Line]:
    out, pos = [], 0
    for line in text.split("\n"):
        out.append((line, pos))
        pos += len(line) + 1
    return out


class _Reader:
    """A walk over markdown-it's syntax tree (rag/ingest/markdown_rules.py), blocks appended in order. The tree
    gives the structure (CommonMark's, so setext headings, reference links, lists holding code, indented code
    and escapes read as any renderer reads them); this class says what each node is as a block of the chapter,
    with its offsets in the source."""

    def __init__(self, source: str, labels: dict[str, str], zh: bool):
        self.lines = _lines(source)
        self.blocks: list[Block] = []
        self.labels = labels
        self.zh = zh
        self.path: list[tuple[int, str]] = []
        self.title = ""
        self.env: dict = {}  # the parser's environment: the file's link reference definitions
        self.marker = ""  # the marker ("- ", "3. ") the first paragraph of the list item being read opens with

    def heading_path(self) -> tuple[str, ...]:
        return tuple(t for _, t in self.path)

    def add(self, kind: str, start: int, end: int, text: str, **extra) -> None:
        text = text.strip()
        if text:
            self.blocks.append(Block(kind, start, end, text, self.heading_path(), **extra))

    def span(self, first: int, last: int, head: str = "") -> tuple[int, int]:
        """[start, end) of source lines first..last: from where `head` (the node's first text) sits on the first
        line, or its first non-blank character, to the last line's end."""
        line, at = self.lines[first]
        col = line.find(head) if head else -1
        if col < 0:
            col = len(line) - len(line.lstrip())
        last_line, last_at = self.lines[min(last, len(self.lines) - 1)]
        return at + col, last_at + len(last_line)

    def read(self, source: str, base: int = 0) -> None:
        """Parse `source` (the file, or lines base.. of it re-read) and walk its tree."""
        from markdown_it.tree import SyntaxTreeNode

        from rag.ingest.markdown_rules import MAX_NESTING, parser

        env: dict = {}
        tokens = parser().parse(source, env)
        self.env.setdefault("references", {}).update(env.get("references", {}))  # [text][ref] links resolve
        if any(t.level >= MAX_NESTING - 2 for t in tokens):  # nested past the parser's limit: what lies deeper
            self._plain(source, base)                          # would be lost, so the file is read as paragraphs
            return
        self.walk(SyntaxTreeNode(tokens).children, base)

    def walk(self, nodes: list, base: int) -> None:
        """Sibling nodes in order; a run of content tabs is read as one group (`_tabs`)."""
        i = 0
        while i < len(nodes):
            j = i
            while j < len(nodes) and nodes[j].type == "tab":
                j += 1
            if j > i:
                self._tabs(nodes[i:j], base)
                i = j
            else:
                self.node(nodes[i], base)
                i += 1

    def _plain(self, source: str, base: int) -> None:
        """`source` as paragraphs between blank lines, markup read by the inline rules only."""
        run: list[tuple[int, str]] = []
        for k, line in enumerate([*source.split("\n"), ""]):
            if line.strip():
                run.append((base + k, line.lstrip(" >-*+")))
            elif run:
                self.add(PROSE, *self.span(run[0][0], run[-1][0]), self.inline(self.join([t for _, t in run])))
                run = []

    def node(self, node, base: int) -> None:  # noqa: C901 - a dispatch over the node's kind, one branch each
        kind = node.type
        first, end = (node.map[0] + base, node.map[1] + base) if node.map else (0, 0)
        if kind == "heading":
            self._heading(first, int(node.tag[1]), node.children[0].content)
        elif kind == "paragraph":  # a list item that is one link is a reading list's entry, kept
            self._paragraph(first, node.children[0].content, links=node.parent.type == "list_item")
        elif kind in ("fence", "code_block"):
            self._code(node, first, end)
        elif kind == "math_display":
            self.add(MATH, *self.span(first, end - 1), _display_math(node.content))
            after = node.meta["after"]
            if after.strip() and not _LABEL_LINE.match(after):  # "$$ … $$ 其中…" on the closing line
                self._paragraph(node.meta["after_line"] + base, after.strip())
        elif kind == "table":
            self._table(node, first, end)
        elif kind == "html_block":
            self._html(node.content, first)
        elif kind == "admonition":
            self._admonition(node, base)
        elif kind in ("bullet_list", "ordered_list"):
            self._list(node, base)
        elif kind in ("list_item", "blockquote"):
            self.walk(node.children, base)
        # front matter, a thematic break, a link reference definition: nothing to read

    # -- block kinds

    def _list(self, node, base: int) -> None:
        """A list's items, each item's first paragraph opening with its marker: "- " for a bullet, the number the
        renderer shows for an ordered list (its start, counted on: every item may say "1."). The marker says where an
        item begins, so a sentence that announces a list is quoted with it (rag/answer/lead_ins.py); a sentence is
        read without it (rag/ingest/sentences.py)."""
        start = int(node.attrs.get("start", 1) or 1)
        for k, item in enumerate(node.children):
            self.marker = f"{start + k}. " if node.type == "ordered_list" else "- "
            self.walk(item.children, base)
            self.marker = ""

    def _heading(self, line: int, level: int, raw: str) -> None:
        text = self.inline(raw)
        if level == 1 and not self.title:
            self.title = text
            self.path = []
            return
        while self.path and self.path[-1][0] >= level:
            self.path.pop()
        if text:
            self.path.append((level, text))
            start, end = self.span(line, line)
            self.blocks.append(Block(HEADING, start, end, text, self.heading_path(), level=level))

    def _code(self, node, first: int, end: int) -> None:
        lang = _fence_lang(node.info) if node.type == "fence" else ""
        code = node.content.strip("\n")
        start, stop = self.span(first, end - 1)
        body = code.split("\n")
        if lang in ("src", "") and code and all(_INCLUDE.match(t) or not t.strip() for t in body):
            return  # an include marker: the code is not in this file
        if lang in ("math", "latex") or (lang == "" and code.startswith("\\begin")):
            self.add(MATH, start, stop, _display_math(code))
        elif code.strip() and not self._alternative(code):
            code = "\n".join(t for t in body if not _BUILD_MARK.match(t)).strip("\n")  # d2l's "#@tab …"
            self.add(CODE, start, stop, _fenced(code, lang), lang=lang)

    def _alternative(self, code: str) -> bool:
        """d2l's framework variants: a code block opening "#@tab pytorch" right after another code block is the
        same step for another framework (the first stands for them, as the first of a group of code tabs does)."""
        head = code.lstrip().split("\n", 1)[0].strip()
        return (head.startswith("#@tab") and "all" not in head and bool(self.blocks)
                and self.blocks[-1].kind == CODE)

    def _paragraph(self, first: int, content: str, links: bool = False) -> None:
        """A paragraph's lines (one per source line): a line of images is their captions, a caption paragraph
        (<p>表 …</p>) a caption, a label or include line nothing; the lines between are prose, joined."""
        run: list[tuple[int, str]] = []

        def flush() -> None:
            if run:
                text = self.join([t for _, t in run])
                if links or not _LINK_ONLY.fullmatch(text.strip()):  # one web link ("[Discussions](…)"): navigation
                    readable = self.inline(text).strip()
                    if readable:  # a list item's first paragraph opens with its marker
                        readable, self.marker = self.marker + readable, ""
                    self.add(PROSE, *self.span(run[0][0], run[-1][0], run[0][1]), readable)
                run.clear()

        for k, text in enumerate(content.split("\n")):
            line = first + k
            if _IMAGE_LINE.match(text):
                flush()
                start, end = self.span(line, line)
                for alt in _images(text):
                    self.add(CAPTION, start, end, self.caption("图", alt))
            elif (caption := _caption_line(text)) is not None:
                flush()
                self.add(CAPTION, *self.span(line, line), self.caption(caption[0], self.inline(caption[1])))
            elif _LABEL_LINE.match(text) or _INCLUDE.match(text) or _HTML_ONLY.match(text):
                flush()
            else:
                run.append((line, text))
        flush()

    def _html(self, content: str, first: int) -> None:
        """An HTML block: a caption paragraph is a caption, comments and lines of tags are dropped, and what is
        left (a sentence inside a <div>, a table under a caption) is Markdown read again, at its own lines."""
        content = _COMMENT_LINES.sub(lambda m: "\n" * m.group(0).count("\n"), content)
        rest = []
        for k, text in enumerate(content.split("\n")):
            if (caption := _caption_line(text)) is not None:
                self.add(CAPTION, *self.span(first + k, first + k), self.caption(caption[0], self.inline(caption[1])))
                text = ""
            elif _HTML_ONLY.match(text):
                text = ""
            rest.append(text)
        if any(t.strip() for t in rest):
            indent = min(len(t) - len(t.lstrip()) for t in rest if t.strip())
            again = "\n".join(_TAG.sub("", t[indent:]) if t.strip() else "" for t in rest)
            if again.strip() and again != content:  # re-read only what changed ("<div>图灵机是……</div>" on one line:
                self.read(again, first)  # its tags; the text was dropped when only the tags changed)

    def _table(self, node, first: int, end: int) -> None:
        rows = []
        for section in node.children:
            for tr in section.children:
                cells = [self.inline(cell.children[0].content if cell.children else "") for cell in tr.children]
                if any(cells):  # a :label: line under the table reads as a row of nothing
                    rows.append("| " + " | ".join(cells) + " |")
        self.add(TABLE, *self.span(first, end - 1), "\n".join(rows))

    def _admonition(self, node, base: int) -> None:
        if node.meta.get("tag") == "pythontutor":  # a visualiser's link, thousands of characters of noise
            return
        titled = bool(node.children) and node.children[0].type == "admonition_title"
        if titled and '"' in node.info:  # none written: the parser's default (the kind's name, "Tip") is not the book's
            inline = node.children[0].children[0]
            line = inline.map[0] + base
            self.add(PROSE, *self.span(line, line), self.inline(inline.content))
        self.walk(node.children[1:] if titled else node.children, base)

    def _tabs(self, group: list, base: int) -> None:
        """A run of content tabs. Of tabs that hold only code (the same program in other languages) the first
        stands for the others; other tabs (an image carousel, prose) are each read."""
        for tab in group[:1] if all(_only_code(tab) for tab in group) else group:
            self.walk(tab.children, base)

    # -- text

    def join(self, parts: list[str]) -> str:
        """Soft-wrapped lines as one line, as a Markdown renderer joins them: no space between two CJK characters."""
        out = ""
        for part in (p.strip() for p in parts):
            if not part:
                continue
            if out and not (_cjk(out[-1]) and _cjk(part[0])):
                out += " "
            out += part
        return out

    def inline(self, text: str) -> str:
        return inline_text(text, self.labels, self.zh, self.env)

    def caption(self, kind: str, text: str) -> str:
        text = text.strip()
        if not text:
            return ""
        word = {"表": "表", "table": "表"}.get(kind.lower(), "图") if self.zh else \
            ("Table" if kind.lower() in ("表", "table") else "Figure")
        return f"（{word}：{text}）" if self.zh else f"({word}: {text})"


def _caption_line(text: str) -> tuple[str, str] | None:
    """(kind, caption) of a caption written as one HTML line (`<p align="center"> 表 <id> &nbsp; caption </p>`,
    `<div align=center>图 2.1 caption</div>`), else None."""
    if (m := _CAPTION_P.match(text)) is not None:
        return m.group(1), m.group(2)
    if (m := _CAPTION_DIV.match(text)) is not None:
        return m.group(2), m.group(3)
    return None


def _only_code(tab) -> bool:
    """A tab whose body is nothing but fenced code."""
    return bool(tab.children) and all(child.type == "fence" for child in tab.children)


def _fence_lang(info: str) -> str:
    """```python, ```{.python .input}, ```src -> python, python, src."""
    m = re.search(r"[\w+#-]+", info)
    return m.group(0).lower() if m else ""


def _fenced(code: str, lang: str) -> str:
    return f"```{lang}\n{code}\n```"


def _display_math(body: str) -> str:
    """A display formula as one readable line: its LaTeX between $$ (the pages draw it; a line break in LaTeX is a
    space), label roles dropped. One line, so no sentence of prose ever starts inside a formula."""
    body = re.sub(r":(?:eq)?label:`[^`]*`", "", body)
    body = " ".join(line.strip() for line in body.split("\n") if line.strip())
    return f"$${body}$$" if body else ""


def _cjk(ch: str) -> bool:
    return "\u3000" <= ch <= "\u9fff" or "\uff00" <= ch <= "\uffef" or "\uf900" <= ch <= "\ufaff"


def _images(line: str) -> list[str]:
    """The alt texts of a line of images, less those that only name the file (a carousel's "step2")."""
    out = []
    for alt, url in re.findall(r"!\[([^\]]*)\]\(([^)\s]*)[^)]*\)", line):
        stem = re.sub(r"\.\w+$", "", url.rsplit("/", 1)[-1])
        alt = alt.strip()
        if alt and alt.replace("-", "_").lower() != stem.replace("-", "_").lower():
            out.append(inline_text(alt, {}, True))
    return out


# --------------------------------------------------------------------------------------- inline

_BUILD_MARK = re.compile(r"\s*#@(?:tab|save|hide)\b.*")  # a d2l build directive alone on a code line, not code
_LINK_ONLY = re.compile(r"\[[^\]\n]+\]\(https?://[^)\s]+\)")
# What a reference to another place is called when its target is not in this document (a role's key is not prose)
_TARGET_KINDS = {"fig": ("图", " the figure"), "img": ("图", " the figure"), "tab": ("表", " the table"),
                 "sec": ("另一节", " another section"), "subsec": ("另一节", " another section"),
                 "chap": ("另一章", " another chapter"), "eq": ("那个式子", " the equation")}
_ROLE = re.compile(r"\s?:(numref|ref|eqref|cite|citet|citep|label|eqlabel|width|doc|term|math)\s*:`([^`]*)`")
_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)(\{[^}]*\})?")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_TAG = re.compile(r"</?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_DISPLAY_SPAN = re.compile(r"(?<!\\)\$\$(?!\$)(.+?)(?<!\\)\$\$")
_MATH_SPAN = re.compile(r"(?<![\\$])\$(?!\$)(.+?)(?<![\\$])\$")
_STRONG = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EMPH = re.compile(r"(?<!\*)\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?!\*)")  # 引入了*记忆元*: inside a word, too
_EMPH_U = re.compile(r"(?<![A-Za-z0-9_])_(?=\S)([^_\n]+?)(?<=\S)_(?![A-Za-z0-9_])")  # not inside snake_case
# d2l's slide marks: [**text**] and (**text**) show a phrase on the slides; a bracket group of Chinese text that
# is no link reads as its text (a [...] left in would read as a citation of a ref that does not exist)
_SLIDE_MARK = re.compile(r"\((\*\*.+?\*\*)\)|\[(\*\*.+?\*\*)\](?!\()")
_CJK_BRACKETS = re.compile(r"\[([^\[\]\n]*[\u3000-\u9fff][^\[\]\n]*)\](?!\()")
_SPACE_BEFORE_FULLWIDTH = re.compile(r"(?<=[$`)\w]) +(?=[，。；：！？、）」』”])")
_SPACE_AFTER_FULLWIDTH = re.compile(r"(?<=[（「『“]) +")
_SPACE_BETWEEN_CJK = re.compile(r"(?<=[\u3000-\u9fff\uff00-\uffef]) +(?=[\u3000-\u9fff\uff00-\uffef])")


def inline_text(text: str, labels: dict[str, str] | None = None, zh: bool = True, env: dict | None = None) -> str:
    """One line of Markdown as readable text (see the module docstring). Code spans and $…$ are kept as they
    are; everything else of theirs is not touched by the other rules. Emphasis, links (inline, by reference with
    `env`, the file's link definitions, and autolinks), inline HTML, escapes and entities are read by markdown-it's
    inline parser; the dialects' roles, slide marks and images are read before it, and the emphasis CommonMark leaves
    as it is beside Chinese punctuation (**“词元”**的) after it."""
    labels = labels or {}
    kept: list[str] = []

    def keep(m: re.Match) -> str:
        return keep_text(m.group(0))

    def keep_text(piece: str) -> str:
        kept.append(piece)
        return f"{_KEEP_OPEN}{len(kept) - 1}{_KEEP_CLOSE}"

    text = _COMMENT.sub("", text)
    text = _ROLE.sub(lambda m: _role(m.group(1), m.group(2), labels, zh), text)  # before code spans: `…` is its target
    text = _CODE_SPAN.sub(keep, text)
    text = _DISPLAY_SPAN.sub(keep, text)  # $$ … $$ inside a sentence (a slide mark round a formula)
    text = _MATH_SPAN.sub(keep, text)
    text = _IMAGE.sub(lambda m: "", text)
    text = _SLIDE_MARK.sub(lambda m: m.group(1) or m.group(2), text)
    text = "".join(_inline_pieces(text, env, keep_text))
    text = _CJK_BRACKETS.sub(lambda m: m.group(1), text)
    text = re.sub(f"{_KEEP_OPEN}(\\d+){_KEEP_CLOSE}", lambda m: kept[int(m.group(1))], text)
    text = text.replace("\u00a0", " ")
    text = _SPACE_BEFORE_FULLWIDTH.sub("", text)
    text = _SPACE_AFTER_FULLWIDTH.sub("", text)
    text = _SPACE_BETWEEN_CJK.sub("", text)  # "其中 <u>遗忘门</u> 决定": the spaces were the markup's
    return re.sub(r"[ \t]{2,}", " ", text).strip()


_KEEP_OPEN, _KEEP_CLOSE = "\ue000", "\ue001"  # private-use marks around a kept span's number (no text holds them)


def _inline_pieces(text: str, env: dict | None, keep) -> list[str]:
    """The text markdown-it's inline parser reads in `text`: words kept, markup dropped; an escaped character or an
    entity is kept as the character it stands for, out of reach of the emphasis rules after it."""
    from rag.ingest.markdown_rules import inline_parser

    pieces: list[str] = []
    for token in inline_parser().parseInline(text, dict(env or {}))[0].children or []:
        if token.type == "text":
            pieces.append(_leftover_emphasis(token.content))
        elif token.type == "text_special":
            pieces.append(keep(token.content))
        elif token.type in ("softbreak", "hardbreak"):
            pieces.append(" ")
        elif token.type == "code_inline":  # only a code span the pattern above did not take (`` `x` ``)
            pieces.append(keep(f"{token.markup}{token.content}{token.markup}"))
    return pieces


def _leftover_emphasis(text: str) -> str:
    """Emphasis CommonMark does not open or close beside punctuation with no space (**“词元”**的), read as its words."""
    for _ in range(2):  # ***x*** and **x *y***
        text = _STRONG.sub(lambda m: m.group(2), text)
        text = _EMPH.sub(lambda m: m.group(1), text)
        text = _EMPH_U.sub(lambda m: m.group(1), text)
    return text


def _role(kind: str, target: str, labels: dict[str, str], zh: bool) -> str:
    target = target.strip()
    if kind in ("label", "eqlabel", "width"):
        return ""
    if kind in ("cite", "citet", "citep"):  # a bibliography key ("Lin.Feng.Santos.ea.2017") is not prose: answers
        return ""                             # quoted it (issue 65, item 13)
    if kind == "math":
        return f"${target}$"
    name = labels.get(target)
    if kind == "eqref":
        return f"式（{target}）" if zh else f" equation ({target})"
    if name:
        return f"“{name}”" if zh else f' "{name}"'
    kind_of = _TARGET_KINDS.get(re.split(r"[_:-]", target, maxsplit=1)[0].lower()) if kind in ("numref", "ref") else None
    if kind_of:  # "回想一下fig_mlp中" read as it renders elsewhere: a figure, not its key
        return kind_of[0] if zh else kind_of[1]
    return target if zh else f" {target}"


# ------------------------------------------------------------------------------------------- read


def _labels(text: str) -> dict[str, str]:
    """label -> what it names: a figure's alt text or a section's heading, from `:label:` lines (d2l's dialect:
    the label follows the image or heading it names, on the same line or the next)."""
    out: dict[str, str] = {}
    last = ""
    for line in text.split("\n"):
        if (m := _HEADING.match(line)) is not None:
            last = inline_text(m.group(2), {}, True)
        elif (imgs := re.findall(r"!\[([^\]]*)\]", line)):
            last = imgs[-1].strip()
        for label in re.findall(r":label:`([^`]+)`", line):
            if last:
                out[label.strip()] = last
        if line.strip() and not line.strip().startswith(":label:") and not _HEADING.match(line) \
                and not re.search(r"!\[", line):
            last = ""
    return out


def read_markdown(text: str, zh: bool | None = None) -> MarkdownDoc:
    """`text` (a whole Markdown file) as a MarkdownDoc. `zh`: the file is Chinese (decides how a caption and a
    list number read); None: decided from the share of CJK characters."""
    if zh is None:
        letters = [ch for ch in text[:20000] if ch.isalpha()]
        zh = bool(letters) and sum(_cjk(ch) for ch in letters) / len(letters) > 0.2
    reader = _Reader(text, _labels(text), zh)
    reader.read(text)
    return MarkdownDoc(reader.title, reader.blocks)


def is_markdown(doc_format: str) -> bool:
    return doc_format in ("md", "markdown")


# ------------------------------------------------------------------------------------- not prose

_FENCE_LINE = re.compile(r"^\s*(```|~~~)")
_NONPROSE_LINE = re.compile(
    r"^\s*(\$\$.*|\|.*\||#{1,6}\s.*|（(?:图|表)：.*）|\((?:Figure|Table): .*\)|!\[.*\]\(.*\)|<[^>]+>|:\w+:`.*)\s*$")


def nonprose_spans(text: str) -> list[tuple[int, int]]:
    """[start, end) spans of `text` that are not prose: fenced code (fences included), display formulas, table
    rows, headings, captions, an image link or an HTML tag alone on a line, a leftover role. No sentence that
    overlaps one is quoted, asked about or taken as evidence of a fact stated in words."""
    spans: list[tuple[int, int]] = []
    pos, fence_at = 0, None
    in_math = None
    for line in text.split("\n"):
        end = pos + len(line)
        if fence_at is not None:
            if _FENCE_LINE.match(line):
                spans.append((fence_at, end))
                fence_at = None
        elif in_math is not None:
            if "$$" in line:
                spans.append((in_math, end))
                in_math = None
        elif _FENCE_LINE.match(line):
            fence_at = pos
        elif line.strip().startswith("$$") and line.count("$$") == 1:
            in_math = pos
        elif _NONPROSE_LINE.match(line):
            spans.append((pos, end))
        pos = end + 1
    if fence_at is not None:
        spans.append((fence_at, len(text)))
    if in_math is not None:
        spans.append((in_math, len(text)))
    return spans


def overlaps(spans: list[tuple[int, int]], a: int, b: int) -> bool:
    return any(s < b and a < e for s, e in spans)

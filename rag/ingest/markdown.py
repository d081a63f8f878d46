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
  `<p align="center"> 表 <id> &nbsp; caption </p>` -> (表：caption);
- images -> their alt text as a caption, "(图：alt)" / "(Figure: alt)", or nothing when the alt is the file's
  stem (an image carousel's "binary_search_step2"); links -> their text; HTML tags and comments dropped (the
  text inside a tag kept), entities read (&nbsp; -> a space); **bold**, *emphasis*, <u>…</u> -> their text;
- soft line breaks inside a paragraph are joined (no space between two Chinese characters), as a Markdown
  renderer joins them, so a sentence wrapped over three lines is one sentence.
Inline code keeps its backticks and inline maths its $…$: they are text a reader needs (`nums[m]`,
$O(n \\log n)$), and the pages draw $…$ as formulas.

Readable text marks what is not prose, so no quote, test question or audit span is built from it
(`nonprose_spans`): code stays fenced (```lang … ```), a display formula is one line of its own between $$, a
table keeps its | rows, a caption is wrapped as above. The same marks hold in any text, so the rule is one.
Offsets: every Block keeps [start, end) in the source, so the upload page's preview shows the file as written.
Not handled here: HTML documents, reStructuredText, Jupyter notebooks; packing blocks into chunks (chunking.py).
"""

from __future__ import annotations

import html
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


# ------------------------------------------------------------------------------------------ lines

_Line = tuple[str, int]  # (the line as read, its offset in the source): indented bodies are read dedented

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*(.*)$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_TABLE_ROW = re.compile(r"^\s*\|")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_ADMONITION = re.compile(r"^(!!!|\?\?\?\+?)\s+([\w-]+)(?:\s+\"(.*)\")?\s*$")
_TAB = re.compile(r"^===\+?\s+\"(.*)\"\s*$")
_LIST = re.compile(r"^(\s{0,3})([-*+]|\d{1,3}[.)])\s+(.*)$")
_QUOTE = re.compile(r"^\s{0,3}>\s?(.*)$")
_LABEL_LINE = re.compile(r"^\s*:(label|eqlabel|width|height|begin_tab|end_tab)\s*:(`[^`]*`)?\s*$")
_INCLUDE = re.compile(r"^\s*(--8<--|\{%\s*include|\[file\]\{)")
_RULE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_COMMENT_OPEN = re.compile(r"^\s*<!--")
_HTML_ONLY = re.compile(r"^\s*</?[A-Za-z][^>]*>\s*$")
_CAPTION_P = re.compile(r"^\s*<p[^>]*>\s*(表|图|Table|Figure|Fig\.)\s*(?:<id>|[\w.\-]*)\s*(?:&nbsp;|\s)*(.*?)\s*</p>\s*$",
                        re.I)
_IMAGE_LINE = re.compile(r"^\s*(!\[[^\]]*\]\([^)]*\)\s*)+(\{[^}]*\})?\s*$")
_MATH_OPEN = re.compile(r"^\s*\$\$")


def _lines(text: str) -> list[_Line]:
    out, pos = [], 0
    for line in text.split("\n"):
        out.append((line, pos))
        pos += len(line) + 1
    return out


def _indented(lines: list[_Line], i: int) -> tuple[list[_Line], int]:
    """The indented body starting at lines[i] (blank lines or lines indented 4+ spaces / a tab), dedented, and
    the index after it (trailing blank lines are left for the caller)."""
    body: list[_Line] = []
    j = i
    while j < len(lines):
        line, at = lines[j]
        if not line.strip():
            body.append(("", at))
        elif line.startswith("    "):
            body.append((line[4:], at + 4))
        elif line.startswith("\t"):
            body.append((line[1:], at + 1))
        else:
            break
        j += 1
    while body and not body[-1][0].strip():
        body.pop()
        j -= 1
    return body, j


# ---------------------------------------------------------------------------------------- parsing


class _Reader:
    """One pass over the lines, blocks appended in order; indented bodies read by a nested pass."""

    def __init__(self, labels: dict[str, str], zh: bool):
        self.blocks: list[Block] = []
        self.labels = labels
        self.zh = zh
        self.path: list[tuple[int, str]] = []
        self.title = ""

    def heading_path(self) -> tuple[str, ...]:
        return tuple(t for _, t in self.path)

    def add(self, kind: str, first: _Line, last: _Line, text: str, **extra) -> None:
        text = text.strip()
        if text:
            self.blocks.append(Block(kind, first[1], last[1] + len(last[0]), text, self.heading_path(), **extra))

    def read(self, lines: list[_Line]) -> None:
        i = 0
        while i < len(lines):
            i = self._one(lines, i)

    def _one(self, lines: list[_Line], i: int) -> int:  # noqa: C901 - a dispatch over the line's kind, one branch each
        line, _ = lines[i]
        if not line.strip():
            return i + 1
        if i == 0 and line.strip() == "---" and lines[0][1] == 0:  # YAML front matter
            end = next((j for j in range(1, len(lines)) if lines[j][0].strip() in ("---", "...")), None)
            if end is not None:
                return end + 1
        if (m := _FENCE.match(line)) is not None:
            return self._fence(lines, i, m)
        if _MATH_OPEN.match(line):
            return self._math(lines, i)
        if (m := _HEADING.match(line)) is not None:
            self._heading(lines[i], len(m.group(1)), m.group(2))
            return i + 1
        if _COMMENT_OPEN.match(line):
            j = i
            while j < len(lines) and "-->" not in lines[j][0]:
                j += 1
            rest = lines[j][0].split("-->", 1)[1] if j < len(lines) else ""
            if rest.strip():
                self.read([(rest, lines[j][1] + lines[j][0].index("-->") + 3)])
            return j + 1
        if (m := _ADMONITION.match(line)) is not None:
            return self._admonition(lines, i, m)
        if (m := _TAB.match(line)) is not None:
            return self._tabs(lines, i)
        if _LABEL_LINE.match(line) or _INCLUDE.match(line) or _RULE.match(line):
            return i + 1
        if (m := _CAPTION_P.match(line)) is not None:
            self.add(CAPTION, lines[i], lines[i], self.caption(m.group(1), self.inline(m.group(2))))
            return i + 1
        if _TABLE_ROW.match(line):
            return self._table(lines, i)
        if _IMAGE_LINE.match(line):
            for alt in _images(line):
                self.add(CAPTION, lines[i], lines[i], self.caption("图", alt))
            return i + 1
        if _HTML_ONLY.match(line):
            return i + 1
        if (m := _LIST.match(line)) is not None:
            return self._list_item(lines, i, m)
        if _QUOTE.match(line):
            j = i
            while j < len(lines) and _QUOTE.match(lines[j][0]):
                j += 1
            inner = [(_QUOTE.match(t).group(1), at + t.index(_QUOTE.match(t).group(1)) if _QUOTE.match(t).group(1) else at)  # type: ignore[union-attr]
                     for t, at in lines[i:j]]
            self.read(inner)
            return j
        if line.startswith(("    ", "\t")) and not self.blocks:  # an indented code block (rare in course books)
            body, j = _indented(lines, i)
            self.add(CODE, lines[i], lines[j - 1], _fenced("\n".join(t for t, _ in body), ""))
            return j
        return self._paragraph(lines, i)

    # -- block kinds

    def _heading(self, line: _Line, level: int, raw: str) -> None:
        text = self.inline(raw)
        if level == 1 and not self.title:
            self.title = text
            self.path = []
            return
        while self.path and self.path[-1][0] >= level:
            self.path.pop()
        if text:
            self.path.append((level, text))
            self.blocks.append(Block(HEADING, line[1], line[1] + len(line[0]), text, self.heading_path(), level=level))

    def _fence(self, lines: list[_Line], i: int, m: re.Match) -> int:
        marker = m.group(2)
        info = m.group(3).strip()
        j = i + 1
        while j < len(lines) and not lines[j][0].strip().startswith(marker[0] * len(marker)):
            j += 1
        body = [t for t, _ in lines[i + 1:j]]
        last = lines[min(j, len(lines) - 1)]
        lang = _fence_lang(info)
        code = "\n".join(body).strip("\n")
        if lang in ("src", "") and code and all(_INCLUDE.match(t) or not t.strip() for t in body):
            return j + 1  # an include marker: the code is not in this file
        if lang in ("math", "latex") or (lang == "" and code.startswith("\\begin")):
            self.add(MATH, lines[i], last, _display_math(code))
        elif code.strip() and not self._alternative(code):
            code = "\n".join(t for t in code.split("\n") if not _BUILD_MARK.match(t)).strip("\n")  # d2l's "#@tab …"
            self.add(CODE, lines[i], last, _fenced(code, lang), lang=lang)
        return j + 1

    def _alternative(self, code: str) -> bool:
        """d2l's framework variants: a code block opening "#@tab pytorch" right after another code block is the
        same step for another framework (the first stands for them, as the first of a group of code tabs does)."""
        head = code.lstrip().split("\n", 1)[0].strip()
        return (head.startswith("#@tab") and "all" not in head and bool(self.blocks)
                and self.blocks[-1].kind == CODE)

    def _math(self, lines: list[_Line], i: int) -> int:
        first = lines[i][0].strip()
        if first != "$$" and first.endswith("$$") and len(first) > 4:  # $$ … $$ on one line
            self.add(MATH, lines[i], lines[i], _display_math(first[2:-2]))
            return i + 1
        j = i + 1
        while j < len(lines) and "$$" not in lines[j][0]:
            j += 1
        j = min(j, len(lines) - 1)
        body = "\n".join([first[2:]] + [t for t, _ in lines[i + 1:j]] + [lines[j][0].split("$$", 1)[0]])
        self.add(MATH, lines[i], lines[j], _display_math(body))
        after = lines[j][0].split("$$", 1)[1] if "$$" in lines[j][0] and j > i else ""
        if after.strip() and not _LABEL_LINE.match(after):  # "$$ … $$ 其中…" on the closing line
            self.read([(after, lines[j][1] + lines[j][0].index("$$") + 2)])
        return j + 1

    def _admonition(self, lines: list[_Line], i: int, m: re.Match) -> int:
        kind, title = m.group(2).lower(), m.group(3)
        body, j = _indented(lines, i + 1)
        if kind in ("pythontutor",):  # a visualiser's link, thousands of characters of noise
            return j
        if title:
            self.add(PROSE, lines[i], lines[i], self.inline(title))
        self.read(body)
        return j

    def _tabs(self, lines: list[_Line], i: int) -> int:
        """A group of content tabs. Tabs that hold only code are the same program in other languages: the first
        stands for them. Other tabs (an image carousel, prose) are each read."""
        group: list[tuple[_Line, list[_Line]]] = []
        j = i
        while j < len(lines) and _TAB.match(lines[j][0]) is not None:
            body, k = _indented(lines, j + 1)
            group.append((lines[j], body))
            j = k
            while j < len(lines) and not lines[j][0].strip():
                j += 1
        code_only = all(_only_code(body) for _, body in group)
        for n, (_, body) in enumerate(group):
            if code_only and n > 0:
                break
            self.read(body)
        return j

    def _table(self, lines: list[_Line], i: int) -> int:
        j = i
        rows = []
        while j < len(lines) and _TABLE_ROW.match(lines[j][0]):
            if not _TABLE_RULE.match(lines[j][0]):
                cells = [self.inline(c) for c in lines[j][0].strip().strip("|").split("|")]
                rows.append("| " + " | ".join(cells) + " |")
            j += 1
        self.add(TABLE, lines[i], lines[j - 1], "\n".join(rows))
        return j

    def _list_item(self, lines: list[_Line], i: int, m: re.Match) -> int:
        """One item: its first line, its lazy continuation lines, then its indented body (nested items, a
        paragraph) read as blocks of their own."""
        first = [(m.group(3), lines[i][1] + m.start(3))]
        j = i + 1
        while j < len(lines) and lines[j][0].strip() and not _starts_block(lines[j][0]) \
                and not lines[j][0].startswith(("    ", "\t")):
            first.append((lines[j][0].strip(), lines[j][1] + len(lines[j][0]) - len(lines[j][0].lstrip())))
            j += 1
        # the marker is not read: a list's numbers are the renderer's (every item may say "1."), and "1." would
        # read as a sentence of its own
        self.add(PROSE, first[0], first[-1], self.inline(self.join([t for t, _ in first])))
        body, k = _indented(lines, j)
        if body:
            self.read(body)
            return k
        return j

    def _paragraph(self, lines: list[_Line], i: int) -> int:
        j = i
        while j < len(lines) and lines[j][0].strip() and (j == i or not _starts_block(lines[j][0])):
            j += 1
        parts = [t for t, _ in lines[i:j] if not _LABEL_LINE.match(t)]
        if _LINK_ONLY.fullmatch(self.join(parts).strip()):
            return j  # a paragraph that is one web link ("[Discussions](https://…)"): navigation, not prose
        self.add(PROSE, lines[i], lines[j - 1], self.inline(self.join(parts)))
        return j

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
        return inline_text(text, self.labels, self.zh)

    def caption(self, kind: str, text: str) -> str:
        text = text.strip()
        if not text:
            return ""
        word = {"表": "表", "table": "表"}.get(kind.lower(), "图") if self.zh else \
            ("Table" if kind.lower() in ("表", "table") else "Figure")
        return f"（{word}：{text}）" if self.zh else f"({word}: {text})"


def _starts_block(line: str) -> bool:
    return bool(_FENCE.match(line) or _HEADING.match(line) or _MATH_OPEN.match(line) or _ADMONITION.match(line)
                or _TAB.match(line) or _TABLE_ROW.match(line) or _LIST.match(line) or _IMAGE_LINE.match(line)
                or _CAPTION_P.match(line) or _COMMENT_OPEN.match(line) or _HTML_ONLY.match(line)
                or _QUOTE.match(line))


def _only_code(body: list[_Line]) -> bool:
    """A tab's body that is nothing but fenced code (blank lines aside)."""
    texts = [t for t, _ in body if t.strip()]
    if not texts or not _FENCE.match(texts[0]):
        return False
    inside = False
    for t in texts:
        if _FENCE.match(t):
            inside = not inside
        elif not inside:
            return False
    return True


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
_LINK = re.compile(r"(?<!!)\[([^\]]+)\]\((?:[^()]|\([^)]*\))*\)")
_AUTOLINK = re.compile(r"<(https?://[^>\s]+)>")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_TAG = re.compile(r"</?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
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


def inline_text(text: str, labels: dict[str, str] | None = None, zh: bool = True) -> str:
    """One line of Markdown as readable text (see the module docstring). Code spans and $…$ are kept as they
    are; everything else of theirs is not touched by the other rules."""
    labels = labels or {}
    kept: list[str] = []

    def keep(m: re.Match) -> str:
        kept.append(m.group(0))
        return f"\x00{len(kept) - 1}\x00"

    text = _COMMENT.sub("", text)
    text = _ROLE.sub(lambda m: _role(m.group(1), m.group(2), labels, zh), text)  # before code spans: `…` is its target
    text = _CODE_SPAN.sub(keep, text)
    text = _MATH_SPAN.sub(keep, text)
    text = _IMAGE.sub(lambda m: "", text)
    text = _LINK.sub(lambda m: m.group(1), text)
    text = _SLIDE_MARK.sub(lambda m: m.group(1) or m.group(2), text)
    text = _CJK_BRACKETS.sub(lambda m: m.group(1), text)
    text = _AUTOLINK.sub(lambda m: m.group(1), text)
    text = _TAG.sub("", text)
    text = html.unescape(text).replace("\u00a0", " ")
    for _ in range(2):  # ***x*** and **x *y***
        text = _STRONG.sub(lambda m: m.group(2), text)
        text = _EMPH.sub(lambda m: m.group(1), text)
        text = _EMPH_U.sub(lambda m: m.group(1), text)
    text = re.sub(r"\x00(\d+)\x00", lambda m: kept[int(m.group(1))], text)
    text = _SPACE_BEFORE_FULLWIDTH.sub("", text)
    text = _SPACE_AFTER_FULLWIDTH.sub("", text)
    text = _SPACE_BETWEEN_CJK.sub("", text)  # "其中 <u>遗忘门</u> 决定": the spaces were the markup's
    return re.sub(r"[ \t]{2,}", " ", text).strip()


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
    reader = _Reader(_labels(text), zh)
    reader.read(_lines(text))
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

"""The Markdown parser the reader walks: markdown-it-py (CommonMark) with the constructs course books add.

CommonMark, its tables, and from mdit-py-plugins YAML front matter and MkDocs admonitions (`!!! note "title"`,
`??? tip`, `???+ tip`, a body indented by four spaces). Two small block rules of our own, for what no maintained
plugin reads as these books write it:
- content tabs (MkDocs Material, `=== "Python"` then a body indented by four spaces): a `tab` container whose
  `meta["title"]` is the tab's label; the reader decides what a group of tabs stands for;
- display maths between `$$` (d2l and MkDocs write it so): from a line opening with `$$` to the first line holding
  `$$` again, or `$$ … $$` on one line. It may interrupt a paragraph (a formula under the sentence that introduces
  it), and the text after the closing `$$` ("$$ … $$ 其中…", or a `:eqlabel:` role) is kept in `meta["after"]`
  with its line; mdit-py-plugins' dollarmath wants `$$` alone on its lines and does neither.
`inline_parser` reads the text inside a block. Each parser is built once and only read after that (markdown-it's parse keeps its state in a per-call object).
"""

from __future__ import annotations

from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.ruler import RuleOptionsType
from markdown_it.rules_block import StateBlock
from mdit_py_plugins.admon import admon_plugin
from mdit_py_plugins.front_matter import front_matter_plugin

_TAB_MARKERS = ("===+", "===")
_BODY_INDENT = 4  # a tab's or an admonition's body: four spaces in
MAX_NESTING = 100  # CommonMark preset: 20, and a list nested deeper lost every line after it; Python recursion bounds it


def _line(state: StateBlock, n: int) -> str:
    """Line n as written from the block's indent on (its leading spaces stripped)."""
    return state.src[state.bMarks[n] + state.tShift[n]:state.eMarks[n]]


def _tab(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """`=== "Title"`: a content tab, its body the lines after it indented four spaces more."""
    if state.is_code_block(start):
        return False
    text = _line(state, start)
    marker = next((m for m in _TAB_MARKERS if text.startswith(m)), "")
    rest = text[len(marker):].strip()
    if not marker or not (len(rest) >= 2 and rest[0] == rest[-1] == '"'):
        return False
    if silent:
        return True
    indent = state.blkIndent + _BODY_INDENT
    line, was_blank = start + 1, False
    while line < end:  # the body runs while lines are blank or indented; two blank lines in a row end it
        blank = state.isEmpty(line)
        if blank and was_blank:
            break
        if not blank and state.sCount[line] < indent:
            break
        was_blank = blank
        line += 1
    old = state.parentType, state.lineMax, state.blkIndent
    state.parentType, state.lineMax, state.blkIndent = "tab", line, indent
    token = state.push("tab_open", "div", 1)
    token.map, token.markup, token.meta = [start, line], marker, {"title": rest[1:-1]}
    state.md.block.tokenize(state, start + 1, line)
    state.push("tab_close", "div", -1)
    state.parentType, state.lineMax, state.blkIndent = old
    state.line = line
    return True


def _display_math(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """A formula between `$$`: token `math_display`, its LaTeX in content, the text after the closing `$$` in
    meta["after"] (meta["after_line"] its line). An unclosed `$$` runs to the end of its container."""
    if state.is_code_block(start):
        return False
    first = _line(state, start).rstrip()
    if not first.startswith("$$"):
        return False
    if silent:
        return True
    if first != "$$" and first.endswith("$$") and len(first) > 4:  # $$ … $$ on one line
        body, close, after = first[2:-2], start, ""
    else:
        close = start + 1
        while close < end and "$$" not in _line(state, close):
            close += 1
        close = min(close, end - 1)
        closing = _line(state, close) if close > start else ""
        inner = [_line(state, n) for n in range(start + 1, close)]
        body = "\n".join([first[2:], *inner, closing.split("$$", 1)[0]])
        after = closing.split("$$", 1)[1] if "$$" in closing else ""
    token = state.push("math_display", "div", 0)
    token.map, token.content, token.block = [start, close + 1], body, True
    token.meta = {"after": after, "after_line": close}
    state.line = close + 1
    return True


@lru_cache(maxsize=1)
def parser() -> MarkdownIt:
    """The one parser every read uses (built on first use)."""
    md = MarkdownIt("commonmark", {"html": True, "maxNesting": MAX_NESTING}).enable("table")
    md.use(front_matter_plugin).use(admon_plugin)
    alt: RuleOptionsType = {"alt": ["paragraph", "reference", "blockquote", "list"]}
    md.block.ruler.before("fence", "content_tab", _tab, alt)
    md.block.ruler.before("fence", "display_math", _display_math, alt)
    return md


@lru_cache(maxsize=1)
def inline_parser() -> MarkdownIt:
    """The parser a block's text is read with: CommonMark's inline rules, an escaped character or an entity left as a
    token of its own (`text_special`, not joined into the text around it) so the reader can keep it as written."""
    md = MarkdownIt("commonmark", {"html": True})
    md.disable("text_join")
    return md

"""Small rendering helpers: tables of hits, a wrapping HTML table, the short RRF sum of a fused hit, the
coloured chunk preview, the colour-coded prompt, the answer with clickable citation markers, and the
error box for backend errors.

Every piece of user or corpus text that goes into HTML is escaped first (html.escape), so a document
containing "<script>" shows as text.
Not handled here: charts (charts.py) and any computation (rag/).
"""

from __future__ import annotations

import html
import re
from typing import Callable, Literal, Sequence, TypeVar, overload

import pandas as pd
import streamlit as st

from rag.audit.citations import CITATION_RE, parse_citations
from rag.errors import Bilingual, RagError
from rag.ingest.preview import Segment
from rag.search.hits import Hit

from .i18n import lang, loc, t, tr

T = TypeVar("T")

# Chunk colours alternate so neighbouring chunks are told apart; overlaps get their own, darker colour.
CHUNK_COLOURS = ("#dbeafe", "#dcfce7", "#fef9c3", "#fce7f3", "#ede9fe", "#ffedd5")
OVERLAP_COLOUR = "#f59e0b"
PART_COLOURS = {  # prompt parts
    "system": "#ede9fe",
    "heading": "#f1f5f9",
    "context": "#dcfce7",
    "graph": "#fef3c7",
    "question": "#dbeafe",
}



# What Markdown, maths and icon shortcodes act on: emphasis, links and images (need "["), code, HTML,
# tables, headings, $maths$, ~strike~ and :icon: codes. Plain "-", "." and "()" stay readable inside a line.
_MARKDOWN = re.compile(r"([\\`*_\[\]#|<>$~:])")
# What opens a block at a line's start: a list item ("- ", "+ ", "3. ", "3) "), a rule or a heading's underline
# ("---", "==="): a chunk's list items read "- 哈希索引", as its text is, not as a list Streamlit draws
_LINE_START = re.compile(r"^([ \t]*)([-+=]|\d{1,9}(?=[.)]))", re.M)


def md_escape(text) -> str:
    """`text` (a file name, a chunk id or title, a model's output, an error quoting them) safe to put in a
    Markdown string: every character Markdown, maths or icon shortcodes would act on is backslash-escaped."""
    return _MARKDOWN.sub(r"\\\1", str(text))


_MATH = re.compile(r"\$\$[^$\n]+?\$\$|(?<![\\$])\$[^$\n]+?(?<![\\ ])\$(?!\$)")


def md_with_math(text) -> str:
    """`text` (a document's readable text) for st.markdown with its formulas drawn: each $…$ and $$…$$ is left to
    KaTeX (which runs no HTML and follows no link), everything else escaped as md_escape escapes it, and what would open
    a block at a line's start too (a list item's "- " or "3. " reads as written). A line break stays a line break."""
    text = str(text)
    out, last = [], 0
    for m in _MATH.finditer(text):
        out.append(md_escape(text[last:m.start()]))
        out.append(m.group(0))
        last = m.end()
    out.append(md_escape(text[last:]))
    lines = _LINE_START.sub(lambda m: m.group(1) + (m.group(2) + "\\" if m.group(2)[0].isdigit() else "\\" + m.group(2)),
                            "".join(out))
    return lines.replace("\n", "  \n")

_FENCED = re.compile(r"^```([^\n`]*)\n(.*?)\n```$", re.M | re.S)


def fenced_parts(text) -> list[tuple[str, str, str]]:
    """A chunk's readable text as ("text", words, "") and ("code", code, language) parts in order: a page shows a
    fenced block with st.code (its language as written in the file, a d2l "{.python .input}" read as python) and
    the words between with md_with_math, so a student sees code, not its fence marks (issue 65, item 13)."""
    text, out, last = str(text), [], 0
    for m in _FENCED.finditer(text):
        if text[last:m.start()].strip():
            out.append(("text", text[last:m.start()].strip("\n"), ""))
        words = re.findall(r"[A-Za-z][\w+#-]*", m.group(1))
        out.append(("code", m.group(2), words[0].lower() if words else ""))
        last = m.end()
    if text[last:].strip():
        out.append(("text", text[last:].strip("\n"), ""))
    return out


@overload
def attempt(fn: Callable[..., T], *args, stop: Literal[True] = True, **kwargs) -> T: ...


@overload
def attempt(fn: Callable[..., T], *args, stop: Literal[False], **kwargs) -> T | None: ...


def attempt(fn: Callable[..., T], *args, stop: bool = True, **kwargs) -> T | None:
    """Run a backend call; a RagError becomes st.error(message) (its message says the fix).

    With stop=True the page stops there (what follows needs the result); otherwise None is returned.
    """
    try:
        return fn(*args, **kwargs)
    except RagError as exc:
        st.error(md_escape(error_text(exc)))
        if stop:
            st.stop()
        return None


def error_text(exc: Exception) -> str:
    """An error's message in the session's UI language where the backend gave one (loader errors)."""
    return exc.localized(lang()) if isinstance(exc, Bilingual) else str(exc)


NAME_MAX_BYTES = 2000  # measured in Chromium: 2,044 bytes of UTF-8 upload, 2,104 do not (Streamlit's multipart parser)


def upload_limit_note(widget_key: str, accepted: str) -> None:
    """Under a file uploader: the one per-file limit (the loader's) and the accepted types, in the UI's
    language, in place of the widget's own English line, which states the larger transfer cap."""
    from rag.ingest.documents import MAX_FILE_MB

    css_key = re.sub(r"[^A-Za-z0-9_-]", "-", widget_key)
    st.html(f"<style>.st-key-{css_key} [data-testid='stFileUploaderDropzoneInstructions']{{display:none}}</style>")
    # A longer name is refused by the upload server before the app sees the file (a red chip, no message the
    # app could show), so the limit is said here, where a red chip sends the reader.
    st.caption(tr(zh=f"每个文件最多 {MAX_FILE_MB} MB；支持 {accepted}；文件名最长约 {NAME_MAX_BYTES} 字节"
                  f"（约 {NAME_MAX_BYTES // 3} 个汉字），更长的会被拒绝（红色标记）：请先改短文件名",
                  en=f"Up to {MAX_FILE_MB} MB per file; accepts {accepted}; file names up to about {NAME_MAX_BYTES} "
                  f"bytes ({NAME_MAX_BYTES} Latin letters, {NAME_MAX_BYTES // 3} Chinese characters): a longer "
                  "one is refused (a red chip), so rename the file first"))


def need_question(question: str) -> None:
    """Stop the page until there is a question; on a class knowledge base, name what its documents are about."""
    if not question:
        st.info(t("no_question"))
        if st.session_state.get("corpus.kb"):
            titles = [d.title or d.doc_id for d in st.session_state.get("corpus.docs", [])]
            shown = "、".join(titles[:8]) if lang() == "zh" else ", ".join(titles[:8])
            more = tr(zh=f" 等 {len(titles)} 篇", en=f" and {len(titles) - 8} more") if len(titles) > 8 else ""
            st.caption(tr(zh="这个班级知识库的文档：", en="This class knowledge base's documents: ") + md_escape(shown) + more)
        st.stop()


def short(text: str, n: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def rrf_short(hit: Hit | None, rrf_k: int, lists: Sequence[str] = ("dense", "bm25")) -> str:
    """A fused hit's RRF sum in a short form for a table cell, one term per list in `lists` order:
    `1/(60+1) + 1/(60+3) = 0.03226`; a weight is written only when it is not 1 (`1.5/(60+1)`), and a
    list that does not have the chunk adds `0`. rag.search.ranktable.fusion_arithmetic writes the long form."""
    if hit is None:
        return ""
    if not hit.contributions:
        return f"{hit.score:.5f}"
    by_list = {c.retriever: c for c in hit.contributions}
    names = list(lists) + [c.retriever for c in hit.contributions if c.retriever not in lists]
    terms = []
    for name in names:
        c = by_list.get(name)
        terms.append("0" if c is None else f"{c.weight:g}/({rrf_k}+{c.rank})")
    return " + ".join(terms) + f" = {sum(c.term for c in hit.contributions):.5f}"


def html_table(frame: pd.DataFrame, cell_style: Callable[[str, object], str] | None = None) -> str:
    """A plain HTML table whose cells wrap, so long text is read in full (a data grid cuts every cell to
    one line, and st.table would read the text as Markdown). `cell_style(column, value)` gives a cell's
    CSS. Every header and cell is escaped."""
    head = "".join(f"<th style='text-align:left;padding:6px 8px;border-bottom:1px solid #cbd5e1;"
                   f"font-weight:500;color:#475569;white-space:nowrap'>{html.escape(str(c))}</th>" for c in frame.columns)
    body = []
    for _, row in frame.iterrows():
        cells = []
        for col, value in row.items():
            extra = cell_style(col, value) if cell_style else ""
            cells.append(f"<td style='padding:6px 8px;border-bottom:1px solid #e2e8f0;vertical-align:top;{extra}'>"
                         f"{html.escape(str(value))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return ("<table style='width:100%;border-collapse:collapse;font-size:0.9em;line-height:1.6'>"
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")


def tokens_html(tokens: Sequence[str], dropped: set[str] | frozenset[str] = frozenset()) -> str:
    """The query's tokens as chips: kept ones green, ones in `dropped` (stop words BM25 ignores) grey and
    struck out (<del>)."""
    chip = "padding:1px 6px;margin-right:4px;border-radius:4px;font-family:ui-monospace,monospace;font-size:0.9em"
    out = []
    for tok in tokens:
        text = html.escape(tok)
        if tok in dropped:
            out.append(f"<del title='stop word' style='{chip};background:#f1f5f9;color:#94a3b8'>{text}</del>")
        else:
            out.append(f"<span style='{chip};background:#dcfce7;color:#166534'>{text}</span>")
    return "".join(out)


def distinct_colours(ids) -> dict[str, str]:
    """A background colour per distinct id, in the order first seen: hues a golden angle apart, so two chunks in one
    table never share a colour (a hash of the id did: two chunks of the retrieval table once had the same one)."""
    out: dict[str, str] = {}
    for cid in ids:
        if isinstance(cid, str) and cid and cid not in out:
            out[cid] = f"background-color: hsl({round(len(out) * 137.508) % 360}, 70%, 86%)"
    return out


def chunk_colour(index: int) -> str:
    return CHUNK_COLOURS[index % len(CHUNK_COLOURS)]


def segments_html(segments: Sequence[Segment], order: dict[str, int], max_chars: int = 20000) -> str:
    """The source text with each chunk's span coloured, overlaps highlighted and a tag at each chunk start."""
    out, shown = [], 0
    started: set[str] = set()
    for seg in segments:
        if shown >= max_chars:
            out.append(f"<span style='color:#64748b'>… ({tr(zh='已截断', en='truncated')})</span>")
            break
        text = seg.text[: max_chars - shown]
        shown += len(text)
        for cid in seg.chunk_ids:
            if cid not in started:
                started.add(cid)
                out.append(
                    f"<span style='font-size:0.7em;background:#334155;color:white;border-radius:3px;"
                    f"padding:0 3px;margin:0 2px'>{html.escape(cid)}</span>"
                )
        body = html.escape(text)
        if seg.is_gap:
            out.append(f"<span style='color:#94a3b8'>{body}</span>")
        elif seg.is_overlap:
            title = html.escape(" ∩ ".join(seg.chunk_ids))
            out.append(
                f"<span title='{title}' style='background:{OVERLAP_COLOUR};border-bottom:2px solid #b45309'>{body}</span>"
            )
        else:
            out.append(f"<span style='background:{chunk_colour(order.get(seg.chunk_ids[0], 0))}'>{body}</span>")
    return (
        "<div style='white-space:pre-wrap;line-height:1.9;font-size:0.92em;border:1px solid #e2e8f0;"
        "border-radius:6px;padding:10px;max-height:520px;overflow-y:auto'>" + "".join(out) + "</div>"
    )


def legend_html(items: Sequence[tuple[str, str]]) -> str:
    return " ".join(
        f"<span style='background:{colour};padding:1px 6px;border-radius:3px;margin-right:4px'>"
        f"{html.escape(label)}</span>"
        for label, colour in items
    )


def prompt_html(segments: Sequence[tuple[str, str]]) -> str:
    """The exact prompt, one coloured block per part (system / heading / context / question)."""
    blocks, role = [], None
    for kind, text in segments:
        new_role = "system" if kind == "system" else "user"
        if new_role != role:
            role = new_role
            blocks.append(f"<div style='font-weight:600;margin:8px 0 2px'>role: {role}</div>")
        blocks.append(
            f"<div style='background:{PART_COLOURS.get(kind, '#fff')};white-space:pre-wrap;padding:6px 8px;"
            f"border-radius:4px;margin-bottom:4px;font-family:ui-monospace,monospace;font-size:0.85em'>"
            f"<span style='font-size:0.75em;color:#475569'>[{kind}]</span>\n{html.escape(text)}</div>"
        )
    return "".join(blocks)


def anchor_id(ref: str) -> str:
    return "ref-" + re.sub(r"[^A-Za-z0-9_-]+", "-", ref)


def answer_html(answer: str, valid: set[str], numbers: dict[str, int]) -> str:
    """The answer with each [ref] turned into a marker: a link to the cited chunk below (green) or a
    struck-through red marker for a ref that was not in the context (hallucinated)."""

    def marker(ref: str) -> str:
        ref = ref.strip()
        if ref in valid:
            n = numbers.get(ref)
            label = html.escape(ref) + (f" · {n}" if n else "")
            return (
                f"<a href='#{anchor_id(ref)}' title='{html.escape(ref)}' style='text-decoration:none;"
                f"background:#dcfce7;color:#166534;border-radius:4px;padding:0 4px;font-size:0.8em'>[{label}]</a>"
            )
        return (
            f"<span title='{tr(zh='资料中没有这个引用（幻觉）', en='not in the context (hallucinated)')}' "
            f"style='background:#fee2e2;color:#991b1b;text-decoration:line-through;border-radius:4px;"
            f"padding:0 4px;font-size:0.8em'>[{html.escape(ref)}]</span>"
        )

    out, pos = [], 0
    for m in CITATION_RE.finditer(answer):
        out.append(html.escape(answer[pos : m.start()]))
        out.append("".join(marker(r) for r in parse_citations(m.group(0))))
        pos = m.end()
    out.append(html.escape(answer[pos:]))
    return "<div style='white-space:pre-wrap;line-height:1.8'>" + "".join(out) + "</div>"


def plain_text(text: str, quote: bool = False) -> None:
    """Corpus text exactly as it is: no Markdown (a "#" or "$" in a chunk must not become a heading or math)."""
    style = "white-space:pre-wrap;line-height:1.7"
    if quote:
        style += ";border-left:3px solid #cbd5e1;padding-left:10px;color:#475569"
    st.html(f"<div style='{style}'>{html.escape(text)}</div>")


def anchor(ref: str) -> None:
    st.html(f"<div id='{anchor_id(ref)}' style='height:1px'></div>")


def choice_line(stage: str, label: str, is_fallback: bool | None, reason: str = "") -> dict:
    """One row of a "what ran" table (is_fallback None: not a model, e.g. the corpus)."""
    kind = "—" if is_fallback is None else t("fallback") if is_fallback else t("real")
    return {
        tr(zh="阶段 Stage", en="Stage"): stage,
        tr(zh="实际运行 What ran", en="What ran"): loc(label),
        tr(zh="类型 Kind", en="Kind"): kind,
        tr(zh="原因 Why", en="Why"): loc(reason) or "—",
    }


def params_text(params: dict) -> str:
    """A chunker's parameters as a reader writes them ("target_size=400, overlap=1"), not as a Python dict."""
    return ", ".join(f"{k}={v}" for k, v in params.items()) or "—"

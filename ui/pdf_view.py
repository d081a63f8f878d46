"""The upload page's region view: how the PDF reader read a page, drawn over the page itself.

A PDF document of the session's corpus (read by rag/ingest/pdf_layout.py, its bytes kept in this session only:
ui/corpus.remember_pdfs) is read again for the view (a few hundredths of a second a page) and kept for one document at
a time; a page is rendered by PDFium with every line boxed in its region's colour (rag/ingest/pdf_regions.py), beside
the page's lines in reading order and whether the text keeps them. Everything from the PDF is shown as text, escaped.
Not handled here: telling the regions apart (pdf_layout.py), rendering (pdf_regions.py).
"""

from __future__ import annotations

import hashlib
import html

import pandas as pd
import streamlit as st

from rag.ingest.pdf_regions import COLOURS, NAMES, page_picture

from .i18n import loc, tr


def region_view(ss, doc) -> None:
    """The region view of `doc`, when it is a PDF read as a layout whose bytes this session still holds."""
    if doc.metadata.get("reader") != "layout":
        return
    with st.expander(tr(zh="这份 PDF 是怎么读的：页面上的区域", en="How this PDF was read: the regions of a page"),
                     icon=":material/picture_as_pdf:"):
        data = ss.get("corpus.pdfs", {}).get(doc.source)
        if data is None:
            st.info(tr(zh="这个会话里已经没有这份 PDF 的原文件了（页面刷新过，或上传了太多 PDF）：重新上传它就能看到区域。",
                       en="This session no longer holds the PDF file itself (the page was reloaded, or too many PDFs "
                       "were uploaded): upload it again to see its regions."))
            return
        reading = _reading(ss, doc.source, data)
        page = st.number_input(tr(zh="页码", en="Page"), min_value=1, max_value=len(reading.pages), value=1, step=1,
                               key="upload.pdf_page")
        png, lines = page_picture(reading, data, int(page))
        st.caption(tr(zh="阅读器把每一行归到一个区域：页眉页脚不计入正文（作为每页的附加信息保留），旁注放到它旁边那段之后，"
                      "图中文字和公式标为“不算正文”（不会被引用、出题或当作审计证据），代码整块保留。",
                      en="The reader puts every line in a region: the running header and footer are left out of the text "
                      "(kept as the page's metadata), a margin note goes after the paragraph beside it, figure text and "
                      "formulas are marked not prose (never quoted, asked about or taken as audit evidence), code is kept "
                      "whole."))
        st.html(_legend())
        left, right = st.columns([3, 2])
        left.image(png, caption=tr(zh=f"第 {int(page)} 页", en=f"page {int(page)}"))
        right.dataframe(pd.DataFrame([{tr(zh="区域", en="region"): loc(NAMES[x.region]),
                                       tr(zh="进入文本", en="in the text"): "✓" if x.kept else "✗",
                                       tr(zh="这一行", en="line"): x.text} for x in lines]),
                        hide_index=True, key="upload.pdf_lines")


def _reading(ss, source: str, data: bytes):
    """The layout reading of this PDF, kept for one document at a time in this session."""
    from rag.ingest.pdf_text import read_pdf

    key = (source, hashlib.sha1(data).hexdigest())
    held = ss.get("upload.pdf_reading")
    if held is None or held[0] != key:
        import pypdfium2 as pdfium

        pdf = pdfium.PdfDocument(data)
        try:
            held = (key, read_pdf(pdf, source))
        finally:
            pdf.close()
        ss["upload.pdf_reading"] = held
    return held[1]


def _legend() -> str:
    items = []
    for region, colour in COLOURS.items():
        if region == "footer":
            continue  # drawn as the header is
        items.append(f"<span style='display:inline-block;margin:0 10px 4px 0'><span style='display:inline-block;width:12px;"
                     f"height:12px;background:{colour};opacity:0.6;border-radius:2px;vertical-align:middle'></span> "
                     f"{html.escape(loc(NAMES[region]))}</span>")
    return "<div style='font-size:0.85em'>" + "".join(items) + "</div>"

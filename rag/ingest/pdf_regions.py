"""The region view: a PDF page rendered by PDFium with the regions the reader found drawn over it, so a student sees
why a chunk reads as it does (the running header left out, the margin note moved after its paragraph, the figure's
labels kept out of the prose).

`page_picture(reading, data, page)` returns the page as a PNG with a translucent box per segment, coloured by region
(COLOURS), and the page's lines with their regions, in reading order, for the table beside it.
Not handled here: telling the regions apart (pdf_layout.py), drawing the page in the app (app_pages/1_upload.py).
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from rag.ingest.pdf_layout import (
    CODE,
    FIGURE,
    FOOTER,
    FORMULA,
    HEADER,
    HEADING,
    MAIN,
    MARGIN,
    MARKUP,
    PdfReading,
)
from rag.messages import Msg

COLOURS = {MAIN: "#2563eb", HEADING: "#7c3aed", CODE: "#0f766e", FORMULA: "#c2410c", FIGURE: "#ca8a04",
           MARGIN: "#db2777", HEADER: "#6b7280", FOOTER: "#6b7280", MARKUP: "#9ca3af"}
NAMES = {MAIN: Msg(en="main text", zh="正文"), HEADING: Msg(en="heading", zh="标题"), CODE: Msg(en="code", zh="代码"),
         FORMULA: Msg(en="formula (not prose)", zh="公式（不算正文）"), FIGURE: Msg(en="figure text (not prose)", zh="图中文字（不算正文）"),
         MARGIN: Msg(en="margin note (moved after its paragraph)", zh="旁注（移到所在段落之后）"),
         HEADER: Msg(en="running header (left out)", zh="页眉（不计入）"), FOOTER: Msg(en="running footer (left out)", zh="页脚（不计入）"),
         MARKUP: Msg(en="printed markup (left out)", zh="印出来的标记（不计入）")}
KEPT = frozenset({MAIN, HEADING, CODE, FORMULA, FIGURE, MARGIN})  # regions whose text stays in the document
MAX_SCALE_PIXELS = 1400  # the rendered page's longer side, at most


@dataclass(frozen=True)
class PageLine:
    region: str
    text: str
    kept: bool  # in the document's text (a header, a footer or printed markup is not)


def page_picture(reading: PdfReading, data: bytes, page: int) -> tuple[bytes, list[PageLine]]:
    """(the page rendered with its regions as a PNG, its lines in reading order) for 1-based `page` of the PDF `data`
    that `reading` (pdf_text.read_pdf) read. A ValueError for a page the PDF does not have."""
    import pypdfium2 as pdfium
    from PIL import Image, ImageDraw

    if not 1 <= page <= len(reading.pages):
        raise ValueError(f"page {page} is not in this PDF (1 to {len(reading.pages)})")
    layout = reading.pages[page - 1]
    pdf = pdfium.PdfDocument(data)
    try:
        scale = min(2.0, MAX_SCALE_PIXELS / max(layout.width, layout.height, 1.0))
        image = pdf[page - 1].render(scale=scale).to_pil().convert("RGBA")
    finally:
        pdf.close()
    overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    for s in layout.segments:
        x0, y0, x1, y1 = s.box
        box = (x0 * scale - 2, (layout.height - y1) * scale - 2, x1 * scale + 2, (layout.height - y0) * scale + 2)
        rgb = tuple(int(COLOURS[s.region][k:k + 2], 16) for k in (1, 3, 5))
        draw.rectangle(box, fill=rgb + (48,), outline=rgb + (200,), width=2)
    out = io.BytesIO()
    Image.alpha_composite(image, overlay).convert("RGB").save(out, format="PNG")
    return out.getvalue(), [PageLine(s.region, s.text, s.region in KEPT) for s in layout.segments]

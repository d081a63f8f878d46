"""A teacher's PDF read as a page layout: each kind of noise a real course PDF has, in a small PDF made here (reportlab),
and the text the reader keeps (rag/ingest/pdf_layout.py, through documents.load_bytes and the chunker)."""

from __future__ import annotations

import io
import os
import re

import pytest

from rag.ingest.chunking import chunk_documents
from rag.ingest.documents import load_bytes
from rag.ingest.pdf_layout import readable
from rag.ingest.pdf_text import join_lines

reportlab = pytest.importorskip("reportlab")

from reportlab.pdfbase import pdfmetrics  # noqa: E402
from reportlab.pdfbase.cidfonts import UnicodeCIDFont  # noqa: E402
from reportlab.pdfbase.ttfonts import TTFont  # noqa: E402
from reportlab.pdfgen import canvas  # noqa: E402

pdfmetrics.registerFont(UnicodeCIDFont("STSong-Light"))
pdfmetrics.registerFont(TTFont("Vera", os.path.join(os.path.dirname(reportlab.__file__), "fonts", "Vera.ttf")))
W, H = 595, 842
ZH = "STSong-Light"

BODY = ["循环神经网络是一种具有短期记忆能力的神经网络，它在处理序列数据时把上一时刻的隐状态传给下一时刻。",
        "在训练时，循环神经网络可以使用随时间反向传播算法，把误差沿着时间一步一步地传回去。",
        "当序列很长时，梯度在反向传播的过程中会逐渐消失或者爆炸，所以网络很难学到远距离的依赖。",
        "长短期记忆网络通过引入门控机制来缓解这个问题，它用遗忘门、输入门和输出门控制信息的流动。"]


def make_pdf(draw, pages: int = 1) -> bytes:
    buf = io.BytesIO()
    c = canvas.Canvas(buf, pagesize=(W, H))
    for n in range(1, pages + 1):
        draw(c, n)
        c.showPage()
    c.save()
    return buf.getvalue()


def read(data: bytes, name: str = "chapter.pdf"):
    docs = load_bytes(name, data)
    assert len(docs) == 1 and docs[0].metadata.get("reader") == "layout"
    return docs[0]


def paragraph(c, lines, x=60, y=760, size=11, font=ZH, step=16):
    c.setFont(font, size)
    for line in lines:
        c.drawString(x, y, line)
        y -= step
    return y


def wrapped(text: str, width: int = 30) -> list[str]:
    """A Chinese paragraph as a layout wraps it: hard breaks inside words."""
    return [text[i:i + width] for i in range(0, len(text), width)]


def test_running_header_and_footer_are_left_out_and_kept_as_page_metadata():
    def draw(c, n):
        c.setFont(ZH, 9)
        c.drawString(60, 810, f"6.{n} 循环神经网络  2026年12月")
        c.drawString(500, 810, str(100 + n))
        c.drawString(60, 30, "邱锡鹏：《神经网络与深度学习》 https://nndl.github.io/")
        paragraph(c, wrapped(BODY[(n - 1) % 4] + BODY[n % 4]))

    doc = read(make_pdf(draw, pages=4))
    assert "nndl.github.io" not in doc.text and "2026年12月" not in doc.text and "101" not in doc.text
    assert "nndl.github.io" in doc.metadata["running_lines"]
    # a sentence broken across the page break reads whole: the header and footer no longer sit inside it
    assert "循环神经网络是一种具有短期记忆能力的神经网络" in doc.text
    chunks = chunk_documents([doc], "auto", target_size=400).chunks
    assert chunks and not any("nndl" in ch.text or "2026年12月" in ch.text for ch in chunks)
    assert {ch.metadata["page"] for ch in chunks} <= {"1", "2", "3", "4", "1-2", "2-3", "3-4", "1-3", "2-4", "1-4"}


def test_a_margin_note_is_not_spliced_into_the_sentence_beside_it():
    def draw(c, n):
        lines = wrapped(BODY[0] + BODY[1], 30)
        paragraph(c, lines)
        c.setFont(ZH, 7)  # a letter-spaced note in the right margin, on the body's baselines
        for k, note in enumerate(["R e L U 神 经 元 指 采 用", "R e L U 作 为 激 活 函 数 的", "神 经 元 。"]):
            c.drawString(470, 760 - 16 * k, note)

    doc = read(make_pdf(draw))
    body = join_lines("", "".join(wrapped(BODY[0] + BODY[1], 30)))
    assert body in doc.text  # the paragraph whole, no note inside it
    assert "旁注" in doc.text and "ReLU 神经元指采用" in doc.text  # the note after it, its letter-spacing taken out
    assert doc.text.index(body) < doc.text.index("旁注")


def test_a_two_sided_books_notes_sit_on_the_outer_side_and_each_is_read_whole():
    """A book printed two-sided (nndl's chapters): the text block shifts between right and left pages and the margin
    notes sit on the outer side, a gutter of an em and a half from the body, one note's first line on a body line's
    baseline. Each page's notes are notes (none spliced into a sentence, none taken for body text) and a note's lines
    read as one note."""
    note = ["生活中很多现象都可以", "用动力系统来描述。"]

    def draw(c, n):
        # 30 characters of 11 pt: 330 pt wide; page 1 (odd) has its notes on the right, 16 pt after the body's end,
        # page 2 (even) on the left, its body shifted right; the note's lines 12 pt apart, its first on the body's
        # first baseline, each drawn right after the body line beside it (as the book's PDF orders them)
        x_body, x_note = (60, 406) if n % 2 else (170, 60)
        for k, line in enumerate(wrapped(BODY[n - 1] + BODY[n + 1], 30)):
            paragraph(c, [line], x=x_body, y=760 - 16 * k)
            if k < len(note):
                paragraph(c, [note[k]], x=x_note, y=760 - 12 * k, size=8)

    doc = read(make_pdf(draw, pages=2))
    flat = doc.text.replace("\n", "")
    for n in (1, 2):
        assert BODY[n - 1] + BODY[n + 1] in flat  # each page's paragraph whole
    assert doc.text.count("（旁注：生活中很多现象都可以用动力系统来描述。）") == 2  # one note a page, its lines joined


def test_a_two_column_page_reads_column_by_column():
    left = wrapped(BODY[0] + BODY[1], 16)
    right = wrapped(BODY[2] + BODY[3], 16)

    def draw(c, n):
        c.setFont(ZH, 10)
        for k in range(max(len(left), len(right))):  # drawn row by row, as some printers do
            if k < len(left):
                c.drawString(60, 760 - 14 * k, left[k])
            if k < len(right):
                c.drawString(320, 760 - 14 * k, right[k])

    doc = read(make_pdf(draw))
    text = doc.text.replace("\n", "")
    for sentence in BODY:
        assert sentence in text
    assert text.index(BODY[1]) < text.index(BODY[2])


def test_a_hyphenated_word_and_a_ligature_are_read_as_words():
    def draw(c, n):
        c.setFont("Vera", 11)
        c.drawString(60, 760, "The Hop\ufb01eld network stores patterns as stable states of a recur-")
        c.drawString(60, 745, "rent network, and each update lowers its energy func-")
        c.drawString(60, 730, "tion until the network settles.")

    doc = read(make_pdf(draw))
    assert "Hopfield" in doc.text and "\ufb01" not in doc.text
    assert "recurrent network" in doc.text and "energy function" in doc.text


def test_figure_labels_and_axis_ticks_are_marked_as_not_prose():
    from PIL import Image
    from reportlab.lib.utils import ImageReader

    img = Image.new("RGB", (200, 120), "white")
    png = io.BytesIO()
    img.save(png, format="PNG")

    def draw(c, n):
        y = paragraph(c, wrapped(BODY[0], 30))
        c.drawImage(ImageReader(io.BytesIO(png.getvalue())), 60, y - 150, 220, 130)
        c.setFont("Helvetica", 8)
        for k, label in enumerate(["Conv", "1x1+1(S)", "MaxPool", "Concat"]):  # text inside the figure's box
            c.drawString(80 + 50 * k, y - 80, label)
        c.drawString(300, y - 160, "-6 -4 -2 0 2 4 6")  # axis ticks beside it
        paragraph(c, wrapped(BODY[1], 30), y=y - 200)

    doc = read(make_pdf(draw))
    from rag.ingest.markdown import nonprose_spans

    spans = nonprose_spans(doc.text)
    for label in ("Conv", "1x1+1(S)", "MaxPool", "-6 -4 -2"):
        at = doc.text.index(label)
        assert any(a <= at < b for a, b in spans), label  # inside a caption the stand-in never quotes
    assert BODY[1] in doc.text.replace("\n", "")


def test_an_images_label_printed_after_its_icon_is_a_caption_not_prose():
    """A chapter printed from the web whose pictures did not load: each is a small icon with its alt text on the same
    line. The label is a caption (the Markdown reader's "（图：…）"), not a line of prose or a sentence's tail; a
    sentence after a small inline image stays prose."""
    from PIL import Image
    from reportlab.lib.utils import ImageReader

    icon = io.BytesIO()
    Image.new("RGB", (16, 16), "gray").save(icon, format="PNG")

    def draw(c, n):
        y = paragraph(c, wrapped(BODY[0], 30))
        c.drawImage(ImageReader(io.BytesIO(icon.getvalue())), 60, y - 2, 12, 12)
        paragraph(c, ["爬楼梯对应递归树"], x=73, y=y)  # the alt text, right after the icon
        y = paragraph(c, wrapped(BODY[1], 30), y=y - 16)
        c.drawImage(ImageReader(io.BytesIO(icon.getvalue())), 60, y - 2, 12, 12)
        paragraph(c, [BODY[2][:30]], x=73, y=y)  # a sentence's first line after an inline icon: prose
        paragraph(c, wrapped(BODY[2], 30)[1:], y=y - 16)

    doc = read(make_pdf(draw))
    from rag.ingest.markdown import nonprose_spans

    assert "（图：爬楼梯对应递归树）" in doc.text
    at = doc.text.index("爬楼梯对应递归树")
    assert any(a <= at < b for a, b in nonprose_spans(doc.text))  # never quoted as an answer
    flat = doc.text.replace("\n", "")
    assert BODY[0] in flat and BODY[1] in flat and BODY[2] in flat  # the prose around it whole, nothing spliced in
    at = doc.text.index(BODY[2][:10])
    assert not any(a <= at < b for a, b in nonprose_spans(doc.text))


def test_headings_by_font_size_give_every_chunk_a_title_path():
    def draw(c, n):
        c.setFont(ZH, 20)
        c.drawString(60, 790, "6.2 简单循环网络")
        paragraph(c, wrapped(BODY[0] + BODY[1], 30), y=760)
        c.setFont(ZH, 15)
        c.drawString(60, 640, "6.2.1 随时间反向传播")
        paragraph(c, wrapped(BODY[2] + BODY[3], 30), y=610)

    doc = read(make_pdf(draw), "rnn.pdf")
    chunks = chunk_documents([doc], "auto", target_size=200).chunks
    assert chunks and all(ch.metadata["method"] == "auto: pdf" for ch in chunks)
    last = [ch for ch in chunks if BODY[3][:10] in ch.text][0]
    assert last.metadata["heading_path"][-2:] == ["6.2 简单循环网络", "6.2.1 随时间反向传播"]
    assert last.text.startswith(" › ".join(last.metadata["heading_path"]))


def test_a_pdf_with_no_outline_and_no_headings_still_reads_under_its_title():
    def draw(c, n):
        paragraph(c, wrapped(BODY[0] + BODY[1] + BODY[2], 30))

    doc = read(make_pdf(draw), "notes.pdf")
    chunks = chunk_documents([doc], "auto", target_size=400).chunks
    assert chunks and {tuple(ch.metadata["heading_path"]) for ch in chunks} == {("notes",)}
    assert chunks[0].text.startswith("notes\n")


def test_code_in_a_monospaced_font_is_one_fenced_block():
    def draw(c, n):
        y = paragraph(c, ["下面的代码实现了小批量随机梯度下降："])
        c.setFont("Courier", 10)
        for k, line in enumerate(["def sgd(params, lr):", "    for p in params:", "        p -= lr * p.grad"]):
            c.drawString(60, y - 12 * k, line)

    doc = read(make_pdf(draw))
    assert re.search(r"```\ndef sgd\(params, lr\):\n {4}for p in params:\n {8}p -= lr \* p\.grad\n```", doc.text)


def test_twins_of_cjk_characters_and_ligatures_read_as_what_they_look_like():
    assert readable("输⼊数据的⼤⼩，第 1 ⻚") == "输入数据的大小，第 1 页"
    assert readable("Hopﬁeld ﬂow") == "Hopfield flow"
    assert readable("逗号，句号。") == "逗号，句号。"  # full-width punctuation stays


def test_lines_join_as_a_reader_joins_them():
    assert join_lines("循环神", "经网络") == "循环神经网络"
    assert join_lines("recur-", "rent") == "recurrent"
    assert join_lines("state-of-the-", "Art") == "state-of-the- Art"
    assert join_lines("the network", "settles") == "the network settles"
    assert join_lines("使用 BM25", "检索") == "使用 BM25 检索"


def test_a_bullet_drawn_as_a_mark_opens_its_list_item_with_a_dash():
    """A browser prints a Markdown list's bullets as small drawn marks, not characters (hello_algo's PDF chapters): each
    item then reads as the Markdown reader reads it, "- " and its words, on a line of its own, so a sentence announcing
    the list is quoted with its items. A mark far from a line's start, or one too big for a bullet, opens nothing."""
    items = ["出现最差情况的概率很低：在绝大多数情况下能在线性对数时间内运行。", "缓存使用效率高：访问元素的效率较高。",
             "复杂度的常数系数小：操作的总数量最少。"]

    def draw(c, n):
        y = paragraph(c, ["快速排序的效率更高，主要有以下原因。"])
        for item in items:
            c.circle(72, y + 3.5, 1.8, stroke=0, fill=1)  # the bullet, left of the item's first glyph
            y = paragraph(c, [item], x=82, y=y)
        y -= 14  # a paragraph's gap after the list
        c.rect(300, y + 2, 3.5, 3.5, stroke=0, fill=1)  # a mark in the middle of a line: no bullet of it
        paragraph(c, ["之后的段落讲基准数优化，这一行在中间有一个小方块。"], y=y)
        c.rect(48, y - 30 + 1, 9, 9, stroke=0, fill=1)  # a square too big for a bullet, left of the next line
        paragraph(c, ["下一段的第一句话。"], y=y - 30)

    doc = read(make_pdf(draw))
    lines = doc.text.split("\n")
    assert [f"- {item}" for item in items] == [line for line in lines if line.startswith("- ")]
    assert "之后的段落讲基准数优化，这一行在中间有一个小方块。" in lines and "下一段的第一句话。" in lines  # no dash

    from rag.answer.extractive import in_context

    start = doc.text.index("快速排序的效率")
    quoted = in_context(doc.text, start, doc.text.index("原因。") + 3, set(), 1)
    assert quoted == ["快速排序的效率更高，主要有以下原因。", *[s for item in items for s in split(item)]]


def split(text: str) -> list[str]:
    from rag.ingest.sentences import split_sentences

    return split_sentences(text, semicolons=False)

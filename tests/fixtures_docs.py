"""Test helpers for loader and chunker tests: a handwritten PDF with a real text layer, and AES-encrypted copies.

pypdf's PdfWriter cannot add text, so `make_pdf` writes the smallest valid PDF by hand: a catalog,
a page tree, one page per string with a Helvetica (standard 14 font, no embedding) content stream
`BT /F1 12 Tf 72 720 Td (...) Tj ET`, and an xref table with exact byte offsets.
Not handled here: non-ASCII text (Helvetica's standard encoding only covers Latin-1).
"""

from __future__ import annotations


def _escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: list[str], title: str | None = None, damaged: dict[int, str] | None = None) -> bytes:
    """A valid PDF whose page k shows `pages[k]` (one line per "\\n"); an empty string is a blank page.

    `damaged` {k: how} breaks page k (0-based) the way real files break: "zlib" gives it a FlateDecode
    content stream that is not zlib data, "missing" points its /Contents at an object the file does not have."""
    damaged = damaged or {}
    n = len(pages)
    page_ids = [4 + 2 * k for k in range(n)]  # page object k; its content stream is page_id + 1
    objects: dict[int, bytes] = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % p for p in page_ids) + b"] /Count %d >>" % n,
        3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    }
    for pid, text in zip(page_ids, pages):
        ops = []
        for i, line in enumerate(text.split("\n")) if text else []:
            ops.append(f"BT /F1 12 Tf 72 {720 - 16 * i} Td ({_escape(line)}) Tj ET")
        stream = "\n".join(ops).encode("latin-1")
        how = damaged.get(page_ids.index(pid))
        contents = 9999 if how == "missing" else pid + 1
        objects[pid] = (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % contents
        )
        if how == "zlib":
            stream = b"x\x9c" + bytes(range(7, 200, 3))  # a zlib header, then bytes that do not inflate
            objects[pid + 1] = b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream"
        else:
            objects[pid + 1] = b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream"
    info = None
    if title is not None:
        info = max(objects) + 1
        objects[info] = b"<< /Title (" + _escape(title).encode("latin-1") + b") >>"
    out = bytearray(b"%PDF-1.4\n")
    offsets = {}
    for num in sorted(objects):
        offsets[num] = len(out)
        out += b"%d 0 obj\n" % num + objects[num] + b"\nendobj\n"
    xref = len(out)
    size = max(objects) + 1
    out += b"xref\n0 %d\n0000000000 65535 f \n" % size
    for num in range(1, size):
        out += b"%010d 00000 n \n" % offsets[num]
    trailer = b"<< /Size %d /Root 1 0 R" % size + (b" /Info %d 0 R" % info if info else b"") + b" >>"
    out += b"trailer\n" + trailer + b"\nstartxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def encrypt_pdf(data: bytes, user: str, owner: str) -> bytes:
    """`data` encrypted with AES-256 by pypdf; user="" gives a PDF with only an owner password."""
    import io

    import pypdf

    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=user, owner_password=owner, algorithm="AES-256")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()

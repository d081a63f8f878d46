"""Documents and loaders: turn uploaded files into `Document`s, the unit every later stage cuts up.

Formats: .txt .md .markdown (one document per file), .pdf (read as a page layout: pdf_layout.py; pypdf's text layer
where pypdfium2 is missing), .json .jsonl .csv (one document per record: `id`, `title`, `text`, optional metadata;
`question`/`answer` are accepted for title/text). Text is decoded as UTF-8 (with or without BOM),
UTF-16 with a BOM, or whatever encoding charset-normalizer finds plausible (GBK/GB18030, Big5,
Shift-JIS, UTF-16 without a BOM, ...), and line endings become "\\n". A bad file raises `LoaderError` whose message says how to fix it; `load_files`
collects those errors and keeps loading the other files.
Not handled here: OCR of scanned PDFs, Word/Excel files, HTML cleanup, cutting text (chunking.py).
"""

from __future__ import annotations

import csv
import io
import json
import logging
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath
from typing import Any, Iterable

from rag.errors import LoaderError
from rag.messages import Msg

# The one per-file limit. MB are 10**6 bytes, as the uploader's file chips count them (on Linux and macOS),
# so a file the chip calls "20.5MB" is the one this calls 20.5 MB. A bigger file is almost always the wrong one.
MAX_FILE_MB = 20
MAX_FILE_BYTES = MAX_FILE_MB * 10**6
KNOWLEDGE_BASE_PATH = Path(__file__).resolve().parents[2] / "data" / "faq.jsonl"

# Field names a record may use; the first one present wins.
ID_KEYS = ("id", "doc_id")
TITLE_KEYS = ("title", "question")
TEXT_KEYS = ("text", "answer", "content")
RECORD_LIST_KEYS = ("records", "data", "items")


@dataclass(frozen=True)
class Document:
    doc_id: str  # unique in a corpus; records: their `id`; files: the sanitised stem (+ "-2" on clash)
    text: str  # exactly what chunkers cut; records: title + "\n" + text (title omitted if empty)
    title: str = ""
    source: str = ""  # file name it came from
    metadata: dict = field(default_factory=dict)  # str -> str: source, url, section, updated_at, format, ...


@dataclass(frozen=True)
class LoadReport:
    documents: list[Document]
    errors: list[LoaderError]  # one per bad file; the other files still load
    counts: dict = field(default_factory=dict)  # file name -> documents loaded from it (good files only)
    warnings: list[LoaderError] = field(default_factory=list)  # files that loaded, but not whole (a PDF's unread pages)


# ---------------------------------------------------------------------------------------- decoding

_TEXT_CONTROL = {9, 10, 12, 13, 27}  # tab, LF, FF, CR, ESC occur in real text files
_ACCEPTED = ".txt, .md, .markdown, .pdf, .json, .jsonl, .csv"


def decode_bytes(data: bytes, source: str) -> tuple[str, str]:
    """Bytes -> (text, encoding).

    A BOM decides (UTF-8, UTF-16). Otherwise strict UTF-8 first: random bytes of other encodings are
    almost never valid UTF-8, while much UTF-8 is valid GB18030 (and would decode to mojibake). Anything
    else goes to charset-normalizer, which weighs every candidate encoding by how much sense the decoded
    text makes, so GBK/GB18030, Big5 (Traditional Chinese), Shift-JIS and UTF-16 without a BOM each come out
    as themselves. When no decoding is plausible the file is refused; mojibake is never loaded as success.
    """
    if not data.strip():
        raise LoaderError(source, Msg(en="the file is empty; add some text or remove it from the upload",
                                      zh="文件是空的：请加入文字，或把它从上传列表中移除"))
    if data.startswith(b"\xef\xbb\xbf"):
        text, encoding = data.decode("utf-8-sig", errors="strict"), "utf-8-sig"
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text, encoding = data.decode("utf-16"), "utf-16"  # Windows Notepad's "Unicode"
    else:
        _reject_containers(data, source)
        text, encoding = _detect(data, source)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise LoaderError(source, Msg(en="the file is empty (only whitespace); add some text or remove it",
                                      zh="文件只有空白字符：请加入文字，或把它移除"))
    return text, encoding


_UNDECODABLE = ("could not be decoded as text in any encoding that makes sense (tried UTF-8, GB18030/GBK, Big5, "
                "Shift-JIS, UTF-16 and others); save it as UTF-8 (e.g. VS Code: 'Save with Encoding' -> UTF-8; "
                "Notepad: Save as -> Encoding UTF-8)")
_UNDECODABLE_ZH = ("无法用任何说得通的编码解读成文字（已试过 UTF-8、GB18030/GBK、Big5、Shift-JIS、UTF-16 等）；"
                   "请另存为 UTF-8（VS Code：“通过编码保存”-> UTF-8；记事本：另存为 -> 编码 UTF-8）")
_BINARY_ZH = f"看起来是二进制文件，不是文字；支持的格式：{_ACCEPTED}"


def _detect(data: bytes, source: str) -> tuple[str, str]:
    if b"\x00" not in data:
        try:
            return data.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            pass
    try:
        from charset_normalizer import from_bytes
    except ImportError:  # pragma: no cover - a dependency of requests, always there in practice
        best = None
    else:
        best = _prefer(list(from_bytes(data)))
    if best is None or best.chaos > 0.2:  # chaos: share of the decoded text that looks like noise
        _reject_binary(data, source)
        raise LoaderError(source, Msg(en=_UNDECODABLE, zh=_UNDECODABLE_ZH))
    text = str(best)
    controls = sum(1 for ch in text[:4096] if ord(ch) < 32 and ch not in "\t\n\r\f")
    if controls > 0.02 * min(len(text), 4096):
        raise LoaderError(source, Msg(en=f"looks binary, not text; accepted formats are {_ACCEPTED}", zh=_BINARY_ZH))
    return text, best.encoding


# When several encodings read a file equally well (short or mostly-ASCII text: GBK and Korean CP949 can
# both decode a line of Chinese), a Chinese-first app takes them in this order.
_PREFERRED = ("gb18030", "big5", "cp932", "shift_jis", "euc_jp", "utf_16_le", "utf_16_be", "cp949", "euc_kr")


def _prefer(matches: list):
    """The best charset-normalizer match, ties (within 0.01 chaos and coherence) broken by _PREFERRED."""
    if not matches:
        return None
    top = matches[0]
    tied = [m for m in matches if m.chaos <= top.chaos + 0.01 and m.coherence >= top.coherence - 0.01]
    rank = {name: i for i, name in enumerate(_PREFERRED)}
    return min(tied, key=lambda m: (rank.get(m.encoding, len(rank)), matches.index(m)))


def _reject_containers(data: bytes, source: str) -> None:
    head = data[:8]
    if head.startswith(b"PK\x03\x04"):
        raise LoaderError(
            source, Msg(en=f"looks like a ZIP/Office file (.docx/.xlsx?); export it as PDF or text ({_ACCEPTED})",
                        zh=f"看起来是 ZIP/Office 文件（.docx/.xlsx？）：请导出为 PDF 或文本（{_ACCEPTED}）"),
        )
    if head.startswith(b"%PDF-"):
        raise LoaderError(source, Msg(en="is a PDF with the wrong extension; rename it to .pdf",
                                      zh="其实是 PDF，但扩展名不对：请改名为 .pdf"))


def _reject_binary(data: bytes, source: str) -> None:
    head = data[:8192]
    controls = sum(1 for b in head if (b < 32 and b not in _TEXT_CONTROL) or b == 127)
    if b"\x00" in head or controls > 0.1 * len(head):
        raise LoaderError(source, Msg(en=f"looks binary, not text; accepted formats are {_ACCEPTED}", zh=_BINARY_ZH))


# ------------------------------------------------------------------------------------ dispatching


def load_bytes(name: str, data: bytes) -> list[Document]:
    """One uploaded file -> its documents, dispatched on the extension. Raises LoaderError."""
    name = PurePath(name).name or name
    suffix = PurePath(name).suffix.lower()
    loader = LOADERS.get(suffix)
    if loader is None:
        shown, shown_zh = (f"'{suffix}'", f"“{suffix}”") if suffix else ("no extension", "没有扩展名")
        raise LoaderError(name, Msg(en=f"unsupported file type ({shown}); supported extensions: {', '.join(LOADERS)}",
                                    zh=f"不支持这种文件类型（{shown_zh}）；支持的扩展名：{', '.join(LOADERS)}"))
    if len(data) > MAX_FILE_BYTES:
        raise too_big(name, len(data))
    return _dedupe(loader(name, data), set())


def too_big(name: str, size: int) -> LoaderError:
    """The one message for a file over MAX_FILE_MB, wherever it is caught."""
    mb = math.ceil(size / 10**5) / 10  # rounded up: a file just over the limit never reads "20.0 MB"
    return LoaderError(name, Msg(en=f"is {mb:.1f} MB; the limit is {MAX_FILE_MB} MB per file: split it into smaller files",
                                 zh=f"有 {mb:.1f} MB，超过了每个文件 {MAX_FILE_MB} MB 的上限：请拆成几个小文件再上传"))


def load_path(path) -> list[Document]:
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:  # refuse before reading it into memory
            raise too_big(path.name, size)
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, PermissionError) as e:
        raise LoaderError(str(path), Msg(en=f"cannot be read ({type(e).__name__}); check the path",
                                         zh=f"无法读取（{type(e).__name__}）：请检查路径")) from e
    return load_bytes(path.name, data)


def load_files(files: Iterable[tuple[str, bytes]]) -> LoadReport:
    """Load many files; a bad file becomes one entry in `errors`, the rest still load.

    doc_ids are made unique across files: a clash gets "-2", "-3", ... appended ("#" is not used
    because it separates a document id from a chunk number in citations).
    """
    documents: list[Document] = []
    errors: list[LoaderError] = []
    warnings: list[LoaderError] = []
    counts: dict[str, int] = {}
    taken: set[str] = set()
    for name, data in files:
        try:
            docs = load_bytes(name, data)
        except LoaderError as e:
            errors.append(e)
            continue
        except Exception as e:  # a loader bug or a library crash must not sink the other files
            errors.append(LoaderError(name, Msg(en=f"could not be read ({type(e).__name__}: {e}); try saving it as .txt",
                                                zh=f"无法读取（{type(e).__name__}: {e}）；试试另存为 .txt")))
            continue
        docs = _dedupe(docs, taken)
        documents.extend(docs)
        warnings += [w for w in map(unread_pages_warning, docs) if w is not None]
        counts[PurePath(name).name] = counts.get(PurePath(name).name, 0) + len(docs)
    return LoadReport(documents=documents, errors=errors, counts=counts, warnings=warnings)


def load_jsonl_corpus(path) -> list[Document]:
    """A JSONL passage corpus ({"id", "title", "text"} per line), e.g. ../shared/eval/*/corpus.jsonl."""
    path = Path(path)
    if not path.is_file():
        raise LoaderError(str(path), Msg(en="not found; check the path to the corpus.jsonl file",
                                         zh="找不到：请检查 corpus.jsonl 文件的路径"))
    return _dedupe(_load_jsonl(path.name, path.read_bytes()), set())


def load_knowledge_base() -> list[Document]:
    """The bundled FAQ knowledge base (data/faq.jsonl)."""
    if not KNOWLEDGE_BASE_PATH.is_file():
        raise LoaderError(str(KNOWLEDGE_BASE_PATH), Msg(en="the bundled knowledge base is missing; restore data/faq.jsonl",
                                                        zh="内置知识库不见了：请恢复 data/faq.jsonl"))
    return load_jsonl_corpus(KNOWLEDGE_BASE_PATH)


def _dedupe(docs: list[Document], taken: set[str]) -> list[Document]:
    """Rename clashing doc_ids to id-2, id-3, ... (the original id stays in metadata)."""
    out = []
    for doc in docs:
        new_id, n = doc.doc_id, 1
        while new_id in taken:
            n += 1
            new_id = f"{doc.doc_id}-{n}"
        if new_id != doc.doc_id:
            doc = replace(doc, doc_id=new_id, metadata={**doc.metadata, "original_id": doc.doc_id})
        taken.add(new_id)
        out.append(doc)
    return out


# ---------------------------------------------------------------------------------- plain text


_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)


def safe_id(stem: str) -> str:
    """A file stem as a citable id: unicode letters/digits and _ - . kept, whitespace -> _, rest dropped."""
    out = "".join(
        ch if (ch.isalnum() or ch in "_-.") else "_" if ch.isspace() else "" for ch in stem.strip()
    )
    out = re.sub(r"_+", "_", out).strip("._-")
    return out or "document"


def _load_text(name: str, data: bytes) -> list[Document]:
    text, encoding = decode_bytes(data, name)
    m = _HEADING.search(text)
    title = m.group(1).strip() if m else name
    fmt = PurePath(name).suffix.lower().lstrip(".")
    meta = {"source": name, "format": fmt, "encoding": encoding}
    return [Document(safe_id(PurePath(name).stem), text, title=title, source=name, metadata=meta)]


# ------------------------------------------------------------------------------------------ PDF


def _pdf_pages(name: str, data: bytes) -> tuple[Any, list]:
    """(the pypdf reader, its pages), or a LoaderError that says what is wrong with the file and what to do."""
    try:
        import pypdf
    except ImportError as e:
        raise LoaderError(name, Msg(en="PDF support needs pypdf: pip install pypdf", zh="读取 PDF 需要 pypdf：pip install pypdf")) from e
    if not data.lstrip().startswith(b"%PDF-"):
        raise LoaderError(name, Msg(en="is not a PDF (no %PDF- header); re-export it as PDF or upload it as .txt",
                                    zh="不是 PDF（没有 %PDF- 文件头）：请重新导出为 PDF，或改传 .txt"))
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):  # "" opens a PDF with only an owner password
            raise LoaderError(name, Msg(en="is password-protected; save an unprotected copy and upload that",
                                        zh="有打开密码：请另存一份不加密的副本再上传"))
        return reader, list(reader.pages)
    except LoaderError:
        raise
    except pypdf.errors.DependencyError as e:  # AES without `cryptography`: not a damaged file
        raise LoaderError(name, Msg(en=f"is AES-encrypted and opening it needs the cryptography package: "
                                    f"pip install 'cryptography>=42' ({e})",
                                    zh=f"使用了 AES 加密，打开它需要 cryptography 包：pip install 'cryptography>=42'（{e}）")) from e
    except Exception as e:  # pypdf raises many types for damaged files
        raise LoaderError(
            name,
            Msg(en=f"is a damaged or malformed PDF ({type(e).__name__}: {e}); "
                "re-export it ('Save as PDF') or upload it as .txt",
                zh=f"是损坏或格式不对的 PDF（{type(e).__name__}: {e}）：请重新导出（“另存为 PDF”），或改传 .txt"),
        ) from e


def _load_pdf(name: str, data: bytes) -> list[Document]:
    """A PDF read as a page layout (pdf_layout.py: running headers and footers, margin notes, figures and formulas told
    apart from the text, headings found); pypdf's text layer where the layout reader cannot run (pypdfium2 missing, or
    it cannot open the file), labelled in the document's metadata. pypdf checks the file first, so a damaged or
    encrypted PDF gets the same clear message either way."""
    reader, pages = _pdf_pages(name, data)
    layout = _layout(name, data)
    if layout is not None and layout.text.strip():
        return [_layout_document(name, layout, reader, len(pages))]
    return _load_pdf_text_layer(name, reader, pages, fallback=layout is None)


def _layout(name: str, data: bytes):
    """The layout reading (pdf_layout.PdfReading), or None where the layout reader cannot run."""
    try:
        import pypdfium2 as pdfium

        from rag.ingest.pdf_text import read_pdf
    except ImportError:
        return None
    try:
        pdf = pdfium.PdfDocument(data)
    except Exception:  # PDFium refuses a file pypdf opened (a repaired xref, an odd encryption): the text layer reads it
        return None
    try:
        return read_pdf(pdf, name)
    finally:
        pdf.close()


def _layout_document(name: str, layout, reader, pages: int) -> Document:
    import json

    running = sorted({line for p in layout.pages for line in p.running})
    meta = {"source": name, "format": "pdf", "reader": "layout", "pages": str(pages),
            "page_starts": ",".join(map(str, layout.page_starts)),
            "pdf_blocks": json.dumps([[b.kind, b.start, b.end, b.level, b.page] for b in layout.blocks]),
            "running_lines": json.dumps(running[:40], ensure_ascii=False)}
    unread = {}  # 1-based page -> why its text is missing: pypdf's reason (a damaged stream), or a scan
    for p in layout.pages:
        if not p.segments:
            why = _page_text(reader.pages[p.number - 1])[1] if p.number <= len(reader.pages) else ""
            if why or p.images:  # a blank page is no warning
                unread[p.number] = why or "an image without a text layer (OCR it)"
    if unread and len(unread) < pages:
        meta["pages_unread"] = ",".join(map(str, unread))
        meta["pages_unread_why"] = " | ".join(f"{n}: {why}" for n, why in unread.items())
    return Document(safe_id(PurePath(name).stem), layout.text, title=layout.title or name, source=name, metadata=meta)


def _load_pdf_text_layer(name: str, reader, pages: list, fallback: bool = False) -> list[Document]:
    """pypdf's text layer, pages joined with a blank line (the reader before the layout one; what runs without
    pypdfium2)."""
    texts, unread = [], {}  # unread: 1-based page number -> why its text could not be read
    for number, page in enumerate(pages, 1):
        text, why = _page_text(page)
        texts.append(text)
        if why:
            unread[number] = why
    if not any(texts):
        if len(unread) == len(pages) and pages:
            raise LoaderError(
                name, Msg(en="pypdf could not extract text from any page; re-export the PDF or upload it as .txt",
                          zh="pypdf 没能从任何一页取出文字：请重新导出 PDF，或改传 .txt"),
            )
        raise LoaderError(
            name, Msg(en=f"has no extractable text in {len(pages)} page(s): probably scanned images; run OCR first "
                      "(e.g. `ocrmypdf in.pdf out.pdf`) or paste the text into a .txt file",
                      zh=f"{len(pages)} 页里都没有可提取的文字，可能是扫描图片：请先做 OCR（如 `ocrmypdf in.pdf out.pdf`），"
            "或把文字粘贴到 .txt 文件里"),
        )
    # Page k starts at page_starts[k-1] in the joined text, so a chunk can say which page it came from.
    starts, pos = [], 0
    for t in texts:
        starts.append(pos)
        pos += len(t) + 2
    title = name
    try:
        if reader.metadata and reader.metadata.title:
            title = str(reader.metadata.title).strip() or name
    except Exception:
        pass
    meta = {"source": name, "format": "pdf", "pages": str(len(pages)), "page_starts": ",".join(map(str, starts)),
            "reader": "text layer (pypdf; the layout reader needs pypdfium2)" if fallback else "text layer (pypdf)"}
    if unread:  # load_files turns these into a warning: the file loaded, but not all of it
        meta["pages_unread"] = ",".join(map(str, unread))
        meta["pages_unread_why"] = " | ".join(f"{n}: {why}" for n, why in unread.items())
    return [Document(safe_id(PurePath(name).stem), "\n\n".join(texts), title=title, source=name, metadata=meta)]


class _Collect(logging.Handler):
    """pypdf's warnings while one page is read: for a corrupt stream or a missing object it logs and returns
    no text instead of raising, so its log is how a damaged page is told from a blank one."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _page_text(page) -> tuple[str, str]:
    """(the page's text, why it could not be read: "" when it was, or when the page is simply blank)."""
    log = logging.getLogger("pypdf")
    collect = _Collect()
    log.addHandler(collect)
    try:
        text = (page.extract_text() or "").replace("\x00", "").replace("\r\n", "\n").strip()
    except Exception as e:  # one bad page should not lose the others
        return "", f"{type(e).__name__}: {e}"[:200]
    finally:
        log.removeHandler(collect)
    if text:
        return text, ""
    if collect.messages:
        return "", collect.messages[0][:200]
    if _has_image(page):
        return "", "an image without a text layer (OCR it)"
    return "", ""


def _has_image(page) -> bool:
    try:
        xobjects = page["/Resources"].get_object().get("/XObject")
        return bool(xobjects) and any(x.get_object().get("/Subtype") == "/Image" for x in xobjects.get_object().values())
    except Exception:  # no resources, or a damaged dictionary: nothing to say
        return False


def unread_pages_warning(doc: Document) -> LoaderError | None:
    """A warning for a PDF some of whose pages could not be read (their text is missing from the corpus)."""
    pages = doc.metadata.get("pages_unread")
    if not pages:
        return None
    total = doc.metadata.get("pages", "?")
    why = doc.metadata.get("pages_unread_why", "")
    return LoaderError(
        doc.source or doc.doc_id,
        Msg(en=f"loaded only in part: the text of page(s) {pages} of {total} could not be read ({why}); the other pages are "
            "in the corpus. Re-export the PDF ('Save as PDF'), or OCR it if those pages are scans",
            zh=f"只载入了一部分：{total} 页中第 {pages} 页的文字读不出来（{why}），其余页已进入语料。"
        "请重新导出 PDF（“另存为 PDF”）；如果这些页是扫描图片，请先做 OCR"))


# -------------------------------------------------------------------------------------- records


def _as_str(value) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    return "" if value is None else str(value)


def _first(record: dict, keys: tuple[str, ...]):
    for k in keys:
        if record.get(k) not in (None, ""):
            return record[k]
    return None


def _where_zh(where: str) -> str:
    """ "record 3" / "line 5" / "row 4" in Chinese."""
    kind, _, n = where.partition(" ")
    return {"record": f"第 {n} 条记录", "line": f"第 {n} 行", "row": f"第 {n} 行"}.get(kind, where)


def record_to_document(record: dict, name: str, n: int, where: str) -> Document:
    """One record -> Document. `n` is the 1-based record number, `where` names it in errors."""
    if not isinstance(record, dict):
        raise LoaderError(name, Msg(en=f"{where} is a {type(record).__name__}, not an object with a 'text' field",
                                    zh=f"{_where_zh(where)}是 {type(record).__name__}，不是带 'text' 字段的对象"))
    text = _first(record, TEXT_KEYS)
    rid = _first(record, ID_KEYS)
    label = f"{where} (id {rid!r})" if rid is not None else where
    label_zh = f"{_where_zh(where)}（id {rid!r}）" if rid is not None else _where_zh(where)
    if text is None or not _as_str(text).strip():
        raise LoaderError(name, Msg(en=f"{label} has no text; give every record a non-empty 'text' (or 'answer') field",
                                    zh=f"{label_zh}没有正文：每条记录都要有非空的 'text'（或 'answer'）字段"))
    title = _as_str(_first(record, TITLE_KEYS) or "").strip()
    body = _as_str(text).replace("\r\n", "\n").strip()
    meta = {"source": name, "format": PurePath(name).suffix.lower().lstrip("."), **_record_metadata(record)}
    doc_id = _as_str(rid).strip() if rid is not None else f"{safe_id(PurePath(name).stem)}-{n}"
    return Document(doc_id, f"{title}\n{body}" if title else body, title=title, source=name, metadata=meta)


def _record_metadata(record: dict) -> dict[str, str]:
    """A record's other fields as metadata (a `metadata` object's fields among them), as strings; None left out."""
    meta: dict[str, str] = {}
    used = set(ID_KEYS + TITLE_KEYS + TEXT_KEYS)
    for k, v in record.items():
        if k in used or v is None:
            continue
        if k == "metadata" and isinstance(v, dict):
            meta.update({str(mk): _as_str(mv) for mk, mv in v.items() if mv is not None})
        else:
            meta[str(k)] = _as_str(v)
    return meta


def _too_deep(name: str, lineno: int | None = None) -> LoaderError:
    where, where_zh = (f"line {lineno}: ", f"第 {lineno} 行：") if lineno else ("", "")
    return LoaderError(name, Msg(en=f"{where}the JSON is nested too deeply to read (more than about 1,000 levels of [ or {{); "
                                 "a record is a flat object with a 'text' field",
                                 zh=f"{where_zh}JSON 嵌套太深，无法读取（[ 或 {{ 超过约 1000 层）；每条记录应是带 'text' 字段的扁平对象"))


def _load_json(name: str, data: bytes) -> list[Document]:
    text, _ = decode_bytes(data, name)
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise LoaderError(
            name,
            Msg(en=f"malformed JSON at line {e.lineno}, column {e.colno}: {e.msg}; "
                "fix it (check it with `python -m json.tool FILE`)",
                zh=f"JSON 格式错误，在第 {e.lineno} 行第 {e.colno} 列：{e.msg}；请修正（可用 `python -m json.tool 文件` 检查）"),
        ) from e
    except RecursionError as e:
        raise _too_deep(name) from e
    if isinstance(obj, dict):
        key = next((k for k in RECORD_LIST_KEYS if isinstance(obj.get(k), list)), None)
        if key is not None:
            obj = obj[key]
        elif _first(obj, TEXT_KEYS) is not None:
            obj = [obj]  # a single record
    if not isinstance(obj, list):
        raise LoaderError(name, Msg(en='expected a list of records or an object with a "records"/"data"/"items" list',
                                    zh='应当是记录的列表，或带 "records"/"data"/"items" 列表的对象'))
    if not obj:
        raise LoaderError(name, Msg(en="contains no records; add objects with a 'text' field",
                                    zh="里面没有记录：请加入带 'text' 字段的对象"))
    return [record_to_document(r, name, i, f"record {i}") for i, r in enumerate(obj, 1)]


def _load_jsonl(name: str, data: bytes) -> list[Document]:
    text, _ = decode_bytes(data, name)
    docs: list[Document] = []
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise LoaderError(
                name, Msg(en=f"line {lineno}: malformed JSON ({e.msg}, column {e.colno}); each line must be one JSON object",
                          zh=f"第 {lineno} 行 JSON 格式错误（{e.msg}，第 {e.colno} 列）：每行必须是一个 JSON 对象"),
            ) from e
        except RecursionError as e:
            raise _too_deep(name, lineno) from e
        docs.append(record_to_document(record, name, len(docs) + 1, f"line {lineno}"))
    return docs


def _load_csv(name: str, data: bytes) -> list[Document]:
    text, _ = decode_bytes(data, name)
    header = text.split("\n", 1)[0]
    # The header decides the delimiter: tab if it has more tabs than commas (TSV), else comma.
    delimiter = "\t" if header.count("\t") > header.count(",") else ","
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)
    docs: list[Document] = []
    try:
        fields = [(f or "").strip().lower() for f in (reader.fieldnames or [])]
        if not any(k in fields for k in TEXT_KEYS):
            found = ", ".join(fields)
            raise LoaderError(name, Msg(en=f"has no 'text' (or 'answer') column; columns found: {found or 'none'}",
                                        zh=f"没有 'text'（或 'answer'）列；找到的列：{found or '无'}"))
        for row in reader:
            record = {(k or "").strip().lower(): v for k, v in row.items() if k is not None}
            if not any((v or "").strip() for v in record.values() if isinstance(v, str)):
                continue  # blank row
            docs.append(record_to_document(record, name, len(docs) + 1, f"row {reader.line_num}"))
    except csv.Error as e:
        raise LoaderError(
            name, Msg(en=f"malformed CSV near line {reader.line_num} ({e}); check the quoting or save it as UTF-8 CSV",
                      zh=f"CSV 格式错误，在第 {reader.line_num} 行附近（{e}）：请检查引号，或另存为 UTF-8 CSV"),
        ) from e
    if not docs:
        raise LoaderError(name, Msg(en="has a header but no rows; add rows or remove the file",
                                    zh="只有表头，没有数据行：请加入数据行，或移除这个文件"))
    return docs


LOADERS = {
    ".txt": _load_text,
    ".md": _load_text,
    ".markdown": _load_text,
    ".pdf": _load_pdf,
    ".json": _load_json,
    ".jsonl": _load_jsonl,
    ".csv": _load_csv,
}

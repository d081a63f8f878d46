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
from typing import Callable, Hashable, MutableMapping, Sequence

from rag.errors import LoaderError
from rag.ingest.documents import MAX_FILE_MB, Document, LoadReport, load_files

from . import models

# The browser may send a file of up to TRANSFER_MB (.streamlit/config.toml's maxUploadSize says the same;
# a test checks), five times the loader's MAX_FILE_MB, so that a file over the limit reaches the loader and
# gets a message in the UI's language instead of only the widget's red chip with an English tooltip. The
# one limit a user is told, on the page and in that message, is MAX_FILE_MB.
TRANSFER_MB = 5 * MAX_FILE_MB


def corpus_hash(docs: Sequence[Document]) -> str:
    h = hashlib.sha1()
    for d in docs:
        h.update(d.doc_id.encode("utf-8", "surrogatepass") + b"\0")
        h.update(d.text.encode("utf-8", "surrogatepass") + b"\0")
    return h.hexdigest()


def set_corpus(ss: MutableMapping, docs: Sequence[Document], name: str, files: list[dict]) -> None:
    ss["corpus.docs"] = list(docs)
    ss["corpus.name"] = name
    ss["corpus.files"] = files
    ss["corpus.hash"] = corpus_hash(docs)


def use_knowledge_base(ss: MutableMapping) -> None:
    docs = models.knowledge_base()
    set_corpus(ss, docs, "knowledge base (data/faq.jsonl)", [{"file": "faq.jsonl", "documents": len(docs)}])
    ss["corpus.errors"] = []


def sync_uploads(ss: MutableMapping, files: Sequence[tuple[str, bytes]] | Callable[[], Sequence[tuple[str, bytes]]],
                 mode: str, key: Hashable | None = None) -> LoadReport | None:
    """Make the corpus agree with the uploader's current files (name, bytes) in `mode`; None when nothing
    changed since the last call. The page passes the uploader's own identity of its list as `key` and
    `files` as a callable, so an unchanged list is neither read nor hashed on a rerun."""
    if key is None:
        files = files() if callable(files) else files
        key = tuple((name, hashlib.sha1(data).hexdigest()) for name, data in files)
    signature = (mode, key)
    if signature == ss.get("upload.sig"):
        return None
    ss["upload.sig"] = signature
    files = files() if callable(files) else files
    if not files:
        base = ss.pop("upload.base", None)
        if base is not None:  # the last file left the uploader: back to what the uploads built on
            set_corpus(ss, *base)
        ss["corpus.errors"] = []
        return None
    if "upload.base" not in ss:
        ss["upload.base"] = (list(ss["corpus.docs"]), ss["corpus.name"], list(ss["corpus.files"]))
    base_docs, base_name, base_files = ss["upload.base"]
    report = load_files(files)
    ss["corpus.errors"] = list(report.errors)
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
    return report


def clash_error(clash: Sequence[str]) -> LoaderError:
    return LoaderError(", ".join(clash[:5]), "already in the corpus; these documents were not added (rename the file "
                       "or use 'replace')", "已经在语料里了，这些文档没有加入（请给文件改名，或选“替换”）")


def _file_info(files: Sequence[tuple[str, bytes]], report: LoadReport) -> list[dict]:
    return [{"file": name, "documents": report.counts.get(name, 0), "sha1": hashlib.sha1(data).hexdigest()[:10],
             "bytes": len(data)} for name, data in files if name in report.counts]


def apply_upload(ss: MutableMapping, files: Sequence[tuple[str, bytes]], mode: str = "replace") -> LoadReport:
    """Load uploaded files into this session's corpus; per-file errors are kept in "corpus.errors".

    mode "replace": the files become the corpus; "append": their documents are added to the current one.
    When no file loads, the previous corpus stays as it was.
    """
    report = load_files(files)
    ss["corpus.errors"] = list(report.errors)
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
    return report

"""One session's corpus: the bundled knowledge base or the user's uploads, in st.session_state only,
so no other browser session ever sees them.

`apply_upload` loads files in replace or append mode; per-file errors are kept, and when nothing loads
the previous corpus stays. Not handled here: loading and decoding files (rag/ingest/documents.py).
"""

from __future__ import annotations

import hashlib
from typing import MutableMapping, Sequence

from rag.ingest.documents import Document, LoadReport, load_files

from . import models


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


def apply_upload(ss: MutableMapping, files: Sequence[tuple[str, bytes]], mode: str = "replace") -> LoadReport:
    """Load uploaded files into this session's corpus; per-file errors are kept in "corpus.errors".

    mode "replace": the files become the corpus; "append": their documents are added to the current one.
    When no file loads, the previous corpus stays as it was.
    """
    report = load_files(files)
    ss["corpus.errors"] = [str(e) for e in report.errors]
    if not report.documents:
        return report
    info = [
        {"file": name, "documents": report.counts.get(name, 0),
         "sha1": hashlib.sha1(data).hexdigest()[:10], "bytes": len(data)}
        for name, data in files
        if name in report.counts
    ]
    docs, names = list(report.documents), [i["file"] for i in info]
    if mode == "append":
        taken = {d.doc_id for d in ss["corpus.docs"]}
        clash = [d.doc_id for d in docs if d.doc_id in taken]
        if clash:
            ss["corpus.errors"].append(
                f"{', '.join(clash[:5])}: already in the corpus; these documents were not added (rename the file or "
                "use 'replace')"
            )
            docs = [d for d in docs if d.doc_id not in taken]
        docs = list(ss["corpus.docs"]) + docs
        info = list(ss["corpus.files"]) + info
        names = [ss["corpus.name"]] + names
    set_corpus(ss, docs, " + ".join(names), info)
    return report

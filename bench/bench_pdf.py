"""The PDF reader against pypdf's text layer: what each keeps of the hello_algo chapters printed to PDF, and how long a
200-page PDF takes.

    .venv/bin/python bench/bench_pdf.py

Columns, per reader, over ../shared/eval/hello_algo_pdf (ten chapters, the questions of ../hello_algo/queries_zh.jsonl):
- evidence found: the answerable questions whose evidence (plain-text comparison, rag/evaluate/evidence.py, as the
  folder's README describes: the first 12 plain characters) occurs in the text read from its gold PDF;
- chunks with a running line: chunks of the app's default chunker that hold the running header or footer
  ("Hello 算法", the site's address, "第 N 页");
- Kangxi twins: characters of the Kangxi radicals and CJK radicals blocks left in the text;
- seconds for a 200-page PDF: the ten chapters' pages imported again and again into one document (pypdfium2), read
  whole, best of three on the same machine in the same run (2 shared cores: compare the ratio, not the seconds).
Nothing here chose a constant of the reader: its constants are sizes of a printed page (docs/own-documents.md).
"""

from __future__ import annotations

import io
import json
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag import config, defaults  # noqa: E402
from rag.evaluate.evidence import plain  # noqa: E402
from rag.ingest.chunking import chunk_documents  # noqa: E402
from rag.ingest.documents import Document, _load_pdf, load_bytes  # noqa: E402

FOLDER = config.value("RAG_EVAL_DIR") / "hello_algo_pdf"
QUERIES = config.value("RAG_EVAL_DIR") / "hello_algo" / "queries_zh.jsonl"
RUNNING = re.compile(r"Hello 算法|hello-algo\.com|第\s*\d+\s*[页⻚]")
TWINS = re.compile("[\u2e80-\u2eff\u2f00-\u2fdf]")


def pypdf_docs() -> list[Document]:
    import pypdf

    out = []
    for f in sorted(FOLDER.glob("*.pdf")):
        reader = pypdf.PdfReader(str(f))
        text = "\n\n".join((p.extract_text() or "") for p in reader.pages)
        out.append(Document(f.stem, text, title=f.stem, source=f.name, metadata={"format": "pdf"}))
    return out


def layout_docs() -> list[Document]:
    return [d for f in sorted(FOLDER.glob("*.pdf")) for d in load_bytes(f.name, f.read_bytes())]


def figures(docs: list[Document]) -> tuple[int, int, int, int]:
    by_id = {d.doc_id: d for d in docs}
    qs = [json.loads(line) for line in QUERIES.read_text(encoding="utf-8").splitlines() if line.strip()]
    ans = [q for q in qs if q.get("answerable")]
    found = sum(plain(q["evidence"])[:12] in plain(by_id[q["gold_ids"][0]].text) for q in ans)
    chunks = chunk_documents(docs, defaults.CHUNKER, **defaults.CHUNK_PARAMS).chunks
    running = sum(bool(RUNNING.search(c.text)) for c in chunks)
    twins = sum(len(TWINS.findall(d.text)) for d in docs)
    return found, len(ans), running, twins


def big_pdf(pages: int = 200) -> bytes:
    import pypdfium2 as pdfium

    out = pdfium.PdfDocument.new()
    sources = [pdfium.PdfDocument(f.read_bytes()) for f in sorted(FOLDER.glob("*.pdf"))]
    while len(out) < pages:
        for src in sources:
            take = min(len(src), pages - len(out))
            if take <= 0:
                break
            out.import_pages(src, list(range(take)))
    buf = io.BytesIO()
    out.save(buf)
    return buf.getvalue()


def best_of(fn, n: int = 3) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    import pypdf

    print(f"bench_pdf: {FOLDER}")
    print("\n| reader | evidence found | chunks with a running line | Kangxi twins left |")
    print("|---|---:|---:|---:|")
    for name, docs in (("pypdf text layer (before)", pypdf_docs()), ("layout reader (pdf_layout.py)", layout_docs())):
        found, n, running, twins = figures(docs)
        print(f"| {name} | {found} / {n} | {running} | {twins} |")
    data = big_pdf()
    pages = len(pypdf.PdfReader(io.BytesIO(data)).pages)
    before = best_of(lambda: [p.extract_text() for p in pypdf.PdfReader(io.BytesIO(data)).pages])
    after = best_of(lambda: _load_pdf("big.pdf", data))  # the loader itself: the upload limit (20 MB) aside
    print(f"\n| a {pages}-page PDF | seconds (best of 3) | / pypdf |")
    print("|---|---:|---:|")
    print(f"| pypdf text layer | {before:.1f} | 1.00x |")
    print(f"| layout reader (pypdf's checks included) | {after:.1f} | {after / before:.2f}x |")


if __name__ == "__main__":
    main()

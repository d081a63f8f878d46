"""Class knowledge bases: what a build costs, what it takes on disk, and what 1 and 10 sessions on one hold in memory.

    .venv/bin/python bench/bench_kb.py                       # hello_algo's Chinese chapters and cmrc2018_dev's passages
    .venv/bin/python bench/bench_kb.py --sessions 1,10,30

Method. Each corpus is built into a knowledge base in a temporary RAG_KB_DIR (rag/index/kb.py `build`) twice: the
first build with an empty vector cache (every chunk embedded), the rebuild with the same files (the cache serves
every vector); the build time, the bundle's size on disk and its chunk count are printed. Then the app's shared
copy (ui/kb.py `SharedKnowledgeBases`) is opened by N "sessions" (each takes `session_copy`, what indexing.get_index
installs in a session), and the Python heap's growth (tracemalloc, which counts NumPy's arrays too) is measured from
before the first open; the reference, measured in the same run, is what N sessions that each build their own index
from the documents (as before knowledge bases, an upload per student) hold. The target: 10 sessions hold at most
1.2 times one session's growth. Timings on shared cores are noisy; the memory figures are not.
hello_algo's chapters and cmrc2018 choose nothing here: the bundle stores what any corpus gives it.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag import config  # noqa: E402
from rag.index import kb  # noqa: E402
from rag.index.build import build_index  # noqa: E402
from rag.ingest.chunking import chunk_documents  # noqa: E402
from rag.models.embedding import default_embedder_name, load_embedder  # noqa: E402
from rag.models.embedding_cache import CachedEmbedder  # noqa: E402


def corpora() -> dict[str, list[Path]]:
    root = config.value("RAG_EVAL_DIR")
    return {"hello_algo zh (chapters)": [root / "hello_algo" / "docs_zh"],
            "cmrc2018_dev (848 passages)": [root / "cmrc2018_dev" / "corpus.jsonl"]}


def size_on_disk(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.iterdir() if p.is_file())


def held(make, n: int) -> int:
    """Bytes the Python heap grew by while `make()` was called n times and every result was kept."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    kept = [make() for _ in range(n)]
    grown = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    del kept
    return grown


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sessions", default="1,10", help="session counts to measure (default 1,10)")
    args = p.parse_args()
    counts = [int(x) for x in args.sessions.split(",")]
    from ui.kb import SharedKnowledgeBases, session_copy

    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-kb-") as tmp:
        os.environ["RAG_KB_DIR"] = str(Path(tmp, "kbs"))
        inner = load_embedder(default_embedder_name())
        for label, paths in corpora().items():
            emb = CachedEmbedder(inner, cache_dir=Path(tmp, "cache", label.split()[0]))  # empty: the first build embeds
            name = label.split()[0].replace("2018_dev", "")
            t0 = time.perf_counter()
            first = kb.build(name, paths, embedder=emb)
            t_first = time.perf_counter() - t0
            t0 = time.perf_counter()
            kb.build(name, paths, embedder=emb)
            t_again = time.perf_counter() - t0
            m = first.manifest
            mem = {}
            for n in counts:
                shared = SharedKnowledgeBases(4)
                mem[("kb", n)] = held(lambda: session_copy(shared.get(name, embedder=emb)[0]), n)
                docs = kb.documents(name)
                mem[("own", n)] = held(lambda: build_index(chunk_documents(docs, m.chunker, **m.params), emb), n)
            rows.append((label, m.documents, m.chunks, t_first, t_again, size_on_disk(kb.folder(name)), mem))

    print(f"embedder: {inner.label}\n")
    print("| corpus | documents | chunks | first build (s) | rebuild, same files (s) | on disk (MB) |")
    print("|---|---|---|---|---|---|")
    for label, docs, chunks, t1, t2, size, _ in rows:
        print(f"| {label} | {docs} | {chunks} | {t1:.1f} | {t2:.1f} | {size / 1e6:.1f} |")
    print("\nheap growth (MB): N sessions on the shared knowledge base vs N sessions that each build their own index\n")
    print("| corpus | sessions | shared knowledge base | x one session | own index each | x one session |")
    print("|---|---|---|---|---|---|")
    ok = True
    for label, *_, mem in rows:
        one_kb, one_own = mem[("kb", counts[0])], mem[("own", counts[0])]
        for n in counts:
            kb_n, own_n = mem[("kb", n)], mem[("own", n)]
            print(f"| {label} | {n} | {kb_n / 1e6:.2f} | {kb_n / one_kb:.2f} | {own_n / 1e6:.2f} | {own_n / one_own:.2f} |")
            if n == 10 and kb_n > 1.2 * one_kb:
                ok = False
    print("\ntarget: 10 sessions on one knowledge base hold <= 1.2x one session's growth: " + ("met" if ok else "NOT met"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

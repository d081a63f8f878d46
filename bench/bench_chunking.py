"""Chunking speed on one megabyte of Chinese text, per chunker, as a ratio to a reference measured in the
same run: splitting the same text at sentence terminators with one `re.split` (the least any chunker
must do). Moved here from the unit tests, where a wall-clock bound failed on busy machines.

    .venv/bin/python bench/bench_chunking.py
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag.ingest.chunking import CHUNKERS, chunk_documents  # noqa: E402
from rag.ingest.documents import Document  # noqa: E402

SENTENCES = "检索增强生成先检索再回答。BM25 统计词频和文档频率！向量检索比较语义相似度？混合检索用 RRF 融合两路结果；"


def best_of(fn, n: int = 3) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    text = (SENTENCES * 4 + "\n\n## 小节\n\n") * (1_000_000 // (len(SENTENCES) * 4 + 9))
    doc = Document("big", text)
    ref = best_of(lambda: re.split(r"(?<=[。！？；])", text))
    print(f"{len(text):,} characters; reference re.split: {ref * 1000:.1f} ms\n")
    print("| chunker | chunks | seconds | / reference |")
    print("|---|---|---|---|")
    for method in CHUNKERS:
        n = [0]
        s = best_of(lambda: n.__setitem__(0, len(chunk_documents([doc], method).chunks)))
        print(f"| {method} | {n[0]:,} | {s:.2f} | {s / ref:.0f}x |")


if __name__ == "__main__":
    main()

"""BM25 index build at scale, tokenizing included: ours (rag/index/token_cache.py + bm25.py) vs bm25s.

    python bench/bench_bm25_build.py              # 100,000 passages
    python bench/bench_bm25_build.py --n 20000    # smaller

Passages: synthetic, assembled from cmrc2018_dev's real sentences (../shared/eval): passage i takes as many
sentences as a randomly picked real passage has, each drawn with replacement (numpy default_rng(seed)),
so vocabulary and lengths are the real corpus's at 100x its size.
Timed, in one run on the same texts:
- tokenize: jieba in this process vs token_cache's worker pool on the free cores;
- index: our BM25 from tokens vs bm25s (method="lucene", numpy backend) from the same tokens;
- re-index: tokens from token_cache's disk cache (a new process's memory: empty) + our index;
- cold and warm totals, ours vs bm25s (bm25s tokenizes nothing itself here: it gets jieba's tokens, so its
  cold total is jieba on one core + its index).
Not measured here: queries (bench_retrieval.py).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from rag import config  # noqa: E402

EVAL = config.value("RAG_EVAL_DIR")  # ../shared/eval unless RAG_EVAL_DIR says


def synthetic_texts(n: int, seed: int) -> list[str]:
    import re

    import numpy as np

    passages = [json.loads(line)["text"] for line in (EVAL / "cmrc2018_dev" / "corpus.jsonl").open(encoding="utf-8")]
    split = [[s for s in re.split(r"(?<=[。！？!?])", p) if s.strip()] for p in passages]
    pool = [s for sents in split for s in sents]
    rng = np.random.default_rng(seed)
    sizes = [len(split[i]) for i in rng.integers(0, len(split), n)]
    picks = rng.integers(0, len(pool), sum(sizes))
    out, pos = [], 0
    for size in sizes:
        out.append("".join(pool[j] for j in picks[pos:pos + size]))
        pos += size
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, help="tokenizer processes (default: token_cache.free_cores())")
    args = p.parse_args()
    import bm25s

    from rag.index import token_cache
    from rag.index.bm25 import BM25
    from rag.index.tokenize import jieba_tokenize

    texts = synthetic_texts(args.n, args.seed)
    jieba_tokenize("预热")  # load jieba's dictionary before any clock starts
    workers = args.workers or token_cache.free_cores()
    print(f"# BM25 build, {args.n:,} synthetic passages ({sum(map(len, texts)):,} characters), "
          f"{workers} tokenizer process(es)\n", flush=True)
    rows = []

    t0 = time.perf_counter()
    tokens = [jieba_tokenize(t) for t in texts]
    t_single = time.perf_counter() - t0
    token_cache._memory.clear()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "tokens.sqlite"
        t0 = time.perf_counter()
        pooled, stats = token_cache.tokenize_many(texts, persist=True, path=db, workers=workers)
        t_pool = time.perf_counter() - t0  # includes writing the disk cache
        assert pooled == tokens
        t0 = time.perf_counter()
        BM25().index_tokens(tokens)
        t_ours = time.perf_counter() - t0
        t0 = time.perf_counter()
        ref = bm25s.BM25(method="lucene", k1=1.5, b=0.75, backend="numpy")
        ref.index(tokens, show_progress=False)  # bm25s takes token lists as they are
        t_bm25s = time.perf_counter() - t0
        token_cache._memory.clear()  # a new process: memory empty, disk cache warm
        t0 = time.perf_counter()
        cached, stats2 = token_cache.tokenize_many(texts, persist=True, path=db)
        BM25().index_tokens(cached)
        t_warm = time.perf_counter() - t0
        assert stats2["tokenized"] == 0 and cached == tokens
    rows += [("tokenize: jieba, 1 process", t_single), (f"tokenize: token_cache, {stats['workers']} worker(s), "
             "writing the disk cache", t_pool), ("index: ours from tokens", t_ours),
             ("index: bm25s from the same tokens", t_bm25s),
             ("re-index: ours, tokens from the disk cache + index", t_warm)]
    print("| step | seconds |\n|---|---:|")
    for name, sec in rows:
        print(f"| {name} | {sec:.1f} |")
    cold_ours, cold_ref = t_pool + t_ours, t_single + t_bm25s
    print("\n| total | ours (s) | bm25s (s) | ours/bm25s |\n|---|---:|---:|---:|")
    print(f"| cold build (tokenize + index) | {cold_ours:.1f} | {cold_ref:.1f} | {cold_ours / cold_ref:.2f}x |")
    print(f"| re-index of seen text | {t_warm:.1f} | {cold_ref:.1f} | {t_warm / cold_ref:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

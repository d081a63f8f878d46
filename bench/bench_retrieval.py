"""Retrieval speed benchmark: our BM25 vs bm25s, our VectorStore vs NumPy brute force vs FAISS flat.

    python bench/bench_retrieval.py            # full run: 100k-passage BM25 corpus, 100k x 384 vectors
    python bench/bench_retrieval.py --quick    # smoke test, well under a minute
    python bench/bench_retrieval.py --threads 2

Everything compared is measured in this one run, on this machine, with the same inputs, and reported
as a ratio next to the absolute times: absolute times on a shared machine say little by themselves.
Each timing is the best of --repeats runs, with the implementations interleaved so that background
load hits them alike.

BM25 (rag/index/bm25.py vs bm25s, method="lucene", k1=1.5, b=0.75, numpy backend, single thread):
- cmrc2018_dev: its 848 passages (title + "\\n" + text) and 300 queries, jieba-tokenised once with
  rag.index.tokenize.jieba_tokenize; both implementations get the same token lists.
- synthetic: N passages assembled from cmrc2018_dev's sentences. Each passage's tokens are split into
  sentences after 。！？!?; then synthetic passage i takes as many sentences as a randomly picked real
  passage has, each drawn uniformly (with replacement) from the ~10k-sentence pool, using
  numpy.random.default_rng(seed). Same vocabulary and sentence statistics as the real corpus, 100x
  the size; the 300 cmrc2018 queries are run against it.
Dense top-k (rag/index/vectorstore.py vs NumPy full argsort vs faiss.IndexFlatIP): N random unit vectors of
dim 384 (float32); queries are noisy copies of stored vectors (so top-1 is clear and the rest is the
usual close race), one query at a time and as one batch.
Not measured here: retrieval quality (see rag/evaluate/evaluation.py), tokenisation time, embedding time.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from rag import config  # noqa: E402

EVAL = config.value("RAG_EVAL_DIR")  # ../shared/eval unless RAG_EVAL_DIR says
SENTENCE_ENDS = frozenset("。！？!?")


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="small sizes: a smoke test in under a minute")
    p.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP/FAISS threads (default 1)")
    p.add_argument("--repeats", type=int, default=3, help="timings are the best of this many runs")
    p.add_argument("--bm25-docs", type=int, help="synthetic BM25 corpus size (default 100000, quick 10000)")
    p.add_argument("--vectors", type=int, help="dense vectors (default 100000, quick 20000)")
    p.add_argument("--queries", type=int, default=200, help="dense queries (default 200)")
    p.add_argument("--k", type=int, default=10, help="top-k (default 10)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--eval-dir", type=Path, default=EVAL, help="folder holding cmrc2018_dev/")
    args = p.parse_args(argv)
    args.bm25_docs = args.bm25_docs or (10_000 if args.quick else 100_000)
    args.vectors = args.vectors or (20_000 if args.quick else 100_000)
    if args.quick:
        args.repeats = min(args.repeats, 2)
    return args


ARGS = parse_args()
# Thread counts must be fixed before NumPy/SciPy load their BLAS.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "RAG_THREADS"):
    os.environ[_var] = str(ARGS.threads)

import json  # noqa: E402

import numpy as np  # noqa: E402

from rag.index.bm25 import BM25  # noqa: E402
from rag.index.tokenize import jieba_tokenize  # noqa: E402


def best_of(fn, repeats: int) -> float:
    """Shortest wall time of `repeats` calls of fn()."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def race(fns: dict, repeats: int) -> dict[str, float]:
    """Best-of-`repeats` wall time of each fn, run round-robin (a, b, c, a, b, c, ...)."""
    best = {name: float("inf") for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t)
    return best


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# ---- BM25 ---------------------------------------------------------------------------------------
def load_cmrc(eval_dir: Path) -> tuple[list[list[str]], list[list[str]]]:
    folder = eval_dir / "cmrc2018_dev"
    corpus = read_jsonl(folder / "corpus.jsonl")
    queries = read_jsonl(folder / "queries.jsonl")
    docs = [jieba_tokenize(f"{c['title']}\n{c['text']}" if c["title"] else c["text"]) for c in corpus]
    return docs, [jieba_tokenize(q["query"]) for q in queries]


def synthesise(docs: list[list[str]], n: int, seed: int) -> list[list[str]]:
    """n passages of real sentences shuffled across passages (see the module docstring)."""
    sentences, per_doc = [], []
    for doc in docs:
        start, count = 0, 0
        for i, tok in enumerate(doc):
            if tok in SENTENCE_ENDS:
                sentences.append(doc[start : i + 1])
                start, count = i + 1, count + 1
        if start < len(doc):
            sentences.append(doc[start:])
            count += 1
        per_doc.append(count)
    rng = np.random.default_rng(seed)
    lengths = rng.choice(np.asarray(per_doc), size=n)
    picks = rng.integers(0, len(sentences), size=int(lengths.sum()))
    out, pos = [], 0
    for length in lengths.tolist():
        passage = []
        for s in picks[pos : pos + length].tolist():
            passage.extend(sentences[s])
        out.append(passage)
        pos += length
    return out


def compare_top_k(ours, ref_docs, ref_scores, scale: float) -> tuple[int, int]:
    """(queries whose top-k ids are identical, queries whose top-k scores are identical).

    bm25s pads with zero-score documents when fewer than k match; ours stops, so compare the > 0 part.
    Identical scores with different ids means tied documents listed in another order."""
    same_ids = same_scores = 0
    for (idx, scores), r_idx, r_scores in zip(ours, ref_docs, ref_scores):
        keep = r_scores > 0
        r_idx, r_scores = r_idx[keep], r_scores[keep] * scale
        if len(idx) == len(r_idx) and np.allclose(scores, r_scores, rtol=1e-4, atol=0):
            same_scores += 1
            same_ids += bool(np.array_equal(idx, r_idx))
    return same_ids, same_scores


def bench_bm25(name: str, docs, queries, k: int, repeats: int, build_repeats: int) -> dict:
    import bm25s

    k1, b = 1.5, 0.75

    def build_ours():
        return BM25(k1=k1, b=b).index_tokens(docs)

    def build_ref():
        ref = bm25s.BM25(method="lucene", k1=k1, b=b, backend="numpy")
        ref.index(docs, show_progress=False)
        return ref

    built = {}
    build = race(
        {"ours": lambda: built.__setitem__("ours", build_ours()), "bm25s": lambda: built.__setitem__("bm25s", build_ref())},
        build_repeats,
    )
    ours, ref = built["ours"], built["bm25s"]

    results = {}

    def run_ours():
        results["ours"] = [ours.search_tokens(q, k) for q in queries]

    def run_ref():
        # n_threads=0: bm25s's own single-threaded loop; backend_selection="numpy": argpartition top-k
        results["bm25s"] = ref.retrieve(queries, k=k, backend_selection="numpy", n_threads=0, show_progress=False)

    query = race({"ours": run_ours, "bm25s": run_ref}, repeats)
    same_ids, same_scores = compare_top_k(results["ours"], results["bm25s"].documents, results["bm25s"].scores, k1 + 1)
    return {
        "corpus": name,
        "docs": len(docs),
        "tokens": sum(map(len, docs)),
        "queries": len(queries),
        "index_s": build,
        "qps": {impl: len(queries) / t for impl, t in query.items()},
        "same_ids": same_ids,
        "same_scores": same_scores,
    }


# ---- dense --------------------------------------------------------------------------------------
def unit_rows(x: np.ndarray) -> np.ndarray:
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def numpy_brute(vectors: np.ndarray, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The reference: score everything, sort everything (stable, so ties go to the lower index)."""
    scores = queries @ vectors.T
    top = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return top, np.take_along_axis(scores, top, axis=1)


def agreement(a_idx, a_scores, b_idx, b_scores) -> tuple[int, int]:
    """(queries with identical top-k ids, queries whose top-k scores agree within 1e-5: ties aside)."""
    same_ids = int(sum(np.array_equal(x, y) for x, y in zip(a_idx, b_idx)))
    same_scores = int(sum(np.allclose(x, y, rtol=0, atol=1e-5) for x, y in zip(a_scores, b_scores)))
    return same_ids, same_scores


def bench_dense(n: int, n_queries: int, dim: int, k: int, repeats: int, seed: int, threads: int) -> list[dict]:
    import faiss

    faiss.omp_set_num_threads(threads)
    rng = np.random.default_rng(seed)
    vectors = unit_rows(rng.standard_normal((n, dim), dtype=np.float32))
    picks = rng.integers(0, n, size=n_queries)
    queries = unit_rows(vectors[picks] + 0.1 * rng.standard_normal((n_queries, dim), dtype=np.float32))

    flat = faiss.IndexFlatIP(dim)
    flat.add(vectors)
    try:
        from rag.index.vectorstore import VectorStore
    except ImportError as exc:  # written in parallel: the bench still runs the references without it
        print(f"(rag.index.vectorstore not importable: {exc}; VectorStore rows skipped)")
        store = None
    else:
        store = VectorStore(dim)
        store.add(vectors, [str(i) for i in range(n)])

    fns_single = {
        "numpy": lambda: [numpy_brute(vectors, q[None], k) for q in queries],
        "faiss": lambda: [flat.search(q[None], k) for q in queries],
    }
    fns_batch = {
        "numpy": lambda: numpy_brute(vectors, queries, k),
        "faiss": lambda: flat.search(queries, k),
    }
    if store is not None:
        fns_single["vectorstore"] = lambda: [store.search(q, k) for q in queries]
        fns_batch["vectorstore"] = lambda: store.search(queries, k)

    ref_idx, ref_scores = numpy_brute(vectors, queries, k)
    f_scores, f_idx = flat.search(queries, k)
    rows = []
    for mode, fns in (("one query at a time", fns_single), ("one batch", fns_batch)):
        times = race(fns, repeats)
        row = {"mode": mode, "n": n, "queries": n_queries, "ms_per_query": {m: 1e3 * t / n_queries for m, t in times.items()}}
        row["faiss_vs_numpy"] = agreement(f_idx, f_scores, ref_idx, ref_scores)
        if store is not None:
            if mode == "one batch":
                s_idx, s_scores = store.search(queries, k)
            else:
                pairs = [store.search(q, k) for q in queries]
                s_idx, s_scores = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
            row["vs_vs_numpy"] = agreement(s_idx, s_scores, ref_idx, ref_scores)
            row["vs_vs_faiss"] = agreement(s_idx, s_scores, f_idx, f_scores)
        rows.append(row)
    return rows


# ---- report -------------------------------------------------------------------------------------
def print_bm25_table(rows: list[dict], k: int) -> None:
    print(f"\n### BM25: ours (rag/index/bm25.py) vs bm25s (numpy backend), top-{k}\n")
    print("| corpus | docs | tokens | queries | index ours (s) | index bm25s (s) | index time ours/bm25s "
          "| q/s ours | q/s bm25s | q/s ours/bm25s | top-k ids identical | top-k scores identical |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        i, q = r["index_s"], r["qps"]
        print(f"| {r['corpus']} | {r['docs']:,} | {r['tokens']:,} | {r['queries']} | {i['ours']:.2f} | {i['bm25s']:.2f} "
              f"| **{i['ours'] / i['bm25s']:.2f}x** | {q['ours']:,.0f} | {q['bm25s']:,.0f} | **{q['ours'] / q['bm25s']:.2f}x** "
              f"| {r['same_ids']}/{r['queries']} | {r['same_scores']}/{r['queries']} |")


def print_dense_table(rows: list[dict], dim: int, k: int) -> None:
    have_store = "vectorstore" in rows[0]["ms_per_query"]
    print(f"\n### Dense exact top-{k}: {rows[0]['n']:,} x {dim} float32, {rows[0]['queries']} queries\n")
    head = "| mode | NumPy argsort (ms/q) | FAISS IndexFlatIP (ms/q) |"
    sep = "|---|---:|---:|"
    if have_store:
        head += " VectorStore (ms/q) | VectorStore/FAISS time | VectorStore/NumPy time | VectorStore = NumPy top-k | VectorStore = FAISS top-k |"
        sep += "---:|---:|---:|---:|---:|"
    head += " FAISS = NumPy top-k |"
    sep += "---:|"
    print(head)
    print(sep)
    for r in rows:
        t = r["ms_per_query"]
        line = f"| {r['mode']} | {t['numpy']:.3f} | {t['faiss']:.3f} |"
        if have_store:
            n = r["queries"]
            line += (f" {t['vectorstore']:.3f} | **{t['vectorstore'] / t['faiss']:.2f}x** | **{t['vectorstore'] / t['numpy']:.2f}x** "
                     f"| {fmt_agree(r['vs_vs_numpy'], n)} | {fmt_agree(r['vs_vs_faiss'], n)} |")
        line += f" {fmt_agree(r['faiss_vs_numpy'], r['queries'])} |"
        print(line)
    print("\n(\"a/b/n\": a queries with identical ids, b with identical scores to 1e-5, of n; "
          "b > a means tied or float-rounding-close scores listed in another order.)")


def fmt_agree(pair: tuple[int, int], n: int) -> str:
    return f"{pair[0]}/{pair[1]}/{n}"


def main() -> None:
    args = ARGS
    import bm25s
    import faiss
    import scipy

    print(f"# bench_retrieval {'--quick ' if args.quick else ''}(threads={args.threads}, best of {args.repeats})")
    print(f"python {platform.python_version()}, numpy {np.__version__}, scipy {scipy.__version__}, "
          f"bm25s {bm25s.__version__}, faiss {faiss.__version__}, {os.cpu_count()} CPUs, {platform.machine()}")
    t0 = time.perf_counter()

    docs, queries = load_cmrc(args.eval_dir)
    print(f"tokenised cmrc2018_dev with jieba in {time.perf_counter() - t0:.1f} s (not part of any comparison)")
    synthetic = synthesise(docs, args.bm25_docs, args.seed)
    bm25_rows = [bench_bm25("cmrc2018_dev", docs, queries, args.k, max(args.repeats, 3), args.repeats)]
    # the 100k index takes tens of seconds per build with bm25s: build it once (queries: best of repeats)
    bm25_rows.append(bench_bm25(f"synthetic (seed {args.seed})", synthetic, queries, args.k, args.repeats, 1))
    del synthetic

    dense_rows = bench_dense(args.vectors, args.queries, 384, args.k, args.repeats, args.seed, args.threads)

    print_bm25_table(bm25_rows, args.k)
    print_dense_table(dense_rows, 384, args.k)
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()

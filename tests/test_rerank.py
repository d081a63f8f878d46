"""Reranking: the real CrossEncoder code path on a tiny locally built model, fast failure without the
hub, the labelled sentence-maxsim fallback, and the before/after bookkeeping of rerank()."""

from __future__ import annotations

import numpy as np
import pytest

from rag.errors import ConfigError, ModelUnavailableError
from rag.ingest.sentences import split_sentences
from rag.search.hits import Hit
from rag.search.rerank import (
    FALLBACK,
    RERANKERS,
    CrossEncoderReranker,
    RerankMove,
    SentenceMaxSimReranker,
    load_reranker,
    rerank,
)
from tests.fakes import BigramEmbedder

WORDS = (
    "the a is of to and in for how what when long days return returns refund refunds policy order orders "
    "shipping ship free paid customer customers store we our you your within after item items weather "
    "sunny rain today tomorrow recipe cook pork sugar stock price market"
).split()
QUERY = "how long is the return policy"
TEXTS = [
    "the weather is sunny today",
    "returns are free within 30 days of your order",
    "our store ships orders after payment",
    "cook the pork with sugar",
    "refunds are paid to the customer within 7 days",
]


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    """A 2-layer, 32-wide BERT sequence classifier with one logit, saved like any hub cross-encoder."""
    import torch
    from transformers import (
        BertConfig,
        BertForSequenceClassification,
        BertTokenizerFast,
    )

    path = tmp_path_factory.mktemp("tiny-cross-encoder")
    words = set(WORDS) | set(" ".join([QUERY, *TEXTS]).lower().split())
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + sorted(words) + [str(d) for d in range(10)]
    (path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab=str(path / "vocab.txt"), do_lower_case=True)
    assert "[UNK]" not in tokenizer.tokenize(" ".join(TEXTS)), "the tokenizer did not read vocab.txt"
    torch.manual_seed(0)
    config = BertConfig(  # initializer_range 0.3 (default 0.02) so untrained scores differ visibly
        vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, max_position_embeddings=64, num_labels=1, initializer_range=0.3,
    )
    model = BertForSequenceClassification(config).eval()
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def _direct_scores(path, query, texts) -> np.ndarray:
    """sigmoid(logit) from a plain transformers forward pass: the reference the reranker must match."""
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    batch = tok([query] * len(texts), list(texts), padding=True, truncation=True, return_tensors="pt")
    with torch.no_grad():
        logits = model(**batch).logits.squeeze(-1)
    return torch.sigmoid(logits).numpy()


def _hits(ids) -> list[Hit]:
    return [Hit(cid, 1.0 / r, r, "hybrid") for r, cid in enumerate(ids, 1)]


class FixedScores:
    """A reranker whose scores are given: isolates rerank()'s bookkeeping (the thing under test)."""

    name = label = "fixed scores"
    is_fallback = False
    reads_index = False

    def __init__(self, scores):
        self.scores = scores

    def score(self, query, texts, control=None):
        return np.array([self.scores[t] for t in texts], dtype=np.float32)


# ---------------------------------------------------------------------------- cross-encoder


def test_cross_encoder_scores_equal_a_direct_forward_pass(tiny_cross_encoder):
    reranker = CrossEncoderReranker(str(tiny_cross_encoder))
    assert reranker.is_fallback is False and "cross-encoder" in reranker.label
    scores = reranker.score(QUERY, TEXTS)
    expected = _direct_scores(tiny_cross_encoder, QUERY, TEXTS)
    assert scores.shape == (len(TEXTS),)
    np.testing.assert_allclose(scores, expected, atol=1e-5)
    assert len(set(np.round(expected, 4))) == len(TEXTS), "fixture must give distinct scores"
    # a different query gives different scores: the query is really read
    assert not np.allclose(reranker.score("weather today", TEXTS), scores, atol=1e-4)


def test_rerank_orders_by_cross_encoder_scores(tiny_cross_encoder):
    reranker = load_reranker(str(tiny_cross_encoder))
    ids = [f"c{i}" for i in range(1, len(TEXTS) + 1)]
    texts = dict(zip(ids, TEXTS))
    result = rerank(QUERY, _hits(ids), texts, reranker, top_k=3)

    expected = _direct_scores(tiny_cross_encoder, QUERY, TEXTS)
    order = list(np.argsort(-expected, kind="stable"))
    assert [h.chunk_id for h in result.hits] == [ids[i] for i in order[:3]]
    assert [h.rank for h in result.hits] == [1, 2, 3]
    assert all(h.retriever == "rerank" for h in result.hits)
    np.testing.assert_allclose([h.score for h in result.hits], expected[order[:3]], atol=1e-5)
    new_rank = {ids[i]: r for r, i in enumerate(order, 1)}
    assert result.moves == [
        RerankMove(cid, before, new_rank[cid] if new_rank[cid] <= 3 else None, pytest.approx(float(expected[before - 1]), abs=1e-5))
        for before, cid in enumerate(ids, 1)
    ]
    assert result.reranker == reranker.label and result.is_fallback is False


@pytest.mark.parametrize("offline", [True, False])
def test_unknown_hub_model_fails_fast(monkeypatch, offline, network_attempts):
    if offline:
        monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    else:  # exercise the reachability probe as well, against a local address (no DNS: one refused connect)
        from huggingface_hub import constants

        monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
        monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
        monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")
    with pytest.raises(ModelUnavailableError) as err:
        load_reranker("rag-teach-tests/no-such-reranker")
    assert network_attempts == ([] if offline else [("127.0.0.1", 9)])  # at most the one probe, no download
    assert FALLBACK in str(err.value)  # the message names the offline fallback


def test_missing_local_directory_is_a_clear_error(tmp_path):
    with pytest.raises(ModelUnavailableError, match="no model directory"):
        load_reranker(str(tmp_path / "nope" / "model"))


def test_a_reranker_that_cannot_load_falls_back_and_says_why_in_both_languages(tmp_path):
    """The fallback's reason carries the loader's message in the page's language (it was English in Chinese mode)."""
    from rag.backends import choose_reranker

    choice = choose_reranker(str(tmp_path / "nope" / "model"), BigramEmbedder())
    assert choice.is_fallback
    assert "no model directory" in choice.reason.en and "using the offline fallback" in choice.reason.en
    zh = choice.reason.zh
    assert "没有模型目录" in zh and "改用离线替身" in zh and "no model directory" not in zh
    from rag.models.gbdt import own_model

    with pytest.raises(ModelUnavailableError) as err:  # the answer gate's and selector's model for another embedder
        own_model(tmp_path, "bigram", "gate.txt", "python scripts/train_answering.py")
    assert "no gate.txt trained" in str(err.value) and "没有为向量模型 bigram 训练的 gate.txt" in err.value.localized("zh")


def test_registry_lists_bge_first_and_the_fallback():
    keys = list(RERANKERS)
    assert RERANKERS[keys[0]] == "BAAI/bge-reranker-base"
    assert RERANKERS["bge-reranker-v2-m3"] == "BAAI/bge-reranker-v2-m3"
    assert RERANKERS["ms-marco-MiniLM-L-6-v2"] == "cross-encoder/ms-marco-MiniLM-L-6-v2"
    assert FALLBACK in RERANKERS
    with pytest.raises(ConfigError, match="embedder"):
        load_reranker(FALLBACK, None)
    with pytest.raises(ConfigError, match="bge-reranker-base"):
        load_reranker("  ", BigramEmbedder())


# ---------------------------------------------------------------------------- maxsim fallback


def test_maxsim_is_labelled_as_a_fallback():
    r = load_reranker(FALLBACK, BigramEmbedder())
    assert isinstance(r, SentenceMaxSimReranker)
    assert r.is_fallback is True
    assert "fallback" in r.label and "not a cross-encoder" in r.label
    assert BigramEmbedder.label in r.label


@pytest.mark.parametrize("weight", [0.0, 0.25])
def test_maxsim_score_is_best_sentence_cosine(weight):
    emb = BigramEmbedder()
    r = SentenceMaxSimReranker(emb, chunk_weight=weight)
    texts = ["今天天气很好。退货政策是七天无理由退货！运费自理？", "one sentence only", "A first. A second one here."]
    got = r.score("退货政策是什么", texts)
    q = emb._vec("退货政策是什么")
    for text, score in zip(texts, got):
        best = max(float(emb._vec(s) @ q) for s in split_sentences(text))
        expected = (1 - weight) * best + weight * float(emb._vec(text) @ q)
        assert score == pytest.approx(expected, abs=1e-6)


def test_maxsim_lifts_the_chunk_with_the_answering_sentence(embedder):
    """Real bundled embedder: a chunk that is generally on topic is retrieved first, but the chunk
    with one sentence that answers the question wins after reranking."""
    query = "RRF 公式里的常数 k 一般取多少？"
    texts = {
        "generic": "混合检索会把多个检索器的结果合并成一个列表。合并的方法有很多种，各有优缺点。"
        "融合之后的列表通常比任何单一检索器更稳定。很多生产系统都采用这种做法。",
        "specific": "本节还介绍了向量数据库的部署与运维。RRF 的平滑常数 k 通常取 60。"
        "索引需要定期备份，磁盘空间要预留充足。",
    }
    reranker = load_reranker(FALLBACK, embedder)
    result = rerank(query, _hits(["generic", "specific"]), texts, reranker, top_k=2)
    assert [h.chunk_id for h in result.hits] == ["specific", "generic"]
    assert result.moves[1] == RerankMove("specific", 2, 1, pytest.approx(result.hits[0].score))
    assert result.is_fallback is True and "not a cross-encoder" in result.reranker


# ---------------------------------------------------------------------------- rerank() bookkeeping


def test_rerank_moves_ties_and_dropped_candidates():
    ids = ["a", "b", "c", "d"]
    texts = {cid: cid for cid in ids}
    scores = {"a": 0.1, "b": 0.9, "c": 0.5, "d": 0.9}
    result = rerank("q", _hits(ids), texts, FixedScores(scores), top_k=2)
    assert [(h.chunk_id, h.rank) for h in result.hits] == [("b", 1), ("d", 2)]  # tie keeps b before d
    assert [(m.chunk_id, m.before, m.after) for m in result.moves] == [
        ("a", 1, None), ("b", 2, 1), ("c", 3, None), ("d", 4, 2)]
    assert [m.score for m in result.moves] == pytest.approx([0.1, 0.9, 0.5, 0.9])


def test_rerank_top_k_larger_than_candidates_and_empty():
    result = rerank("q", _hits(["a", "b"]), {"a": "a", "b": "b"}, FixedScores({"a": 0.0, "b": 1.0}), top_k=10)
    assert [h.chunk_id for h in result.hits] == ["b", "a"]
    assert all(m.after is not None for m in result.moves)
    empty = rerank("q", [], {}, FixedScores({}), top_k=3)
    assert empty.hits == [] and empty.moves == []


@pytest.mark.parametrize("top_k", [0, -1, 2.5, True])
def test_rerank_rejects_bad_top_k(top_k):
    with pytest.raises(ConfigError, match="top_k"):
        rerank("q", _hits(["a"]), {"a": "a"}, FixedScores({"a": 1.0}), top_k=top_k)


def test_rerank_needs_every_candidate_text():
    with pytest.raises(ConfigError, match="b"):
        rerank("q", _hits(["a", "b"]), {"a": "a"}, FixedScores({"a": 1.0}), top_k=1)


@pytest.fixture(params=["cross-encoder", "sentence-maxsim"])
def any_reranker(request, tiny_cross_encoder):
    if request.param == "cross-encoder":
        return CrossEncoderReranker(str(tiny_cross_encoder))
    return SentenceMaxSimReranker(BigramEmbedder())


def test_every_reranker_follows_the_protocol(any_reranker):
    scores = any_reranker.score(QUERY, TEXTS)
    assert scores.shape == (len(TEXTS),) and np.all(np.isfinite(scores))
    assert any_reranker.score(QUERY, []).shape == (0,)
    assert isinstance(any_reranker.label, str) and isinstance(any_reranker.is_fallback, bool)
    again = any_reranker.score(QUERY, TEXTS)
    np.testing.assert_allclose(scores, again, atol=1e-6)  # deterministic


# ------------------------------------------------------------------------------------------ LLM judge

class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _judge_chat(clock, queued_s=0.0, fail_on=""):
    """A FakeChat whose verdicts cost 0.1 s on `clock`; its first call first waits `queued_s` behind another
    session (reported through control.waited, as LocalChat does); a passage containing `fail_on` fails."""
    from rag.errors import LLMError
    from tests.fake_chat import FakeChat

    class JudgeChat(FakeChat):
        def next_token_logprobs(self, messages, candidates, *, control=None):
            if not self.calls and queued_s:
                clock.now += queued_s
                control.waited(queued_s)
            if fail_on and fail_on in messages[-1]["content"]:
                self.calls.append({"kind": "failed"})
                raise LLMError("the passage does not fit the window")
            clock.now += 0.1
            return super().next_token_logprobs(messages, candidates, control=control)

    return JudgeChat(verdict=lambda m: 0.9 if "相关" in m[-1]["content"] else 0.2)


def test_the_llm_judges_budget_counts_time_holding_the_model_not_time_queued(monkeypatch):
    """Bug: the budget started before the model was free, so under load it judged one candidate."""
    from rag.models.control import RunControl
    from rag.search import llm_judge

    clock = _Clock()
    monkeypatch.setattr(llm_judge.time, "perf_counter", clock)
    judge = llm_judge.LLMJudgeReranker(_judge_chat(clock, queued_s=30.0), budget_s=1.0)
    control = RunControl()
    scores = judge.score("什么是重排？", [f"段落 {i}" for i in range(20)], control=control)
    assert control.stats["waited_s"] == 30.0
    assert int((~np.isnan(scores)).sum()) == 10  # 1 s of 0.1 s verdicts, after 30 s in the queue


def test_the_llm_judges_failures_are_said_in_the_rerank_note(monkeypatch):
    """Bug: a failed judge call was swallowed ("judged 0 of 20" and no reason)."""
    from rag.search import llm_judge

    clock = _Clock()
    monkeypatch.setattr(llm_judge.time, "perf_counter", clock)
    judge = llm_judge.LLMJudgeReranker(_judge_chat(clock, fail_on="坏"), budget_s=60)
    hits = [Hit(chunk_id=c, score=1.0 / r, rank=r, retriever="hybrid") for r, c in enumerate(["a", "b", "c"], 1)]
    texts = {"a": "坏的段落", "b": "相关的段落", "c": "另一段"}
    result = rerank("什么是重排？", hits, texts, judge, top_k=2)
    assert "could not judge 1 of 3" in result.note and "does not fit the window" in result.note
    assert [h.chunk_id for h in result.hits][0] == "b"

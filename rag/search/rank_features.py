"""Features of one (question, candidate chunk) pair for the learned ranker, from signals this pipeline computes.

Learning to rank (Liu, "Learning to Rank for Information Retrieval", 2009) scores a candidate from many cheap
signals instead of one. Every feature here comes from a stage that already exists: the index's vectors (dense),
its BM25 (lexical), RRF (fusion), the fallback reranker's best-sentence cosine, the tokenizer. One row per
candidate, in FEATURES order; `describe` holds the one-line meaning of each, which page 4 shows.

Ranks are over the whole corpus (not the cut lists), so a candidate that one list did not return still has a
rank, and log-scaled (log2(1 + rank)), so rank 1 vs 2 matters more than 41 vs 42. Features named `*_gap` are
relative to the best candidate of the same question: absolute cosines differ from question to question, the gap
to the best one less so. The dense features use the question's own vector (HyDE's vector, when HyDE ran, is
not a feature: the model was trained without it).
Left out on purpose: the learned-sparse list (off by default, so a model trained with it would mostly see it
missing), anything that calls a language model (seconds per pair: see llm_judge.py).
Not handled here: the model (learned_rank.py) and training (scripts/train_reranker.py).
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from rag.index.token_cache import tokenize_many
from rag.index.tokenize import jieba_tokenize, load_stopwords
from rag.ingest.sentences import split_sentences, without_line_markers
from rag.messages import Msg

RRF_K = 60  # as retrieval's default fusion (Cormack et al., 2009)

# name -> what it means, in the order of a feature row (the model file stores the same names; a test keeps them equal)
describe: dict[str, Msg] = {
    "dense_cos": Msg(zh="问题向量与块向量的余弦", en="cosine of the question and chunk vectors"),
    "dense_gap": Msg(zh="余弦减去本题候选中的最高余弦", en="cosine minus the best candidate's cosine for this question"),
    "dense_rank": Msg(zh="全库稠密检索名次 log2(1+名次)", en="log2(1 + rank) in dense search over the whole corpus"),
    "bm25": Msg(zh="BM25 分数", en="BM25 score"),
    "bm25_share": Msg(zh="BM25 分数 / 本题 BM25 最高分", en="BM25 score / the question's top BM25 score"),
    "bm25_rank": Msg(zh="全库 BM25 名次 log2(1+名次)", en="log2(1 + rank) in BM25 over the whole corpus"),
    "rrf": Msg(zh="稠密与 BM25 名次的 RRF 分数 ×100", en="RRF score of the dense and BM25 ranks, x100"),
    "sent_cos": Msg(zh="最匹配句子的余弦（离线重排的信号）", en="cosine of the best-matching sentence (the fallback's signal)"),
    "sent_cos_gap": Msg(zh="最佳句余弦减去本题候选中的最高值", en="best-sentence cosine minus the best candidate's for this question"),
    "sent_bm25": Msg(zh="最匹配句子的 BM25（全库 idf，不做长度归一）", en="BM25 of the best sentence (corpus idf, no length norm)"),
    "sent_idf_share": Msg(zh="最佳句覆盖的问题主题词 idf 占比", en="share of the question's topic words' idf that the best sentence covers"),
    "q_words": Msg(zh="块中出现的问题主题词占比（不含“计算”“区别”等问法词）", en="share of the question's topic words (not asking words such as 'compute') found in the chunk"),
    "q_words_idf": Msg(zh="块中出现的问题主题词占比，按 idf 加权", en="share of the question's topic words found in the chunk, weighted by idf"),
    "title_words": Msg(zh="标题中出现的问题主题词占比", en="share of the question's topic words found in the title"),
    "chunk_chars": Msg(zh="块长度 log2(1+字符数)", en="chunk length, log2(1 + characters)"),
    "sentences": Msg(zh="块的句子数", en="number of sentences in the chunk"),
    "q_terms": Msg(zh="问题的主题词数", en="number of topic words in the question"),
}
FEATURES: tuple[str, ...] = tuple(describe)


@dataclass(frozen=True)
class FeatureRows:
    chunk_ids: list[str]  # one per row, in candidate order
    values: np.ndarray  # (len(chunk_ids), len(FEATURES)) float64

    def row(self, i: int) -> dict[str, float]:
        return dict(zip(FEATURES, self.values[i].tolist()))


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    return load_stopwords()


def _is_word(token: str) -> bool:
    return any(unicodedata.category(ch)[0] in "LN" for ch in token)


# Words that say what kind of answer a question wants, not what it is about: "RRF 是怎么计算的？" and the FAQ title
# "注意力机制是怎么计算的？" share 计算, which says nothing about whether the chunk is about RRF. The word-matching
# features leave them out (the stop words already drop 怎么, 什么, 如何); BM25 itself still sees every word.
QUESTION_WORDS = frozenset(
    "计算 算 定义 含义 意思 意义 原理 作用 用途 区别 不同 差别 联系 关系 优点 缺点 优缺点 好处 坏处 特点 步骤 流程 过程 方法 办法 "
    "怎样 怎么样 为何 哪些 哪个 哪种 多少 几个 是否 能否 可以 应该 需要 选 选择 设置 设 取 使用 用 做 是 有 好 更好 最好 "
    "how what why which when where who whom whose define definition difference compute computed calculate "
    "calculated mean means use used purpose".split())


def content_words(tokens: Sequence[str]) -> list[str]:
    """Distinct tokens that are words (a letter or digit in them) and not stopwords, in order."""
    stop = _stopwords()
    return list(dict.fromkeys(t for t in tokens if _is_word(t) and t not in stop))


def topic_words(tokens: Sequence[str]) -> list[str]:
    """The content words that name what a question is about: content_words without QUESTION_WORDS."""
    return [t for t in content_words(tokens) if t.lower() not in QUESTION_WORDS]


def topic_idf(bm25, question: str) -> tuple[tuple[str, float], ...]:
    """The question's topic words (topic_words of the index's tokens) with their idf in the index, 0 for a word the
    corpus never uses: how telling each is here. The gate reads the share of them the contexts hold; the learned
    selector, the share a sentence and its chunk hold (a prompt carries them: Prompt.topic_idf)."""
    return tuple((t, float(bm25.idf[bm25.vocab[t]]) if t in bm25.vocab else 0.0)
                 for t in topic_words(bm25.query_tokens(question)))


def _rank(scores: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The 1-based rank of each row in `scores` over every row (ties share the better rank)."""
    return 1 + (scores[None, :] > scores[rows][:, None]).sum(axis=1)


def sentence_cosines(embedder, q: np.ndarray, texts: Sequence[str]) -> tuple[list[str], np.ndarray, np.ndarray]:
    """(sentences, owner, cosines): every text's sentences (the text itself when it has none), the index of the text
    each came from, and each one's cosine with the query vector `q`. The fallback reranker's signal, and ours."""
    sentences: list[str] = []
    owner: list[int] = []
    for i, text in enumerate(texts):
        parts = split_sentences(text) or [text]
        sentences += parts
        owner += [i] * len(parts)
    vecs = np.asarray(embedder.embed_documents(sentences), dtype=np.float32)
    return sentences, np.array(owner, dtype=np.int64), vecs @ np.asarray(q, dtype=np.float32)


def best_of(values: np.ndarray, owner: np.ndarray, n: int) -> np.ndarray:
    """The largest of `values` per owner 0..n-1 (-inf for an owner with none)."""
    best = np.full(n, -np.inf, dtype=np.float64)
    np.maximum.at(best, owner, values)
    return best


def _idf_share(idf: dict[str, float], total: float, present: set[str]) -> float:
    """The share of the question words' idf whose words are in `present` (0 when the question has none)."""
    return sum(v for t, v in idf.items() if t in present) / total if total else 0.0


def _sentence_bm25(bm25, q_terms: Sequence[str], sentence_tokens: Sequence[str]) -> float:
    """sum over the question's words t in the sentence of idf(t) * tf * (k1 + 1) / (tf + k1): BM25 with b = 0."""
    counts: dict[str, int] = {}
    for tok in sentence_tokens:
        counts[tok] = counts.get(tok, 0) + 1
    total = 0.0
    for t in q_terms:
        col = bm25.vocab.get(t)
        tf = counts.get(t, 0)
        if col is not None and tf:
            total += float(bm25.idf[col]) * tf * (bm25.k1 + 1) / (tf + bm25.k1)
    return total


def features(index, query: str, chunk_ids: Sequence[str], query_vector: np.ndarray | None = None) -> FeatureRows:
    """The FEATURES row of each candidate in `chunk_ids` for `query` over `index` (an Index)."""
    ids = list(chunk_ids)
    out = np.zeros((len(ids), len(FEATURES)), dtype=np.float64)
    if not ids:
        return FeatureRows(ids, out)
    rows = np.array([index.position(c) for c in ids])
    q = index.embedder.embed_queries([query])[0] if query_vector is None else query_vector
    cos_all = index.vectors.vectors @ np.asarray(q, dtype=np.float32)
    bm25 = index.bm25
    q_tokens = bm25.query_tokens(query)
    bm_all = bm25.get_scores_tokens(q_tokens)
    cos, bm = cos_all[rows].astype(np.float64), bm_all[rows].astype(np.float64)
    dense_rank, bm25_rank = _rank(cos_all, rows), _rank(bm_all, rows)
    # RRF over whole-corpus ranks (a chunk with BM25 score 0 is not in the BM25 list: no term)
    rrf = 1 / (RRF_K + dense_rank) + np.where(bm > 0, 1 / (RRF_K + bm25_rank), 0.0)
    bm_top = float(bm_all.max())

    words = topic_words(q_tokens)  # the word-matching features match what the question is about, not how it asks
    idf = {t: float(bm25.idf[bm25.vocab[t]]) if t in bm25.vocab else 0.0 for t in words}
    idf_total = sum(idf.values())
    chunks = [index.chunk(c) for c in ids]
    plain = [without_line_markers(ch.text) for ch in chunks]  # as the index reads them (contextual.index_text)
    sentences, owner, s_cos = sentence_cosines(index.embedder, q, plain)
    best_cos = best_of(s_cos, owner, len(ids))
    texts = sentences + plain + [str(ch.metadata.get("title") or "") for ch in chunks]
    token_rows = token_lists(bm25, texts)
    s_tokens = token_rows[:len(sentences)]
    c_sets = [set(t) for t in token_rows[len(sentences):len(sentences) + len(chunks)]]
    t_sets = [set(t) for t in token_rows[len(sentences) + len(chunks):]]
    s_bm = np.array([_sentence_bm25(bm25, words, toks) for toks in s_tokens])
    s_share = np.array([_idf_share(idf, idf_total, set(toks)) for toks in s_tokens])
    best_bm = np.maximum(best_of(s_bm, owner, len(ids)), 0.0)
    best_share = np.maximum(best_of(s_share, owner, len(ids)), 0.0)
    n_sentences = np.bincount(owner, minlength=len(ids))
    n = len(words)
    for i, ch in enumerate(chunks):
        present, title = c_sets[i], t_sets[i]
        out[i] = [
            cos[i], cos[i] - cos.max(), math.log2(1 + dense_rank[i]),
            bm[i], bm[i] / bm_top if bm_top > 0 else 0.0, math.log2(1 + bm25_rank[i]), 100 * rrf[i],
            best_cos[i], best_cos[i] - best_cos.max(), best_bm[i], best_share[i],
            sum(t in present for t in words) / n if n else 0.0,
            _idf_share(idf, idf_total, present),
            sum(t in title for t in words) / n if n else 0.0,
            math.log2(1 + len(plain[i])), float(n_sentences[i]), float(n),
        ]
    return FeatureRows(ids, out)


def token_lists(bm25, texts: list[str]) -> list[list[str]]:
    """The BM25 tokenizer's tokens of each text; jieba's through the index's token cache (token_cache.py), as the
    index build gets them, so a chunk or sentence seen before is not tokenized again."""
    if bm25.tokenizer is jieba_tokenize:
        return tokenize_many(texts)[0]
    return [bm25.tokenizer(t) for t in texts]

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

from rag.index.tokenize import load_stopwords
from rag.ingest.sentences import split_sentences

RRF_K = 60  # as retrieval's default fusion (Cormack et al., 2009)

# name -> what it means, in the order of a feature row (the model file stores the same names; a test keeps them equal)
describe: dict[str, tuple[str, str]] = {
    "dense_cos": ("问题向量与块向量的余弦", "cosine of the question and chunk vectors"),
    "dense_gap": ("余弦减去本题候选中的最高余弦", "cosine minus the best candidate's cosine for this question"),
    "dense_rank": ("全库稠密检索名次 log2(1+名次)", "log2(1 + rank) in dense search over the whole corpus"),
    "bm25": ("BM25 分数", "BM25 score"),
    "bm25_share": ("BM25 分数 / 本题 BM25 最高分", "BM25 score / the question's top BM25 score"),
    "bm25_rank": ("全库 BM25 名次 log2(1+名次)", "log2(1 + rank) in BM25 over the whole corpus"),
    "rrf": ("稠密与 BM25 名次的 RRF 分数 ×100", "RRF score of the dense and BM25 ranks, x100"),
    "sent_cos": ("最匹配句子的余弦（离线重排的信号）", "cosine of the best-matching sentence (the fallback's signal)"),
    "sent_cos_gap": ("最佳句余弦减去本题候选中的最高值", "best-sentence cosine minus the best candidate's for this question"),
    "sent_bm25": ("最匹配句子的 BM25（全库 idf，不做长度归一）", "BM25 of the best sentence (corpus idf, no length norm)"),
    "sent_idf_share": ("最佳句覆盖的问题词 idf 占比", "share of the question words' idf that the best sentence covers"),
    "q_words": ("块中出现的问题实词占比", "share of the question's content words found in the chunk"),
    "q_words_idf": ("同上，按 idf 加权", "the same, weighted by idf"),
    "title_words": ("标题中出现的问题实词占比", "share of the question's content words found in the title"),
    "chunk_chars": ("块长度 log2(1+字符数)", "chunk length, log2(1 + characters)"),
    "sentences": ("块的句子数", "number of sentences in the chunk"),
    "q_terms": ("问题的实词数", "number of content words in the question"),
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


def content_words(tokens: Sequence[str]) -> list[str]:
    """Distinct tokens that are words (a letter or digit in them) and not stopwords, in order."""
    stop = _stopwords()
    return list(dict.fromkeys(t for t in tokens if _is_word(t) and t not in stop))


def _log_rank(scores: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """log2(1 + rank) of each row in `scores` (1 = best; ties share the better rank)."""
    return np.log2(1 + 1 + (scores[None, :] > scores[rows][:, None]).sum(axis=1))


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
    q_tokens = bm25.tokenize(query)
    bm_all = bm25.get_scores_tokens(q_tokens)
    cos, bm = cos_all[rows].astype(np.float64), bm_all[rows].astype(np.float64)
    dense_rank, bm25_rank = _log_rank(cos_all, rows), _log_rank(bm_all, rows)
    # RRF over whole-corpus ranks (a chunk with BM25 score 0 is not in the BM25 list: no term)
    bm_rank_plain = 2.0 ** bm25_rank - 1
    rrf = 1 / (RRF_K + 2.0 ** dense_rank - 1) + np.where(bm > 0, 1 / (RRF_K + bm_rank_plain), 0.0)

    words = content_words(q_tokens)
    idf = {t: float(bm25.idf[bm25.vocab[t]]) if t in bm25.vocab else 0.0 for t in words}
    idf_total = sum(idf.values())
    chunks = [index.chunk(c) for c in ids]
    sentences, owner = [], []
    for i, ch in enumerate(chunks):
        parts = split_sentences(ch.text) or [ch.text]
        sentences += parts
        owner += [i] * len(parts)
    s_vecs = np.asarray(index.embedder.embed_documents(sentences), dtype=np.float32)
    s_cos = s_vecs @ np.asarray(q, dtype=np.float32)
    best_cos = np.full(len(ids), -np.inf)
    best_bm = np.zeros(len(ids))
    best_share = np.zeros(len(ids))
    for j, (sent, i) in enumerate(zip(sentences, owner)):
        best_cos[i] = max(best_cos[i], float(s_cos[j]))
        toks = _tokens(bm25, sent)
        best_bm[i] = max(best_bm[i], _sentence_bm25(bm25, words, toks))
        present = set(toks)
        if idf_total:
            best_share[i] = max(best_share[i], sum(v for t, v in idf.items() if t in present) / idf_total)
    for i, ch in enumerate(chunks):
        present = set(_tokens(bm25, ch.text))
        title = set(_tokens(bm25, str(ch.metadata.get("title") or "")))
        n = len(words)
        out[i] = [
            cos[i], cos[i] - cos.max(), dense_rank[i],
            bm[i], bm[i] / bm_all.max() if bm_all.max() > 0 else 0.0, bm25_rank[i], 100 * rrf[i],
            best_cos[i], best_cos[i] - best_cos.max(), best_bm[i], best_share[i],
            sum(t in present for t in words) / n if n else 0.0,
            sum(v for t, v in idf.items() if t in present) / idf_total if idf_total else 0.0,
            sum(t in title for t in words) / n if n else 0.0,
            math.log2(1 + len(ch.text)), float(owner.count(i)), float(n),
        ]
    return FeatureRows(ids, out)


def _tokens(bm25, text: str) -> list[str]:
    return list(_cached_tokens(bm25.tokenizer, text))


@lru_cache(maxsize=50_000)
def _cached_tokens(tokenizer, text: str) -> tuple[str, ...]:
    # a sentence is tokenized once per process: the same candidates come back question after question
    return tuple(tokenizer(text))

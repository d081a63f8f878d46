"""Late interaction (ColBERT, Khattab & Zaharia, SIGIR 2020): score a passage by how well each query token finds
its best match among the passage's tokens.

    maxsim(q, d) = (1 / |q|) * sum over query tokens i of  max over passage tokens j of  cos(q_i, d_j)

(ColBERT sums; dividing by the number of query tokens keeps scores of long and short questions on one 0..1-ish
scale, and changes no order within a question.) The token vectors are e5's own last-layer states
(rag/models/token_vectors.py), so this is the third representation of one model, beside its pooled dense vector
and its learned-sparse terms, as BGE-M3 (Chen et al., 2024) offers all three. e5 was not trained for late
interaction, so how well it works is measured, not assumed (docs/multivector.md).

Scored by candidate re-scoring, not a token index: the multi-vector list is the dense top `depth` re-ordered by
MaxSim (a full index would store every token of every chunk: about 384 x 4 bytes per token, 100-500 tokens per
chunk; here the candidates' token vectors are computed per question and kept in a bounded cache).
Not handled here: the token vectors themselves, fusion with the other lists (retrieval.py's RRF).
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rag.ingest.sentences import without_line_markers
from rag.messages import Msg
from rag.models.token_vectors import TokenVectors, token_vectors
from rag.search.hits import Hit


@dataclass(frozen=True)
class Alignment:
    """One (query, passage) pair under MaxSim: the similarity matrix and each query token's best match."""

    query_pieces: list[str]
    passage_pieces: list[str]
    sims: np.ndarray  # (len(query_pieces), len(passage_pieces)) cosines
    best: np.ndarray  # (len(query_pieces),) index of each query token's best passage token
    score: float  # the mean of the row maxima


def maxsim(query: TokenVectors, passage: TokenVectors) -> Alignment:
    """The MaxSim score of `passage` for `query`, with the whole similarity matrix kept for a heat map."""
    if len(query.pieces) == 0 or len(passage.pieces) == 0:
        return Alignment(query.pieces, passage.pieces, np.zeros((len(query.pieces), len(passage.pieces))),
                         np.zeros(len(query.pieces), dtype=int), 0.0)
    sims = query.vectors.astype(np.float32) @ passage.vectors.astype(np.float32).T
    best = sims.argmax(axis=1)
    return Alignment(query.pieces, passage.pieces, sims, best, float(sims.max(axis=1).mean()))


class TokenCache:
    """Chunk text -> its token vectors as float16 (384 x 2 bytes a token: 150 KB for a 200-token chunk), the `size`
    most recently used. One per embedder (`cache_for`), shared by every caller: the same text gives the same tokens."""

    def __init__(self, embedder, size: int = 1000):
        self.embedder, self.size = embedder, size
        self._items: OrderedDict[str, TokenVectors] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, text: str) -> TokenVectors:
        with self._lock:
            if text in self._items:
                self._items.move_to_end(text)
                return self._items[text]
        full = token_vectors(self.embedder, text, is_query=False)
        tv = TokenVectors(full.pieces, full.vectors.astype(np.float16))
        with self._lock:
            self._items[text] = tv
            while len(self._items) > self.size:
                self._items.popitem(last=False)
        return tv


_caches: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # embedder -> its TokenCache
_caches_lock = threading.Lock()


def cache_for(embedder) -> TokenCache:
    with _caches_lock:
        if embedder not in _caches:
            _caches[embedder] = TokenCache(embedder)
        return _caches[embedder]


def maxsim_scores(embedder, query: str, texts: Sequence[str]) -> list[float]:
    """The MaxSim score of each text for `query` (the texts' token vectors from the shared cache)."""
    q = token_vectors(embedder, query, is_query=True)
    cache = cache_for(embedder)
    return [maxsim(q, cache.get(t)).score for t in texts]


def rescore(index, query: str, candidates: Sequence[Hit]) -> list[Hit]:
    """`candidates` re-ordered by MaxSim (retriever "multivector"), ties kept in candidate order."""
    found = maxsim_scores(index.embedder, query, [without_line_markers(index.chunk(h.chunk_id).text)
                                                  for h in candidates])
    scored = sorted(((sc, i, h) for i, (sc, h) in enumerate(zip(found, candidates))), key=lambda t: (-t[0], t[1]))
    return [Hit(h.chunk_id, s, r, "multivector") for r, (s, _i, h) in enumerate(scored, 1)]


def explain(index, query: str, chunk_id: str) -> Alignment:
    """The MaxSim alignment of one chunk for `query`: what page 3's heat map draws."""
    q = token_vectors(index.embedder, query, is_query=True)
    return maxsim(q, cache_for(index.embedder).get(index.chunk(chunk_id).text))


TOKEN_MAXSIM = "token-maxsim"  # the registry key (rerank.RERANKERS)


class TokenMaxSimReranker:
    """MaxSim as a reranker: each candidate's score is its late-interaction score for the question. Not a
    cross-encoder (question and chunk are encoded apart; only their token vectors meet)."""

    name = TOKEN_MAXSIM
    is_fallback = False
    reads_index = False

    def __init__(self, embedder):
        token_vectors(embedder, "x", is_query=True)  # no token vectors here: ModelUnavailableError, now
        self.embedder = embedder
        name = embedder.name
        self.label = Msg(en=f"token-maxsim (late interaction over {name}'s token vectors; not a cross-encoder)",
                         zh=f"token-maxsim（基于 {name} 词元向量的后期交互；不是交叉编码器）")

    def score(self, query: str, texts: Sequence[str], control=None) -> np.ndarray:
        if not texts:
            return np.zeros(0, dtype=np.float32)
        return np.array(maxsim_scores(self.embedder, query, texts), dtype=np.float32)

"""BM25 lexical retrieval, written out by hand: Lucene idf, eager (index-time) scoring, sparse matrix.

For a query q and a document d of length |d| (in tokens), with avgdl the mean document length:

    score(q, d) = sum over terms t in q of  idf(t) * tf(t,d) * (k1 + 1) / (tf(t,d) + k1 * (1 - b + b * |d| / avgdl))
    idf(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

N is the number of documents and df(t) the number of documents containing t. This is Okapi BM25
(Robertson & Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond", 2009) with the idf
Lucene uses, which is never negative, so a word in most passages (的, "，") adds a little instead of
subtracting. k1 = 1.5 controls how fast repeated terms saturate; b = 0.75 how strongly long documents
are penalised.

Why it is fast (the idea of bm25s, Lù 2024, "BM25S: Orders of magnitude faster lexical search via
eager sparse scoring"): a term's contribution to a document does not depend on the query, so `index`
computes every nonzero (document, term) contribution once and stores them in a sparse matrix with one
column per vocabulary term (CSC: a column's nonzeros are contiguous). A query is then just the sum of
its terms' columns: a few array slices added into one score vector, then a partial selection
(`top_k`) for the best k.

Two behaviours to know about:
- A query term that appears twice counts twice (its column is added twice), exactly like bm25s, which
  adds one column per query token. `explain` shows this as `qtf`.
- `search` returns only documents with a score > 0, so it can return fewer than k results: a lexical
  retriever has nothing to say about a document that shares no term with the query, and padding the
  list with arbitrary zero-score documents would pass noise on to fusion. Ties are broken by document
  index (lower first), so results are deterministic.
- A question's Chinese word that no document uses is cut again into words they do use (`query_tokens`,
  tokenize.recut): jieba cuts characters its dictionary lacks into other words in a short question than in
  the text ("往大顶|堆里" against "大顶|堆"). Documents are tokenized as they are.

Scores here are (k1 + 1) times bm25s's `method="lucene"` scores (bm25s drops the constant factor); the
ranking is identical, and tests/test_bm25.py checks both against each other.
Not handled here: tokenisation (see tokenize.py), BM25+/BM25L variants, incremental index updates
(re-index instead: it takes milliseconds for thousands of chunks), persistence.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
from scipy import sparse

from rag.errors import ConfigError
from rag.index.tokenize import jieba_tokenize, recut, recuts


@dataclass(frozen=True)
class TermScore:
    """One query term's share of one document's BM25 score (a row of the "why this score" table)."""

    term: str
    tf: int  # occurrences of the term in the document
    df: int  # documents in the corpus containing the term (0: not in the vocabulary)
    idf: float  # ln(1 + (N - df + 0.5) / (df + 0.5))
    contribution: float  # qtf * idf * tf (k1+1) / (tf + k1 (1 - b + b |d|/avgdl)); 0.0 if tf == 0
    qtf: int = 1  # occurrences of the term in the query (each one adds the contribution again)


class _Either:
    """A word either of two collections holds (a corpus's words and the stopwords taken out of them)."""

    def __init__(self, *parts):
        self.parts = parts

    def __contains__(self, word: object) -> bool:
        return any(word in p for p in self.parts)


def lucene_idf(n_docs: int, df: np.ndarray | int) -> np.ndarray | float:
    """idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5)), the Lucene form (always > 0)."""
    return np.log1p((n_docs - df + 0.5) / (df + 0.5))


class BM25:
    """Index texts once, then score queries against them. Documents are addressed by their row index."""

    def __init__(
        self,
        tokenizer: Callable[[str], list[str]] = jieba_tokenize,
        k1: float = 1.5,
        b: float = 0.75,
        stopwords: frozenset[str] = frozenset(),
    ):
        if not k1 >= 0:
            raise ConfigError(f"k1={k1} must be >= 0 (1.2-2.0 is usual; 1.5 is the default)")
        if not 0 <= b <= 1:
            raise ConfigError(f"b={b} must be between 0 (no length normalisation) and 1 (full)")
        self.tokenizer = tokenizer
        self.k1 = float(k1)
        self.b = float(b)
        self.stopwords = frozenset(stopwords)

        self.n_docs: int = 0
        self.vocab: dict[str, int] = {}  # term -> column of self.matrix
        self.df: dict[str, int] = {}  # term -> documents containing it
        self.idf: np.ndarray = np.zeros(0)  # (n_terms,) float64, idf of column j
        self.doc_len: np.ndarray = np.zeros(0, dtype=np.int64)  # (n_docs,) tokens per document
        self.avgdl: float = 0.0
        # (n_docs, n_terms) CSC, float32: matrix[d, j] = contribution of one occurrence of term j in a
        # query to document d's score. `_tf` runs parallel to matrix.data: the raw count behind each entry.
        self.matrix: sparse.csc_matrix = sparse.csc_matrix((0, 0), dtype=np.float32)
        self._tf: np.ndarray = np.zeros(0, dtype=np.int32)

    # ---- tokens ---------------------------------------------------------------------------------
    def tokenize(self, text: str) -> list[str]:
        """The tokens BM25 counts: the tokenizer's output minus stopwords."""
        return self._drop_stopwords(self.tokenizer(text))

    def query_tokens(self, query: str) -> list[str]:
        """The tokens of a question: `tokenize`'s, with a Chinese word the corpus never uses cut into words it does
        (tokenize.recut: jieba cuts unknown characters into other words in a question than in the text)."""
        return self._drop_stopwords(recut(self.tokenize(query), self._known()))

    def recuts(self, query: str) -> list[tuple[str, list[str]]]:
        """(word, its pieces) for each word of `query` that `query_tokens` cuts again: the retrieval page shows them."""
        return recuts(self.tokenize(query), self._known())

    def _known(self) -> "_Either":
        """The words the corpus uses: its terms and the stopwords taken out of them."""
        return _Either(self.vocab, self.stopwords)

    def _drop_stopwords(self, tokens: Sequence[str]) -> list[str]:
        if not self.stopwords:
            return list(tokens)
        return [t for t in tokens if t not in self.stopwords]

    # ---- indexing -------------------------------------------------------------------------------
    def index(self, texts: Sequence[str]) -> "BM25":
        """Tokenise and index `texts` (document i = texts[i]); returns self for chaining."""
        if len(texts) == 0:
            raise ConfigError("cannot build a BM25 index over an empty corpus: add at least one document")
        return self._build([self.tokenize(t) for t in texts])

    def index_tokens(self, corpus_tokens: Sequence[Sequence[str]]) -> "BM25":
        """Index already-tokenised documents (stopwords are still removed). Used by benchmarks/tests
        that feed the same tokens to another BM25 implementation."""
        if len(corpus_tokens) == 0:
            raise ConfigError("cannot build a BM25 index over an empty corpus: add at least one document")
        if self.stopwords:
            corpus_tokens = [self._drop_stopwords(doc) for doc in corpus_tokens]
        return self._build(corpus_tokens)

    def _build(self, docs: Sequence[Sequence[str]]) -> "BM25":
        n = len(docs)
        # Every token occurrence as (document row, term column); a term gets the next free column when
        # first seen. A defaultdict whose factory is its own len() does that lookup-or-insert in C,
        # about 2.5x faster than a Python loop with dict.setdefault.
        vocab: defaultdict[str, int] = defaultdict()
        vocab.default_factory = vocab.__len__
        term_ids = np.fromiter(map(vocab.__getitem__, chain.from_iterable(docs)), dtype=np.int32)
        vocab = dict(vocab)  # type: ignore[assignment]  # a plain dict again, so looking up an unknown query term adds nothing
        doc_len = np.fromiter((len(doc) for doc in docs), dtype=np.int64, count=n)
        doc_ids = np.repeat(np.arange(n, dtype=np.int32), doc_len)

        # Summing duplicate (doc, term) entries turns occurrences into term frequencies.
        tf = sparse.csc_matrix(
            (np.ones(len(term_ids), dtype=np.float32), (doc_ids, term_ids)),
            shape=(n, len(vocab)),
        )
        tf.sum_duplicates()  # canonical: one entry per (doc, term), rows sorted within each column

        df = np.diff(tf.indptr)  # nonzeros in column j = documents containing term j
        idf = np.asarray(lucene_idf(n, df.astype(np.float64)))
        avgdl = float(doc_len.mean())

        # Eager scoring: the BM25 term score of every nonzero entry, computed once here.
        tf_values = tf.data.astype(np.float64)
        entry_idf = np.repeat(idf, df)  # idf of the column each entry belongs to
        entry_len = doc_len[tf.indices]  # length of the document each entry belongs to
        norm = self.k1 * (1.0 - self.b + self.b * entry_len / (avgdl or 1.0))  # avgdl 0: all docs empty
        scores = entry_idf * tf_values * (self.k1 + 1.0) / (tf_values + norm)

        self.n_docs = n
        self.vocab = vocab
        self.df = dict(zip(vocab, df.tolist()))
        self.idf = idf
        self.doc_len = doc_len
        self.avgdl = avgdl
        self.matrix = sparse.csc_matrix(
            (scores.astype(np.float32), tf.indices, tf.indptr), shape=(n, len(vocab))
        )
        self._tf = tf.data.astype(np.int32)
        return self

    # ---- scoring --------------------------------------------------------------------------------
    def get_scores(self, query: str) -> np.ndarray:
        """BM25 score of every document for `query`: float32 array of shape (n_docs,)."""
        return self.get_scores_tokens(self.query_tokens(query))

    def get_scores_tokens(self, tokens: Sequence[str]) -> np.ndarray:
        """As `get_scores`, for an already-tokenised query (stopwords are still removed)."""
        self._check_indexed()
        indptr, rows, values = self.matrix.indptr, self.matrix.indices, self.matrix.data
        scores = np.zeros(self.n_docs, dtype=np.float32)
        for term in self._drop_stopwords(tokens):  # a repeated term is added once per occurrence
            col = self.vocab.get(term)
            if col is None:  # a term no document contains adds nothing
                continue
            lo, hi = indptr[col], indptr[col + 1]
            np.add.at(scores, rows[lo:hi], values[lo:hi])  # scores[rows] += values, unbuffered
        return scores

    def search(self, query: str, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k documents for `query`: (indices, scores), best first, only scores > 0 (may be < k)."""
        return top_k(self.get_scores(query), k)

    def search_tokens(self, tokens: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """As `search`, for an already-tokenised query."""
        return top_k(self.get_scores_tokens(tokens), k)

    # ---- inspection -----------------------------------------------------------------------------
    def explain(self, query: str, doc_index: int) -> list[TermScore]:
        """Why document `doc_index` scored what it did: one row per distinct query term, in query
        order, including terms the document lacks (contribution 0). Contributions sum to
        get_scores(query)[doc_index] (up to float32 rounding in get_scores)."""
        self._check_indexed()
        if not 0 <= doc_index < self.n_docs:
            raise ConfigError(f"doc_index={doc_index} is out of range: the index holds {self.n_docs} documents")
        dl_norm = self.k1 * (1.0 - self.b + self.b * self.doc_len[doc_index] / (self.avgdl or 1.0))
        rows = []
        for term, qtf in Counter(self.query_tokens(query)).items():
            col = self.vocab.get(term)
            df = self.df.get(term, 0)
            idf = float(self.idf[col]) if col is not None else float(lucene_idf(self.n_docs, 0))
            tf = self._term_frequency(col, doc_index) if col is not None else 0
            contribution = qtf * idf * tf * (self.k1 + 1.0) / (tf + dl_norm) if tf else 0.0
            rows.append(TermScore(term=term, tf=tf, df=df, idf=idf, contribution=contribution, qtf=qtf))
        return rows

    def _term_frequency(self, col: int, doc_index: int) -> int:
        lo, hi = self.matrix.indptr[col], self.matrix.indptr[col + 1]
        rows = self.matrix.indices[lo:hi]  # sorted: sum_duplicates left the column canonical
        pos = int(np.searchsorted(rows, doc_index))
        return int(self._tf[lo + pos]) if pos < len(rows) and rows[pos] == doc_index else 0

    def _check_indexed(self) -> None:
        if self.n_docs == 0:
            raise ConfigError("this BM25 has no documents yet: call .index(texts) first")

    def __len__(self) -> int:
        return self.n_docs


def top_k(scores: np.ndarray, k: int, stride: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """Indices and scores of the k highest scores > 0, best first; ties go to the lower index.

    Sorting all n scores costs O(n log n) and even np.argpartition touches every score several times,
    so first find a cheap lower bound for the k-th best score: the k-th best of every `stride`-th
    score can be no higher than the k-th best of all of them (a subset's k-th best never beats the
    whole set's). One comparison pass keeps the few documents at or above that bound; only those
    are partitioned and sorted. The result is exact, not approximate.
    """
    if k < 1:
        raise ConfigError(f"k={k} must be >= 1")
    sample = scores[::stride]
    bound = np.partition(sample, len(sample) - k)[len(sample) - k] if len(sample) > k else 0.0
    candidates = np.flatnonzero(scores >= bound) if bound > 0 else np.flatnonzero(scores > 0)
    if len(candidates) > k:  # keep the k best, plus any tied with the k-th (the tie-break is global)
        cand_scores = scores[candidates]
        kth = np.partition(cand_scores, len(cand_scores) - k)[len(cand_scores) - k]
        candidates = candidates[cand_scores >= kth]
    # candidates are in index order, so a stable sort by descending score breaks ties by index
    best = candidates[np.argsort(-scores[candidates], kind="stable")[:k]]
    return best, scores[best]

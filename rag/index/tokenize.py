"""Tokenising Chinese (and mixed Chinese/English) text for BM25: jieba precise mode, lower-cased.

Chinese has no spaces, so a lexical retriever needs a word segmenter before it can count terms.
`jieba_tokenize` uses jieba's precise mode (`jieba.lcut(text)`, the dictionary + HMM segmentation that
neither over- nor under-cuts), lower-cases every token so "BM25" and "bm25" match, and drops tokens
that are only whitespace. Punctuation tokens ("，", "。") are kept: removing them is the stopword
list's job, so a student can switch it on and off and see the difference.

Traditional characters are read as simplified (rag/models/script.py `fold_script`, OpenCC's phrase-aware t2s tables;
the embedders read them so too), so a question typed in traditional Chinese finds its words in a simplified corpus and
the other way round: the golden questions typed in traditional lost BM25 Hit@5 0.92 -> 0.77 over the simplified
knowledge base before this (docs/benchmarks.md, "Questions in traditional Chinese"; bench/bench_script.py). A text
with no character used only in traditional writing is left as it is, so simplified text tokenizes exactly as before.

A question's Chinese word that the corpus never uses is cut again into the corpus's own words (`recut`, which BM25's
`query_tokens` applies): jieba joins characters its dictionary lacks into different words in a short question than in
the text. On every public set it lifts BM25 (bench/bench_question_cut.py; docs/answers.md).

Not handled here: stemming, synonyms, and stopword removal itself (BM25 applies the set `load_stopwords` returns).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Container, Sequence
from pathlib import Path

from rag.errors import ConfigError
from rag.models.script import fold_script

DEFAULT_STOPWORDS = Path(__file__).resolve().parents[2] / "data" / "stopwords_zh.txt"
# English function words: never a term of a claim (the audit) nor an entity (the graph without a model).
ENGLISH_STOPWORDS = frozenset(
    "a an the is are was were be been being of to in on at by for with from as and or but not no it its "
    "this that these those there here what which who whom how why when where do does did can could "
    "should would will shall may might must than then so if into about over under".split()
)

_jieba = None  # the jieba module, imported and initialised on first use


def _get_jieba():
    """Import jieba once, quietly: its dictionary load prints a banner at DEBUG level otherwise."""
    global _jieba
    if _jieba is None:
        import jieba

        jieba.setLogLevel(logging.WARNING)
        jieba.initialize()  # load the dictionary now, not in the middle of the first query
        _jieba = jieba
    return _jieba


def jieba_tokenize(text: str) -> list[str]:
    """Segment `text` (traditional characters read as simplified: `fold_script`) with jieba precise mode;
    lower-case tokens; drop whitespace-only tokens.

    >>> jieba_tokenize("我爱 BM25 检索")
    ['我', '爱', 'bm25', '检索']
    >>> jieba_tokenize("我愛 BM25 檢索")
    ['我', '爱', 'bm25', '检索']
    """
    return [tok.lower() for tok in _get_jieba().lcut(fold_script(text)) if tok.strip()]


def jieba_spans(text: str) -> list[tuple[str, int, int]]:
    """(token, start, end) for every jieba token of `text`, lower-cased, whitespace dropped: the same tokens
    as `jieba_tokenize`, with where each one sits (the audit highlights matched words with them)."""
    return [(tok.lower(), a, b) for tok, a, b in _get_jieba().tokenize(text) if tok.strip()]


def jieba_posseg():
    """jieba's part-of-speech tagger module, its dictionary loaded once, quietly (the graph's extraction and
    relation check, and the test-set generator, use it)."""
    _get_jieba()
    import jieba.posseg as pseg

    return pseg


def jieba_tagged(text: str) -> list[tuple[str, str]]:
    """(word, part-of-speech tag) for every word of `text`, by jieba's tagger (n... nouns, v verbs, eng Latin
    script...); whitespace dropped, case kept."""
    return [(p.word, p.flag) for p in jieba_posseg().lcut(text) if p.word.strip()]


_CJK = re.compile(r"[\u4e00-\u9fff]+$")


def recut(tokens: Sequence[str], vocab: Container[str], longest: int = 8) -> list[str]:
    """`tokens` with each Chinese token that `vocab` (a corpus's words) does not hold cut into the fewest pieces it
    does hold (among equals, the one whose last piece is longest), where such a cut exists and one of its pieces is a
    word of two characters or more; every other token as it is (`recuts` says which were cut).

    jieba's HMM joins characters its dictionary does not know into a new word, and it joins them differently in a
    question than in the text the question is about: "往大顶堆里" is cut 往大顶 | 堆里, the chapter's "大顶堆" 大顶 | 堆,
    so the question's word 往大顶 matches nothing; cut again against the corpus's words it is 往 | 大顶. A word whose
    only cut is into single characters stays whole: 早停 is not 早 and 停, and a name the corpus never uses (卡丹) is
    not the characters the corpus happens to use alone.

    >>> recut(["往大顶", "堆里", "塞"], {"往", "大顶", "堆", "里", "塞"})
    ['往', '大顶', '堆里', '塞']
    >>> recut(["早停", "算法"], {"早", "停", "算法"})
    ['早停', '算法']
    """
    cut = dict(recuts(tokens, vocab, longest))
    return [piece for tok in tokens for piece in cut.get(tok, [tok])]


def recuts(tokens: Sequence[str], vocab: Container[str], longest: int = 8) -> list[tuple[str, list[str]]]:
    """(token, its pieces) for each token of `tokens` that `recut` cuts, in order, each once."""
    out: dict[str, list[str]] = {}
    for tok in tokens:
        if tok in out or tok in vocab or len(tok) < 2 or not _CJK.match(tok):
            continue
        pieces = _fewest_pieces(tok, vocab, longest)
        if pieces and max(map(len, pieces)) >= 2:
            out[tok] = pieces
    return list(out.items())


def _fewest_pieces(word: str, vocab: Container[str], longest: int) -> list[str] | None:
    """`word` cut into the fewest pieces `vocab` holds (None when no cut covers it): best[i] is the best cut of word[:i]."""
    best: list[list[str] | None] = [[]] + [None] * len(word)
    for end in range(1, len(word) + 1):
        for start in range(max(0, end - longest), end):
            head, piece, now = best[start], word[start:end], best[end]
            if head is not None and piece in vocab and (now is None or len(head) + 1 < len(now)):
                best[end] = [*head, piece]
    return best[-1]


def whitespace_tokenize(text: str) -> list[str]:
    """Split on whitespace and lower-case: enough for English and for hand-checkable examples."""
    return text.lower().split()


TOKENIZERS = ("jieba", "whitespace")  # BM25's word splitters: jieba's segmentation, or spaces only (the trap)


def tokenizer_named(name: str):
    """The tokenizer called `name` (one of TOKENIZERS)."""
    if name not in TOKENIZERS:
        raise ConfigError(f"unknown tokenizer {name!r}; choose one of {', '.join(TOKENIZERS)}")
    return jieba_tokenize if name == "jieba" else whitespace_tokenize


def load_stopwords(path: str | Path | None = None) -> frozenset[str]:
    """Read a stopword list: one word per line, blank lines ignored, words lower-cased.

    With no `path`, read the bundled data/stopwords_zh.txt; if that file is absent the result is an
    empty set (BM25 then keeps every token). An explicit `path` that does not exist is an error,
    because silently using no stopwords would change results without saying so.
    """
    if path is None:
        if not DEFAULT_STOPWORDS.is_file():
            return frozenset()
        path = DEFAULT_STOPWORDS
    path = Path(path)
    if not path.is_file():
        raise ConfigError(
            f"stopword file {path} not found: pass the path of a UTF-8 text file with one word per "
            "line, or path=None for the bundled list"
        )
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except UnicodeDecodeError as exc:
        raise ConfigError(f"stopword file {path} is not UTF-8 ({exc}): re-save it as UTF-8") from exc
    return frozenset(word.strip().lower() for word in lines if word.strip())

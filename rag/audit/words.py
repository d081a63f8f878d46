"""The words of a text as the audit and the answer's choices match them: its content tokens, and which of some words
a text holds.

`content_tokens` are jieba's tokens less stop words (the bundled Chinese list and English function words) and
punctuation; `telling` keeps those that can show what a sentence is about (no one-character Chinese word);
`terms_found` and `term_overlap` match them against a text: a Chinese token as a substring (jieba may cut the same
words differently in another context), a Latin one as a whole token, traditional characters of the text read as
simplified; `as_corpus_cuts` reads a question's words as its corpus cuts them (BM25.recuts); `pos_tags` are jieba's (word, part of speech) pairs, read once per text for every check that asks. Kept
apart from citations.py so the checks can read a question's words without importing the audit that runs them.
Not handled here: which words frame a question (asked.py), BM25's own tokens (rag/index/bm25.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from rag.index.tokenize import ENGLISH_STOPWORDS, jieba_posseg, jieba_tokenize, load_stopwords
from rag.models.script import fold_script

_STOPWORDS: frozenset[str] | None = None


def content_tokens(text: str) -> list[str]:
    """Distinct jieba tokens of `text` that carry meaning: lower-cased, no punctuation, no stopwords."""
    stop = _stopwords()
    seen: dict[str, None] = {}
    for tok in jieba_tokenize(text):
        if tok in stop or not any(ch.isalnum() for ch in tok):
            continue
        seen.setdefault(tok, None)
    return list(seen)


def as_corpus_cuts(tokens: Sequence[str], pieces: Mapping[str, Sequence[str]]) -> list[str]:
    """`tokens` with each word the corpus cuts otherwise replaced by those of its `pieces` that carry meaning (no
    stopword, no punctuation), distinct and in order. `pieces`: word -> its pieces (BM25.recuts, carried by a prompt
    as Prompt.recut): "往大顶堆里塞" is cut 往大顶 | 堆里 | 塞 in the question and 大顶 | 堆 in the chapter, so the
    question's 往大顶 is no substring of the chapter; cut again it is 往 | 大顶."""
    stop = _stopwords()
    out: dict[str, None] = {}
    for tok in tokens:
        for piece in pieces.get(tok, (tok,)):
            if piece == tok or (piece not in stop and any(ch.isalnum() for ch in piece)):
                out.setdefault(piece, None)
    return list(out)


def term_overlap(tokens: Sequence[str], text: str) -> float:
    """Share of `tokens` found in `text`. Chinese tokens match as substrings (jieba may cut the same
    words differently in another context); Latin tokens must match a whole token of `text`."""
    if not tokens:
        return 0.0
    found = terms_found(tokens, text)
    return sum(1 for t in tokens if t in found) / len(tokens)


def terms_found(tokens: Iterable[str], text: str) -> set[str]:
    """The `tokens` found in `text`, matched as term_overlap matches them (traditional characters of `text` read as
    simplified, as the tokens were: rag/models/script.py fold_script)."""
    low = fold_script(text.lower())
    words = set(re.findall(r"[a-z0-9_]+", low))
    return {t for t in tokens if (t in words if t.isascii() else t in low)}


def telling(tokens: list[str]) -> list[str]:
    """The question words that can show what a sentence is about: a Chinese word of one character is left out,
    because it matches inside unrelated words (来 in 来自, 指 in 指标: "数据泄漏指的是什么情况" admitted the prompt
    injection entry's sentence for its 指). Latin words and numbers stay, one letter or not ("b" in "BM25 的 b 参数")."""
    return [t for t in tokens if len(t) > 1 or t.isascii()]


def _stopwords() -> frozenset[str]:
    global _STOPWORDS
    if _STOPWORDS is None:
        _STOPWORDS = load_stopwords() | ENGLISH_STOPWORDS
    return _STOPWORDS


@lru_cache(maxsize=2048)
def pos_tags(text: str) -> tuple[tuple[str, str], ...]:
    """jieba's (word, part-of-speech flag) pairs of `text`, whitespace-only words dropped, as written (not folded, not
    lower-cased). Cached: the bare and no-claim checks read the same claim, and the question's frame words are read
    for every sentence of an answer."""
    return tuple((p.word, p.flag) for p in jieba_posseg().cut(text) if p.word.strip())

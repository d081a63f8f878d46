"""What words a corpus uses at all: its Latin-script words and its whole text, read once, for "is X ever mentioned".

The answerability gate asks of a question's names ("Kruskal", "插值查找") whether the documents ever use them
(rag/answer/unnamed.py). Chinese has no spaces, so a Chinese word is looked for as a substring of the corpus's
text (traditional read as simplified, lower case); a Latin word must be a whole word ("he" is not in "the").
Built lazily per index and then only read, so sessions sharing one index share one lexicon.
Not handled here: stemming or synonyms (a paraphrase's word is not found: that is why the gate reads names only).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from rag.models.script import fold_script

_LATIN = re.compile(r"[a-z0-9_+#]+")


@dataclass(frozen=True)
class Lexicon:
    text: str  # every chunk's text, folded (simplified, lower case), joined with newlines
    latin: frozenset[str]  # the whole Latin-script words (and digit runs) of `text`

    @classmethod
    def of(cls, texts: Iterable[str]) -> "Lexicon":
        text = fold_script("\n".join(texts).lower())
        return cls(text, frozenset(_LATIN.findall(text)))

    def uses(self, word: str) -> bool:
        """Does the corpus use `word` (case and script aside): a Latin word whole, a Chinese one anywhere."""
        w = fold_script(word.lower())
        if re.fullmatch(r"[a-z0-9_+#]+", w):
            return w in self.latin
        if w.isascii():  # "bellman-ford", "k-means": every part a word of the corpus
            parts = [p for p in re.split(r"[^a-z0-9_+#]+", w) if p]
            return bool(parts) and all(p in self.latin for p in parts)
        return w in self.text

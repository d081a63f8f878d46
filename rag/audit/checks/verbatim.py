"""A sentence copied word for word from its evidence ("verbatim"): no rule over words can find the chunk's own words
wrong. The audit looks for it before the rules run (rag/audit/support.py); the prompt-echo check reads copies the same
way (echo.py).
"""

from __future__ import annotations

import re

from rag.audit.checks.verdict import Check
from rag.messages import Msg
from rag.models.script import fold_script

NAME = "verbatim"

VERBATIM = Check(NAME, True, Msg(zh="逐字抄自证据（引号、省略号和空白之外一字不差）",
                 en="copied word for word from the evidence (but for quote marks, ellipses and spaces)"))



_ELLIPSIS = re.compile(r"…+|\.{3,}|⋯+")


_QUOTES = "「」『』“”‘’\"'《》"


_WIDTH = str.maketrans("，。；：！？（）［］【】％＋－＝／", ",.;:!?()[][]%+-=/")


MIN_COPY = 8  # characters of a copied piece (after normalising) for it to count as a copy, not a phrase


def flat(text: str) -> str:
    """Text for a verbatim comparison: no spaces or quote marks, full-width punctuation as ASCII, lower case, traditional
    Chinese read as simplified (a copy in the other script is a copy)."""
    text = re.sub(r"\n+", ".", fold_script(text).translate(_WIDTH).lower())  # a line break ends a heading or a line: a boundary
    return "".join(ch for ch in text if not ch.isspace() and ch not in _QUOTES)


def copied_from(claim: str, chunk: str) -> bool:
    """Is `claim` the chunk's own words: each piece between ellipses (…) a stretch of the chunk, and the copied
    pieces MIN_COPY characters at least? Quote marks, spaces and the width of punctuation do not count."""
    pieces = [flat(p).strip(",.;:!?、") for p in _ELLIPSIS.split(claim)]  # the audit strips citations first
    pieces = [p for p in pieces if p]
    if not pieces or sum(map(len, pieces)) < MIN_COPY:
        return False
    text = flat(chunk)
    return all(clause_copy(p, text) for p in pieces)


def clause_copy(piece: str, text: str) -> bool:
    """`piece` occurs in `text` from a clause's start to a clause's end: "叶子节点只存键" inside "非叶子节点只存键" is
    not the chunk's claim (it drops the 非), nor is "可以用上" inside "可以用上索引"."""
    i = text.find(piece)
    while i >= 0:
        before = text[i - 1] if i else ","
        after = text[i + len(piece)] if i + len(piece) < len(text) else "."
        if not before.isalnum() and not after.isalnum():
            return True
        i = text.find(piece, i + 1)
    return False

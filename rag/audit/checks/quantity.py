"""A number is said of the thing it measures: "32 位浮点数压成 8 位整数" gives the float 32 bits and the integer 8.

The numbers check asks whether a sentence's numbers are in the evidence, and the binding check whether each sits in
a clause with what the sentence says it of. Both pass "INT8 量化把权重压缩成 32 位整数" against "把模型权重从 32 位浮点数
压缩成 8 位整数": 32 is there, in the same clause as 整数. This check reads each number with its unit and the noun it
measures, the noun right after the unit ("32 位浮点数") or the one before a verb of having ("指数位有 8 位"), and fails
a sentence that gives a noun a number the evidence measures something else with, while the evidence gives this noun
another number in the same unit ("BF16 的指数位有 16 位" against "BF16 也用 16 位，但指数位有 8 位").
Not handled here: ranges and ratios (numbers check), a number with no unit (binding check).
"""

from __future__ import annotations

import re

from rag.audit.checks.verdict import Check, Claim
from rag.messages import Msg

_NUM = r"(\d+(?:\.\d+)?)"
_UNIT = r"(位|比特|bits?|字节|bytes?|KB|MB|GB|TB|层|维|个|头|天|小时|分钟|秒|倍)"
_MEASURED = re.compile(_NUM + r"\s*" + _UNIT + r"(?![A-Za-z])")
_VERB = re.compile(r"(?:有|是|为|占|取)\s*$")
_RUN_AFTER = re.compile(r"\s*(?:的)?([\u4e00-\u9fff]+|[A-Za-z][A-Za-z0-9]*)")
_RUN_BEFORE = re.compile(r"([\u4e00-\u9fff]+|[A-Za-z][A-Za-z0-9]*)\s*$")
_LEADING = "的但也而和与及并且就都还又"


def measured(text: str) -> list[tuple[str, str, str]]:
    """(number, unit, the noun it measures) of each measured number in `text`: the noun right after the unit ("32 位
    浮点数": jieba's first word there), else the one before a verb of having ("指数位有 8 位")."""
    out = []
    for m in _MEASURED.finditer(text):
        number, unit = m.group(1), m.group(2).lower()
        after = _RUN_AFTER.match(text, m.end())
        noun = _first_word(after.group(1)) if after else ""
        if not noun:
            verb = _VERB.search(text, 0, m.start())
            before = _RUN_BEFORE.search(text[:verb.start()]) if verb else None
            noun = before.group(1).lstrip(_LEADING)[-4:] if before else ""
        if len(noun) >= 2:
            out.append((number, unit, noun))
    return out


def _first_word(run: str) -> str:
    from rag.index.tokenize import jieba_tokenize

    if run.isascii():
        return run
    words = [w for w in jieba_tokenize(run) if w.strip()]
    return words[0] if words and len(words[0]) >= 2 else ""


NAME = "quantity"


def check(at: Claim) -> Check | None:
    """Fails when the sentence gives a noun a number the chunk gives another noun (in the same unit) and the chunk
    gives this noun another number in that unit; None when the sentence measures nothing the chunk measures."""
    claim, chunk = at.text, at.chunk
    theirs = measured(chunk)
    said = {(m.group(1), m.group(2).lower()) for m in _MEASURED.finditer(chunk)}  # every measured number, noun or not
    for number, unit, noun in measured(claim):
        here = [(n, x) for n, u, x in theirs if u == unit]
        of_noun = sorted({n for n, x in here if _same(x, noun)})
        if not of_noun or number in of_noun or (number, unit) not in said:
            continue
        of_number = sorted({x for n, x in here if n == number and not _same(x, noun)})
        if of_number:
            return Check(NAME, False,
                         Msg(zh=f"证据里 {number} {unit} 说的是{of_number[0]}，{noun}是 {'、'.join(of_noun)} {unit}",
                         en=f"in the evidence {number} {unit} is said of {of_number[0]}; {noun} is {', '.join(of_noun)} "
                         f"{unit}"))
        return Check(NAME, False, Msg(zh=f"证据里{noun}是 {'、'.join(of_noun)} {unit}，{number} {unit} 说的是别的",
                     en=f"in the evidence {noun} is {', '.join(of_noun)} {unit}; {number} {unit} is said of something else"))
    return None


def _same(a: str, b: str) -> bool:
    """整数 and 整数, 浮点数 and 浮点: one names the other (a noun run may take a character more or less)."""
    a, b = a.lower(), b.lower()
    return a == b or (len(a) >= 2 and len(b) >= 2 and (a.startswith(b) or b.startswith(a)))

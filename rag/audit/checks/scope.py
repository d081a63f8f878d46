"""What a chunk says under one condition is not said of another: "在训练集上误差很小，在测试集上误差很大" does not
support "在测试集上误差很小", nor "小数据量下，线性查找更快；数据量大时，二分查找更有优势" "数据量大时，线性查找更有优势".

Every word of such a swapped sentence is in the chunk, in a clause with the others, so coverage, the numbers and the
swap check (which looks for a sibling term in the clause that says the same) all pass it. Here each text is cut into
scoped regions: a condition phrase (在…上/中/里, …时, …下, 当…时, 对于…) and what follows it up to the next condition
or the end of its sentence. For the sentence's last condition, each word it says under it must be in a region of the
chunk under the same condition; a word the chunk says only under another condition is a swap of scope. It reads only
when the chunk itself contrasts two conditions (two or more scoped regions).
Not handled here: conditions written without these markers ("with little data"), English.
"""

from __future__ import annotations

import re

from rag.audit.checks.verdict import Check, Claim
from rag.index.tokenize import jieba_tokenize, load_stopwords
from rag.messages import Msg

# a condition: 在…上/中/里, 当…时, 对于…，, or "…时，" / "…下，" that ends its clause (not the 时 of 时间)
_SCOPE = re.compile(r"在([^，,。；;：:在]{1,10}?)[上中里]|当([^，,。；;：:]{1,10}?)(?:时|的时候)|对于([^，,。；;：:]{1,10}?)[，,]"
                    r"|([^，,。；;：:在时下]{2,10}?)(?:时|下)(?=\s*[，,])")
_END = re.compile(r"[。；;！？!?\n]")
_WORD = re.compile(r"[\u4e00-\u9fff]{2,}|[A-Za-z][A-Za-z0-9]+")
_FILLER = frozenset("一个 这个 可以 通常 一般 就是 其中 以及 并且 因此 所以 但是 而且 主要 具有 显著 模型 数据".split())


def regions(text: str) -> list[tuple[str, str]]:
    """(condition, what follows it up to the next condition or the end of its sentence), in order."""
    found = [(m.start(), m.end(), next(g for g in m.groups() if g)) for m in _SCOPE.finditer(text)]
    out = []
    for i, (_, end, cond) in enumerate(found):
        stop = found[i + 1][0] if i + 1 < len(found) else len(text)
        sentence_end = _END.search(text, end)
        if sentence_end is not None:
            stop = min(stop, sentence_end.start())
        out.append((_norm(cond), text[end:stop]))
    return out


def said_there(claim: str, chunk: str) -> bool:
    """Does the chunk say what the sentence says under the sentence's own condition (every word of it in a region of
    the chunk under that condition)? The polarity check then leaves an opposite in another condition's clause alone
    ("误差很大" under 测试集 is not contradicted by "误差很小" under 训练集)."""
    mine = regions(claim)
    if not mine:
        return False
    cond, said = mine[-1]
    same = [body for c, body in regions(chunk) if _match(c, cond)]
    words = _words(said)
    return bool(same and words) and all(any(w in body for body in same) for w in words)


NAME = "scope"


def check(at: Claim) -> Check | None:
    """Fails when a word the sentence says under its condition is said in the chunk only under another condition."""
    mine = regions(at.text)
    theirs = regions(at.chunk)
    if not mine or len({c for c, _ in theirs}) < 2:
        return None
    cond, said = mine[-1]
    same = [body for c, body in theirs if _match(c, cond)]
    if not same:
        return None
    for word in _words(said):
        if any(word in body for body in same):
            continue
        other = [c for c, body in theirs if not _match(c, cond) and word in body]
        if other:
            return Check(NAME, False, Msg(zh=f"证据里“{word}”说的是{other[0]}的情况，不是{cond}的",
                         en=f"the evidence says \"{word}\" of {other[0]}, not of {cond}"))
    return None


def _words(text: str) -> list[str]:
    """The words the sentence says under its condition: jieba's tokens of two characters or more (or a Latin word),
    less stop words and fillers."""
    stop = load_stopwords()
    return [w for w in dict.fromkeys(jieba_tokenize(text)) if _WORD.fullmatch(w) and w not in _FILLER and w not in stop]


def _norm(cond: str) -> str:
    return cond.strip().removeprefix("在").strip()


def _match(a: str, b: str) -> bool:
    return a == b or (len(a) >= 2 and len(b) >= 2 and (a in b or b in a))

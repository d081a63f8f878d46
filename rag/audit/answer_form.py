"""What form the answer to a question takes: a formula, a number, a list; and which sentences have that form.

"RRF 是怎么计算的？" is answered by the sentence with 1/(k + rank) in it, but an embedder ranks the sentence
that names RRF above it: every sentence of the chunk is about RRF, and the formula reads as noise. So a
question that asks how something is computed prefers a sentence with a formula in it, one that asks how
many or how much prefers a sentence with a number, one that asks which or what kinds prefers an
enumeration. The cues are words of the question, not of any corpus (rag/audit/asks.py: the one table, which
asked.asked_slot reads too); the extractive scorer adds a small bonus (FORM_WEIGHT in extractive.py, chosen on
the golden set) to sentences of the asked-for form, which moves them up among sentences that are about equally
relevant, and cannot lift an irrelevant one.
Not handled here: the relevance score itself (extractive.py), the answerability gate, which reads the score
without this bonus (answerability.py).
"""

from __future__ import annotations

import re

from rag.audit.asks import asks
from rag.models.script import fold_script

FORMS = ("formula", "number", "list")

# A digit that begins a number: not one inside a name or after a variable (BM25, H100, k1, β1 state no value; the
# lookbehind holds digits too, or BM25's 5 would count)
DIGIT = r"(?<![A-Za-z_\u0370-\u03ff\d])\d"
# An operator between terms, or a slash that divides: after a digit or a bracket, spaced as an operator ("value /
# weight"), or between one-letter variables ("x/y", "n/2"). Not a slash inside a word pair, a unit or a path: TCP/IP,
# and/or, north/south, km/h, 480Mb/s, umol/L, /etc/init.d (126 sentences of the public corpora, none a formula, read
# as one before 2026-12-07).
_FORMULA = (r"[=≈Σ∑×÷√←·]|\d\s*/\s*[\w(]|\w\s*/\s*\(|[A-Za-z)]\s*[+*]\s*[A-Za-z(\d]|\)\s*/\s*[A-Za-z(\d]|"
            r"[A-Za-z]\s+/\s+[A-Za-z(\d]|(?<![A-Za-z/.\d])(?<!\d\s)[A-Za-z]/(?:[A-Za-z](?![A-Za-z])|[\d(])")
_HAS = {
    "formula": re.compile(_FORMULA),
    "number": re.compile(DIGIT),
    "list": re.compile(r"(?:[^、]+、){2,}|；|第一|第二|一是|二是|首先|其次|\b(?:first|second)\b", re.I),
}


# A sentence that opens with one of these leans on the one before it ("这样分工的原因是…" - which
# division?); quoted alone it reads as a non sequitur, so the previous sentence comes along.
ANAPHORA = ("这样", "这种", "这些", "这个", "这是", "这也", "这就", "这时", "此外", "因此", "所以", "它们", "它",
            "其中", "该", "但", "而且", "同时", "This ", "These ", "That ", "It ", "Such ", "Therefore", "However")


_PART = re.compile(r"[^？?]+[？?]*")


def question_parts_of(question: str) -> list[str]:
    """Every part of a question, each up to its question mark(s) (and the text after the last one), those holding a
    letter or digit: "A 多少？B 是什么？" -> ["A 多少？", "B 是什么？"]; a one-part question gives one part. The slot it asks
    (asked.asked_slot), whether it asks yes or no (checks/restates.yes_no) and the stand-in's two-part rule
    (extractive.question_parts) read the parts alike."""
    return [p for p in _PART.findall(question) if any(ch.isalnum() for ch in p)]


def question_form(question: str) -> str | None:
    """The first form the question asks for (formula before number before list), or None. The cues are simplified
    words: a question typed in traditional (怎麼計算) is read as simplified first, as the tokenizer reads it."""
    asked = fold_script(question or "")
    for form in FORMS:
        if asks(form, asked):
            return form
    return None


_MATH = re.compile(r"\$\$?(.+?)\$\$?", re.S)
_INDEX = re.compile(r"[_^](?:\{[^{}]*\}|\\?\w)|(?<![A-Za-z\\])[A-Za-z]\s*[-+]\s*\d+(?![\d.])")


def without_indices(text: str) -> str:
    """`text` with what only indexes a variable taken out of its formulas: a subscript or superscript
    ($\\mathbf{h}_{i, t-1}$, $x^2$ stays a formula but its 2 is no value asked for) and an offset ($t-1$), so a
    sentence of notation does not count as one that gives a number."""
    return _MATH.sub(lambda m: "$" + _INDEX.sub(" ", m.group(1)) + "$", text or "")


def has_form(sentence: str, form: str | None) -> bool:
    text = without_indices(sentence) if form == "number" else sentence or ""
    return form is not None and bool(_HAS[form].search(text))


_VALUE = re.compile(r"(?<![A-Za-z0-9_.])\d+(?:\.\d+)?(?![A-Za-z0-9_]|\.\d)")  # CJK around it is text


def values(text: str) -> list[str]:
    """The numbers `text` states (not a variable's index: without_indices), as written: "0.9", "10"."""
    return _VALUE.findall(without_indices(text or ""))


def gives_asked_number(sentence: str, question: str) -> bool:
    """For a "how many" question that itself gives a number ("动量系数取 0.9 的话，相当于平均多少个梯度？"): the sentence
    names the question's numbers (the condition it is asked under) and states one more (the answer). True for every
    sentence with a number when the question gives none."""
    given = set(values(question))
    stated = set(values(sentence))
    return bool(stated) and given <= stated and bool(stated - given)

"""Text as the fact checks read it: units (numbers, named terms, content words) with their offsets, and clauses.

- A **number** is 60, 0.0323, 1e-5, 10%, 8:1:1, 1/61, a number word with a measure (两个, 七天) or an English
  number word (two, sixty); its value is what is compared (2.0 == 2, 两 == 2 == two).
- A **term** is a name or identifier: any Latin-script token in Chinese text (BM25, k1, L2, Recall@10,
  top-k), and in English text a token with a digit, @, - or _, an all-caps word (GPU) or a capitalised word
  that does not start the sentence (Google).
- A **word** is any other token that is not a stop word, punctuation or a GENERIC word (fact_lexicon.py):
  jieba tokens for Chinese, lower-cased stems for English ("deleted" -> "delet", "hours" -> "hour").
- A **clause** is a piece between ， ； ： 、 (or , ; : and "and", "but", "while" in English). A clause with
  no term of its own that opens like a continuation (STARTERS: "常取 1.2 到 2.0" after "k1 控制…") inherits
  the terms of the clause before it: it talks about them.

`Reading(text)` holds all of that for one text, and `found(unit)` says whether a unit of another text occurs
in it: numbers by value, terms and English words by stem, Chinese words as substrings (jieba may cut the
same word differently in another context).
Not handled here: what the checks make of it (rag/audit/support.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from rag.audit import fact_lexicon as lex
from rag.index.tokenize import jieba_spans, load_stopwords

# 17,786,419 is one number, its commas grouping thousands (three digits after each), not three numbers
_GROUPED = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?%?"
_NUM = rf"{_GROUPED}(?![\d,]\d)|\d+(?:[:：]\d+)+|\d+/\d+|\d+(?:\.\d+)?(?:e[-+]?\d+)?%?"
_LATIN = r"[A-Za-z][A-Za-z0-9]*(?:['@_\-+.][A-Za-z0-9]+)*"
# A number is not a number inside a name (Recall@10, k1) or a formula's numerator (1/r, 1/(k + rank)).
# A size or a measure written against its unit ("16KB", "8 GB", "210mm", "15ms", "2.4GHz") is a number too: the units
# of two letters or more (a lone letter after digits makes a name: 3D, 5G, e5, iPhone 5s).
_SIZE = r"(?:[KMGT]i?B|[kmgt]b|[kKMG]?Hz|[mckn]m|[mn]s|[km]g|m[lL]|kW|mAh|dB)"
_TOKEN = re.compile(rf"(?P<num>(?<![A-Za-z0-9_@.])(?:{_NUM})(?={_SIZE}(?![A-Za-z0-9_@])|(?![A-Za-z0-9_@]|/[A-Za-z(])))"
                    rf"|(?P<latin>{_LATIN})")
# a letter x between two numbers multiplies them ("1920x1080", "210mmX148mm"): read as ×, so both are numbers
_TIMES = re.compile(rf"(\d(?:{_SIZE})?)[xX](?=\d)")
# a numeral before a measure word counts something ("三层", "两个"); 二次矩, 一次方程, 二次型 name an order, not a count
_ZH_NUMERAL = re.compile(rf"([零两二三四五六七八九十百千万]+)(?=[{lex.MEASURE_ZH}]|分钟|小时)(?!次[矩方型项函曲规优元幂根式])")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_CLAUSE_ZH = re.compile(r"[，,；;：:、。！？!?\n]")
_CLAUSE_EN = re.compile(r"[,;:!?()\n]|\.(?=\s|$)|\s(?:and|but|while|whereas|so|which)\s")
_JOINED = re.compile(r"\s(?:and|but|while|whereas|so|which)\s$")
_EN_STOP = frozenset(
    "a an the is are was were be been being of to in on at by for with from as and or but it its this that these "
    "those there here what which who whom how why when where do does did than then so if into about over under "
    "they them their he she we you i".split())


@dataclass(frozen=True)
class Unit:
    key: str  # what is compared: a number's value, a term's or English word's stem, a Chinese word
    kind: str  # num | term | word
    start: int  # offsets in the text it came from
    end: int
    shown: str  # as written


@dataclass
class Clause:
    start: int
    end: int
    units: list[Unit] = field(default_factory=list)  # content units inside it
    inherited: list[Unit] = field(default_factory=list)  # terms of the clause it continues


class Reading:
    """One text read for the fact checks: its tokens, content units, clauses and what can be found in it."""

    def __init__(self, text: str):
        self.text = text or ""
        self.low = self.text.lower()
        self.zh = bool(_CJK.search(self.text))
        self._scan = _TIMES.sub("\\1×", self.text)  # as read: "210mmX148mm" as "210mm×148mm" (the same length)
        self.tokens: list[tuple[str, int, int]] = []  # every token (stop words included), lower-cased
        self.units: list[Unit] = []  # content units in order
        self._read()
        self.numbers = {u.key for u in self.units if u.kind == "num"}
        self.stems = {u.key for u in self.units if u.kind != "num" and u.key.isascii()}
        self.stems |= {stem(t) for t, _, _ in self.tokens if t.isascii() and t[:1].isalpha()}
        self.depth = _bracket_depths(self.text)  # per character: how many brackets it sits inside
        self.clauses = self._clauses()

    # ------------------------------------------------------------------------------ reading
    def _read(self) -> None:
        text, pos = self._scan, 0
        for m in _TOKEN.finditer(text):
            self._cjk(pos, m.start())
            raw = m.group(0)
            if m.group("num"):
                self.tokens.append((raw, m.start(), m.end()))
                self.units.append(Unit(number_key(raw), "num", m.start(), m.end(), raw))
            else:
                low = raw.lower()
                self.tokens.append((low, m.start(), m.end()))
                unit = self._latin(raw, m.start(), m.end())
                if unit is not None:
                    self.units.append(unit)
            pos = m.end()
        self._cjk(pos, len(text))
        self.units.sort(key=lambda u: u.start)

    def _cjk(self, a: int, b: int) -> None:
        if a >= b:
            return
        piece = self._scan[a:b]
        numerals = [(m.start(1), m.end(1)) for m in _ZH_NUMERAL.finditer(piece)]
        for s, e in numerals:
            value = zh_numeral(piece[s:e])
            if value is not None:
                self.units.append(Unit(_fmt(value), "num", a + s, a + e, piece[s:e]))
        stop = _stopwords()
        spans = jieba_spans(piece)
        bound = -1  # where a bound prefix (过 of 过拟合) joined the word after it ends
        for i, (tok, s, e) in enumerate(spans):
            self.tokens.append((tok, a + s, a + e))
            if e <= bound:
                continue  # already read with its prefix
            content = self._content(tok, s, e, stop, numerals)
            nxt = spans[i + 1] if i + 1 < len(spans) else None
            if tok in lex.BOUND_PREFIXES_ZH and nxt is not None and nxt[1] == e and len(nxt[0]) > 1 \
                    and self._content(*nxt, stop, numerals):
                joined = tok + nxt[0]
                self.units.append(Unit(joined, "word", a + s, a + nxt[2], joined))
                bound = nxt[2]
            elif content:
                self.units.append(Unit(tok, "word", a + s, a + e, tok))
        self.tokens.sort(key=lambda t: t[1])

    @staticmethod
    def _content(tok: str, s: int, e: int, stop, numerals) -> bool:
        """Is jieba token `tok` (at s..e of the piece) a content word: not a stopword, a generic word, punctuation,
        a negation (the polarity check's business), a numeral or a bare number?"""
        if tok in stop or tok in lex.GENERIC_ZH or not any(ch.isalnum() for ch in tok) or is_negation(tok):
            return False
        return not any(s < ne and ns < e for ns, ne in numerals) and not tok.isdigit()

    def _latin(self, raw: str, a: int, b: int) -> Unit | None:
        low = raw.lower()
        if low in lex.NUMBER_WORDS_EN and not self.zh:
            return Unit(_fmt(lex.NUMBER_WORDS_EN[low]), "num", a, b, raw)
        if self.zh:
            return Unit(low, "term", a, b, raw)
        if low in _EN_STOP or low in lex.GENERIC_EN or low in lex.NEGATIONS_EN:
            return None
        at_start = not self.text[:a].strip() or self.text[:a].rstrip()[-1:] in ".!?:\n"
        named = (any(ch.isdigit() or ch in "@_-" for ch in raw) or (raw.isupper() and len(raw) > 1)
                 or (raw[:1].isupper() and not at_start))
        return Unit(stem(low), "term" if named else "word", a, b, raw)

    def _clauses(self) -> list[Clause]:
        depth = _bracket_depths(self.text)
        cuts = self._cuts(depth)
        out = [Clause(a, b, [u for u in self.units if a <= u.start < b])
               for a, b in zip(cuts[0::2], cuts[1::2]) if self.text[a:b].strip()]
        for i, clause in enumerate(out):
            bare = [u for u in clause.units if u.kind == "term" and not depth[u.start]]  # "（weight decay）" is no subject
            if i == 0 or bare or not self._continues(clause):
                continue  # "而 BM25 分数…" names its own subject
            clause.inherited = self._inherited(out[i - 1], depth)
        return out

    def _cuts(self, depth: list[int]) -> list[int]:
        """Where the clauses start and end, in pairs: at each clause mark outside brackets and real line breaks."""
        cuts = [0]
        for m in (_CLAUSE_ZH if self.zh else _CLAUSE_EN).finditer(self.text):
            if depth[m.start()]:
                continue  # a comma inside （…） belongs to the parenthesis, not a new clause
            if m.group(0) == "\n" and soft_break(self.text, m.start()):
                continue  # a line wrapped inside a sentence (extracted PDF text)
            cuts += [m.start(), m.end()]
        cuts.append(len(self.text))
        return cuts

    def _inherited(self, prev: Clause, depth: list[int]) -> list[Unit]:
        """The names a clause with no subject of its own takes from the clause right before it (a chain of continuing
        clauses passes its names on)."""
        if not self.zh:  # "A GPU job asks for one GPU at a time and may run for at most 8 hours"
            return [u for u in prev.inherited + prev.units if u.kind != "num"][:3]
        return [u for u in prev.units + prev.inherited if u.kind == "term" and not depth[u.start]] \
            or [u for u in prev.units if u.kind == "term"]

    def _continues(self, clause: Clause) -> bool:
        """Does the clause go on about the subject before it (it opens with no subject of its own)?"""
        opening = self.text[clause.start:clause.end].strip().lower()
        if self.zh:
            return opening.startswith(lex.STARTERS_ZH)
        joined = bool(_JOINED.search(self.text[max(0, clause.start - 9):clause.start]))  # "…, and may run…"
        first = opening.split(" ", 1)[0]
        return opening.startswith(lex.STARTERS_EN) or (joined and first in lex.VERBS_EN)

    # ------------------------------------------------------------------------------ finding
    def found(self, unit: Unit) -> bool:
        """Does `unit` (of another text) occur here?"""
        if unit.kind == "num":
            return unit.key in self.numbers
        if unit.key.isascii():
            return unit.key in self.stems
        return unit.key in self.low

    def credit(self, unit: Unit) -> float:
        """1 when found; a Chinese word not found gets half the share of its characters that occur here."""
        if self.found(unit):
            return 1.0
        if unit.kind == "word" and not unit.key.isascii() and len(unit.key) > 1:
            return 0.5 * sum(ch in self.low for ch in unit.key) / len(unit.key)
        return 0.0

    def tokens_in(self, a: int, b: int) -> list[str]:
        return [t for t, s, _ in self.tokens if a <= s < b]

    def negations(self, a: int, b: int) -> list[tuple[str, list[str]]]:
        """The negation tokens between offsets a and b, each with what it negates: for a negation word (不, 无需,
        not) the next content unit in the clause (two in English, where articles and prepositions come
        between: "no access to the internet"); a word that carries its own negation (无关, 不同) negates the
        clause itself (empty scope). A negation inside quotes, or in a phrase that describes a noun (…的), is
        left out."""
        out = []
        quoted = _quote_depths(self.text)
        for tok, s, e in self.tokens:
            if not (a <= s < b) or not is_negation(tok) or quoted[s]:
                continue  # "电脑开不了机" in quotes is an example, not the text's own claim
            if self.zh and "的" in self.text[e:e + 2]:
                continue  # "没见过的验证集", "训练数据中没有的知识": it describes a noun, it negates no claim
            if tok in lex.NEGATIONS_ZH or tok in lex.NEGATIONS_EN or tok.endswith("n't"):
                scope = [u.key for u in self.units if e <= u.start < b][:1 if self.zh else 2]
            else:
                scope = []  # 无关, 不同, 不足: the word negates the clause's own relation
            out.append((tok, scope))
        return out


def soft_break(text: str, i: int) -> bool:
    """Is the line break at text[i] inside a sentence (the line before does not end one, the next goes on in
    lower case or in Chinese)?"""
    before = text[:i].rstrip()
    after = text[i + 1:i + 2]
    return bool(before) and before[-1] not in "。！？!?.:：" and (after.islower() or "\u4e00" <= after <= "\u9fff")


def _quote_depths(text: str) -> list[int]:
    return _depths(text, "“「『", "”」』")


def _bracket_depths(text: str) -> list[int]:
    return _depths(text, "（(", "）)")


def _depths(text: str, opening: str, closing: str) -> list[int]:
    """How deep inside `opening` ... `closing` pairs each character of `text` sits (the marks themselves count in)."""
    depth, out = 0, []
    for ch in text:
        if ch in opening:
            depth += 1
        out.append(depth)
        if ch in closing:
            depth = max(0, depth - 1)
    return out


def is_negation(token: str) -> bool:
    if token in lex.NEGATIONS_ZH or token in lex.NEGATIONS_EN or token.endswith("n't"):
        return True
    return token[:1] in "不没无非未" and token not in lex.NOT_NEGATIONS and len(token) <= 3 and not token.isascii()


def stem(word: str) -> str:
    """A crude English stem, enough to match "hours" with "hour" and "measured" with "measure"."""
    w = word.lower().removesuffix("'s")
    if not w.isalpha() or len(w) <= 3:
        return w
    w = _singular(w)
    for suffix, longer_than in (("ation", 7), ("ed", 4), ("ing", 5)):  # the first that applies, as an elif chain
        if w.endswith(suffix) and len(w) > longer_than:
            w = w[: -len(suffix)]
            break
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]
    return w


def _singular(w: str) -> str:
    """"studies" -> "study", "classes" -> "class", "hours" -> "hour" ("class", "bus", "axis" stay)."""
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith("sses"):
        return w[:-2]
    if w.endswith("s") and not w.endswith(("ss", "us", "is")):
        return w[:-1]
    return w


def number_key(raw: str) -> str:
    """The value a number is compared by: "2.0" and "2" -> "2", "1e-05" and "1e-5" -> "1e-05", "10%" -> "10%"."""
    text = raw.replace("：", ":")
    if re.fullmatch(_GROUPED, text):
        text = text.replace(",", "")
    if ":" in text:
        return text
    percent = text.endswith("%")
    text = text.rstrip("%")
    try:
        value = float(text.split("/")[0]) / float(text.split("/")[1]) if "/" in text else float(text)
    except (ValueError, ZeroDivisionError):
        return raw
    return _fmt(value) + ("%" if percent else "")


def zh_numeral(text: str) -> float | None:
    """两 -> 2, 十 -> 10, 二十 -> 20, 十五 -> 15, 三百 -> 300; anything else None."""
    digits = lex.NUMBER_WORDS_ZH
    if len(text) == 1:
        return digits.get(text)
    if len(text) == 2 and text[0] == "十" and text[1] in digits:
        return 10 + digits[text[1]]
    if len(text) == 2 and text[1] in "十百千万" and text[0] in digits:
        return digits[text[0]] * digits[text[1]]
    if len(text) == 3 and text[1] == "十" and text[0] in digits and text[2] in digits:
        return digits[text[0]] * 10 + digits[text[2]]
    return None


def _fmt(value: float) -> str:
    """A number's key: a whole number written out in full (5,105,768 and 5,105,769 are two numbers), any other to six
    significant digits."""
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e15 else f"{value:.6g}"


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    return load_stopwords() | _EN_STOP


@lru_cache(maxsize=4096)
def read(text: str) -> Reading:
    """`Reading(text)`, kept for texts read again (a chunk is read once per sentence that cites it)."""
    return Reading(text)

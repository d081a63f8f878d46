"""Is a sentence supported by a chunk? Align it to the chunk's evidence span, then check the facts against that span.

    sentence + chunk(s)
      -> align: the chunk sentence, or two adjacent sentences, that covers the sentence's content best
         = the evidence span (shown beside the sentence, the shared words highlighted)
      -> checks against the span, each with its reason in Chinese and English:
           numbers   every number, range bound, percentage and year of the sentence is in the span (one the
                     span has no number against at all is a "new number": unsupported, not contradicted)
           quantity  a number goes with the thing it measures (32 位浮点数, 8 位整数: checks/quantity.py)
           binding   a number and the term it is said of sit together (b's 0.75 is not k1's 1.2 到 2.0)
           swap      the span says the same thing of a sibling term (L1 for L2, 验证集 for 测试集), or the chunk says it
                     under another condition (在训练集上 for 在测试集上: checks/scope.py)
           polarity  negations agree clause by clause, and no opposite pair differs (增大/减小, 乘以/除以)
           new term  a name or identifier the chunk never mentions (Google, GPU)
           restates  every content word is the question's own: the sentence states no fact
           coverage  the share of the sentence's content units found in the span
           adds      the same share over what the sentence says beyond the question (its words the question
                     lacks): the question's own words are in any chunk on its topic
      -> label: contradicted (a fact check failed on a span that covers the sentence at least weakly) |
         restates-question | unsupported (coverage, or what it adds, below WEAK_COVERAGE, or a new term) | weak
         (below SUPPORTED_COVERAGE) | supported
      -> optional second opinion: a model's yes/no on the sentence and the span alone (its P(yes) kept);
         see `model_opinion` for what it does to the label.

The old audit asked how many of the sentence's words occur anywhere in the chunk, so a sentence that
reused the chunk's words to say something false ("RRF 的 k 通常取 10" against "通常取 60") passed.
Here the words must come from one place, the numbers must be the span's, and the span must not say the
same thing of something else. Thresholds were chosen on the dev half of data/support_pairs.jsonl and are
reported on its test half (docs/audit.md, "An audit that catches wrong facts"; bench/bench_audit.py).
These are rules over words, not an entailment model: see fact_lexicon.py for what they cannot catch.
Script: the sentence, the question and each chunk are read as simplified (`as_read`), so a sentence and a chunk in
different scripts are checked on the same words; the evidence is shown as written.
Not handled here: finding the citations (citations.py), the no-RAG answer's search for support (grounding.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from rag.answer import fact_lexicon as lex
from rag.answer.checks import quantity as quantity_check
from rag.answer.checks import scope as scope_check
from rag.answer.checks.verdict import Check
from rag.answer.fact_text import Clause, Reading, Unit, read, soft_break
from rag.answer.shape import states_nothing
from rag.index.tokenize import load_stopwords
from rag.ingest.sentences import sentence_spans
from rag.messages import say
from rag.models.script import fold_script

if TYPE_CHECKING:
    from rag.models.yes_no import Verdict

SUPPORTED_COVERAGE = 0.6  # chosen on the dev half of data/support_pairs.jsonl (bench/bench_audit.py)
WEAK_COVERAGE = 0.4  # below this the span does not cover the sentence: unsupported
PAIR_PENALTY = 0.05  # two adjacent sentences are the span only when they cover this much more than one
LABELS = ("supported", "weak", "unsupported", "contradicted", "restates-question")
FACT_CHECKS = ("numbers", "binding", "swap", "polarity")  # a failure of one of these: contradicted
_RANK = {"supported": 4, "weak": 3, "contradicted": 2, "restates-question": 1, "unsupported": 0}


@dataclass(frozen=True)
class Evidence:
    """The span of a chunk a sentence was aligned to."""

    ref: str
    text: str  # chunk[start:end]
    start: int
    end: int
    matched: tuple[tuple[int, int], ...] = ()  # offsets in `text` of the units the sentence shares with it


@dataclass(frozen=True)
class Support:
    """What the checker found for one sentence."""

    sentence: str  # the claim as checked (citations removed)
    label: str  # one of LABELS
    evidence: Evidence | None  # None when no chunk had anything in common with the sentence
    checks: tuple[Check, ...] = ()
    coverage: float = 0.0  # share of the sentence's content units found in the evidence span
    cosine: float | None = None  # cos(sentence, evidence span) under the index's embedder, when one is given
    opinion: Verdict | None = None  # the model's yes/no Verdict (rag/models/yes_no.py), where it ran
    heuristic_label: str = ""  # the label before the model's opinion

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]

    def reasons(self, lang: str) -> list[str]:
        """The failed checks' reasons, else the passed ones' (why it counts as supported)."""
        return [c.reason(lang) for c in (self.failed or self.checks)]


Opinion = Callable[[str, str, str], "Verdict"]  # (sentence, evidence span, lang) -> the model's yes/no


@dataclass(frozen=True)
class Checker:
    """The settings of one audit: the embedder for the cosine column and the optional model opinion."""

    embedder: object | None = None
    opinion: Opinion | None = None
    doubt_below: float = 0.5  # a model P(yes) below this turns a heuristic "supported" into "weak"
    supported_coverage: float = SUPPORTED_COVERAGE
    weak_coverage: float = WEAK_COVERAGE
    beyond_question: bool = True  # read what the sentence adds to the question on its own (`_adds`); rebind.py does not

    def check(self, sentence: str, chunks: Mapping[str, str], question: str = "", instructions: str = "") -> Support:
        """The best support `sentence` finds among `chunks` (ref -> text): see the module docstring."""
        return check_sentence(sentence, chunks, question, self, instructions)


def check_sentence(sentence: str, chunks: Mapping[str, str], question: str = "",
                   checker: Checker | None = None, instructions: str = "") -> Support:
    """The best Support for `sentence` over `chunks`: highest label, then highest coverage, first chunk on ties.
    `instructions`: the prompt's rules, so a sentence that only repeats them is not taken for content."""
    checker = checker or Checker()
    claim = (sentence or "").strip()
    body = as_read(strip_lead_in(claim))  # "根据资料，…": the lead-in is no content; what follows it is checked
    if not body:
        return Support(claim, "restates-question", None, (LEAD_IN_ONLY,))
    question = as_read(question)
    s = read(body)
    lang = "zh" if s.zh else "en"
    if not s.units:
        return Support(claim, "unsupported", None, (Check("coverage", False, "这句话没有可以核对的内容词。",
                                                           "the sentence has no content words to check."),))
    echo = _echoes(s, question, instructions)
    if echo is not None:
        return Support(claim, "restates-question", None, (echo,))
    candidates = [_judge(s, body, ref, as_read(text), question, checker) for ref, text in chunks.items() if text]
    if not candidates:
        return Support(claim, "unsupported", None, (Check("coverage", False, "没有可以核对的资料。",
                                                           "there is no chunk to check it against."),))
    best = max(candidates, key=lambda c: (_RANK[c.label], c.coverage, -candidates.index(c)))
    ev = best.evidence  # found in the chunk as read; shown as the chunk writes it (as_read moved no character)
    evidence = replace(ev, text=chunks[ev.ref][ev.start:ev.end]) if ev is not None else None
    cosine = _cosine(checker.embedder, claim, evidence.text) if checker.embedder and evidence else None
    best = Support(claim, best.label, evidence, best.checks, best.coverage, cosine, heuristic_label=best.label)
    if checker.opinion is not None and best.label == "supported" and best.evidence is not None:
        verdict = checker.opinion(claim, best.evidence.text, lang)
        p = verdict.p_yes
        doubt = (p is not None and p < checker.doubt_below) or (p is None and not verdict.answer)
        shown = f"P(yes)={p:.2f}" if p is not None else verdict.raw
        check = Check("model", not doubt, f"模型的第二意见：{'存疑' if doubt else '支持'}（{shown}）",
                      f"the model's second opinion: {'doubts it' if doubt else 'supports it'} ({shown})")
        best = Support(best.sentence, "weak" if doubt else best.label, best.evidence, best.checks + (check,),
                       best.coverage, cosine, verdict, best.label)
    return best


def as_read(text: str) -> str:
    """`text` with traditional Chinese read as simplified (rag/models/script.py, as the tokenizer and the embedders read
    it), so a claim and a chunk in different scripts are checked on the same words; as written where the conversion
    would move a character (every offset into the result must be an offset into `text`: the evidence is shown as
    written). Before, a faithful simplified sentence against its chunk in traditional was kept 42 of 55 times on the
    support pairs' test half (54 of 55 in one script; docs/audit.md)."""
    folded = fold_script(text)
    return folded if len(folded) == len(text) else text


# ------------------------------------------------------------------------------------------- align

def evidence_spans(chunk: str) -> list[tuple[int, int, int]]:
    """Candidate evidence spans of a chunk as (start, end, sentences): each sentence, and each two adjacent
    sentences. A line break inside a sentence (an extracted PDF wraps lines) does not end it here; a question
    (the FAQ entry's title) states nothing, so it is no evidence."""
    joined = "".join(" " if ch == "\n" and soft_break(chunk, i) else ch for i, ch in enumerate(chunk))
    singles = [(a, b) for a, b in sentence_spans(joined, semicolons=False) if not asks(chunk[a:b])]
    pairs = [(a, d, 2) for (a, _), (_, d) in zip(singles, singles[1:])]
    return [(a, b, 1) for a, b in singles] + pairs


def asks(text: str) -> bool:
    """Is `text` a question (it ends with a question mark, closing quotes and brackets aside)? It states nothing."""
    return text.rstrip().rstrip("”’\"')）").endswith(("?", "？"))


def align(s: Reading, ref: str, chunk: str) -> tuple[Evidence, float]:
    """The span of `chunk` that covers sentence `s` best (a pair of sentences pays PAIR_PENALTY), and its
    coverage."""
    spans = evidence_spans(chunk) or [(0, len(chunk), 1)]
    title = title_of(chunk)
    best = (float("-inf"), 0.0, 0, len(chunk))
    for a, b, n in spans:
        cov = coverage(s, read(chunk[a:b]), title)
        score = cov - PAIR_PENALTY * (n - 1)
        if score > best[0] + 1e-9:
            best = (score, cov, a, b)
    _, cov, a, b = best
    span = read(chunk[a:b])
    matched = tuple((u.start, u.end) for u in span.units if any(_same(u, v) for v in s.units))
    return Evidence(ref, chunk[a:b], a, b, matched), cov


def title_of(chunk: str) -> Reading | None:
    """The chunk's first sentence (an FAQ entry's question, a section's heading): what the chunk is about."""
    first = sentence_spans(chunk)[:1]
    return read(chunk[first[0][0]:first[0][1]]) if first else None


def coverage(s: Reading, span: Reading, title: Reading | None = None) -> float:
    """Mean credit of the sentence's content units in the span (fact_text.Reading.credit). A name in the chunk's
    first sentence (its title) is what the whole chunk is about, so it counts as found in every span of it:
    the span for "RRF 中 k 通常取 60" is the sentence about k, not that one plus the title."""
    if not s.units:
        return 0.0
    return sum(_unit_credit(u, span, title) for u in s.units) / len(s.units)


def _unit_credit(u: Unit, span: Reading, title: Reading | None) -> float:
    """One unit's credit in the span, a name in the chunk's title counting as found (see `coverage`)."""
    return max(span.credit(u), 1.0 if title is not None and u.kind == "term" and title.found(u) else 0.0)


def _same(u: Unit, v: Unit) -> bool:
    if u.kind == "num" or v.kind == "num":
        return u.kind == v.kind and u.key == v.key
    return u.key == v.key or (not u.key.isascii() and (u.key in v.key or v.key in u.key))


# ------------------------------------------------------------------------------------------ checks

def _judge(s: Reading, claim: str, ref: str, chunk: str, question: str, checker: Checker) -> Support:
    evidence, cov = align(s, ref, chunk)
    asked = [chunk[a:b] for a, b in sentence_spans(chunk) if asks(chunk[a:b])]
    if any(copied_from(claim, q) for q in asked):  # the chunk's own question (an FAQ entry's title), copied
        return Support(claim, "restates-question", evidence, (COPIED_QUESTION,), cov)
    if copied_from(claim, chunk):  # the chunk says it in these very words: no rule over words can find it wrong
        restates = _restates(s, question)
        copied = (VERBATIM,) + ((restates,) if restates is not None and not restates.passed else ())
        return Support(claim, "restates-question" if len(copied) > 1 else "supported", evidence, copied, max(cov, 1.0))
    span, whole = read(evidence.text), read(chunk)
    title = title_of(chunk)
    polarity = _polarity(s, span)
    if polarity is not None and not polarity.passed and scope_check.said_there(claim, chunk):
        polarity = None  # the opposite is said under another condition: the sentence's own condition agrees
    checks = [c for c in (_numbers(s, span, whole), quantity_check.check(claim, chunk), _binding(s, span),
                          _swap(s, span, whole, evidence, title), scope_check.check(claim, chunk), polarity,
                          _new_terms(s, whole), _apart(s, span, whole, evidence, title), _restates(s, question))
              if c is not None]
    checks.append(Check("coverage", cov >= checker.supported_coverage,
                        f"证据覆盖了这句话 {cov:.0%} 的内容词", f"the evidence covers {cov:.0%} of the sentence's content words"))
    adds, added = _adds(s, span, title, question, checker)
    checks.extend([adds] if adds is not None else [])
    failed = {c.name for c in checks if not c.passed}
    if failed & set(FACT_CHECKS) and cov >= checker.weak_coverage:  # a contradiction of a span about something else
        label = "contradicted"                                        # is no contradiction: that is "unsupported"
    elif "restates" in failed:
        label = "restates-question"
    elif failed & {"new-term", "new-number", "apart"} or min(cov, added) < checker.weak_coverage:
        label = "unsupported"
    elif min(cov, added) < checker.supported_coverage:
        label = "weak"
    else:
        label = "supported"
    return Support(claim, label, evidence, tuple(checks), cov)


# ------------------------------------------------------------------------------ copies, lead-ins, echoes

VERBATIM = Check("verbatim", True, "逐字抄自证据（引号、省略号和空白之外一字不差）",
                 "copied word for word from the evidence (but for quote marks, ellipses and spaces)")
COPIED_QUESTION = Check("restates", False, "抄的是资料里的问句（如条目标题），没有陈述事实",
                        "copies a question of the chunk (its title): it states no fact")
LEAD_IN_ONLY = Check("restates", False, "只是套话（如“根据资料”），没有陈述事实",
                     "only a lead-in (\"according to the context\"): it states no fact")
_ELLIPSIS = re.compile(r"…+|\.{3,}|⋯+")
_QUOTES = "「」『』“”‘’\"'《》"
_WIDTH = str.maketrans("，。；：！？（）［］【】％＋－＝／", ",.;:!?()[][]%+-=/")
MIN_COPY = 8  # characters of a copied piece (after normalising) for it to count as a copy, not a phrase
# Lead-ins that say where an answer comes from and nothing else: "根据资料中的原词、数字和公式，", "According to the
# context, ". Only a lead-in: the sentence states no fact; with more after it, what follows is checked.
_LEAD_IN = re.compile(
    r"^\s*(?:(?:根据|依据|按照|基于|参考|结合)(?:所给|提供的|给定的|上述|以上|上面的|检索到的)?(?:资料|上下文|文档|材料|内容|参考资料|信息)"
    r"[^，,。；;：:]{0,24}[，,：:]?|(?:according to|based on|from|as stated in) the (?:context|contexts|documents?|"
    r"materials?|sources?|passages?)[^,;:.]{0,40}[,:]?)\s*", re.I)


def _flat(text: str) -> str:
    """Text for a verbatim comparison: no spaces or quote marks, full-width punctuation as ASCII, lower case, traditional
    Chinese read as simplified (a copy in the other script is a copy)."""
    text = re.sub(r"\n+", ".", fold_script(text).translate(_WIDTH).lower())  # a line break ends a heading or a line: a boundary
    return "".join(ch for ch in text if not ch.isspace() and ch not in _QUOTES)


def copied_from(claim: str, chunk: str) -> bool:
    """Is `claim` the chunk's own words: each piece between ellipses (…) a stretch of the chunk, and the copied
    pieces MIN_COPY characters at least? Quote marks, spaces and the width of punctuation do not count."""
    pieces = [_flat(p).strip(",.;:!?、") for p in _ELLIPSIS.split(claim)]  # the audit strips citations first
    pieces = [p for p in pieces if p]
    if not pieces or sum(map(len, pieces)) < MIN_COPY:
        return False
    text = _flat(chunk)
    return all(_clause_copy(p, text) for p in pieces)


_CLAUSES = re.compile(r"[,;:.!?、…]+")


def echoes_prompt(claim: str, rules: str, asked: Sequence[str] = ()) -> bool:
    """Does `claim` repeat the prompt instead of answering: a clause of it copied from the rules ("问是什么就给出定义"),
    or every clause copied from a context's own question (an FAQ title written with 。 for ？: "知识库内容更新后，RAG
    系统需要做什么。")? Clauses of MIN_COPY characters or more count; a shorter one is a phrase anyone may write.
    A clause that is only a label ("资料：提示词工程有哪些实用技巧。") is no content of its own, and the rules' numbers
    read the same in either script ("第1句话直接回答问题" copies the rule "第一句话直接回答问题")."""
    clauses = [c for c in _CLAUSES.split(_numerals(_flat(claim))) if c and not states_nothing(c)]
    long = [c for c in clauses if len(c) >= MIN_COPY]
    flat_rules = _numerals(_flat(rules)) if rules.strip() else ""
    if flat_rules and any(_clause_copy(c, flat_rules) for c in long):
        return True
    flat_asked = [_numerals(_flat(q)) for q in asked]
    return bool(long) and all(any(_clause_copy(c, q) for q in flat_asked) for c in clauses)


_NUMERALS = str.maketrans("〇一二三四五六七八九", "0123456789")


def _numerals(text: str) -> str:
    """Chinese numerals as digits, for comparing a copy with what it copies ("第一" and "第1" alike)."""
    return text.translate(_NUMERALS)


def _clause_copy(piece: str, text: str) -> bool:
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


def strip_lead_in(claim: str) -> str:
    """`claim` without a lead-in that only says where the answer comes from ("" when that is all it is)."""
    m = _LEAD_IN.match(claim)
    return claim[m.end():].strip() if m else claim


def _echoes(s: Reading, question: str, instructions: str) -> Check | None:
    """A sentence whose every content word is the prompt's rules' (and the question's): it repeats the prompt."""
    if not instructions.strip() or not s.units or any(u.kind == "num" for u in s.units):
        return None  # a number is content (the rules' own numbers are list markers)
    rules = read(f"{question}\n{instructions}")
    if all(rules.found(u) or _all_generic(u.key) for u in s.units) and not all(read(question).found(u) for u in s.units):
        return Check("echo", False, "这句话只是在复述提示词里的要求，没有陈述事实",
                     "the sentence only repeats the prompt's instructions: it states no fact")
    return None


def _shown(units, sep: str = "、") -> str:
    """The units as the reason shows them: 、 between them in Chinese, a comma in English (`sep=", "`)."""
    return sep.join(dict.fromkeys(u.shown for u in units))


def _numbers(s: Reading, span: Reading, whole: Reading) -> Check | None:
    nums = [u for u in s.units if u.kind == "num"]
    if not nums:
        return None
    missing = [u for u in nums if not span.found(u)]
    here = [u for u in span.units if u.kind == "num"]
    for u in nums:  # "B+ 树有 2 层" is not backed by the 2 of "WHERE b = 2": a counted 2 against an assigned one
        measure = measure_after(s.text, u.end)
        same = [v for v in here if v.key == u.key]
        if measure and same and all(_assigned(span.text, v.start) for v in same):
            where = span.text[max(0, same[0].start - 12):same[0].end].strip()
            return Check("new-number", False, f"句子说 {u.shown} {measure}，证据里的 {u.shown} 是赋给别的量的值（“{where}”）",
                         f"the sentence counts {u.shown} {measure}; the evidence's {u.shown} is a value given to something "
                         f"else (\"{where}\")")
    for u in nums:
        unit = unit_after(s.text, u.end)
        after = {unit_after(span.text, v.end) for v in here if v.key == u.key}
        theirs = sorted(x for x in after if x is not None)
        if u not in missing and unit and theirs and None not in after and unit not in theirs:
            return Check("numbers", False, f"句子说 {u.shown} {unit}，证据说 {u.shown} {'、'.join(theirs)}",
                         f"the sentence says {u.shown} {unit}; the evidence says {u.shown} {', '.join(theirs)}")
    if not missing:
        return Check("numbers", True, f"数字 {_shown(nums)} 都在证据里", f"the numbers {_shown(nums, ', ')} are all in the evidence")
    if not here:  # the span states no number at all: the sentence adds one ("2019 年", "两个指标"), it contradicts none
        return Check("new-number", False, f"证据里没有数字，句中的 {_shown(missing)} 没有出处",
                     f"the evidence states no number; the sentence's {_shown(missing, ', ')} has no source")
    return Check("numbers", False,
                 f"句中的 {_shown(missing)} 在证据里找不到（证据这里的数字是 {_shown(here) or '—'}）",
                 f"the sentence says {_shown(missing, ', ')}, which the evidence does not (its numbers here: "
                 f"{_shown(here, ', ') or '—'})")


def measure_after(text: str, end: int) -> str | None:
    """The Chinese measure word right after a number ending at `end` (2 层, 3 个), or a unit (16 KB); else None."""
    rest = text[end:end + 3].lstrip()
    return rest[0] if rest and rest[0] in lex.MEASURE_ZH else unit_after(text, end)


def _assigned(text: str, start: int) -> bool:
    """Is the number at `start` a value given to a name ("b = 2", "k：60", "top_k=5")?"""
    before = text[max(0, start - 4):start].rstrip()
    return bool(before) and before[-1] in "=＝:：<>≤≥"


def unit_after(text: str, end: int) -> str | None:
    """The unit written right after a number ending at `end` (hours, GB, 天), singular; None if there is none."""
    rest = text[end:end + 12].lstrip().lower()
    for unit in lex.UNITS:
        if rest.startswith(unit) and not (unit.isascii() and rest[len(unit):len(unit) + 1].isalpha()):
            return unit.removesuffix("s") if unit.isascii() and unit not in ("bits", "bytes") else unit.removesuffix("s")
    return None


def _clause_has(span: Reading, g: Clause, unit: Unit) -> bool:
    if unit.kind == "num":
        return any(v.key == unit.key for v in g.units if v.kind == "num")
    if any(v.key == unit.key for v in g.inherited):
        return True
    if unit.key.isascii():
        return any(v.key == unit.key for v in g.units) or unit.key in {t for t in span.tokens_in(g.start, g.end)}
    return unit.key in span.low[g.start:g.end]


def _binding(s: Reading, span: Reading) -> Check | None:
    """A number of the sentence and a term of the same clause must share a clause of the span too.

    It fails when nothing the sentence clause names shares a clause with the number in the span, and a term
    it names (k1, b, Adam) is in a clause with another number there; an English word ("default") only when
    every clause it is in holds another number."""
    for c in s.clauses:
        mine = [u for u in c.units if u.kind == "num"]
        g, _ = _best_clause(c, span)
        theirs = [v for v in g.units if v.kind == "num"] if g is not None else []
        if g is not None and mine and theirs and not any(_clause_has(span, g, n) for n in mine):
            where = span.text[g.start:g.end].strip()
            return Check("binding", False, f"证据“{where}”这里的数字是 {_shown(theirs)}，不是 {_shown(mine)}",
                         f"the evidence \"{where}\" says {_shown(theirs)} here, not {_shown(mine)}")
        nums = [u for u in mine if span.found(u)]
        named = [u for u in c.units + c.inherited if (u.kind == "term" or (u.kind == "word" and not s.zh))
                 and u.shown.lower() not in lex.UNITS]  # "hours" is the number's unit, not what it is said of
        for n in nums:
            homes_of = {m.key: [g for g in span.clauses if _clause_has(span, g, m)] for m in named}
            if any(any(_clause_has(span, g, n) for g in homes) for homes in homes_of.values()):
                continue  # one of the things the sentence names goes with this number: "RRF 中 k 通常取 60"
            for m in named:
                homes = homes_of[m.key]
                def values(g: Clause) -> list[Unit]:  # the numbers said in it; not a formula's: "max(0, x)"
                    return [v for v in g.units if v.kind == "num" and not span.depth[v.start]]

                with_numbers = [g for g in homes if values(g)]
                if not with_numbers or (m.kind == "word" and len(with_numbers) < len(homes)):
                    continue
                theirs = [v for g in with_numbers for v in values(g)]
                owner = [g for g in span.clauses if _clause_has(span, g, n)]
                said_of = [v for g in owner for v in g.units + g.inherited if v.kind == "term"] or \
                    [v for g in owner for v in g.units if v.kind != "num"][:2]
                about, about_en = _shown(said_of), _shown(said_of, ", ")
                return Check("binding", False,
                             f"证据中 {n.shown} 说的是 {about or '别的'}，不是 {m.shown}（{m.shown} 对应的是 {_shown(theirs)}）",
                             f"in the evidence {n.shown} is said of {about_en or 'something else'}, not of {m.shown} "
                             f"({m.shown} goes with {_shown(theirs, ', ')})")
    if any(u.kind == "num" for u in s.units) and any(v.kind == "num" for v in span.units):
        return Check("binding", True, "数字和它所说的对象在证据里在一起", "each number sits with what it is said of in the evidence")
    return None  # no number in the sentence, or none in the evidence: nothing to bind (the numbers check says so)


_WEIGHT = {"term": 2, "num": 2, "word": 1}  # a name or a number says more about where a clause belongs


def _best_clause(c: Clause, span: Reading) -> tuple[Clause | None, int]:
    """The span clause that shares the most with sentence clause `c`: names and numbers count double, and two
    units that follow each other in both ("重新 训练") once more; divided by the root of the clause's length."""
    units = c.units + c.inherited
    pairs = list(zip(c.units, c.units[1:]))
    best, score, count = None, 0.0, 0
    for g in span.clauses:
        hits = [u for u in units if _clause_has(span, g, u)]
        keys = [v.key for v in g.units]
        runs = sum(1 for a, b in pairs if any(x == a.key and y == b.key for x, y in zip(keys, keys[1:])))
        size = len(set(keys)) or 1
        n = (sum(_WEIGHT[u.kind] for u in hits) + runs) / size ** 0.5  # a long clause shares more by chance
        if n > score + 1e-9:
            best, score, count = g, n, len(hits)
    needed = 2 if len(units) > 2 else 1
    return (best, count) if count >= needed else (None, 0)


def _content_neighbours(r: Reading, unit: Unit) -> tuple[str | None, str | None]:
    """The content units right before and after `unit` in its text (None at either end)."""
    keys = [u for u in r.units if u.kind != "num"]
    for i, u in enumerate(keys):
        if u.start == unit.start:
            return (keys[i - 1].key if i else None, keys[i + 1].key if i + 1 < len(keys) else None)
    return None, None


def _aliases(whole: Reading, m: Unit, v: Unit) -> bool:
    """Does the chunk give one as the other's name in brackets: "双编码器（bi-encoder）", "MAE (mean absolute error)"?"""
    low = whole.low
    for x, y in ((m.key, v.key), (v.key, m.key)):
        i = low.find(x)
        while i >= 0:
            after = low[i + len(x): i + len(x) + 3].lstrip()
            if after[:1] in "（(" and y in low[i + len(x): i + len(x) + 40].split("）")[0].split(")")[0]:
                return True
            i = low.find(x, i + 1)
    return False


def _siblings(m: Unit, v: Unit, c: Clause, g: Clause, s: Reading, span: Reading, whole: Reading) -> bool:
    """Could `v` (in the span) stand where the sentence has `m`: two names, an opposite pair, two Chinese words
    with the same last character (three or more long: 编码器 / 解码器; two long with contrasting first ones:
    父块 / 子块), or two words that open clauses before the same head word, in the sentence and in the chunk."""
    if m.kind == "num" or v.kind == "num" or m.key == v.key or m.key in v.key or v.key in m.key:
        return False
    if _aliases(whole, m, v):
        return False
    if m.kind == "term" and v.kind == "term":
        return True
    if _opposites(m.key, v.key):
        return True
    cjk = not m.key.isascii() and not v.key.isascii()
    if cjk and len(m.key) == len(v.key) and m.key[-1] == v.key[-1] and (
            len(m.key) >= 3 or (m.key[0] in lex.CONTRAST_FIRST and v.key[0] in lex.CONTRAST_FIRST)):
        return True  # 编码器 / 解码器, 父块 / 子块, 上层 / 下层: one kind of thing, a different one
    _, head = _content_neighbours(s, m)  # 批量[梯度下降] / 随机[梯度下降]: two words of one script opening a
    _, theirs = _content_neighbours(span, v)  # clause before the same head, in the sentence and in the chunk
    if head is not None and head == theirs and _script(m.key) == _script(v.key) != "" \
            and all(_opens(r, x, head) for r, x in ((s, m.key), (whole, m.key), (span, v.key))):
        return True
    return _other_subject(m, v, c, g, span, whole)


def _opposites(x: str, y: str) -> bool:
    """Is (x, y) one of the lexicon's opposite pairs, either way round (增大 / 减小)?"""
    pairs = lex.OPPOSITES_ZH + lex.OPPOSITES_EN
    return (x, y) in pairs or (y, x) in pairs


def _topic(u: Unit, title: Reading | None) -> bool:
    """Is `u` the one name in the chunk's title (RRF in "RRF 是怎么计算的？")? A title that names two
    ("BatchNorm 和 LayerNorm 有什么区别？") is about the difference, so neither is exempt from the swap check."""
    if title is None or u.kind != "term":
        return False
    names = {v.key for v in title.units if v.kind == "term"}
    return names == {u.key}


def _script(word: str) -> str:
    if any("\u4e00" <= ch <= "\u9fff" for ch in word):
        return "zh"
    return "latin" if any(ch.isascii() and ch.isalpha() for ch in word) else ""


def _other_subject(m: Unit, v: Unit, c: Clause, g: Clause, span: Reading, whole: Reading) -> bool:
    """The span clause continues a sentence about `v` (BM25 …，擅长专有名词) where the sentence names `m`
    (向量检索擅长…), and `m` is the subject of a clause of its own elsewhere in the chunk, not in that sentence."""
    if not any(u.key == v.key for u in g.inherited):
        return False
    there = whole.low.find(span.text[g.start:g.end].lower())
    own = [(a, b) for a, b in sentence_spans(whole.text) if a <= max(there, 0) < b]
    a, b = own[0] if own else (0, 0)
    if m.key in whole.low[a:b]:
        return False
    return any(cl.units and cl.units[0].key == m.key and not (a <= cl.start < b) for cl in whole.clauses)


def _opens(r: Reading, word: str, head: str) -> bool:
    """Does some clause of `r` open with `word` followed by `head` (批量梯度…, 测试集…, "Dense search …"): a
    subject named by a modifier and a head, not a verb and its object ("…来模拟人类偏好")?"""
    for clause in r.clauses:
        keys = [u.key for u in clause.units if u.kind != "num"][:2]
        if keys == [word, head]:
            return True
    return False


def _swap(s: Reading, span: Reading, whole: Reading, evidence: Evidence, title: Reading | None) -> Check | None:
    """The span clause that says what the sentence clause says holds a sibling term where the sentence has
    its own term, and the chunk knows that term from elsewhere: it is said of something else. A name in the
    chunk's title is what the whole chunk is about, never a swap."""
    for c in s.clauses:
        best, _ = _best_clause(c, span)
        names = [u for u in c.units if u.kind == "term"]
        away = [u for u in names if best is None or not _clause_has(span, best, u)]  # said apart from its content
        homes = [g for u in away for g in span.clauses if _clause_has(span, g, u)]
        mine = c.units + c.inherited
        seen: list[Clause] = []
        for g in [best, *homes]:  # where the sentence's content is, and where its names are
            if g is None or any(g is h for h in seen):
                continue
            seen.append(g)
            found = _swapped(mine, g, s, c, span, whole, evidence, title, names_too=g is best)
            if found is not None:
                return found
        found = _subject_swap(c, span, whole, evidence)
        if found is not None:
            return found
    return _opener_swap(s, span, whole)


def _opener_swap(s: Reading, span: Reading, whole: Reading) -> Check | None:
    """The sentence opens with a word (过拟合) that a span sentence saying the rest lacks, and that span sentence opens
    with a sibling of it (欠拟合是指…，因此训练误差和测试误差都偏高): the span is about the other one."""
    own = [u for u in s.units if u.kind != "num"]
    if len(own) < 3:
        return None
    m = own[0]
    for a, b in sentence_spans(span.text):
        theirs = [u for u in span.units if a <= u.start < b and u.kind != "num"]
        if not theirs or any(_same(theirs[0], u) for u in own) or span.low.find(m.key, a, b) >= 0:
            continue  # that sentence names the sentence's subject itself
        v = theirs[0]
        shared = sum(1 for u in own[1:] if span.low.find(u.key, a, b) >= 0)
        cjk = not m.key.isascii() and not v.key.isascii()
        sibling = (cjk and len(m.key) == len(v.key) >= 3 and m.key[-1] == v.key[-1]) or _opposites(m.key, v.key)
        if sibling and shared >= (len(own) - 1) / 2 and not _aliases(whole, m, v):
            where = span.text[a:b].strip()
            return Check("swap", False, f"证据“{where}”说的是 {v.shown}，不是 {m.shown}",
                         f"the evidence \"{where}\" says this of {v.shown}, not of {m.shown}")
    return None


def _subject_swap(c: Clause, span: Reading, whole: Reading, evidence: Evidence) -> Check | None:
    own = [u for u in c.units if u.kind != "num"]
    if len(own) < 3:
        return None
    m, nxt = own[0], own[1]
    if any(_clause_has(span, g, m) and _clause_has(span, g, nxt) for g in span.clauses):
        return None
    if not span.found(m):
        return None
    found = None
    for g in span.clauses:
        theirs = [u for u in g.units if u.kind != "num"]
        if len(theirs) < 2 or not _same(theirs[1], nxt) or _clause_has(span, g, m):
            continue
        v = theirs[0]
        if any(_same(v, u) or v.key == u.key for u in own) or v.key in lex.GENERIC_ZH:
            continue
        if m.kind != v.kind or _script(m.key) != _script(v.key) or _aliases(whole, m, v):
            continue
        if len(theirs) > 2 and not any(_clause_has(span, g, u) for u in own[2:]):
            continue  # the span clause goes on to say something else ("上层节点稀疏" vs "下层节点稠密")
        shared = sum(_clause_has(span, g, u) for u in own[1:])
        if found is None or shared > found[0]:
            found = (shared, g, v)
    if found is None:
        return None
    _, g, v = found
    where = span.text[g.start:g.end].strip()
    return Check("swap", False, f"证据“{where}”说的是 {v.shown}，不是 {m.shown}",
                 f"the evidence \"{where}\" says this of {v.shown}, not of {m.shown}")


def _swapped(mine: list[Unit], g: Clause, s: Reading, c: Clause, span: Reading, whole: Reading,
             evidence: Evidence, title: Reading | None, names_too: bool = True) -> Check | None:
    """A sibling of a unit of the sentence clause in span clause `g`; `names_too=False` (a clause found only
    because it holds one of the sentence's names) leaves out name-for-name swaps, which the best clause checks."""
    missing = [u for u in mine if u.kind != "num" and not _clause_has(span, g, u) and not _topic(u, title)]
    extra = [v for v in g.units + g.inherited if v.kind != "num" and not any(_same(v, u) for u in mine)]
    rest = whole.low[: evidence.start + g.start] + " " + whole.low[evidence.start + g.end:]
    for m in missing:
        known = (m.key in read(rest).stems) if m.key.isascii() else (m.key in rest)
        if not known:
            continue
        for v in extra:
            if not names_too and m.kind == "term" and v.kind == "term":
                continue
            if _siblings(m, v, c, g, s, span, whole):
                where = span.text[g.start:g.end].strip()
                return Check("swap", False, f"证据“{where}”说的是 {v.shown}，不是 {m.shown}",
                             f"the evidence \"{where}\" says this of {v.shown}, not of {m.shown}")
    return None


def _has_word(r: Reading, a: int, b: int, word: str) -> bool:
    if word.isascii():
        return any(t == word or t.rstrip("s") == word for t in r.tokens_in(a, b))
    if len(word) == 1:  # 快 / 慢: the token itself, or a degree word made with it (越慢, 更快, 太大)
        return any(t == word or (len(t) <= 3 and t.endswith(word) and t[0] in "越更太很较过最偏") for t in r.tokens_in(a, b))
    return word in r.low[a:b]


def _polarity(s: Reading, span: Reading) -> Check | None:
    """Each group of aligned clauses holds as many negations on either side (counting only a negation whose
    object is on the other side too: "没见过的验证集" paraphrased without 没见过 is not a contradiction), and no
    opposite pair differs between a sentence clause and a span clause aligned with it."""
    edges: dict[int, set[int]] = {}
    for i, c in enumerate(s.clauses):
        g, count = _best_clause(c, span)
        if g is None:
            continue
        shared = [sum(_clause_has(span, h, u) for u in c.units) for h in span.clauses]
        edges[i] = {j for j, h in enumerate(span.clauses) if h is g or shared[j] >= max(2, count)}
        closest = [span.clauses[j] for j in sorted(edges[i])]
        for h in closest:  # "位于检索召回之后、大模型生成之前": both halves are as close
            for a, b in lex.OPPOSITES_ZH + lex.OPPOSITES_EN:
                for x, y in ((a, b), (b, a)):
                    if (_has_word(s, c.start, c.end, x) and not _has_word(s, c.start, c.end, y)
                            and _has_word(span, h.start, h.end, y) and not _has_word(span, h.start, h.end, x)):
                        return Check("polarity", False, f"句子说“{x}”，证据说“{y}”",
                                     f"the sentence says \"{x}\" where the evidence says \"{y}\"")
        opposite = _opposite_near(s, c, span)
        if opposite is not None:
            return opposite
    groups: list[tuple[set[int], set[int]]] = []  # (sentence clauses, span clauses) joined by alignment
    for i, js in edges.items():
        merged = [grp for grp in groups if grp[1] & js]
        new = ({i} | set().union(*(g[0] for g in merged)), set(js).union(*(g[1] for g in merged)))
        groups = [grp for grp in groups if grp not in merged] + [new]
    for mine, theirs in groups:
        ours_text = " ".join(s.text[s.clauses[i].start:s.clauses[i].end] for i in mine)
        evid_text = " ".join(span.text[span.clauses[j].start:span.clauses[j].end] for j in theirs)
        ours = [t for i in mine for t, scope in s.negations(s.clauses[i].start, s.clauses[i].end)
                if _in_scope(scope, read(evid_text))]
        evid = [t for j in theirs for t, scope in span.negations(span.clauses[j].start, span.clauses[j].end)
                if _in_scope(scope, read(ours_text))]
        if len(ours) != len(evid):
            if evid:
                return Check("polarity", False, f"证据这里有否定（{'、'.join(evid)}），句子没有",
                             f"the evidence negates this ({', '.join(evid)}) and the sentence does not")
            return Check("polarity", False, f"句子有否定（{'、'.join(ours)}），证据这里没有",
                         f"the sentence negates this ({', '.join(ours)}) and the evidence does not")
    if edges:
        return Check("polarity", True, "否定和反义词与证据一致", "negations and opposites agree with the evidence")
    return None


def _opposite_near(s: Reading, c: Clause, span: Reading) -> Check | None:
    """The sentence says x, the span never does, and says x's opposite in a clause that shares a content unit
    with the sentence's clause ("要乘以 d_k" against "除以 √d_k 防止数值过大")."""
    for a, b in lex.OPPOSITES_ZH + lex.OPPOSITES_EN:
        for x, y in ((a, b), (b, a)):
            if not _has_word(s, c.start, c.end, x) or _has_word(s, 0, len(s.text), y) \
                    or _has_word(span, 0, len(span.text), x):
                continue
            for h in span.clauses:
                if _has_word(span, h.start, h.end, y) and any(_clause_has(span, h, u) for u in c.units
                                                               if u.kind != "num" and u.key not in (x, y)):
                    return Check("polarity", False, f"句子说“{x}”，证据说“{y}”",
                                 f"the sentence says \"{x}\" where the evidence says \"{y}\"")
    return None


def _in_scope(scope: list[str], other: Reading) -> bool:
    """A negation counts when what it negates is also on the other side (or it negates nothing named)."""
    if not scope:
        return True
    return any((k in other.stems) if k.isascii() else (k in other.low) for k in scope if k)


def _new_terms(s: Reading, whole: Reading) -> Check | None:
    new = [u for u in s.units if u.kind == "term" and not whole.found(u)]
    if not new:
        return None
    return Check("new-term", False, f"资料里没有提到 {_shown(new)}", f"the chunk never mentions {_shown(new, ', ')}")


def _apart(s: Reading, span: Reading, whole: Reading, evidence: Evidence, title: Reading | None) -> Check | None:
    """A name the sentence says something of, where the chunk names it only apart from what is said: "k=60 是 BM25
    的平滑常数" against "k 是平滑常数，通常取 60。例如某文档在 BM25 中排第 1" stitches the chunk's words into a claim
    it never makes. A name goes with what is said when it is in the same sentence of the chunk, or opens an earlier
    sentence (the subject the chunk goes on about: "HNSW 是… 。参数 M 控制…"), or is in the chunk's title."""
    cuts = sentence_spans(whole.text)
    head = whole.text.split("\n", 1)[0] if "\n" in whole.text.strip() else ""
    titles = [r for r in (title, read(head) if asks(head) else None) if r is not None]

    def sentence_of(pos: int) -> int:
        return next((i for i, (a, b) in enumerate(cuts) if a <= pos < b), -1)

    openers: dict[int, Unit] = {}  # sentence of the chunk -> the content unit it opens with
    for v in whole.units:
        if v.kind != "num":
            openers.setdefault(sentence_of(v.start), v)
    for c in s.clauses:
        g, _ = _best_clause(c, span)
        if g is None:
            continue
        here = sentence_of(evidence.start + g.start)
        for u in c.units:
            if u.kind != "term" or _clause_has(span, g, u) or not whole.found(u) or any(t.found(u) for t in titles):
                continue
            homes = {sentence_of(v.start) for v in whole.units if _same(u, v)}
            if here in homes or any(i < here and i in openers and _same(u, openers[i]) for i in homes):
                continue
            said = span.text[g.start:g.end].strip()
            return Check("apart", False, f"证据在“{said}”里没有提到 {u.shown}：资料没有把它们放在一起说",
                         f"the evidence says \"{said}\" without {u.shown}: the chunk never says the two together")
    return None


def restates_question(claim: str, question: str) -> bool:
    """Is `claim` a question, or are all its content words the question's own (brackets that only gloss aside)?
    Stricter than the audit's restates check, which also allows one new word ("RRF 是一种融合方法" is labelled a
    restatement but kept by this): the answer page sets aside what this says, so it must be sure. To a yes/no
    question a restatement is the answer ("是的，向量归一化后，点积和 cosine 是一回事。" to "…是一回事吗"), and a reply
    with no content word at all ("是的。") is left to the audit."""
    s, question = read(fold_script(claim)), fold_script(question)  # either may be written in traditional
    if not s.units or not question.strip() or yes_no(question):
        return False
    return asks(s.text) or not _own_units(s, question)


_YES_NO = re.compile(r"[吗嘛][\s？?。]*$|是否|是不是|能不能|可不可以|会不会|有没有|要不要|需不需要|对不对|^\s*(is|are|can|could|does|do|"
                     r"did|should|will|would|was|were|has|have|may)\b", re.IGNORECASE)


def yes_no(question: str) -> bool:
    """Does the question ask yes or no ("…是一回事吗", "可不可以…", "Is …?")? Its caller reads a traditional question
    as simplified first (restates_question)."""
    return bool(_YES_NO.search(question.strip()))


def _own_units(s: Reading, question: str) -> list[Unit]:
    """The sentence's content units the question does not hold, generic words and glosses in brackets aside."""
    q = read(question)
    return [u for u in s.units if not q.found(u) and not _all_generic(u.key) and not s.depth[u.start]]


def _restates(s: Reading, question: str) -> Check | None:
    """Every content unit of the sentence is the question's, but at most one new word: it states no fact. A word in
    brackets only glosses the one before it ("RRF（Reciprocal Rank Fusion，倒数排名融合）"): "RRF 是通过 RRF（…）来计算的"
    names RRF's full name and says nothing of how it is computed. A question asks, it states nothing."""
    if asks(s.text):
        return Check("restates", False, "这句是问句，没有陈述事实", "it is a question: it states no fact")
    if not question.strip():
        return None
    own = _own_units(s, question)
    shared = len(s.units) - len(own)
    restated = not own or (len(own) == 1 and own[0].kind == "word" and shared >= len(s.units) / 2)
    if not restated:
        return Check("restates", True, "这句话说出了问题之外的内容", "the sentence says more than the question")
    return Check("restates", False, "这句话只是在复述问题，没有陈述事实", "the sentence only restates the question: it states no fact")


def _adds(s: Reading, span: Reading, title: Reading | None, question: str, checker: Checker
          ) -> tuple[Check | None, float]:
    """How much of what the sentence says beyond the question the span covers, as a check, and that share (1.0, and
    no check, without a question or with nothing beyond it). The question's own words are in any chunk on its topic,
    so they lift the coverage of a sentence whatever it answers: "RRF 属于混合检索中的分数加权融合方法。" to "RRF 属于
    混合检索中的哪一类融合方法？" covers 71% of its words with faq_030, which never says 加权, the word that answers (RRF
    fuses by rank). The share is read against the same thresholds as the coverage (weak, unsupported below them);
    no new threshold. The question's words still count in the coverage: they are part of what the sentence claims."""
    own = _own_units(s, question) if question.strip() and checker.beyond_question else []
    if not own:
        return None, 1.0
    credit = [_unit_credit(u, span, title) for u in own]
    share = sum(credit) / len(own)
    if share >= checker.supported_coverage:
        return Check("adds", True, f"这句话在问题之外说的内容，证据覆盖了 {share:.0%}",
                     f"the evidence covers {share:.0%} of what the sentence says beyond the question"), share
    missing = [u for u, c in zip(own, credit) if c < 1.0]
    return Check("adds", False, f"这句话说了 {_shown(missing)}，证据里没有（问题之外的内容只覆盖了 {share:.0%}）",
                 f"the sentence says {_shown(missing, ', ')}, which the evidence does not (it covers {share:.0%} of what the "
                 "sentence adds to the question)"), share


def _all_generic(word: str) -> bool:
    """"值来" (jieba's cut of 值来计算): every character a generic word or a stop word: no information."""
    stop = load_stopwords()
    return not word.isascii() and all(ch in lex.GENERIC_ZH or ch in stop for ch in word)


def _cosine(embedder, claim: str, span: str) -> float | None:
    a = np.asarray(embedder.embed_transient([claim]), dtype=np.float32)[0]
    b = np.asarray(embedder.embed_documents([span]), dtype=np.float32)[0]
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b / norm) if norm else None


# ---------------------------------------------------------------------------------- second opinion

OPINION = {
    "zh": ("你核对一句话有没有证据支持，只回答“是”或“否”。",
           "证据：{e}\n\n句子：{s}\n\n这句话里的每个事实（数字、说的是谁、肯定还是否定）都和证据一致吗？只回答“是”或“否”。"),
    "en": ("You check whether a sentence is backed by its evidence. Answer only yes or no.",
           "Evidence: {e}\n\nSentence: {s}\n\nDoes every fact in the sentence (numbers, what it is said of, yes or no) "
           "agree with the evidence? Answer only yes or no."),
}
CONTENT_FREE = "N/A"


def opinion_messages(sentence: str, evidence: str, lang: str) -> list[dict]:
    """The second opinion's prompt: one sentence and one evidence span, nothing else (short, so a small model
    reads all of it, and the system prompt stays in llama.cpp's KV cache from one sentence to the next)."""
    system, user = OPINION[lang if lang in OPINION else "en"]
    return [{"role": "system", "content": system}, {"role": "user", "content": user.format(e=evidence, s=sentence)}]


def model_opinion(chat, calibrate: bool = False, control=None) -> Opinion:
    """An Opinion backed by `chat`: its yes/no Verdict (rag/models/yes_no.py) on the sentence and its span.

    `calibrate` divides by the model's verdict on a content-free sentence over the same span (Zhao et al.
    2021). Whether either reading helps was measured (bench/bench_audit.py) before any default used it.
    `control` (a RunControl) queues, stops and times each question like any other model call."""
    from rag.models.yes_no import ask_yes_no

    def ask(sentence: str, evidence: str, lang: str):
        null = [opinion_messages(CONTENT_FREE, evidence, lang)] if calibrate else None
        return ask_yes_no(chat, opinion_messages(sentence, evidence, lang), lang,
                          say("does the evidence span support the sentence?", "证据片段支持这句话吗？"), default=True,
                          null=null, control=control)

    return ask

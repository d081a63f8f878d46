"""Is a sentence supported by a chunk? Align it to the chunk's evidence span, then check the facts against that span.

    sentence + chunk(s)
      -> align: the chunk sentence, or two adjacent sentences, that covers the sentence's content best
         = the evidence span (shown beside the sentence, the shared words highlighted)
      -> checks against the span: the RULES below, each a module of checks/ that reports under its own file's name
         and reads one `Claim` (the sentence, its span and chunk, the question), each with its reason in Chinese and
         English:
           numbers     every number, range bound, percentage and year of the sentence is in the span, with its unit
           new-number  a number the span has nothing against (none there, or only an assigned one): unsupported,
                       not contradicted
           quantity    a number goes with the thing it measures (32 位浮点数, 8 位整数)
           binding     a number and the term it is said of sit together (b's 0.75 is not k1's 1.2 到 2.0)
           swap        the span says the same thing of a sibling term (L1 for L2, 验证集 for 测试集)
           scope       the chunk says it under another condition (在训练集上 for 在测试集上)
           polarity    negations agree clause by clause, and no opposite pair differs (增大/减小, 乘以/除以)
           new-term    a name or identifier the chunk never mentions (Google, GPU)
           apart       a name the chunk mentions only away from what the sentence says of it
           bare        a phrase with no predicate, given where the chunk does not speak of what the question asks
           restates    every content word is the question's own: the sentence states no fact
           coverage    the share of the sentence's content units found in the span
           adds        the same share over what the sentence says beyond the question (its words the question
                       lacks): the question's own words are in any chunk on its topic
           no-claim    a question inside the sentence, or no predicate at all (a noun phrase): it asserts nothing
         Decided before them: a copy of the chunk's own words or question (verbatim.py), an echo of the prompt
         (echo.py).
      -> label: contradicted (a fact check failed on a span that covers the sentence at least weakly) |
         restates-question | unsupported (coverage, or what it adds, below WEAK_COVERAGE; a new term, a new number, a
         name apart or a bare phrase off the question) | weak
         (below SUPPORTED_COVERAGE) | supported
      -> optional second opinion: a model's yes/no on the sentence and the span alone (its P(yes) kept);
         see `checks/opinion.py` for what it does to the label.
      -> the learned verifier (the answer's audit, where a Chinese question is given: what it was trained on): a model over
         these checks and where the sentence's new words sit against the question's subject, learned from public
         question answering (verifier.py); a "supported" it gives less than its operating point is "weak".

The old audit asked how many of the sentence's words occur anywhere in the chunk, so a sentence that
reused the chunk's words to say something false ("RRF 的 k 通常取 10" against "通常取 60") passed.
Here the words must come from one place, the numbers must be the span's, and the span must not say the
same thing of something else. Thresholds were chosen on the dev half of data/support_pairs.jsonl and are
reported on its test half (docs/audit.md, "An audit that catches wrong facts"; bench/bench_audit.py).
These are rules over words, not an entailment model: see fact_lexicon.py for what they cannot catch.
Script: the sentence, the question and each chunk are read as simplified (`as_read`), so a sentence and a chunk in
different scripts are checked on the same words; the evidence is shown as written.
Not handled here: the checks themselves (checks/), finding the citations (citations.py), the no-RAG answer's search
for support (grounding.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

import numpy as np

from rag.audit.checks import (
    adds,
    apart,
    bare,
    binding,
    coverage,
    echo,
    new_number,
    new_term,
    no_claim,
    numbers,
    polarity,
    quantity,
    restates,
    scope,
    swap,
    verbatim,
)
from rag.audit.checks import opinion as opinion_check
from rag.audit.checks import units as units_check
from rag.audit.checks.opinion import Opinion
from rag.audit.checks.verdict import Check, Claim, Evidence, Rule
from rag.audit.fact_text import Reading, read, soft_break
from rag.ingest.language import detect_lang
from rag.ingest.sentences import sentence_spans
from rag.models.script import fold_script

if TYPE_CHECKING:
    from rag.models.yes_no import Verdict

SUPPORTED_COVERAGE = 0.6  # chosen on the dev half of data/support_pairs.jsonl (bench/bench_audit.py)
WEAK_COVERAGE = 0.4  # below this the span does not cover the sentence: unsupported
PAIR_PENALTY = 0.05  # two adjacent sentences are the span only when they cover this much more than one
LABELS = ("supported", "weak", "unsupported", "contradicted", "restates-question")
# The checks, in the order they run on a sentence and its span: each a module of checks/ whose NAME is its file's name.
RULES: tuple[Rule, ...] = (numbers, new_number, quantity, binding, swap, scope, polarity, new_term, apart, bare,
                           restates, coverage, adds, no_claim)
FACT_CHECKS = ("numbers", "quantity", "binding", "swap", "scope", "polarity")  # a failure of one of these: contradicted
_RANK = {"supported": 4, "weak": 3, "contradicted": 2, "restates-question": 1, "unsupported": 0}


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


class Verifier(Protocol):
    """What the audit asks of a learned verifier (rag/audit/verifier.py LearnedVerifier): its check of a sentence the
    rules call supported, failed where it doubts it."""

    def check(self, sentence: str, chunk: str, question: str, support: Support) -> Check: ...


@dataclass(frozen=True)
class Checker:
    """The settings of one audit: the embedder for the cosine column, the optional model opinion and verifier."""

    embedder: object | None = None
    opinion: Opinion | None = None
    doubt_below: float = 0.5  # a model P(yes) below this turns a heuristic "supported" into "weak"
    supported_coverage: float = SUPPORTED_COVERAGE
    weak_coverage: float = WEAK_COVERAGE
    beyond_question: bool = True  # read what the sentence adds to the question (checks/adds.py); rebind.py does not
    verifier: Verifier | None = None  # the answer's audit passes verifier.learned_verifier()

    def check(self, sentence: str, chunks: Mapping[str, str], question: str = "", instructions: str = "") -> Support:
        """The best support `sentence` finds among `chunks` (ref -> text): see the module docstring."""
        return check_sentence(sentence, chunks, question, self, instructions)


def check_sentence(sentence: str, chunks: Mapping[str, str], question: str = "",
                   checker: Checker | None = None, instructions: str = "") -> Support:
    """The best Support for `sentence` over `chunks`: highest label, then highest coverage, first chunk on ties.
    `instructions`: the prompt's rules, so a sentence that only repeats them is not taken for content."""
    checker = checker or Checker()
    claim = (sentence or "").strip()
    body = as_read(restates.strip_lead_in(claim))  # "根据资料，…": the lead-in is no content; what follows it is checked
    if not body:
        return Support(claim, "restates-question", None, (restates.LEAD_IN_ONLY,))
    question = as_read(question)
    s = read(body)
    lang = "zh" if s.zh else "en"
    if not s.units:
        return Support(claim, "unsupported", None, (coverage.NO_CONTENT,))
    echoed = echo.echoes(s, question, instructions)
    if echoed is not None:
        return Support(claim, "restates-question", None, (echoed,))
    candidates = [_judge(s, body, ref, as_read(text), question, checker) for ref, text in chunks.items() if text]
    if not candidates:
        return Support(claim, "unsupported", None, (coverage.NO_CHUNK,))
    best = max(candidates, key=lambda c: (_RANK[c.label], c.coverage, -candidates.index(c)))
    return _second_looks(_as_written(best, claim, chunks, checker), chunks, question, checker, lang)


def _as_written(best: Support, claim: str, chunks: Mapping[str, str], checker: Checker) -> Support:
    """`best` with its evidence as the chunk writes it (found in the chunk as read: as_read moved no character) and the
    cosine of the sentence and its evidence, where the checker has an embedder."""
    ev = best.evidence
    evidence = replace(ev, text=chunks[ev.ref][ev.start:ev.end]) if ev is not None else None
    cosine = _cosine(checker.embedder, claim, evidence.text) if checker.embedder and evidence else None
    return Support(claim, best.label, evidence, best.checks, best.coverage, cosine, heuristic_label=best.label)


def _second_looks(best: Support, chunks: Mapping[str, str], question: str, checker: Checker, lang: str) -> Support:
    """A supported sentence looked at again: by the model's second opinion, then by the learned verifier (Chinese
    questions), where the checker has them; either may turn it weak."""
    if checker.opinion is not None and best.label == "supported" and best.evidence is not None:
        best = _with_opinion(best, checker, lang)
    if checker.verifier is not None and best.label == "supported" and best.evidence is not None and verifies(question):
        best = _verified(best, chunks[best.evidence.ref], question, checker.verifier)
    return best


def _with_opinion(best: Support, checker: Checker, lang: str) -> Support:
    """`best` (labelled supported, with evidence) with the model's second opinion: "weak" where it doubts."""
    assert checker.opinion is not None and best.evidence is not None
    verdict = checker.opinion(best.sentence, best.evidence.text, lang)
    check = opinion_check.check(verdict, checker.doubt_below)
    return Support(best.sentence, best.label if check.passed else "weak", best.evidence, best.checks + (check,),
                   best.coverage, best.cosine, verdict, best.label)


def verifies(question: str) -> bool:
    """Does a learned verifier look at the answers to `question`? Where one is given and Chinese: the claims it learned
    from answer Chinese questions (the pipeline names it among what ran by the same test)."""
    return bool(question) and detect_lang(question) == "zh"


def _verified(best: Support, chunk: str, question: str, verifier: Verifier) -> Support:
    """`best` (labelled supported) with the learned verifier's check: "weak" where it gives less than its point."""
    check = verifier.check(best.sentence, chunk, question, best)
    return replace(best, label=best.label if check.passed else "weak", checks=best.checks + (check,))


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
    singles = [(a, b) for a, b in sentence_spans(joined, semicolons=False) if not units_check.asks(chunk[a:b])]
    pairs = [(a, d, 2) for (a, _), (_, d) in zip(singles, singles[1:])]
    return [(a, b, 1) for a, b in singles] + pairs


def align(s: Reading, ref: str, chunk: str) -> tuple[Evidence, float]:
    """The span of `chunk` that covers sentence `s` best (a pair of sentences pays PAIR_PENALTY), and its
    coverage."""
    spans = evidence_spans(chunk) or [(0, len(chunk), 1)]
    title = title_of(chunk)
    best = (float("-inf"), 0.0, 0, len(chunk))
    for a, b, n in spans:
        cov = units_check.coverage(s, read(chunk[a:b]), title)
        score = cov - PAIR_PENALTY * (n - 1)
        if score > best[0] + 1e-9:
            best = (score, cov, a, b)
    _, cov, a, b = best
    span = read(chunk[a:b])
    matched = tuple((u.start, u.end) for u in span.units if any(units_check.same_unit(u, v) for v in s.units))
    return Evidence(ref, chunk[a:b], a, b, matched), cov


def title_of(chunk: str) -> Reading | None:
    """The chunk's first sentence (an FAQ entry's question, a section's heading): what the chunk is about."""
    first = sentence_spans(chunk)[:1]
    return read(chunk[first[0][0]:first[0][1]]) if first else None


# ------------------------------------------------------------------------------------------ checks

def _judge(s: Reading, claim: str, ref: str, chunk: str, question: str, checker: Checker) -> Support:
    """Sentence `s` (`claim` as checked) against one chunk: aligned to its span, then every rule of RULES in order,
    and labelled from what failed. A copy of the chunk's own question, or of the chunk itself, is decided first."""
    evidence, cov = align(s, ref, chunk)
    asked = [chunk[a:b] for a, b in sentence_spans(chunk) if units_check.asks(chunk[a:b])]
    if any(verbatim.copied_from(claim, q) for q in asked):  # the chunk's own question (an FAQ title), copied
        return Support(claim, "restates-question", evidence, (restates.COPIED_QUESTION,), cov)
    if verbatim.copied_from(claim, chunk):  # the chunk's very words: no rule over words can find it wrong
        restated = restates.restates(s, question)
        copied = (verbatim.VERBATIM,) + ((restated,) if restated is not None and not restated.passed else ())
        return Support(claim, "restates-question" if len(copied) > 1 else "supported", evidence, copied, max(cov, 1.0))
    at = Claim(claim, s, chunk, read(chunk), evidence, read(evidence.text), title_of(chunk), question, cov,
               checker.supported_coverage, checker.beyond_question)
    checks = tuple(c for rule in RULES if (c := rule.check(at)) is not None)
    return Support(claim, _label(checks, cov, adds.share(at), checker), evidence, checks, cov)


def _label(checks: tuple[Check, ...], cov: float, added: float, checker: Checker) -> str:
    """The sentence's label from its failed checks, its coverage and the share of what it adds that the span holds."""
    failed = {c.name for c in checks if not c.passed}
    if failed & set(FACT_CHECKS) and cov >= checker.weak_coverage:  # a contradiction of a span about something else
        return "contradicted"                                         # is no contradiction: that is "unsupported"
    if "restates" in failed or "no-claim" in failed:
        return "restates-question"
    if failed & {"new-term", "new-number", "apart", "bare"} or min(cov, added) < checker.weak_coverage:
        return "unsupported"
    if min(cov, added) < checker.supported_coverage:
        return "weak"
    return "supported"


def _cosine(embedder, claim: str, span: str) -> float | None:
    """cos(sentence, evidence span) under the index's embedder: the audit table's cosine column."""
    a = np.asarray(embedder.embed_transient([claim]), dtype=np.float32)[0]
    b = np.asarray(embedder.embed_documents([span]), dtype=np.float32)[0]
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(a @ b / norm) if norm else None

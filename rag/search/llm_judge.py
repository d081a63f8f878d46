"""An LLM as a pointwise relevance judge: the offline model-based reranker (not a cross-encoder).

For each (question, candidate) the bundled local model reads a judging prompt and the reranker reads, instead
of a generated answer, the probabilities of its first token: score = P(yes) / (P(yes) + P(no)), summed over
"yes"/"Yes" (or 是, for a Chinese question with the Chinese prompt). LLM rerankers such as Qwen3-Reranker
and bge-reranker-v2-gemma score this way. The question comes before the passage, so the prompt's start is
shared by every candidate and llama.cpp keeps it in its KV cache: each candidate costs its own tokens.

Candidates are judged in retrieval order until `budget_s` seconds have passed; the rest get NaN ("not
judged"), which rerank() ranks after every judged one, in their retrieval order, and reports ("judged 12 of
20"). Passages are cut to `max_chars` characters so one long chunk cannot eat the budget.
Measured in docs/loops.md ("LLM judge vs fallback vs none"); the prompts were written once, not tuned on a set.
Not handled here: loading the model (rag/models/local_llm.py), sorting and recording moves (rerank.py).
"""

from __future__ import annotations

import math
import threading
import time
from typing import Sequence

import numpy as np

from rag import config
from rag.errors import GenerationCancelled, LLMError, ModelUnavailableError
from rag.ingest.language import detect_lang
from rag.messages import Msg
from rag.models.control import RunControl

NAME = "llm-judge"
MAX_CHARS = 600

PROMPTS = {
    "zh": ("你是检索结果的评审，只回答“是”或“否”。",
           "问题：{q}\n\n段落：{p}\n\n这段话回答了这个问题吗？只回答“是”或“否”。", (["是"], ["否"])),
    "en": ("You judge search results. Answer only yes or no.",
           "Question: {q}\n\nPassage: {p}\n\nDoes the passage answer the question? Answer yes or no.",
           (["Yes", "yes"], ["No", "no"])),
}


def default_budget() -> float:
    return config.value("RAG_JUDGE_BUDGET_S")


class LLMJudgeReranker:
    name = NAME
    is_fallback = False  # a real model, but labelled as a judge, not a cross-encoder
    reads_index = False

    def __init__(self, chat, budget_s: float | None = None, max_chars: int = MAX_CHARS):
        if chat is None or not chat.supports_logprobs:
            raise ModelUnavailableError(Msg(en="the LLM judge needs the bundled local model (it reads next-token "
                                            "probabilities, which an OpenAI-compatible endpoint does not give here)",
                                            zh="LLM 评委需要随附的本地模型（它读下一个词的概率，OpenAI 兼容接口在这里给不出）"))
        self.chat = chat
        self.budget_s = default_budget() if budget_s is None else float(budget_s)
        self.max_chars = int(max_chars)
        self.label = Msg(en=f"LLM judge ({chat.label}): P(yes) after a judging prompt, pointwise; not a cross-encoder; "
                         f"judges candidates for up to {self.budget_s:g} s per query",
                         zh=f"LLM 评委 LLM judge（{chat.label}）：判断提示词之后的 P(是)，逐个打分；不是交叉编码器；每个问题最多评 "
                         f"{self.budget_s:g} 秒")
        self._totals = [0, 0.0, 0]  # pairs judged, seconds judging, candidates offered (all calls, for reports)
        self._totals_lock = threading.Lock()

    @property
    def totals(self) -> dict[str, float]:
        """Over every call so far: pairs judged, seconds per pair, share of the candidates reached."""
        with self._totals_lock:
            pairs, seconds, offered = self._totals
        return {"pairs": pairs, "seconds_per_pair": seconds / pairs if pairs else 0.0,
                "reached": pairs / offered if offered else 0.0}

    def judge(self, query: str, text: str, lang: str | None = None, control: RunControl | None = None) -> float:
        """P(yes) for one passage; `lang` (zh or en) picks the prompt, from the question when not given."""
        lang = lang or ("zh" if detect_lang(query) == "zh" else "en")
        system, user, (yes, no) = PROMPTS[lang]
        messages = [{"role": "system", "content": system},
                    {"role": "user", "content": user.format(q=query, p=text[: self.max_chars])}]
        lp = self.chat.next_token_logprobs(messages, yes + no, control=control)
        y = math.log(sum(math.exp(lp[t]) for t in yes))
        n = math.log(sum(math.exp(lp[t]) for t in no))
        return 1.0 / (1.0 + math.exp(n - y))

    def score(self, query: str, texts: Sequence[str], control: RunControl | None = None) -> np.ndarray:
        """P(yes) per candidate, NaN for the candidates the time budget did not reach or that failed.

        The budget counts the seconds spent holding the model, not the seconds queued behind another
        session (control.stats["waited_s"]); a candidate that fails is left unjudged and the failure is
        said through `control` (it becomes the rerank's note), not swallowed."""
        control = control if control is not None else RunControl()
        out = np.full(len(texts), np.nan)
        lang = "zh" if detect_lang(query) == "zh" else "en"  # one prompt language for all of a query's passages
        t0, waited0 = time.perf_counter(), control.stats.get("waited_s", 0.0)
        failed: list[str] = []
        for i, text in enumerate(texts):
            held = time.perf_counter() - t0 - (control.stats.get("waited_s", 0.0) - waited0)
            if i and held >= self.budget_s:
                break
            try:
                out[i] = self.judge(query, text, lang, control)
            except GenerationCancelled:
                raise
            except LLMError as exc:  # e.g. a passage that does not fit the window: not judged, not fatal, said
                failed.append(str(exc))
        if failed:
            control.note(Msg(en=f"the LLM judge could not judge {len(failed)} of {len(texts)} candidates ({failed[0]})",
                             zh=f"LLM 评委没能评 {len(texts)} 个候选中的 {len(failed)} 个（{failed[0]}）"))
        with self._totals_lock:
            self._totals[0] += int((~np.isnan(out)).sum())
            self._totals[1] += time.perf_counter() - t0
            self._totals[2] += len(texts)
        return out

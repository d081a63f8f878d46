"""A chat backend for tests that implements the whole ChatBackend interface (rag/models/llm.py), answering as
the test says: `reply(messages, grammar) -> text` for generations, `verdict(messages) -> P(yes)` for yes/no
questions, `score(messages, reply) -> [log-probability per token]` for a given reply (none: it cannot score
one). Every call is recorded with its messages, grammar and arguments, and it honours a RunControl the way the
real backends do: a stopped control raises GenerationCancelled before the call, and a call may be held at a `gate`
(a threading.Event) so a test can force an interleaving instead of sleeping.

It stands in for the model, never for the code under test.
"""

from __future__ import annotations

import math
import threading

from rag.errors import LLMUnsupportedError

YES = {"是", "Yes", "yes", "B"}


class FakeChat:
    name = "fake"

    def __init__(self, reply=lambda messages, grammar: "", verdict=None, *, grammar: bool = True,
                 logprobs: bool = True, label: str = "fake chat (test)", gate: threading.Event | None = None,
                 score=None):
        self.reply, self.verdict, self.score = reply, verdict or (lambda messages: 0.5), score
        self.supports_grammar, self.supports_logprobs, self.label = grammar, logprobs, label
        self.gate = gate
        self.started = threading.Event()  # set when a call has begun (and is waiting at the gate, if any)
        self.calls: list[dict] = []
        self.prompt_budget = None

    def count_tokens(self, messages):
        return None

    def _enter(self, control):
        if control is not None:
            control.check(f"{self.label}: the call")
        self.started.set()
        if self.gate is not None:
            while not self.gate.wait(0.01):
                if control is not None and control.stopped:
                    control.check(f"{self.label}: the call")

    def complete(self, messages, *, stream=False, temperature=None, max_tokens=None, grammar=None, control=None):
        self.calls.append({"kind": "complete", "messages": messages, "grammar": grammar, "max_tokens": max_tokens,
                           "temperature": temperature, "control": control})
        self._enter(control)
        if grammar is not None and not self.supports_grammar and control is not None:
            control.note(f"{self.label} takes no grammar: it wrote freely")
        text = self.reply(messages, grammar)
        if not stream:
            return text
        return self._stream(text, control)

    def _stream(self, text, control):
        for i in range(0, len(text), 4):
            if control is not None:
                control.check(f"{self.label}: generation")
            yield text[i:i + 4]

    def next_token_logprobs(self, messages, candidates, *, control=None):
        if not self.supports_logprobs:
            raise LLMUnsupportedError(f"{self.label} gives no next-token probabilities")
        self.calls.append({"kind": "verdict", "messages": messages, "control": control})
        self._enter(control)
        p = min(max(self.verdict(messages), 1e-6), 1 - 1e-6)
        yes = [c for c in candidates if c in YES]
        no = [c for c in candidates if c not in YES]
        return {**{c: math.log(p / len(yes)) for c in yes}, **{c: math.log((1 - p) / len(no)) for c in no}}

    def continuation_logprobs(self, messages, continuation, *, control=None):
        if self.score is None:
            raise LLMUnsupportedError(f"{self.label} scores no given reply")
        self.calls.append({"kind": "score", "messages": messages, "continuation": continuation, "control": control})
        self._enter(control)
        return list(self.score(messages, continuation))

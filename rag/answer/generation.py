"""Generation: a `Prompt` in, the answer out as a stream of text deltas.

`Generator` is the Protocol every answer writer follows; `LLMGenerator` streams from a language model
through a `ChatBackend` (rag/models/llm.py). A backend that cannot stream yields its whole answer once.
`control` (a RunControl) lets the caller stop a generation and hear that it is queued; `grammar` (GBNF,
see rag/answer/citation_grammar.py) constrains the output where the backend supports it
(`supports_grammar`), and is ignored, visibly, by the caller where it does not.
Not handled here: the offline extractive stand-in (rag/answer/extractive.py), checking citations
(rag/answer/citations.py), retries and error mapping (rag/models/llm.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol, runtime_checkable

from rag.answer.prompt import NOT_ENOUGH, Prompt
from rag.models.llm import ChatBackend, RunControl

__all__ = ["Generator", "LLMGenerator", "NOT_ENOUGH"]


@runtime_checkable
class Generator(Protocol):
    name: str
    label: str  # what the user sees, e.g. "OpenAI-compatible: gpt-4o-mini @ api.openai.com"
    is_fallback: bool  # True for stand-ins that are not a language model

    def generate(self, prompt: Prompt, control: RunControl | None = None, grammar: str | None = None
                 ) -> Iterator[str]: ...


class LLMGenerator:
    """Answers with a language model, streaming its deltas as they arrive."""

    is_fallback = False

    def __init__(self, chat: ChatBackend):
        self.chat = chat
        self.name = chat.name
        self.label = chat.label
        self.supports_grammar = bool(getattr(chat, "supports_grammar", False))

    def __repr__(self) -> str:
        return f"LLMGenerator({self.label!r})"

    @property
    def prompt_budget(self) -> int | None:
        """Prompt tokens the backend can take, or None when it does not say (remote endpoints)."""
        return getattr(self.chat, "prompt_budget", None)

    def count_tokens(self, messages: list[dict]) -> int | None:
        counter = getattr(self.chat, "count_tokens", None)
        return counter(messages) if counter is not None else None

    def generate(self, prompt: Prompt, control: RunControl | None = None, grammar: str | None = None
                 ) -> Iterator[str]:
        extra: dict = {}
        if control is not None:
            extra["control"] = control
        if grammar is not None and self.supports_grammar:
            extra["grammar"] = grammar
        out = self.chat.complete(prompt.messages, stream=True, **extra)
        if isinstance(out, str):  # a backend that does not stream
            if out:
                yield out
            return
        try:
            for delta in out:
                if delta:
                    yield delta
        finally:
            close = getattr(out, "close", None)
            if close is not None:  # a generator that stops early frees the model now, not at garbage collection
                close()

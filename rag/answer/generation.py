"""Generation: a `Prompt` in, the answer out as a stream of text deltas.

`Generator` is the Protocol every answer writer follows; `LLMGenerator` streams from a language model
through a `ChatBackend` (rag/models/llm.py). A backend that cannot stream yields its whole answer once.
Not handled here: the offline extractive stand-in (rag/answer/extractive.py), checking citations
(rag/answer/citations.py), retries and error mapping (rag/models/llm.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Protocol, runtime_checkable

from rag.models.llm import ChatBackend
from rag.answer.prompt import NOT_ENOUGH, Prompt

__all__ = ["Generator", "LLMGenerator", "NOT_ENOUGH"]


@runtime_checkable
class Generator(Protocol):
    name: str
    label: str  # what the user sees, e.g. "OpenAI-compatible: gpt-4o-mini @ api.openai.com"
    is_fallback: bool  # True for stand-ins that are not a language model

    def generate(self, prompt: Prompt) -> Iterator[str]: ...


class LLMGenerator:
    """Answers with a language model, streaming its deltas as they arrive."""

    is_fallback = False

    def __init__(self, chat: ChatBackend):
        self.chat = chat
        self.name = chat.name
        self.label = chat.label

    def __repr__(self) -> str:
        return f"LLMGenerator({self.label!r})"

    def generate(self, prompt: Prompt) -> Iterator[str]:
        out = self.chat.complete(prompt.messages, stream=True)
        if isinstance(out, str):  # a backend that does not stream
            if out:
                yield out
            return
        for delta in out:
            if delta:
                yield delta

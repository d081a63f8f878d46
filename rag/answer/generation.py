"""Generation: a `Prompt` in, the answer out as a stream of text deltas.

`Generator` is the Protocol every answer writer follows; `LLMGenerator` streams from a language model
through a `ChatBackend` (rag/models/llm.py). `control` (a RunControl) lets the caller stop a generation
and hear that it is queued; `grammar` (GBNF, see rag/answer/citation_grammar.py) constrains the output
where the generator `supports_grammar`, and the caller says in the trace where it does not.
`prompt_budget` and `count_tokens` say how many prompt tokens fit (None: the generator does not say).
Not handled here: the offline extractive stand-in (rag/answer/extractive.py), checking citations
(rag/audit/citations.py), retries and error mapping (rag/models/llm.py).
"""

from __future__ import annotations

from collections.abc import Generator as _Stream
from typing import Protocol, cast, runtime_checkable

from rag.answer.prompt import NOT_ENOUGH, Prompt
from rag.messages import Msg
from rag.models.control import RunControl
from rag.models.llm import ChatBackend

__all__ = ["Generator", "LLMGenerator", "NOT_ENOUGH"]


@runtime_checkable
class Generator(Protocol):
    name: str
    is_fallback: bool  # True for stand-ins that are not a language model
    supports_grammar: bool  # a grammar passed to generate() is enforced

    @property
    def label(self) -> str | Msg:
        """What the user sees, e.g. "OpenAI-compatible: gpt-4o-mini @ api.openai.com" (a Msg where bilingual)."""
        ...

    @property
    def prompt_budget(self) -> int | None:
        """Prompt tokens that still leave room for an answer; None: not known."""
        ...

    def count_tokens(self, messages: list[dict]) -> int | None: ...

    def generate(self, prompt: Prompt, control: RunControl | None = None, grammar: str | None = None
                 ) -> _Stream[str, None, None]:
        """The answer's text deltas, as a generator: closing it (a caller that stops reading) frees the model."""
        ...


class LLMGenerator:
    """Answers with a language model, streaming its deltas as they arrive."""

    is_fallback = False

    def __init__(self, chat: ChatBackend):
        self.chat = chat
        self.name = chat.name
        self.label = chat.label
        self.supports_grammar = chat.supports_grammar

    def __repr__(self) -> str:
        return f"LLMGenerator({self.label!r})"

    @property
    def prompt_budget(self) -> int | None:
        """Prompt tokens the backend can take, or None when it does not say (remote endpoints)."""
        return self.chat.prompt_budget

    def count_tokens(self, messages: list[dict]) -> int | None:
        return self.chat.count_tokens(messages)

    def generate(self, prompt: Prompt, control: RunControl | None = None, grammar: str | None = None
                 ) -> _Stream[str, None, None]:
        out = cast(_Stream[str, None, None], self.chat.complete(prompt.messages, stream=True, grammar=grammar,
                                                                max_tokens=prompt.answer_tokens,
                                                                control=control))  # stream=True: deltas
        try:
            for delta in out:
                if delta:
                    yield delta
        finally:
            out.close()  # a generation that stops early frees the model now, not at garbage collection

"""The question and the main settings in the page's URL, so a reload keeps them and a teacher can send a
link to a question with its settings (`?question=...&retrieval.mode=bm25&answer.cite=free`).

`restore` reads the URL once, on a session's first run, and takes only values it can check: a choice
must be one of its options, a number a whole number in range, a switch 0/1; anything else is ignored,
so a hand-edited or hostile link cannot put an invalid value into a widget. `publish` writes the
current values back at the end of every run, leaving out those at their defaults so links stay short.
What the URL never holds: the uploaded corpus (it lives only in this browser session), the API key or
endpoint fields, chunker parameters.
Not handled here: the defaults themselves (settings.py).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, MutableMapping

from rag import defaults
from rag.answer.citation_grammar import CITE_MODES
from rag.answer.prompt import PROMPT_STYLES
from rag.backends import GENERATORS
from rag.models.gguf_parts import GGUF_MODELS
from rag.pipeline import REWRITES
from rag.search.retrieval import MODES

from .settings import DEFAULTS

MAX_QUESTION = defaults.QUESTION_MAX_CHARS  # characters: a question, not a document (the CLI's limit too)
# The longest URL the app's server answers (measured: 125,000 bytes load, 130,000 are refused with uvicorn's
# bare "Invalid HTTP request received."); the README says so. A link the app writes is far shorter: the
# longest question is 1,000 characters, about 9,000 bytes percent-encoded.
MAX_URL_BYTES = 100_000


def _choice(options) -> Callable[[str], Any]:
    def parse(raw: str):
        if raw not in options:
            raise ValueError(raw)
        return raw
    return parse


def _whole(lo: int, hi: int) -> Callable[[str], int]:
    def parse(raw: str) -> int:
        value = int(raw)
        if not lo <= value <= hi:
            raise ValueError(raw)
        return value
    return parse


def _switch(raw: str) -> bool:
    if raw not in ("0", "1"):
        raise ValueError(raw)
    return raw == "1"


def _question(raw: str) -> str:
    text = raw.strip()
    if not text or len(text) > MAX_QUESTION:
        raise ValueError(raw)
    return text


# session key -> parser of its URL value (the URL uses the session keys as parameter names)
LINKED: dict[str, Callable[[str], Any]] = {
    "question": _question,
    "ui.lang": _choice(("zh", "en")),
    "retrieval.mode": _choice(MODES),
    "retrieval.recall_n": _whole(1, 200),
    "retrieval.rrf_k": _whole(1, 1000),
    "rerank.enabled": _switch,
    "rerank.top_k": _whole(1, 50),
    "answer.rewrite": _choice(REWRITES),
    "answer.cite": _choice(CITE_MODES),
    "answer.compare": _switch,
    "answer.gate": _switch,
    "answer.compress": _switch,
    "answer.fill_in": _switch,
    "answer.prompt_style": _choice(PROMPT_STYLES),
    "llm.generator": _choice(GENERATORS),
    "llm.local_model": _choice(tuple(GGUF_MODELS)),
}


def restore(ss: MutableMapping, params: Mapping[str, str]) -> list[str]:
    """Apply the URL's valid values to a new session; returns the keys it ignored as invalid."""
    if ss.get("links.restored"):
        return []
    ss["links.restored"] = True
    ignored = []
    for key, parse in LINKED.items():
        if key not in params:
            continue
        try:
            ss[key] = parse(str(params[key]))
        except (ValueError, TypeError):
            ignored.append(key)
    return ignored


def _encode(value) -> str:
    return ("1" if value else "0") if isinstance(value, bool) else str(value)


def publish(ss: Mapping) -> dict[str, str]:
    """The URL parameters for the current settings: only those that differ from their defaults."""
    return {key: _encode(ss[key]) for key in LINKED if key in ss and ss[key] != DEFAULTS.get(key)}

"""The question and every setting the pages use, in the page's URL, so a reload keeps them and a teacher can send
a link to a question with its settings (`?question=...&retrieval.mode=bm25&retrieval.w_bm25=1.3`).

`restore` reads the URL once, on a session's first run, and takes only values it can check: a choice must be one
of its options, a number a number in the widget's range, a switch 0/1, a list a comma-separated set of options;
anything else is ignored and reported, so a hand-edited or hostile link cannot put an invalid value into a widget.
`publish` writes the current values back at the end of every run, leaving out those at their defaults so links
stay short; `share_url` is the whole link, which the sidebar offers to copy.
A class knowledge base's name travels as `kb=NAME` (ui/kb.py opens it; it lives on the server, not in the link).
What the URL never holds: the uploaded corpus (it lives only in this browser session), the API key or endpoint
fields, a custom embedder or cross-encoder name (a link must not make the server load a model someone typed).
Not handled here: the defaults themselves (settings.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, MutableMapping
from urllib.parse import urlencode

from rag import defaults
from rag.answer.citation_grammar import CITE_MODES
from rag.answer.prompt import PROMPT_STYLES
from rag.backends import GENERATORS, JUDGE_MODELS, reranker_names
from rag.evaluate.strategies import REWRITE_STRATEGIES
from rag.evaluate.strategies import STRATEGIES as EVAL_STRATEGIES
from rag.index.tokenize import TOKENIZERS
from rag.ingest.chunking import CHUNKERS, chunker_params
from rag.lesson.lesson import MAX_STEPS
from rag.loops.registry import LOOPS
from rag.models.embedding import EMBEDDERS, default_embedder_name
from rag.models.gguf_parts import GGUF_MODELS
from rag.pipeline import REWRITES
from rag.search.retrieval import MODES

from .settings import DEFAULTS, pending_params

MAX_QUESTION = defaults.QUESTION_MAX_CHARS  # characters: a question, not a document (the CLI's limit too)
# The longest link the app's server (uvicorn, with h11) answers however the request arrives: h11 refuses a request
# head of over 16 KiB that is still arriving, so a request sent in network-sized pieces fails from about 16,500 bytes,
# one the browser sends on a reused connection from about 65,000, one that arrives at once from about 127,000
# (bench/bench_links.py). The head also holds the browser's other headers, hence 14,000 for the URL; docs/troubleshooting.md
# states it. Every link the app writes fits: the longest question is 1,000 characters, about 9,000 bytes encoded.
MAX_URL_BYTES = 14_000
MAX_SENTENCE = 500  # the answer page's own sentence to audit: one sentence, not a document


def lesson_dir():
    """The folder of lesson files: RAG_LESSON_DIR, data/lessons/ unless set."""
    from rag import config

    return config.value("RAG_LESSON_DIR")


def bundled_lesson_ids() -> list[str]:
    """The ids of the lesson files (lesson_dir()/*.toml), read from their `id =` lines (the lessons themselves:
    ui/lesson.py); a file that cannot be read has none."""
    import re

    ids = []
    for path in sorted(lesson_dir().glob("*.toml")):
        try:
            m = re.search(r'^id\s*=\s*"([^"]+)"', path.read_text(encoding="utf-8"), re.M)
        except (OSError, UnicodeDecodeError):
            continue
        if m:
            ids.append(m.group(1))
    return ids


@dataclass(frozen=True)
class Choice:
    options: tuple

    def parse(self, raw: str):
        if raw not in self.options:
            raise ValueError(raw)
        return raw


@dataclass(frozen=True)
class Whole:
    lo: int
    hi: int

    def parse(self, raw: str) -> int:
        value = int(raw)
        if not self.lo <= value <= self.hi:
            raise ValueError(raw)
        return value


@dataclass(frozen=True)
class Number:
    """A slider's float: in [lo, hi], rounded to its step (a link cannot put 1.3000001 into a 0.1-step slider)."""
    lo: float
    hi: float
    step: float

    def parse(self, raw: str) -> float:
        value = float(raw)
        if not self.lo <= value <= self.hi:  # also refuses nan and inf
            raise ValueError(raw)
        return round(round(value / self.step) * self.step, 6)


@dataclass(frozen=True)
class Switch:
    def parse(self, raw: str) -> bool:
        if raw not in ("0", "1"):
            raise ValueError(raw)
        return raw == "1"


@dataclass(frozen=True)
class Many:
    """A multiselect: options joined by commas, each once ("" is the empty selection)."""
    options: tuple

    def parse(self, raw: str) -> list:
        items = [x for x in raw.split(",") if x] if raw else []
        if len(set(items)) != len(items) or any(x not in self.options for x in items):
            raise ValueError(raw)
        return items


@dataclass(frozen=True)
class Text:
    most: int

    def parse(self, raw: str) -> str:
        text = raw.strip()
        if not text or len(text) > self.most:
            raise ValueError(raw)
        return text


Param = Choice | Whole | Number | Switch | Many | Text


def _chunk_params() -> dict[str, Param]:
    """Every chunker's parameters (number inputs with no upper bound on the page; a link may ask up to 100,000)."""
    return {f"chunk.{method}.{name}": Whole(0, 100_000) for method in CHUNKERS for name in chunker_params(method)}


# session key -> what its URL value may be (the URL uses the session keys as parameter names)
LINKED: dict[str, Param] = {
    "question": Text(MAX_QUESTION),
    "ui.lang": Choice(("zh", "en")),
    "llm.generator": Choice(GENERATORS),
    "llm.local_model": Choice(tuple(GGUF_MODELS)),
    "llm.offline": Switch(),
    "chunk.method": Choice(tuple(CHUNKERS)),
    **_chunk_params(),
    "embed.name": Choice(tuple(EMBEDDERS)),
    "index.stopwords": Switch(),
    "index.sparse": Switch(),
    "index.contextual": Switch(),
    "index.tokenizer": Choice(TOKENIZERS),
    "embeddings.dims": Choice(("2D", "3D")),
    "embeddings.k": Whole(1, 50),
    "embeddings.group": Choice(("section", "document")),
    "retrieval.mode": Choice(MODES),  # the graph modes are the loops page's strategies, not this radio's
    "retrieval.recall_n": Whole(1, 200),
    "retrieval.depth": Whole(1, 1000),
    "retrieval.rrf_k": Whole(1, 1000),
    "retrieval.w_dense": Number(0.0, 3.0, 0.1),
    "retrieval.w_bm25": Number(0.0, 3.0, 0.1),
    "retrieval.show_n": Whole(3, 50),
    "retrieval.indexes": Many(("hnsw", "ivfpq", "milvus")),
    "rerank.enabled": Switch(),
    "rerank.name": Choice(tuple(reranker_names())),
    "rerank.top_k": Whole(1, 50),
    "answer.rewrite": Choice(REWRITES),
    "answer.n_queries": Whole(1, 5),
    "answer.compare": Switch(),
    "answer.lang": Choice(("auto", "zh", "en")),
    "answer.cite": Choice(CITE_MODES),
    "answer.second_opinion": Switch(),
    "answer.gate": Switch(),
    "answer.compress": Switch(),
    "answer.fill_in": Switch(),
    "answer.prompt_style": Choice(PROMPT_STYLES),
    "answer.my_sentence": Text(MAX_SENTENCE),
    "loops.strategies": Many(LOOPS),  # the key keeps its old name: saved links and teachers' lesson files hold it
    "loops.rounds": Whole(1, 3),
    "loops.steps": Whole(2, 10),
    "eval.strategies": Many(EVAL_STRATEGIES + REWRITE_STRATEGIES),
    "eval.answers": Switch(),
    "eval.cites": Many(CITE_MODES),
    "eval.limit": Whole(0, 100_000),
    "judge.source": Choice(("multihop", "golden")),
    "judge.strategy": Choice(LOOPS),
    "judge.n": Whole(1, 20),
    "judge.model": Choice(JUDGE_MODELS),
    # a bundled lesson, its step and the checks answered right (a teacher's uploaded lesson stays in its session)
    "lesson.id": Choice(tuple(bundled_lesson_ids())),
    "lesson.step": Whole(0, MAX_STEPS - 1),
    "lesson.passed": Many(tuple(str(i) for i in range(MAX_STEPS))),
    "lesson.present": Switch(),
}


def restore(ss: MutableMapping, params: Mapping[str, str]) -> list[str]:
    """Apply the URL's valid values to a new session; returns the keys it ignored as invalid.

    A link that names a chunker or its parameters is what the index is built with from the start, as if the
    reader had pressed "Apply" on the upload page."""
    if ss.get("links.restored"):
        return []
    ss["links.restored"] = True
    ignored = []
    for key, param in LINKED.items():
        if key not in params:
            continue
        try:
            ss[key] = param.parse(str(params[key]))
        except (ValueError, TypeError):
            ignored.append(key)
    if any(key.startswith("chunk.") and key in params and key not in ignored for key in LINKED):
        method = ss.get("chunk.method", DEFAULTS["chunk.method"])
        ss["applied.chunk"] = (method, pending_params(ss, method))
    if "embed.name" in params and "embed.name" not in ignored:
        ss["applied.embedder"] = ss["embed.name"]
    return ignored


def encode(value) -> str:
    """A setting's value as its URL parameter (a lesson's settings are checked through the same trip)."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (list, tuple)):
        return ",".join(map(str, value))
    return f"{value:g}" if isinstance(value, float) else str(value)


def _default(key: str):
    """The value a new session starts with (the embedder's default is only known at run time)."""
    return default_embedder_name() if key == "embed.name" else DEFAULTS.get(key)


def _linkable(param: Param, value) -> bool:
    """Whether `value` survives the trip through a link (a custom embedder's name, a None, does not)."""
    try:
        return value is not None and param.parse(encode(value)) == value
    except (ValueError, TypeError):
        return False


def publish(ss: Mapping) -> dict[str, str]:
    """The URL parameters for the current settings: only those that differ from their defaults; first the class
    knowledge base the session is on (`kb`, which ui/kb.py opens from a link)."""
    held = ss.get("corpus.kb")
    failed = ss.get("corpus.kb_link")  # a link whose base could not be opened keeps its kb= (a reload retries it)
    out = {"kb": held[0]} if held else {"kb": str(failed)} if failed else {}
    out.update({key: encode(ss[key]) for key, param in LINKED.items()
                if key in ss and ss[key] != _default(key) and _linkable(param, ss[key])})
    return out


def share_url(page_url: str, ss: Mapping) -> str:
    """The link to this page with this session's settings (the page's address without its query + ours)."""
    base = page_url.split("?", 1)[0].split("#", 1)[0]
    query = urlencode(publish(ss))
    return f"{base}?{query}" if query else base

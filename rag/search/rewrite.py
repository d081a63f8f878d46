"""Query rewriting with a language model: HyDE and multi-query.

HyDE (Gao et al., 2022, "Precise Zero-Shot Dense Retrieval without Relevance Labels"): ask the model for
a short passage that *would* answer the question and search with it, because an answer looks more like
the documents than a question does. `hyde` returns "" when the model writes nothing; the caller then
searches with the original question (and says so in the trace).
Multi-query (RAG-Fusion style): ask for n differently-worded search queries, retrieve for each, fuse
with RRF. `multi_query` returns only the variants; the caller adds the original question.
`parse_query_list` turns whatever the model wrote (JSON, fenced JSON, numbered or bulleted lists,
plain lines) into a clean list, because models do not follow format instructions reliably.

`hyde_vector` turns the question and its passage into the query vector the dense search uses.

Not handled here: fusing the lists (rag/search/retrieval.py, rag/search/fusion.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable

import numpy as np

from rag.errors import ConfigError, LLMUnavailableError
from rag.index.build import Index
from rag.ingest.language import detect_lang
from rag.models.control import RunControl
from rag.models.llm import ChatBackend

HYDE_SYSTEM = {
    "zh": "你是一个知识库的撰稿人。请写一段简短的资料（3 到 5 句），内容要能直接回答用户的问题，"
          "写法像知识库文章中的一段。可以是假设的内容，不要说你不确定，不要开场白，只输出这段文字。",
    "en": "You write knowledge-base articles. Write a short passage (3 to 5 sentences) that directly answers "
          "the user's question, phrased like a paragraph from a knowledge-base article. It may be hypothetical; "
          "do not say you are unsure, no preamble, output only the passage.",
}

MULTI_QUERY_SYSTEM = {
    "zh": "你帮助改进检索。把用户的问题改写成 {n} 个不同的检索查询：换用同义词、换个角度、补充可能的关键词。"
          "每个查询都要能单独理解，用中文。只输出一个 JSON 字符串数组，例如 [\"查询1\", \"查询2\"]，不要其他内容。",
    "en": "You help improve search. Rewrite the user's question as {n} different search queries: use synonyms, "
          "other angles and likely keywords. Each query must stand on its own, in English. Output only a JSON "
          "array of strings, e.g. [\"query 1\", \"query 2\"], and nothing else.",
}

NEEDS_LLM = ("{what} needs a language model: set OPENAI_BASE_URL (and OPENAI_API_KEY / OPENAI_MODEL), or put "
             "them in .streamlit/secrets.toml, or choose rewrite 'none'")


def hyde_messages(question: str, lang: str) -> list[dict]:
    return [{"role": "system", "content": HYDE_SYSTEM[lang]}, {"role": "user", "content": question}]


def multi_query_messages(question: str, n: int, lang: str) -> list[dict]:
    return [{"role": "system", "content": MULTI_QUERY_SYSTEM[lang].format(n=n)},
            {"role": "user", "content": question}]


def _lang(question: str, lang: str | None) -> str:
    lang = detect_lang(question) if lang in (None, "auto") else lang
    if lang not in HYDE_SYSTEM:
        raise ConfigError(f"unknown lang {lang!r}; choose one of {', '.join(HYDE_SYSTEM)} or 'auto'")
    return lang


def _text(out) -> str:
    """complete(stream=False) returns a str; join defensively if a backend streamed anyway."""
    return out if isinstance(out, str) else "".join(out)


Stop = Callable[[str], object]  # fed each delta; truthy: stop here (the pipeline passes answer.shape's loop guard)


def _reply(chat: ChatBackend, messages: list[dict], control: RunControl | None, stop: Stop | None) -> str:
    """The model's reply; with `stop`, streamed and cut where it says so (a small model that loops would otherwise
    write until its token limit: the 0.5B's looping multi-query took 26 s where a good one takes about 1)."""
    if stop is None:
        return _text(chat.complete(messages, control=control))
    deltas = chat.complete(messages, stream=True, control=control)
    if isinstance(deltas, str):
        return deltas
    parts: list[str] = []
    try:
        for delta in deltas:
            parts.append(delta)
            if stop(delta):
                break
    finally:
        close = getattr(deltas, "close", None)
        if close is not None:
            close()  # the model is free now, not when the iterator is collected
    return "".join(parts)


_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.S)  # reasoning models (deepseek-r1, qwen3) think aloud


def hyde(question: str, chat: ChatBackend | None, lang: str | None = None, control: RunControl | None = None,
         stop: Stop | None = None) -> str:
    """A hypothetical passage answering `question`, in the question's language; "" if the model wrote nothing.
    `control` queues, stops and times the call like the answer's; `stop` cuts a reply that loops (`_reply`)."""
    if chat is None:
        raise LLMUnavailableError(NEEDS_LLM.format(what="HyDE"))
    if not question or not question.strip():
        raise ConfigError("the question is empty; type a question first")
    lang = _lang(question, lang)
    out = _reply(chat, hyde_messages(question.strip(), lang), control, stop)
    return _THINK.sub("", out).strip()


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold().rstrip("?？.。!！")


def multi_query(question: str, chat: ChatBackend | None, n: int = 3, lang: str | None = None,
                control: RunControl | None = None, stop: Stop | None = None) -> list[str]:
    """Up to n rewordings of `question` (the original and its duplicates are not included); `stop` cuts a reply
    that loops (`_reply`)."""
    if chat is None:
        raise LLMUnavailableError(NEEDS_LLM.format(what="Multi-query rewriting"))
    if not question or not question.strip():
        raise ConfigError("the question is empty; type a question first")
    if n < 1:
        raise ConfigError(f"n={n} must be >= 1 (number of query variants)")
    question = question.strip()
    lang = _lang(question, lang)
    out = _reply(chat, multi_query_messages(question, n, lang), control, stop)
    original = _norm(question)
    variants = [q for q in parse_query_list(out, n + 1) if _norm(q) != original]
    return variants[:n]


# ---- parsing whatever the model wrote ------------------------------------------------------------

_FENCE = re.compile(r"```[ \t]*[\w-]*[ \t]*\n?(.*?)(?:```|$)", re.S)
_MARKER = re.compile(
    r"^\s*(?:"
    r"[-*•·+]\s+"  # bullets
    r"|[(（]\s*\d{1,2}\s*[)）]\s*"  # (1) （1）
    r"|(?:q|query|查询|问题)?\s*\d{1,2}\s*(?:[.．](?!\d)|[)、:：）])\s*"  # 1. 1) 1、 Q1: 查询1： (not 3.5)
    r")",
    re.I,
)
_QUOTES = "\"'`“”‘’「」『』«»"
_TRAIL = ",，;；、.。"  # punctuation noise at the end; ? and ？ are kept, they are part of a question
_WORDY = re.compile(r"[0-9A-Za-z\u00c0-\u024f\u3400-\u9fff\uf900-\ufaff]")
_PREFERRED_KEYS = ("queries", "questions", "variants", "rewrites", "items", "results")


def _clean_item(item: str) -> str:
    text = re.sub(r"\s+", " ", str(item)).strip()
    text = _MARKER.sub("", text, count=1)
    text = re.sub(r"^\*\*(.*)\*\*$", r"\1", text)  # **bold**
    for _ in range(3):  # peel nested quote/punctuation layers: '"query",' -> query
        stripped = text.strip().strip(_QUOTES).rstrip(_TRAIL).strip()
        if stripped == text:
            break
        text = stripped
    return text


def _from_json(value) -> list | None:
    """Strings out of a JSON value: a list, or the list (or string values) inside an object."""
    if isinstance(value, list):
        out = []
        for item in value:
            if isinstance(item, (str, int, float)) and not isinstance(item, bool):
                out.append(str(item))
            elif isinstance(item, dict):  # [{"query": "..."}]
                out += [str(v) for v in item.values() if isinstance(v, str)][:1]
        return out
    if isinstance(value, dict):
        for key in (*_PREFERRED_KEYS, *value):
            if isinstance(value.get(key), list):
                return _from_json(value[key])
        strings = [v for v in value.values() if isinstance(v, str)]
        return strings or None
    return None


def _try_json(text: str) -> list | None:
    candidates = [text]
    for open_, close in (("[", "]"), ("{", "}")):
        i, j = text.find(open_), text.rfind(close)
        if 0 <= i < j:
            candidates.append(text[i:j + 1])
    for candidate in candidates:
        try:
            found = _from_json(json.loads(candidate))
        except (json.JSONDecodeError, ValueError):
            continue
        if found is not None:
            return found
    if text.lstrip().startswith("["):  # a JSON array cut off mid-way (max_tokens): take its complete strings
        strings = re.findall(r'"((?:[^"\\]|\\.)*)"', text)
        if strings:
            return [s.replace('\\"', '"') for s in strings]
    return None


def _from_lines(text: str) -> list[str]:
    lines = [line for line in text.splitlines() if line.strip()]
    marked = [line for line in lines if _MARKER.match(line)]
    if marked:  # a list with a preamble ("Here are 3 queries:") or an epilogue: keep the list only
        return marked
    return [line for line in lines if not line.rstrip().endswith((":", "："))]


def _dedupe(items: Iterable[str], n: int) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    for item in items:
        text = _clean_item(item)
        key = _norm(text)
        if not text or not _WORDY.search(text) or key in seen:
            continue
        seen.add(key)
        out.append(text)
        if len(out) == n:
            break
    return out


def parse_query_list(text: str | None, n: int) -> list[str]:
    """Up to n distinct queries from a model's reply; [] if nothing usable.

    Tried in order: JSON (whole reply, inside a ``` fence, or the first [...] / {...} in it), then lines
    (numbered `1.` `1、` `1)` `（1）`, bulleted `-` `*` `•`, or plain). Quotes and trailing , ; 。 are stripped,
    empty and duplicate items dropped.
    """
    if n < 1:
        raise ConfigError(f"n={n} must be >= 1")
    if not text or not text.strip():
        return []
    text = _THINK.sub("", text).strip()
    fenced = _FENCE.findall(text)
    body = fenced[0].strip() if fenced and fenced[0].strip() else text
    items = _try_json(body)
    if items is None:
        items = _from_lines(body)
    return _dedupe(items, n)


def hyde_vector(index: Index, question: str, hypothesis: str) -> np.ndarray:
    """HyDE (Gao et al., 2022): embed the question together with a hypothetical answer.

    The query vector is the normalised mean of the question (query side) and the hypothetical
    passage (document side), so the search looks for documents that resemble an answer.
    """
    q = index.embedder.embed_queries([question])[0]
    if not hypothesis.strip():
        return q
    h = index.embedder.embed_transient([hypothesis])[0]  # the model's text: never stored on disk
    v = q + h
    return (v / (np.linalg.norm(v) or 1.0)).astype(np.float32)


def query_points(index: Index, question: str, rewrites: dict) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """The points the embedding map draws for a question: the question itself ("query"), the HyDE vector
    ("HyDE") and each multi-query variant ("q2", "q3", ...), with the text each stands for.

    `rewrites` is a trace's {"hyde": passage} and/or {"queries": [question, *variants]}."""
    vectors = {"query": index.embedder.embed_queries([question])[0]}
    texts = {"query": question}
    if rewrites.get("hyde"):
        vectors["HyDE"] = hyde_vector(index, question, rewrites["hyde"])
        texts["HyDE"] = rewrites["hyde"]
    variants = list(rewrites.get("queries", []))[1:]
    if variants:
        for i, (v, vec) in enumerate(zip(variants, index.embedder.embed_queries(variants)), 2):
            vectors[f"q{i}"], texts[f"q{i}"] = vec, v
    return vectors, texts


def make_rewrites(kind: str, question: str, chat: ChatBackend, n_queries: int = 3,
                  control: RunControl | None = None) -> dict:
    """One rewrite on request, in the trace's shape: {"hyde": passage} or {"queries": [question, *variants]}."""
    if kind == "hyde":
        return {"hyde": hyde(question, chat, control=control)}
    if kind == "multi-query":
        return {"queries": [question, *multi_query(question, chat, n_queries, control=control)]}
    raise ConfigError(f"unknown rewrite {kind!r}; choose hyde or multi-query")

"""Entities and relations per chunk: the bundled (or an endpoint's) model under a JSON grammar, or jieba's
part-of-speech tags as the labelled fallback and baseline.

The model reads the chunk as numbered sentences (after one worked example) and writes
    {"entities": [["RRF", "method"], ...], "relations": [["RRF", "属于", "混合检索", 2], ...]}
under a GBNF grammar (at most MAX_ENTITIES entities and MAX_RELATIONS relations, names at most MAX_NAME
characters, a type from TYPES, the number of the sentence each relation comes from), so a small model cannot
write broken JSON; arrays rather than keyed objects because every key is tokens the model must write. What it writes is then checked against the chunk: an entity whose name is not in
the text is dropped (a model may translate or invent), a relation whose ends are not entities of the chunk
is dropped, and `dropped` says how many of each, so the page can show the raw output beside what was kept.

The jieba extractor takes named-entity tags (nr person, ns place, nt organisation, nz other proper noun),
Latin terms and runs of nouns as entities, and joins two entities of one sentence with the verb between
them (or "同句" when there is none): co-occurrence, not understanding. It is the fallback when no model
runs, and the baseline the model's graph is measured against (bench/bench_graph.py).

Extractions are cached by sha1(prompt version, extractor, chunk text): in memory for everyone, and from the
shipped file data/graph/extractions.jsonl (bundled corpora, precomputed by scripts/precompute_graph.py), so
the first visit to the graph page does not wait for the model. An upload's extractions stay in memory.
Not handled here: merging spellings (resolve.py), the graph (graph.py).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from rag.errors import LLMError
from rag.index.tokenize import ENGLISH_STOPWORDS, jieba_posseg
from rag.ingest.language import detect_lang
from rag.ingest.sentences import split_sentences
from rag.messages import Msg
from rag.models.control import RunControl

PROMPT_VERSION = "graph-v1"
TYPES = ("person", "organization", "place", "work", "event", "method", "model", "concept", "metric", "tool",
         "other")
MAX_ENTITIES = 8
MAX_RELATIONS = 6
MAX_NAME = 20
MAX_LABEL = 10
MAX_SENTENCES = 40  # a longer chunk shows the model its first 40 sentences
MAX_TOKENS = 600
SHIPPED = Path(__file__).resolve().parents[2] / "data" / "graph" / "extractions.jsonl"
JIEBA_LABEL = Msg(en="jieba POS tags + co-occurrence (fallback: no language model)", zh="jieba 词性标注 + 共现（替代方案：没有语言模型）")
CO_OCCURS = "同句"


def _string(most: int) -> str:
    return f'"\\"" [^"\\\\\\n]{{1,{most}}} "\\""'


GRAMMAR = "\n".join([
    'root ::= "{\\"entities\\": [" ( entity ( ", " entity ){0,%d} )? "], \\"relations\\": [" '
    '( relation ( ", " relation ){0,%d} )? "]}"' % (MAX_ENTITIES - 1, MAX_RELATIONS - 1),
    'entity ::= "[" name ", " type "]"',
    'relation ::= "[" name ", " label ", " name ", " num "]"',
    f"name ::= {_string(MAX_NAME)}",
    f"label ::= {_string(MAX_LABEL)}",
    "type ::= " + " | ".join(f'"\\"{t}\\""' for t in TYPES),
    'num ::= [1-9] [0-9]?',
])

# The shape of the output, taught once by a worked example (sent as earlier turns, so llama.cpp keeps its KV
# state between chunks). Its text is made up for the example, not taken from any corpus here.
EXAMPLES = {
    "zh": ("文本（每句前是编号）：\n[1] 星海大学由林远于 1921 年创办，位于青州。\n[2] 该校的天文台使用折射望远镜观测木星。",
           '{"entities": [["星海大学", "organization"], ["林远", "person"], ["青州", "place"], ["天文台", "organization"], '
           '["折射望远镜", "tool"], ["木星", "other"]], "relations": [["林远", "创办", "星海大学", 1], '
           '["星海大学", "位于", "青州", 1], ["天文台", "使用", "折射望远镜", 2], ["天文台", "观测", "木星", 2]]}'),
    "en": ("Text (each sentence numbered):\n[1] Starsea College was founded by Lin Yuan in 1921 in Qingzhou.\n"
           "[2] Its observatory uses a refracting telescope to watch Jupiter.",
           '{"entities": [["Starsea College", "organization"], ["Lin Yuan", "person"], ["Qingzhou", "place"], '
           '["observatory", "organization"], ["refracting telescope", "tool"], ["Jupiter", "other"]], "relations": '
           '[["Lin Yuan", "founded", "Starsea College", 1], ["Starsea College", "located in", "Qingzhou", 1], '
           '["observatory", "uses", "refracting telescope", 2], ["observatory", "watches", "Jupiter", 2]]}'),
}

PROMPTS = {
    "zh": ("你从文本中抽取知识图谱：实体是名字照原文写的人物、组织、地点、作品、事件、方法、模型、概念、指标、工具；"
           "关系是 [实体, 原文里表示关系的词, 实体, 句子编号]。只输出 JSON。",
           "{sentences}"),
    "en": ("You extract a knowledge graph from text: entities are the people, organizations, places, works, events, "
           "methods, models, concepts, metrics and tools, named as in the text; relations are [entity, the text's "
           "word for the relation, entity, sentence number]. Output JSON only.",
           "{sentences}"),
}


@dataclass(frozen=True)
class Entity:
    name: str
    type: str


@dataclass(frozen=True)
class Relation:
    head: str
    relation: str
    tail: str
    sentence: str  # the sentence it came from, as written in the chunk


@dataclass
class Extraction:
    """What one extractor found in one chunk's text."""

    entities: list[Entity]
    relations: list[Relation]
    extractor: str  # the label: which model (or the jieba fallback)
    seconds: float = 0.0  # model time when it was made (a cached one keeps the original cost)
    raw: str = ""  # the model's JSON as written ("" for jieba)
    prompt: list[dict] | None = None  # the exact messages sent (None for jieba)
    dropped: dict = field(default_factory=dict)  # {"entities": n, "relations": n} not found in the text
    cached: bool = False

    def to_record(self) -> dict:
        return {"entities": [[e.name, e.type] for e in self.entities],
                "relations": [[r.head, r.relation, r.tail, r.sentence] for r in self.relations],
                "extractor": self.extractor, "seconds": round(self.seconds, 3), "raw": self.raw,
                "dropped": self.dropped}


def numbered(text: str) -> list[str]:
    """The sentences the prompt numbers (1-based), at most MAX_SENTENCES."""
    return [s for s in split_sentences(text) if s.strip()][:MAX_SENTENCES]


def messages_for(text: str) -> list[dict]:
    lang = "zh" if detect_lang(text) == "zh" else "en"
    system, user = PROMPTS[lang]
    lines = "\n".join(f"[{i}] {s}" for i, s in enumerate(numbered(text), 1))
    shown, answered = EXAMPLES[lang]
    head = "文本（每句前是编号）：\n" if lang == "zh" else "Text (each sentence numbered):\n"
    return [{"role": "system", "content": system}, {"role": "user", "content": shown},
            {"role": "assistant", "content": answered}, {"role": "user", "content": head + user.format(sentences=lines)}]


def fold(s: str) -> str:
    """`s` casefolded with its whitespace runs made one space: how names are matched against text."""
    return " ".join(s.split()).casefold()


def occurs(name: str, folded_text: str) -> bool:
    """`name` is in the (casefolded, space-normalised) text; a Latin name only as a whole word ("RF" is not in
    "RRF")."""
    n = fold(name)
    if not n.isascii():
        return n in folded_text
    return re.search(rf"(?<![0-9a-z]){re.escape(n)}(?![0-9a-z])", folded_text) is not None


class UnreadableExtraction(LLMError):
    """The model answered, but not with the extraction's JSON: that one chunk falls back to jieba. Every other
    LLMError (a Stop, a rejected key, an unreachable endpoint) ends the whole extraction and is shown."""


def parse(raw: str, text: str, label: str, seconds: float = 0.0, prompt: list[dict] | None = None) -> Extraction:
    """The model's JSON checked against the chunk: entities must occur in `text`, relations must join two of
    them and name an existing sentence. Raises UnreadableExtraction when `raw` is not the grammar's JSON at all
    (an endpoint ignores grammars)."""
    try:
        data = json.loads(raw)
        ents, rels = data["entities"], data["relations"]
    except (ValueError, KeyError, TypeError) as exc:
        raise UnreadableExtraction(f"{label}: the extraction is not the expected JSON ({exc}): {raw[:120]!r}") from exc
    folded = fold(text)
    sentences = numbered(text)
    entities: dict[str, Entity] = {}
    dropped = {"entities": 0, "relations": 0}
    for e in ents if isinstance(ents, list) else []:
        if not isinstance(e, list) or len(e) != 2:
            dropped["entities"] += 1
            continue
        name = " ".join(str(e[0]).split()).strip("\"'“”「」《》")
        kind = str(e[1])
        if len(name) < 2 or not occurs(name, folded):
            dropped["entities"] += 1
            continue
        entities.setdefault(fold(name), Entity(name, kind if kind in TYPES else "other"))
    relations: list[Relation] = []
    for r in rels if isinstance(rels, list) else []:
        try:
            h, label_text, t, n = r
            for end in (str(h).strip(), str(t).strip()):  # an end the model did not list, but the text has
                if fold(end) not in entities and len(end) >= 2 and occurs(end, folded):
                    entities[fold(end)] = Entity(end, "other")
            head, tail = entities[fold(str(h).strip())], entities[fold(str(t).strip())]
            n = int(n)
            sentence = sentences[n - 1] if 1 <= n <= len(sentences) else ""
        except (KeyError, TypeError, ValueError):
            dropped["relations"] += 1
            continue
        label_text = " ".join(str(label_text).split())
        if head == tail or not label_text or not sentence:
            dropped["relations"] += 1
            continue
        relations.append(Relation(head.name, label_text, tail.name, sentence))
    return Extraction(list(entities.values()), list(dict.fromkeys(relations)), label, seconds, raw, prompt, dropped)


# ------------------------------------------------------------------------------------------ jieba

_POS_TYPES = {"nr": "person", "nrfg": "person", "nrt": "person", "ns": "place", "nt": "organization",
              "nz": "other", "eng": "concept"}
_NOUNS = {"n", "nz", "nr", "ns", "nt", "eng", "vn", "nrt", "nrfg"}
_STOP = frozenset("问题 方法 时候 方式 情况 部分 结果 内容 东西 作用 能力 过程 一种 一个 这种".split())


# Inline pieces of a prose sentence that are not words of it: math, code spans, LaTeX commands, links' targets.
_INLINE_NOT_WORDS = re.compile(r"\$[^$\n]+\$|`[^`\n]+`|\\[A-Za-z]+|\]\([^)\s]*\)|https?://\S+")


def prose_view(text: str) -> str:
    """`text` with what is not prose blanked, its length and line breaks kept (so a sentence found in it is found
    at the same place in `text`): code blocks, display formulas, tables, headings, captions (the Markdown reader's
    nonprose_spans) and inline math, code spans and LaTeX commands. Issue 65, item 11: the graph without a model was
    built from mathbf, hat, frac, figsize, numpy, plt and d2l."""
    from rag.ingest.markdown import nonprose_spans

    chars = list(text)
    for a, b in nonprose_spans(text):
        for i in range(a, b):
            if chars[i] != "\n":
                chars[i] = " "
    masked = "".join(chars)
    return _INLINE_NOT_WORDS.sub(lambda m: " " * len(m.group(0)), masked)


def jieba_extract(text: str) -> Extraction:
    """Entities from POS tags and noun runs over the text's prose only (`prose_view`), relations from sentence
    co-occurrence (see the module note); a relation keeps the sentence as the text has it."""
    pseg = jieba_posseg()
    t0 = time.perf_counter()
    per_sentence: list[tuple[str, list[tuple[str, str, int]], list[tuple[str, str]]]] = []
    counts: Counter = Counter()
    types: dict[str, str] = {}
    prose, cursor = prose_view(text), 0
    for seen in numbered(prose):
        at = prose.find(seen, cursor)
        cursor = at + len(seen) if at >= 0 else cursor
        sentence = " ".join(text[at:at + len(seen)].split()) if at >= 0 else seen  # as written, for the evidence
        words = [(w.word, w.flag) for w in pseg.cut(seen)]
        found: list[tuple[str, str, int]] = []  # (name, type, word position)
        run: list[tuple[str, str]] = []

        def close(pos: int) -> None:
            if not run:
                return
            name = "".join(w for w, _ in run).strip()
            flags = [f for _, f in run]
            kind = next((_POS_TYPES[f] for f in flags if f in _POS_TYPES), "concept")
            if 2 <= len(name) <= MAX_NAME and name not in _STOP and not name.isdigit() and \
                    name.casefold() not in ENGLISH_STOPWORDS:
                found.append((name, kind, pos))
            run.clear()

        for i, (w, f) in enumerate(words):
            if f in _NOUNS and w.strip():
                run.append((w, f))
            else:
                close(i)
        close(len(words))
        for name, kind, _ in found:
            counts[name] += 1
            types.setdefault(name, kind)
        per_sentence.append((sentence, found, words))
    keep = {n for n, _ in counts.most_common(MAX_ENTITIES * 2)}
    relations: list[Relation] = []
    for sentence, found, words in per_sentence:
        found = [f for f in found if f[0] in keep]
        for (a, _, i), (b, _, j) in zip(found, found[1:]):
            if a == b:
                continue
            verb = next((w for w, f in words[i:j] if f.startswith("v") and len(w) >= 2), CO_OCCURS)
            relations.append(Relation(a, verb, b, sentence))
    entities = [Entity(n, types[n]) for n in counts if n in keep]
    return Extraction(entities, list(dict.fromkeys(relations)), JIEBA_LABEL, time.perf_counter() - t0)


# ------------------------------------------------------------------------------------------ cache

MEMORY_ENTRIES = 8192
_memory: OrderedDict[str, dict] = OrderedDict()
_lock = threading.Lock()
_shipped: dict[str, dict] | None = None


def key(extractor: str, text: str) -> str:
    h = hashlib.sha1(f"{PROMPT_VERSION}\0{extractor}\0".encode())
    h.update(text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def shipped() -> dict[str, dict]:
    """key -> record of data/graph/extractions.jsonl (read once; empty when the file is missing)."""
    global _shipped
    if _shipped is None:
        table: dict[str, dict] = {}
        if SHIPPED.is_file():
            for line in SHIPPED.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    rec = json.loads(line)
                    table[rec["key"]] = rec
        _shipped = table
    return _shipped


def cached(extractor: str, text: str) -> Extraction | None:
    k = key(extractor, text)
    with _lock:
        rec = _memory.get(k)
        if rec is not None:
            _memory.move_to_end(k)
    rec = rec or shipped().get(k)
    if rec is None:
        return None
    # only a model's extractions are cached, and its raw output is what counts: the checks against the text run
    # again, so a change to them applies to shipped extractions without running the model again
    ex = parse(rec["raw"], text, rec["extractor"], float(rec.get("seconds", 0.0)), messages_for(text))
    ex.cached = True
    return ex


def remember(text: str, ex: Extraction) -> None:
    with _lock:
        _memory[key(ex.extractor, text)] = ex.to_record()
        while len(_memory) > MEMORY_ENTRIES:
            _memory.popitem(last=False)


def llm_extract(text: str, chat, control: RunControl | None = None) -> Extraction:
    """One chunk through the model under the grammar (cached)."""
    hit = cached(chat.label, text)
    return hit if hit is not None else _run_model(text, chat, control)


def _run_model(text: str, chat, control: RunControl | None) -> Extraction:
    messages = messages_for(text)
    t0 = time.perf_counter()
    raw = str(chat.complete(messages, max_tokens=MAX_TOKENS, temperature=0.0, grammar=GRAMMAR, control=control))
    ex = parse(raw, text, chat.label, time.perf_counter() - t0, messages)
    remember(text, ex)
    return ex


def extract_all(texts: Sequence[str], chat=None, control: RunControl | None = None,
                progress: Callable[[int, int], None] | None = None) -> tuple[list[Extraction], dict]:
    """One Extraction per text: with `chat`, the model's (cached ones reused); without, jieba's. A text the
    model's output could not be parsed for falls back to jieba for that text, and the cost says so; a Stop or a
    failing endpoint raises (a stopped run is not a failed chunk)."""
    control = control if control is not None else RunControl()
    out: list[Extraction] = []
    counts = {"generated": 0, "cached": 0, "failed": 0}
    model_seconds = 0.0
    t0 = time.perf_counter()
    for i, text in enumerate(texts, 1):
        control.check("graph extraction")
        hit = cached(chat.label, text) if chat is not None else None
        if chat is None:
            ex = jieba_extract(text)
        elif hit is not None:
            ex = hit
            counts["cached"] += 1
        else:
            try:
                ex = _run_model(text, chat, control)
            except UnreadableExtraction:
                counts["failed"] += 1
                ex = jieba_extract(text)
            else:
                counts["generated"] += 1
                model_seconds += ex.seconds
        out.append(ex)
        if progress is not None:
            progress(i, len(texts))
    cost: dict[str, Any] = {**counts, "model_seconds": model_seconds,
                            "extractor": chat.label if chat is not None else JIEBA_LABEL,
                            "seconds": time.perf_counter() - t0,
                            "seconds_per_generated": model_seconds / counts["generated"] if counts["generated"] else 0.0}
    return out, cost

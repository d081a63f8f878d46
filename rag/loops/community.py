"""A community's summary: what its chunks say, in their language, never a sentence they do not state.

The model is given the community's evidence, not just its entity names: the few sentences of its chunks that name the
most of its entities (weighted by how specific each entity is), and asked for a one-sentence summary in their
language. What it does with them depends on what it can do:

- a model that can score a reply (the bundled one) chooses: each evidence sentence, as the whole reply, gets the
  model's per-token probability (teacher-forced, as rag/answer/lead.py chooses a leading quote), and the most likely
  one is the summary, quoted as the chunk writes it. The 0.5B, asked to write, copied a sentence or two nearly word
  for word where it was right, and where it wrote its own words it swapped names ("巴黎广场" for 克利希广场, "大霉素"),
  moved a neighbour onto the wrong side of a county, or dropped a "he thought" (2026-12-05, the two shipped graphs): so
  it chooses and does not write;
- a model that cannot (an endpoint) writes one or two sentences, and every one is audited (rag/audit/support.py)
  against the community's chunks; one the audit does not call supported, one in the other language, one that only
  says "these entities are about", a bare list of names, one whose subject is a name the chunks never use or whose
  words are mostly its own, or one cut off by the token limit is dropped, and the page lists each with its reason;
- with no model, or when nothing written survives, the summary is the community's most central sentence, quoted.

Summaries are cached by sha1(version, model, evidence) and shipped for the bundled corpora in
data/graph/summaries.jsonl (scripts/precompute_graph.py --summaries writes it); tests/test_graph.py audits the shipped
ones again.
Not handled here: the graph and its communities (graph.py, store.py).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from rag.audit.answer_form import ANAPHORA
from rag.audit.citations import sentence_claims
from rag.audit.support import check_sentence
from rag.errors import LLMUnsupportedError
from rag.graph.extraction import fold, occurs
from rag.graph.graph import Community, CorpusGraph
from rag.index.tokenize import jieba_spans
from rag.ingest.language import detect_lang
from rag.ingest.sentences import split_sentences
from rag.messages import Msg, join
from rag.models.control import RunControl
from rag.models.local_llm import local_label

SUMMARIES = Path(__file__).resolve().parents[2] / "data" / "graph" / "summaries.jsonl"
SUMMARY_VERSION = "community-v3"
SUMMARY_TOKENS = 120
EVIDENCE_SENTENCES = 4  # the sentences the model is shown: enough for two or three ideas, short for a 0.5B model
EVIDENCE_CHUNKS = 8  # the community's chunks read for them (its most-mentioning first), and audited against
MAX_SENTENCE_CHARS = 240  # longer "sentences" are lists or tables run together: not shown as evidence
SUMMARY_COVERAGE = 0.85  # the prompt asks for the text's own words: below this share, the model's paraphrase
MAX_SENTENCES = 2  # a summary, not a copy of the chunks: further sentences are dropped as "too-long"
QUOTE = Msg(en="a quote: the community's most central sentence (no sentence the model wrote passed the audit)",
            zh="原文摘句：社区里最有代表性的一句（模型写的句子都没有通过审计）")
STAND_IN = Msg(en="extractive stand-in (no model): the community's most central sentence, quoted",
               zh="抽取式替代（没有模型）：引用社区里最有代表性的一句原文")
BY = {"chosen": Msg(en="the model's choice among the community's sentences", zh="模型从社区原文中选出的一句"),
      "model": Msg(en="the model, each sentence checked by the audit", zh="模型写，每句经审计核对"),
      "quote": Msg(en="a quote (nothing the model wrote passed)", zh="原文摘句（模型写的都没通过）"),
      "stand-in": Msg(en="a quote (no model)", zh="原文摘句（没有模型）")}
WHY = {"other-language": Msg(en="not in the documents' language", zh="不是文档的语言"),
       "template-opener": Msg(en="only says what 'these texts' are about", zh="只是“这些原文讲的是…”的套话"),
       "not-a-sentence": Msg(en="a list of names with nothing said of them", zh="只列了名词，没有陈述"),
       "new-name": Msg(en="its subject is a name the chunks never use", zh="主语是这些块里没有的名称"),
       "own-words": Msg(en="the model's own words: too little of it is in the chunks", zh="模型自己的说法：大部分词不在这些块里"),
       "cut-off": Msg(en="cut off mid-sentence", zh="句子没写完就断了"),
       "too-long": Msg(en="beyond the two sentences a summary keeps", zh="超出概要保留的两句"),
       "unsupported": Msg(en="the audit: unsupported", zh="审计：没有支撑"),
       "weak": Msg(en="the audit: weakly supported", zh="审计：支撑不足"),
       "contradicted": Msg(en="the audit: contradicted", zh="审计：与原文矛盾"),
       "restates-question": Msg(en="only restates a question", zh="只是复述问题")}
ENTRIES = 2000  # summaries kept in memory: about 2,000 communities of every session's uploads
_lock = threading.Lock()
_cache: OrderedDict[str, CommunitySummary] = OrderedDict()  # key -> summary, shared by every session: bounded
_shipped: dict[str, CommunitySummary] | None = None

# "这组实体讲的是…", "These entities are about…": the prompt's own words, not a summary's
_META_OPENER = re.compile(
    r"^(?:这(?:组|些|个)(?:实体|原文|句子|社区|内容|资料)|该社区|以上(?:原文|内容|句子))(?:共同|主要|都)*"
    r"(?:讲的是|讲述了|讲了|介绍了|描述了|讨论了|说明了|讲|介绍|描述|讨论|涉及|是关于|关于)[：:，, ]*"
    r"|^这(?:个|篇|份|段)?(?:文档|文本|原文)(?:的主要目的是|主要|的主题是)?(?:讲的是|描述了|介绍了|讨论了|说明了|是|讲)?"
    r"|^(?:these|the above)\s+(?:entities|sentences|texts|passages)\s+(?:are\s+about|describe|discuss|cover)\s+"
    r"|^this\s+community\s+(?:of\s+\w+(?:\s+\w+)?\s+)?(?:is\s+about|describes|covers)\s+", re.IGNORECASE)


@dataclass(frozen=True)
class CommunitySummary:
    text: str  # what the page shows
    by: str  # "chosen" (the model's most likely evidence sentence), "model" (written, each sentence audited),
    # "quote" (nothing written passed) or "stand-in" (no model)
    dropped: tuple[tuple[str, str], ...] = ()  # (sentence the model wrote, why it was dropped: a label)
    choices: tuple[tuple[str, float], ...] = ()  # what the model chose among: (sentence, per-token probability)

    def record(self) -> dict:
        return {"summary": self.text, "by": self.by, "dropped": [list(d) for d in self.dropped],
                "choices": [list(c) for c in self.choices]}


def evidence(graph: CorpusGraph, c: Community, texts: Mapping[str, str]) -> list[tuple[str, str]]:
    """(chunk id, sentence) for the EVIDENCE_SENTENCES sentences of `c`'s chunks that name the most of its
    entities, each entity weighted by its idf; at most two from one chunk, in the corpus's order."""
    names = {e: [e, *graph.g.nodes[e].get("aliases", [])] for e in c.entities
             if e in graph.g and not graph.g.nodes[e].get("fragment")}
    scored = []
    for rank, cid in enumerate(c.chunk_ids[:EVIDENCE_CHUNKS]):
        for pos, sentence in enumerate(split_sentences(texts.get(cid, ""), semicolons=False)):
            sentence = sentence.strip()
            if not _evidence_sentence(sentence):
                continue
            folded = fold(sentence)
            named = [e for e, spellings in names.items() if any(occurs(s, folded) for s in spellings)]
            if named:
                scored.append((sum(graph.idf(e) for e in named), len(named), -rank, -pos, cid, sentence))
    chosen: list[tuple] = []
    per_chunk: dict[str, int] = {}
    for item in sorted(scored, reverse=True):
        if per_chunk.get(item[4], 0) < 2 and item[5] not in {x[5] for x in chosen}:
            chosen.append(item)
            per_chunk[item[4]] = per_chunk.get(item[4], 0) + 1
        if len(chosen) == EVIDENCE_SENTENCES:
            break
    return [(x[4], x[5]) for x in sorted(chosen, key=lambda x: (-x[2], -x[3]))]


def _evidence_sentence(sentence: str) -> bool:
    """A sentence that can stand as evidence: a statement (not the question a FAQ's title asks, not a section path,
    not a list run together) that does not lean on the one before it ("它…", "此外…")."""
    return (bool(sentence) and len(sentence) <= MAX_SENTENCE_CHARS and " › " not in sentence
            and sentence[-1:] not in "？?：:" and not sentence.startswith(ANAPHORA))


def messages(lang: str, sentences: list[str]) -> list[dict]:
    """The prompt: the evidence sentences and what to write, in `lang`."""
    lines = "\n".join(f"- {s}" for s in sentences)
    if lang == "zh":
        return [{"role": "system", "content": "你只根据给出的原文写概要。"},
                {"role": "user", "content": f"原文：\n{lines}\n\n用一两句中文概括这些原文讲的概念和它们之间的关系。"
                                            "只用原文里有的说法，不要加入原文没有的内容。只输出概要。"}]
    return [{"role": "system", "content": "You write summaries from the given text only."},
            {"role": "user", "content": f"Text:\n{lines}\n\nIn one or two English sentences, say what concepts "
                                        "this text is about and how they relate. Use only what the text says; add "
                                        "nothing it does not say. Output only the summary."}]


def key(model: str, content: str) -> str:
    return hashlib.sha1(f"{SUMMARY_VERSION}\0{model}\0{content}".encode("utf-8", "surrogatepass")).hexdigest()


def audited(written: str, lang: str, chunks: Mapping[str, str], quote: str) -> CommunitySummary:
    """What the model `written` keeps after the audit: each sentence supported by `chunks`, in `lang`, not the
    prompt's opener; else `quote`."""
    kept: list[str] = []
    dropped: list[tuple[str, str]] = []
    claims = [claim for _, _, claim in sentence_claims(written)]
    for i, claim in enumerate(claims):
        body = _META_OPENER.sub("", claim).strip()
        if not body:
            continue
        if i == len(claims) - 1 and body[-1:] not in "。！？.!?":
            dropped.append((claim, "cut-off"))  # a reply the token limit cut: the rest of the sentence is missing
            continue
        if len(kept) == MAX_SENTENCES:
            dropped.append((claim, "too-long"))
            continue
        if detect_lang(body) != lang:
            dropped.append((claim, "other-language"))
            continue
        if body != claim:
            dropped.append((claim, "template-opener"))
            continue
        if _bare_list(body, lang):
            dropped.append((claim, "not-a-sentence"))
            continue
        subject = _subject(body, lang)
        if subject and not any(_names(subject, t) for t in chunks.values()):
            dropped.append((claim, "new-name"))  # "巴黎广场是…" where the chunks say 克利希广场
            continue
        found = check_sentence(body, chunks)
        if found.label != "supported":
            dropped.append((claim, found.label))
        elif found.coverage < SUMMARY_COVERAGE:
            dropped.append((claim, "own-words"))
        else:
            kept.append(body)
    if kept:
        sep = "" if lang == "zh" else " "
        return CommunitySummary(sep.join(_closed(k, lang) for k in kept), "model", tuple(dropped))
    return CommunitySummary(quote, "quote", tuple(dropped))


_SUBJECT_ZH = re.compile(r"^(.{2,8}?)(?:是|位于|为|指|在|由|：|:|，|,)")
_SUBJECT_EN = re.compile(r"^((?:\S+\s+){0,3}?\S+)\s+(?:is|are|was|were|has|have|refers|means)\b|^([^,:]{2,40})[,:]")


def _subject(body: str, lang: str) -> str:
    """The name a sentence opens with, when it is short enough to be one ("LoRA是…", "微调：…", "BM25 is…"): it must
    be a name the chunks use, since a small model's summary goes wrong first in its subject (巴黎广场, 沙巴岛)."""
    m = (_SUBJECT_ZH if lang == "zh" else _SUBJECT_EN).match(body)
    if not m:
        return ""
    name = (m.group(1) or m.group(2) or "") if lang != "zh" else m.group(1)
    return name.strip()


def _names(subject: str, text: str) -> bool:
    """`text` uses `subject` as a name: it holds it starting where a word starts ("大霉素" is not a name that
    "庆大霉素" uses)."""
    starts = {a for _, a, _ in jieba_spans(text)}
    want = subject.casefold()
    folded = text.casefold()
    i = folded.find(want)
    while i >= 0:
        if i in starts or (want[:1].isascii() and not folded[i - 1:i].isalnum()):
            return True
        i = folded.find(want, i + 1)
    return False


def _bare_list(body: str, lang: str) -> bool:
    """A list of names with nothing said of them ("模型的容量、特征、正则化、训练轮数。"): no sentence."""
    items = [x.strip() for x in re.split(r"[、]" if lang == "zh" else r"[,;]", body.rstrip("。.！!")) if x.strip()]
    short = all(len(x) <= 12 for x in items) if lang == "zh" else all(len(x.split()) <= 3 for x in items)
    return len(items) >= 3 and short


def _closed(sentence: str, lang: str) -> str:
    return sentence if sentence[-1:] in "。！？.!?" else sentence + ("。" if lang == "zh" else ".")


def summarize(graph: CorpusGraph, c: Community, texts: Mapping[str, str], chat=None,
              control: RunControl | None = None, model: str | None = None) -> CommunitySummary:
    """`c`'s summary: cached or shipped for `model` (default: the chat's, else the bundled model's), else written
    by `chat` and audited, else the stand-in quote."""
    found = evidence(graph, c, texts)
    if not found:
        return CommunitySummary("", "stand-in")
    sentences = [s for _, s in found]
    quote = max(found, key=lambda x: (x[1][-1:] in "。！？.!?", _centrality(graph, c, x[1])))[1]
    lang = detect_lang("".join(sentences))
    model = model or (chat.label if chat is not None else local_label())
    k = key(model, "\n".join(sentences))
    have = _remembered(k) or shipped().get(k)
    if have is not None:
        return have
    if chat is None:
        return CommunitySummary(quote, "stand-in")
    try:
        out = chosen(chat, lang, sentences, control)
    except LLMUnsupportedError:  # an endpoint cannot score a reply: it writes, and the audit reads what it wrote
        written = str(chat.complete(messages(lang, sentences), max_tokens=SUMMARY_TOKENS, temperature=0.0,
                                    control=control)).strip()
        out = audited(written, lang, {cid: texts[cid] for cid in c.chunk_ids[:EVIDENCE_CHUNKS] if cid in texts}, quote)
    _remember(k, out)
    return out


def chosen(chat, lang: str, sentences: list[str], control: RunControl | None = None) -> CommunitySummary:
    """The evidence sentence the model finds most likely as the whole reply to the summary prompt (the mean of its
    tokens' log-probabilities, as lead.py: a sum would favour the shortest). Raises LLMUnsupportedError from a backend
    that cannot score a reply."""
    prompt = messages(lang, sentences)
    scored = []
    for sentence in sentences:
        lps = chat.continuation_logprobs(prompt, sentence, control=control)
        scored.append((sentence, math.exp(sum(lps) / len(lps)) if lps else 0.0))
    best = max(range(len(scored)), key=lambda i: (scored[i][1], -i))
    return CommunitySummary(scored[best][0], "chosen", (), tuple(scored))


def _centrality(graph: CorpusGraph, c: Community, sentence: str) -> float:
    """How much of the community a sentence names: its entities' idf weighted by their rank in the community."""
    folded = fold(sentence)
    return sum(graph.idf(e) / (1 + i) for i, e in enumerate(c.entities[:12]) if occurs(e, folded))


def summaries(graph: CorpusGraph, texts: Mapping[str, str], chat=None, control: RunControl | None = None,
              model: str | None = None) -> tuple[dict[int, CommunitySummary], Msg]:
    """(community id -> its summary, who wrote them): see `summarize`."""
    model = model or (chat.label if chat is not None else local_label())
    out = {c.cid: summarize(graph, c, texts, chat, control, model) for c in graph.communities}
    return out, written_by(out.values(), model)


def written_by(found, model: str) -> Msg:
    """Who wrote a set of summaries: the model (audited), quotes, the stand-in, with counts."""
    n = {"chosen": 0, "model": 0, "quote": 0, "stand-in": 0}
    for s in found:
        if s.text:
            n[s.by] += 1
    parts = []
    if n["chosen"]:
        parts.append(Msg(en=f"{model}, choosing among the community's own sentences ({n['chosen']})",
                         zh=f"{model} 从社区的原文句子中选出（{n['chosen']} 个）"))
    if n["model"]:
        parts.append(Msg(en=f"{model}, each sentence checked by the audit ({n['model']})",
                         zh=f"{model} 写，每句都经审计核对（{n['model']} 个）"))
    if n["quote"]:
        parts.append(Msg(en=f"{QUOTE} ({n['quote']})", zh=f"{QUOTE.zh}（{n['quote']} 个）"))
    if n["stand-in"]:
        parts.append(Msg(en=f"{STAND_IN} ({n['stand-in']})", zh=f"{STAND_IN.zh}（{n['stand-in']} 个）"))
    return join(parts, "; ", "；") if parts else Msg(en="none", zh="无")


def shipped() -> dict[str, CommunitySummary]:
    global _shipped
    if _shipped is None:
        table = {}
        if SUMMARIES.is_file():
            for line in SUMMARIES.read_text(encoding="utf-8").splitlines():
                if line.strip():
                    rec = json.loads(line)
                    table[rec["key"]] = CommunitySummary(rec["summary"], rec.get("by", "model"),
                                                         tuple(tuple(d) for d in rec.get("dropped", ())),
                                                         tuple((c, float(p)) for c, p in rec.get("choices", ())))
        _shipped = table
    return _shipped


def _remembered(k: str) -> CommunitySummary | None:
    with _lock:
        found = _cache.get(k)
        if found is not None:
            _cache.move_to_end(k)
        return found


def _remember(k: str, summary: CommunitySummary) -> None:
    with _lock:
        _cache[k] = summary
        while len(_cache) > ENTRIES:
            _cache.popitem(last=False)


def summary_record(graph: CorpusGraph, c: Community, texts: Mapping[str, str], model: str,
                   summary: CommunitySummary) -> dict:
    """The shipped file's line for `c`'s summary."""
    return {"key": key(model, "\n".join(s for _, s in evidence(graph, c, texts))), "model": model, **summary.record()}

"""One question's whole journey through the pipeline, kept so every page can show every stage.

A `Trace` holds the question, the settings, the rewrites, each retriever's ranked list, the fused
list, the reranked list with its moves, the contexts the generator was given, the exact prompt, the
answer (and the no-RAG answer), the citation audit, per-stage timings and which backend served each
stage (with fallbacks labelled as such). It serialises to JSON and to a Markdown handout.
Not handled here: running the stages (pipeline.py) or rendering them (app_pages/).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from rag.ingest.chunking import Chunk
from rag.answer.citations import CitationAudit, CitationEvent
from rag.answer.grounding import Grounding
from rag.search.hits import Hit
from rag import defaults
from rag.answer.answerability import Answerability
from rag.answer.compress import Compression
from rag.answer.fill_in import FillIn
from rag.answer.prompt import Prompt
from rag.search.rerank import RerankResult
from rag.search.retrieval import RetrievalResult


@dataclass(frozen=True)
class AskSettings:
    mode: str = "hybrid"  # dense | bm25 | hybrid | sparse: the list that feeds rerank/generation
    recall_n: int = 20  # candidates taken from retrieval (and given to the reranker)
    top_k: int = 5  # contexts given to the generator
    depth: int = 50  # candidates per retriever before fusion
    rrf_k: int = 60
    weights: tuple[tuple[str, float], ...] = (("dense", 1.0), ("bm25", 1.0))  # RRF weight per list (sparse too)
    sparse: bool = False  # the learned-sparse list joins the fusion (the index must have it: with_sparse)
    rerank: bool = True
    rewrite: str = "none"  # none | hyde | multi-query
    n_queries: int = 3  # multi-query variants (the original is added)
    compare_no_rag: bool = False
    lang: str = "auto"  # auto | zh | en
    cite: str = "free"  # free | constrained (a grammar allows only the context refs in brackets)
    second_opinion: bool = False  # the audit also asks a model's yes/no on each sentence its checks call supported
    gate: bool = defaults.GATE  # refuse before generating when no context sentence answers (answerability.py)
    fill_in: bool = defaults.FILL_IN  # append, quoted, the stand-in's sentences the model's answer leaves out
    compress: bool = defaults.COMPRESS  # a model reads only each context's sentences that answer (compress.py)
    compress_tokens: int = defaults.COMPRESS_TOKENS  # the kept sentences' budget, all contexts together
    prompt_style: str = defaults.PROMPT_STYLE  # answer-first | plain (rag/answer/prompt.py)


@dataclass
class Trace:
    question: str
    settings: AskSettings
    backends: dict[str, str] = field(default_factory=dict)  # stage -> what served it (fallbacks say so)
    notes: list[str] = field(default_factory=list)  # visible remarks: fallbacks, skipped stages and why
    rewrites: dict[str, Any] = field(default_factory=dict)  # {"hyde": str} or {"queries": [...]}
    retrieval: RetrievalResult | None = None  # dense / bm25 / hybrid lists for the question
    per_query: list[RetrievalResult] = field(default_factory=list)  # multi-query: one per query
    candidates: list[Hit] = field(default_factory=list)  # what went into rerank (recall_n)
    rerank: RerankResult | None = None
    final: list[Hit] = field(default_factory=list)  # top_k after rerank (or after retrieval)
    contexts: list[Chunk] = field(default_factory=list)  # what the generator saw (parents for children)
    graph_block: str = ""  # GraphRAG: the relation lines the prompt adds after the contexts (rag/loops/graph_rag.py)
    answerability: Answerability | None = None  # the gate's decision and its evidence (settings.gate)
    compression: Compression | None = None  # what the model did not see of each context (settings.compress)
    fill_in: list[FillIn] = field(default_factory=list)  # the stand-in's sentences checked against the answer
    prompt: Prompt | None = None
    answer: str = ""
    model_answer: str | None = None  # what the model wrote, before fill-in appended quotes (None: nothing appended)
    citation_events: list[CitationEvent] = field(default_factory=list)
    audit: CitationAudit | None = None
    no_rag_prompt: Prompt | None = None
    no_rag_answer: str | None = None
    no_rag_generation: dict[str, float] = field(default_factory=dict)  # the no-RAG answer's figures, as `generation`
    no_rag_grounding: list[Grounding] = field(default_factory=list)  # each no-RAG sentence's best support in the corpus
    dropped_contexts: list[str] = field(default_factory=list)  # refs left out to fit the model's context window
    generation: dict[str, float] = field(default_factory=dict)  # first_token_s, tokens, decode_s, decode_tok_per_s
    error: str | None = None  # the generation broke off mid-answer: `answer` is what arrived
    timings: dict[str, float] = field(default_factory=dict)  # stage -> seconds

    def to_dict(self) -> dict[str, Any]:
        return to_plain(self)

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)

    def to_markdown(self) -> str:
        return render_markdown(self)


def to_plain(obj: Any) -> Any:
    """Dataclasses -> dicts, recursively; properties like validity_rate are included where defined."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out = {f.name: to_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
        for name in ("validity_rate", "unsupported_rate"):
            if hasattr(type(obj), name):
                out[name] = getattr(obj, name)
        return out
    if isinstance(obj, dict):
        return {str(k): to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v) for v in obj]
    if isinstance(obj, float):
        return round(obj, 6)
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalar
        return to_plain(obj.item())
    return obj


def _hit_table(hits: list[Hit], trace: Trace, limit: int = 10) -> list[str]:
    rows = ["| rank | chunk | score | text |", "|---|---|---|---|"]
    by_id = {c.chunk_id: c for c in trace.contexts}
    for h in hits[:limit]:
        text = by_id[h.chunk_id].text if h.chunk_id in by_id else ""
        text = text.replace("\n", " ").replace("|", "\\|")[:60]
        rows.append(f"| {h.rank} | `{h.chunk_id}` | {h.score:.4f} | {text} |")
    return rows


def support_text(s) -> str:
    """A sentence's audit label in words; an uncited sentence names the context that supports it."""
    if s.label != "no-citation":
        return s.label
    if s.best_ref and s.best_label in ("supported", "weak"):
        return f"no-citation, but {s.best_label} by {s.best_ref}"
    if s.best_ref and s.best_label in ("contradicted", "restates-question"):
        return f"no-citation, and {s.best_label} against {s.best_ref}"
    return "no-citation, and no context supports it" if s.best_label else "no-citation"


def grounding_text(g: Grounding) -> str:
    if g.label is None:
        return "-"
    if g.best_ref and g.label in ("supported", "weak"):
        return f"{g.label} by {g.best_ref}"
    if g.best_ref and g.label in ("contradicted", "restates-question"):
        return f"{g.label} against {g.best_ref}"
    return "nothing in the corpus supports it"


def reasons_text(support, lang: str = "en") -> str:
    """The checker's reasons for a label, joined: the failed checks', else the passed ones'."""
    return "; ".join(support.reasons(lang)) if support is not None else ""


def _cell(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def render_markdown(trace: Trace) -> str:
    """A readable handout of one question's journey."""
    s = trace.settings
    out = [f"# RAG trace: {trace.question}", ""]
    out += ["## Settings and backends", ""]
    out += [f"- **{k}**: {v}" for k, v in trace.backends.items()]
    out += [
        f"- **retrieval**: mode={s.mode}, recall_n={s.recall_n}, top_k={s.top_k}, depth={s.depth}, "
        f"RRF k={s.rrf_k}, weights={dict(s.weights)}, rerank={s.rerank}, rewrite={s.rewrite}"
    ]
    out += [f"- note: {n}" for n in trace.notes]
    if trace.rewrites:
        out += ["", "## Query rewriting", ""]
        if "hyde" in trace.rewrites:
            out += ["HyDE hypothetical answer:", "", "> " + str(trace.rewrites["hyde"]).replace("\n", "\n> ")]
        for i, q in enumerate(trace.rewrites.get("queries", []), 1):
            out.append(f"{i}. {q}")
    if trace.retrieval is not None:
        for name in ("dense", "bm25", "hybrid"):
            out += ["", f"## Retrieval: {name}", ""] + _hit_table(getattr(trace.retrieval, name), trace)
    if trace.rerank is not None:
        why = {w.chunk_id: w for w in trace.rerank.why}  # the learned ranker's largest contributions
        extra = (" main reasons (feature contributions) |", "---|") if why else ("", "")
        out += ["", f"## Rerank ({trace.rerank.reranker})", "", "| chunk | before | after | score |" + extra[0],
                "|---|---|---|---|" + extra[1]]
        for m in trace.rerank.moves:
            after = m.after if m.after is not None else "dropped"
            reasons = " " + ", ".join(why[m.chunk_id].reasons(3)) + " |" if why else ""
            out.append(f"| `{m.chunk_id}` | {m.before} | {after} | {m.score:.4f} |{reasons}")
    if trace.answerability is not None:
        a = trace.answerability
        out += ["", "## Answerability (before generating)", "", f"- decision: {a.reason('en')}"]
        if a.best_sentence:
            out.append(f"- best sentence [{a.best_ref}]: {a.best_sentence}")
        out += [f"- {k}: {v:.3f}" for k, v in a.signals.items()]
    out += ["", "## Contexts given to the generator", ""]
    if trace.compression is not None:
        out += [trace.compression.summary() + "; ~~struck~~ sentences were not shown to the model", ""]
    kept = {c.ref: c for c in trace.compression.chunks} if trace.compression is not None else {}
    for i, c in enumerate(trace.contexts, 1):
        shown = c.text
        if c.ref in kept:
            shown = "".join(x.text if x.kept else f"~~{x.text.strip()}~~" for x in kept[c.ref].sentences)
        out += [f"**[{i}] {c.ref}**", "", "> " + shown.replace("\n", "\n> "), ""]
    if trace.prompt is not None:
        out += ["## Exact prompt", ""]
        for m in trace.prompt.messages:
            out += [f"**{m['role']}**", "", "```", m["content"], "```", ""]
    out += ["## Answer", "", trace.answer or "(empty)", ""]
    if trace.model_answer is not None:
        out += ["The model wrote the text before the first 「; the quoted sentences after it are the extractive "
                "stand-in's picks that the model's answer left out.", ""]
    if trace.audit is not None:
        a = trace.audit
        out += [
            "## Citation audit",
            "",
            f"- cited: {', '.join(a.cited) or '-'}",
            f"- valid: {', '.join(a.valid) or '-'}",
            f"- hallucinated: {', '.join(a.hallucinated) or '-'}",
            f"- unused: {', '.join(a.unused) or '-'}",
            "",
            "| sentence | refs | evidence span | coverage | label | why |",
            "|---|---|---|---|---|---|",
        ]
        for ss in a.sentences:
            span = ss.support.evidence.text if ss.support is not None and ss.support.evidence else ""
            out.append(f"| {_cell(ss.sentence)} | {', '.join(ss.refs) or '-'} | {_cell(span) or '-'} | {ss.coverage:.2f} "
                       f"| {support_text(ss)} | {_cell(reasons_text(ss.support))} |")
    if trace.no_rag_answer is not None:
        out += ["", "## Without RAG (same question, no context)", "", trace.no_rag_answer]
        if trace.no_rag_grounding:
            out += ["", "| sentence | support found in the corpus |", "|---|---|"]
            for g in trace.no_rag_grounding:
                sent = g.sentence.replace("|", "\\|").replace("\n", " ")
                out.append(f"| {sent} | {grounding_text(g)} |")
    out += ["", "## Timings (s)", ""] + [f"- {k}: {v:.3f}" for k, v in trace.timings.items()]
    return "\n".join(out) + "\n"

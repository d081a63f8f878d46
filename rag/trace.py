"""One question's whole journey through the pipeline, kept so every page can show every stage.

A `Trace` holds the question, the settings, the rewrites, each retriever's ranked list, the fused
list, the reranked list with its moves, the contexts the generator was given, the exact prompt, the
answer (and the no-RAG answer), the citation audit, per-stage timings and which backend served each
stage (with fallbacks labelled as such). It serialises to JSON and to a Markdown handout.
Not handled here: running the stages (pipeline.py) or rendering them (app_pages/).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Literal

from rag import defaults, jsonout
from rag.answer.answerability import Answerability
from rag.answer.compress import Compression
from rag.answer.fill_in import FillIn
from rag.answer.lead import LeadChoice
from rag.answer.prompt import Prompt
from rag.answer.rebind import Rebound
from rag.audit.asked import SlotCheck
from rag.audit.citations import CitationAudit, CitationEvent
from rag.audit.grounding import Grounding
from rag.ingest.chunking import Chunk
from rag.messages import Msg, localized
from rag.search.hits import Hit
from rag.search.rerank import RerankResult
from rag.search.retrieval import Mode, RetrievalResult, Search
from rag.stages import Report, joined
from rag.waterfall import STAGE_NAMES, TRACE_KEYS

Rewrite = Literal["none", "hyde", "multi-query"]  # REWRITES (rag/pipeline.py)
AnswerLang = Literal["auto", "zh", "en"]
CiteMode = Literal["free", "constrained"]  # CITE_MODES (rag/answer/citation_grammar.py)
PromptStyle = Literal["answer-first", "plain"]  # PROMPT_STYLES (rag/answer/prompt.py)


@dataclass(frozen=True)
class AskSettings:
    mode: Mode = "hybrid"  # the list that feeds rerank/generation
    recall_n: int = 20  # candidates taken from retrieval (and given to the reranker)
    top_k: int = 5  # contexts given to the generator
    depth: int = 50  # candidates per retriever before fusion
    rrf_k: int = 60
    weights: tuple[tuple[str, float], ...] = (("dense", 1.0), ("bm25", 1.0))  # RRF weight per list (sparse too)
    sparse: bool = False  # the learned-sparse list joins the fusion (the index must have it: with_sparse)
    rerank: bool = True
    rewrite: Rewrite = "none"
    n_queries: int = 3  # multi-query variants (the original is added)
    compare_no_rag: bool = False
    lang: AnswerLang = "auto"
    cite: CiteMode = "free"  # constrained: a grammar allows only the context refs in brackets
    second_opinion: bool = False  # the audit also asks a model's yes/no on each sentence its checks call supported
    gate: bool = defaults.GATE  # refuse before generating when no context sentence answers (answerability.py)
    fill_in: bool = defaults.FILL_IN  # append, quoted, the stand-in's sentences the model's answer leaves out
    compress: bool = defaults.COMPRESS  # a model reads only each context's sentences that answer (compress.py)
    compress_tokens: int = defaults.COMPRESS_TOKENS  # the kept sentences' budget, all contexts together
    prompt_style: PromptStyle = defaults.PROMPT_STYLE  # rag/answer/prompt.py

    def search(self, k: int | None = None, depth: int | None = None) -> Search:
        """The retrieval these settings ask for: their mode, RRF constant, list weights and sparse list, keeping `k`
        hits (default recall_n) from `depth` candidates a list (default the settings' depth)."""
        return Search(self.mode, self.recall_n if k is None else k, self.depth if depth is None else depth, self.rrf_k,
                      dict(self.weights), self.sparse)


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
    rebound: list[Rebound] = field(default_factory=list)  # model citations moved to the chunk that states the sentence
    restated: list[str] = field(default_factory=list)  # the model's sentences set aside: they restate the question or the prompt, or are a bare number or ref
    off_question: list[str] = field(default_factory=list)  # set aside: from an entry the stand-in quotes nothing from, no word of the question its anchor entry lacks
    unsupported: list[str] = field(default_factory=list)  # set aside: the audit does not call it supported, or it leaves the asked slot empty
    model_audit: CitationAudit | None = None  # the audit of what the model wrote, before anything was set aside
    fill_in: list[FillIn] = field(default_factory=list)  # the stand-in's sentences checked against the answer
    prompt: Prompt | None = None
    answer: str = ""
    model_answer: str | None = None  # what the model wrote, before fill-in appended quotes (None: nothing appended)
    lead: LeadChoice | None = None  # the model's choice of the quote that leads, when nothing it wrote was left
    citation_events: list[CitationEvent] = field(default_factory=list)
    audit: CitationAudit | None = None
    asked: SlotCheck | None = None  # what the question asks for (a number, a list, a reason…) and the sentence that gives it
    no_rag_prompt: Prompt | None = None
    no_rag_answer: str | None = None
    no_rag_generation: dict[str, float] = field(default_factory=dict)  # the no-RAG answer's figures, as `generation`
    no_rag_grounding: list[Grounding] = field(default_factory=list)  # each no-RAG sentence's best support in the corpus
    dropped_contexts: list[str] = field(default_factory=list)  # refs left out to fit the model's context window
    generation: dict[str, float] = field(default_factory=dict)  # first_token_s, tokens, decode_s, decode_tok_per_s
    error: str | None = None  # the generation broke off mid-answer: `answer` is what arrived
    garbled: str | None = None  # why the model's answer was no answer (rag/audit/shape.py): the stand-in's shown
    timings: dict[str, float] = field(default_factory=dict)  # stage -> seconds

    def then(self, report: Report | None = None, **fields: Any) -> Trace:
        """A new Trace: this one with `fields` replaced and a stage's report after what is here (its notes, the
        backends it names, its seconds added to a stage's seconds seen before). This one is not changed: rag/pipeline.py
        assembles a run from its stages' results this way."""
        both = joined(Report(tuple(self.notes), self.backends, self.timings), report or Report())
        return dataclasses.replace(self, **fields, notes=list(both.notes), backends=dict(both.backends),
                                   timings=dict(both.timings))

    def set_aside_later(self, claim: str) -> bool:
        """Was the sentence with this claim (a moved citation's, `rebound`) set aside afterwards, as restating or
        off the question? The page then shows it struck through, and the move's note says so."""
        claim = claim.strip()
        return bool(claim) and any(claim in s for s in self.restated + self.off_question + self.unsupported)

    def to_dict(self) -> dict[str, Any]:
        return to_plain(self)

    def to_json(self, indent: int | None = 2) -> str:
        return jsonout.dumps(self.to_dict(), indent=indent)

    def to_markdown(self, lang: str = "en") -> str:
        return render_markdown(self, lang)


def to_plain(obj: Any) -> Any:
    """Dataclasses -> dicts, recursively; properties like validity_rate are included where defined. A field that
    holds a bilingual Msg (a check's reason) is its English text, with its Chinese beside it as `<field>_zh`."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        out = {}
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            out[f.name] = to_plain(value)
            if isinstance(value, Msg):
                out[f"{f.name}_zh"] = value.zh
        for name in ("validity_rate", "unsupported_rate"):
            if hasattr(type(obj), name):
                out[name] = getattr(obj, name)
        return out
    if isinstance(obj, dict):
        return {str(k): to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v) for v in obj]
    if isinstance(obj, float):  # NaN (e.g. a candidate an LLM judge never reached) is "not computed": null
        return round(obj, 6) if math.isfinite(obj) else None
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalar
        return to_plain(obj.item())
    return obj


# The audit's labels, one Msg a label (English is the label itself, as the JSON trace holds it).
AUDIT_LABELS: dict[str, Msg] = {
    "supported": Msg(en="supported", zh="有支撑"), "weak": Msg(en="weak", zh="部分支撑"),
    "unsupported": Msg(en="unsupported", zh="无支撑"), "contradicted": Msg(en="contradicted", zh="与证据矛盾"),
    "restates-question": Msg(en="restates-question", zh="只复述了问题"), "not-enough": Msg(en="not-enough", zh="资料不足"),
    "no-citation": Msg(en="no-citation", zh="未引用")}

# What served each stage (Trace.backends' keys) and the stages timed (Trace.timings' keys), named for tables in
# either language: one Msg a key. A timed stage is named as the waterfall names it (rag/waterfall.py TRACE_KEYS,
# STAGE_NAMES); a test checks that no English term has two Chinese renderings across the app's label tables.
COMPONENTS: dict[str, Msg] = {
    "embedder": Msg(en="embedder", zh="向量模型"), "generator": Msg(en="generator", zh="生成器"),
    "reranker": Msg(en="reranker", zh="重排模型"), "index": Msg(en="knowledge base", zh="知识库"),
    "retrieve": Msg(en="retrieval", zh="检索"), "answerability": Msg(en="answerable?", zh="能否回答"),
    "compression": Msg(en="compression", zh="资料压缩"), "citations": Msg(en="citations", zh="引用"),
    "second opinion": Msg(en="second opinion", zh="模型复核"), "verifier": Msg(en="learned verifier", zh="学习型核对"),
    "graph": Msg(en="knowledge graph", zh="图谱"), "generate": Msg(en="generation", zh="生成"),
    "answer": Msg(en="answer", zh="回答"),
    **{key: STAGE_NAMES[stage] for key, stage in TRACE_KEYS.items()}}


def label_in(label: str, lang: str) -> str:
    return localized(AUDIT_LABELS.get(label, label), lang)


def _hit_table(hits: list[Hit], trace: Trace, w, limit: int = 10) -> list[str]:
    rows = [f"| {w(en='rank', zh='名次')} | {w(en='chunk', zh='块')} | {w(en='score', zh='分数')} | {w(en='text', zh='文本')} |", "|---|---|---|---|"]
    by_id = {c.chunk_id: c for c in trace.contexts}
    for h in hits[:limit]:
        text = by_id[h.chunk_id].text if h.chunk_id in by_id else ""
        text = text.replace("\n", " ").replace("|", "\\|")[:60]
        rows.append(f"| {h.rank} | `{h.chunk_id}` | {h.score:.4f} | {text} |")
    return rows


def support_text(s, lang: str = "en") -> str:
    """A sentence's audit label in words; an uncited sentence names the context that supports it."""
    if s.label != "no-citation":
        return label_in(s.label, lang)
    best = label_in(s.best_label or "", lang)
    if s.best_ref and s.best_label in ("supported", "weak"):
        return f"未引用，但 {s.best_ref} {best}" if lang == "zh" else f"no-citation, but {s.best_label} by {s.best_ref}"
    if s.best_ref and s.best_label in ("contradicted", "restates-question"):
        return f"未引用，且对照 {s.best_ref}：{best}" if lang == "zh" else \
            f"no-citation, and {s.best_label} against {s.best_ref}"
    if s.best_label:
        return "未引用，也没有资料支撑" if lang == "zh" else "no-citation, and no context supports it"
    return label_in("no-citation", lang)


def grounding_text(g: Grounding, lang: str = "en") -> str:
    if g.label is None:
        return "-"
    if g.best_ref and g.label in ("supported", "weak"):
        return f"{g.best_ref} {label_in(g.label, lang)}" if lang == "zh" else f"{g.label} by {g.best_ref}"
    if g.best_ref and g.label in ("contradicted", "restates-question"):
        return f"对照 {g.best_ref}：{label_in(g.label, lang)}" if lang == "zh" else f"{g.label} against {g.best_ref}"
    return "语料里没有支撑它的内容" if lang == "zh" else "nothing in the corpus supports it"


def reasons_text(support, lang: str = "en") -> str:
    """The checker's reasons for a label, joined: the failed checks', else the passed ones'."""
    return ("；" if lang == "zh" else "; ").join(support.reasons(lang)) if support is not None else ""


def _cell(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def words(lang: str):
    """w(en=..., zh=...): the handout's words in `lang`."""
    return (lambda *, en, zh: zh) if lang == "zh" else (lambda *, en, zh: en)


def render_markdown(trace: Trace, lang: str = "en") -> str:
    """A readable handout of one question's journey, in `lang` ("en" or "zh"); the corpus, the prompt and the
    answers stay in their own language."""
    w = words(lang)
    out = [f"# {w(en='RAG trace', zh='RAG 全过程')}: {trace.question}", ""]
    for section in (_md_settings, _md_rewrites, _md_retrieval, _md_rerank, _md_answerability, _md_contexts,
                    _md_prompt, _md_answer, _md_audit, _md_no_rag, _md_timings):
        out += section(trace, lang, w)
    return "\n".join(out) + "\n"


def _md_settings(trace: Trace, lang: str, w) -> list[str]:
    s = trace.settings
    out = [f"## {w(en='Settings and backends', zh='设置与后端')}", ""]
    out += [f"- **{k}**: {localized(v, lang)}" for k, v in trace.backends.items()]
    out += [f"- **{w(en='retrieval', zh='检索')}**: mode={s.mode}, recall_n={s.recall_n}, top_k={s.top_k}, depth={s.depth}, "
            f"RRF k={s.rrf_k}, weights={dict(s.weights)}, rerank={s.rerank}, rewrite={s.rewrite}"]
    return out + [f"- {w(en='note', zh='说明')}: {localized(n, lang)}" for n in trace.notes]


def _md_rewrites(trace: Trace, lang: str, w) -> list[str]:
    if not trace.rewrites:
        return []
    out = ["", f"## {w(en='Query rewriting', zh='查询改写')}", ""]
    if "hyde" in trace.rewrites:
        out += [w(en="HyDE hypothetical answer:", zh="HyDE 写的假设回答："), "",
                "> " + str(trace.rewrites["hyde"]).replace("\n", "\n> ")]
    return out + [f"{i}. {q}" for i, q in enumerate(trace.rewrites.get("queries", []), 1)]


def _md_retrieval(trace: Trace, lang: str, w) -> list[str]:
    if trace.retrieval is None:
        return []
    out = []
    for name in ("dense", "bm25", "hybrid"):
        out += ["", f"## {w(en='Retrieval', zh='检索')}: {name}", ""] + _hit_table(getattr(trace.retrieval, name), trace, w)
    return out


def _md_rerank(trace: Trace, lang: str, w) -> list[str]:
    if trace.rerank is None:
        return []
    why = {x.chunk_id: x for x in trace.rerank.why}  # the learned ranker's largest contributions
    extra = (f" {w(en='main reasons (feature contributions)', zh='主要原因（特征贡献）')} |", "---|") if why else ("", "")
    out = ["", f"## {w(en='Rerank', zh='重排')} ({localized(trace.rerank.reranker, lang)})", "",
           f"| {w(en='chunk', zh='块')} | {w(en='before', zh='重排前')} | {w(en='after', zh='重排后')} | {w(en='score', zh='分数')} |" + extra[0],
           "|---|---|---|---|" + extra[1]]
    for m in trace.rerank.moves:
        after = m.after if m.after is not None else w(en="dropped", zh="落选")
        reasons = " " + ", ".join(why[m.chunk_id].reasons(3)) + " |" if why else ""
        score = "-" if not math.isfinite(m.score) else f"{m.score:.4f}"
        out.append(f"| `{m.chunk_id}` | {m.before} | {after} | {score} |{reasons}")
    return out


def _md_answerability(trace: Trace, lang: str, w) -> list[str]:
    a = trace.answerability
    if a is None:
        return []
    out = ["", f"## {w(en='Answerability (before generating)', zh='能否回答（生成之前）')}", "",
           f"- {w(en='decision', zh='决定')}: {a.reason(lang)}"]
    if a.best_sentence:
        out.append(f"- {w(en='best sentence', zh='最相关的句子')} [{a.best_ref}]: {a.best_sentence}")
    return out + [f"- {k}: {v:.3f}" for k, v in a.signals.items()]


def _md_contexts(trace: Trace, lang: str, w) -> list[str]:
    out = ["", f"## {w(en='Contexts given to the generator', zh='交给生成器的资料')}", ""]
    if trace.compression is not None:
        out += [localized(trace.compression.summary(), lang)
                + w(en="; ~~struck~~ sentences were not shown to the model", zh="；~~划掉的~~句子模型没有看到"), ""]
    kept = {c.ref: c for c in trace.compression.chunks} if trace.compression is not None else {}
    for i, c in enumerate(trace.contexts, 1):
        shown = c.text
        if c.ref in kept:
            shown = "".join(x.text if x.kept else f"~~{x.text.strip()}~~" for x in kept[c.ref].sentences)
        out += [f"**[{i}] {c.ref}**", "", "> " + shown.replace("\n", "\n> "), ""]
    return out


def _md_prompt(trace: Trace, lang: str, w) -> list[str]:
    if trace.prompt is None:
        return []
    out = [f"## {w(en='Exact prompt', zh='确切的提示词')}", ""]
    for m in trace.prompt.messages:
        out += [f"**{m['role']}**", "", "```", m["content"], "```", ""]
    return out


def _md_answer(trace: Trace, lang: str, w) -> list[str]:
    out = [f"## {w(en='Answer', zh='回答')}", "", trace.answer or w(en="(empty)", zh="（空）"), ""]
    if trace.garbled is not None:
        out += [w(en=f"The model's answer was garbled ({localized(trace.garbled, 'en')}); the answer above is the extractive "
                  "stand-in's picks. What the model wrote:", zh=f"模型的回答是乱的（{localized(trace.garbled, 'zh')}），上面是抽取式"
                  "替身挑出的句子。模型写的是："), "", "> " + (trace.model_answer or "").replace("\n", "\n> "), ""]
    elif trace.model_answer is not None:
        out += [w(en="The model wrote the text before the first corner bracket; the quoted sentences after it are the extractive "
                  "stand-in's picks that the model's answer left out.",
                  zh="第一个「之前是模型写的；之后加引号的句子是抽取式替身挑出、而模型回答漏掉的原文。"), ""]
    if trace.lead is not None:
        lead, n = trace.lead.lead, len(trace.lead.candidates)
        out += [w(en=f"Everything the model wrote was set aside; the model chose which quote leads: [{lead.ref}], the highest "
                  f"per-token probability as its reply ({lead.per_token:.2f}) of {n}.",
                  zh=f"模型写的句子都已搁置；领头的原文由模型选出：[{lead.ref}]，把它当作回复时每个 token 的平均概率最高"
                  f"（{lead.per_token:.2f}，共 {n} 句）。"), ""]
    for aside, why in ((trace.restated, w(en="Set aside (the model's sentences that state nothing: they only restate the "
                                          "question or the prompt, or are a bare number or ref):",
                                          zh="已搁置（模型写的、没有陈述事实的句子：只是复述问题或提示词，或只有一个编号）：")),
                       (trace.off_question, w(en="Set aside (the model's sentences off the question: they cite only entries "
                                              "the stand-in quotes nothing from and name none of the question's words the "
                                              "entry the stand-in's answer rests on lacks):",
                                              zh="已搁置（模型写的、偏离问题的句子：只引用了抽取式替身没有摘录的资料，也没有提到问题里"
                                              "替身答案所依据的主条资料缺少的词）：")),
                       (trace.unsupported, w(en="Set aside (the model's sentences the audit does not call supported by the "
                                             "chunk they cite, or that leave empty what the question asks):",
                                             zh="已搁置（模型写的、没有得到所引资料支撑，或没有回答问题所问内容的句子）："))):
        if aside:
            out += [why, ""] + [f"- ~~{s}~~" for s in aside] + [""]
    return out


def _md_audit(trace: Trace, lang: str, w) -> list[str]:
    a = trace.audit
    if a is None:
        return []
    out = [f"## {w(en='Citation audit', zh='引用审计')}", "",
           f"- {w(en='cited', zh='引用')}: {', '.join(a.cited) or '-'}",
           f"- {w(en='valid', zh='有效')}: {', '.join(a.valid) or '-'}",
           f"- {w(en='hallucinated', zh='幻觉')}: {', '.join(a.hallucinated) or '-'}",
           f"- {w(en='unused', zh='未用')}: {', '.join(a.unused) or '-'}", "",
           w(en="| sentence | refs | evidence span | coverage | label | why |", zh="| 句子 | 引用 | 证据片段 | 覆盖率 | 判定 | 原因 |"),
           "|---|---|---|---|---|---|"]
    for ss in a.sentences:
        span = ss.support.evidence.text if ss.support is not None and ss.support.evidence else ""
        out.append(f"| {_cell(ss.sentence)} | {', '.join(ss.refs) or '-'} | {_cell(span) or '-'} | {ss.coverage:.2f} "
                   f"| {support_text(ss, lang)} | {_cell(reasons_text(ss.support, lang))} |")
    return out


def _md_no_rag(trace: Trace, lang: str, w) -> list[str]:
    if trace.no_rag_answer is None:
        return []
    out = ["", f"## {w(en='Without RAG (same question, no context)', zh='无 RAG（同一个问题，不给资料）')}", "",
           trace.no_rag_answer]
    if trace.no_rag_grounding:
        out += ["", w(en="| sentence | support found in the corpus |", zh="| 句子 | 语料里找到的支撑 |"), "|---|---|"]
        out += [f"| {_cell(g.sentence)} | {grounding_text(g, lang)} |" for g in trace.no_rag_grounding]
    return out


def _md_timings(trace: Trace, lang: str, w) -> list[str]:
    return ["", f"## {w(en='Timings (s)', zh='耗时（秒）')}", ""] + [f"- {k}: {v:.3f}" for k, v in trace.timings.items()]

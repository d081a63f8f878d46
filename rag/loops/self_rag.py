"""Self-RAG style answering (after Asai et al., 2023): the model decides when to retrieve and checks its work.

    decide: does the message need facts? ── no ──> answer from the model's own knowledge (no search)
       │ yes
    retrieve (hybrid + rerank, as plain RAG) -> grade each chunk, drop the irrelevant
       -> draft an answer over the kept chunks -> check each sentence's support
       -> all supported (or 资料不足)? done.  Otherwise, if rounds are left: rewrite the query toward the
          first unsupported sentence (or, when nothing was relevant, toward the question) and go again;
          a later round adds its relevant chunks to the ones already kept.

Every decision is a `Verdict` with its prompt and the model's raw reply (rag/loops/decisions.py), in a
`Step` of the returned `LoopTrace`. The answer kept is the best-supported draft; a later round wins ties.
Self-RAG trains its model to emit reflection tokens; here an off-the-shelf instruct model is asked the
same questions in words, which is what a small bundled model can do, and docs/loops.md measures how well.
Not handled here: the prompts (decisions.py), retrieval and answering (rag/pipeline.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Callable

from rag.answer.prompt import build_no_rag_prompt
from rag.audit.citations import is_not_enough, strip_citations
from rag.audit.shape import garbled
from rag.audit.support import Support
from rag.ingest.language import detect_lang
from rag.loops import decisions
from rag.loops.steps import LoopTrace, Recorder, Step, hits_of
from rag.messages import Msg, localized
from rag.models.control import RunControl
from rag.models.llm import ChatBackend, short_reply
from rag.pipeline import answer_from, check_settings, gather, no_model_error
from rag.run import RunContext
from rag.trace import AskSettings, Trace, label_in

MAX_ROUNDS = 2  # retrieval rounds: the first, and one more when support fails
REWRITE_TOKENS = 48


def answer_directly(question: str, settings: AskSettings, generator, lang: str, control: RunControl | None,
                    why: str) -> Trace:
    """The loop chose not to retrieve: the no-RAG prompt, and the reason in the trace's notes."""
    trace = Trace(question=question, settings=settings)
    trace.backends["generator"] = generator.label
    trace.prompt = build_no_rag_prompt(question, lang)
    t0 = time.perf_counter()
    trace.answer = "".join(generator.generate(trace.prompt, control=control))
    trace.timings["generate"] = time.perf_counter() - t0
    trace.notes.append(why)
    return trace


def loop_setup(question: str, settings: AskSettings, chat, needs: str, generator=None) -> tuple[str, AskSettings, str]:
    """(question, settings, answer language) for a loop; `needs` says what the model is for, if there is none.
    A loop searches with its own queries, so the settings' rewrite and no-RAG comparison are turned off."""
    if chat is None:
        raise no_model_error(needs, generator)
    settings = replace(settings, rewrite="none", compare_no_rag=False)
    question = check_settings(question, settings, chat)
    return question, settings, detect_lang(question) if settings.lang == "auto" else settings.lang


def self_rag(question: str, ctx: RunContext, *, on_step: Callable[[Step], None] | None = None) -> LoopTrace:
    """Answer `question` the Self-RAG way, in at most `ctx.budget` retrieval rounds (MAX_ROUNDS when None); every
    decision lands in the returned LoopTrace."""
    index, chat, control = ctx.index, ctx.chat, ctx.control
    question, settings, lang = loop_setup(question, ctx.settings, chat,
                                          "Self-RAG needs a language model for its decisions", ctx.writer)
    t_start = time.perf_counter()
    lt = LoopTrace("self-rag", question, budget=max(1, int(ctx.budget or MAX_ROUNDS)))
    rec = Recorder(lt, on_step)
    assert chat is not None  # loop_setup raised the no-model error otherwise
    loop = _Loop(ctx.with_(settings=settings), chat, rec, question, lang)
    need = decisions.needs_retrieval(chat, question, lang, control)
    if not need.answer:
        _answer_without_retrieval(loop, lt, need)
        lt.seconds = time.perf_counter() - t_start
        return lt
    _retrieving(rec, need)
    kept: list = []
    query, best, best_share, best_round, tried = question, None, -1.0, 0, {question}
    best_audited = 0.0  # the kept draft's share the audit calls supported: the figure its rows show
    for rnd in range(1, lt.budget + 1):
        control.check("Self-RAG")
        t0 = time.perf_counter()
        trace = gather(query, loop.ctx)
        trace.question = question  # searched with `query`; the answer is to the question
        if query != question:
            trace.rewrites["self-rag query"] = query
        rec.add(kind="retrieve", thought=f"Round {rnd}: search the knowledge base.", query=query,
                decision=Msg(en=f"{len(trace.contexts)} chunks after hybrid retrieval and rerank",
                             zh=f"混合检索和重排后得到 {len(trace.contexts)} 个块"),
                hits=hits_of(index, trace.final), seconds=time.perf_counter() - t0)

        new_kept, dropped = _grade(loop, trace, kept)
        kept += new_kept
        if not kept and rnd < lt.budget:
            query = _rewrite(loop, None, tried)
            continue
        if rnd > 1 and not new_kept and best is not None:  # the same chunks would give the same draft
            lt.notes.append(_kept_note(rnd, best_round, best_audited, best_share, exhausted=False))
            break

        trace = _draft(loop, trace, kept, dropped, rnd)
        share, audited, unsupported = _check_draft(loop, trace, bool(kept))
        if share >= best_share:
            best, best_share, best_round, best_audited = trace, share, rnd, audited
        if unsupported is None:
            break
        if rnd < lt.budget:
            query = _rewrite(loop, unsupported, tried)
        else:
            lt.notes.append(_kept_note(rnd, best_round, best_audited, best_share, exhausted=True))
    lt.final = best
    lt.seconds = time.perf_counter() - t_start
    return lt


def _retrieving(rec: Recorder, need) -> None:
    """The timeline's first step: the model judged that the message needs facts from the knowledge base."""
    p_en = f" (P(needs facts) = {need.p_yes:.2f})" if need.p_yes is not None else ""
    p_zh = f"（P(需要事实) = {need.p_yes:.2f}）" if need.p_yes is not None else ""
    rec.add(kind="decide", thought="Does the message need facts from the knowledge base at all?",
            decision=Msg(en="retrieve" + p_en, zh="检索" + p_zh), verdicts=(need,), seconds=need.seconds)


def _kept_note(rnd: int, best_round: int, audited: float, share: float, *, exhausted: bool):
    """The note for a loop that stops on a kept draft: the budget ran out, or round `rnd` found nothing new."""
    if exhausted:
        return Msg(en=f"support still failed after {rnd} retrieval rounds (the budget): kept the best-supported draft "
                   f"({_supported_en(audited, share)})",
                   zh=f"检索了 {rnd} 轮（预算用完）仍有句子缺少支撑：保留支撑最好的一稿（{_supported_zh(audited, share)}）")
    return Msg(en=f"round {rnd} found no new relevant chunk: kept draft {best_round} ({_supported_en(audited, share)}) "
               "instead of writing it again",
               zh=f"第 {rnd} 轮没有找到新的相关块：保留第 {best_round} 稿（{_supported_zh(audited, share)}），不再重写")


@dataclass(frozen=True)
class _Loop:
    """One Self-RAG run's parts its steps share: the run's context with the loop's settings, the model its decisions ask
    (ctx.chat, checked present by loop_setup), the timeline's recorder, the question and the answer language."""

    ctx: RunContext
    chat: ChatBackend
    rec: Recorder
    question: str
    lang: str


def _answer_without_retrieval(loop: _Loop, lt: LoopTrace, need) -> None:
    """The model judged the message small talk: answered from its own knowledge, and the timeline says why."""
    rec, ctx = loop.rec, loop.ctx
    p = f" (P(needs facts) = {need.p_yes:.2f})" if need.p_yes is not None else ""
    rec.add(kind="decide", thought="Does the message need facts from the knowledge base at all?",
            decision=Msg(en=f"answer directly, without retrieval: the model judged it a greeting or small talk{p}",
                         zh=f"直接回答，不检索：模型判断这是问候或闲聊{p.replace('(', '（').replace(')', '）')}"),
            verdicts=(need,), seconds=need.seconds)
    t0 = time.perf_counter()
    final = lt.final = answer_directly(loop.question, ctx.settings, ctx.writer, loop.lang, ctx.control,
                                       Msg(en=f"Self-RAG did not retrieve: {need.asked} -> A ({need.raw})",
                                           zh=f"Self-RAG 没有检索：{localized(need.asked, 'zh')} -> A（{need.raw}）"))
    lt.retrieved = False
    rec.add(kind="answer", thought="Answer from the model's own knowledge.", decision=Msg(en="answered without retrieval", zh="不检索，直接回答了"),
            prompt=final.prompt.messages if final.prompt else None, raw=final.answer,
            seconds=time.perf_counter() - t0)


def _grade(loop: _Loop, trace, kept: list) -> tuple[list, list]:
    """(the chunks of this round not kept before that the model judges relevant, the refs of those it drops)."""
    seen = {c.chunk_id for c in kept}
    fresh = [c for c in trace.contexts if c.chunk_id not in seen]
    verdicts = [decisions.is_relevant(loop.chat, loop.question, c.text, loop.lang, c.ref, loop.ctx.control)
                for c in fresh]
    new_kept = [c for c, v in zip(fresh, verdicts) if v.answer]
    dropped = [c.ref for c, v in zip(fresh, verdicts) if not v.answer]
    kept_refs = [c.ref for c in new_kept]
    loop.rec.add(kind="grade", thought="Which of these chunks hold information for the question?",
                 decision=Msg(en=f"kept {_listed(kept_refs, 'none')}; dropped {_listed(dropped, 'none')}",
                              zh=f"保留 {_listed(kept_refs, '无')}；丢掉 {_listed(dropped, '无')}"),
                 verdicts=tuple(verdicts), seconds=sum(v.seconds for v in verdicts))
    return new_kept, dropped


def _listed(refs: list[str], none: str) -> str:
    return ", ".join(refs) or none


def _draft(loop: _Loop, trace, kept: list, dropped: list, rnd: int) -> Trace:
    """The trace answered from the kept chunks only, saying which were dropped."""
    trace.contexts = list(kept)
    if dropped:
        trace.notes.append(Msg(en=f"Self-RAG dropped chunks it judged irrelevant: {', '.join(dropped)}",
                               zh=f"Self-RAG 丢掉了它判为无关的块：{', '.join(dropped)}"))
    if not kept:
        trace.notes.append(Msg(en="Self-RAG judged no retrieved chunk relevant in any round: the prompt has no context",
                               zh="Self-RAG 在每一轮都判定检索到的块无关：提示词里没有资料"))
    t0 = time.perf_counter()
    trace = answer_from(trace, loop.ctx)
    loop.rec.add(kind="draft", thought=f"Draft an answer from the {len(kept)} kept chunks.",
            decision=Msg(en=f"draft {rnd} written", zh=f"写好了第 {rnd} 稿"), prompt=trace.prompt.messages if trace.prompt else None,
            raw=trace.answer, seconds=time.perf_counter() - t0)
    return trace


def _supported_en(audited: float, passed: float) -> str:
    """The kept draft's figure as its rows show it: the audit's "supported", and how many the model did not doubt."""
    return (f"the audit calls {audited:.0%} of its sentences supported" +
            (f"; {passed:.0%} with the model's yes as well" if passed < audited else ""))


def _supported_zh(audited: float, passed: float) -> str:
    return f"审计判为有支撑的句子占 {audited:.0%}" + (f"；模型也说是的占 {passed:.0%}" if passed < audited else "")


def _check_draft(loop: _Loop, trace, any_kept: bool) -> tuple[float, float, str | None]:
    """(share of the draft's sentences that pass, share the audit calls supported, the first that does not pass, or
    None when there is nothing to redo)."""
    claims = [s for s in trace.audit.sentences if s.label != "not-enough"] if trace.audit else []
    if is_not_enough(trace.answer) or not claims:
        loop.rec.add(kind="check", thought="Is every sentence of the draft supported?",
                decision=Msg(en="the draft says the context is not enough: nothing to check",
                             zh="草稿说资料不足：没有可核对的句子"))
        return (1.0 if any_kept else 0.0), 0.0, None
    return _check(loop, claims, time.perf_counter())


def _check(loop: _Loop, claims, t0: float) -> tuple[float, float, str | None]:
    """The check step: each sentence's label is the answer audit's (the one support check of the app); the model's
    yes/no on the same sentence and evidence span is asked and shown beside it. A sentence passes when the audit
    calls it supported and the model does not say no. Returns (the share that passed, the share the audit calls
    supported: the one figure the rows show, the first that did not pass)."""
    supports = tuple(replace(s.support, label=s.label) if s.support is not None else Support(s.sentence, s.label, None)
                     for s in claims)
    verdicts = [decisions.model_says(loop.chat, s.sentence, x, loop.lang, loop.ctx.control)
                for s, x in zip(claims, supports)]
    audited = [s.label == "supported" for s in claims]
    agreed = [v is None or v.answer for v in verdicts]
    good = [a and m for a, m in zip(audited, agreed)]
    n, asked = len(claims), [v for v in verdicts if v is not None]
    loop.rec.add(kind="check", thought="Is every sentence of the draft supported by the chunk it cites?",
                 decision=_checked_msg(claims, sum(audited), asked, sum(good)),
                 verdicts=tuple(asked), supports=supports, seconds=time.perf_counter() - t0)
    return sum(good) / n, sum(audited) / n, next((s.sentence for s, ok in zip(claims, good) if not ok), None)


def _checked_msg(claims, audited: int, asked: list, good: int) -> Msg:
    """The check step's decision: how many sentences the audit supports (their labels), the model's yeses, both."""
    n, yes = len(claims), sum(v.answer for v in asked)
    labels_en, labels_zh = ", ".join(s.label for s in claims), "、".join(label_in(s.label, "zh") for s in claims)
    return Msg(en=f"the audit: {audited} of {n} sentences supported ({labels_en}); the model's yes/no: "
               f"{yes} of {len(asked)} yes; both: {good} of {n}",
               zh=f"审计：{n} 句中 {audited} 句有支撑（{labels_zh}）；模型的是/否：{len(asked)} 句中 {yes} 句说是；"
               f"两者都认可：{n} 句中 {good} 句")


def _rewrite(loop: _Loop, unsupported: str | None, tried: set[str]) -> str:
    t0, question = time.perf_counter(), loop.question
    messages = decisions.rewrite_messages(question, loop.lang, unsupported)
    raw = short_reply(loop.chat, messages, REWRITE_TOKENS, loop.ctx.control)
    query = decisions.parse_query(raw)
    how = Msg(en="the model's rewrite", zh="模型改写的查询")
    mess = garbled(query)  # a loop or a list of refs is no query (None for an empty one)
    if mess is not None or not query or query in tried:
        how = (Msg(en=f"the model's rewrite was garbled ({mess}): question + the unsupported sentence",
                   zh=f"模型的改写是乱的（{localized(mess, 'zh')}）：用问题 + 缺少支撑的那句话") if mess is not None else
               Msg(en="the model's rewrite was empty or already tried: question + the unsupported sentence",
                   zh="模型的改写是空的或已经试过：用问题 + 缺少支撑的那句话"))
        query = f"{question} {strip_citations(unsupported or '').strip()}".strip()
    tried.add(query)
    why = "a sentence lacked support" if unsupported else "no retrieved chunk was relevant"
    loop.rec.add(kind="rewrite", thought=f"Search again: {why}.", query=query, decision=how, prompt=messages, raw=raw,
            seconds=time.perf_counter() - t0)
    return query

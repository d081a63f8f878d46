"""An agent loop: retrieval is a tool the model calls, one JSON action per step, until it answers.

    step: the model reads the question and everything so far (its actions, the observations) and writes
          one action under the grammar of rag/loops/actions.py:
          search(query) -> observation: the top SEARCH_HITS chunks, ref + title + their start
          read(ref)     -> observation: that chunk in full (READ_CHARS at most)
          answer        -> stop
    budget: `max_steps` actions; on the last one only `answer` is allowed, and the trace says so.

The answer is then written by the same grounded prompt as plain RAG, over the chunks the agent read,
then the ones its searches returned, in the order it met them (top_k at most), with the same citation
modes and audit: so plain, Self-RAG and the agent differ only in what reaches the prompt, and the
comparison measures the loop. An agent that answers before any search gets the no-RAG prompt, and the
trace says it did not retrieve and gives its thought.
Not handled here: the action schema (actions.py), retrieval and answering (rag/pipeline.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from rag.audit.shape import garbled
from rag.loops.actions import ACTIONS, action_grammar, parse_action
from rag.loops.self_rag import answer_directly, loop_setup
from rag.loops.steps import LoopTrace, Recorder, Step, hits_of
from rag.messages import Msg, localized
from rag.models.control import RunControl
from rag.pipeline import answer_from, gather
from rag.run import RunContext

MAX_STEPS = 6
SEARCH_HITS = 3
READ_CHARS = 800
ACTION_TOKENS = 120  # a thought of 160 characters is ~60-100 tokens; the grammar ends the object anyway

SYSTEM = {
    "zh": (
        "你是一个会使用检索工具的助手。每一步只输出一个 JSON 动作，不要输出别的内容。\n"
        "search：在知识库中检索，字段 query 是检索词，会返回最相关的几段资料的 ref、标题和开头。\n"
        "read：读取一段检索到的资料的全文，字段 ref 是它的 ref。\n"
        "answer：结束；之后会根据你找到的资料写出回答。\n"
        "每个动作都有 thought 字段：用一句话写出你为什么这样做。\n"
        "规则：需要事实的问题先检索再回答；问题有两个部分时，每个部分各检索一次，检索词要不同；"
        "问候和闲聊不需要检索，直接 answer。"
    ),
    "en": (
        "You are an assistant with a search tool. At each step output exactly one JSON action and nothing else.\n"
        "search: search the knowledge base; the field query holds the search words; the top passages come back "
        "with their ref, title and start.\n"
        "read: read a passage you found in full; the field ref holds its ref.\n"
        "answer: stop; the answer is then written from the passages you found.\n"
        "Every action has a thought field: one sentence saying why you take it.\n"
        "Rules: search before answering a question that needs facts; a question with two parts needs one search "
        "per part, with different search words; greetings and small talk need no search: answer at once."
    ),
}
# Worked examples, shown as earlier turns: a fictional shop's knowledge base, so no answer leaks into a
# question set; they show a greeting answered at once and a two-part question searched part by part.
SHOTS = {
    "zh": [
        ("user", "问题：你好呀"),
        ("assistant", '{"thought": "这是问候，不需要检索。", "action": "answer"}'),
        ("user", "问题：退货期限是多久？退货运费由谁承担？"),
        ("assistant", '{"thought": "问题有两部分，先查退货期限。", "action": "search", "query": "退货期限"}'),
        ("user", "检索“退货期限”的结果：\n[shop_07] 退货政策 签收后七天内可以申请退货，商品需保持完好…\n"
                 "[shop_02] 换货说明 换货需在签收后十五天内提出…"),
        ("assistant", '{"thought": "找到了退货期限，再查运费由谁承担。", "action": "search", "query": "退货运费 承担"}'),
        ("user", "检索“退货运费 承担”的结果：\n[shop_09] 运费规则 因质量问题退货，运费由商家承担；其他原因…"),
        ("assistant", '{"thought": "两部分都找到了，可以回答。", "action": "answer"}'),
    ],
    "en": [
        ("user", "Question: hi there"),
        ("assistant", '{"thought": "A greeting needs no search.", "action": "answer"}'),
        ("user", "Question: How long do I have to return an item, and who pays the return shipping?"),
        ("assistant", '{"thought": "Two parts; first the return period.", "action": "search", "query": "return period"}'),
        ("user", "Results for \"return period\":\n[shop_07] Returns Items can be returned within seven days of "
                 "delivery…\n[shop_02] Exchanges Exchanges must be requested within fifteen days…"),
        ("assistant", '{"thought": "Found the period; now who pays shipping.", "action": "search", '
                      '"query": "return shipping cost"}'),
        ("user", "Results for \"return shipping cost\":\n[shop_09] Shipping The shop pays return shipping for "
                 "faulty items; otherwise…"),
        ("assistant", '{"thought": "Both parts found; I can answer.", "action": "answer"}'),
    ],
}
HEAD = {"zh": ("问题：", "检索“{q}”的结果：", "资料 [{r}] 全文：", "（没有结果）", "这一步只能 answer：步数用完了。",
               "你已经检索过“{q}”。换一个检索词，或者 answer。"),
        "en": ("Question: ", "Results for \"{q}\":", "Passage [{r}] in full:", "(no results)",
               "Only answer is allowed at this step: the step budget is used up.",
               "You already searched \"{q}\". Use other search words, or answer.")}


def agent(question: str, ctx: RunContext, *, on_step: Callable[[Step], None] | None = None) -> LoopTrace:
    """Answer `question` with the agent loop, in at most `ctx.budget` actions (MAX_STEPS when None); every action and
    observation lands in the LoopTrace."""
    chat, control = ctx.chat, ctx.control
    question, settings, lang = loop_setup(question, ctx.settings, chat,
                                          "the agent loop needs a language model to choose its actions", ctx.writer)
    head = HEAD[lang if lang in HEAD else "en"]
    t_start = time.perf_counter()
    lt = LoopTrace("agent", question, budget=max(1, int(ctx.budget or MAX_STEPS)))
    rec = Recorder(lt, on_step)
    key = lang if lang in SYSTEM else "en"
    mem = _Memory([{"role": "system", "content": SYSTEM[key]}, *({"role": r, "content": c} for r, c in SHOTS[key]),
                   {"role": "user", "content": head[0] + question}])
    run = _Run(ctx.with_(settings=settings), mem, head, rec, question, lang)
    for n in range(1, lt.budget + 1):
        control.check("the agent loop")
        last = n == lt.budget
        t0 = time.perf_counter()
        prompt, raw, action, why = _next_action(chat, mem, head, last, control)
        if action is None:  # only without a grammar: say so and stop rather than guess
            why_zh = localized(why, "zh")
            lt.notes.append(Msg(en=f"step {n}: the model's action could not be read ({why}); the loop stopped there",
                                zh=f"第 {n} 步：读不懂模型的动作（{why_zh}）；循环在这里停止"))
            rec.add(kind="answer", thought="", decision=Msg(en=f"unreadable action ({why}): stop and answer",
                                                            zh=f"读不懂的动作（{why_zh}）：停下来回答"),
                    prompt=prompt, raw=raw, seconds=time.perf_counter() - t0)
            break
        mem.messages += [{"role": "assistant", "content": raw}]
        if action.action == "answer":
            rec.add(kind="answer", thought=action.thought,
                    decision=Msg(en="answer (the step budget's last step allowed nothing else)",
                                 zh="回答（预算的最后一步只允许回答）") if last else Msg(en="answer", zh="回答"),
                    prompt=prompt, raw=raw, seconds=time.perf_counter() - t0)
            if last:
                lt.notes.append(Msg(en=f"the step budget ({lt.budget}) was reached: the last step could only answer",
                                    zh=f"用完了步数预算（{lt.budget} 步）：最后一步只能回答"))
            break
        step = {"thought": action.thought, "prompt": prompt, "raw": raw}
        if action.action == "search":
            mess = garbled(action.query)  # a loop or a list of refs is no query: the question is searched instead
            _search(run, action.query if mess is None else question, step, t0, mess)
        else:
            _read(run, action.ref, step, t0)
    t0 = time.perf_counter()
    lt.final = _final_answer(run, lt)
    lt.final.timings["answer"] = time.perf_counter() - t0
    lt.seconds = time.perf_counter() - t_start
    return lt


@dataclass
class _Memory:
    """What the agent has been told so far: the conversation, the chunks its searches showed (ref -> chunk, in the
    order met), those it read, the queries it ran, and the last search's trace."""

    messages: list[dict]
    seen: dict = field(default_factory=dict)
    read: dict = field(default_factory=dict)
    searched: set = field(default_factory=set)
    last_trace: Any = None


@dataclass(frozen=True)
class _Run:
    """One agent run's parts its steps share: the run's context with the loop's settings (its searches go through
    rag/pipeline.gather with them), what the model has been told, the prompt's phrases in the answer language (HEAD),
    the timeline's recorder, the question and the language."""

    ctx: RunContext
    mem: _Memory
    head: tuple
    rec: Recorder
    question: str
    lang: str


def _next_action(chat, mem: _Memory, head, last: bool, control: RunControl) -> tuple[list[dict], str, Any, Any]:
    """(the prompt, the model's reply, the action read from it or None, why not). At the budget's last step only
    `answer` is allowed, and the prompt says so."""
    allowed = ("answer",) if last else ACTIONS
    prompt = list(mem.messages)
    if last:
        prompt[-1] = {**prompt[-1], "content": prompt[-1]["content"] + "\n\n" + head[4]}
    unread = [r for r in mem.seen if r not in mem.read]  # reading a chunk twice tells the model nothing new
    grammar = action_grammar(unread, allowed) if chat.supports_grammar else None  # an endpoint is parsed tolerantly
    raw = chat.complete(prompt, grammar=grammar, max_tokens=ACTION_TOKENS, control=control)
    action, why = parse_action(raw, list(mem.seen))
    if action is not None and action.action not in allowed:
        name = action.action
        action, why = None, Msg(en=f"{name} is not allowed at the budget's last step", zh=f"预算的最后一步不允许 {name}")
    return prompt, raw, action, why


def _search(run: _Run, query: str, step: dict, t0: float, mess=None) -> None:
    """Search (rag/pipeline.gather with the run's context) and show the model the hits, or tell it that it searched
    this already. `mess`: why the model's own query was garbled (shape.garbled: a loop, a list of refs), when `query`
    is the question searched in its place."""
    mem, head, rec = run.mem, run.head, run.rec
    if query in mem.searched:
        mem.messages.append({"role": "user", "content": head[5].format(q=query)})
        rec.add(kind="repeat", query=query, decision=Msg(en="repeated an earlier search: told to use other words (no new "
                                                         "search)", zh="重复了之前的检索：提醒它换个说法（没有再检索）"),
                seconds=time.perf_counter() - t0, **step)
        return
    mem.searched.add(query)
    trace = mem.last_trace = gather(query, run.ctx)
    hits = trace.final[:SEARCH_HITS]
    for c in trace.contexts[:SEARCH_HITS]:
        mem.seen.setdefault(c.ref, c)
    mem.messages.append({"role": "user", "content": _search_observation(trace.contexts[:SEARCH_HITS], query, head)})
    decision = Msg(en=f"searched; {len(hits)} hits shown to the model", zh=f"检索了；给模型看了 {len(hits)} 条结果")
    if mess is not None:
        decision = Msg(en=f"the model's query was garbled ({mess}): searched with the question; {len(hits)} hits shown "
                       "to the model", zh=f"模型写的检索词是乱的（{localized(mess, 'zh')}）：改用问题检索；给模型看了 "
                       f"{len(hits)} 条结果")
    rec.add(kind="search", query=query, decision=decision,
            hits=hits_of(run.ctx.index, hits), seconds=time.perf_counter() - t0, **step)


def _read(run: _Run, ref: str, step: dict, t0: float) -> None:
    mem, head, rec = run.mem, run.head, run.rec
    chunk = mem.seen[ref]
    mem.read.setdefault(ref, chunk)
    mem.messages.append({"role": "user", "content": head[2].format(r=ref) + "\n" + chunk.text[:READ_CHARS]})
    rec.add(kind="read", decision=Msg(en=f"read {ref}", zh=f"读了 {ref}"), seconds=time.perf_counter() - t0, **step)


def _final_answer(run: _Run, lt: LoopTrace):
    """The answer from what the agent read first, then what it only saw; without any chunk, from the model's own
    knowledge, saying why."""
    mem, question, ctx = run.mem, run.question, run.ctx
    if not mem.seen:
        thought = lt.steps[-1].thought if lt.steps else ""
        lt.retrieved = lt.searches > 0
        why = (Msg(en="the agent answered without searching", zh="智能体没有检索就回答了") if not lt.searches else
               Msg(en="the agent's searches found nothing", zh="智能体的检索什么也没找到"))
        return answer_directly(question, ctx.settings, ctx.writer, run.lang, ctx.control,
                               Msg(en=why.en + (f"; its thought: {thought}" if thought else ""),
                                   zh=why.zh + (f"；它的想法：{thought}" if thought else "")))
    trace = mem.last_trace
    trace.question = question
    order = list(mem.read) + [r for r in mem.seen if r not in mem.read]
    trace.contexts = [mem.seen[r] for r in order][: ctx.settings.top_k]
    trace.rewrites["agent searches"] = [s.query for s in lt.steps if s.kind == "search"]
    return answer_from(trace, ctx)


def _search_observation(chunks, query: str, head) -> str:
    """What the model reads after a search: each chunk's ref (which it may read or cite), title and start."""
    lines = [head[1].format(q=query)]
    for c in chunks:
        title = str(c.metadata.get("title", ""))
        start = " ".join(c.text.split())[:100]
        lines.append(f"[{c.ref}] {title} {start}…" if title and not c.text.startswith(title) else f"[{c.ref}] {start}…")
    return "\n".join(lines) if chunks else lines[0] + "\n" + head[3]

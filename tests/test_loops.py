"""Self-RAG, the agent loop and their parts: decisions, the action grammar, budgets, what the trace keeps.

The loop logic is what is tested here; the model's verdicts and actions come from a scripted chat whose
answers each test writes (the answers themselves are written by the real extractive generator). The
tests at the end run the real bundled model: its grammar-held actions parse, and a greeting is answered
without retrieval by both strategies.
"""

from __future__ import annotations

import json
import re

import pytest

from rag.answer.extractive import ExtractiveGenerator
from rag.errors import ConfigError, LLMUnavailableError
from rag.loops import decisions
from rag.loops.actions import action_grammar, parse_action
from rag.loops.agent import agent
from rag.loops.compare import facts_found
from rag.loops.registry import run_loop
from rag.loops.self_rag import self_rag
from rag.messages import localized
from rag.models.control import RunControl
from rag.models.yes_no import YesNoRule, ask_yes_no
from rag.run import RunContext
from rag.trace import AskSettings
from tests.fake_chat import FakeChat


class ScriptedChat(FakeChat):
    """The loops' chat: `verdict(messages) -> P(yes)` for yes/no questions, `reply(messages, grammar) -> text`
    for generations (tests/fake_chat.py); every call is recorded as (kind, messages, grammar)."""

    def __init__(self, verdict=lambda m: 0.5, reply=lambda m, g: "", grammar: bool = True):
        super().__init__(reply=reply, verdict=verdict, grammar=grammar, label="scripted chat (test)")

    @property
    def call_log(self):
        return [(c["kind"], c["messages"], c.get("grammar")) for c in self.calls]


def _user(messages) -> str:
    return messages[-1]["content"]


@pytest.fixture(scope="module")
def gen(embedder):
    return ExtractiveGenerator(embedder)


SETTINGS = AskSettings(rerank=False)


# ------------------------------------------------------------------------------------------- yes/no

def test_a_verdict_keeps_prompt_raw_reply_and_calibration():
    chat = ScriptedChat(verdict=lambda m: 0.1 if _user(m) == "N/A" else 0.2)
    msgs = [{"role": "user", "content": "问题"}]
    raw = ask_yes_no(chat, msgs, "zh", "q?")
    assert raw.p_yes == pytest.approx(0.2) and raw.answer is False and raw.messages == msgs
    cal = ask_yes_no(chat, msgs, "zh", "q?", YesNoRule(null=[[{"role": "user", "content": "N/A"}]]))
    # P(yes) 0.2 / 0.1 against P(no) 0.8 / 0.9: the prompt makes yes twice as likely as a content-free one
    assert cal.p_yes == pytest.approx(2.0 / (2.0 + 0.8 / 0.9)) and cal.answer is True
    assert "content-free" in cal.raw and "calibrated" in cal.how


@pytest.mark.parametrize("reply, options, want, how", [
    ("是的，支持。", None, True, "reply text"), ("否", None, False, "reply text"), ("No.", None, False, "reply text"),
    ("maybe", None, True, "unparsable"), ("B", (("B",), ("A",)), True, "reply text"),
    ("A: small talk", (("B",), ("A",)), False, "reply text"),
])
def test_an_endpoint_verdict_is_read_from_its_reply(reply, options, want, how):
    endpoint = FakeChat(reply=lambda m, g: reply, logprobs=False, label="endpoint (test)")
    v = ask_yes_no(endpoint, [{"role": "user", "content": "x"}], "zh", "q?", YesNoRule(options=options))
    assert v.answer is want and how in v.how and v.p_yes is None and v.raw == reply


# ------------------------------------------------------------------------------------------ Self-RAG

def _need(p_question: float):
    """P(B, needs facts) for the question; 0.5 for the content-free calibration messages."""
    def verdict(m):
        if m[0]["content"] == decisions.NEED_SYSTEM:
            return 0.5 if _user(m) in decisions.CONTENT_FREE else p_question
        return None
    return verdict


def test_self_rag_answers_small_talk_without_retrieving_and_says_why(kb_index, gen):
    chat = ScriptedChat(verdict=lambda m: _need(0.1)(m) or 0.9)
    lt = self_rag("你好", RunContext(kb_index, SETTINGS, gen, chat=chat))
    assert not lt.retrieved and lt.searches == 0
    assert [s.kind for s in lt.steps] == ["decide", "answer"]
    decide = lt.steps[0]
    assert decide.verdicts[0].answer is False and "P(B)" in decide.verdicts[0].raw
    assert decide.verdicts[0].messages[-1]["content"] == "你好"  # the exact prompt is kept
    assert lt.final.contexts == [] and "did not retrieve" in lt.final.notes[0]
    assert not any(c[0] == "complete" for c in chat.call_log)  # the answer came from the generator, no search


def test_self_rag_drops_irrelevant_chunks_and_searches_again_within_its_budget(kb_index, gen):
    def verdict(m):
        need = _need(0.9)(m)
        if need is not None:
            return need
        text = _user(m)
        if text.startswith("问题："):  # relevance: only chunks about overfitting; "N/A" is the content-free one
            return 0.5 if "资料：N/A" in text else (0.9 if "过拟合" in text.split("资料：", 1)[1] else 0.1)
        return 0.1  # support: no sentence is ever supported

    chat = ScriptedChat(verdict=verdict, reply=lambda m, g: "新的检索查询：正则化 权重衰减")
    lt = self_rag("什么是过拟合？", RunContext(kb_index, SETTINGS, gen, chat=chat, budget=2))
    kinds = [s.kind for s in lt.steps]
    assert kinds.count("retrieve") == 2 and kinds.count("rewrite") == 1  # one more search, not more
    grade = next(s for s in lt.steps if s.kind == "grade")
    assert "dropped faq_" in grade.decision and len(grade.verdicts) == 5
    rewrite = next(s for s in lt.steps if s.kind == "rewrite")
    assert rewrite.query == "正则化 权重衰减"  # the "新的检索查询：" label is stripped
    assert rewrite.prompt and rewrite.raw.startswith("新的检索查询")
    assert all("过拟合" in c.text for c in lt.final.contexts)
    assert any("support still failed" in n or "no new relevant chunk" in n for n in lt.notes)
    assert lt.final.audit is not None
    # the summary's "supported" is the figure the rows show (the audit's labels), not the stricter both-agree share
    # (the model here says no to every sentence, so that share is 0% whatever the audit says)
    claims = [s for s in lt.final.audit.sentences if s.label != "not-enough"]
    shown = f"{sum(s.label == 'supported' for s in claims) / len(claims):.0%}"
    note = next(n for n in lt.notes if "support still failed" in n or "no new relevant chunk" in n)
    assert f"the audit calls {shown} of its sentences supported" in note
    assert f"审计判为有支撑的句子占 {shown}" in localized(note, "zh")


def test_self_rag_stops_after_one_round_when_every_sentence_is_supported(kb_index, gen):
    chat = ScriptedChat(verdict=lambda m: _need(0.9)(m) or 0.9)
    lt = self_rag("什么是过拟合？", RunContext(kb_index, SETTINGS, gen, chat=chat))
    assert [s.kind for s in lt.steps] == ["decide", "retrieve", "grade", "draft", "check"]
    check = lt.steps[-1]
    assert check.verdicts and all(v.answer for v in check.verdicts)
    assert check.supports and all(x.label == "supported" for x in check.supports)
    span = check.supports[0].evidence.text  # the model is asked about one sentence and its evidence span
    assert check.verdicts[0].messages[-1]["content"].startswith(f"证据：{span}")


def test_loops_need_a_language_model(kb_index, gen):
    from rag.models.local_llm import local_available

    fix = "choose the generator 'local'" if local_available()[0] else "install the bundled local model"
    with pytest.raises(LLMUnavailableError, match=fix):
        self_rag("什么是过拟合？", RunContext(kb_index, SETTINGS, gen))
    with pytest.raises(LLMUnavailableError, match=fix):
        agent("什么是过拟合？", RunContext(kb_index, SETTINGS, gen))
    with pytest.raises(ConfigError, match="plain, self-rag, agent"):
        run_loop("react", "q", RunContext(kb_index, SETTINGS, gen))


# -------------------------------------------------------------------------------------------- agent

def _first_ref(messages) -> str:
    return re.findall(r"\[(faq_\d+)\]", _user(messages))[0]


def test_agent_searches_reads_and_answers_from_what_it_read(kb_index, gen):
    script = iter([
        lambda m: '{"thought": "先查过拟合。", "action": "search", "query": "过拟合 缓解"}',
        lambda m: json.dumps({"thought": "读第一条。", "action": "read", "ref": _first_ref(m)}, ensure_ascii=False),
        lambda m: '{"thought": "够了。", "action": "answer"}',
    ])
    chat = ScriptedChat(reply=lambda m, g: next(script)(m))
    lt = agent("什么是过拟合？怎么缓解？", RunContext(kb_index, SETTINGS, gen, chat=chat))
    assert [s.kind for s in lt.steps] == ["search", "read", "answer"]
    search, read = lt.steps[0], lt.steps[1]
    assert search.query == "过拟合 缓解" and search.hits and search.thought == "先查过拟合。"
    ref = read.decision.split()[-1]
    assert lt.final.contexts[0].ref == ref  # what it read comes first
    grammars = [c[2] for c in chat.call_log if c[0] == "complete"]
    assert "read" not in grammars[0].split("act ::=")[1].split("\n")[0]  # nothing to read before a search
    assert f'"\\"{ref}\\""' in grammars[1]  # read may name only a ref the search returned
    assert f'"\\"{ref}\\""' not in grammars[2]  # ... and not one already read
    assert lt.final.audit is not None and lt.retrieved


def test_agent_budget_leaves_only_answer_on_the_last_step_and_repeats_are_caught(kb_index, gen):
    def reply(m, grammar):
        if "act ::= answer\n" in grammar:  # the grammar allows nothing else, as llama.cpp would enforce
            return '{"thought": "只能回答。", "action": "answer"}'
        return '{"thought": "再查一次。", "action": "search", "query": "过拟合"}'

    chat = ScriptedChat(reply=reply)
    lt = agent("什么是过拟合？", RunContext(kb_index, SETTINGS, gen, chat=chat, budget=3))
    assert [s.kind for s in lt.steps] == ["search", "repeat", "answer"] and lt.searches == 1
    assert "budget" in lt.steps[-1].decision and any("budget (3)" in n for n in lt.notes)
    last_prompt = [c[1] for c in chat.call_log if c[0] == "complete"][-1]
    assert "步数用完了" in _user(last_prompt)
    assert "你已经检索过“过拟合”" in lt.steps[-1].prompt[-1]["content"]  # the repeat was answered by a note


def test_a_garbled_query_from_either_loop_is_not_searched_as_written(kb_index, gen):
    """The shape check on every generation path: a Self-RAG rewrite or an agent query that is a list of refs is no
    query; the question (and, in Self-RAG, the unsupported sentence) is searched instead, and the step says why."""
    from rag.messages import localized

    refs = "资料编号：faq_030, faq_029, faq_031, faq_028"

    def verdict(m):
        need = _need(0.9)(m)
        return need if need is not None else 0.1  # nothing relevant, nothing supported: search again

    lt = self_rag("什么是过拟合？", RunContext(kb_index, SETTINGS, gen, chat=ScriptedChat(verdict=verdict,
                                                                                   reply=lambda m, g: refs), budget=2))
    rewrite = next(s for s in lt.steps if s.kind == "rewrite")
    assert rewrite.query.startswith("什么是过拟合？") and "faq_030" not in rewrite.query and rewrite.raw == refs
    assert "garbled" in rewrite.decision and "乱" in localized(rewrite.decision, "zh")

    script = iter([json.dumps({"thought": "查。", "action": "search", "query": refs}, ensure_ascii=False),
                   '{"thought": "够了。", "action": "answer"}'])
    lt = agent("什么是过拟合？", RunContext(kb_index, SETTINGS, gen, chat=ScriptedChat(reply=lambda m, g: next(script))))
    search = lt.steps[0]
    assert search.kind == "search" and search.query == "什么是过拟合？" and search.hits
    assert "garbled" in search.decision and "改用问题检索" in localized(search.decision, "zh")
    assert refs in search.raw

    # graph-global's map: a community "point" that is a ref list is left out, not read as evidence
    lt = run_loop("graph-global", "这个知识库讲了哪些主题？", RunContext(kb_index, SETTINGS, gen,
                                                                      chat=ScriptedChat(reply=lambda m, g: refs)))
    maps = [s for s in lt.steps if s.kind == "map"]
    assert maps and all("garbled" in s.decision and "写乱了" in localized(s.decision, "zh") for s in maps)
    assert lt.graph["points"] == [] and refs not in lt.final.graph_block


def test_agent_answers_a_greeting_without_searching(kb_index, gen):
    chat = ScriptedChat(reply=lambda m, g: '{"thought": "这是问候。", "action": "answer"}')
    lt = agent("你好", RunContext(kb_index, SETTINGS, gen, chat=chat))
    assert not lt.retrieved and lt.final.contexts == []
    assert "without searching" in lt.final.notes[0] and "这是问候" in lt.final.notes[0]


def test_agent_without_a_grammar_stops_on_an_unreadable_action_and_says_so(kb_index, gen):
    chat = ScriptedChat(reply=lambda m, g: "I would search for overfitting.", grammar=False)
    lt = agent("什么是过拟合？", RunContext(kb_index, SETTINGS, gen, chat=chat))
    assert lt.steps[-1].kind == "answer" and "unreadable action" in lt.steps[-1].decision
    assert any("could not be read" in n for n in lt.notes)
    assert all(c[2] is None for c in chat.call_log)  # no grammar was sent to a backend that takes none


@pytest.mark.parametrize("text, ok", [
    ('{"thought": "t", "action": "search", "query": "q"}', True),
    ('Sure! {"thought": "t", "action": "answer"} done', True),
    ('{"thought": "t", "action": "read", "ref": "faq_999"}', False),
    ('{"thought": "t", "action": "search"}', False),
    ('{"thought": "t", "action": "fly"}', False),
    ("no json", False),
])
def test_parse_action_reads_what_it_can_and_says_why_not(text, ok):
    action, why = parse_action(text, ["faq_001"])
    assert (action is not None) is ok and (why == "") is ok


def test_action_grammar_compiles_in_llama_cpp_and_escapes_refs():
    from tests.conftest import require

    llama_cpp = require("llama_cpp")
    g = action_grammar(['faq_001', 'odd"ref'], ("search", "read", "answer"))
    assert '"\\"odd\\\\\\"ref\\""' in g  # the JSON string "odd\"ref", as a GBNF literal
    llama_cpp.LlamaGrammar.from_string(g, verbose=False)
    llama_cpp.LlamaGrammar.from_string(action_grammar([], ("answer",)), verbose=False)
    with pytest.raises(ValueError):
        action_grammar([], ("read",))  # read with nothing to read leaves no action


def test_facts_found_ignores_case_and_spaces():
    assert facts_found("k 通常取 60，属于按排名融合。", [["60"], ["按排名"]]) == 1.0
    assert facts_found("EFSEARCH 控制队列", [["efSearch"], ["NumPy"]]) == 0.5
    assert facts_found("x", []) is None


# ---------------------------------------------------------------------------------- the real model

@pytest.fixture(scope="module")
def local(embedder, local_model):
    from rag.answer.generation import LLMGenerator
    from rag.models.local_llm import LocalChat

    chat = LocalChat("0.5b", n_ctx=4096, max_tokens=96)
    return chat, LLMGenerator(chat)


def test_the_bundled_model_answers_a_greeting_without_retrieval_in_both_loops(kb_index, local):
    chat, generator = local
    for run in (self_rag, agent):
        lt = run("你好", RunContext(kb_index, SETTINGS, generator, chat=chat))
        assert not lt.retrieved and lt.searches == 0, (run.__name__, [s.decision for s in lt.steps])
        assert lt.answer.strip() and lt.final.notes  # the trace says why it did not search


def test_the_bundled_models_actions_always_parse_under_the_grammar(kb_index, local):
    chat, generator = local
    lt = agent("BM25 的参数 b 常取多少？中文做 BM25 之前要先做什么？", RunContext(kb_index, SETTINGS, generator, chat=chat, budget=4))
    assert lt.searches >= 1
    seen: list[str] = []
    for s in lt.steps:
        action, why = parse_action(s.raw, [h.ref for st in lt.steps for h in st.hits] or seen)
        assert action is not None, (s.raw, why)


# -------------------------------------------------------------------------------------------- judge

def test_average_precision_is_ragas_context_precision():
    from rag.evaluate.judge import average_precision

    assert average_precision([True, False, True]) == pytest.approx((1 / 1 + 2 / 3) / 2)
    assert average_precision([False, True]) == pytest.approx(0.5)
    assert average_precision([False, False]) == 0.0


def test_judge_answer_scores_every_metric_from_its_verdicts(kb_index):
    from rag.audit.citations import audit
    from rag.evaluate.judge import Gold, audit_agreement, judge_answer

    c1, c2 = kb_index.chunk("faq_001"), kb_index.chunk("faq_030")
    answer = "过拟合指模型在训练集上表现很好，但在没见过的验证集或测试集上明显变差。[faq_001] 过拟合只发生在线性模型上。[faq_001]"
    a = audit(answer, {c.ref: c.text for c in (c1, c2)}, kb_index.embedder)

    def verdict(m):
        text = _user(m)
        if "句子：" in text:  # the checker's second opinion (faithfulness, recall): yes when the sentence is in a context
            statement = text.split("句子：", 1)[1].split("\n")[0]
            return 0.9 if any(statement.rstrip("。") in c.text for c in (c1, c2)) else 0.1
        return 0.9 if "过拟合" in text.split("资料：", 1)[1] else 0.1  # context precision: only faq_001 is useful

    chat = ScriptedChat(verdict=verdict, reply=lambda m, g: "什么是过拟合？")
    reference = "过拟合指模型在训练集上表现很好，但在没见过的验证集或测试集上明显变差。过拟合也叫 underfitting。"
    res = judge_answer(_judging(kb_index, chat), "什么是过拟合？", answer, [c2, c1], gold=Gold(reference, ids=("faq_001",)),
                       audit=a)
    assert res.scores["faithfulness"] == pytest.approx(0.5)  # one of two sentences is in the context
    assert res.scores["answer relevancy"] == pytest.approx(1.0, abs=1e-5)  # the judge wrote the question back
    assert res.scores["context precision"] == pytest.approx(0.5)  # the useful context is ranked second
    assert res.scores["context recall"] == pytest.approx(0.5)
    assert res.gold_precision == pytest.approx(0.5) and res.reference_source == "written reference"
    faith = [c for c in res.checks if c.metric == "faithfulness"]
    assert [c.audit_label for c in faith] == [s.label for s in a.sentences]
    assert faith[0].support.label == "supported" and faith[1].support.label != "supported"  # the audit's notion
    assert faith[0].verdict.answer and faith[1].verdict is None  # the judge is asked only where the checks pass
    table = audit_agreement([res])
    assert sum(r["yes"] + r["no"] for r in table.values()) == 1

    refusal = judge_answer(_judging(kb_index, chat), "公司年假几天？", "资料不足", [c1], gold=Gold(text=c1.text))
    assert refusal.scores["faithfulness"] is None and refusal.scores["answer relevancy"] == 0.0
    assert refusal.reference_source == "gold chunks' text"


def test_a_loop_run_exports_a_handout(kb_index, gen):
    chat = ScriptedChat(verdict=lambda m: _need(0.9)(m) or 0.9)
    md = self_rag("什么是过拟合？", RunContext(kb_index, SETTINGS, gen, chat=chat)).to_markdown()
    assert md.startswith("# self-rag: 什么是过拟合？") and "## 1. decide" in md and "- verdict: yes" in md
    assert "# RAG trace" in md  # the answer's own trace follows the timeline


# --------------------------------------------------------------------------------- stopping a run

def _judging(kb_index, chat, control=None) -> RunContext:
    """The run context a judge call needs: its model and the index's embedder (the generator is not used)."""
    return RunContext(kb_index, SETTINGS, ExtractiveGenerator(kb_index.embedder), chat=chat,
                      control=control or RunControl())


def _stopped_mid_call(run, chat):
    """Run `run(control)` in a thread, stop it while its first model call is held at the chat's gate, and
    return (the exception it ended with, how many model calls were made)."""
    import threading

    control, out = RunControl(), {}

    def target():
        try:
            run(control)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc

    th = threading.Thread(target=target)
    th.start()
    assert chat.started.wait(30)
    control.stop()
    th.join(30)
    assert not th.is_alive()
    return out.get("error"), len(chat.calls)


def test_stopping_a_self_rag_step_ends_the_loop_there(kb_index, gen):
    import threading

    from rag.errors import GenerationCancelled

    chat = FakeChat(verdict=lambda m: 0.9, gate=threading.Event())
    error, calls = _stopped_mid_call(lambda c: self_rag("什么是过拟合？", RunContext(kb_index, SETTINGS, gen, chat=chat, control=c)), chat)
    assert isinstance(error, GenerationCancelled) and calls == 1  # the first decision, then nothing


def test_stopping_the_judge_ends_it_at_the_call_under_way(kb_index):
    import threading

    from rag.errors import GenerationCancelled
    from rag.evaluate.judge import Gold, judge_answer

    c1 = kb_index.chunk("faq_001")
    chat = FakeChat(verdict=lambda m: 0.9, reply=lambda m, g: "什么是过拟合？", gate=threading.Event())
    error, calls = _stopped_mid_call(lambda c: judge_answer(
        _judging(kb_index, chat, c), "什么是过拟合？",
        "过拟合指模型在训练集上表现很好。[faq_001]", [c1], gold=Gold("过拟合指模型在训练集上表现很好。")), chat)
    assert isinstance(error, GenerationCancelled) and calls == 1


def test_a_judge_call_that_fails_is_a_note_and_the_other_figures_stand(kb_index):
    from rag.errors import LLMError
    from rag.evaluate.judge import Gold, judge_answer

    c1 = kb_index.chunk("faq_001")

    def verdict(m):
        if "资料：" in _user(m) and "句子：" not in _user(m):
            raise LLMError("the endpoint broke")  # context precision's calls
        return 0.9

    chat = ScriptedChat(verdict=verdict, reply=lambda m, g: "什么是过拟合？")
    res = judge_answer(_judging(kb_index, chat), "什么是过拟合？", "过拟合指模型在训练集上表现很好。[faq_001]", [c1],
                       gold=Gold("过拟合指模型在训练集上表现很好。"))
    assert res.scores["context precision"] is None
    assert any("context precision" in n and "broke" in n for n in res.notes)
    assert res.scores["answer relevancy"] is not None and res.scores["context recall"] is not None


def test_self_rags_check_step_and_the_answer_audit_agree_on_every_sentence_of_the_multihop_answers(kb_index, gen):
    """One support check behind every "supported": the loop's check step shows the audit's own label for each
    sentence (the model's yes/no beside it, labelled), so the two never disagree, on every multi-hop question."""
    from pathlib import Path

    from rag.evaluate.evaluation import load_queries

    queries = load_queries(Path(__file__).resolve().parents[1] / "data" / "multihop.jsonl")
    chat = ScriptedChat(verdict=lambda m: _need(0.9)(m) or 0.3)  # the model doubts every sentence it is asked about
    compared = 0
    for q in queries:
        lt = self_rag(q.query, RunContext(kb_index, SETTINGS, gen, chat=chat, budget=1))
        checks = [s for s in lt.steps if s.kind == "check" and s.supports]
        if not checks:
            continue
        audit = [s for s in lt.final.audit.sentences if s.label != "not-enough"]
        assert [x.label for x in checks[-1].supports] == [s.label for s in audit], q.query
        assert "the audit:" in checks[-1].decision and "the model's yes/no:" in checks[-1].decision
        compared += len(audit)
    assert compared >= len(queries)  # every question's draft was checked, sentence by sentence

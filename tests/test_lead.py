"""The model's choice of the quote that leads an answer when everything it wrote was set aside (rag/answer/lead.py),
on hand-made quotes and, through the pipeline, on the bundled knowledge base with the real embedder. The fake
chat stands in for the model's scores, never for the choosing."""

from __future__ import annotations

import math

import pytest

from rag.answer.fill_in import FillIn, quoted
from rag.answer.lead import choose_lead
from tests.fake_chat import FakeChat


@pytest.fixture(autouse=True)
def no_selector(monkeypatch):
    """The model chooses the lead only where no learned selector did (selector.py: lightgbm or its model missing, or an
    embedder without one): these tests run that path."""
    monkeypatch.setattr("rag.answer.extractive._load_selector", lambda name: (None, None))

QUOTES = [FillIn("a", "RRF 由 Cormack 等人提出。", False, 0.0),
          FillIn("a", "得分为各列表中 1/(k + rank) 的总和。", False, 0.0),
          FillIn("b", "混合检索常用 RRF。", False, 0.0)]


def _scores(per_token: dict[str, tuple[float, int]]):
    """A fake model's scores: for a reply containing a key, `n` tokens of log-probability `lp` each."""
    def score(messages, text):
        for key, (lp, n) in per_token.items():
            if key in text:
                return [lp] * n
        return [-5.0] * 10
    return score


def test_the_highest_per_token_probability_leads_not_the_shortest_quoted():
    # the formula's reply is longer and so less likely in total (-6 against -4), but likelier per token
    chat = FakeChat(score=_scores({"Cormack": (-1.0, 4), "1/(k": (-0.5, 12), "混合检索": (-2.0, 3)}))
    choice = choose_lead(chat, [{"role": "user", "content": "q"}], QUOTES)
    assert choice is not None and choice.chosen == 1 and choice.lead.ref == "a"
    assert math.isclose(choice.lead.per_token, math.exp(-0.5)) and choice.lead.tokens == 12
    assert choice.answer() == quoted(QUOTES[1].sentence, "a") + quoted(QUOTES[0].sentence, "a") + quoted(QUOTES[2].sentence, "b")
    assert [c["continuation"] for c in chat.calls] == [quoted(q.sentence, q.ref) for q in QUOTES]


def test_one_quote_is_no_choice_and_a_tie_keeps_the_document_order():
    chat = FakeChat(score=lambda m, t: [-1.0])
    assert choose_lead(chat, [], QUOTES[:1]) is None and not chat.calls
    assert choose_lead(chat, [], QUOTES).chosen == 0


def _ask(kb_index, chat):
    from rag.answer.generation import LLMGenerator
    from rag.pipeline import ask
    from rag.run import RunContext
    from rag.trace import AskSettings

    return ask("混合检索里的 RRF 是怎么计算的？", RunContext(kb_index, AskSettings(cite="constrained"), LLMGenerator(chat)))


RESTATES = "混合检索里的 RRF 是怎么计算的。[faq_030]"  # states nothing: set aside, the quotes are the whole answer


def test_the_pipeline_leads_with_the_models_choice_when_nothing_it_wrote_is_left(kb_index):
    chat = FakeChat(reply=lambda m, g: RESTATES, score=_scores({"1/(k + rank)": (-0.1, 20)}))
    trace = _ask(kb_index, chat)
    assert trace.model_answer == "" and trace.lead is not None and len(trace.lead.candidates) >= 2
    assert trace.answer.startswith("「") and "1/(k + rank)" in trace.lead.lead.sentence
    assert trace.answer.startswith(quoted(trace.lead.lead.sentence, trace.lead.lead.ref))
    appended = sorted(quoted(c.sentence, c.ref) for c in trace.fill_in if c.appended)
    assert sorted(quoted(c.sentence, c.ref) for c in trace.lead.candidates) == appended  # the same quotes, reordered
    assert any("chose which quote leads" in n for n in trace.notes)
    shown = trace.to_dict()["lead"]["candidates"][trace.lead.chosen]["per_token"]  # the JSON rounds to 6 places
    assert math.isclose(shown, trace.lead.lead.per_token, abs_tol=1e-6)
    assert "the model chose which quote leads" in trace.to_markdown("en")
    assert "领头的原文由模型选出" in trace.to_markdown("zh")


def test_the_model_does_not_choose_when_its_own_sentence_stands_or_it_cannot_score(kb_index):
    own = "文档 d 的融合分数为它在各列表中 1/(k + rank) 的总和。[faq_030]"  # supported, and gives the formula asked
    wrote = FakeChat(reply=lambda m, g: own, score=lambda m, t: [-1.0])
    trace = _ask(kb_index, wrote)
    assert trace.lead is None and trace.answer.startswith(own)
    assert not [c for c in wrote.calls if c["kind"] == "score"]
    cannot = FakeChat(reply=lambda m, g: RESTATES)  # scores no reply: the document order stays, and it says so
    trace = _ask(kb_index, cannot)
    first = next(c for c in trace.fill_in if c.appended)  # asked how it is computed: the quotes with a formula
    assert trace.lead is None and trace.answer.startswith(quoted(first.sentence, first.ref)) and "1/" in first.sentence
    assert any("document order" in n for n in trace.notes)


def test_the_page_draws_the_chosen_quote_apart_and_escapes_it(kb_index):
    from ui.answer_panels import answer_parts_html

    hostile = FillIn("faq_030", "<b>公式</b> 1/(k + rank)。", False, 0.0)
    chat = FakeChat(reply=lambda m, g: RESTATES, score=_scores({"<b>": (-0.1, 20)}))
    trace = _ask(kb_index, chat)
    # the page reads only the trace: the chosen quote (here a hand-made one with markup in it) leads, then the rest
    choice = choose_lead(chat, [], [trace.fill_in[0], hostile])
    assert choice is not None and choice.chosen == 1
    trace.lead, trace.answer = choice, choice.answer()
    html = answer_parts_html(trace, {"faq_030"}, {"faq_030": 1})
    assert "<b>公式</b>" not in html and "&lt;b&gt;公式&lt;/b&gt;" in html
    assert html.index("#e0f2fe") < html.index("&lt;b&gt;") < html.index("Cormack")  # blue ground, chosen, then the rest
    assert "0.90" in html  # its per-token probability, exp(-0.1)

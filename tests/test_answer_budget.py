"""An answer in seconds: the token budget fits the asked slot, the grammar ends after one blank, the budget reaches
the model."""

from __future__ import annotations

from rag.answer import budget
from rag.answer.budget import answer_tokens
from rag.answer.citation_grammar import citation_grammar
from rag.answer.generation import LLMGenerator
from rag.answer.prompt import build_prompt
from rag.ingest.chunking import Chunk


def test_a_number_gets_a_short_budget_and_a_reason_a_longer_one():
    assert answer_tokens("RRF 的常数 k 通常取多少？") == budget.TOKENS["number"]
    assert answer_tokens("为什么递归比迭代更耗内存？") == budget.SENTENCES
    assert answer_tokens("How many coins does the greedy approach use?") == budget.TOKENS["number"]
    assert budget.TOKENS["number"] < budget.SENTENCES


def test_a_two_part_question_gets_each_parts_budget_and_the_cap_holds():
    two = "QLoRA 把基座模型量化到多少 bit？指令微调的英文缩写为什么叫 SFT？"
    assert answer_tokens(two) == budget.TOKENS["number"] + budget.SENTENCES
    assert answer_tokens(two, cap=100) == 100
    many = "？".join(["为什么 A"] * 10) + "？"
    assert answer_tokens(many) == budget.MAX_PARTS * budget.SENTENCES


def test_the_grammar_allows_one_blank_after_a_sentence_not_a_run_of_them():
    grammar = citation_grammar(["faq_001"], "zh", max_sentences=2)
    assert "space ::= [ \\n]?" in grammar
    assert "[ \\n]*" not in grammar


class _Chat:
    name, label, supports_grammar, prompt_budget = "fake", "fake", False, None

    def __init__(self):
        self.max_tokens = "unset"

    def count_tokens(self, messages):
        return None

    def complete(self, messages, *, stream=False, temperature=None, max_tokens=None, grammar=None, control=None):
        self.max_tokens = max_tokens
        yield "答。[c1]"


def test_the_prompt_s_budget_reaches_the_model():
    chat = _Chat()
    chunk = Chunk("c1", "d", "RRF 的常数 k 通常取 60。", 0, 17, "c1")
    from dataclasses import replace

    prompt = replace(build_prompt("k 取多少？", [chunk], "zh"), answer_tokens=64)
    assert "".join(LLMGenerator(chat).generate(prompt)) == "答。[c1]"
    assert chat.max_tokens == 64

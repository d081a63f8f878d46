"""rag/search/rewrite.py: the tolerant list parser, HyDE and multi-query against the fake OpenAI server."""

from __future__ import annotations

import numpy as np
import pytest

from rag.errors import ConfigError, LLMUnavailableError
from rag.models.llm import OpenAIChat
from rag.search.rewrite import (
    HYDE_SYSTEM,
    MULTI_QUERY_SYSTEM,
    hyde,
    multi_query,
    parse_query_list,
)

ABC = ["alpha query", "beta query", "gamma query"]


@pytest.mark.parametrize("text", [
    '["alpha query", "beta query", "gamma query"]',
    '{"queries": ["alpha query", "beta query", "gamma query"]}',
    '{"note": "x", "variants": ["alpha query", "beta query", "gamma query"]}',
    '[{"query": "alpha query"}, {"query": "beta query"}, {"query": "gamma query"}]',
    '```json\n["alpha query", "beta query", "gamma query"]\n```',
    'Sure! Here you go:\n```\n["alpha query", "beta query", "gamma query"]\n```\nGood luck.',
    '["alpha query", "beta query", "gamma query"',  # cut off by max_tokens
    "1. alpha query\n2. beta query\n3. gamma query",
    "1、alpha query\n2、beta query\n3、gamma query",
    "1) alpha query\n2) beta query\n3) gamma query",
    "（1）alpha query\n（2）beta query\n（3）gamma query",
    "- alpha query\n* beta query\n• gamma query",
    "Here are three rewrites:\n\n1. \"alpha query\"\n2. 'beta query',\n3. **gamma query**\n\nHope this helps!",
    "alpha query\nbeta query\ngamma query\n",
    "<think>the user wants three</think>\nalpha query\nbeta query\ngamma query",
    "Q1: alpha query\nQ2: beta query\nQ3: gamma query",
])
def test_parse_query_list_formats(text):
    assert parse_query_list(text, 5) == ABC


def test_parse_chinese_numbered_with_quotes_and_punctuation():
    text = "以下是改写：\n1. “重置密码的步骤”；\n2. 「忘记密码怎么办」\n3. 密码找回流程。"
    assert parse_query_list(text, 3) == ["重置密码的步骤", "忘记密码怎么办", "密码找回流程"]


def test_parse_drops_duplicates_and_empties_and_caps():
    text = '["a b", "", "  ", "A  B", "c d", "e f", "g h"]'
    assert parse_query_list(text, 3) == ["a b", "c d", "e f"]
    assert parse_query_list("- x\n- x\n- y", 5) == ["x", "y"]


def test_parse_keeps_decimals_and_question_marks():
    assert parse_query_list("3.5 mm jack pinout?\n2.4 GHz vs 5 GHz?", 5) == ["3.5 mm jack pinout?", "2.4 GHz vs 5 GHz?"]


@pytest.mark.parametrize("text", ["", "   \n ", None, "!!!\n---\n...", "```\n```", "[]", "{}", '{"queries": []}'])
def test_parse_nothing_usable_is_empty(text):
    assert parse_query_list(text, 3) == []


def test_parse_rejects_bad_n():
    with pytest.raises(ConfigError):
        parse_query_list("a", 0)


# ---- with the fake server --------------------------------------------------------------------

def test_hyde_sends_question_in_its_language(fake_llm):
    fake_llm.queue({"content": "  RAG 先从知识库检索相关段落，再让模型据此作答。\n"}, {"content": "RAG retrieves, then generates."})
    chat = OpenAIChat(fake_llm.config())
    assert hyde("什么是 RAG？", chat) == "RAG 先从知识库检索相关段落，再让模型据此作答。"
    assert hyde("What is RAG?", chat) == "RAG retrieves, then generates."
    zh, en = fake_llm.chat_requests
    assert zh.body["messages"] == [{"role": "system", "content": HYDE_SYSTEM["zh"]},
                                   {"role": "user", "content": "什么是 RAG？"}]
    assert en.body["messages"][0]["content"] == HYDE_SYSTEM["en"]
    assert not zh.body.get("stream")


def test_hyde_empty_output_is_empty_string(fake_llm):
    fake_llm.queue({"content": "   \n"}, {"content": "<think>let me think</think>\n  A passage.  "})
    chat = OpenAIChat(fake_llm.config())
    assert hyde("什么是 RAG？", chat) == ""
    assert hyde("什么是 RAG？", chat) == "A passage."


def test_multi_query_drops_original_and_duplicates(fake_llm):
    reply = '```json\n["什么是 RAG?", "RAG 的定义是什么", "检索增强生成 原理", "RAG 的定义是什么", "RAG 和微调的区别"]\n```'
    fake_llm.queue({"content": reply})
    variants = multi_query("什么是 RAG？", OpenAIChat(fake_llm.config()), n=3)
    assert variants == ["RAG 的定义是什么", "检索增强生成 原理", "RAG 和微调的区别"]
    (req,) = fake_llm.chat_requests
    assert req.body["messages"][0]["content"] == MULTI_QUERY_SYSTEM["zh"].format(n=3)
    assert req.body["messages"][1]["content"] == "什么是 RAG？"


def test_multi_query_english_numbered_and_capped(fake_llm):
    fake_llm.queue({"content": "1. how to reset a password\n2. forgot password steps\n3. account recovery\n4. extra"})
    variants = multi_query("How do I reset my password?", OpenAIChat(fake_llm.config()), n=2)
    assert variants == ["how to reset a password", "forgot password steps"]
    assert "2 different search queries" in fake_llm.chat_requests[0].body["messages"][0]["content"]


def test_multi_query_garbage_is_empty(fake_llm):
    fake_llm.queue({"content": "!!!"})
    assert multi_query("什么是 RAG？", OpenAIChat(fake_llm.config())) == []


def test_no_chat_raises_unavailable_with_the_fix():
    with pytest.raises(LLMUnavailableError, match="OPENAI_BASE_URL"):
        hyde("什么是 RAG？", None)
    with pytest.raises(LLMUnavailableError, match="OPENAI_BASE_URL"):
        multi_query("什么是 RAG？", None)


def test_bad_arguments(fake_llm):
    chat = OpenAIChat(fake_llm.config())
    with pytest.raises(ConfigError):
        multi_query("q", chat, n=0)
    with pytest.raises(ConfigError):
        hyde("  ", chat)
    assert fake_llm.requests == []


def test_query_points_and_make_rewrites_give_the_trace_shape(kb_index):
    from rag.search.rewrite import make_rewrites, query_points
    from tests.fake_chat import FakeChat

    def Chat():  # noqa: N802 - reads like the class it used to be
        return FakeChat(reply=lambda messages, grammar: "1. 变体一\n2. 变体二" if "JSON" in messages[0]["content"]
                        or "查询" in messages[0]["content"] else "过拟合是模型记住了噪声。")

    vectors, texts = query_points(kb_index, "什么是过拟合？", {"hyde": "过拟合是模型记住了噪声。",
                                                             "queries": ["什么是过拟合？", "变体一", "变体二"]})
    assert list(vectors) == ["query", "HyDE", "q2", "q3"] and texts["q3"] == "变体二"
    assert all(abs(float(np.linalg.norm(v)) - 1.0) < 1e-4 for v in vectors.values())
    assert make_rewrites("hyde", "什么是过拟合？", Chat())["hyde"]
    with pytest.raises(ConfigError):
        make_rewrites("nope", "q", Chat())


def test_a_rewrite_that_loops_is_cut_where_the_guard_says_stop():
    """The bundled 0.5B sometimes loops in a rewrite ("ReLU为什么比sigmoid好用？为什么ReLU比sigmoid好用？…") until its
    token limit: 26 s where a good rewrite takes about 1. With `stop` (the pipeline passes the answer's repetition
    guard) the reply is streamed and cut at the loop; without it, read whole, as an endpoint's reply is."""
    from rag.audit.shape import RepetitionGuard
    from tests.fake_chat import FakeChat

    loop = '["ReLU为什么比sigmoid好用？' + "为什么ReLU比sigmoid好用？" * 300
    fed: list[str] = []
    guard = RepetitionGuard()

    def stop(delta):
        fed.append(delta)
        return guard.feed(delta)

    chat = FakeChat(reply=lambda m, g: loop)
    variants = multi_query("ReLU 为什么比 sigmoid 好用", chat, 3, stop=stop)
    assert 0 < len("".join(fed)) < 200 and len(variants) <= 1  # stopped within the first few repeats
    assert hyde("ReLU 为什么比 sigmoid 好用", FakeChat(reply=lambda m, g: loop), stop=RepetitionGuard().feed) != loop
    assert hyde("ReLU 为什么比 sigmoid 好用", FakeChat(reply=lambda m, g: loop)) == loop.strip()  # no stop: whole

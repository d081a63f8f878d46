"""rag/answer/prompt.py: numbered, ref-labelled context blocks, grounding rules in zh and en, the no-RAG control."""

from __future__ import annotations

import re

import pytest

from rag.answer.prompt import (
    NOT_ENOUGH,
    ContextBlock,
    Prompt,
    build_no_rag_prompt,
    build_prompt,
)
from rag.errors import ConfigError
from rag.ingest.chunking import Chunk
from rag.ingest.language import detect_lang


def _chunk(ref, text, title="", doc_id=None):
    doc_id = doc_id or ref.split("#")[0]
    return Chunk(chunk_id=ref, doc_id=doc_id, text=text, start=0, end=len(text), ref=ref,
                 metadata={"title": title} if title else {})


CHUNKS = [
    _chunk("faq_003", "如何重置密码？\n在登录页点击“忘记密码”，按邮件提示操作。", title="如何重置密码？"),
    _chunk("manual#2", "密码至少 8 位，需包含数字和字母。", title="账号安全"),
]


def test_blocks_numbered_with_refs_in_order():
    p = build_prompt("怎么重置密码？", CHUNKS, lang="zh")
    assert isinstance(p, Prompt) and p.rag and p.lang == "zh"
    assert [(b.n, b.ref, b.chunk_id) for b in p.contexts] == [(1, "faq_003", "faq_003"), (2, "manual#2", "manual#2")]
    assert all(isinstance(b, ContextBlock) for b in p.contexts)
    first = p.user.index("[faq_003]\n如何重置密码？")
    second = p.user.index("[manual#2] 账号安全\n密码至少 8 位")
    assert first < second < p.user.index("问题：怎么重置密码？")
    assert p.user.rstrip().endswith("怎么重置密码？")


def test_title_not_repeated_when_text_starts_with_it():
    block = build_prompt("q?", CHUNKS, lang="zh").contexts[0]
    assert block.title == "如何重置密码？"
    assert block.render() == "[faq_003]\n如何重置密码？\n在登录页点击“忘记密码”，按邮件提示操作。"


def test_messages_are_the_openai_wire_format():
    p = build_prompt("怎么重置密码？", CHUNKS)
    assert p.messages == [{"role": "system", "content": p.system}, {"role": "user", "content": p.user}]
    assert "manual#2" not in p.system and "怎么重置密码" not in p.system  # parts stay separate


@pytest.mark.parametrize("lang, phrases", [
    ("zh", ["只使用资料中的信息", "方括号", "[faq_003]", "不要编造 ref", "“资料不足”"]),
    ("en", ["Use only information in the context", "square brackets", "[faq_003]", "Never invent a ref",
            '"not enough information"']),
])
def test_plain_rules_present_in_both_languages(lang, phrases):
    p = build_prompt("how do I reset my password?", CHUNKS, lang=lang, style="plain")
    for phrase in phrases:
        assert phrase in p.system
    assert NOT_ENOUGH[lang] in p.system
    other = "en" if lang == "zh" else "zh"
    assert NOT_ENOUGH[other] not in p.system


@pytest.mark.parametrize("lang, phrases", [
    ("zh", ["第一句话直接回答问题", "公式", "照抄资料", "方括号", "不要编造编号"]),
    ("en", ["first sentence answers the question", "formula", "Copy the", "square brackets", "never invent"]),
])
def test_answer_first_rules_are_the_same_for_every_question(lang, phrases):
    """Their KV state is computed once (rag/models/local_llm.py): the rules may not name a question's refs."""
    p = build_prompt("how do I reset my password?", CHUNKS, lang=lang)
    q = build_prompt("another question?", CHUNKS[1:], lang=lang)
    assert p.system == q.system and "faq_003" not in p.system and "manual" not in p.system
    for phrase in phrases:
        assert phrase in p.system
    assert NOT_ENOUGH[lang] in p.system
    gated = build_prompt("how do I reset my password?", CHUNKS, lang=lang, refusal=False)
    assert NOT_ENOUGH[lang] not in gated.system and gated.system == p.system.rsplit("\n", 1)[0]


def test_an_unknown_prompt_style_is_refused():
    with pytest.raises(ConfigError, match="answer-first, plain"):
        build_prompt("q?", CHUNKS, style="chatty")


def test_english_headings_and_auto_language():
    p = build_prompt("How do I reset my password?", CHUNKS, lang="auto")
    assert p.lang == "en" and p.user.startswith("Context:") and "Question: How do I reset my password?" in p.user
    assert build_prompt("怎么重置密码", CHUNKS, lang="auto").lang == "zh"


def test_segments_reassemble_user_message():
    for p in (build_prompt("q?", CHUNKS), build_prompt("q?", [], lang="en"), build_no_rag_prompt("q?")):
        kinds = [k for k, _ in p.segments()]
        assert kinds[0] == "system" and kinds[-1] == "question"
        assert "\n\n".join(t for k, t in p.segments() if k != "system") == p.user
    assert [k for k, _ in build_prompt("q?", CHUNKS).segments()].count("context") == 2


def test_no_contexts_says_so():
    p = build_prompt("怎么重置密码？", [])
    assert p.contexts == [] and "没有检索到资料" in p.user


def test_no_rag_prompt_has_no_context_and_no_citation_rules():
    for lang in ("zh", "en"):
        p = build_no_rag_prompt("怎么重置密码？", lang)
        assert p.rag is False and p.contexts == [] and p.lang == lang
        assert p.user == "怎么重置密码？"
        text = "\n".join(m["content"] for m in p.messages)
        assert "[" not in text and NOT_ENOUGH[lang] not in text and "faq_" not in text


def test_bad_input():
    with pytest.raises(ConfigError):
        build_prompt("   ", CHUNKS)
    with pytest.raises(ConfigError, match="zh, en"):
        build_prompt("q", CHUNKS, lang="fr")
    with pytest.raises(ConfigError):
        build_no_rag_prompt("")


@pytest.mark.parametrize("text, lang", [
    ("什么是检索增强生成？", "zh"),
    ("What is retrieval-augmented generation?", "en"),
    ("RAG 的 chunk size 怎么选？", "zh"),
    ("How do I use BM25 with 中文?", "en"),
    ("", "zh"),
    ("12345 ???", "zh"),
])
def test_detect_lang(text, lang):
    assert detect_lang(text) == lang


def test_fake_server_canned_answer_cites_a_real_and_a_made_up_ref(fake_llm):
    from rag.answer.generation import LLMGenerator
    from rag.models.llm import OpenAIChat

    p = build_prompt("怎么重置密码？", CHUNKS)
    answer = "".join(LLMGenerator(OpenAIChat(fake_llm.config())).generate(p))
    assert re.findall(r"\[([^\]]+)\]", answer) == ["faq_003", "faq_999"]
    assert fake_llm.chat_requests[0].body["messages"] == p.messages

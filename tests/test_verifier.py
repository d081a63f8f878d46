"""The learned support verifier (rag/audit/verifier.py) and the claims it is trained on (scripts/train_verifier.py)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from rag.audit.citations import audit
from rag.audit.support import Checker, check_sentence
from rag.audit.verifier import VERIFY_FEATURES, LearnedVerifier, answer_checker, learned_verifier, verify_values
from rag.errors import ModelUnavailableError

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import train_verifier  # noqa: E402

GREY = "海鸥 › 灰海鸥\n灰海鸥是一种常见的海鸟，体长约45厘米，翼展110厘米，分布在北半球沿海。"
BLACK = "海鸥 › 黑尾鸥\n黑尾鸥是一种常见的海鸟，体长约45厘米，翼展110厘米，分布在东亚沿海。"
QUESTION = "黑尾鸥的体长是多少？"
CLAIM = "黑尾鸥的体长是45厘米。"


def test_a_claim_puts_the_answer_where_the_question_asks():
    assert train_verifier.claim("剃刀嘴凤冠雉体长为多少？", "91厘米") == "剃刀嘴凤冠雉体长为91厘米。"
    assert train_verifier.claim("谁是北欧领导人？", "罗洛") == "罗洛是北欧领导人。"
    assert train_verifier.claim("生命数耗完即算为什么？", "踢爆") == "生命数耗完即算为踢爆。"
    assert train_verifier.claim("请介绍一下这个游戏", "踢爆") is None  # it asks nowhere: no claim is made from it


def test_another_subject_is_a_siblings_question_answered_from_this_chunk():
    made = train_verifier.another_subject("北京大学位于哪个城市？", "北京大学位于北京。",
                                          "北京大学\n北京大学位于北京，创办于1898年。", ["清华大学", "北京大学"],
                                          random.Random(0))
    assert made == ("清华大学位于哪个城市？", "清华大学位于北京。")
    # no other name of the corpus that the chunk never mentions: nothing to make
    assert train_verifier.another_subject("北京大学位于哪个城市？", "北京大学位于北京。",
                                          "北京大学\n北京大学位于北京。", ["北京大学"], random.Random(0)) is None


def test_the_features_see_a_subject_the_chunk_lacks_and_a_bare_title():
    s = check_sentence(CLAIM, {"c": GREY}, QUESTION)
    row = dict(zip(VERIFY_FEATURES, verify_values(s.sentence, GREY, QUESTION, s)[0]))
    assert row["q_longest_in_chunk"] == 0.0 and row["q_in_chunk"] < 1.0
    s = check_sentence(CLAIM, {"c": BLACK}, QUESTION)
    row = dict(zip(VERIFY_FEATURES, verify_values(s.sentence, BLACK, QUESTION, s)[0]))
    assert row["q_longest_in_chunk"] == 1.0 and row["q_in_chunk"] == 1.0 and row["new_in_title"] < 0.5
    s = check_sentence("黑尾鸥。", {"c": BLACK}, "黑尾鸥的翼展是多少？")
    row = dict(zip(VERIFY_FEATURES, verify_values(s.sentence, BLACK, "黑尾鸥的翼展是多少？", s)[0]))
    assert row["new_in_title"] == 1.0


def test_the_shipped_verifier_doubts_a_siblings_answer_the_rules_pass():
    verifier = learned_verifier()
    assert verifier is not None, "data/answering/verifier/verifier.txt ships with the project"
    rules = check_sentence(CLAIM, {"c": GREY}, QUESTION)
    assert rules.label == "supported"  # every word but the bird's name is in the chunk, the number too
    wrong = check_sentence(CLAIM, {"c": GREY}, QUESTION, Checker(verifier=verifier))
    check = next(c for c in wrong.checks if c.name == "verifier")
    assert wrong.label == "weak" and not check.passed and "P=" in check.why and "P=" in check.why.zh
    right = check_sentence(CLAIM, {"c": BLACK}, QUESTION, Checker(verifier=verifier))
    assert right.label == "supported" and next(c for c in right.checks if c.name == "verifier").passed


def test_the_answers_audit_runs_it_on_chinese_questions_only():
    """On Chinese questions (the claims it learned from answer them); with no question or an English one, the rules
    alone label the sentence."""
    answer = f"{CLAIM}[灰海鸥]"
    zh = audit(answer, {"灰海鸥": GREY}, question=QUESTION, checker=answer_checker()).sentences[0]
    assert zh.label == "weak" and any(c.name == "verifier" for c in zh.support.checks)
    en_chunk = "Gulls › Grey gull\nThe grey gull is a common seabird about 45 cm long with a wingspan of 110 cm."
    en = audit("The black-tailed gull is about 45 cm long.[g]", {"g": en_chunk},
               question="How long is the black-tailed gull?", checker=answer_checker()).sentences[0]
    assert not any(c.name == "verifier" for c in en.support.checks)  # trained on Chinese questions: English keeps the rules
    bare = audit(answer, {"灰海鸥": GREY}, checker=answer_checker()).sentences[0]
    assert not any(c.name == "verifier" for c in bare.support.checks)  # no question: nothing it learned applies


def test_a_missing_model_file_says_how_to_make_it(tmp_path):
    with pytest.raises(ModelUnavailableError, match="train_verifier"):
        LearnedVerifier(tmp_path / "verifier.txt")


def test_a_two_part_question_is_read_by_the_part_the_sentence_answers():
    """The claims it learned from answer one question each; a sentence answering the first part of a two-part question
    is read against that part, not against the second part's subject its chunk rightly lacks."""
    two = "黑尾鸥的体长是多少？北极燕鸥每年迁徙多远？"
    s = check_sentence(CLAIM, {"c": BLACK}, two)
    row = dict(zip(VERIFY_FEATURES, verify_values(s.sentence, BLACK, two, s)[0]))
    assert row["q_longest_in_chunk"] == 1.0 and row["q_in_chunk"] == 1.0


def test_rag_verifier_off_leaves_the_rules_alone(monkeypatch):
    monkeypatch.setenv("RAG_VERIFIER", "off")
    learned_verifier.cache_clear()
    try:
        assert learned_verifier() is None
        s = audit(f"{CLAIM}[灰海鸥]", {"灰海鸥": GREY}, question=QUESTION, checker=answer_checker()).sentences[0]
        assert s.label == "supported" and not any(c.name == "verifier" for c in s.support.checks)
    finally:
        monkeypatch.delenv("RAG_VERIFIER")
        learned_verifier.cache_clear()
    assert learned_verifier() is not None

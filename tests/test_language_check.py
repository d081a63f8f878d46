"""The gate's language check: "another language" only when it is true (script shares of the question and contexts)."""

from __future__ import annotations

import pytest

from rag.ingest.language import other_language

# a textbook's section: a few Chinese sentences, the formula in LaTeX (no Greek letter as such), more code than prose
CHINESE_CHAPTER = ("动量法使用过去梯度的加权平均来更新参数。\n"
                   "```python\ndef sgd_momentum(params, states, hyperparams):\n    for p, v in zip(params, states):\n"
                   "        with torch.no_grad():\n            v[:] = hyperparams['momentum'] * v + p.grad\n"
                   "            p[:] -= hyperparams['lr'] * v\n        p.grad.data.zero_()\n```\n"
                   "其中 $\\beta \\in (0, 1)$，通常取 0.9。")
# a section that is mostly code: its Chinese is under detect_lang's 0.3 of the words (read as English before)
CODE_HEAVY = ("以下代码实现了小批量随机梯度下降。\n```python\n"
              + "\n".join(f"def step_{i}(params, grads, lr):\n    for p, g in zip(params, grads):\n        p -= lr * g"
                          for i in range(4)) + "\n```")
ENGLISH_CHAPTER = ("Momentum replaces the gradient with an exponentially weighted average of past gradients. "
                   "With beta = 0.9 it averages about ten gradients.")
TRADITIONAL_CHAPTER = "動量法使用過去梯度的指數加權平均來更新參數，通常取 0.9。"


@pytest.mark.parametrize("question, contexts", [
    ("动量法里的 β 一般取多少？", CHINESE_CHAPTER),  # a Greek letter is a symbol, not a language
    ("动量法为什么能加快收敛？", CHINESE_CHAPTER),
    ("小批量随机梯度下降怎么实现？", CODE_HEAVY),  # code outnumbers the Chinese words: still a Chinese chapter
    ("動量法的係數通常取多少？", CHINESE_CHAPTER),  # traditional over simplified: one language
    ("动量法的系数通常取多少？", TRADITIONAL_CHAPTER),  # simplified over traditional
    ("momentum 的 β 为什么常取 0.9？", CHINESE_CHAPTER),  # mixed, Chinese first
    ("Why does momentum average about ten gradients?", ENGLISH_CHAPTER),
])
def test_a_question_in_the_contexts_language_is_not_told_otherwise(question, contexts):
    assert not other_language(question, contexts)


@pytest.mark.parametrize("question, contexts", [
    ("モーメンタム法の係数はいくつですか？", CHINESE_CHAPTER),  # Japanese: kana the chapter never uses
    ("动量法的系数通常取多少？", ENGLISH_CHAPTER),  # Chinese over English text
    ("Why does momentum speed up training?", TRADITIONAL_CHAPTER),  # English over Chinese text
    ("Что такое моментум?", ENGLISH_CHAPTER),  # Cyrillic
])
def test_a_question_in_another_language_is_told_so(question, contexts):
    assert other_language(question, contexts)

"""A sentence that announces what follows, quoted with what it announces.

Textbooks introduce a list, a formula or a block of code with a sentence that says nothing by itself: "智能体主要实现两个
方法：" before two list items, "下面我们介绍一些……技巧。" before a section, "可以直接求解：" before a display formula.
Such a lead-in matches a question's words well (it names the topic), so the stand-in chose it, and the answer showed
"智能体主要实现两个方法：。" with the two methods left out. Here:
- `is_lead_in`: the sentence ends with a colon, or only says what comes next ("下面我们介绍……", "接下来，我们对……进行
  总结。", "总结一下……"). A sentence ending in 如下 / 如下所示 is a statement too ("BFS 通常借助队列来实现，代码如下所示。",
  whose code hello_algo's reader leaves out, and whose next sentence is no part of it): not one;
- `continuation`: what it announces, in its own chunk: the list items that follow it (lines opening with a list
  marker: （1）, 1., 1、, -, •, ①, 第一，), else the one sentence after it in its paragraph; nothing where a formula,
  code, a table or the chunk's end comes next, where it ends its line and a paragraph follows (what it announced was a
  block the reader left out: hello_algo's code), or where the sentence after it is quoted in the answer anyway.
A lead-in with a continuation is quoted with it (`extractive.in_context`, as a sentence opening with an anaphor is
quoted with the one before it); one without is still quoted (its colon closed as a full stop): "艾努语数词借自波斯语："
ends in a colon and answers "艾努语数词借自于哪种语言？". Leaving such lead-ins out of the answer was tried: over 1,200
public questions it lost the answer three times and removed no wrong one.
"""

from __future__ import annotations

import re

from rag.ingest.markdown import nonprose_spans, overlaps
from rag.ingest.sentences import sentence_spans

CLOSERS = "”’\"')）】」』》 "  # closing quotes and brackets after a sentence's last mark (extractive reads them too)
_COLON = ("：", ":")
# "下面我们介绍一些……技巧。", "接下来，我们对蒙特卡洛方法进行总结。", "总结一下同策略和异策略的区别。": it says what comes next
_ANNOUNCES = re.compile(r"^(?:(?:下面|接下来|以下)[，,]?(?:我们)?(?:先|再|来|将|开始|正式)*(?:介绍|讲|总结|列出|给出|对.{1,30}进行总结)"
                        r"|总结一下)")
_BULLET = re.compile(r"^[-*•·]\s+")  # a Markdown bullet, left out of the quote (a numbered marker says something)
_ITEM = re.compile(r"^(?:[（(]\s*\d{1,2}\s*[)）]|\d{1,2}\s*[.、)）](?!\d)|[-*•·]\s|[①-⑳]|第[一二三四五六七八九十]+[，、,：:])")


def is_lead_in(sentence: str) -> bool:
    """Does the sentence announce what follows it (a list, a formula, the reasons)?"""
    text = sentence.strip()
    return text.rstrip(CLOSERS).endswith(_COLON) or bool(_ANNOUNCES.match(text))


def is_list_item(sentence: str) -> bool:
    """Does the sentence open with a list marker ("（1）", "1.", "- ", "①", "第一，")?"""
    return bool(_ITEM.match(sentence.lstrip()))


def continuation(text: str, start: int, end: int, taken: set, n: int) -> list[tuple[int, int]]:
    """The spans of `text` that the sentence text[start:end] announces, when it is a lead-in: the list items right after
    it, else the one sentence after it in its paragraph; [] when it is no lead-in, or prose does not follow it in this
    text (a formula, code, a table, the end, a new paragraph), or what follows is quoted anyway (`taken`: (block n,
    start) pairs)."""
    if not is_lead_in(text[start:end]):
        return []
    after = [(a, b) for a, b in sentence_spans(text, semicolons=False) if a >= end]
    markup = nonprose_spans(text)
    out: list[tuple[int, int]] = []
    for a, b in after:
        new_line = "\n" in text[out[-1][1] if out else end : a]
        if (n, a) in taken or overlaps(markup, a, b) or ((out or new_line) and not is_list_item(text[a:b])):
            break  # a paragraph after a lead-in that ends its line is not what it announced (code or a figure was)
        out.append((a, b))
        if not is_list_item(text[a:b]):
            break  # not a list: the one sentence after the lead-in
    return out


def item_text(sentence: str) -> str:
    """A list item as a quote runs it on: without a Markdown bullet ("* Sarsa 是……" -> "Sarsa 是……")."""
    return _BULLET.sub("", sentence.strip())

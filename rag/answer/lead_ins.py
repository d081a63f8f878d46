"""A sentence that announces what follows, quoted with what it announces.

Textbooks introduce a list, a formula or a block of code with a sentence that says nothing by itself: "智能体主要实现两个
方法：" before two list items, "下面我们介绍一些……技巧。" before a section, "可以直接求解：" before a display formula.
Such a lead-in matches a question's words well (it names the topic), so the stand-in chose it, and the answer showed
"智能体主要实现两个方法：。" with the two methods left out. Here:
- `is_lead_in`: the sentence ends with a colon, or only says what comes next ("下面我们介绍……", "接下来，我们对……进行
  总结。", "总结一下……"). A sentence ending in 如下 / 如下所示 is a statement too ("BFS 通常借助队列来实现，代码如下所示。",
  whose code hello_algo's reader leaves out, and whose next sentence is no part of it): not one;
- `announces_list`: a sentence ending in a full stop that still announces a list ("……主要有以下原因。", "……其主要关注
  问题的两个性质。", "There are two main reasons."): it runs into list items on the lines after it, never into prose;
- `continuation`: what it announces, in its own chunk: the list items that follow it, each whole (lines opening with a
  list marker: （1）, 1., 1、, -, •, ①, 第一，; the Markdown reader keeps an item's marker, rag/ingest/markdown.py), else
  the one sentence after it in its paragraph; nothing where a formula,
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
from rag.ingest.sentences import LIST_MARKER, sentence_spans

CLOSERS = "”’\"')）】」』》 "  # closing quotes and brackets after a sentence's last mark (extractive reads them too)
_COLON = ("：", ":")
# "下面我们介绍一些……技巧。", "接下来，我们对蒙特卡洛方法进行总结。", "总结一下同策略和异策略的区别。": it says what comes next
_ANNOUNCES = re.compile(r"^(?:(?:下面|接下来|以下)[，,]?(?:我们)?(?:先|再|来|将|开始|正式)*(?:介绍|讲|总结|列出|给出|对.{1,30}进行总结)"
                        r"|总结一下)")
# "以下原因", "下列三种", "……如下。"; a count of what is listed, ending the sentence: "……两个性质。", "……三个主要原因。" (not
# "……需要两个栈来配合实现。", which states a count); "the following", "two reasons"
_LIST_AHEAD = re.compile(r"(?:以下|下列|如下(?!图))|[两二三四五六七八九十几多]\s*(?:个|种|点|类|项|条|大)(?:主要|重要|关键|基本|核心)?"
                         r"(?:原因|方法|性质|特点|特性|步骤|方面|优点|缺点|优势|阶段|类型|作用|条件|原则|策略|情况|部分|因素)"
                         r"[。.!！]?$"
                         r"|\b(?:the following|as follows)\b|\b(?:two|three|four|five|six|several|a few)\s+(?:main\s+|key\s+)?"
                         r"(?:reasons|ways|steps|properties|kinds|types|methods|approaches|advantages|drawbacks|features|"
                         r"cases|points|aspects|stages|parts|rules|conditions)\b", re.I)
_BULLET = re.compile(r"^[-*•·]\s+")  # a Markdown bullet, left out of the quote (a numbered marker says something)
_ITEM = re.compile(r"^(?:[（(]\s*\d{1,2}\s*[)）]|\d{1,2}\s*[.、)）](?!\d)|[-*•·]\s|[①-⑳]|第[一二三四五六七八九十]+[，、,：:])")


def is_lead_in(sentence: str) -> bool:
    """Does the sentence announce what follows it (a list, a formula, the reasons)?"""
    text = sentence.strip()
    return text.rstrip(CLOSERS).endswith(_COLON) or bool(_ANNOUNCES.match(text))


def is_list_item(sentence: str) -> bool:
    """Does the sentence open with a list marker ("（1）", "1.", "- ", "①", "第一，")?"""
    return bool(_ITEM.match(sentence.lstrip()))


def announces_list(sentence: str) -> bool:
    """Does a sentence that ends in a full stop still announce a list ("……主要有以下原因。", "……其主要关注问题的两个
    性质。", "There are two main reasons.")? Such a sentence runs into list items on the lines after it, never into
    a paragraph ("……代码如下所示。" before code is a statement)."""
    return bool(_LIST_AHEAD.search(sentence))


def _opens_item(text: str, a: int, b: int) -> bool:
    """Is text[a:b] a list item's first sentence: its line's marker just before it ("- ", "2. ", which a sentence is
    read without), or a marker of its own ("（1）", "①")?"""
    marker = LIST_MARKER.match(text, text.rfind("\n", 0, a) + 1)
    return (marker is not None and marker.end() == a) or is_list_item(text[a:b])


def continuation(text: str, start: int, end: int, taken: set, n: int) -> list[tuple[int, int]]:
    """The spans of `text` that the sentence text[start:end] announces, when it is a lead-in: the list items right after
    it (each item whole), else the one sentence after it in its paragraph; [] when it is no lead-in, or prose does not
    follow it in this text (a formula, code, a table, the end, a new paragraph), or what follows is quoted anyway
    (`taken`: (block n, start) pairs). A sentence that only `announces_list` runs into list items, nothing else."""
    sentence = text[start:end]
    strong = is_lead_in(sentence)
    if not strong and not announces_list(sentence):
        return []
    markup = nonprose_spans(text)
    out: list[tuple[int, int]] = []
    in_item = False  # the line being read is a list item's (its sentences after the first belong to it)
    for a, b in ((a, b) for a, b in sentence_spans(text, semicolons=False) if a >= end):
        if (n, a) in taken or overlaps(markup, a, b):
            break
        if "\n" in text[out[-1][1] if out else end : a]:
            in_item = _opens_item(text, a, b)
            if not in_item:
                break  # a paragraph after a lead-in that ends its line is not what it announced (code or a figure was)
        elif not _on_the_line(text[a:b], not out, strong, in_item):
            break
        out.append((a, b))
    return out


def _on_the_line(sentence: str, first: bool, strong: bool, in_item: bool) -> bool:
    """Is a sentence on the line of what was taken before it still announced? The first after a lead-in that ends in a
    colon or says what comes next (the one sentence after it; a sentence that only announces a list takes none), an
    item's own sentences, an item of a list written inline ("（2）……")."""
    if first:
        return strong
    return in_item or is_list_item(sentence)


def item_text(sentence: str) -> str:
    """A list item as a quote runs it on: without a Markdown bullet ("* Sarsa 是……" -> "Sarsa 是……")."""
    return _BULLET.sub("", sentence.strip())

"""The names in a question that the documents never use: a near miss asks about something next to what they cover.

"插值查找比二分查找好在哪里？" over a chapter on binary search finds sentences as close to it as an answer is (a
shared topic, shared words), so no score threshold tells it from a paraphrased question the chapter answers. What
tells them apart is a name: 插值查找 is a kind of 查找 the chapter never names. A paraphrase changes everyday words
(下标 for 索引, 装满 for 满了), and those are not read here; a near miss names a thing. Two kinds of name count:
- a Latin-script name or acronym as typed: two capitals or more (LCS, ChatGPT, XGBoost), letters with digits
  (word2vec, int8), or a capitalised word that does not open the question (Kruskal, Bellman-Ford);
- a Chinese compound naming a kind of something: a modifier before a head word of the kinds course books name
  (HEADS: 排序, 查找, 树, 栈, 模型, 层, 初始化, …), as in 希尔排序, 单调栈, 池化层, 词袋模型, when neither the compound
  nor its modifier occurs in the documents (in 二分查找, 二分 does; in 希尔排序, 希尔 does not).
A lower-case English word (underfitting, prompt) is not a name: over Chinese documents it is a translation of a term
they may well use (欠拟合), which no rule over words can check.
A name may name a kind of something the documents name other kinds of: 插值查找 beside their 二分查找, "He 初始化" beside
their "Xavier 初始化" (`Name.kind_of`, the head word they share). That is the near miss's very shape: the documents
cover the neighbour, and their best sentence about it scores high for that reason.
The answerability gate (answerability.py) refuses a question with a name of a kind the documents name others of, and
one with any other such name unless its best context sentence scores as well as a typical answerable question (STRONG
there). HEADS is a list of words, not a number fitted to a set.
Not handled here: what the question asks (asked.py), whether the contexts answer (answerability.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from rag.audit.asked import frame_words, is_frame
from rag.index.lexicon import Lexicon
from rag.ingest.language import detect_lang
from rag.models.script import fold_script

# Head words of the names course books give kinds of things: methods, structures, models and their parts.
HEADS = frozenset((
    "排序 查找 搜索 遍历 算法 方法 树 图 栈 队列 链表 表 堆 哈希 散列 模型 网络 层 函数 编码 机制 检索 索引 过滤器 序列 子序列 "
    "初始化 优化器 指标 矩阵 曲线 聚类 回归 分类器 采样 算子 架构 协议 框架 数据库 向量 注意力 损失 正则化 归一化 卷积 池化 "
    "蒸馏 剪枝 量化 编码器 解码器 定理 公式 方程 规则 策略").split())
_LATIN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9+#]*(?:[-.][A-Za-z0-9+#]+)*")
_CJK_WORD = re.compile(r"[\u4e00-\u9fff]+$")


@dataclass(frozen=True)
class Name:
    text: str  # as typed
    kind_of: str = ""  # the head word of HEADS it names a kind of, where the documents use that word (names others)


def unnamed(question: str, lexicon: Lexicon) -> tuple[Name, ...]:
    """The names of `question` (see the module docstring) that the corpus of `lexicon` never uses, as typed."""
    out: dict[str, Name] = {}
    for name, head in _latin_names(question):
        if not lexicon.uses(name):
            out.setdefault(name, Name(name, head if head and lexicon.uses(head) else ""))
    for name in _kinds(question):
        head = _head(name)
        if not lexicon.uses(name) and not lexicon.uses(name[: len(name) - len(head)] if head else name):
            out.setdefault(name, Name(name, head if head and lexicon.uses(head) else ""))
    return tuple(out.values())


def _latin_names(question: str) -> list[tuple[str, str]]:
    """(a Latin-script name, the head word right after it: "He 初始化" -> ("He", "初始化"); "" when none follows)."""
    english = detect_lang(question) == "en"
    out = []
    for m in _LATIN_NAME.finditer(question):
        word = m.group(0)
        capitals = sum(ch.isupper() for ch in word)
        acronym = len(word) >= 2 and (capitals >= 2 or (bool(re.search(r"\d", word)) and
                                                         sum(ch.isalpha() for ch in word) >= 2))
        camel = bool(re.search(r"[a-z][A-Z]", word))
        opens = english and not question[:m.start()].strip()  # "What is…": a capital that only opens the sentence
        proper = len(word) >= 2 and re.match(r"[A-Z][a-z]+", word) is not None and not opens
        if acronym or camel or proper:
            after = question[m.end():].lstrip()
            out.append((word, next((h for h in sorted(HEADS, key=len, reverse=True) if after.startswith(h)), "")))
    return out


# A determiner or a count before a head word picks one of the things, it does not name a kind of them: 同一个图 (the same
# graph), 这种排序, 每个节点, 三种方法
_DETERMINER = re.compile(r"^(?:同一?|每|各|某|这|那|哪|任一?|另一?|[一二两三四五六七八九十几多])[个种些类次样条棵张]?$")


# A modifier that grades or sorts out the things rather than naming a kind of them: 常见方法 (the common methods), 主要算法,
# 不同策略. "计算贝尔曼方程的常见方法有哪些？" over chapters that never write 常见 was refused as asking for "常见方法", a kind of
# 方法 the documents do not cover. Not here: words that also name kinds in course books (简单图, 最优二叉树, 最佳适应算法,
# 完全二叉树, 稀疏矩阵)
_GENERIC = frozenset((
    "常见 常用 主要 重要 基本 典型 一般 通常 普通 传统 经典 现有 已有 其他 其它 具体 相关 不同 相同 类似 合适 有效 "
    "最好 更好 较好 常规").split())


def _kinds(question: str) -> list[str]:
    frames = frame_words(question)
    tagged = _cut(fold_script(question))
    words = [w for w, _ in tagged]
    out = []
    for i, (word, flag) in enumerate(tagged):
        if len(word) < 2 or not _CJK_WORD.match(word) or is_frame(word, frames) or flag == "r" \
                or _DETERMINER.match(word) or word in _GENERIC:
            continue
        following = words[i + 1] if i + 1 < len(words) else ""
        if following in HEADS:
            out.append(word + following)
        elif any(word.endswith(h) and len(word) > len(h) for h in HEADS):
            out.append(word)
    return out


def _head(name: str) -> str:
    """希尔排序 -> 排序: the longest head word the name ends with ("" for none)."""
    return max((h for h in HEADS if name.endswith(h) and len(name) > len(h)), key=len, default="")


@lru_cache(maxsize=512)
def _cut(text: str) -> list[tuple[str, str]]:
    """(word, jieba's part-of-speech tag) of `text`, lower case."""
    import jieba.posseg as posseg

    return [(p.word.lower(), p.flag) for p in posseg.cut(text)]

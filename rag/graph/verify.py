"""Is a relation the graph would draw as a fact stated by its source? Checked before the page draws it as one.

A small model's relations are often not what the text says: "BM25 —擅长→ 向量检索" from "BM25 …，擅长专有名词…；向量
检索擅长…", or a chain "A —使用→ B —使用→ C" over a list, or a sentence number that points at the chunk's title.
For a relation (head, relation, tail) extracted from a chunk, in this order:

- names: an end that is a clause, a formula or a fragment ("用户换一种说法就可能搜不到", "tf·(k1+1) / (tf + k1",
  "Transformer 普遍采用它") is not a name (`fragment`);
- predicate: the relation is a verb, not a noun (模型, 样式), a function word (让, 把, 是) or a clause (over 8
  Chinese characters);
- source: a statement of the chunk (not a question: the FAQ's title states nothing) that holds the head, the tail
  and the predicate (the model's own sentence number is often wrong, so every sentence of the chunk is tried);
- subject: the head is not the object of a preposition ("激活函数给神经网络引入非线性" says nothing of 神经网络 —引入→);
- order: in one clause of it the head comes before the predicate and the predicate before the tail (and the
  predicate is not a modifier: "一次回答的耗时"), or the passive "tail …由/被 head predicate" ("河茂铁路…由黎湛铁路河唇站出岔");
- polarity: no negation right before the predicate ("一般不用于淋病菌" states no "用于");
- kin: a verb stands for its kin (KIN: 使用 for 基于, 采用, 依赖…; 用于 is none), and a later clause with no subject
  of its own carries the one the sentence opens with ("Transformer 是…架构，完全基于注意力机制": Transformer —使用→
  注意力机制).
The audit's checker (rag/audit/support.py) is not asked as well: it sits in a later wing (audit/), and asked about
"head predicate tail" against the sentence these rules pass, it changed none of their verdicts on the labelled
relations (bench/bench_relations.py run with and without it, 2026-12-02).

A relation that passes is drawn as a fact, with its sentence; one that does not is kept, drawn apart, with the
first reason it failed. How the rules were set and what they measure on the hand-labelled relations of the shipped
graphs (data/graph/relation_labels.jsonl): data/README.md and bench/bench_relations.py.
Not handled here: extracting relations (extraction.py), drawing them (ui/graph_view.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rag.graph.extraction import CO_OCCURS
from rag.index.tokenize import jieba_posseg
from rag.ingest.sentences import split_sentences
from rag.messages import Msg

CLAUSE_BREAKS = re.compile(r"[，,；;：:。！？!?\n]")
NEGATIONS = ("不", "没", "未", "非", "无", "勿", "别")
PRONOUNS = set("它他她其此这那")
PUNCTUATION = set("，。；：！？、,;:!?")
FUNCTION_ENDS = ("的", "了", "着", "和", "与", "或", "及", "是", "在", "把", "被")
FORMULA = re.compile(r"[=+×·^|<>]|\d\s*/|/\s*\d|\(\s*\w+\s*$")
MAX_NAME_CJK = 10  # Chinese characters: a longer "name" is a clause ("模型预测和真实标签之间的差距量化为一个数")


@dataclass(frozen=True)
class Verdict:
    verified: bool
    reason: Msg  # why it is (or is not) drawn as a fact
    sentence: str = ""  # the chunk's sentence that states it ("" when none does)


def fragment(name: str) -> Msg | None:
    """Why `name` is not an entity's name (a clause, a formula, a fragment), or None when it can be one."""
    cjk = sum("\u4e00" <= ch <= "\u9fff" for ch in name)
    if cjk > MAX_NAME_CJK or any(ch in PUNCTUATION for ch in name):
        return Msg(en=f"'{name}' is a clause, not a name", zh=f"“{name}”是一个分句，不是名称")
    if any(ch in PRONOUNS for ch in name):
        return Msg(en=f"'{name}' holds a pronoun: a fragment of a sentence", zh=f"“{name}”含代词：是句子的片段")
    if name.count("(") != name.count(")") or name.count("（") != name.count("）") or FORMULA.search(name):
        return Msg(en=f"'{name}' is a piece of a formula", zh=f"“{name}”是公式的片段")
    if name.endswith(FUNCTION_ENDS) or name.startswith(("的", "和", "与")):
        return Msg(en=f"'{name}' is cut mid-phrase", zh=f"“{name}”在短语中间被截断")
    return None


def _at(text: str, word: str) -> list[int]:
    out, i = [], text.find(word)
    while i >= 0:
        out.append(i)
        i = text.find(word, i + 1)
    return out


def _modifies(gap: str) -> bool:
    """Does `gap` (what follows the head before the predicate) open with a noun, so that the head only modifies the
    real subject ("余弦相似度计算…": the subject is 余弦相似度, not 余弦)?"""
    words = [w for w in jieba_posseg().cut(gap) if w.word.strip()]
    return bool(words) and words[0].flag in ("n", "nz", "vn", "ng", "nr", "ns", "nt")


def _in_order(sentence: str, head: str, pred: str, tail: str) -> bool:
    """head … pred … tail inside one clause, or the passive "tail … 由/被 head pred" inside the sentence."""
    for clause in CLAUSE_BREAKS.split(sentence):
        for h in _at(clause, head):
            if clause[max(0, h - 1):h] in PREPOSITIONS:  # the head is an object here, not the subject
                continue
            for p in _at(clause, pred):
                if p >= h + len(head) and not _modifies(clause[h + len(head):p]) and \
                        any(t >= p + len(pred) for t in _at(clause, tail)):
                    attributive = clause[p + len(pred):p + len(pred) + 1] == "的"  # "一次回答的耗时": no predicate
                    if not attributive and not any(clause[max(0, p - 2):p].endswith(n) for n in NEGATIONS):
                        return True
    if sentence.lstrip().startswith(head) and _carried(CLAUSE_BREAKS.split(sentence)[1:], pred, tail):
        return True
    for h in _at(sentence, head):
        before = sentence[max(0, h - 1):h]
        after = sentence[h + len(head):h + len(head) + len(pred) + 1]
        if before in ("由", "被") and pred in after and any(t < h for t in _at(sentence, tail)):
            return True
    return False


ADVERBS = ("完全", "主要", "通常", "一般", "直接", "常", "都", "也", "还", "则", "只", "多")


def _carried(clauses: list[str], pred: str, tail: str) -> bool:
    """A later clause with no subject of its own opens with `pred` (after an adverb at most) and names `tail` after
    it: the sentence's subject carries over ("Transformer 是…架构，完全基于注意力机制")."""
    for clause in clauses:
        rest = clause.strip()
        for adverb in ADVERBS:
            if rest.startswith(adverb):
                rest = rest[len(adverb):]
                break
        if rest.startswith(pred) and tail in rest[len(pred):]:
            return True
    return False


def _negated(sentence: str, pred: str) -> bool:
    return all(any(sentence[max(0, p - 2):p].endswith(n) for n in NEGATIONS) for p in _at(sentence, pred))


FUNCTION_VERBS = {"让", "使", "把", "被", "给", "对", "向", "是", "有", "在", "为", "将"}
PREPOSITIONS = ("给", "对", "向", "把", "从", "跟", "和", "与", "替", "为")  # "激活函数给神经网络引入…": 神经网络 is no subject
MAX_PREDICATE_CJK = 8  # Chinese characters: a longer "relation" is a clause ("少数几个位于四个区交")


def predicate(relation: str) -> Msg | None:
    """Why `relation` is no predicate (a noun such as 模型 or 样式, a function word such as 让), or None."""
    if relation == CO_OCCURS:  # the stand-in's "no verb between them", named in each language (issue 65, item 14)
        return Msg(en="'same sentence' only says the two are in one sentence: it relates nothing",
                   zh="“同句”只说明两者在同一句里：说不出两者的关系")
    if relation.isascii():  # an English relation ("founded", "is part of"): no Chinese tagger to ask
        return None
    if sum("\u4e00" <= ch <= "\u9fff" for ch in relation) > MAX_PREDICATE_CJK or "《" in relation:
        return Msg(en=f"'{relation}' is a clause, not a relation", zh=f"“{relation}”是一个分句，不是关系")
    words = [(w.word, w.flag) for w in jieba_posseg().cut(relation.strip())]
    if not any(flag.startswith("v") and word not in FUNCTION_VERBS for word, flag in words):
        return Msg(en=f"'{relation}' is not a verb: it relates nothing", zh=f"“{relation}”不是动词：说不出两者的关系")
    return None


# A relation the model names with one verb the text often states with its kin: "Transformer —使用→ 注意力机制" from
# "Transformer … 完全基于注意力机制". Each verb of a set stands for the others; 用于 (is used for) is not among them:
# it points the other way.
KIN = ({"使用", "基于", "采用", "利用", "借助", "依赖", "依靠", "运用", "uses", "use", "based on", "relies on"},
       {"包含", "包括", "含有", "includes", "contains"})


def kin(pred: str) -> list[str]:
    """`pred` first, then the verbs it stands for (KIN)."""
    for group in KIN:
        if pred in group:
            return [pred, *sorted(group - {pred}, key=lambda w: (-len(w), w))]
    return [pred]


def verify(head: str, relation: str, tail: str, chunk: str) -> Verdict:
    """Whether `chunk` states head —relation→ tail (see the module docstring), with the reason."""
    for name in (head, tail):
        why = fragment(name)
        if why is not None:
            return Verdict(False, why)
    pred = relation.strip()
    why = predicate(pred)
    if why is not None:
        return Verdict(False, why)
    statements = [s for s in split_sentences(chunk) if not s.rstrip("”’」』)）\"' ").endswith(("？", "?"))]
    verdicts = [_stated([s for s in statements if head in s and tail in s and said in s], head, pred, said, tail)
                for said in kin(pred) if said]
    return next((v for v in verdicts if v.verified), verdicts[0])


def _stated(holding: list[str], head: str, pred: str, said: str, tail: str) -> Verdict:
    """The verdict on head —pred→ tail from the sentences `holding` head, tail and `said` (pred or its kin)."""
    if not holding:
        return Verdict(False, Msg(en=f"no sentence of the chunk names {head}, {tail} and '{pred}' together",
                                  zh=f"块里没有哪一句同时写到 {head}、{tail} 和“{pred}”"))
    for sentence in holding:
        if _negated(sentence, said):
            continue
        if _in_order(sentence, head, said, tail):
            if said != pred:
                return Verdict(True, Msg(en=f"the sentence says {head} {said} {tail}: {pred}, in other words",
                                         zh=f"这句话说 {head}{said}{tail}，也就是{pred}"), sentence)
            return Verdict(True, Msg(en=f"the sentence says {head} {pred} {tail}", zh=f"这句话说的就是 {head}{pred}{tail}"),
                           sentence)
    if all(_negated(s, said) for s in holding):
        return Verdict(False, Msg(en=f"the sentence says {head} does not {pred} {tail}", zh=f"原句是否定的：不{pred}"),
                       holding[0])
    return Verdict(False, Msg(en=f"the sentence names {head}, {tail} and '{pred}', but not as {head} —{pred}→ {tail}",
                              zh=f"原句写到了 {head}、{tail} 和“{pred}”，但说的不是 {head} —{pred}→ {tail}"), holding[0])

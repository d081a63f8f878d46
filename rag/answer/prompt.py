"""The prompt: retrieved chunks -> numbered, ref-labelled context blocks + grounding rules + the question.

`build_prompt` keeps the three parts apart (system rules, context blocks, question) so a page can
colour-code them, and also returns `messages`, the exact OpenAI wire format that is sent. The rules:
use only the context, cite every claim with its ref right after the sentence (`[faq_003]`), answer
exactly 资料不足 / "not enough information" when the context does not answer, never invent a ref.
`build_no_rag_prompt` is the control arm: the same question, no context, no citations.
The answer language comes from `rag.ingest.language.detect_lang`.

Not handled here: choosing or truncating contexts to a token budget (the caller passes top_k chunks),
checking the answer's citations (rag/audit/citations.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rag.audit.citations import NOT_ENOUGH  # the exact "cannot answer" reply, which the audit recognises
from rag.errors import ConfigError
from rag.ingest.language import detect_lang

if TYPE_CHECKING:  # only for the annotation: prompt building needs nothing but the chunk's fields
    from rag.ingest.chunking import Chunk


# "answer-first" (the default): the rules are the same for every question, so their KV state is computed once
# (rag/models/local_llm.py keeps it) and a question pays only for its own contexts; the first rule asks for
# the answer itself in the first sentence (the formula, the number, the list), copied from the context; two
# worked examples (EXAMPLES) show what that looks like.
SYSTEM_ANSWER_FIRST = {
    "zh": (
        "你是知识库问答助手，只根据用户消息里的“资料”回答。\n"
        "1. 第一句话直接回答问题：问怎么算就写出公式，问多少就写出数字，问是什么就给出定义，问有哪些就列出要点；"
        "照抄资料里的原词、数字和公式，不要复述问题。\n"
        "2. 不用资料以外的知识，不猜测。\n"
        "3. 每句话末尾写上它所依据的资料编号，也就是那条资料开头方括号里的编号，不要编造编号。\n"
        "4. 资料里完全没有相关内容时，只回复“{not_enough}”。"
    ),
    "en": (
        "You answer questions from a knowledge base, using only the context in the user message.\n"
        "1. Your first sentence answers the question itself: the formula for \"how is it computed\", the number "
        "for \"how many\", the definition for \"what is\", the points for \"which\" or \"how to\". Copy the "
        "context's words, numbers and formulas; do not restate the question.\n"
        "2. Use nothing but the context; do not guess.\n"
        "3. End each sentence with the id of the context it comes from, in square brackets, as it opens that "
        "context; never invent an id.\n"
        "4. Only if the context has nothing relevant, reply exactly \"{not_enough}\"."
    ),
}
# Two worked examples, sent as earlier turns of the conversation (a small model copies a demonstrated answer
# far better than it follows a rule): the answer's first sentence copies the context sentence that answers,
# formula and number included, and cites it. They are about a shop, not the corpus, so they lend the answer
# no fact; like the rules, their KV state is computed once.
EXAMPLES = {
    "zh": (
        ("资料：\n\n[shop_1] 退货政策\n签收后七天内可以无理由退货，运费由买家承担。定制商品不支持退货。\n\n"
         "[shop_2] 会员积分\n每消费 1 元积 1 分，积分一年后清零。\n\n问题：买的东西不想要了，多久之内能退？",
         "签收后七天内可以无理由退货，运费由买家承担。[shop_1]"),
        ("资料：\n\n[shop_3] 发票\n下单时可以选择电子发票，订单完成后发到邮箱。\n\n"
         "[shop_4] 运费怎么算？\n运费按重量计算：首重 1 公斤 8 元，之后每公斤加 2 元。满 99 元包邮。\n\n问题：邮费是怎么算的？",
         "运费按重量计算：首重 1 公斤 8 元，之后每公斤加 2 元。[shop_4]满 99 元包邮。[shop_4]"),
    ),
    "en": (
        ("Context:\n\n[shop_1] Returns\nItems can be returned within seven days of delivery; the buyer pays the "
         "postage. Custom-made items cannot be returned.\n\n[shop_2] Points\nEach dollar spent earns one point; "
         "points expire after a year.\n\nQuestion: I don't want what I bought. How long do I have to return it?",
         "Items can be returned within seven days of delivery; the buyer pays the postage. [shop_1]"),
        ("Context:\n\n[shop_3] Invoices\nAn electronic invoice is emailed when the order is complete.\n\n"
         "[shop_4] How is shipping charged?\nShipping is charged by weight: $8 for the first kilogram and $2 for "
         "each further kilogram. Orders over $99 ship free.\n\nQuestion: How is the shipping cost worked out?",
         "Shipping is charged by weight: $8 for the first kilogram and $2 for each further kilogram. [shop_4] "
         "Orders over $99 ship free. [shop_4]"),
    ),
}
PROMPT_STYLES = ("answer-first", "plain")
WITH_EXAMPLES = False  # measured: the worked examples did not raise the 0.5B's facts stated (docs/answers.md)

# "plain": the earlier wording, kept so the measurement (bench/bench_answers.py) can show what the
# answer-first rules change; its example citation names the first context's ref, so the rules differ by
# question and nothing of them can be reused between questions.
SYSTEM_RAG = {
    "zh": (
        "你是一个严谨的知识库问答助手。请只根据用户消息中给出的“资料”回答问题。\n"
        "规则：\n"
        "1. 只使用资料中的信息，不要使用你自己的知识，也不要猜测。\n"
        "2. 每条资料开头方括号里的是它的 ref。每一句话的句号后面紧跟它所依据资料的 ref，"
        "例如：签收后七天内可以退货。[{example}]\n"
        "3. 只能引用资料里出现的 ref，不要编造 ref。\n"
        "4. 只有当资料里完全没有相关内容时，才只回复“{not_enough}”。\n"
        "5. 用中文回答，简洁明了。"
    ),
    "en": (
        "You are a careful assistant answering questions from a knowledge base. Answer only from the "
        "context given in the user message.\n"
        "Rules:\n"
        "1. Use only information in the context. Do not use your own knowledge and do not guess.\n"
        "2. Each context starts with its ref in square brackets. Cite every claim: right after each sentence, "
        "put the ref of the context it comes from, e.g.: Returns are accepted within seven days. [{example}]\n"
        "3. Cite only refs that appear in the context. Never invent a ref.\n"
        "4. Only if the context has nothing relevant, reply exactly \"{not_enough}\" and nothing else.\n"
        "5. Answer in English, briefly."
    ),
}

SYSTEM_NO_RAG = {
    "zh": "你是一个知识渊博的助手。请根据你自己的知识，用中文简洁地回答问题。不要标注出处或方括号引用。",
    "en": "You are a knowledgeable assistant. Answer the question briefly from your own knowledge, in English. "
          "Do not cite sources or add bracketed references.",
}

HEADINGS = {  # user-message section headings
    "zh": {"context": "资料：", "none": "（没有检索到资料）", "question": "问题：",
           "graph": "图谱关系（从上面的资料抽取，每条后面是它出自的资料）："},
    "en": {"context": "Context:", "none": "(no context was retrieved)", "question": "Question: ",
           "graph": "Graph relations (extracted from the context above; each ends with the source it comes from):"},
}

LANGS = tuple(SYSTEM_RAG)


@dataclass(frozen=True)
class ContextBlock:
    """One numbered context block as the model sees it."""

    n: int  # 1-based position in the prompt
    ref: str  # what the answer must cite: [ref]
    chunk_id: str
    text: str
    title: str

    def render(self) -> str:
        """`[faq_003] title\\ntext`: the block opens with exactly what a citation of it looks like, so a small
        model copies a real ref (with "[1] (ref: faq_003)" Qwen2.5-1.5B wrote "[ref: faq_002]").
        The title is left out when the text already starts with it."""
        head = f"[{self.ref}]"
        if self.title and not self.text.lstrip().startswith(self.title):
            head += f" {self.title}"
        return f"{head}\n{self.text}"


@dataclass(frozen=True)
class Prompt:
    question: str
    contexts: list[ContextBlock]  # empty for the no-RAG prompt
    system: str
    user: str  # the whole user message: context section + question section
    messages: list[dict]  # OpenAI wire format: [{"role": "system", ...}, {"role": "user", ...}]
    lang: str  # "zh" | "en"
    rag: bool  # False for the no-RAG control prompt
    examples: tuple[tuple[str, str], ...] = ()  # worked (user, assistant) turns sent before the question
    graph: str = ""  # GraphRAG's relation lines ("A —relation→ B [ref]"), after the contexts; "" for none
    answer_tokens: int | None = None  # the longest answer this prompt asks for (budget.py); None: the backend's cap
    # the question's topic words and their idf in the corpus (rank_features.topic_idf), for the learned selector; () where
    # no index is at hand (the selector's idf signals are then missing, as LightGBM reads NaN); never sent to a model
    topic_idf: tuple[tuple[str, float], ...] = ()
    # the question's words the corpus cuts otherwise, each with the pieces it cuts them into (BM25.recuts): the
    # stand-in's lexical terms read the question as the corpus cuts it, as BM25 does; () where no index is at hand
    recut: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def segments(self) -> list[tuple[str, str]]:
        """(kind, text) pieces in the order sent, kind in system | heading | context | question,
        for colour-coding.

        Joining the user-message pieces with blank lines reproduces `user` exactly.
        """
        out = [("system", self.system)]
        for user, answer in self.examples:
            out += [("example", user), ("example", answer)]
        heading = HEADINGS[self.lang]
        if self.rag:
            out.append(("heading", heading["context"]))
            out += [("context", block.render()) for block in self.contexts] or [("heading", heading["none"])]
            if self.graph:
                out.append(("graph", f"{heading['graph']}\n{self.graph}"))
            out.append(("question", f"{heading['question']}{self.question}"))
        else:
            out.append(("question", self.question))
        return out


def _check(question: str, lang: str) -> tuple[str, str]:
    if not isinstance(question, str) or not question.strip():
        raise ConfigError("the question is empty; type a question first")
    question = question.strip()
    if lang == "auto":
        lang = detect_lang(question)
    if lang not in SYSTEM_RAG:
        raise ConfigError(f"unknown lang {lang!r}; choose one of {', '.join(LANGS)} or 'auto'")
    return question, lang


def context_blocks(contexts: Sequence[Chunk]) -> list[ContextBlock]:
    return [
        ContextBlock(n=i, ref=c.ref, chunk_id=c.chunk_id, text=c.text, title=str((c.metadata or {}).get("title", "")))
        for i, c in enumerate(contexts, 1)
    ]


def build_prompt(question: str, contexts: Sequence[Chunk], lang: str = "zh", style: str = "answer-first",
                 refusal: bool = True, graph: str = "") -> Prompt:
    """The grounded prompt. `contexts` are the chunks the model may cite, best first (parents, not children).
    `style`: "answer-first" (fixed rules, the answer in the first sentence) or "plain" (the earlier wording).
    `refusal=False` drops the answer-first rule about replying 资料不足: the answerability gate decided that."""
    question, lang = _check(question, lang)
    if style not in PROMPT_STYLES:
        raise ConfigError(f"unknown prompt style {style!r}; choose one of {', '.join(PROMPT_STYLES)}")
    blocks = context_blocks(contexts)
    example = blocks[0].ref if blocks else "faq_003"  # a real ref, so a copied example is still valid
    heading = HEADINGS[lang]
    body = "\n\n".join(b.render() for b in blocks) if blocks else heading["none"]
    if graph:
        body += f"\n\n{heading['graph']}\n{graph}"
    user = f"{heading['context']}\n\n{body}\n\n{heading['question']}{question}"
    examples: tuple[tuple[str, str], ...] = ()
    if style == "answer-first":
        system = SYSTEM_ANSWER_FIRST[lang].format(not_enough=NOT_ENOUGH[lang])
        if not refusal:
            system = system.rsplit("\n", 1)[0]  # the last rule is the one about the cannot-answer reply
        examples = EXAMPLES[lang] if WITH_EXAMPLES else ()
    else:
        system = SYSTEM_RAG[lang].format(example=example, not_enough=NOT_ENOUGH[lang])
    messages = [{"role": "system", "content": system}]
    for shown, answered in examples:
        messages += [{"role": "user", "content": shown}, {"role": "assistant", "content": answered}]
    messages.append({"role": "user", "content": user})
    return Prompt(question, blocks, system, user, messages, lang, rag=True, examples=examples, graph=graph)


def fit_prompt(contexts: Sequence[Chunk], build: Callable[[list[Chunk]], Prompt], count_tokens,
               budget: int) -> tuple[Prompt, list[str]]:
    """The grounded prompt `build(contexts)` (a build_prompt with the question and its form) with as many whole
    context blocks as fit in `budget` tokens (counted by `count_tokens(messages)`), best first, and the refs left
    out. A chunk is never cut in the middle: half a chunk can read as a claim it does not make."""
    kept = list(contexts)
    while True:
        prompt = build(kept)
        if not kept or count_tokens(prompt.messages) <= budget:
            return prompt, [c.ref for c in contexts[len(kept):]]
        kept.pop()


def build_no_rag_prompt(question: str, lang: str = "zh") -> Prompt:
    """The control prompt: the model's own knowledge, no context, no citations."""
    question, lang = _check(question, lang)
    system = SYSTEM_NO_RAG[lang]
    messages = [{"role": "system", "content": system}, {"role": "user", "content": question}]
    return Prompt(question, [], system, question, messages, lang, rag=False)

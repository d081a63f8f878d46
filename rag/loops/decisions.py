"""The questions Self-RAG puts to the model, each a yes/no `Verdict` kept with its prompt and raw reply.

- `needs_retrieval`: is the message a greeting or small talk (A) or a question that needs facts (B)?
  A labelled choice with four examples, calibrated on three content-free messages ("N/A", "", "[MASK]",
  as in Zhao et al. 2021): asked "needs a lookup? yes/no", the 0.5B said no to every Chinese message,
  greetings and questions alike; the labelled, calibrated form separated them.
- `is_relevant`: does this chunk hold information for the question? Calibrated on the same prompt with the
  passage replaced by "N/A": a chunk is kept when it makes "yes" likelier than no passage at all does.
- `model_says`: the model's yes/no on one draft sentence and the evidence span the citation audit aligned it
  to (raw, not calibrated: a statement with no content is, rightly, unsupported, so a content-free prompt is no
  neutral baseline). The label of each sentence is the audit's own (rag/audit/support.py through
  rag/audit/citations.audit: the sentence against the chunk it cites), so the loop's check step and the answer's
  audit call "supported" the same thing; the model's word is shown beside it, labelled, and the loop searches
  again when either one doubts a sentence.
- `rewrite_query`: a new search query aimed at what the draft could not support.

Which reading each decision uses was chosen on a few dozen messages, passages and statements written for
the purpose (bench/choose_decisions.py), not on an evaluation set; docs/loops.md reports them on others.
Not handled here: reading a verdict (rag/models/yes_no.py), the loop (self_rag.py).
"""

from __future__ import annotations

import re

from rag.audit.checks.opinion import model_opinion
from rag.audit.citations import strip_citations
from rag.audit.support import Support
from rag.messages import Msg
from rag.models.control import RunControl
from rag.models.yes_no import Verdict, YesNoRule, ask_yes_no
from rag.search.rewrite import parse_query_list

PASSAGE_CHARS = 600  # a chunk is cut to this for grading, so one long chunk cannot eat the time

NEED_SYSTEM = ("Classify the user's message. Reply with one letter.\n"
               "A: a greeting, thanks, goodbye or small talk (no facts needed)\n"
               "B: a question that asks for facts, concepts, numbers or methods")
NEED_SHOTS = (("晚上好！", "A"), ("为什么要做特征归一化？", "B"), ("Thank you so much", "A"),
              ("What batch size should I use?", "B"))  # written for this prompt; none is in a question set
CONTENT_FREE = ("N/A", "", "[MASK]")

RELEVANT = {
    "zh": ("你是检索结果的评审，只回答“是”或“否”。",
           "问题：{q}\n\n资料：{p}\n\n这段资料包含回答这个问题所需的部分或全部信息吗？只回答“是”或“否”。"),
    "en": ("You judge search results. Answer only yes or no.",
           "Question: {q}\n\nPassage: {p}\n\nDoes the passage hold some or all of the information needed to answer "
           "the question? Answer only yes or no."),
}
REWRITE = {
    "zh": ("你帮助改进检索。根据原问题和缺少依据的内容，写一个新的检索查询，用来找到缺少的资料。只输出查询本身，一行，不要解释。",
           "原问题：{q}\n{why}\n新的检索查询："),
    "en": ("You help improve search. From the original question and what lacked support, write one new search "
           "query that would find the missing information. Output only the query, one line, no explanation.",
           "Original question: {q}\n{why}\nNew search query:"),
}
REWRITE_WHY = {
    "zh": {"unsupported": "回答中这句话没有资料依据：{s}", "irrelevant": "检索到的资料都与问题无关。"},
    "en": {"unsupported": "This sentence of the answer had no support: {s}",
           "irrelevant": "None of the retrieved passages was relevant."},
}


def _need_messages(message: str) -> list[dict]:
    out = [{"role": "system", "content": NEED_SYSTEM}]
    for text, label in NEED_SHOTS:
        out += [{"role": "user", "content": text}, {"role": "assistant", "content": label}]
    return out + [{"role": "user", "content": message}]


def needs_retrieval(chat, question: str, lang: str, control: RunControl | None = None) -> Verdict:
    """B (needs facts: retrieve) or A (greeting, small talk: answer directly)."""
    return ask_yes_no(chat, _need_messages(question), lang, Msg(en="does the message need facts from the knowledge base "
                      "(B), or is it a greeting or small talk (A)?", zh="这条消息需要知识库里的事实（B），还是问候或闲聊（A）？"),
                      YesNoRule(options=(("B",), ("A",)), null=[_need_messages(x) for x in CONTENT_FREE]),
                      control=control)


def relevance_messages(question: str, passage: str, lang: str) -> list[dict]:
    system, user = RELEVANT[lang if lang in RELEVANT else "en"]
    return [{"role": "system", "content": system},
            {"role": "user", "content": user.format(q=question, p=passage[:PASSAGE_CHARS])}]


def is_relevant(chat, question: str, passage: str, lang: str, ref: str = "",
                control: RunControl | None = None) -> Verdict:
    return ask_yes_no(chat, relevance_messages(question, passage, lang), lang,
                      Msg(en=f"is {ref or 'this chunk'} relevant to the question?", zh=f"{ref or '这一块'}和问题相关吗？"),
                      YesNoRule(null=[relevance_messages(question, "N/A", lang)]), control=control)


def model_says(chat, sentence: str, support: Support | None, lang: str,
               control: RunControl | None = None) -> Verdict | None:
    """The model's yes/no on `sentence` and the evidence span the audit found for it (None: no span to ask about,
    the audit already calls the sentence unsupported)."""
    if support is None or support.evidence is None:
        return None
    return model_opinion(chat, control=control)(strip_citations(sentence).strip(), support.evidence.text, lang)


def rewrite_messages(question: str, lang: str, unsupported: str | None) -> list[dict]:
    lang = lang if lang in REWRITE else "en"
    system, user = REWRITE[lang]
    why = (REWRITE_WHY[lang]["unsupported"].format(s=strip_citations(unsupported).strip()) if unsupported
           else REWRITE_WHY[lang]["irrelevant"])
    return [{"role": "system", "content": system}, {"role": "user", "content": user.format(q=question, why=why)}]


_PREFIX = re.compile(r"^\s*(新的检索查询|检索查询|查询|new search query|search query|query)\s*[:：]\s*", re.I | re.M)


def parse_query(text: str) -> str:
    """The model's one query: its "查询：" label removed, then read by the multi-query parser (quotes, list
    markers, JSON, a thinking block), first item only; "" when nothing usable is left."""
    found = parse_query_list(_PREFIX.sub("", text or ""), 1)
    return found[0][:200] if found else ""

"""What a lesson may say about the current run: named facts computed from the live index, retrieval lists,
rerank and trace, never written by hand.

A lesson's notice is a template ("BM25 put {bm25_top} first: {bm25_top_term} occurs {bm25_top_term_tf} times")
and its checks name the fact that is the right answer. Each fact says which stage it needs (`needs`), what kind
of value it is (a chunk id, a retriever, a number, an audit label, yes/no, a stage, free text) and what it means
in both languages (docs/lessons.md lists them all). A fact the run cannot give (no gold chunk in this corpus, no
answer generated yet, a chunk absent from a list) raises `NotInRun` with the reason, and the step says so instead
of claiming what the data does not show.
Not handled here: reading lesson files (lesson.py), running the stages (rag/pipeline.py), drawing (ui/lesson.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rag.messages import Msg, localized
from rag.trace import label_in

STAGES = ("index", "retrieval", "rerank", "answer", "graph", "loops", "pca")  # what a page computes (lesson.PAGE_STAGES)
KINDS = ("chunk", "retriever", "number", "label", "yes-no", "stage", "text")
CHECKABLE = ("chunk", "retriever", "number", "label", "yes-no", "stage")  # text cannot be graded by equality
RETRIEVERS = ("dense", "bm25", "hybrid")
LABELS = ("supported", "weak", "unsupported", "contradicted", "restates-question", "no-citation", "not-enough")


class NotInRun(Exception):
    """The run does not hold this fact; `why` says what is missing and what to do."""

    def __init__(self, why: Msg):
        super().__init__(str(why))
        self.why = why


@dataclass
class Run:
    """What one page run computed for the session's question and settings (None: not computed here)."""

    question: str
    index: Any = None  # rag.index.build.Index
    retrieval: Any = None  # rag.search.retrieval.RetrievalResult
    rerank: Any = None  # rag.search.rerank.RerankResult (None: rerank off or not computed)
    trace: Any = None  # rag.trace.Trace (the answer page's)
    gold: str | None = None  # the chunk id that answers the question, as the lesson names it
    top_k: int = 5
    rerank_on: bool = True
    extra: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Fact:
    name: str
    kind: str
    needs: str  # one of STAGES
    means: Msg
    compute: Callable[[Run], Any]


FACTS: dict[str, Fact] = {}


def fact(name: str, kind: str, needs: str, means: Msg):
    def register(fn: Callable[[Run], Any]) -> Callable[[Run], Any]:
        assert kind in KINDS and needs in STAGES, (name, kind, needs)
        FACTS[name] = Fact(name, kind, needs, means, fn)
        return fn
    return register


def value(name: str, run: Run) -> Any:
    """The fact's value in this run; NotInRun when the run does not hold it."""
    f = FACTS[name]
    _need(run, f.needs)
    return f.compute(run)


def _need(run: Run, stage: str) -> None:
    """NotInRun, saying what to do, when the run lacks what a fact of `stage` reads."""
    if run.index is None:
        raise NotInRun(Msg(en="the index is not built yet", zh="索引还没有建好"))
    for stages, missing, why in _NEEDS:
        if stage in stages and missing(run):
            raise NotInRun(why(run))


def _rerank_missing(run: Run) -> Msg:
    if not run.rerank_on:
        return Msg(en="rerank is off (turn it on at the top of the Rerank page)", zh="重排关着（在“重排”页顶部打开）")
    return Msg(en="the rerank has not run for this question", zh="这个问题还没有重排")


# (the stages a need is for, whether the run misses it, what to say), checked in this order
_NEEDS: tuple[tuple[tuple[str, ...], Callable[[Run], bool], Callable[[Run], Msg]], ...] = (
    (("retrieval", "rerank", "answer"), lambda run: run.retrieval is None,
     lambda run: Msg(en="retrieval has not run for this question", zh="这个问题还没有检索")),
    (("rerank",), lambda run: run.rerank is None, _rerank_missing),
    (("graph",), lambda run: run.index.graph is None,
     lambda run: Msg(en="the corpus graph is not built: open the Graph page", zh="语料图还没有建：请打开“图谱”页")),
    (("loops",), lambda run: not run.extra.get("loops"),
     lambda run: Msg(en="no loop has run for this question and these settings: press Run on the Self-RAG & agent page",
                     zh="这个问题和这些设置下还没有运行循环：在“Self-RAG 与智能体”页点“运行”")),
    (("pca",), lambda run: run.extra.get("pca") is None,
     lambda run: Msg(en="the embedding map is not drawn: open the Embeddings page", zh="向量图还没有画：请打开“向量”页")),
    (("answer",), lambda run: run.trace is None,
     lambda run: Msg(en="no answer has been generated for this question and these settings yet: open the Answer page",
                     zh="这个问题和这些设置下还没有生成回答：请打开“回答”页")),
)


# ------------------------------------------------------------------------------------------------ index


@fact("question", "text", "index", Msg(en="the question being asked", zh="当前的问题"))
def _question(run: Run) -> str:
    return run.question


@fact("chunk_count", "number", "index", Msg(en="chunks in the index", zh="索引里的块数"))
def _chunk_count(run: Run) -> int:
    return len(run.index.chunks)


@fact("doc_count", "number", "index", Msg(en="documents in the corpus", zh="语料里的文档数"))
def _doc_count(run: Run) -> int:
    return len({c.doc_id for c in run.index.chunks})


@fact("chunker", "text", "index", Msg(en="the chunking method the index was built with", zh="建索引用的切块方法"))
def _chunker(run: Run) -> str:
    return run.index.chunk_set.method


@fact("longest_chunk_chars", "number", "index", Msg(en="characters in the longest chunk", zh="最长的块有多少字符"))
def _longest(run: Run) -> int:
    return max((len(c.text) for c in run.index.chunks), default=0)


@fact("mean_chunk_chars", "number", "index", Msg(en="mean characters per chunk (rounded)", zh="平均每块的字符数（取整）"))
def _mean(run: Run) -> int:
    chunks = run.index.chunks
    return round(sum(len(c.text) for c in chunks) / len(chunks)) if chunks else 0


@fact("embedder", "text", "index", Msg(en="the embedding model", zh="向量模型"))
def _embedder(run: Run) -> Msg | str:
    return run.index.embedder.label


# ------------------------------------------------------------------------------------------------ retrieval


def _list(run: Run, retriever: str) -> list:
    hits = getattr(run.retrieval, retriever)
    if not hits:
        raise NotInRun(Msg(en=f"the {retriever} list is empty for this question", zh=f"这个问题的 {retriever} 列表是空的"))
    return hits


def _rank_in(run: Run, retriever: str, chunk_id: str) -> int:
    for h in getattr(run.retrieval, retriever):
        if h.chunk_id == chunk_id:
            return h.rank
    raise NotInRun(Msg(en=f"{chunk_id} is not in the {retriever} list's first {run.retrieval.depth}",
                       zh=f"{chunk_id} 不在 {retriever} 列表的前 {run.retrieval.depth} 名里"))


for _r in RETRIEVERS:
    fact(f"{_r}_top", "chunk", "retrieval", Msg(en=f"the chunk the {_r} list ranks first", zh=f"{_r} 列表排第一的块"))(
        lambda run, r=_r: _list(run, r)[0].chunk_id)
    fact(f"{_r}_top_score", "number", "retrieval", Msg(en=f"the {_r} list's first score", zh=f"{_r} 列表第一名的分数"))(
        lambda run, r=_r: _list(run, r)[0].score)


@fact("rrf_k", "number", "retrieval",
      Msg(en="RRF's k: each list adds w / (k + rank)",
          zh="RRF 的 k：每个列表加上 w / (k + 名次)"))
def _rrf_k(run: Run) -> int:
    return run.retrieval.rrf_k


@fact("hybrid_top_sum", "text", "retrieval",
      Msg(en="the fused list's first chunk's RRF sum, term by term",
          zh="融合列表第一名的 RRF 求和，逐项写出"))
def _hybrid_sum(run: Run) -> str:
    top = _list(run, "hybrid")[0]
    k = run.retrieval.rrf_k
    terms = [(f"{c.weight:g}" if c.weight != 1 else "1") + f"/({k}+{c.rank})" for c in top.contributions]
    return " + ".join(terms) + f" = {top.score:.4f}"


for _r in ("dense", "bm25"):
    fact(f"hybrid_top_{_r}_rank", "number", "retrieval", Msg(en=f"where the {_r} list ranks the fused list's first chunk",
                                                             zh=f"融合列表第一名在 {_r} 列表里排第几"))(lambda run, r=_r: _rank_in(run, r, _list(run, "hybrid")[0].chunk_id))


def _bm25_row(run: Run):
    """BM25's largest term contribution to its first chunk: (term, occurrences)."""
    top = _list(run, "bm25")[0]
    row = run.index.position(top.chunk_id)
    terms = [t for t in run.index.bm25.explain(run.question, row) if t.contribution > 0]
    if not terms:
        raise NotInRun(Msg(en="no word of the question occurs in BM25's first chunk", zh="问题里没有一个词出现在 BM25 第一名的块里"))
    return max(terms, key=lambda t: t.contribution)


@fact("bm25_top_term", "text", "retrieval",
      Msg(en="the question word that adds most to BM25's first chunk's score",
          zh="对 BM25 第一名得分贡献最大的问题词"))
def _bm25_term(run: Run) -> str:
    return _bm25_row(run).term


@fact("bm25_top_term_tf", "number", "retrieval", Msg(en="how often that word occurs in that chunk", zh="这个词在那个块里出现几次"))
def _bm25_tf(run: Run) -> int:
    return _bm25_row(run).tf


@fact("bm25_terms", "text", "retrieval",
      Msg(en="the question's BM25 tokens (jieba's cut, a word the documents never use cut again into theirs, stop "
             "words removed when on)",
          zh="问题的 BM25 词（jieba 分词，资料里没有的词按资料的词重切，开了停用词时去掉停用词）"))
def _bm25_terms(run: Run) -> str:
    return " / ".join(run.index.bm25.query_tokens(run.question))


@fact("bm25_term_count", "number", "retrieval", Msg(en="how many words BM25 sees in the question", zh="BM25 在问题里看到几个词"))
def _bm25_count(run: Run) -> int:
    return len(run.index.bm25.query_tokens(run.question))


@fact("dense_top_chars", "number", "retrieval",
      Msg(en="characters in the chunk dense search ranks first",
          zh="向量检索第一名的块有多少字符"))
def _dense_top_chars(run: Run) -> int:
    return len(run.index.by_id[_list(run, "dense")[0].chunk_id].text)


@fact("lists_disagree", "yes-no", "retrieval",
      Msg(en="dense and BM25 put different chunks first",
          zh="向量和 BM25 排第一的块不同"))
def _disagree(run: Run) -> bool:
    return _list(run, "dense")[0].chunk_id != _list(run, "bm25")[0].chunk_id


@fact("top_k_overlap", "number", "retrieval",
      Msg(en="chunks that dense's and BM25's top k share",
          zh="向量和 BM25 前 k 名共有的块数"))
def _overlap(run: Run) -> int:
    k = run.top_k
    return len({h.chunk_id for h in run.retrieval.dense[:k]} & {h.chunk_id for h in run.retrieval.bm25[:k]})


def _gold(run: Run) -> str:
    if not run.gold:
        raise NotInRun(Msg(en="the lesson names no gold chunk for this question", zh="课程没有为这个问题指定标准答案块"))
    if run.index is not None and run.gold not in run.index.by_id:
        raise NotInRun(Msg(en=f"the gold chunk {run.gold} is not in this index (another corpus or chunking?)",
                           zh=f"标准答案块 {run.gold} 不在这个索引里（换了语料或切块方式？）"))
    return run.gold


@fact("gold", "chunk", "index",
      Msg(en="the chunk that answers the question, as the lesson names it",
          zh="课程指定的、回答这个问题的块"))
def _gold_fact(run: Run) -> str:
    return _gold(run)


for _r in RETRIEVERS:
    fact(f"gold_rank_{_r}", "number", "retrieval",
         Msg(en=f"the gold chunk's rank in the {_r} list", zh=f"标准答案块在 {_r} 列表里的名次"))(
        lambda run, r=_r: _rank_in(run, r, _gold(run)))


@fact("gold_best_retriever", "retriever", "retrieval",
      Msg(en="the retriever that ranks the gold chunk highest (ties: each)",
          zh="把标准答案块排得最高的检索器（并列时都算）"))
def _gold_best(run: Run) -> frozenset[str]:
    gold = _gold(run)
    ranks = {}
    for r in RETRIEVERS:
        try:
            ranks[r] = _rank_in(run, r, gold)
        except NotInRun:
            pass
    if not ranks:
        raise NotInRun(Msg(en=f"no list holds the gold chunk {gold}", zh=f"没有一个列表包含标准答案块 {gold}"))
    best = min(ranks.values())
    return frozenset(r for r, v in ranks.items() if v == best)


@fact("gold_in_top_k", "yes-no", "retrieval",
      Msg(en="the gold chunk is in the fused list's top k",
          zh="标准答案块在融合列表的前 k 名里"))
def _gold_top_k(run: Run) -> bool:
    gold = _gold(run)
    return any(h.chunk_id == gold for h in run.retrieval.mode_list()[: run.top_k])


# ------------------------------------------------------------------------------------------------ rerank


@fact("reranker", "text", "rerank", Msg(en="the reranker that ran", zh="运行的重排器"))
def _reranker(run: Run) -> Msg | str:
    return run.rerank.reranker  # a Msg: shown in the UI's language


@fact("rerank_top", "chunk", "rerank", Msg(en="the chunk the reranker puts first", zh="重排后排第一的块"))
def _rerank_top(run: Run) -> str:
    return run.rerank.hits[0].chunk_id


@fact("rerank_changed_top", "yes-no", "rerank", Msg(en="the reranker put another chunk first", zh="重排换了第一名"))
def _changed_top(run: Run) -> bool:
    return run.rerank.hits[0].chunk_id != next(m.chunk_id for m in run.rerank.moves if m.before == 1)


@fact("moved_count", "number", "rerank",
      Msg(en="chunks of the reranked top k whose rank changed",
          zh="重排后前 k 名里名次变了的块数"))
def _moved(run: Run) -> int:
    return sum(1 for m in run.rerank.moves if m.after is not None and m.after != m.before)


@fact("entered_count", "number", "rerank",
      Msg(en="chunks in the reranked top k that were not in the top k before",
          zh="重排后进入前 k 名、之前不在前 k 名的块数"))
def _entered(run: Run) -> int:
    k = len(run.rerank.hits)
    return sum(1 for m in run.rerank.moves if m.after is not None and m.before > k)


def _riser(run: Run):
    risen = [m for m in run.rerank.moves if m.after is not None and m.after < m.before]
    if not risen:
        raise NotInRun(Msg(en="no chunk rose in this rerank", zh="这次重排没有块上升"))
    return max(risen, key=lambda m: (m.before - m.after, -m.after))


@fact("biggest_riser", "chunk", "rerank", Msg(en="the chunk that rose most", zh="上升最多的块"))
def _riser_id(run: Run) -> str:
    return _riser(run).chunk_id


@fact("biggest_riser_before", "number", "rerank", Msg(en="its rank before the rerank", zh="它重排前的名次"))
def _riser_before(run: Run) -> int:
    return _riser(run).before


@fact("biggest_riser_after", "number", "rerank", Msg(en="its rank after the rerank", zh="它重排后的名次"))
def _riser_after(run: Run) -> int:
    return _riser(run).after


@fact("biggest_riser_reason", "text", "rerank",
      Msg(en="the feature that pushed it up most (learned ranker only)",
          zh="把它推上去最多的特征（只有学习型排序器有）"))
def _riser_reason(run: Run) -> str:
    m = _riser(run)
    why = {w.chunk_id: w for w in run.rerank.why}.get(m.chunk_id)
    if why is None:
        raise NotInRun(Msg(en="this reranker does not take its score apart (the learned ranker does)",
                           zh="这个重排器不拆分它的分数（学习型排序器会）"))
    ups = [(f, c) for f, _v, c in why.largest() if c > 0]
    if not ups:
        raise NotInRun(Msg(en="no feature pushed it up", zh="没有特征把它往上推"))
    return f"{ups[0][0]} {ups[0][1]:+.2f}"


@fact("gold_rank_rerank", "number", "rerank", Msg(en="the gold chunk's rank after the rerank", zh="标准答案块重排后的名次"))
def _gold_rerank(run: Run) -> int:
    gold = _gold(run)
    for m in run.rerank.moves:
        if m.chunk_id == gold:
            if m.after is None:
                raise NotInRun(Msg(en=f"the reranker dropped {gold} below the top k", zh=f"重排把 {gold} 挤出了前 k 名"))
            return m.after
    raise NotInRun(Msg(en=f"{gold} was not among the rerank's candidates", zh=f"{gold} 不在重排的候选里"))


# ------------------------------------------------------------------------------------------------ answer


@fact("answer", "text", "answer", Msg(en="the answer with RAG", zh="有 RAG 的回答"))
def _answer(run: Run) -> str:
    return run.trace.answer


@fact("no_rag_answer", "text", "answer", Msg(en="the same model's answer without retrieval", zh="同一个模型不检索时的回答"))
def _no_rag(run: Run) -> str:
    if run.trace.no_rag_answer is None:
        raise NotInRun(Msg(en="the answer without RAG is off (turn on 'Also answer without RAG')",
                           zh="“无 RAG”回答关着（打开“同时回答无 RAG 版本”）"))
    return run.trace.no_rag_answer.strip().rstrip("。.！!")  # a notice quotes it and closes the quote itself ("…”。")


@fact("no_rag_unsupported_count", "number", "answer",
      Msg(en="sentences of the no-RAG answer nothing in the corpus supports",
          zh="无 RAG 回答里语料中找不到支撑的句子数"))
def _no_rag_unsupported(run: Run) -> int:
    _no_rag(run)
    if not run.trace.no_rag_grounding:
        raise NotInRun(Msg(en="the no-RAG answer was not checked against the corpus (the stand-in states no fact)",
                           zh="无 RAG 的回答没有对照语料检查（替身不陈述事实）"))
    return sum(1 for g in run.trace.no_rag_grounding if g.label not in ("supported", "weak"))


def _gate(run: Run):
    if run.trace.answerability is None:
        raise NotInRun(Msg(en="the gate is off (turn on 'Refuse before generating')", zh="拒答判断关着（打开“先判断能否回答”）"))
    return run.trace.answerability


@fact("answered", "yes-no", "answer",
      Msg(en="the gate let the model answer (no: it refused before generating)",
          zh="拒答判断放行了模型作答（否：生成之前就拒答了）"))
def _answered(run: Run) -> bool:
    return bool(_gate(run).answerable)


@fact("gate_score", "number", "answer", Msg(en="the best context sentence's score at the gate", zh="拒答判断时最相关句子的得分"))
def _gate_score(run: Run) -> float:
    a = _gate(run)
    if a.score is None:
        raise NotInRun(Msg(en="no context sentence could be an answer", zh="资料里没有可以作答的句子"))
    return a.score


@fact("gate_threshold", "number", "answer", Msg(en="the gate's threshold", zh="拒答判断的阈值"))
def _gate_threshold(run: Run) -> float:
    return _gate(run).threshold


@fact("below_threshold", "yes-no", "answer",
      Msg(en="the best context sentence scored below the gate's threshold (no: it reached it; the gate may "
             "still refuse for the first context's words)",
          zh="最相关句子的得分低于拒答阈值（否：达到了阈值；仍可能因第一条资料缺问题的词而拒答）"))
def _below_threshold(run: Run) -> bool:
    a = _gate(run)
    return a.score is None or a.score < a.threshold


def _missing(run: Run) -> tuple[str, ...]:
    a = _gate(run)
    if not a.missing:
        raise NotInRun(Msg(en="the gate did not refuse for the first context's words", zh="拒答判断没有因为第一条资料缺问题的词而拒答"))
    return a.missing


@fact("gate_missing", "text", "answer",
      Msg(en="the question's words the first context lacks, when the gate refused for them",
          zh="拒答判断因第一条资料缺词而拒答时，缺的那些问题词"))
def _gate_missing(run: Run) -> str:
    return ", ".join(_missing(run))


@fact("gate_missing_count", "number", "answer",
      Msg(en="how many of the question's words the first context lacks, when the gate refused for them",
          zh="拒答判断因第一条资料缺词而拒答时，缺了几个问题词"))
def _gate_missing_count(run: Run) -> int:
    return len(_missing(run))


@fact("gate_unnamed", "text", "answer",
      Msg(en="the names of the question the documents never use, when the gate refused for them (a near "
             "miss: the documents cover something next to it)",
          zh="拒答判断因问题里的名字资料从没出现而拒答时，那些名字"))
def _gate_unnamed(run: Run) -> str:
    return ", ".join(n.text for n in _unnamed(run))


@fact("gate_unnamed_count", "number", "answer",
      Msg(en="how many names of the question the documents never use, when the gate refused for them",
          zh="拒答判断因名字资料从没出现而拒答时，这样的名字有几个"))
def _gate_unnamed_count(run: Run) -> int:
    return len(_unnamed(run))


def _unnamed(run: Run):
    a = _gate(run)
    if not a.unnamed:
        raise NotInRun(Msg(en="the gate did not refuse for a name the documents never use",
                           zh="拒答判断没有因为资料里从没出现的名字而拒答"))
    return a.unnamed


def _audit(run: Run):
    if run.trace.audit is None or not run.trace.audit.sentences:
        raise NotInRun(Msg(en="the answer has no sentences to audit", zh="回答里没有可审计的句子"))
    return run.trace.audit


@fact("sentence_count", "number", "answer", Msg(en="sentences in the answer", zh="回答的句子数"))
def _sentences(run: Run) -> int:
    return len(_audit(run).sentences)


@fact("supported_count", "number", "answer", Msg(en="answer sentences the audit labels supported", zh="审计判为“有支撑”的句子数"))
def _supported(run: Run) -> int:
    return sum(1 for s in _audit(run).sentences if s.label == "supported")


def _flagged(run: Run):
    for s in _audit(run).sentences:
        if s.label != "supported":
            return s
    raise NotInRun(Msg(en="the audit flagged no sentence: every one is supported", zh="审计没有标出问题句：每句都有支撑"))


@fact("audit_flagged", "yes-no", "answer", Msg(en="the audit flagged at least one sentence", zh="审计至少标出了一句"))
def _any_flagged(run: Run) -> bool:
    return any(s.label != "supported" for s in _audit(run).sentences)


@fact("flagged_sentence", "text", "answer",
      Msg(en="the first sentence the audit did not label supported",
          zh="审计第一句没判为有支撑的句子"))
def _flagged_sentence(run: Run) -> str:
    return _flagged(run).sentence


@fact("flagged_label", "label", "answer", Msg(en="that sentence's label", zh="那句话的判定"))
def _flagged_label(run: Run) -> str:
    return _flagged(run).label


@fact("flagged_reason", "text", "answer", Msg(en="the audit's reason for that label", zh="审计给那个判定的理由"))
def _flagged_reason(run: Run) -> Msg:
    s = _flagged(run)
    if s.support is None:
        return Msg(en="it cites no context", zh="它没有引用资料")
    return Msg(en="; ".join(s.support.reasons("en")), zh="；".join(s.support.reasons("zh")))


def _mine(run: Run):
    """The citation audit of the student's own sentence, against the answer's contexts."""
    from rag.audit.citations import audit
    from rag.audit.verifier import answer_checker

    sentence = (run.extra.get("my_sentence") or "").strip()
    if not sentence:
        raise NotInRun(Msg(en="no sentence of your own to audit: write one under “Audit a sentence of your own”",
                           zh="还没有要审计的句子：在“审计你自己写的句子”里写一句"))
    if "mine" not in run.extra:
        a = audit(sentence, {c.ref: c.text for c in run.trace.contexts}, run.index.embedder, question=run.question,
                  checker=answer_checker())
        run.extra["mine"] = a.sentences[0] if a.sentences else None
    if run.extra["mine"] is None:
        raise NotInRun(Msg(en="your text has no sentence to audit", zh="你写的内容里没有可审计的句子"))
    return run.extra["mine"]


@fact("my_label", "label", "answer", Msg(en="the audit's label for your own sentence", zh="审计给你写的句子的判定"))
def _my_label(run: Run) -> str:
    return _mine(run).label


@fact("my_reason", "text", "answer", Msg(en="the audit's reason for that label", zh="审计给那个判定的理由"))
def _my_reason(run: Run) -> Msg:
    s = _mine(run)
    if s.support is None:
        return Msg(en="it cites none of the contexts", zh="它没有引用任何资料")
    return Msg(en="; ".join(s.support.reasons("en")), zh="；".join(s.support.reasons("zh")))


@fact("hallucinated_count", "number", "answer",
      Msg(en="cited refs that were not among the contexts",
          zh="引用了但不在资料里的 ref 数"))
def _hallucinated(run: Run) -> int:
    return len(run.trace.audit.hallucinated) if run.trace.audit else 0


@fact("generator", "text", "answer", Msg(en="the generator that answered", zh="作答的生成器"))
def _generator(run: Run) -> Msg | str:
    return run.trace.backends.get("generator", "")


@fact("slowest_stage", "stage", "answer", Msg(en="the stage that took longest", zh="最耗时的阶段"))
def _slowest(run: Run) -> str:
    from rag.waterfall import stages

    rows = stages(run.trace)
    if not rows:
        raise NotInRun(Msg(en="the trace has no timings", zh="trace 里没有计时"))
    return max(rows, key=lambda r: r.seconds).stage


@fact("total_s", "number", "answer", Msg(en="seconds from question to audited answer", zh="从提问到审计完的秒数"))
def _total(run: Run) -> float:
    from rag.waterfall import stages

    rows = stages(run.trace)
    return rows[-1].start + rows[-1].seconds if rows else 0.0


# ------------------------------------------------------------------------------------------------ the embedding map


@fact("pca_variance_kept", "number", "pca",
      Msg(en="the share of the vectors' variance the 2-D/3-D picture keeps (percent)",
          zh="二维/三维图保留的方差占比（百分数）"))
def _variance(run: Run) -> float:
    return float(run.extra["pca"].projection.explained_variance_ratio.sum() * 100)


@fact("pca_faithful", "yes-no", "pca",
      Msg(en="the picture's nearest points are the true cosine top-k",
          zh="图上最近的点就是真正的余弦 top-k"))
def _faithful(run: Run) -> bool:
    return not run.extra["pca"].check.distorted


@fact("pca_dims", "number", "pca", Msg(en="dimensions of the embedding space", zh="向量空间的维数"))
def _dims(run: Run) -> int:
    return int(run.index.vectors.vectors.shape[1])


# ------------------------------------------------------------------------------------------------ graph


@fact("graph_entities", "number", "graph", Msg(en="entities in the corpus graph", zh="语料图里的实体数"))
def _entities(run: Run) -> int:
    return int(run.index.graph.summary()["entities"])


@fact("graph_relations", "number", "graph", Msg(en="relations extracted into the graph", zh="抽取进图的关系数"))
def _relations(run: Run) -> int:
    return int(run.index.graph.summary()["relations"])


@fact("graph_stated_relations", "number", "graph",
      Msg(en="relations their source sentence states (drawn as facts)",
          zh="原句证实了的关系数（画成事实的）"))
def _stated(run: Run) -> int:
    return int(run.index.graph.summary()["verified_relations"])


def _walk(run: Run):
    from rag.graph.local_search import local_search

    walk = run.extra.get("graph_walk")
    if walk is None:
        walk = run.extra["graph_walk"] = local_search(run.index.graph, run.question, run.index.embedder)
    return walk


@fact("question_entities", "text", "graph", Msg(en="the graph's entities the question was linked to", zh="问题链接到的图中实体"))
def _linked(run: Run) -> str:
    linked = _walk(run).linked
    if not linked:
        raise NotInRun(Msg(en="the question links to no entity of the graph", zh="问题没有链接到图中的任何实体"))
    return " / ".join(getattr(x, "entity", str(x)) for x in linked)


@fact("graph_top", "chunk", "graph", Msg(en="the chunk the graph's two-hop walk ranks first", zh="图的两跳游走排第一的块"))
def _graph_top(run: Run) -> str:
    chunks = _walk(run).chunks
    if not chunks:
        raise NotInRun(Msg(en="the walk from the question's entities reached no chunk", zh="从问题的实体出发没有走到任何块"))
    return chunks[0][0]


# ------------------------------------------------------------------------------------------------ loops


def _loop(run: Run, name: str):
    lt = run.extra["loops"].get(name)
    if lt is None:
        raise NotInRun(Msg(en=f"{name} has not run: choose it on the Self-RAG & agent page and press Run",
                           zh=f"{name} 还没有运行：在“Self-RAG 与智能体”页选上它再点“运行”"))
    return lt


for _name, _key in (("self-rag", "self_rag"), ("agent", "agent"), ("plain", "plain")):
    fact(f"{_key}_searches", "number", "loops", Msg(en=f"searches {_name} made", zh=f"{_name} 检索的次数"))(
        lambda run, n=_name: _loop(run, n).searches)
    fact(f"{_key}_steps", "number", "loops", Msg(en=f"steps {_name} took", zh=f"{_name} 走的步数"))(
        lambda run, n=_name: len(_loop(run, n).steps))
    fact(f"{_key}_answer", "text", "loops", Msg(en=f"{_name}'s answer", zh=f"{_name} 的回答"))(
        lambda run, n=_name: _loop(run, n).answer)


# ------------------------------------------------------------------------------------------------ showing them


def options(kind: str, run: Run) -> list[str]:
    """What a student chooses from for a check on a fact of `kind` (numbers are typed, not chosen)."""
    if kind == "retriever":
        return list(RETRIEVERS)
    if kind == "label":
        return list(LABELS)
    if kind == "yes-no":
        return ["yes", "no"]
    if kind == "stage":
        from rag.waterfall import STAGE_ORDER, stages

        return [r.stage for r in stages(run.trace)] if run.trace is not None else list(STAGE_ORDER)
    if kind == "chunk":
        seen: dict[str, None] = {}
        if run.retrieval is not None:
            for name in ("hybrid", "dense", "bm25"):
                for h in getattr(run.retrieval, name)[:5]:
                    seen.setdefault(h.chunk_id)
        if run.rerank is not None:
            for h in run.rerank.hits:
                seen.setdefault(h.chunk_id)
        if run.gold:
            seen.setdefault(run.gold)
        return sorted(seen)
    return []


def shown(v: Any, kind: str, lang: str, spec: str = "") -> str:
    """A fact's value as a notice shows it, in `lang`."""
    if isinstance(v, frozenset):
        return (" / " if lang == "en" else "、").join(sorted(v))
    if kind == "yes-no" or isinstance(v, bool):
        return ("是" if v else "否") if lang == "zh" else ("yes" if v else "no")
    if kind == "label":
        return label_in(v, lang)
    if kind == "stage" and lang == "zh":
        from rag.waterfall import stage_name

        return stage_name(v, "zh")
    if isinstance(v, float):
        return format(v, spec or ".3f")
    if spec and isinstance(v, int):
        return format(v, spec)
    return localized(v, lang)


def option_shown(option: str, kind: str, lang: str) -> str:
    return shown(option == "yes" if kind == "yes-no" else option, kind, lang)

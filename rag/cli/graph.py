"""`python -m rag graph build|show|ask`: the corpus graph from a terminal (--json everywhere).

    python -m rag graph build [--extractor shipped|model|jieba]     entities, relations, merges, communities, cost
    python -m rag graph show [--entity RRF] [--community 0]         one entity's neighbours and source chunks
    python -m rag graph ask "大莱龙铁路是哪条干线的一部分？" [--global]  = ask --loop graph (or graph-global)

shipped (default): the bundled model's shipped or cached extractions, jieba's for chunks without one; model:
the bundled (or configured) model extracts every chunk it has not (slow: about 17 s a chunk with the 0.5B);
jieba: the fallback for every chunk.
Not handled here: anything computed (rag/graph/, rag/loops/graph_rag.py).
"""

from __future__ import annotations

import argparse

from rag import defaults, jsonout
from rag.cli.common import (
    build,
    err,
    generator,
    positive,
    question_text,
    reranker,
    settings,
    short,
)
from rag.graph import extraction
from rag.graph.graph import build_graph
from rag.graph.store import attach
from rag.loops.community import summaries

EXTRACTORS = ("shipped", "model", "jieba")


def add_parser(sub, common, gen) -> None:
    p = sub.add_parser("graph", help="GraphRAG: build, inspect and ask the corpus graph")
    gsub = p.add_subparsers(dest="graph_command", required=True)
    b = gsub.add_parser("build", parents=[common, gen], help="extract entities and relations, resolve, find communities")
    b.add_argument("--extractor", choices=EXTRACTORS, default="shipped",
                   help="shipped (default): shipped/cached extractions of the bundled model, jieba for the rest; "
                        "model: extract with the model; jieba: the POS-tag fallback for every chunk")
    b.add_argument("--summaries", action="store_true", help="also print each community's summary")
    b.set_defaults(func=cmd_build)
    s = gsub.add_parser("show", parents=[common], help="one entity (or community) and its source chunks")
    s.add_argument("--entity", help="an entity's name or spelling (default: the most connected)")
    s.add_argument("--community", type=int, help="a community's number instead")
    s.set_defaults(func=cmd_show)
    a = gsub.add_parser("ask", parents=[common, gen], help="answer through the graph (local search, or --global)")
    a.add_argument("question", type=question_text)
    a.add_argument("--global", dest="global_", action="store_true",
                   help="global search: map over community summaries, then reduce")
    a.add_argument("--top-k", type=positive, default=defaults.TOP_K)
    a.add_argument("--recall-n", type=positive, default=defaults.RECALL_N)
    a.add_argument("--reranker", help="as for ask (default: learned)")
    a.add_argument("--offline", action="store_true", help="ignore any configured LLM endpoint")
    a.set_defaults(func=cmd_ask)


def _graph(args: argparse.Namespace, chat=None):
    index = build(args)
    extractor = vars(args).get("extractor", "shipped")
    if extractor == "jieba":
        exs, cost = extraction.extract_all([c.text for c in index.chunks])
        index.graph = build_graph(index.chunks, exs, index.embedder, cost)
        return index, index.graph
    if extractor == "model" and chat is None:
        _, chat = generator(args, index.embedder)
        if chat is None:
            err("graph build: no language model can run; the shipped extractions and jieba are used")

    def progress(i: int, n: int) -> None:
        if i == n or i % 10 == 0:
            err(f"  extracted {i}/{n}")

    return index, attach(index, chat if extractor == "model" else None, progress=progress)


def cmd_build(args: argparse.Namespace) -> int:
    index, graph = _graph(args)
    info = graph.summary()
    found, by = (summaries(graph, {c.chunk_id: c.text for c in index.chunks}) if args.summaries or args.json
                 else ({}, ""))
    texts = {cid: s.text for cid, s in found.items()}
    if args.json:
        out = {**info, "merges": [vars(m) for m in graph.merges],
               "communities": [{"id": c.cid, "entities": c.entities[:12], "chunks": c.chunk_ids[:5],
                                "summary": texts.get(c.cid, ""),
                                "summary_by": found[c.cid].by if c.cid in found else "",
                                "summary_dropped": [{"sentence": d, "why": why} for d, why in
                                                    (found[c.cid].dropped if c.cid in found else ())]}
                               for c in graph.communities],
               "summaries_by": by}
        print(jsonout.dumps(out, indent=2))
        return 0
    print(f"extractor: {info['extractor']}")
    print(f"{info['entities']} entities, {info['edges']} edges ({info['relations']} relations), {info['merges']} merges, "
          f"{info['communities']} communities, modularity {info['modularity']:.3f}")
    print(f"cost: {info.get('model_seconds', 0):.1f} model seconds, build {info['build_seconds']:.2f} s, "
          f"{info['storage_bytes'] / 1024:.0f} KB as JSON")
    for m in graph.merges[:20]:
        print(f"  merged {m.merged!r} into {m.kept!r} ({m.reason}: {short(m.evidence, 50)})")
    for c in graph.communities[:12]:
        print(f"  community {c.cid}: {', '.join(c.entities[:8])}")
        if texts:
            print(f"      {short(texts[c.cid], 100)}")
    return 0


def _show_community(graph, cid: int, as_json: bool) -> int:
    """One community: its entities, chunks and relations (2 and a message where there is no such community)."""
    match = [c for c in graph.communities if c.cid == cid]
    if not match:
        n = len(graph.communities)
        err(f"error: no community {cid}; " + (f"there are {n}, numbered 0 to {n - 1}" if n else
            "this graph has no communities (no entity is related to another): build it with --extractor model, or "
            "use a larger corpus"))
        return 2
    c = match[0]
    out = {"community": c.cid, "entities": c.entities, "chunks": c.chunk_ids,
           "relations": [list(r) for r in c.relations[:30]]}
    print(jsonout.dumps(out, indent=2) if as_json else
          f"community {c.cid}: {', '.join(c.entities)}\nchunks: {', '.join(c.chunk_ids[:20])}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    index, graph = _graph(args)
    if args.community is not None:
        return _show_community(graph, args.community, args.json)
    from rag.graph.resolve import normal

    if args.entity:
        name = graph.aliases.get(normal(args.entity))
        if name is None:
            err(f"error: no entity {args.entity!r} in the graph; try `graph build` to list them")
            return 2
    else:
        name = max(graph.g.nodes, key=lambda n: graph.g.degree(n, weight="weight"), default=None)
        if name is None:
            err("error: the graph is empty (no entities were extracted)")
            return 2
    node = graph.g.nodes[name]
    nbrs = sorted(graph.g[name].items(), key=lambda kv: -kv[1]["weight"])
    out = {"entity": name, "type": node["type"], "aliases": node["aliases"], "community": node.get("community"),
           "chunks": [{"chunk_id": c, "ref": index.chunk(c).ref, "text": index.chunk(c).text}
                      for c in graph.mentions.get(name, [])],
           "neighbours": [{"entity": o, "weight": round(d["weight"], 3), "relations": d["relations"]} for o, d in nbrs]}
    if args.json:
        print(jsonout.dumps(out, indent=2))
        return 0
    print(f"{name} ({node['type']}; community {node.get('community')}; also written {', '.join(node['aliases']) or '-'})")
    for ch in out["chunks"][:10]:
        print(f"  [{ch['ref']}] {short(ch['text'], 80)}")
    for nb in out["neighbours"][:15]:
        rels = "; ".join(f"{r['head']} —{r['relation']}→ {r['tail']}" for r in nb["relations"][:2])
        print(f"  — {nb['entity']} (weight {nb['weight']:g}) {rels}")
    return 0


def cmd_ask(args: argparse.Namespace) -> int:
    from rag.cli.loops import cmd_ask_loop
    from rag.run import RunContext

    index = build(args)
    gen_choice, chat = generator(args, index.embedder)
    rr = reranker(args, index.embedder, chat)
    args.loop = "graph-global" if args.global_ else "graph"
    args.budget = None
    ask_settings = settings(args, top_k=args.top_k, rerank=rr.backend is not None)
    return cmd_ask_loop(args, RunContext.chosen(index, ask_settings, gen_choice, rr, chat=chat, budget=args.budget))

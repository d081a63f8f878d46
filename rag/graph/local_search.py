"""Local graph search: link the question's entities, walk their neighbourhood, rank the chunks it reaches.

1. Link: every entity one of whose spellings occurs in the question (the longest match wins where two
   overlap: 德龙烟铁路 over 铁路); when none does, the LINK_BY_SIMILARITY entities whose names are closest to
   the question by the corpus's embedder, marked "by similarity".
2. Walk: breadth first for `hops` hops; a linked entity scores its idf relative to the most specific one
   linked (so 全长, mentioned everywhere, counts little beside 大莱龙铁路), each hop multiplies by HOP_DECAY and by
   the edge's strength (1 for an edge with a relation, CO_LISTED for entities only listed together), and a
   node keeps its best path. At most FAN_OUT neighbours per node (heaviest edges first) are followed.
3. Rank: a chunk's score is the sum, over the reached entities it mentions, of score x idf (ln(1 + chunks /
   chunks mentioning it)), so a specific entity two hops away counts more than a generic one next door.
The relations inside the walked subgraph, best first, are what the answer's graph block shows, each with
the ref of the chunk it came from. Every step is in the `LocalResult`.
Not handled here: fusing the graph list with hybrid (rag/search/retrieval.py), the graph (graph.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rag.graph.graph import CorpusGraph
from rag.graph.resolve import normal_with_gaps

HOPS = 2
HOP_DECAY = 0.5
CO_LISTED = 0.6
FAN_OUT = 12
LINK_BY_SIMILARITY = 2
MAX_RELATIONS = 8


@dataclass(frozen=True)
class Linked:
    entity: str
    matched: str  # the spelling found in the question, or "" when linked by similarity
    how: str  # "in the question" | "by similarity"
    score: float  # 1.0, or the cosine


@dataclass
class LocalResult:
    question: str
    linked: list[Linked]
    reached: dict[str, tuple[float, int, str | None]]  # entity -> (score, hop, the entity it was reached from)
    chunks: list[tuple[str, float]]  # (chunk_id, score), best first
    relations: list[dict]  # the subgraph's relations, best first (head, relation, tail, chunk_id, sentence)
    edges: list[tuple[str, str]] = field(default_factory=list)  # the walked edges (parent, child)

    def subgraph(self) -> dict:
        """The walked subgraph in plain data: nodes with score and hop, edges, relations."""
        return {"nodes": [{"entity": e, "score": round(s, 4), "hop": h, "from": p}
                          for e, (s, h, p) in sorted(self.reached.items(), key=lambda kv: -kv[1][0])],
                "edges": [list(e) for e in self.edges], "relations": self.relations}


def _latin(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


_INFLECTIONS = ("s", "es", "ed", "ing", "er", "ers")


def _inflected(q: str, end: int, gaps: set[int]) -> bool:
    """Does an English inflection end the word at `end` ("chunk" in "chunking", "vector" in "vectors")?"""
    return any(q.startswith(x, end) and (end + len(x) in gaps or not _latin(q[end + len(x):end + len(x) + 1] or " "))
               for x in _INFLECTIONS)


def _whole(spelling: str, q: str, gaps: set[int]) -> bool:
    """`spelling` in `q` (normal forms; `gaps`: where the question's words start and end), a Latin letter or digit at
    either end of it only at a word's edge: "what does the forget gate" holds no "hat", "for" or "get" (issue 65,
    item 11), while 注意力机制 is found inside 什么是注意力机制 and "chunk" inside "chunking" (an inflection)."""
    start = 0
    while (at := q.find(spelling, start)) >= 0:
        end = at + len(spelling)
        head_ok = at in gaps or not (_latin(spelling[0]) and _latin(q[at - 1]))
        tail_ok = end in gaps or not (_latin(spelling[-1]) and _latin(q[end])) or _inflected(q, end, gaps)
        if head_ok and tail_ok:
            return True
        start = at + 1
    return False


def link(graph: CorpusGraph, question: str, embedder=None) -> list[Linked]:
    q, gaps = normal_with_gaps(question)
    found = [(spelling, ent) for spelling, ent in graph.aliases.items()
             if len(spelling) >= 2 and _whole(spelling, q, gaps)]
    found.sort(key=lambda t: -len(t[0]))
    kept: list[Linked] = []
    taken: list[str] = []
    for spelling, ent in found:
        if any(spelling in t for t in taken) or any(k.entity == ent for k in kept):
            continue
        taken.append(spelling)
        kept.append(Linked(ent, spelling, "in the question", 1.0))
    if kept or embedder is None or graph.g.number_of_nodes() == 0:
        return kept
    names, vecs = graph.name_vectors(embedder)
    qv = np.asarray(embedder.embed_queries([question])[0], dtype=np.float32)
    sims = vecs @ qv / (np.linalg.norm(qv) + 1e-12)
    best = np.argsort(-sims)[:LINK_BY_SIMILARITY]
    return [Linked(names[i], "", "by similarity", float(sims[i])) for i in best]


def walk(graph: CorpusGraph, seeds: list[Linked], hops: int = HOPS) -> tuple[dict, list[tuple[str, str]]]:
    top = max(graph.idf(s.entity) for s in seeds) if seeds else 1.0
    reached: dict[str, tuple[float, int, str | None]] = {s.entity: ((1.0 if s.how == "in the question" else s.score) * graph.idf(s.entity) / top, 0, None)
               for s in seeds}
    frontier = list(reached)
    edges = []
    for hop in range(1, hops + 1):
        nxt = []
        for node in frontier:
            base = reached[node][0]
            nbrs = sorted(graph.g[node].items(), key=lambda kv: (-kv[1]["weight"], kv[0]))[:FAN_OUT]
            for other, d in nbrs:
                strength = 1.0 if d.get("relations") else CO_LISTED
                score = base * HOP_DECAY * strength
                if other not in reached or reached[other][0] < score:
                    if other not in reached:
                        nxt.append(other)
                    reached[other] = (score, hop, node)
                    edges.append((node, other))
        frontier = nxt
    return reached, edges


def local_search(graph: CorpusGraph, question: str, embedder=None, hops: int = HOPS,
                 depth: int = 50) -> LocalResult:
    linked = link(graph, question, embedder)
    reached, edges = walk(graph, linked, hops)
    scores: dict[str, float] = {}
    for ent, (s, _, _) in reached.items():
        weight = s * graph.idf(ent)
        for cid in graph.mentions.get(ent, []):
            scores[cid] = scores.get(cid, 0.0) + weight
    order = {cid: i for i, cid in enumerate(graph.chunk_entities)}  # ties: corpus order
    ranked = sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))[:depth]
    rels = []
    for a, b in {tuple(sorted(e)) for e in edges} | {(a, b) for a in reached for b in reached
                                                    if a < b and graph.g.has_edge(a, b)}:
        for r in graph.relations_between(a, b):
            rels.append((reached[a][0] + reached[b][0], r))
    rels.sort(key=lambda t: (-t[0], t[1]["head"], t[1]["tail"]))
    seen, relations = set(), []
    for _, r in rels:
        key = (r["head"], r["relation"], r["tail"])
        if key not in seen:
            seen.add(key)
            relations.append(r)
    return LocalResult(question, linked, reached, ranked, relations[:MAX_RELATIONS], edges)

"""The corpus graph: one node per resolved entity, one edge per pair of entities that a relation joins or
that one chunk's extraction lists together, and Leiden communities over it.

Nodes carry the entity's type, its spellings and the chunks that mention it: the chunks whose extraction
lists it, and every chunk whose text contains one of its spellings (a chunk that names 德龙烟铁路 mentions
that entity even when its own extraction listed other things). Edges carry their relations (head, relation,
tail, chunk, sentence, and whether the sentence states it: verify.py) and a weight: RELATION_WEIGHT per relation plus CO_LISTED_WEIGHT when one chunk's
extraction lists both. Communities come from Leiden (igraph + leidenalg, modularity objective, fixed seed)
on the weighted graph; the modularity of the partition is reported with it.
Not handled here: extraction (extraction.py), merging spellings (resolve.py), search (local_search.py).
"""

from __future__ import annotations

import json
import math
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from rag.graph.extraction import Extraction, Relation, occurs
from rag.graph.resolve import Merge, normal, resolve
from rag.graph.verify import fragment, verify

RELATION_WEIGHT = 1.0
CO_LISTED_WEIGHT = 0.25
LEIDEN_SEED = 20261202


@dataclass(frozen=True)
class Community:
    cid: int
    entities: list[str]  # most connected first
    chunk_ids: list[str]  # the chunks that mention its entities, most mentions first
    relations: list[tuple[str, str, str, str]]  # (head, relation, tail, chunk_id), heaviest edges first


@dataclass
class CorpusGraph:
    g: nx.Graph
    extractions: dict[str, Extraction]  # chunk_id -> what was extracted from it
    mentions: dict[str, list[str]]  # entity -> chunk ids, in corpus order
    chunk_entities: dict[str, list[str]]  # chunk_id -> entities it mentions
    merges: list[Merge]
    communities: list[Community]
    modularity: float
    extractor: str
    cost: dict = field(default_factory=dict)  # extraction cost (extraction.extract_all) + build seconds
    aliases: dict[str, str] = field(default_factory=dict)  # every spelling -> its entity

    @property
    def n_chunks(self) -> int:
        return len(self.chunk_entities)

    def idf(self, entity: str) -> float:
        """How specific an entity is: ln(1 + chunks / chunks that mention it)."""
        return math.log(1.0 + self.n_chunks / max(1, len(self.mentions.get(entity, ()))))

    def relations_between(self, a: str, b: str) -> list[dict]:
        return list(self.g.edges[a, b].get("relations", [])) if self.g.has_edge(a, b) else []

    def name_vectors(self, embedder) -> tuple[list[str], np.ndarray]:
        """(entity names, their unit vectors by `embedder`), computed once per graph and embedder."""
        key = embedder.label
        cache = self.__dict__.setdefault("_name_vectors", {})
        if key not in cache:
            names = list(self.g.nodes)
            vecs = np.asarray(embedder.embed_documents(names), dtype=np.float32) if names else np.zeros((0, 1), np.float32)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True) + 1e-12
            cache[key] = (names, vecs)
        return cache[key]

    def storage_bytes(self) -> int:
        """Bytes of the graph as JSON: extractions, nodes, edges (what a saved graph would take)."""
        data = {"extractions": {k: v.to_record() for k, v in self.extractions.items()},
                "nodes": {n: {"type": d["type"], "chunks": self.mentions.get(n, [])} for n, d in self.g.nodes(data=True)},
                "edges": [[a, b, d["weight"], d.get("relations", [])] for a, b, d in self.g.edges(data=True)]}
        return len(json.dumps(data, ensure_ascii=False).encode("utf-8"))

    def summary(self) -> dict:
        return {"entities": self.g.number_of_nodes(), "edges": self.g.number_of_edges(),
                "relations": sum(len(d.get("relations", [])) for _, _, d in self.g.edges(data=True)),
                "verified_relations": sum(r.get("verified", False) for _, _, d in self.g.edges(data=True)
                                          for r in d.get("relations", [])),
                "fragments": sum(bool(d.get("fragment")) for _, d in self.g.nodes(data=True)),
                "merges": len(self.merges), "communities": len(self.communities),
                "modularity": round(self.modularity, 4), "extractor": self.extractor,
                "storage_bytes": self.storage_bytes(), **{k: v for k, v in self.cost.items() if k != "extractor"}}


def leiden(g: nx.Graph, seed: int = LEIDEN_SEED) -> tuple[list[list[str]], float]:
    """Communities (largest first) and the partition's modularity, by Leiden on the weighted graph."""
    import igraph as ig
    import leidenalg

    nodes = list(g.nodes)
    if not nodes:
        return [], 0.0
    pos = {n: i for i, n in enumerate(nodes)}
    ig_graph = ig.Graph(n=len(nodes), edges=[(pos[a], pos[b]) for a, b in g.edges])
    weights = [float(d.get("weight", 1.0)) for _, _, d in g.edges(data=True)]
    ig_graph.es["weight"] = weights
    part = leidenalg.find_partition(ig_graph, leidenalg.ModularityVertexPartition,
                                    weights="weight" if weights else None, seed=seed)
    groups = [[nodes[i] for i in members] for members in part]
    modularity = ig_graph.modularity(part.membership, weights="weight" if weights else None) if weights else 0.0
    return sorted(groups, key=len, reverse=True), float(modularity)


def build_graph(chunks, extractions: list[Extraction], embedder=None, cost: dict | None = None) -> CorpusGraph:
    """The graph over `chunks` (each with chunk_id and text) from their extractions, in the same order."""
    t0 = time.perf_counter()
    counts: Counter = Counter()
    for ex in extractions:
        counts.update(e.name for e in ex.entities)
    canonical, merges = resolve(counts, [c.text for c in chunks], embedder)
    types: dict[str, Counter] = defaultdict(Counter)
    for ex in extractions:
        for e in ex.entities:
            types[canonical[e.name]][e.type] += 1
    spellings: dict[str, set[str]] = defaultdict(set)
    for name, keep in canonical.items():
        spellings[keep].add(name)
    g = nx.Graph()
    for ent, spelled in spellings.items():  # a clause or a formula the model listed as an entity is kept, marked
        g.add_node(ent, type=types[ent].most_common(1)[0][0], aliases=sorted(spelled - {ent}), fragment=fragment(ent))
    listed = {c.chunk_id: _add_edges(g, c, ex, canonical) for c, ex in zip(chunks, extractions)}
    mentions: dict[str, list[str]] = {}
    chunk_entities: dict[str, list[str]] = {c.chunk_id: [] for c in chunks}
    folded = {c.chunk_id: " ".join(c.text.split()).casefold() for c in chunks}
    for ent, spelled in spellings.items():
        where = [c.chunk_id for c in chunks
                 if ent in listed[c.chunk_id] or any(occurs(s, folded[c.chunk_id]) for s in spelled)]
        mentions[ent] = where
        for cid in where:
            chunk_entities[cid].append(ent)
    groups, modularity = leiden(g)
    communities = [_community(g, cid, members, mentions) for cid, members in enumerate(groups)]
    cost = dict(cost or {})
    cost["build_seconds"] = time.perf_counter() - t0
    aliases = {}
    for ent, spelled in spellings.items():
        for s in spelled:
            aliases[normal(s)] = ent
    label = (cost.get("extractor") or (extractions[0].extractor if extractions else "none"))
    return CorpusGraph(g, {c.chunk_id: ex for c, ex in zip(chunks, extractions)}, mentions, chunk_entities, merges,
                       communities, modularity, label, cost, aliases)


def _add_edges(g: nx.Graph, chunk, ex: Extraction, canonical: dict[str, str]) -> list[str]:
    """The chunk's entities (canonical, in order) linked pairwise, and its relations added once each is checked
    against the chunk's text; returns the entities it lists."""
    ents = list(dict.fromkeys(canonical[e.name] for e in ex.entities))
    for i, a in enumerate(ents):
        for b in ents[i + 1:]:
            _add(g, a, b, CO_LISTED_WEIGHT)
    for r in ex.relations:
        head, tail = canonical.get(r.head), canonical.get(r.tail)
        if head is None or tail is None or head == tail:
            continue
        _add(g, head, tail, RELATION_WEIGHT)
        check = verify(r.head, r.relation, r.tail, chunk.text)  # checked against its source before drawn as a fact
        g.edges[head, tail]["relations"].append({"head": head, "relation": r.relation, "tail": tail,
                                                 "chunk_id": chunk.chunk_id, "sentence": check.sentence or r.sentence,
                                                 "verified": check.verified, "why": check.reason})
    return ents


def _community(g: nx.Graph, cid: int, members, mentions: dict[str, list[str]]) -> Community:
    """Community `cid`: its members marked on the graph, best connected first, the chunks that mention them most
    first, and the relations inside it, heaviest edge first."""
    for n in members:
        g.nodes[n]["community"] = cid
    members = sorted(members, key=lambda n: (-g.degree(n, weight="weight"), n))
    inside = set(members)
    chunk_count: Counter = Counter(ch for n in members for ch in mentions.get(n, []))
    edges = sorted(((d["weight"], a, b, d) for a, b, d in g.edges(members, data=True) if a in inside and b in inside),
                   key=lambda t: -t[0])
    rels = [(r["head"], r["relation"], r["tail"], r["chunk_id"]) for _, _, _, d in edges for r in d["relations"]]
    return Community(cid, members, [ch for ch, _ in chunk_count.most_common()], rels)


def _add(g: nx.Graph, a: str, b: str, weight: float) -> None:
    if g.has_edge(a, b):
        g.edges[a, b]["weight"] += weight
    else:
        g.add_edge(a, b, weight=weight, relations=[])


def relation_line(r: dict | Relation, ref: str) -> str:
    """One relation as the prompt's graph block writes it: "A —relation→ B [ref]"."""
    head, rel, tail = (r["head"], r["relation"], r["tail"]) if isinstance(r, dict) else (r.head, r.relation, r.tail)
    return f"{head} —{rel}→ {tail} [{ref}]"

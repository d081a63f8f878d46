"""The graph wing (between index and search): a knowledge graph over the indexed chunks, and its local search.
It sits after `index/` (it reads an Index's chunks and embedder) and before `search/`, whose retrieval fuses
its ranked chunks with dense and BM25 (`--mode hybrid+graph`); a wing of its own rather than part of `index/`,
because its index-time half (extraction) needs a language model and its query-time half is a retriever.

- `extraction.py`: entities and relations per chunk (the model under a JSON grammar, or jieba's fallback),
  cached and shipped for the bundled corpora (data/graph/extractions.jsonl);
- `resolve.py`: one node per entity, whatever its spelling; the merges with their reasons;
- `verify.py`: whether a relation's source sentence states it (drawn as a fact) or not, and which "entities" are
  clauses or formula pieces;
- `graph.py`: the networkx graph, Leiden communities, cost and storage;
- `local_search.py`: link the question's entities, walk two hops, rank the chunks reached;
- `store.py`: the graph kept on its index, built once;
- `corpora.py`: the bundled corpora the extractions ship for, chunked as the app chunks them.
Answers through the graph (local and global search) are strategies: rag/loops/graph_rag.py; community summaries
(they use the audit, a later wing): rag/loops/community.py.
"""

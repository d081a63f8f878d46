"""Index: chunks in, something searchable out. Dense vectors and lexical postings, built once, then read.

- `build.py`: `build_index`, which embeds a `ChunkSet` and builds both indexes into one `Index`.
- `vectorstore.py`: exact dense top-k by inner product; save and load.
- `bm25.py`: hand-written BM25 (Lucene idf) with a per-term `explain()`.
- `tokenize.py`: jieba tokens and stop words, the terms BM25 counts.
- `projection.py`: PCA of the chunk vectors for the embedding plot, and what the plot distorts.
"""

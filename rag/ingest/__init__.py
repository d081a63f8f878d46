"""Ingest: files in, chunks out. The first stage of the RAG diagram: loader -> chunker.

- `documents.py`: loaders for txt/md/pdf/json/jsonl/csv and the `Document` they produce.
- `chunking.py`: the chunkers (fixed window, sentence, parent-child, heading-aware, semantic, whole document) and
  the `Chunk` / `ChunkSet` every later stage cites.
- `contextual.py`: contextual chunking: one sentence by the local model placing each chunk in its document.
- `semantic.py`: semantic chunking: cut where adjacent sentences' embeddings drift apart, and the curve.
- `sentences.py`: the sentence splitter that the chunkers, the reranker fallback and the audit share.
- `language.py`: zh or en, from the share of Chinese characters.
- `preview.py`: which chunk covers which span of a document, for the chunk preview.
"""

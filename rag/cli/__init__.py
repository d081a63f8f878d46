"""The command line: `python -m rag` (or `rag-teach`) search / ask / eval / audit / graph / testset.

- `main.py`: the parser (one function per command) and `search` / `ask`; `main()` is the entry point.
- `common.py`: what every command shares: loading a corpus, choosing the embedder, chunker and model, errors.
- `eval.py`: `rag eval`, one function per mode (chunkers, answer loops, retrieval strategies).
- `loops.py`: `ask --loop` and `eval --loops` (Self-RAG, the agent, GraphRAG; `--strategy`, the old name, still works).
- `audit.py`: `rag audit`, a sentence of your own against a chunk.
- `graph.py`: `rag graph`, the corpus's entity graph.
- `testset.py`: `rag testset generate | check`.
"""

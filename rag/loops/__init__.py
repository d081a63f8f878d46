"""Loops: retrieval that decides for itself, every decision kept.

- `steps.py`: the `Step` and `LoopTrace` a loop records (each step's thought, query, hits, verdicts, time).
- `decisions.py`: the yes/no questions Self-RAG asks the model (retrieve at all? is this chunk relevant?
  is this sentence supported?) and the query rewrite it asks for when support fails.
- `self_rag.py`: Self-RAG style answering: decide, retrieve, grade, draft, check, retrieve once more.
- `actions.py`: the agent's actions (search, read, answer) as a JSON schema and the llama.cpp grammar that
  holds a small model to it; the tolerant parser for endpoints without grammars.
- `agent.py`: the agent loop: the model calls retrieval as a tool until it answers or the budget ends.
- `registry.py`: plain | self-rag | agent | graph | graph-global behind one `run_loop`, for the CLI and the pages.
- `graph_rag.py`: GraphRAG's answers, local (hybrid+graph and the walked relations) and global (community summaries);
- `community.py`: a graph community's summary, one of its own sentences the model chooses (an endpoint writes, audited);
- `compare.py`: the loops side by side on a question set (facts found, evidence, steps, time, judge).
"""

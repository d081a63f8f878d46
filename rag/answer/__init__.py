"""Answer: ranked chunks in, a cited answer out, and an audit of every citation.

- `prompt.py`: numbered, ref-labelled context blocks, the grounding rules, and the no-RAG control prompt.
- `generation.py`: the `Generator` protocol and the language-model generator (streamed deltas).
- `extractive.py`: the offline stand-in that answers by quoting retrieved sentences, labelled as such.
- `citations.py`: parsing `[ref]` markers, auditing them (valid / hallucinated / unused), per-sentence
  support (an uncited sentence names the context that supports it best), and citation events while
  an answer streams.
- `citation_grammar.py`: constrained citations, a grammar under which every sentence cites a real ref.
- `grounding.py`: whether anything in the corpus supports each sentence of the no-RAG answer.
"""

"""Evaluate: a queries file with gold ids in, figures per strategy out. It runs the stages below it.

- `evaluation.py`: Hit@k, Recall@k, MRR@k, nDCG@k over documents, and the per-strategy report.
- `strategies.py`: the strategies compared (dense, BM25, hybrid, rerank, HyDE, multi-query) and the
  loop that runs them, with answer-level figures when a generator is given.
- `index_check.py`: an approximate dense index against exact search: the same figures on both, and how
  far their top-k agree (`rag eval --index`).
- `wins.py`: fusion against each single retriever, query by query: win, tie or loss.
- `chunkers.py`: chunkers compared on span metrics, overall and per kind of question.
- `audit_pairs.py`: labelled sentence/chunk pairs read from JSONL and run through the audit's checker
  (`python -m rag audit`, bench/bench_audit.py).
- `judge.py`: LLM-judged answers: faithfulness, answer relevancy, context precision and recall, every
  verdict kept; how the judge's faithfulness falls on the citation audit's labels.
- `ablation.py`: gold ablation: each public question over its corpus and over the corpus less its gold passage, the
  training rows of the learned gate and the answer-sentence selector.
- `evidence.py`: is a question's answering sentence in the contexts, and does the answer show it (plain text).
- `testset.py`: test questions generated from any corpus (keywords, or the model under a grammar), each with
  its gold chunk, answer span and every filter's verdict; near misses for abstention (`rag testset`).
"""

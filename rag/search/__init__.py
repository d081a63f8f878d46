"""Search: a question in, ranked chunks out. Retrieve, fuse, rerank, and rewrite the query first if asked.

- `retrieval.py`: dense, BM25 and hybrid retrieval over one `Index`, side by side; multi-query fusion.
- `fusion.py`: weighted Reciprocal Rank Fusion that keeps every term of its sum.
- `hits.py`: `Hit` and `Contribution`, the ranked results that flow between the steps above.
- `ranktable.py`: where each chunk sits in each list, and the RRF arithmetic written out.
- `rerank.py`: cross-encoder reranking, the learned ranker or the labelled sentence-maxsim fallback; what moved.
- `rank_features.py`: the learned ranker's features per (question, candidate), from signals retrieval computed.
- `learned_rank.py`: LightGBM LambdaMART over those features, and each candidate's per-feature contributions.
- `late_interaction.py`: ColBERT-style MaxSim over e5's token vectors; re-scoring candidates; the alignment.
- `rank_training.py`: training groups (hybrid top 20, graded labels) and deterministic training.
- `llm_judge.py`: the local LLM as a pointwise relevance judge (P(yes)), within a time budget.
- `rewrite.py`: HyDE and multi-query, the query rewrites a language model writes.
"""

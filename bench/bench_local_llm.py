"""The bundled local LLM: prefill and decode speed at 1 and 2 threads, first-token latency of a typical
five-chunk prompt, and our backend's overhead over llama-cpp-python's bare streaming loop.

    .venv/bin/python bench/bench_local_llm.py              # 0.5b, 3 rounds (~2 min)
    .venv/bin/python bench/bench_local_llm.py --model 1.5b --rounds 5
    .venv/bin/python bench/bench_local_llm.py --contend    # with one other core kept busy

Method. One prompt: the grounded prompt of a real question over the first five entries of the bundled
knowledge base (what the answer page sends). Each round runs, on the same llama.cpp context, our
`LocalChat.complete(stream=True)` and the bare `Llama.create_chat_completion(stream=True)` loop, in
alternating order, after `reset()` so neither reuses the other's KV cache. Greedy, fixed max_tokens.
Timings are noisy on shared cores, so the table reports medians and ratios measured in the same run;
the bare loop is the reference. Goal: our overhead under 5% (ours / bare first-token latency and
decode tok/s within 0.95-1.05).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rag.answer.prompt import build_prompt  # noqa: E402
from rag.ingest.chunking import chunk_documents  # noqa: E402
from rag.ingest.documents import load_knowledge_base  # noqa: E402
from rag.models.llm import RunControl  # noqa: E402
from rag.models.local_llm import LocalChat  # noqa: E402

QUESTION = "什么是过拟合？怎么缓解？"


def five_chunk_prompt():
    chunks = chunk_documents(load_knowledge_base()[:5], "document").chunks
    return build_prompt(QUESTION, chunks, "zh").messages


def ours(chat: LocalChat, messages, max_tokens: int) -> dict:
    chat._llm.reset()
    control = RunControl()
    t0 = time.perf_counter()
    for _ in chat.complete(messages, stream=True, max_tokens=max_tokens, control=control):
        pass
    total = time.perf_counter() - t0
    s = control.stats
    return {"first": s["first_token_s"], "tokens": s["tokens"], "decode": s["decode_s"], "total": total,
            "prompt": s["prompt_tokens"]}


def bare(chat: LocalChat, messages, max_tokens: int) -> dict:
    llm = chat._llm
    llm.reset()
    t0 = time.perf_counter()
    first = last = None
    n = 0
    for chunk in llm.create_chat_completion(messages=messages, stream=True, temperature=0.0, seed=0,
                                            max_tokens=max_tokens):
        if chunk["choices"][0].get("delta", {}).get("content"):
            last = time.perf_counter()
            first = first or last
            n += 1
    return {"first": first - t0, "tokens": n, "decode": last - first, "total": time.perf_counter() - t0}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="0.5b")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--contend", action="store_true",
                    help="keep one other core busy (a spinning process) while measuring, as a shared machine is")
    args = ap.parse_args()
    hog = None
    if args.contend:
        import subprocess

        hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        run(args)
    finally:
        if hog is not None:
            hog.kill()


def run(args) -> None:
    messages = five_chunk_prompt()
    rows = {}
    for threads in (1, 2):
        chat = LocalChat(args.model, threads=threads, max_tokens=args.max_tokens)
        runs = {"ours": [], "bare": []}
        bare(chat, messages, 4)  # warm-up: page the weights in
        for r in range(args.rounds):
            order = (("ours", ours), ("bare", bare)) if r % 2 == 0 else (("bare", bare), ("ours", ours))
            for name, fn in order:
                runs[name].append(fn(chat, messages, args.max_tokens))
        prompt_tokens = runs["ours"][0]["prompt"]
        for name, rs in runs.items():
            first = statistics.median(x["first"] for x in rs)
            decode = statistics.median((x["tokens"] - 1) / x["decode"] for x in rs if x["tokens"] > 1)
            rows[(threads, name)] = {"first": first, "prefill": prompt_tokens / first, "decode": decode}
        del chat
    print(f"model {args.model}, prompt {prompt_tokens} tokens (five FAQ chunks), {args.max_tokens} new tokens, "
          f"{args.rounds} rounds, medians" + (", one other core kept busy" if args.contend else "") + "\n")
    print("| threads | loop | first token (s) | prefill tok/s | decode tok/s |")
    print("|---|---|---|---|---|")
    for (threads, name), r in rows.items():
        print(f"| {threads} | {name} | {r['first']:.2f} | {r['prefill']:.1f} | {r['decode']:.1f} |")
    print("\n| ratio | first-token latency | decode tok/s |")
    print("|---|---|---|")
    for threads in (1, 2):
        o, b = rows[(threads, "ours")], rows[(threads, "bare")]
        print(f"| ours / bare, {threads} thread(s) | {o['first'] / b['first']:.3f} | {o['decode'] / b['decode']:.3f} |")
    o1, o2 = rows[(1, "ours")], rows[(2, "ours")]
    print(f"| 2 threads / 1 thread (ours) | {o2['first'] / o1['first']:.3f} | {o2['decode'] / o1['decode']:.3f} |")


if __name__ == "__main__":
    main()

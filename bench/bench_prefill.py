"""Where a class's first tokens go on llama.cpp's server: evaluating each new question's prompt.

    .venv/bin/python bench/bench_prefill.py                  # N = 8 (~2 minutes; bash scripts/build_server.sh first)
    .venv/bin/python bench/bench_prefill.py --sessions 16

bench_sessions.py times N sessions asking N different questions at once, from retrieval to the first answer token.
This bench isolates the part of that wait the server cannot share out. It builds the answer prompts of 2N golden
questions with the app's own path and defaults (ui/settings.py: hybrid retrieval, the offline reranker, the gate,
compression, the answer-first rules), recording the messages the model would get instead of calling it, then sends
them to llama.cpp's server as the app starts it (RAG_SERVER_SLOTS slots, the rules primed into every slot), each for
one token: the first N one after another, the other N all at once (other questions, so no prompt is found in the
server's cache). From the server's own timings it prints, per way: the new prompt tokens evaluated (the rules are
already in the slots), the seconds until the last of the N first tokens, and the evaluation rate in tokens per second.

Reading it: if all at once evaluates no faster than one after another, parallel slots do not speed up prompt
evaluation on this machine, and the last of N new questions' first tokens cannot come before
(their new prompt tokens) / (that rate), however the server schedules them. That floor, divided by the in-process
model's figure for the same N (bench_sessions.py), bounds the server's TTFT p95 ratio from below.
Timings on shared cores are noisy: compare the rates measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit import logger as streamlit_logger  # noqa: E402

from rag.answer.generation import LLMGenerator  # noqa: E402
from rag.index.build import build_index  # noqa: E402
from rag.messages import localized  # noqa: E402
from rag.models.llama_server import _request, stop_all  # noqa: E402
from rag.pipeline import ask  # noqa: E402
from rag.run import RunContext  # noqa: E402
from ui import choices, indexing, models, settings  # noqa: E402

streamlit_logger.set_log_level("error")


class Recorder:
    """The server's chat backend as the pipeline sees it (its window, tokenizer, grammar), except that `complete`
    records the messages and answers 资料不足 without calling the model: the prompts are built, not evaluated."""

    def __init__(self, chat):
        self.chat, self.prompts = chat, []
        self.name, self.label, self.supports_grammar = chat.name, chat.label, chat.supports_grammar
        self.supports_logprobs = False  # nothing here asks for yes/no probabilities

    @property
    def prompt_budget(self):
        return self.chat.prompt_budget

    def count_tokens(self, messages):
        return self.chat.count_tokens(messages)

    def complete(self, messages, *, stream=False, **_):
        self.prompts.append(messages)
        return (d for d in ["资料不足。"]) if stream else "资料不足。"  # a generator: the pipeline closes it


def prompts(n: int, chat) -> list[list[dict]]:
    """The answer prompts of the first `n` answerable golden questions whose answer reaches the model (the gate
    refuses some without calling it)."""
    rows = [json.loads(line) for line in (ROOT / "data" / "golden.jsonl").read_text(encoding="utf-8").splitlines()
            if line.strip()]
    ss: dict = {}
    settings.init(ss)
    ss["llm.generator"] = "server"
    index = build_index(indexing.chunk_set(ss, *ss["applied.chunk"]), models.embedder(ss["applied.embedder"]))
    rr = choices.reranker_choice(ss).backend if ss["rerank.enabled"] else None
    recorder = Recorder(chat)
    for row in rows:
        if len(recorder.prompts) == n:
            break
        if row.get("answerable", True):
            ask(row["query"], RunContext(index, settings.ask_settings(ss), LLMGenerator(recorder), reranker=rr))
    return recorder.prompts


def evaluate(chat, messages: list[dict]) -> tuple[int, float]:
    """(new prompt tokens, seconds) of one prompt evaluated for one token, from the request's start."""
    t0 = time.perf_counter()
    reply = _request(chat.server.url + "/v1/chat/completions",
                     {"messages": messages, "max_tokens": 1, "temperature": 0, "cache_prompt": True, "seed": 0},
                     chat.config.timeout)
    return int(reply["timings"]["prompt_n"]), time.perf_counter() - t0


def together(chat, batch: list[list[dict]]) -> tuple[int, float]:
    """(new prompt tokens of all, seconds until the last first token), every prompt sent at once."""
    out: list[tuple[int, float]] = []
    threads = [threading.Thread(target=lambda m=m: out.append(evaluate(chat, m))) for m in batch]
    t0 = time.perf_counter()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    return sum(t for t, _ in out), time.perf_counter() - t0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sessions", type=int, default=8, help="N: questions one after another, and N others at once")
    p.add_argument("--model", default="0.5b", help="the bundled model (0.5b or 1.5b)")
    args = p.parse_args()
    chat = models.server_chat(args.model)  # started and primed as the app does
    batch = prompts(2 * args.sessions, chat)
    if len(batch) < 2 * args.sessions:
        sys.exit(f"only {len(batch)} golden questions reach the model: ask for fewer sessions")
    alone = [evaluate(chat, m) for m in batch[: args.sessions]]
    rows = [("one after another", sum(t for t, _ in alone), sum(s for _, s in alone)),
            ("all at once", *together(chat, batch[args.sessions :]))]
    print(f"\nbench_prefill: {localized(chat.label, 'en')}, {chat.server.threads} llama.cpp thread(s); "
          f"{args.sessions} new questions each way, one token each\n")
    print("| how | questions | new prompt tokens | until the last first token | tokens/s | rate / one after another |")
    print("|---|---:|---:|---:|---:|---:|")
    base = rows[0][1] / rows[0][2]
    for how, tokens, seconds in rows:
        print(f"| {how} | {args.sessions} | {tokens:,} | {seconds:.1f} s | {tokens / seconds:.0f} | "
              f"{tokens / seconds / base:.2f}x |")
    tokens, rate = rows[1][1], max(base, rows[1][1] / rows[1][2])
    print(f"\nthe last of these {args.sessions} first tokens, however scheduled: {tokens:,} new tokens / {rate:.0f} "
          f"tokens/s (the faster way) = {tokens / rate:.1f} s at the least, retrieval not counted")
    return 0


if __name__ == "__main__":
    try:
        code = main()
    finally:
        stop_all()
    sys.exit(code)

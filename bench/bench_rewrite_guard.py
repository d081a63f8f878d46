"""The rewrites' repetition guard: how long HyDE and multi-query take with and without it, on the bundled 0.5B.

    .venv/bin/python bench/bench_rewrite_guard.py                 # golden's first 30 questions (about 10 minutes)
    .venv/bin/python bench/bench_rewrite_guard.py --limit 10

The bundled 0.5B sometimes loops in a rewrite ("ReLU为什么比sigmoid好用？为什么ReLU比sigmoid好用？…") and, read whole,
writes until its token limit. The pipeline streams both rewrites through the answer's repetition guard
(rag/audit/shape.py RepetitionGuard, passed as `stop`), which cuts the reply at the loop. For each question, each
rewrite runs without the guard and then with it, one after the other on the same model (temperature 0), and the bench
prints the seconds of each, how many replies were garbled (shape.garbled) either way, and whether the rewordings
kept (the ones garbled does not flag) are the same. Timings on shared cores are noisy: read the ratio of the two
columns, measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag.audit.shape import RepetitionGuard, garbled  # noqa: E402
from rag.models.local_llm import LocalChat  # noqa: E402
from rag.search.rewrite import hyde, multi_query  # noqa: E402


def timed(call):
    t0 = time.perf_counter()
    out = call()
    return out, time.perf_counter() - t0


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--limit", type=int, default=30, help="golden's first N questions")
    args = p.parse_args()
    chat = LocalChat()
    questions = [json.loads(line)["query"] for line in open(ROOT / "data" / "golden.jsonl", encoding="utf-8")]
    rows = {"multi-query": [0.0, 0.0, 0, 0, 0], "HyDE": [0.0, 0.0, 0, 0, 0]}  # s without, s with, garbled x2, same
    for q in questions[: args.limit]:
        for name, run in (("multi-query", lambda stop: multi_query(q, chat, 3, stop=stop)),
                          ("HyDE", lambda stop: [hyde(q, chat, stop=stop)])):
            plain, s_plain = timed(lambda: run(None))
            cut, s_cut = timed(lambda: run(RepetitionGuard().feed))
            row = rows[name]
            row[0] += s_plain
            row[1] += s_cut
            row[2] += sum(garbled(v) is not None for v in plain)
            row[3] += sum(garbled(v) is not None for v in cut)
            row[4] += [v for v in plain if garbled(v) is None] == [v for v in cut if garbled(v) is None]
        print(f"  {q[:30]}", file=sys.stderr, flush=True)
    n = min(args.limit, len(questions))
    print(f"| rewrite ({n} golden questions) | seconds without the guard | with it | ratio | garbled replies "
          "without / with | same rewordings kept |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, (a, b, ga, gb, same) in rows.items():
        print(f"| {name} | {a:.1f} | {b:.1f} | {b / a:.2f} | {ga} / {gb} | {same} of {n} |")


if __name__ == "__main__":
    main()

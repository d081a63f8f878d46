"""How long model test questions take, against what the evaluation page quotes before it starts.

    .venv/bin/python bench/bench_testset_estimate.py                 # fit on the training sets, report on hello_algo
    .venv/bin/python bench/bench_testset_estimate.py --fit-n 12 --n 9

The page quotes `testset.estimate_seconds`: each sampled chunk asked once at least and twice at most (a question
dropped on its own is asked again), each model call costing SECONDS_PER_MODEL_CALL. Issue 65 item 15: the flat 8.5 s a question quoted 68 s for a run that took 169 s on a teacher's
textbook.

1. Fit: `generate` with the bundled 0.5B on --fit-n chunks of each training set (data/train/cmrc2018_trial,
   data/train/xquad_rest_en: no eval set chooses anything here); each chunk's seconds (between two progress calls)
   and its model calls and prose characters; the mean seconds a call (what SECONDS_PER_MODEL_CALL holds), and a
   non-negative fit of seconds on (calls, calls x characters) to say whether the prose a call reads adds time.
2. Report, on sets that chose nothing (hello_algo's Chinese and English chapters, the app's default chunker): the
   range quoted before the run (with the constants in the code, and with the fitted ones) against the run's seconds,
   and the old flat quote.
Timings are this machine's, on a shared 2-core box: the ratio actual / quoted is the figure, not the seconds.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from rag import defaults  # noqa: E402
from rag.evaluate import testset  # noqa: E402

FIT_SETS = ("cmrc2018_trial", "xquad_rest_en")


class CountingChat:
    """The chat, counting its calls (a second try is a second call)."""

    def __init__(self, chat):
        self.chat, self.calls = chat, 0
        self.supports_grammar = chat.supports_grammar
        self.label = getattr(chat, "label", None)

    def complete(self, *args, **kwargs):
        self.calls += 1
        return self.chat.complete(*args, **kwargs)


def training_chunks(name: str):
    from rag.ingest.chunking import chunk_documents
    from rag.ingest.documents import load_jsonl_corpus

    report = load_jsonl_corpus(ROOT / "data" / "train" / name / "corpus.jsonl")
    docs = getattr(report, "documents", report)
    return chunk_documents(docs, defaults.EVAL_CHUNKER).chunks


def hello_chunks(lang: str):
    from bench_testset import hello_set

    return hello_set(lang)[0].chunks


def timed_run(chunks, n: int, chat, out: Path | None = None) -> tuple[float, list[tuple[float, int, int]]]:
    """(the run's seconds, per chunk (seconds, calls, prose characters read)); the questions, every one with its
    verdicts, written to `out` when given (to read what was kept)."""
    plan = testset.Plan(n, "llm")
    picked = testset.sample_chunks(chunks, n, plan.seed)
    counting = CountingChat(chat)
    marks, calls = [time.perf_counter()], [0]

    def progress(done: int, total: int) -> None:
        marks.append(time.perf_counter())
        calls.append(counting.calls)

    t0 = time.perf_counter()
    run = testset.generate(chunks, plan, testset.Asker(counting), progress=progress)
    total = time.perf_counter() - t0
    if out is not None:
        out.write_text(testset.to_jsonl(run.questions, kept_only=False), encoding="utf-8")
    per = [(marks[i + 1] - marks[i], calls[i + 1] - calls[i], min(len(testset.prose(c)), testset.PROMPT_CHARS))
           for i, c in enumerate(picked[:len(marks) - 1])]
    return total, per


def fit(rows: list[tuple[float, int, int]]) -> tuple[float, float]:
    """Non-negative least squares: a call cannot take less time for reading more (plain least squares gave the
    characters a slope of -0.0014 s on the training sets, noise around none)."""
    import numpy as np
    from scipy.optimize import nnls

    x = np.array([[calls, calls * chars] for _, calls, chars in rows], dtype=float)
    y = np.array([secs for secs, _, _ in rows], dtype=float)
    (fixed, per_char), _ = nnls(x, y)
    return float(fixed), float(per_char)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fit-n", type=int, default=12, help="chunks of each training set to fit on")
    ap.add_argument("--n", type=int, default=9, help="chunks of each hello_algo set to report on")
    ap.add_argument("--out", type=Path, default=None, help="a folder for the hello_algo runs' questions (JSONL)")
    args = ap.parse_args()

    from rag.models.local_llm import LocalChat

    chat = LocalChat()
    testset.generate(training_chunks(FIT_SETS[0])[:1], testset.Plan(1, "llm", retry=False),
                     testset.Asker(chat))  # loads the model: not in any timing
    rows: list[tuple[float, int, int]] = []
    for name in FIT_SETS:
        _, per = timed_run(training_chunks(name), args.fit_n, chat)
        rows += per
    fixed, per_char = fit(rows)
    per_call = sum(secs for secs, _, _ in rows) / max(1, sum(calls for _, calls, _ in rows))
    print(f"fitted on {len(rows)} chunks of {', '.join(FIT_SETS)}: {per_call:.2f} s a model call (in the code: "
          f"SECONDS_PER_MODEL_CALL = {testset.SECONDS_PER_MODEL_CALL}); non-negative fit: {fixed:.2f} s a call + "
          f"{per_char:.4f} s a character read")
    print()
    print("| set | chunks | model calls | seconds | flat quote (old) | quoted range (code) | actual / code range |"
          " quoted range (fitted) |")
    print("|---|---|---|---|---|---|---|---|")
    for lang in ("zh", "en"):
        chunks = hello_chunks(lang)
        plan = testset.Plan(args.n, "llm")
        low, high = testset.estimate_seconds(chunks, plan)
        saved = testset.SECONDS_PER_MODEL_CALL
        testset.SECONDS_PER_MODEL_CALL = per_call
        f_low, f_high = testset.estimate_seconds(chunks, plan)
        testset.SECONDS_PER_MODEL_CALL = saved
        total, per = timed_run(chunks, args.n, chat, args.out / f"hello_{lang}.jsonl" if args.out else None)
        flat = len(per) * testset.SECONDS_PER_QUESTION["llm"]
        where = "inside" if low <= total <= high else ("below" if total < low else "above")
        print(f"| hello_{lang} | {len(per)} | {sum(c for _, c, _ in per)} | {total:.0f} | {flat:.0f} "
              f"({total / flat:.2f}x) | {low:.0f} to {high:.0f} | {total / high:.2f} of the top, {where} | "
              f"{f_low:.0f} to {f_high:.0f} |")


if __name__ == "__main__":
    main()

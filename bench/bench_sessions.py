"""A classroom check: N browser sessions ask at once, on the bundled local model, through the answer page's path.

    .venv/bin/python bench/bench_sessions.py                 # N = 1, 4, 8; 128-token answers (~4 min)
    .venv/bin/python bench/bench_sessions.py --sessions 1,4,8,16 --max-tokens 384
    .venv/bin/python bench/bench_sessions.py --sessions 1,8,30 --scenario link --class-cache both   # a class on one link
    .venv/bin/python bench/bench_sessions.py --generator local,server --sessions 1,8,16   # in process vs llama-server
    .venv/bin/python bench/bench_sessions.py --generator server --sessions 8 --upload 20000   # while one uploads

Method. Each session is a thread with its own settings (ui/settings.py's defaults, as a new browser session
gets them: hybrid retrieval, the offline reranker, the answer and the no-RAG comparison) and its own golden
question (data/golden.jsonl, in order: no two sessions ask the same). It calls `ui.streaming.ask_streaming`,
the function the answer page calls, which runs `rag.pipeline.ask` in a worker thread through
`ui/worker.py`; Streamlit runs in bare mode (no browser), so drawing is a no-op. The model is the one
`ui.models.local_chat` shares across sessions, so the sessions queue for it as a class does.
Per session the bench records, through the run's events: whether it finished, whether it was told it was
queued, and its time to first token (from its start to the first answer delta it saw, so retrieval and
waiting in the queue count). Per N: sessions finished, sessions told "queued", the median and 95th
percentile of time to first token, and total tokens per second (answer and no-RAG tokens of all sessions
over the batch's wall time). `--scenario link` has every session ask the same question (a class following the
teacher's link); `--class-cache on` sends each session through the answer page's class cache (ui/class_cache.py):
the first computes, the others are told they wait and are served the copy (their first token is the whole answer,
and they generate no tokens). Timings on shared cores are noisy: the ratios against N = 1, measured in the
same run, are the figures to compare across machines. `--generator local,server` runs every N on the in-process
model and again on llama.cpp's server (rag/models/llama_server.py, RAG_SERVER_SLOTS slots, scripts/build_server.sh
first), in the same run; `--upload ENTRIES` runs every N twice, idle and while one more session builds an index
of that many new entries with the shared embedder (as the upload page does), started before the askers. A session that has not finished within --timeout
seconds counts as hung; the bench then exits 1.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sessions", default="1,4,8", help="comma-separated numbers of sessions at once")
    p.add_argument("--max-tokens", type=int, default=128, help="longest answer in tokens (the app's default: 384)")
    p.add_argument("--model", default="0.5b", help="the bundled model (0.5b or 1.5b)")
    p.add_argument("--generator", default="local",
                   help="comma-separated: local (the in-process model, one generation at a time), server (llama.cpp's "
                        "server with RAG_SERVER_SLOTS parallel slots; bash scripts/build_server.sh first); each N runs "
                        "once per generator, in the same run")
    p.add_argument("--timeout", type=float, default=900, help="seconds after which a session counts as hung")
    p.add_argument("--scenario", choices=("own", "link"), default="own",
                   help="own: each session asks its own golden question; link: every session follows one link (the "
                        "same question and settings)")
    p.add_argument("--class-cache", choices=("off", "on", "both"), default="off",
                   help="on: sessions go through the answer page's class cache (ui/class_cache.py), so one question "
                        "is computed once and the others wait for it; both: each N twice, off then on")
    p.add_argument("--upload", type=int, default=0, metavar="ENTRIES",
                   help="also run each N with one more session uploading a corpus of this many entries (e.g. 20000): "
                        "it builds its index with the shared embedder while the others ask; reported as its own rows")
    return p.parse_args(argv)


ARGS = parse_args()
os.environ["RAG_LLM_MAX_TOKENS"] = str(ARGS.max_tokens)  # read when the shared model is first loaded
from streamlit import logger as streamlit_logger  # noqa: E402

from rag.index.build import build_index  # noqa: E402
from rag.messages import localized  # noqa: E402
from ui import choices, indexing, models, settings  # noqa: E402
from ui.streaming import ask_streaming  # noqa: E402

streamlit_logger.set_log_level("error")  # bare mode warns on every Streamlit call made without a browser
for _name in ("streamlit.runtime.scriptrunner_utils.script_run_context", "streamlit.runtime.caching.cache_data_api"):
    streamlit_logger.get_logger(_name).setLevel("ERROR")  # these loggers are made after set_log_level ran


def questions() -> list[str]:
    with open(ROOT / "data" / "golden.jsonl", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [r["query"] for r in rows if r.get("answerable", True)]


def new_session(question: str, generator: str = "local") -> dict:
    """A new browser session's state: every default, the bundled knowledge base, the bundled model chosen."""
    ss: dict = {}
    settings.init(ss)
    ss["llm.generator"], ss["llm.local_model"], ss["question"] = generator, ARGS.model, question
    return ss


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


class Upload:
    """One more session building an index of `entries` new texts with the shared embedder (as the upload page
    does), started before the askers; stopped through its progress callback once they are done."""

    def __init__(self, entries: int, embedder, seed_texts: list[str]):
        from rag.ingest.chunking import chunk_documents
        from rag.ingest.documents import Document

        docs = [Document(f"up{i}", f"第 {i} 条（上传）：{seed_texts[i % len(seed_texts)]}") for i in range(entries)]
        self.chunks = chunk_documents(docs, "document")  # one entry, one chunk: `entries` texts to embed
        self.embedder, self.done, self.stop = embedder, 0, threading.Event()
        self.thread = threading.Thread(target=self._build, name="upload")

    def _build(self) -> None:
        def progress(done: int, total: int) -> None:
            self.done = done
            if self.stop.is_set():
                raise InterruptedError("the askers are done")

        try:
            build_index(self.chunks, self.embedder, progress=progress)
        except InterruptedError:
            pass

    def start(self) -> None:
        self.thread.start()
        while self.done == 0 and self.thread.is_alive():  # the build holds the embedder before anyone asks
            time.sleep(0.05)

    def finish(self) -> int:
        running = self.thread.is_alive()
        self.stop.set()
        self.thread.join()
        return self.done if running else -1  # -1: it ended before the askers did (the row would not measure it)


def run_batch(n: int, qs: list[str], index, shared: bool = False, generator: str = "local", upload: int = 0,
              start: int = 0) -> dict:
    from ui.class_cache import ClassResults

    # own questions: golden questions from `start` on, none asked before by this generator's batches (a server keeps
    # whole prompts in its slots: a question asked again would find its answer prompt already evaluated)
    asked = [qs[0]] * n if ARGS.scenario == "link" else [qs[(start + i) % len(qs)] for i in range(n)]
    sessions = [new_session(q, generator) for q in asked]
    out = [{"finished": False, "queued": False, "ttft": None, "tokens": 0, "error": ""} for _ in sessions]
    cache = ClassResults(64)  # a fresh class per batch: nothing carried over from the batch before

    def session(i: int, ss: dict) -> None:
        rec, t0 = out[i], time.perf_counter()

        def observe(kind, payload):
            if kind == "status" and payload == "queued":
                rec["queued"] = True
            elif kind == "delta" and rec["ttft"] is None:
                rec["ttft"] = time.perf_counter() - t0

        try:
            gen, chat = choices.generator_choice(index.embedder, ss)
            if gen.is_fallback:
                raise RuntimeError(f"the {generator} model did not run: {gen.reason}")
            rr = choices.reranker_choice(ss) if ss["rerank.enabled"] else None
            def compute():
                return ask_streaming(ss["question"], index, settings.ask_settings(ss), gen.backend,
                                     reranker=rr.backend if rr else None, chat=chat, observe=observe)

            def wait(event):  # the page shows "another session is computing this" while it waits
                rec["queued"] = True
                event.wait()

            if shared:
                trace, made = cache.fetch((ss["question"], settings.ask_settings(ss)), compute, wait,
                                          keep=lambda t: not t.error)
                if made is not None and rec["ttft"] is None:  # served whole: its first token is the whole answer
                    rec["ttft"] = time.perf_counter() - t0
            else:
                trace = compute()
        except Exception as exc:  # noqa: BLE001 - a failed session is a row of the table, not a crash
            rec["error"] = f"{type(exc).__name__}: {exc}"
            return
        rec["finished"] = bool(trace.answer)
        rec["tokens"] = trace.generation.get("tokens", 0) + trace.no_rag_generation.get("tokens", 0)
        if shared and made is not None:
            rec["tokens"] = 0  # served from the class's copy: no token was generated for it

    threads = [threading.Thread(target=session, args=(i, ss), name=f"session-{i}") for i, ss in enumerate(sessions)]
    up = Upload(upload, index.embedder, [c.text for c in index.chunks]) if upload else None
    if up is not None:
        up.start()
    t0 = time.perf_counter()
    for th in threads:
        th.start()
    deadline = t0 + ARGS.timeout
    for th in threads:
        th.join(max(0.0, deadline - time.perf_counter()))
    wall = time.perf_counter() - t0
    embedded = up.finish() if up is not None else 0
    hung = sum(th.is_alive() for th in threads)
    ttfts = [r["ttft"] for r in out if r["ttft"] is not None]
    return {"n": n, "generator": generator, "cache": "on" if shared else "off", "upload": upload, "embedded": embedded, "finished": sum(r["finished"] for r in out), "hung": hung, "queued": sum(r["queued"] for r in out),
            "ttft_median": statistics.median(ttfts) if ttfts else float("nan"),
            "ttft_p95": p95(ttfts) if ttfts else float("nan"),
            "tok_s": sum(r["tokens"] for r in out) / wall, "wall": wall,
            "errors": [r["error"] for r in out if r["error"]]}


def main() -> int:
    ns = [int(x) for x in ARGS.sessions.split(",")]
    qs = questions()
    if max(ns) > len(qs):
        sys.exit(f"only {len(qs)} golden questions: at most that many sessions, each with its own question")
    # past len(qs) in all, later batches ask questions an earlier batch asked (said in the output)
    ss = new_session(qs[0])
    emb = models.embedder(ss["applied.embedder"])
    index = build_index(indexing.chunk_set(ss, *ss["applied.chunk"]), emb)  # the knowledge base, shared read-only
    generators = ARGS.generator.split(",")
    for g in generators:  # load and warm each shared model first: a start-up is not a session's wait
        chat = models.server_chat(ARGS.model) if g == "server" else models.local_chat(ARGS.model)
        chat.complete([{"role": "user", "content": "你好"}], max_tokens=2)
        threads = chat.server.threads if g == "server" else chat.threads
        print(f"bench_sessions: {g}: {localized(chat.label, 'en')}, {threads} llama.cpp thread(s)")
    print(f"answers of at most {ARGS.max_tokens} tokens plus the no-RAG comparison, {os.cpu_count()} CPUs\n")
    modes = {"off": [False], "on": [True], "both": [False, True]}[ARGS.class_cache]
    uploads = [0, ARGS.upload] if ARGS.upload else [0]
    rows = []
    for g in generators:
        start = 0
        for n in ns:
            for shared in modes:
                for up in uploads:
                    rows.append(run_batch(n, qs, index, shared, g, up, start))
                    start += n
    ref = rows[0]
    print(f"scenario: {ARGS.scenario} ({'every session follows one link' if ARGS.scenario == 'link' else 'each its own question'})")
    asked = sum(ns) * len(modes) * len(uploads)
    if ARGS.scenario == "own" and asked > len(qs):
        print(f"note: {asked} questions per generator from {len(qs)} golden ones: some batches repeat earlier ones")
    print()
    print("| generator | sessions | class cache | upload | every session finished | told it waits | TTFT median "
          f"| TTFT p95 | total tok/s | TTFT p95 / {ref['generator']} N={ref['n']} | tok/s / {ref['generator']} N={ref['n']} |")
    print("|---|---:|---|---|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        done = "yes" if r["finished"] == r["n"] else f"no ({r['finished']} of {r['n']}, {r['hung']} hung)"
        upload = "-" if not r["upload"] else (
            f"{r['upload']:,} entries, {r['embedded']:,} embedded meanwhile" if r["embedded"] >= 0 else
            f"{r['upload']:,} entries, done before the askers (not measured)")
        print(f"| {r['generator']} | {r['n']} | {r['cache']} | {upload} | {done} | {r['queued']} | {r['ttft_median']:.1f} s "
              f"| {r['ttft_p95']:.1f} s | {r['tok_s']:.1f} | {r['ttft_p95'] / ref['ttft_p95']:.2f}x "
              f"| {r['tok_s'] / ref['tok_s']:.2f}x |")
    by = {(r["generator"], r["n"], r["cache"], r["upload"]): r for r in rows}
    for r in rows:  # the same N in-process, same run: what the server is measured against
        base = by.get(("local", r["n"], r["cache"], r["upload"]))
        idle = by.get((r["generator"], r["n"], r["cache"], 0))
        if r["upload"] and idle:
            print(f"{r['generator']} N={r['n']} (class cache {r['cache']}): TTFT p95 while another session builds its "
                  f"index / idle: {r['ttft_p95'] / idle['ttft_p95']:.2f}x")
        if r["generator"] == "server" and base:
            print(f"server / in-process at N={r['n']} (class cache {r['cache']}): TTFT p95 "
                  f"{r['ttft_p95'] / base['ttft_p95']:.2f}x, total tok/s {r['tok_s'] / base['tok_s']:.2f}x")
    for r in rows:
        for e in r["errors"]:
            print(f"{r['generator']} N={r['n']}: {e}")
    return 0 if all(r["finished"] == r["n"] and not r["hung"] for r in rows) else 1


if __name__ == "__main__":
    try:
        code = main()
    finally:
        from rag.models.llama_server import stop_all

        stop_all()  # os._exit below skips atexit, which would otherwise stop the server this run started
    sys.stdout.flush()
    os._exit(code)  # a hung session's thread must not keep the process alive

"""How often Ragas's verdicts agree with our judge's (rag/evaluate/judge.py), on answers we already judged.

    # 1. answers with our judge's figures (any set; the README used a golden sample):
    .venv/bin/python -m rag eval --queries data/golden.jsonl --sample 20 --loops plain --judge \
        --generator local --json > judged.json
    # 2. Ragas in its own environment (it pins langchain and openai versions of its own):
    python3 -m venv /tmp/rv && /tmp/rv/bin/pip install ragas==0.4.3 langchain-community==0.3.31
    .venv/bin/pip install fastapi uvicorn sse-starlette starlette-context pydantic-settings  # llama.cpp's server
    # 3. this script: serves the same bundled model over an OpenAI-compatible endpoint (llama_cpp.server),
    #    has Ragas judge the same (question, answer, contexts, reference) records, and compares:
    .venv/bin/python bench/ragas_agreement.py judged.json --ragas-python /tmp/rv/bin/python

Ragas 0.4.3 needs langchain-community < 0.4 (0.4.x removed chat_models.vertexai, which it imports).
It asks for JSON (instructor's JSON mode, which llama.cpp's server turns into a grammar). Per metric the
table gives: answers both scored, how often the two agree on the verdict (score >= 0.5 or not), the mean
absolute difference, and how many answers Ragas could not score (NaN: its output did not parse or an
exception), with the first reason. Faithfulness, context precision (with reference) and context recall;
answer relevancy is left out: Ragas would need our embedder behind a LangChain interface.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

METRICS = {"faithfulness": "Faithfulness", "context precision": "ContextPrecisionWithReference",
           "context recall": "ContextRecall"}

CHILD = r'''
import asyncio, json, sys, math
from openai import AsyncOpenAI
from ragas.llms import llm_factory
from ragas.metrics.collections import Faithfulness, ContextPrecisionWithReference, ContextRecall

records = json.load(open(sys.argv[1]))
client = AsyncOpenAI(base_url=sys.argv[2], api_key="not-needed", timeout=600)
llm = llm_factory("local", client=client, temperature=0.0, max_tokens=1024)
metrics = {"faithfulness": Faithfulness(llm=llm), "context precision": ContextPrecisionWithReference(llm=llm),
           "context recall": ContextRecall(llm=llm)}

async def one(name, m, r):
    try:
        if name == "faithfulness":
            res = await m.ascore(user_input=r["question"], response=r["answer"], retrieved_contexts=r["contexts"])
        elif name == "context precision":
            res = await m.ascore(user_input=r["question"], reference=r["reference"], retrieved_contexts=r["contexts"])
        else:
            res = await m.ascore(user_input=r["question"], retrieved_contexts=r["contexts"], reference=r["reference"])
        v = res.value
        return {"value": None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v), "error": ""}
    except Exception as exc:  # reported per record: what Ragas could not do is the finding
        return {"value": None, "error": f"{type(exc).__name__}: {str(exc)[:300]}"}

async def main():
    out = []
    for i, r in enumerate(records, 1):
        row = {"id": r["id"]}
        for name, m in metrics.items():
            if name != "faithfulness" and not r["reference"]:
                continue
            row[name] = await one(name, m, r)
        out.append(row)
        print(f"ragas {i}/{len(records)}", file=sys.stderr, flush=True)
    json.dump(out, open(sys.argv[3], "w"), ensure_ascii=False)

asyncio.run(main())
'''


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _records(judged: dict) -> list[dict]:
    out = []
    for run in judged["runs"]:
        j = run.get("judge")
        final = run["loop"].get("final") or {}
        if not j:
            continue
        out.append({"id": run["id"], "question": run["loop"]["question"], "answer": run["loop"]["answer"],
                    "contexts": [c["text"] for c in final.get("contexts", [])], "reference": j.get("reference", ""),
                    "ours": j["scores"]})
    return out


def _serve(model_path: Path, port: int, threads: int, log: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path), "--n_ctx", "4096",
           "--n_threads", str(threads), "--port", str(port), "--host", "127.0.0.1"]
    with open(log, "wb") as out:  # a file, not a pipe: llama.cpp's load log would fill a pipe and stall the server
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2)
            return proc
        except OSError:
            if proc.poll() is not None:
                raise SystemExit(f"llama_cpp.server exited: {log.read_text(errors='replace')[-800:]}")
            time.sleep(0.5)
    proc.kill()
    raise SystemExit("llama_cpp.server did not answer within 300 s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("judged", help="JSON from `rag eval --loops plain --judge --json`")
    ap.add_argument("--ragas-python", required=True, help="the interpreter of a venv with ragas installed")
    ap.add_argument("--model", default="0.5b")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--also", nargs="*", default=[],
                    help="more judged JSON files of the same answers (e.g. judged by the 1.5B): compared with Ragas too")
    args = ap.parse_args()

    from rag.models.gguf_parts import assemble, spec_for

    records = _records(json.load(open(args.judged, encoding="utf-8")))
    if args.limit:
        records = records[: args.limit]
    port = _free_port()
    tmp_dir = tempfile.TemporaryDirectory()
    server = _serve(assemble(spec_for(args.model)), port, args.threads, Path(tmp_dir.name) / "server.log")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            src, dst = Path(tmp) / "records.json", Path(tmp) / "ragas.json"
            src.write_text(json.dumps(records, ensure_ascii=False), "utf-8")
            t0 = time.perf_counter()
            run = subprocess.run([args.ragas_python, "-c", CHILD, str(src), f"http://127.0.0.1:{port}/v1", str(dst)],
                                 env={**os.environ, "RAGAS_DO_NOT_TRACK": "true"})
            seconds = time.perf_counter() - t0
            if run.returncode != 0 or not dst.exists():
                print(f"Ragas did not run (exit {run.returncode}); see its output above")
                return 1
            theirs = {r["id"]: r for r in json.loads(dst.read_text("utf-8"))}
    finally:
        server.terminate()
        server.wait(timeout=30)
        tmp_dir.cleanup()

    print(f"{len(records)} judged answers from {args.judged}; Ragas {seconds:.0f} s on the {args.model} model "
          "through llama_cpp.server\n")
    ours = {args.judged: {r["id"]: r for r in records}}
    for path in args.also:
        other = {r["id"]: r for r in _records(json.load(open(path, encoding="utf-8")))}
        same = all(other.get(r["id"], {}).get("answer") == r["answer"] for r in records)
        print(f"{path}: {'the same answers' if same else 'NOT the same answers (compare with care)'}")
        ours[path] = other
    print("\n| our judge | metric | both scored | mean: ours / Ragas | agree (>= 0.5) | mean abs. difference | "
          "Ragas could not score | first reason |")
    print("|---|---|---|---|---|---|---|---|")
    for path, mine_by_id in ours.items():
        judge = json.load(open(path, encoding="utf-8")).get("judge") or path
        for name in METRICS:
            _row(judge, name, records, mine_by_id, theirs)
    return 0


def _row(judge: str, name: str, records, mine_by_id, theirs) -> None:
    """One table row: our judge's and Ragas's scores for `name`, over the answers both scored."""
    pairs, failed, reason = [], 0, ""
    for r in records:
        mine = mine_by_id.get(r["id"], {}).get("ours", {}).get(name)
        got = theirs.get(r["id"], {}).get(name)
        if got is None or mine is None:
            continue
        if got["value"] is None:
            failed += 1
            reason = reason or got["error"] or "NaN (its output did not parse)"
            continue
        pairs.append((mine, got["value"]))
    agree = sum((a >= 0.5) == (b >= 0.5) for a, b in pairs)
    mad = sum(abs(a - b) for a, b in pairs) / len(pairs) if pairs else math.nan
    share = f"{agree}/{len(pairs)} ({agree / len(pairs):.0%})" if pairs else "-"
    means = f"{sum(a for a, _ in pairs) / len(pairs):.3f} / {sum(b for _, b in pairs) / len(pairs):.3f}" if pairs else "-"
    why = " ".join(reason.split())[:120].replace("|", "/") or "-"
    print(f"| {judge.split(' · ')[0]} | {name} | {len(pairs)} | {means} | {share} | {mad:.3f} | {failed} | {why} |")


if __name__ == "__main__":
    raise SystemExit(main())

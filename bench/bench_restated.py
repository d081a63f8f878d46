"""Does any answer show the question restated as a claim? Read from the answers a bench already wrote (issue 67: "no
question restated as a claim on any set"); nothing is run.

    .venv/bin/python bench/bench_owndocs.py --sets hello_zh,hello_en --configs defaults --dump OWN.jsonl
    .venv/bin/python bench/bench_answers.py --table answers --sets golden,multihop,cmrc2018,xquad_zh \
        --configs after-0.5b --limit 0 --max-tokens 384 --dump PUBLIC.jsonl
    .venv/bin/python bench/bench_restated.py OWN.jsonl PUBLIC.jsonl

A sentence of a shown answer restates the question when every content word it has (jieba tokens, stop words and
punctuation aside: words.content_tokens) is a content word of the question, and it has at least two. This is
not the audit's "restates" check (which allows one new word and reads units, not tokens) and not fill-in's rule
(restates_question): a plain subset of words, so that what it counts was not decided by the rule it measures. A
refusal (资料不足) is no claim. Sets come from the dump's "set" field (bench_owndocs.py) or, for bench_answers.py's
dumps, from the query file holding the question. "opens with" counts the answers whose first sentence restates;
"anywhere" those with any such sentence; each such sentence is printed under the table. `--field model_answer` reads
what the model wrote before anything was set aside (the measure finds restatements there).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag import config  # noqa: E402
from rag.audit.citations import is_not_enough, strip_citations  # noqa: E402
from rag.audit.words import content_tokens  # noqa: E402
from rag.ingest.sentences import split_sentences  # noqa: E402

EVAL = config.value("RAG_EVAL_DIR")
QUERY_FILES = {"golden": ROOT / "data" / "golden.jsonl", "multihop": ROOT / "data" / "multihop.jsonl",
               "oos": ROOT / "data" / "out_of_scope.jsonl", "oos-fresh": ROOT / "data" / "out_of_scope_fresh.jsonl",
               "cmrc2018": EVAL / "cmrc2018_dev" / "queries.jsonl", "xquad_zh": EVAL / "xquad_zh" / "queries.jsonl",
               "drcd": EVAL / "drcd_dev" / "queries.jsonl"}
QUOTES = "「」『』“”\"'"


def set_of_question() -> dict[str, str]:
    """Question text -> the set whose query file holds it (the first, in QUERY_FILES' order)."""
    out: dict[str, str] = {}
    for name, path in QUERY_FILES.items():
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.setdefault(json.loads(line).get("query", ""), name)
    return out


def restates(sentence: str, question: str) -> bool:
    """Every content word of the sentence is the question's, and it has two or more."""
    words = content_tokens(strip_citations(sentence).strip(QUOTES + " "))
    return len(words) >= 2 and set(words) <= set(content_tokens(question))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dumps", nargs="+", type=Path, help="JSON-lines dumps of bench_owndocs.py or bench_answers.py")
    ap.add_argument("--field", default="answer", help="what to read: answer (shown; the default) or model_answer (what "
                    "the model wrote, before the pipeline set anything aside: where the count is not 0)")
    args = ap.parse_args()
    sets = set_of_question()
    rows: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])  # set -> [answers, opens with, anywhere]
    found: list[tuple[str, str, str]] = []
    for path in args.dumps:
        for line in path.read_text(encoding="utf-8").splitlines():
            d = json.loads(line)
            name = d.get("set") or sets.get(d["question"], "?")
            answer = d.get(args.field) or ""
            row = rows[name]
            row[0] += 1
            if is_not_enough(answer):
                continue
            sentences = split_sentences(answer, semicolons=False)
            flags = [restates(s, d["question"]) for s in sentences]
            hits = [s for s, flag in zip(sentences, flags) if flag]
            row[1] += bool(flags and flags[0])
            row[2] += bool(hits)
            found += [(name, d["question"], s) for s in hits]
    print("| set | answers | opens with the question restated | restated anywhere |")
    print("|---|---:|---:|---:|")
    for name, (n, opens, anywhere) in rows.items():
        print(f"| {name} | {n} | {opens} | {anywhere} |")
    for name, question, sentence in found:
        print(f"\n{name}: {question}\n  {sentence}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""`python -m rag audit`: the citation audit's fact checker on sentence/chunk pairs from a JSONL file.

    python -m rag audit --pairs data/support_pairs.jsonl [--corpus FILE] [--json] [--opinion 1.5b]

Each line of the file has `id`, `ref` (a chunk ref of the corpus: the bundled knowledge base unless
--corpus, or the line's own `corpus`, names another) and `sentence`; `question` is optional. One verdict is
printed per line: the id, the label (supported, or what it is instead), the evidence span and the reasons.
A line that is not a pair, or whose ref is not in the corpus, prints its error; the others still run, and
the exit status is then 2.
Not handled here: the checks (rag/audit/support.py), reading the pairs (rag/evaluate/audit_pairs.py).
"""

from __future__ import annotations

import argparse
import sys

from rag import defaults, jsonout
from rag.audit.checks.opinion import model_opinion
from rag.audit.support import Checker
from rag.cli.common import err, load_corpus, short
from rag.evaluate.audit_pairs import audit_pairs, load_pairs
from rag.ingest.chunking import CHUNKERS, chunk_documents


def add_parser(sub) -> None:
    p = sub.add_parser("audit", help="check sentence/chunk pairs: supported, or why not")
    p.add_argument("--pairs", required=True, help="JSONL: id, ref, sentence (and optionally question, corpus)")
    p.add_argument("--corpus", help="corpus file or folder the refs point into (default: the bundled knowledge base)")
    p.add_argument("--chunker", choices=list(CHUNKERS), default=defaults.CHUNKER,
                   help=f"how the corpus is cut into the chunks the refs name (default {defaults.CHUNKER}, as the app)")
    p.add_argument("--opinion", choices=("none", "0.5b", "1.5b"), default="none",
                   help="also ask a bundled model for its yes/no on each sentence the checks call supported")
    p.add_argument("--json", action="store_true", help="print one JSON object per line instead of text")
    p.set_defaults(func=cmd_audit)


def cmd_audit(args: argparse.Namespace) -> int:
    pairs, errors = load_pairs(args.pairs)
    params = defaults.CHUNK_PARAMS if args.chunker == defaults.CHUNKER else {}
    corpora: dict[str, dict[str, str]] = {}

    def chunks_of(corpus: str) -> dict[str, str]:
        path = corpus or args.corpus
        key = path or ""
        if key not in corpora:
            docs = load_corpus(path)
            corpora[key] = {c.ref: c.text for c in chunk_documents(docs, args.chunker, **params).chunks}
        return corpora[key]

    opinion = None
    if args.opinion != "none":
        from rag.models.local_llm import LocalChat

        opinion = model_opinion(LocalChat(args.opinion))
    results = errors + audit_pairs(pairs, chunks_of, Checker(opinion=opinion))
    failed = 0
    for r in results:
        if r.support is None:
            failed += 1
            err(f"{r.pair.pair_id}: error: {r.error}")
            if args.json:
                print(jsonout.dumps({"id": r.pair.pair_id, "error": r.error}))
            continue
        _print_result(r, r.support, args.json)
    if not args.json:
        done = len(results) - failed
        print(f"\n{done} checked, {sum(r.support is not None and r.support.label == 'supported' for r in results)} "
              f"supported" + (f", {failed} could not be checked (see above)" if failed else ""), file=sys.stderr)
    return 2 if failed else 0


def _print_result(r, s, as_json: bool) -> None:
    """One pair's verdict (`s`, its Support): a JSON line, or its label, evidence and reasons as text."""
    lang = "zh" if any("\u4e00" <= ch <= "\u9fff" for ch in s.sentence) else "en"
    if as_json:
        print(jsonout.dumps({
            "id": r.pair.pair_id, "label": s.label, "ref": r.pair.ref, "sentence": s.sentence,
            "evidence": s.evidence.text if s.evidence else None, "coverage": round(s.coverage, 3),
            "checks": [{"check": c.name, "passed": c.passed, "reason": c.reason(lang)} for c in s.checks],
            "opinion": None if s.opinion is None else {"p_yes": s.opinion.p_yes, "raw": s.opinion.raw},
        }))
        return
    print(f"{r.pair.pair_id}\t{s.label}\t{short(s.sentence, 60)}")
    if s.evidence is not None:
        print(f"  evidence [{s.evidence.ref}]: {short(s.evidence.text, 90)}")
    print("  why: " + "; ".join(s.reasons(lang)))

"""Does "supported" mean supported? The audit's label on the bundled 0.5B's own sentences, against labels read off the
source.

    .venv/bin/python bench/bench_supported.py

bench/supported_labels.jsonl holds sentences the bundled 0.5B wrote under the app's defaults (hello_algo's Chinese and
English chapters, golden and the public sets), each with the chunk it cited, as the run gave them, and a label written
by reading that chunk: `right` when the chunk states what the sentence says (true but from another chunk, restating the
question, a fragment or a false claim is not right), and why. This prints, over those sentences, how many the audit
(rag/audit/support.py, as the answer page runs it: the sentence, its cited chunk, the question) calls supported, and
how many of those are right: the precision of "supported" the answer page shows a student, and its recall of the right
ones; once by the rules alone, once with the learned verifier the answer's audit adds (rag/audit/verifier.py). The
labels chose nothing in the checker: they were written after its rules were set, and are reported here.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag.audit.support import Checker, check_sentence  # noqa: E402
from rag.audit.verifier import learned_verifier  # noqa: E402

LABELS = ROOT / "bench" / "supported_labels.jsonl"


def main() -> None:
    rows = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines() if line.strip()]
    verifier = learned_verifier()
    for name, checker in (("the rules alone", Checker()), ("the answer's audit (the rules and the learned verifier)",
                                                            Checker(verifier=verifier))):
        if checker.verifier is None and name != "the rules alone":
            print("\n(no learned verifier installed: data/answering/verifier/)")
            continue
        table(rows, checker, name)


def table(rows: list[dict], checker: Checker, name: str) -> None:
    by_source: dict[str, list] = {}
    for r in rows:
        label = check_sentence(r["sentence"], {r["ref"]: r["chunk"]}, r.get("question", ""), checker).label
        by_source.setdefault(r["source"].split(" (")[0], []).append((label, r["right"]))
    print(f"bench_supported: {len(rows)} sentences of the bundled 0.5B, labelled by reading their cited chunk; "
          f"{name}\n")
    print("| sentences from | n | right | labelled supported | of those right (precision) | right ones labelled supported (recall) |")
    print("|---|---:|---:|---:|---:|---:|")
    total: list = []
    for source, got in [*by_source.items(), ("all", None)]:
        got = got if got is not None else total
        if source != "all":
            total += got
        sup = [ok for label, ok in got if label == "supported"]
        right = sum(ok for _, ok in got)
        prec = f"{sum(sup)} / {len(sup)} = {sum(sup) / len(sup):.2f}" if sup else "—"
        rec = f"{sum(sup)} / {right} = {sum(sup) / right:.2f}" if right else "—"
        print(f"| {source} | {len(got)} | {right} | {len(sup)} | {prec} | {rec} |")
    print("\nlabels the audit gave:", dict(Counter(label for label, _ in total)), "\n")


if __name__ == "__main__":
    main()

"""Sentence/chunk pairs with a support label, read from JSONL and run through the audit's checker.

A pairs file has one JSON object per line: `id`, `ref` (a chunk ref in the corpus), `sentence`, and
optionally `question` (for the restatement check), `corpus` (a path, for a pair over another corpus than
the default), `label` (supported | unsupported: what the sentence really is), `kind` (faithful, number,
swap, negation, addition, restatement, model) and `half` (dev | test | fresh). data/support_pairs.jsonl is
this project's labelled set (data/README.md); `python -m rag audit --pairs FILE` prints one verdict per line.
A line that is not a pair, or whose ref is not in its corpus, gets its own error; the other lines still run.
Not handled here: the checks themselves (rag/audit/support.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rag.audit.support import Checker, Support
from rag.errors import ConfigError

REQUIRED = ("id", "ref", "sentence")


@dataclass(frozen=True)
class Pair:
    pair_id: str
    ref: str
    sentence: str
    question: str = ""
    corpus: str = ""  # "" = the default corpus
    label: str = ""  # the gold label, when the file has one
    kind: str = ""
    half: str = ""


@dataclass(frozen=True)
class PairResult:
    pair: Pair
    support: Support | None  # None when the pair could not be checked
    error: str = ""  # why not: a bad line, a ref that is not in the corpus


def load_pairs(path: str | Path) -> tuple[list[Pair], list[PairResult]]:
    """(the pairs, one error result per line that is not a pair). A missing file is a ConfigError."""
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"{path} is a folder, not a pairs file: give a JSONL file with id, ref and sentence on each "
                          f"line (e.g. {path / 'pairs.jsonl'})")
    if not path.is_file():
        raise ConfigError(f"pairs file {path} not found: give a JSONL file with id, ref and sentence on each line")
    try:
        lines = path.read_text("utf-8-sig").splitlines()
    except UnicodeDecodeError as exc:
        raise ConfigError(f"pairs file {path} is not UTF-8 ({exc}): re-save it as UTF-8") from None
    pairs: list[Pair] = []
    errors: list[PairResult] = []
    for n, line in enumerate(lines, 1):
        read = _pair_of(line, n) if line.strip() else None
        if isinstance(read, Pair):
            pairs.append(read)
        elif read is not None:
            errors.append(read)
    return pairs, errors


def _pair_of(line: str, n: int) -> Pair | PairResult:
    """Line `n` of a pairs file as a Pair, or the error result that says why it is not one."""
    bad = Pair(f"line {n}", "", "")
    try:
        rec = json.loads(line)
    except json.JSONDecodeError as exc:
        return PairResult(bad, None, f"line {n} is not JSON ({exc.msg})")
    if not isinstance(rec, dict):
        return PairResult(bad, None, f"line {n} is not a pair record (a JSON object with id, ref, sentence)")
    missing = [k for k in REQUIRED if not str(rec.get(k, "") or "").strip()]
    if missing:
        return PairResult(Pair(str(rec.get("id") or f"line {n}"), "", ""), None, f"line {n} lacks {', '.join(missing)}")
    return Pair(str(rec["id"]), str(rec["ref"]), str(rec["sentence"]), str(rec.get("question") or ""),
                str(rec.get("corpus") or ""), str(rec.get("label") or ""), str(rec.get("kind") or ""),
                str(rec.get("half") or ""))


def audit_pairs(pairs: Sequence[Pair], chunks_of: Callable[[str], Mapping[str, str]], checker: Checker | None = None,
                on_pair: Callable[[PairResult], None] | None = None) -> list[PairResult]:
    """Check every pair against its chunk. `chunks_of(corpus)` gives ref -> chunk text for a pair's corpus
    ("" for the default); a ref that is not there is that pair's error."""
    checker = checker or Checker()
    out = []
    for p in pairs:
        chunks = chunks_of(p.corpus)
        if p.ref not in chunks:
            near = ", ".join(sorted(chunks)[:3])
            result = PairResult(p, None, f"{p.pair_id}: ref {p.ref!r} is not a chunk of the corpus (its refs look like {near})")
        else:
            result = PairResult(p, checker.check(p.sentence, {p.ref: chunks[p.ref]}, p.question))
        out.append(result)
        if on_pair is not None:
            on_pair(result)
    return out


def flagged(support: Support) -> bool:
    """A sentence the audit does not let through as supported."""
    return support.label != "supported"

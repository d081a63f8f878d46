"""Gold ablation: training rows for the learned answer gate and the answer-sentence selector, from public QA data.

A reading-comprehension set gives questions, each with its gold passage and answer strings, over a passage corpus.
Each question is run through the pipeline's first half (pipeline.gather: retrieval, the learned ranker, the
contexts) twice:
- over the whole corpus: answerable (1) when a context of its gold passage holds an answer string; not (0) when no
  context holds one (retrieval missed it, so these contexts cannot answer); left out when only another passage's
  context holds one (a coincidence of words: it may or may not answer);
- over the corpus with its gold passage and that passage's near duplicates removed (character-trigram Jaccard of
  DUPLICATE or more): a real near miss, the same question over its topic's neighbours (0; left out when a context
  still holds an answer string).
The gate's row is pipeline.gate_input read by learned_gate.gate_values, exactly what the app reads. The selector's
rows are the whole run's candidate sentences (the stand-in's, over the contexts: extractive.score_sentences), 1 for
a sentence of a gold-passage chunk holding an answer string; a question with none gives no group.
Not handled here: training and the operating point (scripts/train_answering.py), reading the sets (data/train).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from rag.answer.extractive import ExtractiveGenerator
from rag.answer.learned_gate import gate_values
from rag.answer.prompt import build_prompt
from rag.answer.selector import select_values
from rag.index.build import Index, build_index
from rag.ingest.chunking import ChunkSet
from rag.pipeline import gate_input, gather, weighted
from rag.run import RunContext
from rag.trace import AskSettings

DUPLICATE = 0.6  # character-trigram Jaccard from which another passage counts as the gold passage's duplicate


@dataclass(frozen=True)
class Question:
    query_id: str
    query: str
    gold: tuple[str, ...]  # the passages (doc ids) that answer it
    answers: tuple[str, ...]  # its answer strings, as they occur in the gold passage


@dataclass(frozen=True)
class GateRow:
    query_id: str
    variant: str  # "whole" or "ablated"
    gold_doc: str  # the split keeps a passage's questions together
    values: np.ndarray  # (len(GATE_FEATURES),)
    label: int  # 1: the contexts answer; 0: they do not


@dataclass(frozen=True)
class SelectGroup:
    query_id: str
    gold_doc: str
    sentences: tuple[str, ...]  # the candidates, as the stand-in scored them
    values: np.ndarray  # (len(sentences), len(SELECT_FEATURES))
    labels: np.ndarray  # (len(sentences),) 1: holds an answer string, in a gold chunk


def near_duplicates(texts: dict[str, str], threshold: float = DUPLICATE) -> dict[str, set[str]]:
    """doc id -> the other doc ids whose character-trigram sets have a Jaccard of `threshold` or more with its own
    (one sparse product over the corpus, so a thousand passages take a second, not a quadratic loop in Python)."""
    ids = list(texts)
    vocab: dict[str, int] = {}
    rows, cols = [], []
    for i, doc in enumerate(ids):
        grams = {texts[doc][k:k + 3] for k in range(max(1, len(texts[doc]) - 2))}
        for g in grams:
            rows.append(i)
            cols.append(vocab.setdefault(g, len(vocab)))
    m = sparse.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(len(ids), max(1, len(vocab))))
    sizes = np.asarray(m.sum(axis=1)).ravel()
    inter = (m @ m.T).tocoo()
    out: dict[str, set[str]] = {d: set() for d in ids}
    for i, j, v in zip(inter.row, inter.col, inter.data):
        if i != j and v / (sizes[i] + sizes[j] - v) >= threshold:
            out[ids[i]].add(ids[j])
    return out


def without(chunk_set: ChunkSet, doc_ids: Iterable[str]) -> ChunkSet:
    """`chunk_set` less every chunk (and parent) of `doc_ids`."""
    gone = set(doc_ids)
    return ChunkSet([c for c in chunk_set.chunks if c.doc_id not in gone],
                    {k: p for k, p in chunk_set.parents.items() if p.doc_id not in gone}, chunk_set.method,
                    chunk_set.params)


def _holds(text: str, answers: Sequence[str]) -> bool:
    return any(a and a in text for a in answers)


def run_question(index: Index, q: Question, ctx: RunContext, variant: str) -> tuple[GateRow | None, SelectGroup | None]:
    """The gate row (None: left out, see the module docstring) and, for the whole corpus, the selector's group."""
    trace = gather(q.query, ctx.with_(index=index))
    contexts = trace.contexts
    prompt = weighted(build_prompt(q.query, contexts, "zh"), index)  # as the pipeline's prompts are
    scored = ExtractiveGenerator(index.embedder).score_sentences(prompt) if contexts else []
    gold_holds = any(c.doc_id in q.gold and _holds(c.text, q.answers) for c in contexts)
    other_holds = any(c.doc_id not in q.gold and _holds(c.text, q.answers) for c in contexts)
    if variant == "whole":
        label = 1 if gold_holds else (None if other_holds else 0)
    else:
        label = None if (gold_holds or other_holds) else 0
    row = None
    if label is not None and contexts:
        row = GateRow(q.query_id, variant, q.gold[0], gate_values(index, gate_input(trace, index, scored)), label)
    group = None
    if variant == "whole" and gold_holds and scored:
        gold_refs = {c.ref for c in contexts if c.doc_id in q.gold}
        labels = np.array([int(s.ref in gold_refs and _holds(s.sentence, q.answers)) for s in scored], dtype=np.int32)
        if labels.any():
            group = SelectGroup(q.query_id, q.gold[0], tuple(s.sentence for s in scored),
                                select_values(prompt, scored), labels)
    return row, group


def ablation_rows(chunk_set: ChunkSet, embedder, questions: Sequence[Question], reranker,
                  progress: Callable[[int, int], None] | None = None) -> tuple[list[GateRow], list[SelectGroup]]:
    """Every question over the whole corpus and over the corpus less its gold passage (and duplicates), with the
    app's default settings (hybrid retrieval, `reranker`, top 5). One index a gold passage is built for the ablated
    runs; the embedder's cache makes that a BM25 build, not a new embedding."""
    whole = build_index(chunk_set, embedder)
    ctx = RunContext(whole, AskSettings(), None, reranker=reranker)  # retrieval only: nothing is written
    texts: dict[str, str] = {}
    for c in chunk_set.chunks:
        texts[c.doc_id] = texts.get(c.doc_id, "") + c.text
    dupes = near_duplicates(texts)
    rows: list[GateRow] = []
    groups: list[SelectGroup] = []
    by_gold: dict[str, list[Question]] = {}
    for q in questions:
        by_gold.setdefault(q.gold[0], []).append(q)
    done = 0
    for gold, qs in by_gold.items():
        removed = set(qs[0].gold) | dupes.get(gold, set())
        ablated = build_index(without(chunk_set, removed), embedder)
        for q in qs:
            row, group = run_question(whole, q, ctx, "whole")
            rows += [row] if row is not None else []
            groups += [group] if group is not None else []
            row, _ = run_question(ablated, q, ctx, "ablated")
            rows += [row] if row is not None else []
            done += 1
            if progress:
                progress(done, len(questions))
    return rows, groups

"""Is an answer written without retrieval supported by anything in the corpus?

The no-RAG answer cites nothing, so the citation audit has nothing to check. Here each of its sentences
is searched for in the whole index (hybrid retrieval, the sentence as the query), and the best of the
top `k` chunks is judged exactly as if the sentence had cited it (rag/answer/citations.best_support).
A student then sees, beside the model's confident answer, "supported by faq_030" or "nothing in the
knowledge base supports this".

It is evidence of support, not of truth: a sentence the corpus never mentions may still be right, and
a supported one may paraphrase a chunk wrongly (the overlap and cosine heuristics do not read meaning).
Not handled here: answers with citations (rag/answer/citations.audit).
"""

from __future__ import annotations

from dataclasses import dataclass

from rag.answer.citations import best_support, is_not_enough, strip_citations
from rag.index.build import Index
from rag.ingest.sentences import split_sentences
from rag.search.retrieval import retrieve


@dataclass(frozen=True)
class Grounding:
    sentence: str
    best_ref: str | None  # the corpus chunk that supports it best (None: nothing was found)
    label: str | None  # supported | weak | unsupported (None for an empty sentence)


def ground_in_corpus(answer: str, index: Index, k: int = 3) -> list[Grounding]:
    """One Grounding per sentence of `answer`, searching the whole `index` for support."""
    out = []
    for sentence in split_sentences(answer or "", semicolons=False):
        claim = strip_citations(sentence)
        if not claim or is_not_enough(claim):
            out.append(Grounding(sentence, None, None))
            continue
        hits = retrieve(index, claim, "hybrid", k, max(k, 20)).ranked()
        contexts = {index.chunk(h.chunk_id).ref: index.chunk(h.chunk_id).text for h in hits}
        (ref, label), = best_support([claim], contexts, index.embedder)
        out.append(Grounding(sentence, ref, label))  # label None: a list marker or heading, not a claim
    return out

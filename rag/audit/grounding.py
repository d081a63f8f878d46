"""Is an answer written without retrieval supported by anything in the corpus?

The no-RAG answer cites nothing, so the citation audit has nothing to check. Here each of its sentences
is searched for in the whole index (hybrid retrieval, the sentence as the query), and the chunk it lands on
first, the sentence's own topic (what a reader would take as its source), is judged exactly as if the sentence
had cited it, by the app's one fact checker (rag/audit/support.py, through citations.best_support): evidence
span, number, binding, swap and negation checks, and "restates the question" when the sentence only says the
question back. Not the best of several chunks: nonsense shares words with some chunk somewhere ("重复词的出现频率越
高，说明该词在其他句子中出现的频率也越高" found 部分支撑 in the jieba entry, two places below the BM25 entry it is about),
and the best of many is how nonsense comes to look supported.
A student then sees, beside the model's confident answer, "supported by faq_030" or "nothing in the
knowledge base supports this".

It is evidence of support, not of truth: a sentence the corpus never mentions may still be right, and the
checks are rules over words (fact_lexicon.py says what they cannot catch).
Not handled here: answers with citations (rag/audit/citations.audit).
"""

from __future__ import annotations

from dataclasses import dataclass

from rag.audit.citations import best_support, is_not_enough, strip_citations
from rag.audit.support import Support
from rag.index.build import Index
from rag.ingest.sentences import split_sentences
from rag.search.retrieval import Search, retrieve


@dataclass(frozen=True)
class Grounding:
    sentence: str
    best_ref: str | None  # the corpus chunk that supports it best (None: nothing was found)
    label: str | None  # a support.LABELS label (None for an empty sentence, a list marker or a heading)
    support: Support | None = None  # the checker's finding: evidence span, checks and their reasons


def ground_in_corpus(answer: str, index: Index, k: int = 1, question: str = "", opinion=None) -> list[Grounding]:
    """One Grounding per sentence of `answer`, judged against the first `k` chunks (1: its own topic's) the whole
    `index` returns for it; `question` lets a sentence that only restates it be labelled so; `opinion` is the
    checker's optional model second opinion."""
    out = []
    for sentence in split_sentences(answer or "", semicolons=False):
        claim = strip_citations(sentence)
        if not claim or is_not_enough(claim):
            out.append(Grounding(sentence, None, None))
            continue
        hits = retrieve(index, claim, Search("hybrid", k, max(k, 20))).ranked()
        contexts = {index.chunk(h.chunk_id).ref: index.chunk(h.chunk_id).text for h in hits}
        found, = best_support([claim], contexts, index.embedder, question, opinion)
        if found is None:  # a list marker or heading, not a claim
            out.append(Grounding(sentence, None, None))
            continue
        out.append(Grounding(sentence, found.evidence.ref if found.evidence else None, found.label, found))
    return out

"""Audit: what a question asks, what a sentence states, and whether a chunk supports it. Every "supported", every
citation's verdict and every slot check in the app comes from here. It stands below the answer wing (rag/answer/)
because writing an answer reads it: a citation moved to another chunk is re-audited there, the stand-in's quotes are
chosen by what they state, and a garbled answer is caught as it streams.

- `citations.py`: parsing `[ref]` markers, auditing them (valid / hallucinated / unused), per-sentence
  support (an uncited sentence names the context that supports it best), and citation events while
  an answer streams; the exact "not enough information" reply.
- `support.py`: the one fact checker behind every "supported" in the app: align a sentence to its
  evidence span, then run the checks (checks/) in order and label it; a model's yes/no and the learned verifier
  as second looks.
- `checks/`: the checks that read a sentence against its chunk, one concept a file, each a `Check` with its reason
  in both languages.
- `verifier.py`: a learned verifier behind the rules (the answer's audit, Chinese questions): LightGBM over where a
  sentence's words sit against the question's subject, learned from claims made out of public QA data; it only doubts.
- `words.py`: a text's content tokens and which of some words a text holds, as the checks, the gate, the selector
  and the stand-in match words.
- `fact_text.py`: text as the checks read it: numbers by value, names, content words, clauses.
- `fact_lexicon.py`: the small word lists the checks use (negations, opposites, generic words, units).
- `grounding.py`: whether anything in the corpus supports each sentence of the no-RAG answer.
- `asks.py`: the one table of the words by which a question asks for a kind of answer (both readers below read it).
- `answer_form.py`: what form a question's answer takes (a formula, a number, a list) and whether a sentence has it.
- `asked.py`: what a question asks for (a number, a formula, a list, a reason, a comparison) and whether the answer
  gives it; the words that only frame a question.
- `shape.py`: a garbled answer (a loop, a list of refs, a bare number) told apart from an answer, as it streams and
  when it is done.
"""

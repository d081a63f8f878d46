"""Answer: ranked chunks in, a cited answer out, and an audit of every citation.

- `prompt.py`: numbered, ref-labelled context blocks, the grounding rules, and the no-RAG control prompt.
- `generation.py`: the `Generator` protocol and the language-model generator (streamed deltas).
- `extractive.py`: the offline stand-in that answers by quoting retrieved sentences, labelled as such.
- `citations.py`: parsing `[ref]` markers, auditing them (valid / hallucinated / unused), per-sentence
  support (an uncited sentence names the context that supports it best), and citation events while
  an answer streams.
- `support.py`: the one fact checker behind every "supported" in the app: align a sentence to its
  evidence span, then check numbers, bindings, swapped terms, negations, new names and restatements;
  a model's yes/no as an optional second opinion.
- `verifier.py`: a learned verifier behind the rules (the answer's audit, Chinese questions): LightGBM over where a
  sentence's words sit against the question's subject, learned from claims made out of public QA data; it only doubts.
- `checks/`: the checks that read a sentence against its chunk, one concept a file (a number said of the thing
  it measures, a condition's scope), each a `Check` with its reason in both languages.
- `fact_text.py`: text as the checks read it: numbers by value, names, content words, clauses.
- `fact_lexicon.py`: the small word lists the checks use (negations, opposites, generic words, units).
- `citation_grammar.py`: constrained citations, a grammar under which every sentence cites a real ref.
- `grounding.py`: whether anything in the corpus supports each sentence of the no-RAG answer.
- `answer_form.py`: what form a question's answer takes (a formula, a number, a list) and whether a sentence has it.
- `compress.py`: query-focused compression: each context cut to the sentences that answer the question,
  in order, with their refs, under a token budget; what was kept and dropped.
- `answerability.py`: the gate that refuses before generating when the contexts cannot answer (the learned gate's
  decision, or the earlier rules), with its evidence.
- `learned_gate.py`: the learned gate: "can these contexts answer?" as a LightGBM classifier over signals the
  pipeline already has, trained on public QA data by gold ablation, its operating point chosen on held-apart data.
- `selector.py`: the sentence that answers, chosen by a learned answer-sentence selector (LambdaMART over the
  stand-in's candidate sentences); the answer leads with it.
- `budget.py`: the model's answer's token budget, from the slot the question asks.
- `asked.py`: what a question asks for (a number, a formula, a list, a reason, a comparison) and whether the answer
  gives it; the words that only frame a question.
- `unnamed.py`: the names of a question (Kruskal, 插值查找) that the documents never use: a near miss's mark.
- `rebind.py`: each model citation moved to the chunk that states its sentence, where the cited one does not.
- `fill_in.py`: the stand-in's sentences the model left out, appended as labelled quotes.
- `lead.py`: when nothing the model wrote is left, the model chooses which quote leads, by its likelihood of each.
- `shape.py`: a garbled answer (a loop, a list of refs, a bare number) stopped and replaced, visibly.
"""

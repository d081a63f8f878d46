"""Answer: ranked chunks in, a cited answer out. What is checked, and how (the citations, the support of each sentence,
what a question asks), is the audit wing below it (rag/audit/): writing an answer reads the audit (rebind, fill-in).

- `prompt.py`: numbered, ref-labelled context blocks, the grounding rules, and the no-RAG control prompt.
- `generation.py`: the `Generator` protocol and the language-model generator (streamed deltas).
- `extractive.py`: the offline stand-in that answers by quoting retrieved sentences, labelled as such.
- `lead_ins.py`: a sentence that introduces a list ("……两个方法："), and what it introduces, quoted together.
- `citation_grammar.py`: constrained citations, a grammar under which every sentence cites a real ref.
- `compress.py`: query-focused compression: each context cut to the sentences that answer the question,
  in order, with their refs, under a token budget; what was kept and dropped.
- `answerability.py`: the gate that refuses before generating when the contexts cannot answer (the learned gate's
  decision, or the earlier rules), with its evidence.
- `learned_gate.py`: the learned gate: "can these contexts answer?" as a LightGBM classifier over signals the
  pipeline already has, trained on public QA data by gold ablation, its operating point chosen on held-apart data.
- `selector.py`: the sentence that answers, chosen by a learned answer-sentence selector (LambdaMART over the
  stand-in's candidate sentences); the answer leads with it.
- `budget.py`: the model's answer's token budget, from the slot the question asks.
- `unnamed.py`: the names of a question (Kruskal, 插值查找) that the documents never use: a near miss's mark.
- `rebind.py`: each model citation moved to the chunk that states its sentence, where the cited one does not.
- `fill_in.py`: the stand-in's sentences the model left out, appended as labelled quotes.
- `lead.py`: when nothing the model wrote is left, the model chooses which quote leads, by its likelihood of each.
"""

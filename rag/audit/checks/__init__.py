"""The audit's checks that read a sentence against its chunk, one concept a file (support.py aligns the sentence to
its evidence span and runs them in order; each returns a `Check` with its reason in both languages, or None when it
has nothing to say):

- `verdict.py`: `Check`, one check's verdict on one sentence, the reason in Chinese and English.
- `units.py`: what a sentence and a span share (a content unit found, the coverage), read by the alignment too.
- `numbers.py`: every number of the sentence is the span's; one the span has nothing against is a new number.
- `quantity.py`: a number is said of the thing it measures ("32 位浮点数, 8 位整数": 32 bits is the float's width).
- `binding.py`: a number and the term it is said of sit together in the span; the clause helpers swap and polarity use.
- `swap.py`: the span says the same thing of a sibling term (L1 for L2, 验证集 for 测试集).
- `scope.py`: what the chunk says under one condition is not said of another ("在训练集上误差很小，在测试集上误差很大").
- `polarity.py`: negations agree clause by clause, and no opposite pair differs (增大/减小).
- `novelty.py`: a name the chunk never mentions, a claim whose parts sit apart, the share of what it adds beyond the
  question.
- `restates.py`: a sentence that states nothing of its own (a verbatim copy, a lead-in, an echo of the rules, the
  question's own words).
- `opinion.py`: the optional second opinion, a bundled model's yes/no on the sentence and its span.
"""

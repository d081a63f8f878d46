"""The audit's checks that read a sentence against its chunk, one check a file. Each rule is a module with a `NAME`
(its file's name, "_" written "-") and `check(claim) -> Check | None` (verdict.py's `Rule`: the one signature);
support.py aligns the sentence to its evidence span, makes the `Claim`, runs the rules in the order of its `RULES`
and labels the sentence from what failed.

- `verdict.py`: `Check` (one check's verdict, its reason in Chinese and English), `Evidence`, `Claim`, `Rule`.
- `units.py`: what a sentence and a span share (a content unit found, the coverage), read by the alignment too.
- `numbers.py`: every number of the sentence is the span's, with the span's unit.
- `new_number.py`: a number the span has nothing against (none at all there, or only an assigned one).
- `quantity.py`: a number is said of the thing it measures ("32 位浮点数, 8 位整数": 32 bits is the float's width).
- `binding.py`: a number and the term it is said of sit together in the span; the clause helpers swap and polarity use.
- `swap.py`: the span says the same thing of a sibling term (L1 for L2, 验证集 for 测试集).
- `scope.py`: what the chunk says under one condition is not said of another ("在训练集上误差很小，在测试集上误差很大").
- `polarity.py`: negations agree clause by clause, and no opposite pair differs (增大/减小).
- `new_term.py`: a name the chunk never mentions (Google, GPU).
- `apart.py`: a claim whose parts sit in different places of the chunk.
- `bare.py`: a phrase with no predicate, an answer only with the question: the chunk must say it where it speaks of
  what the question asks.
- `restates.py`: a sentence that states nothing of its own: a lead-in, a question, only the question's own words.
- `coverage.py`: the share of the sentence's content units in its span.
- `adds.py`: the same share over what the sentence says beyond the question.
- `no_claim.py`: a sentence that asserts nothing (a question inside it, a bare noun phrase).
- `verbatim.py`: a copy of the chunk's own words, decided before the rules run.
- `echo.py`: an echo of the prompt's rules, decided before the sentence is aligned.
- `opinion.py`: the optional second opinion, a bundled model's yes/no on the sentence and its span, after the label.
"""

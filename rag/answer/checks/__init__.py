"""The audit's checks that read a sentence against its chunk, one concept a file (support.py aligns the sentence to
its evidence span and runs them in order; each returns a `Check` with its reason in both languages, or None when it
has nothing to say):

- `verdict.py`: `Check`, one check's verdict on one sentence, the reason in Chinese and English.
- `quantity.py`: a number is said of the thing it measures ("32 位浮点数, 8 位整数": 32 bits is the float's width).
- `scope.py`: what the chunk says under one condition is not said of another ("在训练集上误差很小，在测试集上误差很大").
"""

"""The learned ranker's reasons, made readable: feature names in the UI's language, each candidate's largest
contributions as one line, and one candidate's contributions as a table (largest first).

The numbers are rag/search/learned_rank.py's (LightGBM's per-feature contributions, which sum with the bias to
the score); this module only words them.
Not handled here: computing them (learned_rank.py), the charts (charts.py).
"""

from __future__ import annotations

import pandas as pd

from rag.search.learned_rank import Why
from rag.search.rank_features import describe

from .i18n import loc, tr


def meaning(feature: str) -> str:
    return loc(describe[feature])


def reasons(why: Why, n: int = 3) -> str:
    """"sent_cos_gap +0.84 · title_words -0.12 · ...": the n largest contributions, signed; "⚠" first when weak
    signals (the title's words, lengths: Why.weak) did most of the pushing."""
    flag = tr(zh="⚠ 主要靠弱信号（标题词、长度）· ", en="⚠ mostly weak signals (title words, length) · ") if why.weak() else ""
    return flag + " · ".join(why.reasons(n))


def contribution_frame(why: Why) -> pd.DataFrame:
    rows = [{tr(zh="特征", en="feature"): f, tr(zh="贡献", en="contribution"): round(c, 4), tr(zh="取值", en="value"): round(v, 4),
             tr(zh="含义", en="meaning"): meaning(f)} for f, v, c in why.largest()]
    return pd.DataFrame(rows)

"""Per-session memoisation: results (retrieval, rerank, traces, PCA, rewrites) kept in st.session_state,
keyed by everything they depend on, so switching pages reuses them and a changed setting recomputes.

A small LRU per kind; never a module global or a cache_resource, which every browser session shares.
Not handled here: models shared across sessions (models.py).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Hashable, MutableMapping

import streamlit as st


def memo(kind: str, key: Hashable, compute: Callable[[], Any], keep: int = 8, ss: MutableMapping | None = None):
    """`compute()` once per (kind, key) in this session; the last `keep` results of a kind are kept."""
    ss = st.session_state if ss is None else ss
    store: OrderedDict = ss.setdefault(f"memo.{kind}", OrderedDict())
    if key in store:
        store.move_to_end(key)
        return store[key]
    value = compute()
    store[key] = value
    while len(store) > keep:
        store.popitem(last=False)
    return value


def peek(kind: str, key: Hashable, ss: MutableMapping | None = None):
    """A memoised result if there is one, else None (never computes)."""
    ss = st.session_state if ss is None else ss
    return ss.get(f"memo.{kind}", {}).get(key)


def remember(kind: str, key: Hashable, value, keep: int = 8, ss: MutableMapping | None = None) -> None:
    memo(kind, key, lambda: value, keep, ss)

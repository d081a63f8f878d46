"""PCA of the chunk vectors, for drawing the embedding space in 2-D or 3-D, and a check of what it distorts.

PCA via the SVD of the centred data matrix: X - mean = U S V^T; the principal axes are the rows of V^T,
the coordinates are (X - mean) V_d, and the explained variance ratio of axis i is s_i^2 / sum_j s_j^2
(Pearson, 1901; Hotelling, 1933; see e.g. Jolliffe, "Principal Component Analysis", 2002). Queries are
projected with the axes fitted on the chunks, so they land in the same picture. Each axis gets a fixed sign
(its largest loading positive) so the plot does not flip between runs.

A 2-D picture of a 384-D space lies: points that look close may not be close. `neighbour_check` makes
that visible by comparing the query's k nearest chunks in the picture (Euclidean, projected) with the
true top-k by cosine in the full space, and reports the disagreement.
Not handled here: non-linear maps (t-SNE, UMAP), plotting (the page draws what this returns).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from rag.errors import ConfigError


@dataclass(frozen=True)
class Projection:
    """A fitted PCA: `coords` are the fitted vectors in the new axes."""

    mean: np.ndarray  # (dim,) the centre the axes go through
    components: np.ndarray  # (d, dim) principal axes, unit length, best first
    explained_variance_ratio: np.ndarray  # (d,) share of the total variance along each axis
    coords: np.ndarray  # (n, d) the fitted vectors, projected

    @property
    def n_components(self) -> int:
        return int(self.components.shape[0])

    def transform(self, vectors: np.ndarray) -> np.ndarray:
        """Project new vectors (e.g. queries) onto the same axes: (m, dim) -> (m, d)."""
        v = np.atleast_2d(np.asarray(vectors, dtype=np.float64))
        if v.shape[1] != self.mean.shape[0]:
            raise ConfigError(
                f"vectors have dim {v.shape[1]} but the projection was fitted on dim {self.mean.shape[0]}; "
                "embed the query with the same embedder as the chunks"
            )
        return (v - self.mean) @ self.components.T


def pca(vectors: np.ndarray, n_components: int = 2) -> Projection:
    """Fit PCA on `vectors` (n, dim) and project them to `n_components` (2 or 3 for a picture)."""
    x = np.asarray(vectors, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2:
        raise ConfigError(f"PCA needs at least 2 vectors as an (n, dim) array, got shape {x.shape}; "
                          "index a corpus with at least two chunks")
    if not 1 <= n_components <= min(x.shape):
        raise ConfigError(f"n_components={n_components} must be between 1 and min(n, dim)={min(x.shape)}")
    mean = x.mean(axis=0)
    centred = x - mean
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    comps = vt[:n_components].copy()
    # Fix each axis' sign: SVD may return v or -v, and a mirrored plot between runs confuses readers.
    signs = np.sign(comps[np.arange(n_components), np.abs(comps).argmax(axis=1)])
    signs[signs == 0] = 1.0
    comps *= signs[:, None]
    var = s**2
    total = var.sum()
    ratio = var[:n_components] / total if total > 0 else np.zeros(n_components)
    return Projection(mean=mean, components=comps, explained_variance_ratio=ratio, coords=centred @ comps.T)


@dataclass(frozen=True)
class NeighbourCheck:
    """The query's k nearest chunks in the picture vs in the full space (row indices into the vectors)."""

    k: int
    true_top: list[int]  # cosine top-k in the full space, best first
    projected_top: list[int]  # Euclidean k nearest in the projected space, nearest first
    missing: list[int]  # truly near, but not near in the picture
    spurious: list[int]  # near in the picture, but not in the true top-k
    true_cos: list[float] = field(default_factory=list)  # cosine of each true_top row with the query
    projected_cos: list[float] = field(default_factory=list)  # ... and of each projected_top row

    @property
    def agreement(self) -> float:
        """|true_top ∩ projected_top| / k: 1.0 means the picture shows the right neighbours."""
        return (self.k - len(self.missing)) / self.k if self.k else 1.0

    @property
    def distorted(self) -> bool:
        return bool(self.missing)


def neighbour_check(
    vectors: np.ndarray, query_vector: np.ndarray, projection: Projection, k: int = 5
) -> NeighbourCheck:
    """Compare the true cosine top-k of `query_vector` with its k nearest points in `projection`.

    `vectors` are the vectors the projection was fitted on (row i <-> projection.coords[i]). Ties are
    broken by row index so the result is deterministic.
    """
    x = np.asarray(vectors, dtype=np.float64)
    q = np.asarray(query_vector, dtype=np.float64).reshape(-1)
    if x.shape[0] != projection.coords.shape[0]:
        raise ConfigError(f"{x.shape[0]} vectors but the projection holds {projection.coords.shape[0]} points; "
                          "pass the vectors the projection was fitted on")
    k = max(1, min(int(k), x.shape[0]))
    norms = np.linalg.norm(x, axis=1) * (np.linalg.norm(q) or 1.0)
    cos = (x @ q) / np.where(norms == 0, 1.0, norms)
    true_top = np.lexsort((np.arange(len(cos)), -cos))[:k]
    pq = projection.transform(q)[0]
    dist = np.linalg.norm(projection.coords - pq, axis=1)
    proj_top = np.lexsort((np.arange(len(dist)), dist))[:k]
    t, p = [int(i) for i in true_top], [int(i) for i in proj_top]
    return NeighbourCheck(
        k=k,
        true_top=t,
        projected_top=p,
        missing=[i for i in t if i not in set(p)],
        spurious=[i for i in p if i not in set(t)],
        true_cos=[float(cos[i]) for i in t],
        projected_cos=[float(cos[i]) for i in p],
    )


@dataclass(frozen=True)
class EmbeddingMap:
    """Everything the embeddings page draws: chunks, queries, top-k and the distortion check."""

    projection: Projection
    query_coords: dict[str, np.ndarray]  # label ("query", "HyDE", "q2", ...) -> (d,) point
    top: list[int]  # rows of the true cosine top-k for the main query, best first
    check: NeighbourCheck | None  # None when there is no query


def embedding_map(
    vectors: np.ndarray,
    queries: Mapping[str, np.ndarray] | None = None,
    k: int = 5,
    n_components: int = 2,
) -> EmbeddingMap:
    """Fit PCA on the chunk `vectors`, place every query vector in the same axes, check the first query.

    `queries` maps a label to a vector; the first entry is the main query whose top-k is highlighted.
    """
    proj = pca(vectors, n_components)
    queries = dict(queries or {})
    coords = {label: proj.transform(v)[0] for label, v in queries.items()}
    if not queries:
        return EmbeddingMap(proj, coords, [], None)
    main = next(iter(queries.values()))
    check = neighbour_check(vectors, main, proj, k)
    return EmbeddingMap(proj, coords, check.true_top, check)

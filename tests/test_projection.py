"""PCA projection and the neighbour-distortion check (rag/index/projection.py), against hand-checkable data."""

import numpy as np
import pytest

from rag.errors import ConfigError
from rag.index.projection import embedding_map, neighbour_check, pca


def _normalise(x):
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def test_pca_recovers_the_dominant_axis_and_variance_ratio():
    # points on a line along (1, 1, 0) plus small noise on z: axis 1 explains almost everything
    rng = np.random.default_rng(0)
    t = rng.normal(size=200)
    x = np.stack([t, t, 0.01 * rng.normal(size=200)], axis=1)
    p = pca(x, 2)
    assert p.coords.shape == (200, 2)
    np.testing.assert_allclose(np.abs(p.components[0]), [2**-0.5, 2**-0.5, 0], atol=1e-3)
    assert p.explained_variance_ratio[0] > 0.999
    assert p.explained_variance_ratio.sum() <= 1.0 + 1e-12
    # ratio is s_i^2 / sum s_j^2: compare with the covariance eigenvalues computed independently
    eig = np.sort(np.linalg.eigvalsh(np.cov(x.T)))[::-1]
    np.testing.assert_allclose(p.explained_variance_ratio, eig[:2] / eig.sum(), rtol=1e-9)


def test_pca_matches_covariance_eigendecomposition_and_fixes_signs():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(50, 6)) @ rng.normal(size=(6, 6))
    p = pca(x, 3)
    vals, vecs = np.linalg.eigh(np.cov(x.T))
    order = np.argsort(vals)[::-1][:3]
    for i, j in enumerate(order):  # same axes up to sign
        assert abs(abs(p.components[i] @ vecs[:, j]) - 1) < 1e-8
    # sign rule: the largest-magnitude loading of each axis is positive
    for row in p.components:
        assert row[np.abs(row).argmax()] > 0
    # the fitted points' projection equals transform() of the same points
    np.testing.assert_allclose(p.transform(x), p.coords, atol=1e-10)
    # projected variance along axis i == eigenvalue i
    np.testing.assert_allclose(p.coords.var(axis=0, ddof=1), vals[order], rtol=1e-8)


def test_pca_rejects_bad_input():
    with pytest.raises(ConfigError, match="at least 2"):
        pca(np.ones((1, 4)))
    with pytest.raises(ConfigError, match="n_components"):
        pca(np.eye(3), 5)
    p = pca(np.eye(4)[:3], 2)
    with pytest.raises(ConfigError, match="same embedder"):
        p.transform(np.ones(7))


def test_neighbour_check_agrees_when_the_plane_holds_all_the_structure():
    # 3-D vectors that really live in the x-y plane: a 2-D picture is exact, so no distortion
    angles = np.linspace(0, np.pi, 12)
    x = _normalise(np.stack([np.cos(angles), np.sin(angles), np.zeros_like(angles)], axis=1) + [0, 0, 0])
    q = np.array([1.0, 0.2, 0.0])
    p = pca(x, 2)
    chk = neighbour_check(x, q, p, k=3)
    assert chk.true_top == [1, 0, 2]  # q sits at 0.197 rad; rows are pi/11 = 0.286 rad apart
    assert sorted(chk.projected_top) == [0, 1, 2]
    assert not chk.distorted and chk.agreement == 1.0


def test_neighbour_check_flags_distortion_hidden_in_a_dropped_axis():
    # big spread along x (kept), the query's true neighbours differ only along z (dropped by 1-D PCA)
    x = np.array(
        [[10.0, 0, 1.0], [-10.0, 0, 1.0], [0.1, 0, 1.0], [0.1, 0, -1.0], [0.0, 0, -1.0], [5.0, 0, 0.0]]
    )
    q = np.array([0.0, 0.0, 1.0])
    # cosine with q: row 2 = 0.995, rows 0 and 1 = 0.0995 (tie -> lower row), row 4 = -1 (opposite)
    p = pca(x, 1)
    chk = neighbour_check(x, q, p, k=2)
    assert chk.true_top == [2, 0]
    # on the x axis alone the query (x=0) sits on row 4, then the rows at x=0.1
    assert chk.projected_top[0] == 4
    assert chk.distorted and chk.missing == [0] and 4 in chk.spurious
    assert chk.agreement == 0.5
    # keeping every axis of unit vectors removes the distortion (Euclidean order == cosine order)
    xn = _normalise(x)
    chk3 = neighbour_check(xn, q / np.linalg.norm(q), pca(xn, 3), k=2)
    assert not chk3.distorted


def test_embedding_map_places_queries_and_highlights_true_top_k():
    rng = np.random.default_rng(3)
    x = _normalise(rng.normal(size=(30, 8)))
    q = x[7] + 0.01 * rng.normal(size=8)
    rewrite = x[11]
    m = embedding_map(x, {"query": q, "HyDE": rewrite}, k=4, n_components=3)
    assert m.top[0] == 7 and len(m.top) == 4
    assert set(m.query_coords) == {"query", "HyDE"}
    np.testing.assert_allclose(m.query_coords["HyDE"], m.projection.coords[11], atol=1e-9)
    brute = list(np.argsort(-(x @ q))[:4])
    assert m.top == [int(i) for i in brute]
    empty = embedding_map(x, None)
    assert empty.check is None and empty.top == []

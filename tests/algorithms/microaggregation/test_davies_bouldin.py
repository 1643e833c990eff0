"""Davies-Bouldin beyond DB_EXACT_GROUPS groups (tiers by scatter, k-d tree candidates) gives
the dense pass's numbers, row by row; the thresholds are made small so the tiered path runs
on small data."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import anonsql.algorithms.microaggregation.measures as measures
from anonsql.algorithms.microaggregation.measures import (
    _dense_worst,
    _worst_ratios,
    davies_bouldin,
)


def _small_tiers(mp: pytest.MonkeyPatch, high: int, tier: int, neighbours: int) -> None:
    mp.setattr(measures, "DB_EXACT_GROUPS", 3)
    mp.setattr(measures, "DB_HIGH", high)
    mp.setattr(measures, "DB_TIER", tier)
    mp.setattr(measures, "DB_NEIGHBOURS", neighbours)
    mp.setattr(measures, "DB_BALL_ROWS", 7)


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-12 * abs(b)


def _centroids(kind: str, n: int, m: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "normal":
        return rng.normal(size=(n, m))
    if kind == "grid":  # coinciding centroids
        return rng.integers(0, 3, size=(n, m)).astype(np.float64)
    if kind == "clusters":  # dense spots and far ones
        return rng.normal(size=(n, m)) * rng.choice([1e-3, 1.0, 30.0], size=(n, 1))
    raise AssertionError(kind)


def _scatters(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "spread":
        return rng.exponential(size=n)
    if kind == "zeros":  # zero-scatter groups
        return np.where(rng.random(n) < 0.5, 0.0, rng.random(n))
    if kind == "ties":
        return rng.integers(0, 3, size=n) / 2.0
    if kind == "heavy":  # a few groups of very large scatter
        return rng.pareto(0.7, size=n)
    raise AssertionError(kind)


@settings(max_examples=80, deadline=None)
@given(
    st.integers(2, 300),
    st.integers(1, 5),
    st.sampled_from(["normal", "grid", "clusters"]),
    st.sampled_from(["spread", "zeros", "ties", "heavy"]),
    st.integers(1, 5),
    st.integers(2, 5),
    st.integers(1, 4),
    st.integers(0, 2**31),
)
def test_worst_ratios_equal_the_dense_pass(n, m, ckind, skind, high, tier, neighbours, seed):
    rng = np.random.default_rng(seed)
    cent = _centroids(ckind, n, m, rng)
    scatter = _scatters(skind, n, rng)
    dense = _dense_worst(cent, scatter, np.arange(n))
    with pytest.MonkeyPatch.context() as mp:
        _small_tiers(mp, high, tier, neighbours)
        tiered = _worst_ratios(cent, scatter)
    np.testing.assert_allclose(tiered, dense, rtol=1e-12, atol=0)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(10, 400),
    st.integers(1, 4),
    st.integers(4, 120),
    st.booleans(),
    st.integers(0, 2**31),
)
def test_davies_bouldin_tiered_equals_dense(rows, m, n_groups, grid, seed):
    """On records: groups of copies of one point (zero scatter), groups at the same place
    (coinciding centroids), weights."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, m))
    if grid:
        x = rng.integers(0, 3, size=(rows, m)).astype(np.float64)
    groups = rng.integers(0, n_groups, size=rows)
    counts = rng.integers(1, 4, size=rows).astype(np.float64)
    dense = davies_bouldin(x, groups, counts)
    with pytest.MonkeyPatch.context() as mp:
        _small_tiers(mp, 2, 2, 1)
        tiered = davies_bouldin(x, groups, counts)
    assert _close(tiered, dense)


def test_davies_bouldin_fixed_cases():
    """Zero-scatter groups, two groups at one place (their ratio counts 0), and many
    groups; the tiered path with the default tier sizes on 20,000 groups too."""
    x = np.array([[0.0, 0.0], [0.0, 0.0], [1.0, 0.0], [1.0, 0.0], [0.0, 0.0], [5.0, 5.0]])
    groups = np.array([0, 0, 1, 1, 2, 3])
    counts = np.ones(6)
    dense = davies_bouldin(x, groups, counts)
    # groups 0, 1, 2 have no scatter; 0 and 2 coincide: every ratio is 0
    assert dense == 0.0
    with pytest.MonkeyPatch.context() as mp:
        _small_tiers(mp, 1, 2, 1)
        assert davies_bouldin(x, groups, counts) == 0.0
    rng = np.random.default_rng(5)
    n = 20_000
    cent = rng.normal(size=(n, 3)).round(2)
    scatter = rng.exponential(size=n) * 0.05
    scatter[::7] = 0.0
    assert n > measures.DB_EXACT_GROUPS
    rows = np.sort(rng.choice(n, 2000, replace=False))
    np.testing.assert_allclose(
        _worst_ratios(cent, scatter)[rows], _dense_worst(cent, scatter, rows), rtol=1e-12, atol=0
    )


def test_davies_bouldin_tiered_equals_scikit_learn():
    from sklearn.metrics import davies_bouldin_score

    rng = np.random.default_rng(11)
    x = rng.normal(size=(300, 3))
    groups = rng.integers(0, 40, size=300)
    counts = rng.integers(1, 4, size=300)
    rep = np.repeat(np.arange(300), counts)
    with pytest.MonkeyPatch.context() as mp:
        _small_tiers(mp, 4, 3, 2)
        tiered = davies_bouldin(x, groups, counts.astype(np.float64))
    assert tiered == pytest.approx(davies_bouldin_score(x[rep], groups[rep]), rel=1e-9)

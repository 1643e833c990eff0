"""MDAV's screening distances (|x|^2 + |p|^2 - 2 x.p by one matrix-vector product, with a
rounding margin) change no group: the groups equal those of the plain per-attribute pass,
ties and their order included."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonsql.algorithms.microaggregation.mdav import Screen, _Pool, blocked_mdav, mdav


def _plain(self: _Pool, p: np.ndarray) -> Screen:
    """The reference: every distance from the plain per-attribute pass, no margin."""
    return Screen(self.distances(p), p, 0.0)


def exact_mdav(z: np.ndarray, counts: np.ndarray, k: int) -> np.ndarray:
    """:func:`mdav` with the screening replaced by the plain pass (MDAV as it ran before)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_Pool, "quick", _plain)
        return mdav(z, counts, k)


def _data(kind: str, n: int, m: int, rng: np.random.Generator) -> np.ndarray:
    """Points of one kind: continuous, on a small grid (duplicates and equal distances),
    or either far from the origin with a small spread (cancellation in |x|^2 - 2 x.p)."""
    if kind == "normal":
        return rng.normal(size=(n, m))
    if kind == "grid":
        return rng.integers(0, 3, size=(n, m)).astype(np.float64)
    if kind == "offset":
        return 1e6 + rng.normal(scale=1e-3, size=(n, m))
    if kind == "offset_grid":
        return 1e6 + rng.integers(0, 3, size=(n, m)).astype(np.float64)
    if kind == "offset_mild":
        return -3e3 + rng.normal(scale=1e-2, size=(n, m)).round(3)
    raise AssertionError(kind)


KINDS = ["normal", "grid", "offset", "offset_grid", "offset_mild"]


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 120),
    st.integers(1, 6),
    st.integers(1, 6),
    st.sampled_from(KINDS),
    st.booleans(),
    st.integers(0, 2**31),
)
def test_screened_mdav_equals_the_plain_pass(n, m, k, kind, weighted, seed):
    rng = np.random.default_rng(seed)
    z = _data(kind, n, m, rng)
    counts = rng.integers(1, 4, size=n) if weighted else np.ones(n, dtype=np.int64)
    k = min(k, int(counts.sum()))
    assert mdav(z, counts, k).tolist() == exact_mdav(z, counts, k).tolist()


@pytest.mark.parametrize(
    ("n", "m", "k", "kind", "weighted"),
    [
        (3000, 5, 5, "normal", False),  # the sampled bound and the reference point at work
        (2500, 3, 3, "normal", True),
        (3000, 2, 4, "grid", True),  # many duplicates and equal distances
        (2000, 4, 5, "offset", False),  # values around 1e6, spread 1e-3
        (2000, 3, 2, "offset_grid", True),
        (2000, 5, 3, "offset_mild", False),
    ],
)
def test_screened_mdav_equals_the_plain_pass_on_larger_pools(n, m, k, kind, weighted):
    rng = np.random.default_rng(n + m + k)
    z = _data(kind, n, m, rng)
    counts = rng.integers(1, 4, size=n) if weighted else np.ones(n, dtype=np.int64)
    assert mdav(z, counts, k).tolist() == exact_mdav(z, counts, k).tolist()


def test_blocked_mdav_equals_the_plain_pass_per_block():
    rng = np.random.default_rng(7)
    z = rng.normal(size=(1500, 3)).round(1)
    counts = rng.integers(1, 3, size=1500)
    groups, info = blocked_mdav(z, counts, 4, block=300)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_Pool, "quick", _plain)
        plain, _ = blocked_mdav(z, counts, 4, block=300)
    assert info["mdav_blocks"] > 1 and groups.tolist() == plain.tolist()


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 200), st.integers(1, 8), st.sampled_from(KINDS), st.integers(0, 2**31))
def test_screen_is_within_its_margin(n, m, kind, seed):
    """Every screened distance is within ``slack`` of the plain pass's, and the exact
    recomputation of a subset is the plain pass's, to the bit."""
    rng = np.random.default_rng(seed)
    z = _data(kind, n, m, rng)
    pool = _Pool(z, np.ones(n, dtype=np.int64))
    for r in rng.integers(0, n, size=3):
        p = pool.zc[:, r].copy()
        screen = pool.quick(p)
        plain = pool.distances(p)
        assert np.all(np.abs(screen.values - plain) <= screen.slack)
        idx = np.sort(rng.choice(n, size=min(n, 7), replace=False))
        assert pool.exact(p, idx).tolist() == plain[idx].tolist()


def test_huge_or_tiny_values_stay_exact():
    """Squares that could overflow fall back to the plain pass; subnormal squares keep an
    absolute margin."""
    rng = np.random.default_rng(1)
    for scale in (1e152, 1e-160):
        z = rng.normal(size=(60, 2)) * scale
        counts = np.ones(60, dtype=np.int64)
        assert mdav(z, counts, 3).tolist() == exact_mdav(z, counts, 3).tolist()
    assert not _Pool(rng.normal(size=(5, 2)) * 1e152, np.ones(5, dtype=np.int64)).screen

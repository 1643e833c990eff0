"""The silhouette computed for the records not alone in their group (the others count 0)
equals scikit-learn's ``silhouette_score`` on the same sample."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import anonsql.algorithms.microaggregation.measures as measures
from anonsql.algorithms.microaggregation.measures import silhouette


@settings(max_examples=60, deadline=None)
@given(
    st.integers(3, 200),
    st.integers(1, 4),
    st.floats(0.05, 1.0),
    st.booleans(),
    st.integers(1, 50),
    st.integers(0, 2**31),
)
def test_silhouette_equals_scikit_learn(n, m, share, grid, chunk, seed):
    """Many singleton groups, a few larger ones; duplicated points (zero distances) on a
    grid; small chunks of rows."""
    from sklearn.metrics import silhouette_score

    rng = np.random.default_rng(seed)
    x = rng.integers(0, 3, size=(n, m)).astype(np.float64) if grid else rng.normal(size=(n, m))
    labels = np.where(rng.random(n) < share, rng.integers(0, 4, size=n), 10 + np.arange(n))
    n_groups = len(np.unique(labels))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(measures, "SILHOUETTE_CHUNK", chunk * n)
        got = silhouette(x, labels)
    if n_groups < 2 or n_groups >= n:
        assert got is None
        return
    assert got is not None
    assert got == pytest.approx(silhouette_score(x, labels), rel=1e-12, abs=1e-15)


def test_silhouette_sample_is_scikit_learns():
    from sklearn.metrics import silhouette_score

    rng = np.random.default_rng(4)
    x = rng.normal(size=(3000, 3))
    labels = rng.integers(0, 600, size=3000)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(measures, "SILHOUETTE_SAMPLE", 500)
        got = silhouette(x, labels, seed=3)
    want = silhouette_score(x, labels, sample_size=500, random_state=3)
    assert got == pytest.approx(want, rel=1e-12)

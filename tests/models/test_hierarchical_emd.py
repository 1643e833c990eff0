"""The hierarchical EMD computed for all classes at once (anonsql.models.t_closeness) against
the level-by-level scatter-adds it replaced (the same bits) and a class-by-class
computation in plain Python, on random hierarchies and classes."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from anonsql.models import HierarchicalEMD
from anonsql.models import t_closeness as tc
from anonsql.models.base import ClassStats
from tests.helpers.emd import hierarchical_emd_plain, hierarchical_emd_scatter
from tests.helpers.strategies import hierarchies


@st.composite
def emd_cases(draw):
    """A random hierarchy (up to 20 leaves, so some parents have 8 children or more), the
    sensitive values (some of its leaves, in a random order) and random classes over them
    (some classes hold no value: their distance is NaN)."""
    h = draw(hierarchies(name="s", max_leaves=20, max_height=5))
    leaves = h.leaf_labels
    labels = draw(st.permutations(leaves))[: draw(st.integers(1, len(leaves)))]
    classes = draw(st.integers(1, 40))
    v = len(labels)
    cells = draw(
        st.lists(
            st.tuples(st.integers(0, classes - 1), st.integers(0, v - 1), st.integers(1, 50)),
            max_size=120,
        )
    )
    counts = np.zeros((classes, v), dtype=np.int64)
    for c, value, n in cells:
        counts[c, value] += n
    pair_class, pair_value = np.nonzero(counts)
    overall = counts.sum(axis=0).astype(np.float64)
    if overall.sum() == 0:
        overall[:] = 1.0
    overall /= overall.sum()
    stats = ClassStats(
        np.maximum(counts.sum(axis=1), 1),
        pair_class.astype(np.int64),
        pair_value.astype(np.int64),
        counts[pair_class, pair_value],
        overall,
        list(labels),
        h,
    )
    return h, stats


@settings(max_examples=150, deadline=None)
@given(emd_cases(), st.sampled_from([None, 1, 7, 64]))
def test_vectorized_hierarchical_emd_matches_the_scatter_adds_and_plain_python(case, cells):
    h, stats = case
    model = HierarchicalEMD(0.2, h)
    chunk = tc._CHUNK_CELLS
    try:
        if cells is not None:  # a few classes per chunk: every chunk boundary exercised
            tc._CHUNK_CELLS = cells * h.size
        got = model.class_values(stats)
    finally:
        tc._CHUNK_CELLS = chunk
    assert np.array_equal(got, hierarchical_emd_scatter(stats, h), equal_nan=True)
    np.testing.assert_allclose(got, hierarchical_emd_plain(stats, h), rtol=0, atol=1e-12)
    # asked again (the hierarchy's layout is kept between nodes): the same values
    assert np.array_equal(model.class_values(stats), got, equal_nan=True)

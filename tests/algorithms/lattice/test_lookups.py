"""The lattice search's lookups against their plain computations on random lattices and
tables: the specializations mask of a node, and the cache's slots holding a node or one of
its specializations (its levels packed into one integer per slot)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonsql.algorithms.lattice.base import NodeEvaluator
from anonsql.algorithms.lattice.lattice import Lattice
from anonsql.data.histogram import Histogram
from anonsql.metrics.quality import quality_model
from anonsql.models import KAnonymity
from anonsql.models.requirements import Requirements
from tests.helpers.strategies import anonymization_cases


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=1, max_size=6), st.data())
def test_below_is_every_node_at_or_under_the_levels(heights, data):
    lat = Lattice(heights)
    node = data.draw(st.integers(0, lat.size - 1))
    plain = (lat.levels <= lat.levels[node]).all(axis=1)
    assert np.array_equal(lat.below(node), plain)
    assert np.array_equal(lat.above(node), (lat.levels >= lat.levels[node]).all(axis=1))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(anonymization_cases(max_qis=3, max_rows=30), st.data())
def test_cached_specializations_found_by_packed_levels(case, data):
    df, hs = case
    qis = [h.name for h in hs]
    hist = Histogram.from_frame(df, qis, hs, "s")
    lat = Lattice([h.height for h in hs])
    ev = NodeEvaluator(hist, lat, Requirements([KAnonymity(2)], 0.0), quality_model("loss"))
    assert ev._packed is not None  # a few small hierarchies: the packed form is used
    nodes = data.draw(st.lists(st.integers(0, lat.size - 1), max_size=12))
    evict = data.draw(st.lists(st.sampled_from(nodes), max_size=4)) if nodes else []
    for node in nodes:
        ev.partition(node)
    for node in set(evict) - {ev.base}:
        if node in ev._parts:
            ev._evict(node)
    for node in range(lat.size):
        levels = lat.levels[node]
        plain = (ev._keys >= 0) & (ev._levels <= levels).all(axis=1)
        assert np.array_equal(ev._finer(levels), plain)

"""Equivalence classes from the histogram and roll-ups: every grouping path (counting pass,
sort, hashing, blocks on threads) gives the classes a pandas groupby finds."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonsql.data import classes as partition_module
from anonsql.data.classes import Partition, _sort_groups
from anonsql.data.histogram import Histogram
from tests.helpers import brute
from tests.helpers.strategies import anonymization_cases


def _classes(part: Partition) -> dict[tuple[str, ...], int]:
    labels = [np.asarray(h.labels, dtype=object) for h in part.hierarchies]
    keys = zip(*[labels[j][part.node_column(j)] for j in range(len(labels))], strict=True)
    return {tuple(k): int(n) for k, n in zip(keys, part.sizes, strict=True)}


def _brute(df, qis, hs, levels) -> dict[tuple[str, ...], int]:
    gen = brute.generalize(df, qis, [h.to_rows() for h in hs], levels)
    return {
        (k if isinstance(k, tuple) else (k,)): int(v) for k, v in brute.k_values(gen, qis).items()
    }


@pytest.fixture(params=["counting", "sorting", "blocks"])
def grouping(request, monkeypatch):
    if request.param == "sorting":  # the path of near-unique partitions of large tables
        monkeypatch.setattr(partition_module, "_COUNTING_SLACK", -(10**18))
    if request.param == "blocks":  # tiny blocks on the thread pool, as for huge tables
        monkeypatch.setattr(partition_module, "_PARALLEL_ROWS", 1)
        monkeypatch.setattr(partition_module, "_CHUNK", 3)
    return request.param


@settings(
    max_examples=40,
    deadline=None,
    # the fixture only patches two constants, the same for every example
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(anonymization_cases(), st.data(), st.booleans())
def test_rollups_match_groupby(grouping, case, data, with_sensitive):
    df, hs = case
    qis = [h.name for h in hs]
    hist = Histogram.from_frame(df, qis, hs, "s" if with_sensitive else None)
    low = [data.draw(st.integers(0, h.top_level)) for h in hs]
    high = [data.draw(st.integers(lv, h.top_level)) for lv, h in zip(low, hs, strict=True)]
    direct = Partition.from_histogram(hist, tuple(low))
    assert _classes(direct) == _brute(df, qis, hs, low)
    rolled = direct.rollup(hist, tuple(high))
    assert _classes(rolled) == _brute(df, qis, hs, high)
    rows = rolled.classes_of_rows(hist) if any(high) else direct.classes_of_rows(hist)
    assert len(rows) == len(hist.counts)
    if with_sensitive:  # sensitive counts per class add up to the class sizes
        sums = np.bincount(rolled.pair_class, rolled.pair_count, minlength=rolled.classes)
        assert sums.tolist() == rolled.sizes.tolist()


def test_sort_groups_numbers_groups_in_key_order():
    keys = np.array([50, 7, 50, 3, 7, 7, 99], dtype=np.int64)
    ids, first = _sort_groups(keys, span=100)
    assert ids.tolist() == [2, 1, 2, 0, 1, 1, 3]
    assert keys[first].tolist() == [3, 7, 50, 99]
    # keys too wide to pack with row numbers fall back to hashing
    wide = keys << 56
    ids, first = _sort_groups(wide, span=1 << 63)
    assert len(first) == 4 and (wide[first][ids] == wide).all()

"""Equivalence classes from the histogram and roll-ups: every grouping path (counting pass,
sort, hashing, blocks on threads) gives the classes a pandas groupby finds."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonsql.data import classes as partition_module
from anonsql.data import histogram as histogram_module
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
    with partition_module.scratch(partition_module.Scratch()):  # as the search rolls up
        again = direct.rollup(hist, tuple(high))
    assert again.codes.tolist() == rolled.codes.tolist()
    assert again.sizes.tolist() == rolled.sizes.tolist()
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


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 40), min_size=1, max_size=200),
    st.lists(st.integers(1, 1000), min_size=200, max_size=200),
    st.sampled_from([41, 1 << 20, 1 << 40]),
)
def test_sums_by_key_match_groupby(keys, weights, span):
    """The grouping without per-row ids (dense sums for a narrow key span, a sort of keys
    with their weights packed in for a wide one) gives pandas' sums per key, in key order."""
    keys = np.asarray(keys, dtype=np.int64) * (span // 41)
    weights = np.asarray(weights[: len(keys)], dtype=np.int64)
    expected = pd.Series(weights).groupby(keys).sum()
    work = partition_module.Scratch()
    for arrays in (None, work, work):  # allocated each time, then reused (twice)
        with partition_module.scratch(arrays):
            got = partition_module._sum_by_key(keys.copy(), span, weights)
        assert got is not None
        assert got[0].tolist() == expected.index.tolist()
        assert got[1].tolist() == expected.tolist()
        assert got[1].dtype == np.int64
    # the reused sums are left zeroed for the next roll-up
    assert not work.zeros(min(span, 4 * len(keys) + 1024)).any()


def test_sums_by_key_leave_what_they_cannot_pack_to_the_ids():
    keys = np.array([3, 1, 3], dtype=np.int64)
    # weights that are not whole counts of at least one row, keys too wide to pack
    assert partition_module._sum_by_key(keys, 4, np.array([1.5, 1.0, 2.0])) is None
    assert partition_module._sum_by_key(keys, 4, np.array([0, 1, 2])) is None
    wide = np.array([1 << 61, 5, 1 << 61], dtype=np.int64)
    assert partition_module._sum_by_key(wide, 1 << 62, np.array([1, 1, 3])) is None


@settings(max_examples=40, deadline=None)
@given(anonymization_cases(max_qis=4, max_rows=80), st.sampled_from([4, 16, 1 << 20]))
def test_joint_marginals_match_direct_counts(case, cells):
    """One- and two-QI marginals read off joint marginals of groups of QIs equal a direct
    count per leaf (pair), whatever the groups (small limits leave pairs alone)."""
    df, hs = case
    qis = [h.name for h in hs]
    hist = Histogram.from_frame(df, qis, hs)
    with mock.patch.object(histogram_module, "JOINT_CELLS", cells):
        for j, h in enumerate(hs):
            ref = np.bincount(hist.codes[:, j], hist.weights, minlength=h.size)
            assert hist.marginal(j).tolist() == ref.tolist()
        for a in range(len(hs)):
            for b in range(len(hs)):
                if a == b:
                    continue
                size_b = hs[b].size
                key = hist.codes[:, a].astype(np.int64) * size_b + hist.codes[:, b]
                ref = np.bincount(key, hist.weights, minlength=hs[a].size * size_b)
                assert hist.pair_marginal(a, b).tolist() == ref.tolist()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(anonymization_cases(max_qis=3, max_rows=60), st.data(), st.booleans())
def test_histogram_of_leaf_ids_matches_the_table(case, data, with_sensitive):
    """DuckDB's histogram (each row's values mapped to leaf ids, then the integers grouped)
    holds the table's combinations and counts; rows with a value a hierarchy lacks (or NULL)
    are left out, counted, and their sensitive values kept, with ``missing="suppress"``."""
    from anonsql.database import Database

    df, hs = case
    df = df.copy()
    qis = [h.name for h in hs]
    for q in qis:
        bad = data.draw(st.lists(st.integers(0, len(df) - 1), max_size=3))
        df[q] = df[q].astype(object)
        for i, r in enumerate(bad):
            df.loc[df.index[r], q] = None if i % 2 else "not-a-leaf"
    db = Database.open(":memory:")
    for h in hs:
        db.hierarchies.save(h)
    db.backend.write_frame("t", df)
    sensitive = "s" if with_sensitive else None
    got = Histogram.from_database(db, "t", qis, qis, sensitive, missing="suppress")
    ok = np.ones(len(df), dtype=bool)
    for q, h in zip(qis, hs, strict=True):
        ok &= df[q].isin(h.leaf_labels).to_numpy()
    assert got.missing_rows == int((~ok).sum())
    if ok.any():
        expected = Histogram.from_frame(df[ok], qis, hs, sensitive)

        def rows(hist):
            labels = hist.sens_labels
            sens = (
                [labels[i] for i in hist.sens]
                if hist.sens is not None
                else [None] * len(hist.counts)
            )
            return sorted(
                zip(map(tuple, hist.codes.tolist()), sens, hist.counts.tolist(), strict=True)
            )

        assert rows(got) == rows(expected)
    else:
        assert got.rows == 0
    if with_sensitive and (~ok).any():
        lost = df.loc[~ok, "s"].value_counts()
        kept = dict(zip(got.sens_labels, got.missing_sens.tolist(), strict=True))
        assert {k: v for k, v in kept.items() if v} == lost.to_dict()

"""Keyed partitions (anonsql.data.keyed), the heuristic search's roll-ups: the same classes,
sizes and sensitive counts as the plain roll-up, whatever path groups them (the hash of the
keys with its exact grouping of shared buckets, the counting pass, ``np.unique`` on few
classes), and the same quality scores."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import anonsql.data.keyed as keyed
from anonsql.data.classes import Partition
from anonsql.data.histogram import Histogram
from anonsql.data.keyed import KeyedPartition, Radix, group_keys
from anonsql.metrics.quality import quality_model
from tests.helpers.search import wide_table
from tests.helpers.strategies import anonymization_cases


def histogram(df: pd.DataFrame, hs: list, sensitive: str | None = None) -> Histogram:
    return Histogram.from_frame(df, [h.name for h in hs], hs, sensitive)


def canonical(part: Partition) -> tuple[list, dict]:
    """The classes as {codes: size} and {(codes, sensitive value): count}, order-free."""
    codes = list(map(tuple, np.asarray(part.codes).tolist()))  # Python ints
    sizes = dict(zip(codes, part.sizes.tolist(), strict=True))
    assert len(sizes) == part.classes  # no class twice
    pairs = {}
    if part.pair_class is not None:
        for c, v, n in zip(part.pair_class, part.pair_value, part.pair_count, strict=True):
            pairs[(codes[int(c)], int(v))] = int(n)
    return sorted(sizes.items()), pairs


def assert_same(a: Partition, b: Partition) -> None:
    assert a.levels == b.levels and a.classes == b.classes
    assert canonical(a) == canonical(b)


@st.composite
def chains(draw, heights: list[int], steps: int = 4) -> list[tuple[int, ...]]:
    """Levels rising from the bottom, one or several QIs at a time."""
    levels = [0] * len(heights)
    out = []
    for _ in range(steps):
        for j in draw(st.sets(st.integers(0, len(heights) - 1), min_size=1)):
            levels[j] = draw(st.integers(levels[j], heights[j] - 1))
        out.append(tuple(levels))
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(anonymization_cases(max_qis=4, max_rows=60), st.booleans(), st.booleans(), st.data())
def test_rollups_equal_the_plain_rollup(case, sensitive, force_hash, data):
    df, hs = case
    hist = Histogram.from_frame(df, [h.name for h in hs], hs, "s" if sensitive else None)
    radix = Radix.of(hist)
    assert radix is not None
    plain = Partition.from_histogram(hist, (0,) * len(hs))
    part = KeyedPartition.wrap(plain, radix)
    # 0: the hash of the keys for every table, not only those above 2,048 classes
    with mock.patch.object(keyed, "_SMALL", 0 if force_hash else keyed._SMALL):
        for levels in data.draw(chains(hist.heights)):
            part = part.rollup(hist, levels)
            assert isinstance(part, KeyedPartition)
            assert_same(part, Partition.from_histogram(hist, levels))
            assert (radix.keys(part) == part.keys).all()


@pytest.mark.parametrize("rows", [3000, 20000])
def test_large_tables_every_path(rows):
    """12 QIs of 8 leaves: near-unique bottoms, one QI at a time (the hash of the keys), many
    at once, and up to the few classes of the counting pass; with a sensitive attribute."""
    df, hs = wide_table(12, rows, seed=7)
    hist = histogram(df, hs, "s")
    radix = Radix.of(hist)
    rng = np.random.default_rng(rows)
    for _ in range(6 if rows < 10_000 else 3):  # 24 nodes of the large table suffice
        part = KeyedPartition.wrap(Partition.from_histogram(hist, (0,) * 12), radix)
        levels = [0] * 12
        for _ in range(8):
            for j in rng.choice(12, size=int(rng.integers(1, 4)), replace=False):
                levels[j] = min(3, levels[j] + int(rng.integers(1, 3)))
            part = part.rollup(hist, tuple(levels))
            want = Partition.from_histogram(hist, tuple(levels))
            assert_same(part, want)
            # the small classes' flags in each partition's own order (once per node: they
            # do not depend on the metric)
            small = want.sizes < 5
            by_codes = dict(canonical(want)[0])
            flags = np.array([by_codes[r] < 5 for r in map(tuple, part.codes.tolist())])
            for metric in ("loss", "entropy-nm", "dm"):
                q = quality_model(metric)
                q.prepare(hist)
                assert q.score(part, flags) == q.score(want, small)


def test_group_keys():
    keys = np.array([5, 3, 5, 9, 3, 5], dtype=np.int64)
    ids, first = group_keys(keys)
    assert ids.tolist() == [0, 1, 0, 2, 1, 0] and first.tolist() == [0, 1, 3]
    distinct = np.arange(5000, dtype=np.int64) * 7919
    ids, first = group_keys(distinct)
    assert first is None and ids.tolist() == list(range(5000))
    rng = np.random.default_rng(0)
    keys = rng.integers(0, 3000, 10000) * (1 << 40)  # hashes of keys differing in high bits
    ids, first = group_keys(keys)
    _, want_first, inv = np.unique(keys, return_index=True, return_inverse=True)
    order = np.argsort(want_first)  # numbered by first occurrence
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    assert (first == want_first[order]).all() and (ids == rank[inv]).all()


def test_radix_beyond_64_bits():
    df, hs = wide_table(40, 50, seed=1)
    assert Radix.of(histogram(df, hs)) is None  # 8^40 keys


def test_units_roll_up_the_plain_way():
    """With privacy units (records of a unit in several classes) the roll-up carries each
    record's class: the plain roll-up's, unkeyed."""
    df, hs = wide_table(3, 200, seed=2)
    base = Histogram.from_frame(df, [h.name for h in hs], hs)
    units = np.arange(len(base.counts)) % 40
    hist = Histogram(base.qis, base.hierarchies, base.codes, np.ones_like(base.counts))
    hist.unit_ids, hist.units = units, 40
    plain = Partition.from_histogram(hist, (0, 0, 0))
    part = KeyedPartition.wrap(plain, Radix.of(hist)).rollup(hist, (1, 2, 0))
    want = plain.rollup(hist, (1, 2, 0))
    assert not isinstance(part, KeyedPartition)
    assert_same(part, want)
    assert (part.row_class == want.row_class).all()


def test_codes_are_decoded_when_read():
    df, hs = wide_table(6, 500, seed=3)
    hist = histogram(df, hs)
    radix = Radix.of(hist)
    part = KeyedPartition.wrap(Partition.from_histogram(hist, (0,) * 6), radix)
    up = part.rollup(hist, (1, 0, 0, 0, 0, 2))
    assert not up.decoded
    assert (up.code_column(5, np.array([0, 2])) == up.codes[[0, 2], 5]).all()
    assert up.decoded
    frame = pd.DataFrame(up.nodes)
    assert len(frame.drop_duplicates()) == up.classes


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    anonymization_cases(max_qis=3, max_rows=60),
    st.sampled_from([0.0, 0.1, 0.5, 0.8, 1.0]),
    st.data(),
)
def test_loss_sums_the_suppressed_records_of_either_side(case, gs, data):
    """Loss sums the suppressed records' leaves over the suppressed classes or, when they are
    the larger set, as the total less the released classes': the same score as summing each
    record's share (ARX's definition, record by record)."""
    df, hs = case
    hist = Histogram.from_frame(df, [h.name for h in hs], hs)
    levels = tuple(data.draw(st.integers(0, h.height - 1)) for h in hs)
    part = Partition.from_histogram(hist, levels)
    flags = np.array(
        data.draw(st.lists(st.booleans(), min_size=part.classes, max_size=part.classes))
    )
    q = quality_model("loss", gs)
    q.prepare(hist)
    raw = np.zeros(len(hs))
    row_class = part.classes_of_rows(hist)
    for j, h in enumerate(hs):
        nodes = h.ancestor_column(levels[j])[hist.codes[:, j]]
        share = h.leaf_counts[nodes] / len(h.leaf_ids)
        gone = flags[row_class]
        lost = np.ones_like(share) if q.s_factor == 1 else share + q.s_factor * (1 - share)
        raw[j] = (hist.counts * np.where(gone, lost, q.g_factor * share)).sum()
    want = float(q._aggregate(q._normalize(raw[None, :]))[0])
    assert q.score(part, flags) == pytest.approx(want, abs=2e-10)

"""GAA's full pass over the classes (gaa._Scan: sums of the leading QIs per combination of
nodes, preorder numbers kept for large hierarchies) gives the plain per-QI sum's numbers bit
for bit, and so the same merges: on random tables and random class states larger than the
brute force can take, with the pass's own choices forced both ways (tables of the leading
QIs or none, hierarchies with or without pairwise tables)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import anonsql.algorithms.greedy.gaa as gaa_module
from anonsql.algorithms.greedy.gaa import _QI, GreedyModel, _Scan, gaa
from anonsql.data.histogram import Histogram
from anonsql.hierarchy.hierarchy import Hierarchy
from anonsql.metrics.unified import METRICS, UnifiedMetric


def _hierarchy(name: str, leaves: int, fanouts: list[int]) -> Hierarchy:
    """A hierarchy over ``leaves`` values grouped ``fanouts[i]`` at a time on level i + 1,
    under a root; leaves per group vary (a ragged tree) through a seeded shuffle."""
    rows = [[f"{name}{i}"] for i in range(leaves)]
    keys = list(range(leaves))
    for lv, f in enumerate(fanouts, start=1):
        keys = [k // f for k in keys]
        for r, k in zip(rows, keys, strict=True):
            r.append(f"{name}L{lv}_{k}")
    for r in rows:
        r.append("*")
    return Hierarchy.from_rows(name, rows)


SHAPES = [(2, []), (40, [5, 2]), (7, [3]), (25, [4, 3]), (11, [2])]
#: a hierarchy of 300 leaves (429 nodes): with DENSE_NODES = 64 it has no pairwise tables
BIG = (300, [3, 4])


def _table(seed: int, rows: int, big: bool = False, big_first: bool = False):
    rng = np.random.default_rng(seed)
    shapes = list(SHAPES)
    if big:
        shapes.insert(0 if big_first else len(shapes), BIG)
    hs = [_hierarchy(f"q{j}", n, f) for j, (n, f) in enumerate(shapes)]
    # skewed draws, so that classes crowd in places and stand alone in others
    frame = pd.DataFrame(
        {
            h.name: [f"{h.name}{v}" for v in np.minimum(rng.zipf(1.3, rows) - 1, n - 1)]
            for h, (n, _) in zip(hs, shapes, strict=True)
        }
    )
    frame["s"] = rng.integers(0, 6, rows).astype(str)
    return Histogram.from_frame(frame, [h.name for h in hs], hs, "s")


def _run(hist, k, metric, strategy, **settings):
    """GAA with module settings set for this run only."""
    mp = pytest.MonkeyPatch()
    try:
        for name, value in settings.items():
            mp.setattr(gaa_module, name, value)
        return gaa(hist, GreedyModel(k), metric, strategy)
    finally:
        mp.undo()


def _same(a, b) -> None:
    assert a.merges == b.merges
    assert np.array_equal(a.nodes, b.nodes)
    assert np.array_equal(a.sizes, b.sizes)
    assert np.array_equal(a.row_class, b.row_class)
    assert np.array_equal(a.sens_counts, b.sens_counts)


@pytest.mark.parametrize(
    ("seed", "rows", "k", "metric", "strategy"),
    [
        (0, 400, 2, "nllm", "s1"),
        (1, 900, 5, "ncp", "s1"),
        (2, 700, 3, "total", "s2"),
        (3, 600, 10, "nllm", "s5"),
        (4, 1500, 4, "distortion", "s1"),
        (5, 300, 7, "wllm", "s4"),
        (6, 500, 3, "wnllm", "s7"),
    ],
)
def test_scan_makes_the_same_merges(seed, rows, k, metric, strategy):
    hist = _table(seed, rows)
    want = _run(hist, k, metric, strategy, SCAN=False)
    _same(_run(hist, k, metric, strategy), want)
    # the leading QIs' table however small the classes (and none at all)
    _same(_run(hist, k, metric, strategy, PREFIX_SHARE=1e9), want)
    _same(_run(hist, k, metric, strategy, PREFIX_SHARE=0.0), want)


@pytest.mark.parametrize(("strategy", "big_first"), [("s1", False), ("s5", False), ("s1", True)])
def test_scan_with_a_large_hierarchy(strategy, big_first):
    """A hierarchy above DENSE_NODES has no pairwise tables: the pass keeps each class's
    preorder number and W for it (first in QI order: no table of leading QIs)."""
    hist = _table(7, 1200, big=True, big_first=big_first)
    want = _run(hist, 4, "nllm", strategy, SCAN=False)
    _same(_run(hist, 4, "nllm", strategy, DENSE_NODES=64), want)
    _same(_run(hist, 4, "nllm", strategy, DENSE_NODES=64, SCAN=False), want)
    _same(_run(hist, 4, "nllm", strategy, DENSE_NODES=64, PREFIX_SHARE=1e9), want)


def _plain(qis, cols, s, count):
    """The per-QI sum in QI order (gaa's cost function without _Scan)."""
    out = None
    for j, qi in enumerate(qis):
        c = qi.cost(int(cols[j, s]), cols[j, :count])
        out = np.array(c, dtype=np.float64) if out is None else out + c
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(0, 2**32 - 1),
    st.sampled_from(METRICS),
    st.integers(20, 400),
    st.booleans(),
    st.sampled_from([0.0, 0.5, 1e9]),
)
def test_scan_costs_are_the_plain_sums(seed, metric, classes, dense, share):
    """Random classes at any levels (not only those GAA reaches), slots updated and moved
    as GAA does, and fewer classes (a new plan): every pass equals the plain sum."""
    rng = np.random.default_rng(seed)
    shapes = [SHAPES[i] for i in rng.permutation(len(SHAPES))[: rng.integers(1, 5)]]
    shapes.insert(int(rng.integers(0, len(shapes) + 1)), BIG)
    hs = [_hierarchy(f"q{j}", n, f) for j, (n, f) in enumerate(shapes)]
    um = UnifiedMetric(metric, hs)
    mp = pytest.MonkeyPatch()
    try:
        mp.setattr(gaa_module, "DENSE_NODES", 4096 if dense else 64)
        mp.setattr(gaa_module, "PREFIX_SHARE", share)
        qis = [_QI(h, w) for h, w in zip(hs, um.to_root, strict=True)]
        cols = np.ascontiguousarray(
            np.stack([rng.integers(0, h.size, classes) for h in hs]).astype(np.intp)
        )
        scan = _Scan(qis, cols, classes)
        count = classes
        for _ in range(12):
            s = int(rng.integers(0, count))
            assert np.array_equal(scan.costs(s, count), _plain(qis, cols, s, count))
            # a merge: slot s takes new nodes, the last slot moves into a freed one
            new = [int(rng.integers(0, h.size)) for h in hs]
            cols[:, s] = new
            scan.set(s, new)
            if count > 2:
                gone = int(rng.integers(0, count - 1))
                cols[:, gone] = cols[:, count - 1]
                scan.move(gone, count - 1)
                count -= 1
            if rng.random() < 0.2:
                count = max(2, count // 3)
    finally:
        mp.undo()

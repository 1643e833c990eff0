"""GAA's index of the cheapest partners (gaa._NearIndex) changes nothing: on random tables
larger than the brute force can take, the same merges in the same order as costing every
class per merge (the reference, NEAR_INDEX = False), with the index's own limits forced
both ways (always searched, tiny bit-set budget, large hierarchies without dense tables)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import anonsql.algorithms.greedy.gaa as gaa_module
from anonsql.algorithms.greedy.gaa import GreedyModel, gaa
from anonsql.data.histogram import Histogram
from anonsql.hierarchy.hierarchy import Hierarchy


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


def _table(seed: int, rows: int, big: bool = False):
    rng = np.random.default_rng(seed)
    shapes = [(2, []), (40, [5, 2]), (7, [3]), (25, [4, 3]), (11, [2])]
    if big:
        shapes.append((300, [3, 4]))
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
    """GAA with module settings (and the index's BUDGET) set for this run only."""
    mp = pytest.MonkeyPatch()
    try:
        for name, value in settings.items():
            target = gaa_module._NearIndex if name == "BUDGET" else gaa_module
            mp.setattr(target, name, value)
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
        (5, 300, 7, "wllm", "s2"),
    ],
)
def test_index_makes_the_same_merges(seed, rows, k, metric, strategy):
    hist = _table(seed, rows)
    want = _run(hist, k, metric, strategy, NEAR_INDEX=False)
    _same(_run(hist, k, metric, strategy), want)
    # the index searched on every merge (no full scan for large boxes)
    _same(_run(hist, k, metric, strategy, NEAR_SHARE=2.0), want)
    # bit sets for the upper levels only: boxes of covering ancestors
    _same(_run(hist, k, metric, strategy, NEAR_SHARE=2.0, BUDGET=1), want)
    # small limits: boxes cut along their loosest QI, and full scans in between
    _same(_run(hist, k, metric, strategy, NEAR_SHARE=0.02), want)


@pytest.mark.parametrize("strategy", ["s1", "s5"])
def test_index_with_large_hierarchies(strategy):
    """A hierarchy above DENSE_NODES has no pairwise tables: its costs come from LCAs."""
    hist = _table(7, 1200, big=True)
    want = _run(hist, 4, "nllm", strategy, NEAR_INDEX=False)
    _same(_run(hist, 4, "nllm", strategy, DENSE_NODES=64), want)
    _same(_run(hist, 4, "nllm", strategy, DENSE_NODES=64, NEAR_SHARE=2.0), want)
    _same(_run(hist, 4, "nllm", strategy, DENSE_NODES=64, NEAR_SHARE=0.02), want)
    _same(_run(hist, 4, "nllm", strategy, DENSE_NODES=64, NEAR_INDEX=False), want)

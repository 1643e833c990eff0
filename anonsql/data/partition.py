"""Equivalence classes of a full-domain transformation, computed from the histogram.

A :class:`Partition` knows, for each class, its size, its generalized QI nodes and its
sensitive-value counts (as sparse ``(class, value, count)`` triples). A coarser transformation
is obtained by *rolling up* any finer partition: its classes are generalized further and
merged, so the work is proportional to the number of classes, not rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from anonsql.data.histogram import Histogram


def group_rows(keys: np.ndarray, widths: list[int] | None = None) -> tuple[np.ndarray, int]:
    """Dense group ids for the rows of an integer matrix.
    ``widths[j]`` bounds column j's values (e.g. a hierarchy's node count)."""
    n = len(keys)
    if keys.shape[1] == 0:
        return np.zeros(n, dtype=np.int64), 1 if n else 0
    if widths is None:
        widths = [int(keys[:, j].max()) + 1 if n else 1 for j in range(keys.shape[1])]
    combined = keys[:, 0].astype(np.int64, copy=True)
    span = widths[0]
    for j in range(1, keys.shape[1]):
        width = widths[j]
        if span * width >= 2**62:  # re-densify before the mixed-radix key overflows
            combined, uniq = pd.factorize(combined)
            span = len(uniq)
        combined *= width
        combined += keys[:, j]
        span *= width
    if span <= max(8 * n, 1 << 16):
        # small key space: a counting pass is much faster than hashing
        seen = np.zeros(span, dtype=np.int64)
        seen[combined] = 1
        rank = np.cumsum(seen) - 1
        return rank[combined], int(rank[-1]) + 1
    ids, uniq = pd.factorize(combined)
    return ids.astype(np.int64), len(uniq)


@dataclass
class Partition:
    levels: tuple[int, ...]
    nodes: np.ndarray  # (classes, m): generalized node id per QI
    sizes: np.ndarray  # (classes,)
    pair_class: np.ndarray | None  # sparse sensitive counts: class, value, count
    pair_value: np.ndarray | None
    pair_count: np.ndarray | None
    #: for the bottom partition built from a histogram: class id of each histogram row
    row_class: np.ndarray | None = None

    @property
    def classes(self) -> int:
        return len(self.sizes)

    @classmethod
    def from_histogram(cls, hist: Histogram, levels: tuple[int, ...]) -> Partition:
        gen = np.empty_like(hist.codes)
        for j, h in enumerate(hist.hierarchies):
            gen[:, j] = h.ancestors[hist.codes[:, j], levels[j]]
        return cls._group(tuple(levels), gen, hist.counts, hist.sens, keep_rows=True)

    @classmethod
    def _group(cls, levels, gen, counts, sens, keep_rows=False, weights_pairs=None):
        ids, n = group_rows(gen)
        sizes = np.bincount(ids, counts, minlength=n).astype(np.int64)
        first = np.zeros(n, dtype=np.int64)
        first[ids[::-1]] = np.arange(len(ids) - 1, -1, -1)
        nodes = gen[first]
        pc = pv = pn = None
        if sens is not None:
            pc, pv, pn = _pairs(ids, sens, counts)
        return cls(levels, nodes, sizes, pc, pv, pn, ids if keep_rows else None)

    def rollup(self, hist: Histogram, levels: tuple[int, ...]) -> Partition:
        """The partition of a coarser transformation (``levels`` >= ``self.levels``)."""
        gen = np.empty_like(self.nodes)
        for j, h in enumerate(hist.hierarchies):
            if levels[j] == self.levels[j]:
                gen[:, j] = self.nodes[:, j]
            else:
                gen[:, j] = h.ancestor_column(levels[j])[self.nodes[:, j]]
        ids, n = group_rows(gen, [h.size for h in hist.hierarchies])
        sizes = np.bincount(ids, self.sizes, minlength=n).astype(np.int64)
        first = np.empty(n, dtype=np.int64)
        first[ids[::-1]] = np.arange(len(ids) - 1, -1, -1)
        pc = pv = pn = None
        if self.pair_class is not None:
            pc, pv, pn = _pairs(ids[self.pair_class], self.pair_value, self.pair_count)
        return Partition(tuple(levels), gen[first], sizes, pc, pv, pn)


def _pairs(class_ids: np.ndarray, values: np.ndarray, counts: np.ndarray):
    width = int(values.max()) + 1 if len(values) else 1
    key = class_ids.astype(np.int64) * width + values
    uniq, inv = np.unique(key, return_inverse=True)
    sums = np.bincount(inv, counts).astype(np.int64)
    return uniq // width, uniq % width, sums

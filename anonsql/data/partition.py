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
    """Classes of one transformation. ``codes[:, j]`` is each class's value of QI j as its rank
    among the nodes of level ``levels[j]`` (dense codes keep keys small and grouping cheap);
    :attr:`nodes` gives node ids."""

    levels: tuple[int, ...]
    codes: np.ndarray  # (classes, m), column-major
    sizes: np.ndarray  # (classes,)
    pair_class: np.ndarray | None  # sparse sensitive counts: class, value, count
    pair_value: np.ndarray | None
    pair_count: np.ndarray | None
    hierarchies: list = None  # type: ignore[assignment]
    #: for the bottom partition built from a histogram: class id of each histogram row
    row_class: np.ndarray | None = None

    @property
    def classes(self) -> int:
        return len(self.sizes)

    @property
    def nodes(self) -> np.ndarray:
        """(classes, m) node ids (computed on demand)."""
        cached = self.__dict__.get("_nodes")
        if cached is None:
            cached = np.empty(self.codes.shape, dtype=np.int64, order="F")
            for j, h in enumerate(self.hierarchies):
                cached[:, j] = h.level_nodes[self.levels[j]][self.codes[:, j]]
            self.__dict__["_nodes"] = cached
        return cached

    def node_column(self, j: int, mask: np.ndarray | None = None) -> np.ndarray:
        """Node ids of QI j for every class (or the classes selected by ``mask``)."""
        codes = self.codes[:, j] if mask is None else self.codes[:, j][mask]
        return self.hierarchies[j].level_nodes[self.levels[j]][codes]

    @classmethod
    def from_histogram(cls, hist: Histogram, levels: tuple[int, ...]) -> Partition:
        ranks = np.empty(hist.codes.shape, dtype=np.int32, order="F")
        for j, h in enumerate(hist.hierarchies):
            ranks[:, j] = h.level_rank[h.ancestor_column(levels[j])[hist.codes[:, j]]]
        return _group(tuple(levels), ranks, hist.counts, hist.hierarchies,
                      (hist.sens, None, None), keep_rows=True)  # fmt: skip

    def rollup(self, hist: Histogram, levels: tuple[int, ...]) -> Partition:
        """The partition of a coarser transformation (``levels`` >= ``self.levels``)."""
        ranks = np.empty(self.codes.shape, dtype=np.int32, order="F")
        for j, h in enumerate(hist.hierarchies):
            if levels[j] == self.levels[j]:
                ranks[:, j] = self.codes[:, j]
            else:
                ranks[:, j] = h.rank_column(self.levels[j], levels[j])[self.codes[:, j]]
        pairs = (self.pair_value, self.pair_count, self.pair_class)
        return _group(tuple(levels), ranks, self.sizes, hist.hierarchies, pairs)


def _group(levels, ranks, weights, hierarchies, pairs, keep_rows=False) -> Partition:
    """Group rows of dense per-level codes into classes."""
    widths = [len(h.level_nodes[lv]) for h, lv in zip(hierarchies, levels, strict=True)]
    n = len(ranks)
    span = 1
    for w in widths:
        span *= w
    if span < 2**62:
        combined = np.zeros(n, dtype=np.int64)
        for j, w in enumerate(widths):
            combined *= w
            combined += ranks[:, j]
        if span <= 4 * n + 1024:
            # small key space: a counting pass instead of hashing
            seen = np.zeros(span, dtype=np.int8)
            seen[combined] = 1
            keys = np.flatnonzero(seen)
            position = np.cumsum(seen, dtype=np.int64)
            position -= 1
            ids = position[combined]
        else:
            ids, keys = pd.factorize(combined)
            ids = ids.astype(np.int64)
        count = len(keys)
        codes = np.empty((count, len(widths)), dtype=np.int32, order="F")
        rest = np.asarray(keys, dtype=np.int64)
        for j in range(len(widths) - 1, -1, -1):
            codes[:, j] = rest % widths[j]
            rest = rest // widths[j]
    else:  # too many combinations for one integer key: group by hashing rows
        ids, count = group_rows(ranks, widths)
        first = np.empty(count, dtype=np.int64)
        first[ids[::-1]] = np.arange(n - 1, -1, -1)
        codes = _take_rows(ranks, first)
    sizes = np.bincount(ids, weights, minlength=count).astype(np.int64)
    pc = pv = pn = None
    values, counts, classes = pairs
    if values is not None:
        if classes is None:  # from the histogram: one pair per row
            pc, pv, pn = _pairs(ids, values, weights)
        else:
            pc, pv, pn = _pairs(ids[classes], values, counts)
    return Partition(levels, codes, sizes, pc, pv, pn, list(hierarchies),
                     ids if keep_rows else None)  # fmt: skip


def _take_rows(matrix: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``matrix[rows]`` as a column-major array, gathered column by column."""
    out = np.empty((len(rows), matrix.shape[1]), dtype=matrix.dtype, order="F")
    for j in range(matrix.shape[1]):
        out[:, j] = matrix[:, j][rows]
    return out


def _pairs(class_ids: np.ndarray, values: np.ndarray, counts: np.ndarray):
    width = int(values.max()) + 1 if len(values) else 1
    key = class_ids.astype(np.int64) * width + values
    uniq, inv = np.unique(key, return_inverse=True)
    sums = np.bincount(inv, counts).astype(np.int64)
    return uniq // width, uniq % width, sums

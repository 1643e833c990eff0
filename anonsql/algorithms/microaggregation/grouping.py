"""A microaggregation's answer for every distinct QI tuple: its node ids (the group, or per
attribute the attribute's group) and its released values (the prototype)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from anonsql.data.tuples import WeightedTuples


@dataclass
class Grouping:
    """``nodes[i, j]``: tuple i's node id for attribute j; ``released[i, j]``: its released
    value. Joint methods give every attribute the same node id (the group), so the guard's
    classes (node-id tuples) are the groups; attribute-oriented KDE gives each attribute its
    own groups, and its classes are their combinations."""

    nodes: np.ndarray
    released: np.ndarray
    info: dict[str, Any] = field(default_factory=dict)
    #: :meth:`classes`, computed once (``nodes`` is not changed after construction)
    _classes: np.ndarray | None = field(default=None, init=False, repr=False, compare=False)

    @classmethod
    def joint(
        cls, groups: np.ndarray, prototypes: np.ndarray, info: dict | None = None
    ) -> Grouping:
        groups = np.asarray(groups, dtype=np.int64)
        m = prototypes.shape[1]
        return cls(np.repeat(groups[:, None], m, axis=1), prototypes[groups], info or {})

    def classes(self) -> np.ndarray:
        """Each tuple's class: its row of node ids, numbered 0.. in sorted (lexicographic)
        order. Computed once: the rows are ranked per attribute and combined into one integer
        key in mixed radix (attribute 0 most significant, so the key's order is the rows'
        order), which is far faster than ``np.unique(nodes, axis=0)`` at 1 M tuples."""
        if self._classes is not None:
            return self._classes
        nodes = self.nodes
        if len(nodes) == 0:
            inverse = np.zeros(0, dtype=np.int64)
        elif (nodes == nodes[:, :1]).all():  # joint groups: every attribute has the group id
            inverse = np.unique(nodes[:, 0], return_inverse=True)[1].reshape(-1)
        else:
            key = np.zeros(len(nodes), dtype=np.int64)
            radix = 1
            overflow = False
            for j in range(nodes.shape[1]):
                _, rank = np.unique(nodes[:, j], return_inverse=True)
                width = int(rank.max()) + 1
                radix *= width
                if radix >= 2**62:  # the key would overflow: rows compared directly
                    overflow = True
                    break
                key = key * width + rank.reshape(-1)
            if overflow:
                inverse = np.unique(nodes, axis=0, return_inverse=True)[1].reshape(-1)
            else:
                inverse = np.unique(key, return_inverse=True)[1].reshape(-1)
        self._classes = inverse
        return inverse

    def class_sizes(self, counts: np.ndarray) -> np.ndarray:
        cls = self.classes()
        return np.bincount(cls, weights=counts, minlength=cls.max() + 1).astype(np.int64)


def renumber(groups: np.ndarray) -> tuple[np.ndarray, int]:
    """Groups numbered 0..G-1 (sorted by old id)."""
    _, inverse = np.unique(groups, return_inverse=True)
    inverse = inverse.reshape(-1)
    return inverse, int(inverse.max()) + 1 if len(inverse) else 0


def group_means(data: WeightedTuples, groups: np.ndarray) -> np.ndarray:
    """Record-weighted mean of each group's original tuples: microaggregation's released value
    ("the average of the values of the group over which the record belongs is published",
    seed 001 §2)."""
    g, n = renumber(groups)
    sums = np.zeros((n, data.width))
    np.add.at(sums, g, data.values * data.counts[:, None])
    sizes = np.bincount(g, weights=data.counts, minlength=n)
    return sums / sizes[:, None]


def move_small_groups(
    points: np.ndarray,
    counts: np.ndarray,
    groups: np.ndarray,
    centers: np.ndarray,
    k: int,
    metric: np.ndarray | None = None,
) -> np.ndarray:
    """C-TCA's constraint (seed 001 §3.1): the records of a unit holding fewer than ``k`` are
    redistributed to the closest units. Units are visited smallest first (ties: lower id);
    each distinct tuple of the unit moves, with all its records, to the nearest other
    non-empty unit (distance to the unit's center, weighted per attribute by ``metric``).
    Every move empties a unit, so this ends, with every non-empty unit holding >= k records
    (given at least k records in all)."""
    groups = np.asarray(groups, dtype=np.int64).copy()
    w2 = np.ones(points.shape[1]) if metric is None else np.asarray(metric) ** 2
    n_units = len(centers)
    while True:
        sizes = np.bincount(groups, weights=counts, minlength=n_units)
        small = np.flatnonzero((sizes > 0) & (sizes < k))
        if len(small) == 0 or np.count_nonzero(sizes) <= 1:
            return groups
        unit = small[np.lexsort((small, sizes[small]))[0]]
        targets = np.flatnonzero((sizes > 0) & (np.arange(n_units) != unit))
        members = np.flatnonzero(groups == unit)
        d = (((points[members, None, :] - centers[None, targets, :]) ** 2) * w2).sum(axis=2)
        groups[members] = targets[d.argmin(axis=1)]


__all__ = ["Grouping", "group_means", "move_small_groups", "renumber"]

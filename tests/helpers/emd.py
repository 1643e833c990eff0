"""Reference computations of the hierarchical EMD for the tests of the vectorized one."""

from __future__ import annotations

import numpy as np

from anonsql.hierarchy.hierarchy import Hierarchy
from anonsql.models.base import ClassStats


def hierarchical_emd_scatter(stats: ClassStats, h: Hierarchy) -> np.ndarray:
    """Li et al.'s hierarchical EMD of every class, level by level with scatter-adds of the
    children into their parents over a (classes x nodes) array: the computation the
    vectorized one replaced, whose sums it must reproduce to the last bit."""
    assert stats.pair_class is not None and stats.pair_value is not None
    assert stats.pair_count is not None and stats.vals is not None
    assert stats.overall is not None and stats.labels is not None
    leaf_of_value = np.array([h.leaf(v) for v in stats.labels])
    d = np.zeros((stats.classes, len(stats.overall)))
    cls = stats.pair_class
    d[cls, stats.pair_value] = stats.pair_count / stats.vals[cls]
    d -= stats.overall[None, :]
    extra = np.zeros((stats.classes, h.size))
    extra[:, leaf_of_value] = d
    top = h.top_level
    cost = np.zeros(stats.classes)
    for level in range(1, top + 1):
        children = np.flatnonzero(h.levels == level - 1)
        parents = h.parents[children]
        child_extra = extra[:, children]
        pos = np.zeros((stats.classes, h.size))
        neg = np.zeros((stats.classes, h.size))
        np.add.at(pos.T, parents, np.maximum(child_extra, 0).T)
        np.add.at(neg.T, parents, np.maximum(-child_extra, 0).T)
        np.add.at(extra.T, parents, child_extra.T)
        nodes = np.flatnonzero(h.levels == level)
        cost += level / top * np.minimum(pos[:, nodes], neg[:, nodes]).sum(axis=1)
    return np.where(stats.vals > 0, cost, np.nan)


def hierarchical_emd_plain(stats: ClassStats, h: Hierarchy) -> np.ndarray:
    """The same distances class by class in plain Python (dictionaries over the tree)."""
    assert stats.pair_class is not None and stats.pair_value is not None
    assert stats.pair_count is not None and stats.vals is not None
    assert stats.overall is not None and stats.labels is not None
    top = h.top_level
    out = np.full(stats.classes, np.nan)
    for c in range(stats.classes):
        if not stats.vals[c]:
            continue
        p = np.zeros(len(stats.overall))
        mine = stats.pair_class == c
        p[stats.pair_value[mine]] = stats.pair_count[mine] / stats.vals[c]
        extra = {int(h.leaf(v)): float(p[i] - stats.overall[i]) for i, v in enumerate(stats.labels)}
        cost = 0.0
        for level in range(1, top + 1):
            pos: dict[int, float] = {}
            neg: dict[int, float] = {}
            nxt: dict[int, float] = {}
            for node in np.flatnonzero(h.levels == level - 1):
                parent = int(h.parents[node])
                e = extra.get(int(node), 0.0)
                pos[parent] = pos.get(parent, 0.0) + max(e, 0.0)
                neg[parent] = neg.get(parent, 0.0) + max(-e, 0.0)
                nxt[parent] = nxt.get(parent, 0.0) + e
            cost += sum(level / top * min(pos[n], neg[n]) for n in pos)
            extra = nxt
        out[c] = cost
    return out

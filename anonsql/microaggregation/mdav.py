"""MDAV, the fixed-size microaggregation of Domingo-Ferrer and Torra (2005) that sdcMicro's
``microaggregation(method = "mdav")`` implements: the baseline of every comparison.

Classic MDAV groups records. Here the points are the distinct QI tuples weighted by their
record counts (so equal tuples never split): "the k - 1 records closest to x_r" becomes "the
tuples closest to x_r until the group holds at least k records", and the remaining share is
counted in records. With one record per tuple this is exactly classic MDAV.
"""

from __future__ import annotations

import numpy as np

from anonsql.errors import InputError


def mdav(z: np.ndarray, counts: np.ndarray, k: int) -> np.ndarray:
    """Group ids (0..) of the points ``z`` (standardized, u x m) weighted by ``counts``; every
    group holds at least ``k`` records. Ties (equal distances) go to the lower index."""
    z = np.asarray(z, dtype=np.float64)
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    if k < 1:
        raise InputError("k must be at least 1")
    if total < k:
        raise InputError(f"the table has {total} records, fewer than k = {k}")
    groups = np.full(len(z), -1, dtype=np.int64)
    alive = np.ones(len(z), dtype=bool)
    state = {"next": 0, "left": total}

    def farthest(point: np.ndarray) -> int:
        idx = np.flatnonzero(alive)
        d = ((z[idx] - point) ** 2).sum(axis=1)
        return int(idx[int(np.argmax(d))])  # argmax: first of equal maxima

    def form(r: int) -> int:
        """The group of x_r: the nearest alive tuples until it holds >= k records."""
        idx = np.flatnonzero(alive)
        d = ((z[idx] - z[r]) ** 2).sum(axis=1)
        if len(idx) > k:
            # at most k tuples are needed (each holds >= 1 record): the k nearest and every
            # tie of the k-th, found in linear time, then ordered (ties: lower index)
            kth = np.partition(d, k - 1)[k - 1]
            near = d <= kth
            idx, d = idx[near], d[near]
        order = idx[np.lexsort((idx, d))]
        take = int(np.searchsorted(np.cumsum(counts[order]), k)) + 1
        members = order[:take]
        g = state["next"]
        state["next"] += 1
        groups[members] = g
        alive[members] = False
        state["left"] -= int(counts[members].sum())
        return g

    def absorb(g: int) -> None:
        """Fewer than k records left (only with weights): they join group g."""
        groups[alive] = g
        alive[:] = False
        state["left"] = 0

    def centroid() -> np.ndarray:
        idx = np.flatnonzero(alive)
        return (counts[idx] @ z[idx]) / counts[idx].sum()

    while state["left"] >= 3 * k:
        r = farthest(centroid())
        g = form(r)
        if state["left"] < k:
            absorb(g)
            break
        s = farthest(z[r])
        g = form(s)
        if 0 < state["left"] < k:
            absorb(g)
            break
    if state["left"] >= 2 * k:
        g = form(farthest(centroid()))
        if state["left"] < k:
            absorb(g)
    if state["left"] > 0:  # k <= left < 2k: the rest is one group
        groups[alive] = state["next"]
        alive[:] = False
    return groups


__all__ = ["mdav"]

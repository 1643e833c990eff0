"""MDAV, the fixed-size microaggregation of Domingo-Ferrer and Torra (2005) that sdcMicro's
``microaggregation(method = "mdav")`` implements: the baseline of every comparison.

Classic MDAV groups records. Here the points are the distinct QI tuples weighted by their
record counts (so equal tuples never split): "the k - 1 records closest to x_r" becomes "the
tuples closest to x_r until the group holds at least k records", and the remaining share is
counted in records. With one record per tuple this is exactly classic MDAV.

MDAV is quadratic in the number of points: every group scans the points still ungrouped.
:func:`mdav` runs it exactly, vectorized (the distances to a point screened by one
matrix-vector product, |x|^2 + |p|^2 - 2 x.p, and the few points within the screen's
rounding margin of a decision recomputed as the plain per-attribute pass computes them, so the
groups are the plain pass's, ties included; a column-major copy of the points, lazily
compacted; the farthest point from the centroid among the few candidates
the triangle inequality leaves around an earlier centroid; the k nearest selected under a
sampled bound); :func:`blocked_mdav` first cuts a large input into blocks of
at most ``block`` points by recursive median splits (as Mondrian cuts, on the widest
standardized attribute) and runs exact MDAV in each block, which makes the cost linear in the
number of points for a fixed block size (README "Microaggregation benchmark").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from anonsql.errors import InputError

#: default largest block of :func:`blocked_mdav` (distinct tuples): inputs up to this size
#: get exact MDAV (about 5 s at 50,000 5-attribute tuples on this project's 2-core VM); 1 M
#: tuples take 32 blocks. Measured cost: README "Microaggregation benchmark"
DEFAULT_BLOCK = 50_000
#: pools of at least this many points look for the farthest point from the centroid among
#: the few candidates a reference point leaves (_Pool.farthest_from_centroid)
REFERENCE_POOL = 1024
#: _Pool.nearest bounds the k-th smallest distance by the k-th smallest of every this many
SELECT_STRIDE = 8


@dataclass
class Screen:
    """Distances to the point ``p`` for screening: within ``slack`` of the exact ones."""

    values: np.ndarray
    p: np.ndarray
    slack: float


class _Pool:
    """The points still ungrouped, in their original order (so ``argmax``'s first maximum and
    the ordering of ties are the lower original index, as in a scan of the whole table).

    Grouped points are not removed at once: their positions are listed in ``dead`` and masked
    in every scan, and the arrays are compacted when more than an eighth of them is dead,
    which bounds the wasted work while keeping the compactions' cost linear overall."""

    def __init__(self, z: np.ndarray, counts: np.ndarray) -> None:
        self.zc = np.ascontiguousarray(z.T)  # m x n: every attribute contiguous
        # |x|^2 per point, for the screening distances (see quick), and the largest |x|
        with np.errstate(over="ignore", invalid="ignore"):  # then no screening (below)
            self.sq = (self.zc * self.zc).sum(axis=0)
        self.reach = float(np.sqrt(self.sq.max())) if len(counts) else 0.0
        # screening only while its squares stay far from overflow (and no NaN: reach is NaN)
        self.screen = bool(self.reach < 1e150)
        self.counts = counts.copy()
        self.w = counts.astype(np.float64)  # 0 once grouped: the centroid's weights
        self.ids = np.arange(len(counts))
        self.buf = np.empty_like(self.zc)
        self.dead_buf = np.empty(len(counts), dtype=np.int64)
        self.n_dead = 0
        self.left = int(counts.sum())  # records still ungrouped
        # the reference of farthest_from_centroid (None: none yet, or positions moved)
        self.ref: np.ndarray | None = None
        # set with ref (the live points by descending distance to it, and the first live one)
        self.ref_order: np.ndarray
        self.ref_dist: np.ndarray
        self.ref_head: int

    @property
    def n(self) -> int:
        return self.zc.shape[1]

    @property
    def dead(self) -> np.ndarray:
        """Positions grouped since the last compaction."""
        return self.dead_buf[: self.n_dead]

    def distances(self, p: np.ndarray) -> np.ndarray:
        """Squared Euclidean distance of every pooled point (dead ones too) to ``p``. The sum
        runs over the attributes in order, as ``((z - p) ** 2).sum(axis=1)`` does."""
        buf = self.buf
        np.subtract(self.zc, p[:, None], out=buf)
        np.multiply(buf, buf, out=buf)
        return buf.sum(axis=0)

    def exact(self, p: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """:meth:`distances` of the positions ``idx`` only (the same operations)."""
        diff = self.zc[:, idx] - p[:, None]
        diff *= diff
        d = diff[0].copy()
        for row in diff[1:]:  # the full pass's order of additions
            d += row
        return d

    def quick(self, p: np.ndarray) -> Screen:
        """Screening distances to ``p`` for every pooled point: |x|^2 + |p|^2 - 2 x.p, one
        matrix-vector product instead of a pass per attribute. They differ from
        :meth:`distances` by at most ``slack`` (below), so the decisions taken on them
        (:meth:`nearest`, :meth:`farthest`) recompute the exact distances of the few points
        within that margin of the decision and decide on those.

        The margin: |x|^2, |p|^2 and x.p carry at most about m u of the sums of the absolute
        terms (u the unit round-off, 2^-53, m attributes), the last two operations about
        u (|x| + |p|)^2 each, and the exact pass, summing m squares, about (m + 2) u
        (|x| + |p|)^2: together under (2m + 5) u (|x| + |p|)^2 to first order, whatever
        order the matrix-vector product sums in (the bound for m terms holds for any order,
        fused multiply-adds included). We take four times the (m + 2)-fold, with the
        largest |x| of the pool (it only shrinks as points are grouped), plus 1e-300 for
        the absolute errors of subnormal squares. Points so large that their squares could
        overflow (or NaN) get the exact pass with no margin."""
        if not self.screen:
            return Screen(self.distances(p), p, 0.0)
        m = self.zc.shape[0]
        d = (-2.0 * p) @ self.zc
        d += self.sq
        d += float(p @ p)
        reach = self.reach + float(np.sqrt(p @ p))
        slack = 8.0 * (m + 2) * 2.0**-53 * reach * reach + 1e-300
        return Screen(d, p, slack)

    def farthest(self, d: Screen) -> int:
        """The live position of largest exact distance (first of equal maxima); overwrites
        ``d``'s screening values."""
        v = d.values
        v[self.dead] = -np.inf
        top = float(v.max())
        cand = np.flatnonzero(v >= top - 2.0 * d.slack)
        if not len(cand):  # NaN among the values: argmax's answer, as the plain pass
            return int(np.argmax(v))
        return int(cand[np.argmax(self.exact(d.p, cand))])

    def centroid(self) -> np.ndarray:
        return (self.zc @ self.w) / float(self.left)

    def farthest_from_centroid(self) -> int:
        """``farthest(distances(centroid()))`` without the distance pass when the centroid
        moved little since a reference point c0 (a centroid met before).

        By the triangle inequality, |d(x, c) - d(x, c0)| <= d(c, c0) = delta. With D the
        largest d(x, c0) over the live points, the farthest point from c is at least
        D - delta from c, so its d(x, c0) is at least D - 2 delta: only the live points
        with d(x, c0) >= D - 2 delta (a prefix of them sorted by d(x, c0)) are candidates,
        and their distances to c are computed exactly as the full pass does (the same
        operations, attribute by attribute), so the answer is the same point, ties to the
        lower position included. A centroid drifts by about (group mean - centroid) / left
        per group, so the prefix stays short; when it grows past an eighth of the pool, or
        after a compaction (positions move), a full pass makes c the new reference."""
        c = self.centroid()
        ref = self.ref
        if ref is not None:
            delta = float(np.sqrt(((c - ref) ** 2).sum()))
            order, dist = self.ref_order, self.ref_dist  # descending d(x, c0)
            head = self.ref_head
            while head < len(order) and self.w[order[head]] == 0.0:  # grouped since
                head += 1
            self.ref_head = head
            if head < len(order):
                top = float(dist[head])
                # round-off allowance: the distances are within ulps of the exact ones
                floor = top - 2.0 * delta - 1e-9 * (top + delta) - 1e-300
                end = int(np.searchsorted(-dist, -floor, side="right"))
                if end - head <= self.n // 8:
                    cand = order[head:end]
                    cand = np.sort(cand[self.w[cand] > 0.0])
                    diff = self.zc[:, cand] - c[:, None]
                    diff *= diff
                    d = diff[0].copy()
                    for row in diff[1:]:  # the full pass's order of additions
                        d += row
                    return int(cand[np.argmax(d)])
        d = self.distances(c)
        if self.n >= REFERENCE_POOL:  # a new reference (small pools: a full pass is cheap)
            self.ref = c
            dist = np.sqrt(d)
            self.ref_order = np.argsort(-dist, kind="stable")
            self.ref_dist = dist[self.ref_order]
            self.ref_head = 0
        return self.farthest(Screen(d, c, 0.0))

    def nearest(self, d: Screen, k: int) -> np.ndarray:
        """Positions of the nearest live points by exact distance (ties: lower position)
        until they hold at least ``k`` records; ``d``'s screening values are left with the
        dead at +inf."""
        v = d.values
        v[self.dead] = np.inf
        live = self.n - self.n_dead
        if live > k:
            # at most k points are needed (each holds >= 1 record): the k nearest and every
            # tie of the k-th, found in linear time, then ordered. The k-th smallest of every
            # SELECT_STRIDE-th value bounds the k-th smallest of all from above, so a
            # selection among the few values under that bound finds the same k-th value
            # at a fraction of the cost of selecting among all (MDAV's slowest step before).
            # On screening values: every point whose exact distance is at most the exact
            # k-th is within twice the margin of the screened k-th, so those are the
            # candidates, and the k nearest are chosen among them by exact distance
            sample = v[::SELECT_STRIDE] if len(v) >= 8 * SELECT_STRIDE * k else v
            bound = np.partition(sample, k - 1)[k - 1] if len(sample) >= k else np.inf
            near = np.flatnonzero(v <= bound + 2.0 * d.slack)
            kth = np.partition(v[near], k - 1)[k - 1]
            cand = near[v[near] <= kth + 2.0 * d.slack]
            exact = self.exact(d.p, cand)
            kth = np.partition(exact, k - 1)[k - 1]
            keep = exact <= kth
            idx, dist = cand[keep], exact[keep]
        else:
            idx = np.flatnonzero(np.isfinite(v))
            dist = self.exact(d.p, idx)
        order = idx[np.lexsort((idx, dist))]
        take = int(np.searchsorted(np.cumsum(self.counts[order]), k)) + 1
        return order[:take]

    def remove(self, members: np.ndarray) -> np.ndarray:
        """Group the positions ``members``; returns their original indices."""
        self.w[members] = 0.0
        self.left -= int(self.counts[members].sum())
        self.dead_buf[self.n_dead : self.n_dead + len(members)] = members
        self.n_dead += len(members)
        return self.ids[members]

    def compact(self) -> None:
        if self.n_dead * 8 <= self.n:
            return
        keep = np.ones(self.n, dtype=bool)
        keep[self.dead] = False
        self.zc = np.ascontiguousarray(self.zc[:, keep])
        self.sq = self.sq[keep]
        self.counts = self.counts[keep]
        self.w = self.w[keep]
        self.ids = self.ids[keep]
        self.buf = np.empty_like(self.zc)
        self.n_dead = 0
        self.ref = None  # positions moved

    def rest(self) -> np.ndarray:
        """Original indices of every live point."""
        keep = np.ones(self.n, dtype=bool)
        keep[self.dead] = False
        return self.ids[keep]


def mdav(z: np.ndarray, counts: np.ndarray, k: int) -> np.ndarray:
    """Group ids (0..) of the points ``z`` (standardized, u x m) weighted by ``counts``; every
    group holds at least ``k`` records. Ties (equal distances) go to the lower index."""
    z = np.asarray(z, dtype=np.float64)
    if z.ndim == 1:
        z = z[:, None]
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    if k < 1:
        raise InputError("k must be at least 1")
    if total < k:
        raise InputError(f"the table has {total} records, fewer than k = {k}")
    groups = np.full(len(z), -1, dtype=np.int64)
    pool = _Pool(z, counts)
    g = -1  # the last group formed

    def form(d: Screen) -> np.ndarray:
        """The next group: the nearest live points by ``d`` until it holds >= k records."""
        nonlocal g
        members = pool.nearest(d, k)
        g += 1
        groups[pool.remove(members)] = g
        return members

    def absorb() -> None:
        """Fewer than k records left (only with weights): they join the last group."""
        groups[pool.rest()] = g
        pool.left = 0

    # Domingo-Ferrer and Torra's loop: while >= 3k records remain, the group of the farthest
    # point x_r from the centroid, then the group of the farthest point x_s from x_r
    while pool.left >= 3 * k:
        r = pool.farthest_from_centroid()
        d = pool.quick(pool.zc[:, r].copy())  # from x_r: forms its group, then finds x_s
        form(d)
        if pool.left < k:
            absorb()
            break
        s = pool.farthest(d)
        form(pool.quick(pool.zc[:, s].copy()))
        if 0 < pool.left < k:
            absorb()
            break
        pool.compact()
    if pool.left >= 2 * k:
        form(pool.quick(pool.zc[:, pool.farthest_from_centroid()].copy()))
        if pool.left < k:
            absorb()
    if pool.left > 0:  # k <= left < 2k: the rest is one group
        groups[pool.rest()] = g + 1
    return groups


def median_blocks(z: np.ndarray, block: int) -> list[np.ndarray]:
    """Indices of ``z``'s points cut into blocks of at most ``block`` points: a block larger
    than that is split at its median point along its widest attribute (largest range of the
    z-scores; ties: the first attribute), the lower half (by value, then index) holding
    ``n // 2`` points. Each block keeps at least ``ceil(block / 2)`` points (a split block has
    ``n >= block + 1``)."""
    out: list[np.ndarray] = []
    stack = [np.arange(len(z))]
    while stack:
        idx = stack.pop()
        if len(idx) <= block:
            out.append(idx)
            continue
        pts = z[idx]
        j = int(np.argmax(pts.max(axis=0) - pts.min(axis=0)))
        order = idx[np.argsort(pts[:, j], kind="stable")]  # stable: ties by index
        half = len(idx) // 2
        stack.append(np.sort(order[half:]))
        stack.append(np.sort(order[:half]))
    return out


def blocked_mdav(
    z: np.ndarray, counts: np.ndarray, k: int, block: int = DEFAULT_BLOCK
) -> tuple[np.ndarray, dict[str, Any]]:
    """MDAV within blocks of at most ``block`` distinct tuples (:func:`median_blocks`), with
    the group ids numbered across blocks. ``block >= len(z)``: exactly :func:`mdav`.

    Every group holds >= k records: MDAV gives that within a block holding >= k records, and
    a split block keeps at least ``ceil(block / 2)`` points, each of >= 1 record, so ``block
    >= 2k`` is required. The info says whether blocking was used, for the run's measures."""
    z = np.asarray(z, dtype=np.float64)
    if z.ndim == 1:
        z = z[:, None]
    counts = np.asarray(counts, dtype=np.int64)
    if block < 2 * k:
        raise InputError(
            f"mdav_block {block} is too small: blocks of at least 2k = {2 * k} tuples keep "
            f"every block's records >= k"
        )
    if len(z) <= block:
        return mdav(z, counts, k), {"mdav_block": block, "mdav_blocks": 1, "mdav_exact": True}
    blocks = median_blocks(z, block)
    groups = np.empty(len(z), dtype=np.int64)
    offset = 0
    for idx in blocks:
        g = mdav(z[idx], counts[idx], k)
        groups[idx] = g + offset
        offset += int(g.max()) + 1
    info = {
        "mdav_block": block,
        "mdav_blocks": len(blocks),
        "mdav_exact": False,
        "mdav_largest_block": int(max(len(b) for b in blocks)),
    }
    return groups, info


__all__ = ["DEFAULT_BLOCK", "blocked_mdav", "mdav", "median_blocks"]

"""Mondrian with l-diversity: LeFevre, DeWitt and Ramakrishnan's strict multidimensional
partitioning ("Mondrian Multidimensional K-Anonymity", ICDE 2006), extended as seed 003
section V does so that every part also keeps l well-represented sensitive values (and, here,
every other per-class model of the run: entropy-l, recursive (c,l), t-closeness, ...).

A partition is split on the QI with the widest *normalized* range (range of the partition over
the range of the whole table: numbers by value, categorical values by count of distinct
values, hierarchy values by leaves under their lowest common ancestor). Numeric and
categorical QIs are cut at the weighted median (the smallest prefix of the sorted values
holding half the rows goes left; when that prefix is everything, the last value goes right):
the two halves must each satisfy every model (an *allowable* cut). A QI with a hierarchy is
split among the children of the partition's lowest common ancestor, every child satisfying
the models. What happens when the widest QI has no allowable cut is the stop rule
(``stop``): ``"next-widest"`` (the default) tries the next widest QI, and so on, and releases
the partition only when no QI has an allowable cut; ``"widest"`` releases it at once
(LeFevre's rule: the widest dimension is chosen, and the partition is final when it cannot
be cut). A part's decision depends on its own rows only, and both rules take the same cut
whenever the widest QI has one, so the ``"next-widest"`` partitions refine the ``"widest"``
ones: each lies inside one of them, and there are at least as many.

Splits are on QI values, so rows with equal QI tuples always stay in one partition (strict
partitioning), which is what makes the release a function of the QI tuple.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from anonsql.algorithms.mondrian.checker import Checker
from anonsql.data.points import HIERARCHY, NUMERIC, Points
from anonsql.errors import InputError

#: what Mondrian does when the widest QI has no allowable cut: try the next widest QI (the
#: default), or release the partition (LeFevre et al.'s rule)
NEXT_WIDEST = "next-widest"
WIDEST = "widest"
STOP_RULES = (NEXT_WIDEST, WIDEST)


def check_stop(stop: object) -> str:
    """``stop`` if it is one of :data:`STOP_RULES`, else a one-line error."""
    if stop not in STOP_RULES:
        raise InputError(
            f"mondrian_stop is 'next-widest' (try the next widest QI; the default) or 'widest' "
            f"(LeFevre's rule: stop when the widest QI cannot be cut), not {stop!r}"
        )
    return stop  # type: ignore[return-value]


@dataclass
class Spans:
    """The whole table's range per QI, the denominators of the normalized ranges."""

    widths: list[float]

    @classmethod
    def of(cls, points: Points) -> Spans:
        out = []
        for j in range(points.width):
            out.append(max(_width(points, np.arange(len(points.counts)), j), 0.0))
        return cls(out)


def _width(points: Points, rows: np.ndarray, j: int) -> float:
    codes = points.codes[rows, j]
    kind = points.kinds[j]
    if kind == NUMERIC:
        # codes are ranks in value order, so the extreme codes hold the extreme values
        nums = points.numbers[j]
        assert nums is not None  # a numeric QI's values as numbers
        return float(nums[codes.max()] - nums[codes.min()])
    if kind == HIERARCHY:
        h = points.hierarchies[j]
        lca = h.lca_of_set(np.unique(points.leaves[j][codes]))  # type: ignore[union-attr,index]
        return float(h.leaf_counts[lca] - 1)  # type: ignore[union-attr]
    return float(len(_distinct(codes, len(points.domains[j]))) - 1)


def _distinct(codes: np.ndarray, size: int) -> np.ndarray:
    """The sorted distinct codes (of a domain of ``size`` values): by counting when the part
    is large against the domain (no sort), else by np.unique."""
    if 4 * len(codes) >= size:
        return np.flatnonzero(np.bincount(codes, minlength=size))
    return np.unique(codes)


def _children_of(points: Points, j: int, codes: np.ndarray) -> np.ndarray | None:
    """For a hierarchy QI: each code's child of the codes' lowest common ancestor (None when
    all codes are one leaf)."""
    h = points.hierarchies[j]
    leaves = points.leaves[j][codes]  # type: ignore[index]
    distinct = np.unique(leaves)
    if len(distinct) < 2:
        return None
    lca = h.lca_of_set(distinct)  # type: ignore[union-attr]
    anc = h.ancestors[distinct]  # type: ignore[union-attr]
    parent_of = h.parents[np.where(anc >= 0, anc, 0)]  # type: ignore[union-attr]
    hit = (parent_of == lca) & (anc >= 0)
    child = anc[np.arange(len(distinct)), hit.argmax(axis=1)]
    return child[np.searchsorted(distinct, leaves)]


def median_cut(points: Points, rows: np.ndarray, j: int) -> np.ndarray | None:
    """Mask of ``rows`` going left at the weighted median of QI ``j`` (None: one value)."""
    codes = points.codes[rows, j]
    size = len(points.domains[j])
    # declared for both branches: mypy 1.19 crashes inferring it from the tuple unpacking
    uniq: np.ndarray
    if 4 * len(codes) >= size:
        # counting instead of sorting (the same weights: integer sums in row order)
        per_code = np.bincount(codes, points.counts[rows], minlength=size)
        uniq = np.flatnonzero(np.bincount(codes, minlength=size))
        w = per_code[uniq]
    else:
        uniq, inverse = np.unique(codes, return_inverse=True)
        w = np.bincount(inverse, points.counts[rows])
    if len(uniq) < 2:
        return None
    cum = np.cumsum(w)
    i = int(np.searchsorted(cum, cum[-1] / 2.0))
    i = min(i, len(uniq) - 2)
    return codes <= uniq[i]


def candidate_parts(points: Points, rows: np.ndarray, j: int) -> list[np.ndarray] | None:
    """The parts (row index arrays) of Mondrian's cut of ``rows`` on QI ``j``."""
    if points.kinds[j] == HIERARCHY:
        child = _children_of(points, j, points.codes[rows, j])
        if child is None:
            return None
        return [rows[child == c] for c in np.unique(child)]
    left = median_cut(points, rows, j)
    if left is None:
        return None
    return [rows[left], rows[~left]]


def _part(points: Points, rows: np.ndarray):
    return (None if points.sens is None else points.sens[rows], points.counts[rows])


def mondrian(
    points: Points,
    checker: Checker,
    rows: np.ndarray | None = None,
    spans: Spans | None = None,
    stop: str = NEXT_WIDEST,
) -> list[np.ndarray]:
    """Mondrian's partitions of ``rows`` (default: every row of ``points``), each an array of
    row indices (in the order of ``rows``), in the depth-first order of the cuts; ``spans``
    normalizes the ranges (default: those of ``points``); ``stop``: the stop rule (module
    docstring)."""
    if rows is None:
        rows = np.arange(len(points.counts))
    return mondrian_groups(points, checker, [rows], spans, stop)


def mondrian_groups(
    points: Points,
    checker: Checker,
    groups: list[np.ndarray],
    spans: Spans | None = None,
    stop: str = NEXT_WIDEST,
) -> list[np.ndarray]:
    """:func:`mondrian` in every group, the groups' partitions one after the other.

    The recursion runs level by level: all parts of one depth, of all groups, are measured,
    cut and tested together with a few array operations (a million rows make some 85,000
    parts, and TA_DA's tree tens of thousands of groups, which one Python step per part made
    the cost). A part's decision depends only on its own rows, so the partitions are those of
    the part-by-part recursion (:func:`mondrian_part_by_part`, kept as the reference the
    tests hold this one to)."""
    spans = spans or Spans.of(points)
    floor = 2 * checker.min_rows
    m = points.width
    # the QIs tried per part, widest first: all of them, or the widest only
    tries = m if check_stop(stop) == NEXT_WIDEST else min(m, 1)
    # the parts of the current depth: their rows back to back, the part of each, and the
    # path (group, then the child taken at each cut) that gives the depth-first order
    finals: list[tuple[tuple[int, ...], np.ndarray]] = []
    live = []
    for g, rows in enumerate(groups):
        if len(rows) == 0:
            finals.append(((g,), np.asarray(rows)))
        else:
            live.append(g)
    group_sizes = [len(groups[g]) for g in live]
    elem = (
        np.concatenate([np.asarray(groups[g], dtype=np.int64) for g in live])
        if live
        else np.zeros(0, dtype=np.int64)
    )
    pid = np.repeat(np.arange(len(live), dtype=np.int64), group_sizes)
    paths: list[tuple[int, ...]] = [(g,) for g in live]
    # declared once: mypy 1.19 crashes inferring it again from a second tuple unpacking
    keys: np.ndarray
    while paths and len(elem):
        sizes = np.bincount(pid, minlength=len(paths))
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        weight = np.add.reduceat(points.counts[elem], starts)
        # a part with fewer than 2 * min_rows rows has no cut leaving both sides min_rows
        small = weight < floor
        if small.any():
            for p in np.flatnonzero(small).tolist():
                finals.append((paths[p], elem[starts[p] : starts[p] + sizes[p]]))
            keep = ~small
            if not keep.any():
                break
            em = keep[pid]
            new_id = np.cumsum(keep) - 1
            elem, pid = elem[em], new_id[pid[em]]
            paths = [paths[p] for p in np.flatnonzero(keep).tolist()]
            sizes = sizes[keep]
            starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        n_parts = len(paths)
        codes = points.codes[elem]
        widths = np.zeros((n_parts, m))
        for j in range(m):
            total = spans.widths[j]
            if total > 0:
                widths[:, j] = (
                    _part_widths(points, j, codes[:, j], elem, pid, starts, sizes) / total
                )
        # widest normalized range first; ties by QI order (stable sort)
        order = np.argsort(-widths, axis=1, kind="stable")
        open_ = np.ones(n_parts, dtype=bool)  # no cut taken, widths left to try
        child = np.full(len(elem), -1, dtype=np.int64)
        cut = np.zeros(n_parts, dtype=bool)
        for r in range(tries):
            jr = order[:, r]
            wr = widths[np.arange(n_parts), jr]
            open_ &= wr > 0  # the widest remaining range is 0: no cut left
            if not open_.any():
                break
            trial = np.full(len(elem), -1, dtype=np.int64)
            has_cut = np.zeros(n_parts, dtype=bool)
            for j in range(m):
                sel = open_ & (jr == j)
                if not sel.any():
                    continue
                if points.kinds[j] == HIERARCHY:
                    for p in np.flatnonzero(sel).tolist():
                        a, b = starts[p], starts[p] + sizes[p]
                        kids = _children_of(points, j, codes[a:b, j])
                        if kids is None:
                            continue
                        trial[a:b] = np.unique(kids, return_inverse=True)[1].ravel()
                        has_cut[p] = True
                else:
                    em = sel[pid]
                    trial[em] = _median_sides(points, j, codes[em, j], elem[em], pid[em], n_parts)
                    has_cut |= sel
            if not has_cut.any():
                continue
            em = has_cut[pid]
            width_c = int(trial[em].max()) + 1
            keys, classes = np.unique(pid[em] * width_c + trial[em], return_inverse=True)
            sub = elem[em]
            ok = checker.passes_grouped(
                classes.ravel(),
                None if points.sens is None else points.sens[sub],
                points.counts[sub],
            )
            failed = np.bincount(keys // width_c, ~ok, minlength=n_parts) > 0
            passed = has_cut & ~failed
            if passed.any():
                pm = passed[pid]
                child[pm] = trial[pm]
                cut |= passed
                open_ &= ~passed
        for p in np.flatnonzero(~cut).tolist():
            finals.append((paths[p], elem[starts[p] : starts[p] + sizes[p]]))
        if not cut.any():
            break
        em = cut[pid]
        elem, pid, child = elem[em], pid[em], child[em]
        width_c = int(child.max()) + 1
        keys, new_pid = np.unique(pid * width_c + child, return_inverse=True)
        new_pid = new_pid.ravel()
        move = np.argsort(new_pid, kind="stable")  # each child's rows in their old order
        elem, pid = elem[move], new_pid[move]
        paths = [(*paths[k // width_c], k % width_c) for k in keys.tolist()]
    finals.sort(key=lambda item: item[0])
    return [part for _, part in finals]


def _part_widths(points, j, codes, elem, pid, starts, sizes) -> np.ndarray:
    """``_width`` of QI ``j`` for every part (``pid``: each element's part, parts back to
    back from ``starts``)."""
    n_parts = len(starts)
    kind = points.kinds[j]
    if kind == NUMERIC:
        nums = points.numbers[j]
        lo = np.minimum.reduceat(codes, starts)
        hi = np.maximum.reduceat(codes, starts)
        return nums[hi] - nums[lo]
    if kind == HIERARCHY:
        return np.asarray(
            [
                _width(points, elem[a : a + n], j)
                for a, n in zip(starts.tolist(), sizes.tolist(), strict=True)
            ]
        )
    size = len(points.domains[j])
    key = pid * size + codes
    if n_parts * size <= 4 * len(codes):
        present = np.bincount(key, minlength=n_parts * size) > 0
        distinct = present.reshape(n_parts, size).sum(axis=1)
    else:
        distinct = np.bincount(np.unique(key) // size, minlength=n_parts)
    return (distinct - 1).astype(np.float64)


def _median_sides(points, j, codes, rows, pid, n_parts) -> np.ndarray:
    """0 (left) or 1 (right) per element: :func:`median_cut` of QI ``j`` in every part at
    once (the parts' elements ``pid``; every part has two codes at least)."""
    size = len(points.domains[j])
    key = pid * size + codes
    cnt = points.counts[rows]
    # declared for both branches: mypy 1.19 crashes inferring them from the tuple unpacking
    pairs: np.ndarray
    inverse: np.ndarray
    if n_parts * size <= 4 * len(codes):
        per_key = np.bincount(key, cnt, minlength=n_parts * size)
        present = np.bincount(key, minlength=n_parts * size) > 0
        pairs = np.flatnonzero(present)
        w = per_key[pairs]
        inverse = (np.cumsum(present) - 1)[key]
    else:
        pairs, inverse = np.unique(key, return_inverse=True)
        inverse = inverse.ravel()
        w = np.bincount(inverse, cnt)
    owner = pairs // size
    start = np.r_[True, owner[1:] != owner[:-1]]
    group = np.cumsum(start) - 1
    first = np.flatnonzero(start)
    cw = np.cumsum(w)
    # each part's running sum of its own weights (integers in float64: exact)
    cum = cw - np.r_[0.0, cw][first][group]
    last = np.r_[first[1:], len(pairs)] - 1
    half = cum[last] / 2.0
    # np.searchsorted(cum, half): the count of running sums below half
    i = np.bincount(group, cum < half[group])
    distinct = np.bincount(group)
    i = np.minimum(i, distinct - 2)
    left = (np.arange(len(pairs)) - first[group]) <= i[group]
    return np.where(left[inverse], 0, 1)


def mondrian_part_by_part(
    points: Points,
    checker: Checker,
    rows: np.ndarray | None = None,
    spans: Spans | None = None,
    stop: str = NEXT_WIDEST,
) -> list[np.ndarray]:
    """The same partitions as :func:`mondrian`, one part at a time (the reference the tests
    hold the level-by-level version to)."""
    check_stop(stop)
    if rows is None:
        rows = np.arange(len(points.counts))
    spans = spans or Spans.of(points)
    out: list[np.ndarray] = []
    stack = [rows]
    floor = 2 * checker.min_rows
    while stack:
        part = stack.pop()
        if points.counts[part].sum() < floor:
            out.append(part)  # no cut leaves both halves min_rows rows
            continue
        widths = []
        for j in range(points.width):
            total = spans.widths[j]
            widths.append(_width(points, part, j) / total if total > 0 else 0.0)
        done = False
        # widest normalized range first; ties by QI order (stable sort)
        for j in np.argsort(-np.asarray(widths), kind="stable"):
            if widths[j] <= 0:
                break
            parts = candidate_parts(points, part, int(j))
            if parts is None:
                if stop == WIDEST:
                    break
                continue
            if checker.all_pass([_part(points, p) for p in parts]):
                stack.extend(reversed(parts))
                done = True
                break
            if stop == WIDEST:
                break  # LeFevre's rule: the widest QI has no allowable cut, so stop
        if not done:
            out.append(part)
    return out


__all__ = [
    "NEXT_WIDEST",
    "STOP_RULES",
    "WIDEST",
    "Spans",
    "candidate_parts",
    "check_stop",
    "median_cut",
    "mondrian",
    "mondrian_groups",
    "mondrian_part_by_part",
]

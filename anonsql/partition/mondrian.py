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
the models. When the widest QI has no allowable cut, the next widest is tried (LeFevre's
Algorithm 1 stops there; trying the others keeps partitions smaller). A partition with no
allowable cut on any QI is released.

Splits are on QI values, so rows with equal QI tuples always stay in one partition (strict
partitioning), which is what makes the release a function of the QI tuple.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from anonsql.partition.checker import Checker
from anonsql.partition.points import HIERARCHY, NUMERIC, Points


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
        nums = points.numbers[j][codes]  # type: ignore[index]
        return float(nums.max() - nums.min())
    if kind == HIERARCHY:
        h = points.hierarchies[j]
        lca = h.lca_of_set(np.unique(points.leaves[j][codes]))  # type: ignore[union-attr,index]
        return float(h.leaf_counts[lca] - 1)  # type: ignore[union-attr]
    return float(len(np.unique(codes)) - 1)


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
    uniq, inverse = np.unique(codes, return_inverse=True)
    if len(uniq) < 2:
        return None
    w = np.bincount(inverse, points.counts[rows])
    cum = np.cumsum(w)
    i = int(np.searchsorted(cum, cum[-1] / 2.0))
    i = min(i, len(uniq) - 2)
    return inverse <= i


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
    points: Points, checker: Checker, rows: np.ndarray | None = None, spans: Spans | None = None
) -> list[np.ndarray]:
    """Mondrian's partitions of ``rows`` (default: every row of ``points``), each an array of
    row indices; ``spans`` normalizes the ranges (default: those of ``points``)."""
    if rows is None:
        rows = np.arange(len(points.counts))
    spans = spans or Spans.of(points)
    out: list[np.ndarray] = []
    stack = [rows]
    while stack:
        part = stack.pop()
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
                continue
            if checker.all_pass([_part(points, p) for p in parts]):
                stack.extend(reversed(parts))
                done = True
                break
        if not done:
            out.append(part)
    return out


__all__ = ["Spans", "candidate_parts", "median_cut", "mondrian"]

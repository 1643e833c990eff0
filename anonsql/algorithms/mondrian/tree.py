"""Seed 003 section IV-A: a (k, l)-compliant decision tree (Definition IV.1), grown on the QIs
only and guided by the label with C4.5's criterion (Quinlan 1993): information gain ratio.

* A categorical QI (or one with a hierarchy) splits a node into one child per value
  (C4.5's multiway split on a discrete attribute; it is not split on again below).
* A numeric QI splits it in two at a threshold between two consecutive values: the
  threshold with the highest information gain among the allowable ones (C4.5 chooses the
  threshold by gain, then compares attributes by gain ratio).
* A split is *allowable* only if every child satisfies the run's models: at least k rows
  and at least l well-represented sensitive values (seed 003: "a node can be split only if
  the resulting child nodes represent a partition ... with a sufficient number of tuples for
  satisfying k-anonymity and l-diversity"); other per-class models (t-closeness, ...) too,
  since Mondrian must be able to release every leaf as it stands.
* Among allowable splits with positive gain, those with at least the average gain compete
  on gain ratio (C4.5's rule against many-valued attributes); the best wins.
* A node is a leaf when its labels are pure, or no split is allowable with positive gain.
  No pruning: the leaves are groups for Mondrian, not a classifier.

Splits test QI values only, so rows with equal QI tuples reach the same leaf.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from anonsql.algorithms.mondrian.checker import Checker
from anonsql.data.points import NUMERIC, Points
from anonsql.errors import InputError

#: numeric thresholds whose full model test is tried, best gain first, per node and QI
_TRIES = 16


@dataclass
class Node:
    rows: np.ndarray
    qi: int | None = None  # the split's QI (None: a leaf)
    threshold: int | None = None  # numeric: rows with code <= threshold go to children[0]
    values: list[int] = field(default_factory=list)  # categorical: the children's codes
    children: list[Node] = field(default_factory=list)
    gain_ratio: float = 0.0

    def leaves(self) -> list[Node]:
        if not self.children:
            return [self]
        return [leaf for c in self.children for leaf in c.leaves()]

    def depth(self) -> int:
        return 1 + max((c.depth() for c in self.children), default=0)


def _entropy(counts: np.ndarray) -> np.ndarray:
    """Entropy in bits of each row of class counts (last axis)."""
    total = counts.sum(axis=-1, keepdims=True)
    # an empty row has all counts 0: dividing by 1 gives p = 0 there, with no warning
    p = counts / np.where(total > 0, total, 1.0)
    logs = np.log2(p, out=np.zeros_like(p), where=p > 0)
    return -(p * logs).sum(axis=-1)


def _unique_inverse(codes: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(codes, return_inverse=True)`` for codes of a domain of ``size`` values:
    by counting when the node is large against the domain (no sort)."""
    if 4 * len(codes) >= size:
        present = np.bincount(codes, minlength=size) > 0
        return np.flatnonzero(present), (np.cumsum(present) - 1)[codes]
    uniq, inv = np.unique(codes, return_inverse=True)
    return uniq, inv.ravel()


def _table(a: np.ndarray, na: int, b: np.ndarray, nb: int, weights: np.ndarray) -> np.ndarray:
    """The (na, nb) table of summed ``weights`` per (a, b) pair (a bincount: numpy's
    ``add.at`` is an order of magnitude slower)."""
    return np.bincount(a * nb + b, weights, minlength=na * nb).reshape(na, nb)


def _part(points: Points, rows: np.ndarray):
    return (None if points.sens is None else points.sens[rows], points.counts[rows])


class TreeBuilder:
    def __init__(self, points: Points, checker: Checker) -> None:
        if points.label is None:
            raise InputError("the decision tree needs a label (--label)")
        self.p = points
        self.checker = checker
        self.nlab = len(points.label_values)

    def _label_counts(self, rows: np.ndarray) -> np.ndarray:
        return np.bincount(self.p.label[rows], self.p.counts[rows], minlength=self.nlab)  # type: ignore[index]

    def grow(self, rows: np.ndarray | None = None) -> Node:
        p = self.p
        if rows is None:
            rows = np.arange(len(p.counts))
        root = Node(rows)
        stack: list[tuple[Node, frozenset[int]]] = [(root, frozenset())]
        while stack:
            node, used = stack.pop()
            best = self._best_split(node.rows, used)
            if best is None:
                continue
            j, threshold, parts, ratio = best
            node.qi, node.threshold, node.gain_ratio = j, threshold, ratio
            if threshold is None:
                node.values = [int(p.codes[r[0], j]) for r in parts]
            child_used = used if p.kinds[j] == NUMERIC else used | {j}
            node.children = [Node(r) for r in parts]
            stack.extend((c, child_used) for c in node.children)
        return root

    def _best_split(self, rows: np.ndarray, used: frozenset):
        p = self.p
        if p.counts[rows].sum() < 2 * self.checker.min_rows:
            return None  # no two children can both hold min_rows rows
        counts = self._label_counts(rows)
        total = counts.sum()
        if (counts > 0).sum() <= 1:
            return None  # pure
        base = float(_entropy(counts.astype(float)))
        cands = []  # (gain, ratio, j, threshold, parts)
        for j in range(p.width):
            if j in used:
                continue
            found = (
                self._numeric(rows, j, base, total)
                if p.kinds[j] == NUMERIC
                else self._discrete(rows, j, base, total)
            )
            if found is not None:
                cands.append((found[0], found[1], j, found[2], found[3]))
        cands = [c for c in cands if c[0] > 1e-12]
        if not cands:
            return None
        mean_gain = float(np.mean([c[0] for c in cands]))
        eligible = [c for c in cands if c[0] >= mean_gain - 1e-12]
        _gain, ratio, j, threshold, parts = max(eligible, key=lambda c: (c[1], c[0], -c[2]))
        return j, threshold, parts, ratio

    def _discrete(self, rows, j, base, total):
        p = self.p
        codes = p.codes[rows, j]
        uniq, inv = _unique_inverse(codes, len(p.domains[j]))
        if len(uniq) < 2:
            return None
        parts = [rows[inv == i] for i in range(len(uniq))]
        if not self.checker.all_pass([_part(p, r) for r in parts]):
            return None
        w = np.bincount(inv, p.counts[rows]).astype(float)
        lab = _table(inv, len(uniq), p.label[rows], self.nlab, p.counts[rows])
        gain = base - float((w / total * _entropy(lab)).sum())
        split = float(_entropy(w[None, :])[0])
        return gain, (gain / split if split > 0 else 0.0), None, parts

    def _numeric(self, rows, j, base, total):
        p = self.p
        codes = p.codes[rows, j]
        uniq, inv = _unique_inverse(codes, len(p.domains[j]))
        if len(uniq) < 2:
            return None
        cnt = p.counts[rows]
        lab = _table(inv, len(uniq), p.label[rows], self.nlab, cnt)
        left = np.cumsum(lab, axis=0)[:-1]  # cut after value i
        right = lab.sum(axis=0) - left
        wl, wr = left.sum(axis=1), right.sum(axis=1)
        gain = base - (wl / total) * _entropy(left) - (wr / total) * _entropy(right)
        ok = np.ones(len(gain), dtype=bool)
        k = min(
            (getattr(m, "k", 1) for m in self.checker.models if m.name == "k-anonymity"), default=1
        )
        ok &= (wl >= k) & (wr >= k)
        if p.sens is not None and self.checker.needs_sensitive:
            # distinct sensitive values on each side: a cheap necessary test before the models
            ns = len(p.sens_labels)
            sv = _table(inv, len(uniq), p.sens[rows], ns, cnt)
            sl = np.cumsum(sv, axis=0)[:-1]
            sr = sv.sum(axis=0) - sl
            need = min(
                (float(getattr(m, "l", 1)) for m in self.checker.models if m.name == "distinct-l"),
                default=1.0,
            )
            ok &= ((sl > 0).sum(axis=1) >= need) & ((sr > 0).sum(axis=1) >= need)
        order = np.argsort(-gain, kind="stable")
        order = order[ok[order] & (gain[order] > 1e-12)]
        for i in order[:_TRIES].tolist():
            mask = inv <= i
            parts = [rows[mask], rows[~mask]]
            if self.checker.all_pass([_part(p, r) for r in parts]):
                w = np.asarray([wl[i], wr[i]])
                split = float(_entropy(w[None, :])[0])
                g = float(gain[i])
                return g, (g / split if split > 0 else 0.0), int(uniq[i]), parts
        return None


def compliant_tree(points: Points, checker: Checker, rows: np.ndarray | None = None) -> Node:
    """The (k, l)-compliant decision tree of ``rows`` (default: all)."""
    return TreeBuilder(points, checker).grow(rows)


__all__ = ["Node", "TreeBuilder", "compliant_tree"]

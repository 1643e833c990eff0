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
#: cells (pairs of a node's value and a label or sensitive value) a level's tables hold at
#: once: the nodes of a level are scored in chunks of about this many
_CELLS = 4_000_000


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
        """The tree of ``rows`` (default: all), grown level by level: every node of one depth
        is measured, its splits scored and tested together (:class:`_Level`), instead of one
        Python step per node (some 150,000 nodes at a million rows). A node's split depends
        on its rows and the QIs used above it only, so the tree is the one
        :meth:`grow_node_by_node` grows (the reference the tests hold this one to)."""
        p = self.p
        if rows is None:
            rows = np.arange(len(p.counts))
        root = Node(np.asarray(rows))
        nodes = [root]
        used = np.zeros(1, dtype=np.int64)
        while nodes:
            level = _Level(self, nodes, used)
            nodes, used = level.split()
        return root

    def grow_node_by_node(self, rows: np.ndarray | None = None) -> Node:
        """The tree grown one node at a time, depth first (the reference of :meth:`grow`)."""
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


def _unique_keys(keys: np.ndarray, span: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_inverse=True)`` for keys in 0..span-1: by counting when the
    span is small against the keys (no sort), else by sorting."""
    if span <= 4 * len(keys) + 1024:
        present = np.bincount(keys, minlength=span) > 0
        return np.flatnonzero(present), (np.cumsum(present) - 1)[keys]
    uniq, inverse = np.unique(keys, return_inverse=True)
    return uniq, inverse.ravel()


def _segment_sums(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The sum of each segment ``values[start : start + length]``, added in the order numpy's
    ``sum`` adds a 1-D array (pairwise): the segments of one length are the rows of one
    matrix, whose row sums are bit for bit those of each row alone, so the level-by-level
    tree scores a split with exactly the node-by-node tree's floating point sums."""
    out = np.zeros(len(starts))
    for n in np.unique(lengths).tolist():
        sel = np.flatnonzero(lengths == n)
        if n == 0:
            continue
        idx = starts[sel][:, None] + np.arange(n)[None, :]
        out[sel] = values[idx].sum(axis=1)
    return out


def _segment_entropy(w: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """:func:`_entropy` of each segment of ``w`` taken as one row of counts."""
    total = _segment_sums(w, starts, lengths)
    owner = np.repeat(np.arange(len(starts)), lengths)
    t = total[owner]
    p = w / np.where(t > 0, t, 1.0)
    logs = np.log2(p, out=np.zeros_like(p), where=p > 0)
    return -_segment_sums(p * logs, starts, lengths)


class _Level:
    """One depth of the tree: every node's split chosen at once, by the rules of
    :meth:`TreeBuilder._best_split` (module docstring), with the same floating point
    operations (row-wise entropies, numpy's summation order per node)."""

    def __init__(self, builder: TreeBuilder, nodes: list[Node], used: np.ndarray) -> None:
        self.b = builder
        self.p = builder.p
        self.checker = builder.checker
        self.nodes = nodes
        self.used = used
        self.sizes = np.asarray([len(n.rows) for n in nodes], dtype=np.int64)
        self.rows = [n.rows for n in nodes]
        models = self.checker.models
        self.k = min((getattr(m, "k", 1) for m in models if m.name == "k-anonymity"), default=1)
        self.need = min(
            (float(getattr(m, "l", 1)) for m in models if m.name == "distinct-l"), default=1.0
        )

    def split(self) -> tuple[list[Node], np.ndarray]:
        """Split the level's nodes; returns the next level's nodes and their used QIs."""
        p, n_nodes, nlab = self.p, len(self.nodes), self.b.nlab
        elem = np.concatenate(self.rows).astype(np.int64)
        nid = np.repeat(np.arange(n_nodes, dtype=np.int64), self.sizes)
        cnt = p.counts[elem]
        weight = np.bincount(nid, cnt, minlength=n_nodes)
        labels = np.bincount(
            nid * nlab + p.label[elem],  # type: ignore[index]
            cnt,
            minlength=n_nodes * nlab,
        ).reshape(n_nodes, nlab)
        # no two children can both hold min_rows rows; or the labels are pure
        active = (weight >= 2 * self.checker.min_rows) & ((labels > 0).sum(axis=1) > 1)
        m = p.width
        self.gains = np.full((n_nodes, m), np.nan)  # NaN: no allowable split on the QI
        self.ratios = np.zeros((n_nodes, m))
        self.thresholds = np.full((n_nodes, m), -1, dtype=np.int64)
        if active.any():
            base = _entropy(labels.astype(float))
            total = labels.sum(axis=1)
            for j in range(m):
                todo = active & ((self.used >> j) & 1 == 0)
                for chunk in self._chunks(np.flatnonzero(todo)):
                    if p.kinds[j] == NUMERIC:
                        self._numeric(j, chunk, base, total)
                    else:
                        self._discrete(j, chunk, base, total)
        return self._grow()

    def _chunks(self, nodes: np.ndarray):
        """The nodes in runs whose tables stay within :data:`_CELLS` cells."""
        width = max(self.b.nlab, len(self.p.sens_labels), 1)
        cells = np.cumsum(self.sizes[nodes] * width)
        start = 0
        while start < len(nodes):
            below = int(cells[start - 1]) if start else 0
            stop = max(int(np.searchsorted(cells, below + _CELLS, side="right")), start + 1)
            yield nodes[start:stop]
            start = stop

    def _pairs(self, j: int, nodes: np.ndarray):
        """The rows of ``nodes`` and their (node, value) pairs of QI ``j``: per row its node
        (0..len(nodes)-1) and pair; per pair its node and code (pairs in node order, then
        value order); per node its first pair and count of pairs (distinct values)."""
        p = self.p
        rows = np.concatenate([self.rows[n] for n in nodes.tolist()]).astype(np.int64)
        local = np.repeat(np.arange(len(nodes), dtype=np.int64), self.sizes[nodes])
        size = len(p.domains[j])
        pairs, pair_of = _unique_keys(local * size + p.codes[rows, j], len(nodes) * size)
        pair_node = pairs // size
        distinct = np.bincount(pair_node, minlength=len(nodes))
        first = np.concatenate([[0], np.cumsum(distinct)[:-1]]).astype(np.int64)
        return rows, local, pair_of, pair_node, pairs % size, first, distinct

    def _table(self, pair_of: np.ndarray, npairs: int, values: np.ndarray, width: int, cnt):
        return np.bincount(pair_of * width + values, cnt, minlength=npairs * width).reshape(
            npairs, width
        )

    def _numeric(self, j: int, nodes: np.ndarray, base: np.ndarray, total: np.ndarray) -> None:
        """:meth:`TreeBuilder._numeric` for every node of ``nodes``: each cut between two
        consecutive values scored by information gain, the allowable ones (k rows and l
        values a side, then every model) tried best first, :data:`_TRIES` at most."""
        p, b = self.p, self.b
        rows, local, pair_of, pair_node, code, first, distinct = self._pairs(j, nodes)
        npairs = len(code)
        cnt = p.counts[rows]
        last = first + distinct - 1

        def running(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            """Each cut's left side (the node's pairs up to it) and right side (whole
            numbers: the order of the sums does not matter)."""
            cum = np.cumsum(table, axis=0)
            offset = np.concatenate([np.zeros((1, table.shape[1])), cum[:-1]])[first]
            left = cum - offset[pair_node]
            return left, (cum[last] - offset)[pair_node] - left

        left, right = running(self._table(pair_of, npairs, p.label[rows], b.nlab, cnt))  # type: ignore[index]
        tot = total[nodes][pair_node]
        wl, wr = left.sum(axis=1), right.sum(axis=1)
        gain = base[nodes][pair_node] - (wl / tot) * _entropy(left) - (wr / tot) * _entropy(right)
        ok = (wl >= self.k) & (wr >= self.k)
        ok[last] = False  # no cut after a node's last value
        if p.sens is not None and self.checker.needs_sensitive:
            # distinct sensitive values on each side: a cheap necessary test before the models
            sl, sr = running(self._table(pair_of, npairs, p.sens[rows], len(p.sens_labels), cnt))
            ok &= ((sl > 0).sum(axis=1) >= self.need) & ((sr > 0).sum(axis=1) >= self.need)
        pos = np.arange(npairs) - first[pair_node]  # the cut's place in its node
        # each node's cuts, best gain first (ties: in value order), allowable ones only
        allowed = np.flatnonzero(ok & (gain > 1e-12))
        order = allowed[np.lexsort((pos[allowed], -gain[allowed], pair_node[allowed]))]
        owner = pair_node[order]
        rank = np.arange(len(order)) - np.searchsorted(owner, owner)
        done = np.zeros(len(nodes), dtype=bool)
        row_pos = pos[pair_of]
        for t in range(_TRIES):
            at = order[rank == t]
            at = at[~done[pair_node[at]]]
            if not len(at):
                break
            cut = np.full(len(nodes), -1, dtype=np.int64)
            cut[pair_node[at]] = pos[at]
            sel = cut[local] >= 0
            side = (row_pos[sel] > cut[local[sel]]).astype(np.int64)
            sides, classes = _unique_keys(local[sel] * 2 + side, 2 * len(nodes))
            r = rows[sel]
            passed = self.checker.passes_grouped(
                classes, None if p.sens is None else p.sens[r], p.counts[r]
            )
            failed = np.bincount(sides // 2, ~passed, minlength=len(nodes)) > 0
            win = at[~failed[pair_node[at]]]
            if not len(win):
                continue
            node = nodes[pair_node[win]]
            split = _entropy(np.column_stack([wl[win], wr[win]]))
            self.gains[node, j] = gain[win]
            self.ratios[node, j] = np.where(split > 0, gain[win] / np.where(split > 0, split, 1), 0)
            self.thresholds[node, j] = code[win]
            done[pair_node[win]] = True

    def _discrete(self, j: int, nodes: np.ndarray, base: np.ndarray, total: np.ndarray) -> None:
        """:meth:`TreeBuilder._discrete` for every node of ``nodes``: one child per value,
        every child satisfying the models, scored by information gain and gain ratio."""
        p, b = self.p, self.b
        rows, local, pair_of, pair_node, code, first, distinct = self._pairs(j, nodes)
        sel = (distinct >= 2)[local]
        if not sel.any():
            return
        r = rows[sel]
        parts, classes = _unique_keys(pair_of[sel], len(code))
        passed = self.checker.passes_grouped(
            classes, None if p.sens is None else p.sens[r], p.counts[r]
        )
        good = (distinct >= 2) & ~(np.bincount(pair_node[parts], ~passed, minlength=len(nodes)) > 0)
        if not good.any():
            return
        cnt = p.counts[rows]
        npairs = len(code)
        w = np.bincount(pair_of, cnt, minlength=npairs).astype(float)
        lab = self._table(pair_of, npairs, p.label[rows], b.nlab, cnt)  # type: ignore[index]
        terms = w / total[nodes][pair_node] * _entropy(lab)
        gain = base[nodes] - _segment_sums(terms, first, distinct)
        split = _segment_entropy(w, first, distinct)
        node = nodes[good]
        self.gains[node, j] = gain[good]
        self.ratios[node, j] = np.where(
            split[good] > 0, gain[good] / np.where(split[good] > 0, split[good], 1), 0.0
        )

    def _grow(self) -> tuple[list[Node], np.ndarray]:
        """Each node's best split among the allowable ones with positive gain: those with at
        least the mean gain compete on gain ratio, then gain, then the first QI; the
        children of every split node, in order (the next level)."""
        p = self.p
        gains, ratios = self.gains, self.ratios
        n_nodes, m = gains.shape
        valid = ~np.isnan(gains)
        valid[valid] = gains[valid] > 1e-12
        count = valid.sum(axis=1)
        mean = np.zeros(n_nodes)
        for c in np.unique(count[count > 0]).tolist():
            sel = np.flatnonzero(count == c)
            # each node's valid gains in QI order: the mean of its list, as np.mean takes it
            mean[sel] = gains[sel][valid[sel]].reshape(len(sel), c).mean(axis=1)
        best = np.full(n_nodes, -1, dtype=np.int64)
        best_ratio = np.zeros(n_nodes)
        best_gain = np.zeros(n_nodes)
        for j in range(m):
            g = np.where(valid[:, j], gains[:, j], 0.0)
            eligible = valid[:, j] & (g >= mean - 1e-12)
            better = eligible & (
                (best < 0)
                | (ratios[:, j] > best_ratio)
                | ((ratios[:, j] == best_ratio) & (g > best_gain))
            )
            best[better], best_ratio[better], best_gain[better] = j, ratios[better, j], g[better]
        split = np.flatnonzero(best >= 0)
        if not len(split):
            return [], np.zeros(0, dtype=np.int64)
        # every split node's rows, each row's child (numeric: right of the threshold or
        # not; otherwise the rank of its value among the node's values)
        rows = np.concatenate([self.rows[n] for n in split.tolist()]).astype(np.int64)
        local = np.repeat(np.arange(len(split), dtype=np.int64), self.sizes[split])
        qi = best[split]
        codes = p.codes[rows, qi[local]]
        numeric = np.asarray([k == NUMERIC for k in p.kinds])[qi]
        thr = self.thresholds[split, qi]
        size = max(len(d) for d in p.domains) + 1
        key = np.where(numeric[local], (codes > thr[local]).astype(np.int64), codes)
        kids, child = _unique_keys(local * size + key, len(split) * size)
        order = np.argsort(child, kind="stable")  # each child's rows in their order
        bounds = np.flatnonzero(np.diff(child[order])) + 1
        child_rows = np.split(rows[order], bounds)
        kid_node = kids // size
        kid_value = kids % size
        used = self.used[split][kid_node] | np.where(
            numeric[kid_node], 0, np.left_shift(1, qi[kid_node])
        )
        children = [Node(r) for r in child_rows]
        first = np.searchsorted(kid_node, np.arange(len(split)))
        stops = np.append(first[1:], len(kids)).tolist()
        for i, (n, a, z) in enumerate(zip(split.tolist(), first.tolist(), stops, strict=True)):
            node = self.nodes[n]
            j = int(qi[i])
            node.qi, node.gain_ratio = j, float(ratios[n, j])
            if numeric[i]:
                node.threshold = int(thr[i])
            else:
                node.values = kid_value[a:z].tolist()
            node.children = children[a:z]
        return children, used.astype(np.int64)


def compliant_tree(points: Points, checker: Checker, rows: np.ndarray | None = None) -> Node:
    """The (k, l)-compliant decision tree of ``rows`` (default: all)."""
    return TreeBuilder(points, checker).grow(rows)


__all__ = ["Node", "TreeBuilder", "compliant_tree"]

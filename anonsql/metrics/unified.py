"""Seed 004's unified information-loss model (section 3.1) and its seven metrics (3.2).

A metric puts a weight on every edge ``(x, x')`` of every QI hierarchy (Definition 3). The
cost of generalizing ``v`` into an ancestor ``v'`` is the sum of the weights on the path
(Definition 4); the costs matrix is ``M(v, v') = cost(v, LCA(v, v'))`` (Definition 5); the
generalization cost of a table sums ``M(f, e) + M(e, f)`` over records and QIs (Definition 6);
the alteration is that cost over the cost of generalizing every value to the root, in
percent (Definition 7).

Since the generalized value ``f`` of ``e`` is an ancestor of ``e``, ``M(f, e) = 0`` and
``M(e, f) = cost(e, f) = W(e) - W(f)`` with ``W(v) = cost(v, root)``. The cost of a table is
therefore ``sum W(original) - sum W(generalized)``: two column sums, no pairing of rows.

Edge weights, with ``h`` the height of the QI's hierarchy (number of levels), ``lvl`` the
level, ``nl`` the number of leaves below a node and ``r`` the root (Definition 8 and 3.2):

* Distortion: ``(1 / (h - lvl(x'))) / sum_{i=1}^{h-1} 1/(h - i) * w1``
* NCP: ``(nl(x') - nl(x)) / nl(r)``
* Total: ``(lvl(x') - lvl(x)) / (h - 1)``
* LLM: ``(nl(x') - nl(x)) * w2``;  NLLM: ``(nl(x') - nl(x)) / nl(r) * w2``
* WLLM: ``(nl(x') - nl(x)) * w1``; WNLLM: ``(nl(x') - nl(x)) / nl(r) * w1``

with ``w1(Q_j) = 1 - (h_j - 1)^m / sum_i (h_i - 1)^m`` (m QIs) and ``w2(Q_j) = h_max / h_j``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from anonsql.errors import InputError
from anonsql.hierarchy.hierarchy import Hierarchy

METRICS = ("distortion", "ncp", "total", "llm", "nllm", "wllm", "wnllm")


def w1(heights: Sequence[int]) -> np.ndarray:
    """Seed 004 Definition 8, w1 (the 'wid' weighting)."""
    h = np.asarray(heights, dtype=np.float64)
    m = len(h)
    powered = (h - 1) ** m
    total = powered.sum()
    if total == 0:
        return np.zeros(m)
    return 1 - powered / total


def w2(heights: Sequence[int]) -> np.ndarray:
    """Seed 004 Definition 8, w2."""
    h = np.asarray(heights, dtype=np.float64)
    return h.max() / h


def edge_weights(metric: str, h: Hierarchy, j: int, heights: Sequence[int]) -> np.ndarray:
    """Weight of the edge from each node to its parent (0 for the root) for QI number ``j``."""
    if metric not in METRICS:
        raise InputError(f"unknown metric {metric!r}; use one of {', '.join(METRICS)}")
    height = h.height
    child = np.flatnonzero(h.parents >= 0)
    parent = h.parents[child]
    nl = h.leaf_counts.astype(np.float64)
    lost = nl[parent] - nl[child]
    out = np.zeros(h.size)
    if metric == "distortion":
        harmonic = sum(1.0 / (height - i) for i in range(1, height))
        inter = (1.0 / (height - h.levels[parent])) / harmonic if harmonic else 0 * lost
        out[child] = inter * w1(heights)[j]
    elif metric == "ncp":
        out[child] = lost / nl[h.root]
    elif metric == "total":
        out[child] = (h.levels[parent] - h.levels[child]) / (height - 1)
    elif metric == "llm":
        out[child] = lost * w2(heights)[j]
    elif metric == "nllm":
        out[child] = lost / nl[h.root] * w2(heights)[j]
    elif metric == "wllm":
        out[child] = lost * w1(heights)[j]
    else:  # wnllm
        out[child] = lost / nl[h.root] * w1(heights)[j]
    return out


def costs_to_root(parents: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``W(v) = cost(v, root)`` for every node of a tree given by parent links (any shape)."""
    n = len(parents)
    out = np.full(n, np.nan)

    def walk(v: int) -> float:
        path = []
        while not np.isfinite(out[v]):
            if parents[v] < 0:
                out[v] = 0.0
                break
            path.append(v)
            v = int(parents[v])
        for u in reversed(path):
            out[u] = weights[u] + out[int(parents[u])]
        return out[v]

    for v in range(n):
        if not np.isfinite(out[v]):
            walk(v)
    return out


def costs_matrix(parents: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Seed 004 Definition 5 for a tree of any shape: ``M[v, v'] = cost(v, LCA(v, v'))``."""
    n = len(parents)
    W = costs_to_root(np.asarray(parents), np.asarray(weights, dtype=np.float64))
    ancestors = []
    for v in range(n):
        chain = [v]
        while parents[chain[-1]] >= 0:
            chain.append(int(parents[chain[-1]]))
        ancestors.append(chain)
    M = np.zeros((n, n))
    for v in range(n):
        mine = ancestors[v]
        for u in range(n):
            theirs = set(ancestors[u])
            lca = next(a for a in mine if a in theirs)
            M[v, u] = W[v] - W[lca]
    return M


class UnifiedMetric:
    """One of the seven metrics over a set of QI hierarchies: node costs per QI."""

    def __init__(self, metric: str, hierarchies: Sequence[Hierarchy]) -> None:
        heights = [h.height for h in hierarchies]
        self.name = metric
        self.hierarchies = list(hierarchies)
        self.weights = [edge_weights(metric, h, j, heights) for j, h in enumerate(hierarchies)]
        self.to_root = [
            costs_to_root(h.parents, w) for h, w in zip(hierarchies, self.weights, strict=True)
        ]

    def table_cost(
        self,
        original: Sequence[np.ndarray],
        generalized: Sequence[np.ndarray],
        counts: np.ndarray | None = None,
    ) -> float:
        """Definition 6: cost of generalizing the original node ids into the generalized
        ones (one array per QI; ``counts`` weights rows of a histogram)."""
        total = 0.0
        for W, e, f in zip(self.to_root, original, generalized, strict=True):
            diff = W[e] - W[f]
            total += float(diff.sum() if counts is None else (diff * counts).sum())
        return total

    def worst_cost(self, original: Sequence[np.ndarray], counts: np.ndarray | None = None):
        """Cost of generalizing every value to the root (the denominator of Definition 7)."""
        total = 0.0
        for W, e in zip(self.to_root, original, strict=True):
            total += float(W[e].sum() if counts is None else (W[e] * counts).sum())
        return total

    def alteration(self, original, generalized, counts=None) -> float:
        """Definition 7, in percent."""
        worst = self.worst_cost(original, counts)
        return 0.0 if worst == 0 else 100.0 * self.table_cost(original, generalized, counts) / worst

"""The Greedy Anonymization Algorithm (GAA) of seed 004 (Algorithm 1, Definitions 15-17):
multidimensional recoding by merging equivalence classes at their lowest common ancestors.

While a class violates the model, a smallest violating class C_s is merged with the partner
the strategy selects; the merged class takes, per QI, the LCA of both classes' values, and
classes whose generalized values coincide are one class (they are one equivalence class of
the generalized table).

Choices the paper leaves open, fixed here so runs are deterministic:

* C_s is the violating class of smallest size, ties broken by the lexicographically smallest
  tuple of node ids; among a strategy's equally good partners the one with the
  lexicographically smallest node tuple is taken;
* the generalization cost of merging two classes is Definition 6's cost of their records,
  mu(C, C') = sum_j M_j(c_j, c'_j) + M_j(c'_j, c_j), with the costs matrices of Definition 5;
* l_div and t_clo of a merging (Definitions 15-16) are the values of the merged class
  (Definitions 11 and 14): the table-wide minimum/maximum over all other classes would be
  the same for almost every candidate and make the strategies indistinguishable;
* measures that are mathematically equal are compared with a relative tolerance of 1e-12.

Per step the work is a few vectorized gathers over the current classes (costs matrices and
LCA tables are precomputed per hierarchy); no matrix over pairs of classes or rows is built.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

from anonsql.data.histogram import Histogram
from anonsql.data.partition import Partition
from anonsql.errors import InputError
from anonsql.greedy.strategies import STRATEGIES, Strategy
from anonsql.hierarchy.hierarchy import Hierarchy
from anonsql.metrics.unified import UnifiedMetric

#: node counts up to which a hierarchy's pairwise cost and LCA tables are precomputed
DENSE_NODES = 4096


@dataclass
class GreedyModel:
    """Seed 004's anonymization models for GAA: k-anonymity, alone or with entropy
    l-diversity (Definition 10) or t-closeness for the L1 distance (Definition 13)."""

    k: int
    l: float | None = None  # noqa: E741
    t: float | None = None

    def describe(self) -> str:
        parts = [f"{self.k}-anonymity"]
        if self.l is not None:
            parts.append(f"entropy {self.l:g}-diversity")
        if self.t is not None:
            parts.append(f"{self.t:g}-closeness (L1)")
        return ", ".join(parts)


@dataclass
class GreedyResult:
    nodes: np.ndarray  # (classes, m) generalized node ids
    sizes: np.ndarray
    row_class: np.ndarray  # class of each histogram row
    merges: int
    strategy: str
    metric: str
    model: str
    sens_counts: np.ndarray | None = None

    @property
    def classes(self) -> int:
        return len(self.sizes)


class _QI:
    """Per-hierarchy tables: pairwise merge cost and LCA (dense when small)."""

    def __init__(self, h: Hierarchy, to_root: np.ndarray) -> None:
        self.h = h
        self.to_root = to_root
        self.dense = h.size <= DENSE_NODES
        if self.dense:
            ids = np.arange(h.size)
            lca = np.empty((h.size, h.size), dtype=np.int32)
            for a in range(h.size):
                lca[a] = h.lca(np.full(h.size, a), ids)
            self.lca_table = lca
            # M(a, b) + M(b, a) = cost(a, lca) + cost(b, lca) (Definitions 4-6)
            self.pair = to_root[:, None] + to_root[None, :] - 2.0 * to_root[lca]

    def cost(self, a: int, nodes: np.ndarray) -> np.ndarray:
        if self.dense:
            return self.pair[a][nodes]
        lca = self.h.lca(np.full(len(nodes), a), nodes)
        return self.to_root[a] + self.to_root[nodes] - 2.0 * self.to_root[lca]

    def lca(self, a: int, b: int) -> int:
        if self.dense:
            return int(self.lca_table[a, b])
        return int(self.h.lca(np.array([a]), np.array([b]))[0])


def _xlogx(x: np.ndarray) -> np.ndarray:
    """x ln x with 0 ln 0 = 0."""
    return np.where(x > 0, x * np.log(np.where(x > 0, x, 1.0)), 0.0)


def _ldiv(counts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """exp(entropy) of each row's sensitive distribution (Definition 11)."""
    p = counts / sizes[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    return np.exp(-terms.sum(axis=1))


def _tclo(counts: np.ndarray, sizes: np.ndarray, overall: np.ndarray) -> np.ndarray:
    """L1 distance of each row's sensitive distribution to the table's (Definition 14)."""
    return np.abs(counts / sizes[:, None] - overall[None, :]).sum(axis=1)


def gaa(
    hist: Histogram,
    model: GreedyModel,
    metric: str = "nllm",
    strategy: str = "s1",
    progress=None,
) -> GreedyResult:
    if strategy not in STRATEGIES:
        raise InputError(f"unknown strategy {strategy!r}; use one of {', '.join(STRATEGIES)}")
    strat: Strategy = STRATEGIES[strategy]
    rows = hist.rows
    if model.k < 1:
        raise InputError("k must be at least 1")
    if model.k > rows:
        raise InputError(f"k = {model.k} is larger than the table ({rows} rows)")
    needs_sens = model.l is not None or model.t is not None or strat.uses_sensitive
    if needs_sens and hist.sens is None:
        raise InputError(
            f"strategy {strategy} and l-diversity/t-closeness need a sensitive attribute"
        )
    um = UnifiedMetric(metric, hist.hierarchies)
    qis = [_QI(h, w) for h, w in zip(hist.hierarchies, um.to_root, strict=True)]
    m = len(qis)

    bottom = Partition.from_histogram(hist, tuple([0] * m))
    n = bottom.classes
    nodes = np.ascontiguousarray(bottom.nodes.astype(np.int32))
    sizes = bottom.sizes.astype(np.float64).copy()
    row_class = bottom.classes_of_rows(hist).copy()
    members: list[list[int]] = [[] for _ in range(n)]
    for r, c in enumerate(row_class):
        members[c].append(r)
    counts = overall = xlogx = None
    if hist.sens is not None:  # kept for the l_div / t_clo of the result even with S1
        q = len(hist.sens_labels)
        counts = np.zeros((n, q))
        np.add.at(counts, (bottom.pair_class, bottom.pair_value), bottom.pair_count)
        # sum over values of c ln c per class: with it the entropy of a merging needs only
        # the values of C_s (see _Context.ldiv)
        xlogx = _xlogx(counts).sum(axis=1)
        overall = hist.overall_distribution()

    slot_of = list(range(n))  # class id -> slot; ids are never reused
    id_at = list(range(n))  # slot -> class id
    key_to_id = {tuple(nodes[i].tolist()): i for i in range(n)}

    def violates(slot: int) -> bool:
        if sizes[slot] < model.k:
            return True
        if model.l is not None:
            lv = _ldiv(counts[slot : slot + 1], sizes[slot : slot + 1])[0]
            if lv < model.l * (1 - 1e-12):
                return True
        if model.t is not None:
            tv = _tclo(counts[slot : slot + 1], sizes[slot : slot + 1], overall)[0]
            if tv > model.t * (1 + 1e-12) + 1e-15:
                return True
        return False

    heap: list[tuple[float, tuple[int, ...], int]] = []
    for i in range(n):
        if violates(i):
            heap.append((sizes[i], tuple(nodes[i].tolist()), i))
    heapq.heapify(heap)
    alive = [True] * n
    merges = 0

    def remove(cid: int) -> None:
        nonlocal n
        slot = slot_of[cid]
        last = n - 1
        if slot != last:
            moved = id_at[last]
            nodes[slot] = nodes[last]
            sizes[slot] = sizes[last]
            if counts is not None:
                counts[slot] = counts[last]
                xlogx[slot] = xlogx[last]
            members[slot] = members[last]
            id_at[slot] = moved
            slot_of[moved] = slot
        members.pop()
        id_at.pop()
        n -= 1
        alive[cid] = False

    def absorb(cid: int, other: int) -> None:
        """Class ``other`` joins class ``cid`` (sizes, sensitive counts, rows) and goes."""
        s, o = slot_of[cid], slot_of[other]
        sizes[s] += sizes[o]
        if counts is not None:
            counts[s] += counts[o]
            xlogx[s] = _xlogx(counts[s]).sum()
        members[s].extend(members[o])
        remove(other)

    while heap:
        size_s, _key, cid = heapq.heappop(heap)
        if not alive[cid]:
            continue
        s = slot_of[cid]
        if sizes[s] != size_s or not violates(s):
            continue
        if n == 1:
            raise InputError(
                f"GAA cannot satisfy {model.describe()}: the whole table is one class and "
                f"still violates it"
            )
        others = np.ones(n, dtype=bool)
        others[s] = False
        cand = np.flatnonzero(others)
        view_nodes = nodes[:n]
        cost = None
        if strat.uses_cost:
            cost = np.zeros(n)
            for j, qi in enumerate(qis):
                cost += qi.cost(int(view_nodes[s, j]), view_nodes[:, j])
        ctx = _Context(s, cand, cost, counts, sizes, n, overall, xlogx)
        chosen = strat.select(ctx)
        if len(chosen) > 1:  # deterministic tie-break: smallest node tuple
            sub = view_nodes[chosen]
            chosen = chosen[np.lexsort(sub.T[::-1])]
        p = int(chosen[0])
        pid = id_at[p]
        # merge p into s: LCAs per QI, sizes and sensitive counts add up
        new = [qis[j].lca(int(nodes[s, j]), int(nodes[p, j])) for j in range(m)]
        del key_to_id[tuple(nodes[s].tolist())]
        del key_to_id[tuple(nodes[p].tolist())]
        nodes[s] = new
        absorb(cid, pid)
        merges += 1
        key = tuple(new)
        twin = key_to_id.get(key)
        if twin is not None:  # the merged class coincides with an existing one
            absorb(cid, twin)
        s = slot_of[cid]
        key_to_id[key] = cid
        if violates(s):
            heapq.heappush(heap, (sizes[s], key, cid))
        if progress is not None and merges % 256 == 0:
            # violating classes taken off the heap so far, of those and the ones left: the
            # share reaches 1 exactly when no class violates the model any more
            progress(merges, merges + len(heap))

    final_nodes = nodes[:n].astype(np.int64)
    out_rows = np.empty(len(hist.counts), dtype=np.int64)
    for slot in range(n):
        out_rows[members[slot]] = slot
    return GreedyResult(
        final_nodes,
        sizes[:n].astype(np.int64),
        out_rows,
        merges,
        strategy,
        metric,
        model.describe(),
        None if counts is None else counts[:n].copy(),
    )


@dataclass
class _Context:
    """What a strategy sees in one round: C_s's slot, the candidate slots, the merge costs
    and, lazily, the l_div / t_clo of each merging."""

    s: int
    cand: np.ndarray
    cost: np.ndarray | None
    counts: np.ndarray | None
    sizes: np.ndarray
    n: int
    overall: np.ndarray | None

    xlogx: np.ndarray | None = None

    def ldiv(self, idx: np.ndarray) -> np.ndarray:
        """exp(entropy) of each merging C_s + C. With c the counts and N the size of the
        merged class, entropy = ln N - (sum of c ln c) / N, and the sum differs from the
        candidate's own only on the values C_s holds: O(candidates x |values of C_s|)."""
        values = np.flatnonzero(self.counts[self.s])
        own = self.counts[np.ix_(idx, values)]
        merged = own + self.counts[self.s, values]
        total = self.xlogx[idx] - _xlogx(own).sum(axis=1) + _xlogx(merged).sum(axis=1)
        n = self.sizes[idx] + self.sizes[self.s]
        return np.exp(np.log(n) - total / n)

    def tclo(self, idx: np.ndarray) -> np.ndarray:
        merged = self.counts[idx] + self.counts[self.s]
        return _tclo(merged, self.sizes[idx] + self.sizes[self.s], self.overall)


__all__ = ["GreedyModel", "GreedyResult", "gaa"]

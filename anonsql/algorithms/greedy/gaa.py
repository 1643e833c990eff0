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
Each measure is computed only for the candidates a strategy asks about (S3 and S6 need the
cost of their few l_div- or t_clo-optimal partners only). With many sensitive values, the
t_clo of every merging is computed from the classes' non-zero sensitive counts (see
:class:`_Support`) instead of a dense (classes x values) pass.

The strategies that start from the cheapest partners (S1, S2, S5: Delta_mu over all classes)
do not scan every class per merge: :class:`_NearIndex` keeps, per QI, the classes holding each
node and finds the cheapest partners by branch and bound (a class's cost is a sum of
non-negative per-QI costs, so one QI's cost bounds it from below; see the class). The
partners found are the very set the full scan finds, so the merges and their order are the
same.
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from anonsql.algorithms.greedy.strategies import STRATEGIES, TOL, Strategy, _best
from anonsql.data.classes import Partition
from anonsql.data.histogram import Histogram
from anonsql.errors import InputError
from anonsql.hierarchy.hierarchy import Hierarchy
from anonsql.metrics.unified import UnifiedMetric

#: node counts up to which a hierarchy's pairwise cost and LCA tables are precomputed
DENSE_NODES = 4096
#: sensitive domains larger than this use the sparse t_clo of :class:`_Support` when a
#: strategy asks for more than SPARSE_MIN_CANDIDATES candidates (below, a dense pass over
#: (candidates x values) is cheaper than the per-entry gathers)
SPARSE_VALUES = 32
SPARSE_MIN_CANDIDATES = 256
#: tables up to this many rows precompute c ln c for every count c (see _Context.ldiv)
XLOGX_TABLE = 1 << 22
#: find the cheapest partners of S1, S2 and S5 through :class:`_NearIndex` (False: scan every
#: class per merge, the reference the index is tested against)
NEAR_INDEX = True
#: the index scans at most this share of the classes per merge; beyond it a full scan (one
#: vectorized pass) is cheaper than gathering the classes node by node
NEAR_SHARE = 0.25


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
        else:
            # preorder: each subtree is the range [pre[x], end[x]); sorting the ancestor
            # rows root level first puts a node (-1 below its level) before its descendants
            anc = h.ancestors
            order = np.lexsort(anc.T)
            self.pre = np.empty(h.size, dtype=np.int64)
            self.pre[order] = np.arange(h.size)
            self.end = self.pre + np.bincount(anc[anc >= 0], minlength=h.size)

    def cost(self, a: int, nodes: np.ndarray) -> np.ndarray:
        if self.dense:
            return self.pair[a][nodes]
        # the LCA of a and b is a's lowest ancestor whose preorder range holds b: the ranges
        # of a's ancestors are nested, so its place in a's chain is the number of ranges that
        # start after pre[b] plus the number that end at or before it (O(n log height),
        # where comparing whole ancestor rows is O(n height))
        chain = self._chain(a)
        if 4 * len(nodes) >= self.h.size:
            # many classes (a full scan): W(LCA(a, x)) for every node x by preorder, from
            # the root's range down to a's own (one slice each), then gathered
            w_lca = np.empty(self.h.size)
            for x in chain[::-1]:
                w_lca[self.pre[x] : self.end[x]] = self.to_root[x]
            w_lca = w_lca[self.pre[nodes]]
        else:
            p = self.pre[nodes]
            starts, ends = self.pre[chain[::-1]], self.end[chain]
            up = len(chain) - np.searchsorted(starts, p, side="right")
            up += np.searchsorted(ends, p, side="right")
            w_lca = self.to_root[chain[up]]
        return self.to_root[a] + self.to_root[nodes] - 2.0 * w_lca

    def _chain(self, a: int) -> np.ndarray:
        """Node a and its ancestors, the root last."""
        col = self.h.ancestors[a]
        return col[col >= 0]

    def lca(self, a: int, b: int) -> int:
        if self.dense:
            return int(self.lca_table[a, b])
        return int(self.h.lca(np.array([a]), np.array([b]))[0])

    def non_negative(self) -> bool:
        """Whether every pairwise cost is >= 0 (what :class:`_NearIndex`'s bound needs). It is
        when no node costs less to the root than its parent (non-negative edge weights, as
        all seven metrics have): then to_root[a] + to_root[b] >= 2 to_root[lca] holds in
        exact arithmetic and, rounding being monotone, in floating point too."""
        if self.dense:
            return bool(self.pair.min() >= 0.0)
        child = np.flatnonzero(self.h.parents >= 0)
        return bool((self.to_root[child] >= self.to_root[self.h.parents[child]]).all())


def _xlogx(x: np.ndarray) -> np.ndarray:
    """x ln x with 0 ln 0 = 0."""
    return np.where(x > 0, x * np.log(np.where(x > 0, x, 1.0)), 0.0)


def _rowsum(a: np.ndarray) -> np.ndarray:
    """``a.sum(axis=1)`` to the last bit, faster for few columns: numpy adds a row of fewer
    than 8 values from left to right, which column-by-column additions repeat."""
    if a.ndim != 2 or a.shape[1] == 0 or a.shape[1] >= 8:
        return a.sum(axis=1)
    out = a[:, 0].copy()
    for j in range(1, a.shape[1]):
        out += a[:, j]
    return out


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
    # the same node ids column by column (contiguous, index-sized): the per-round gathers
    # of the merge costs read these
    cols = np.ascontiguousarray(nodes.T.astype(np.intp))
    sizes = bottom.sizes.astype(np.float64).copy()
    row_class = bottom.classes_of_rows(hist).copy()
    members: list[list[int]] = [[] for _ in range(n)]
    for r, c in enumerate(row_class):
        members[c].append(r)
    counts = overall = xlogx = xlogx_table = None
    support = None
    if hist.sens is not None:  # kept for the l_div / t_clo of the result even with S1
        q = len(hist.sens_labels)
        counts = np.zeros((n, q))
        # the bottom's sparse sensitive counts (there is a sensitive attribute)
        assert bottom.pair_class is not None and bottom.pair_value is not None
        assert bottom.pair_count is not None
        np.add.at(counts, (bottom.pair_class, bottom.pair_value), bottom.pair_count)
        # sum over values of c ln c per class: with it the entropy of a merging needs only
        # the values of C_s (see _Context.ldiv)
        xlogx = _xlogx(counts).sum(axis=1)
        overall = hist.overall_distribution()
        if rows <= XLOGX_TABLE:
            # counts are whole numbers up to the table's size: c ln c read from a table is
            # _xlogx's very value (the same operations on the same number)
            xlogx_table = _xlogx(np.arange(rows + 1, dtype=np.float64))
        if strat.uses_sensitive and q > SPARSE_VALUES:
            support = _Support(counts)

    near = None
    if NEAR_INDEX and strat.cost_first and all(qi.non_negative() for qi in qis):
        near = _NearIndex(qis, nodes)
    slot_of = np.arange(n, dtype=np.intp)  # class id -> slot; ids are never reused
    id_at = list(range(n))  # slot -> class id
    key_to_id = {tuple(nodes[i].tolist()): i for i in range(n)}

    def violates(slot: int) -> bool:
        if sizes[slot] < model.k:
            return True
        if model.l is not None:
            assert counts is not None  # l-diversity reads the sensitive attribute
            lv = _ldiv(counts[slot : slot + 1], sizes[slot : slot + 1])[0]
            if lv < model.l * (1 - 1e-12):
                return True
        if model.t is not None:
            assert counts is not None and overall is not None  # t reads it too
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
        slot = int(slot_of[cid])
        last = n - 1
        if slot != last:
            moved = id_at[last]
            nodes[slot] = nodes[last]
            cols[:, slot] = cols[:, last]
            sizes[slot] = sizes[last]
            if counts is not None:
                assert xlogx is not None  # set with counts
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
        s, o = int(slot_of[cid]), int(slot_of[other])
        sizes[s] += sizes[o]
        if counts is not None:
            if support is not None:  # before the counts add up: it reads C_cid's values
                support.merge(cid, s, other, counts)
            counts[s] += counts[o]
            assert xlogx is not None  # set with counts
            xlogx[s] = _xlogx(counts[s]).sum()
        # the shorter list joins the longer (rows' order within a class is immaterial)
        if len(members[s]) < len(members[o]):
            members[s], members[o] = members[o], members[s]
        members[s].extend(members[o])
        remove(other)

    def cost_fn(s: int, count: int, idx: np.ndarray | None) -> np.ndarray:
        """mu(C_s, C) for the classes in slots ``idx`` (all ``count`` slots if None): the
        sum over the QIs, in QI order, so every subset gets the very same values."""
        out = None
        for j, qi in enumerate(qis):
            col = cols[j, :count] if idx is None else cols[j][idx]
            c = qi.cost(int(cols[j, s]), col)
            if out is None:
                out = np.array(c, dtype=np.float64)
            else:
                out += c
        if out is None:  # no QI: every merge is free
            out = np.zeros(count if idx is None else len(idx))
        return out

    while heap:
        size_s, _key, cid = heapq.heappop(heap)
        if not alive[cid]:
            continue
        s = int(slot_of[cid])
        if sizes[s] != size_s or not violates(s):
            continue
        if n == 1:
            raise InputError(
                f"GAA cannot satisfy {model.describe()}: the whole table is one class and "
                f"still violates it"
            )
        ctx = _Context(
            s, None, None, counts, sizes, n, overall, xlogx,
            cost_fn=cost_fn if strat.uses_cost else None, support=support, slot_of=slot_of,
            xlogx_table=xlogx_table,
        )  # fmt: skip
        if near is not None:
            key_s = cols[:, s].tolist()
            ctx.near = lambda: near.nearest(s, cid, key_s, n, cost_fn, slot_of)  # noqa: B023
        chosen = strat.select(ctx)
        if len(chosen) > 1:  # deterministic tie-break: smallest node tuple
            sub = nodes[chosen]
            chosen = chosen[np.lexsort(sub.T[::-1])]
        p = int(chosen[0])
        pid = id_at[p]
        # merge p into s: LCAs per QI, sizes and sensitive counts add up
        key_s, key_p = nodes[s].tolist(), nodes[p].tolist()
        new = [qis[j].lca(key_s[j], key_p[j]) for j in range(m)]
        del key_to_id[tuple(key_s)]
        del key_to_id[tuple(key_p)]
        if near is not None:
            near.remove(cid, key_s)
            near.remove(pid, key_p)
        nodes[s] = new
        cols[:, s] = new
        absorb(cid, pid)
        merges += 1
        key = tuple(new)
        twin = key_to_id.get(key)
        if twin is not None:  # the merged class coincides with an existing one
            if near is not None:
                near.remove(twin, new)
            absorb(cid, twin)
        s = int(slot_of[cid])
        key_to_id[key] = cid
        if near is not None:
            near.add(cid, new)
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


class _NearIndex:
    """Delta_mu(C_s, C(T)) of seed 004 Definition 16 (the partners of least merge cost)
    without costing every class: for each hierarchy node, the set of classes below it (a
    bit set over class ids), and a search that costs only the classes in a box of subtrees
    around C_s.

    mu(C_s, C) = sum_j P_j(s_j, c_j) is added in QI order from per-QI costs P_j >= 0, the
    tree distances of Definitions 4-6: P_j(a, b) = (W(a) - W(l)) + (W(b) - W(l)) with W the
    cost to the root and l = LCA(a, b). A floating-point sum of non-negative terms is at
    least each of its terms (rounding is monotone), so a class with mu(C_s, C) <= T has
    P_j(s_j, c_j) <= T on every QI, hence W(s_j) - W(l) <= T: the LCA is an ancestor of s_j
    at most T above it, and c_j lies in the subtree of the highest such ancestor A_j(T).
    Every class within T of C_s therefore lies in the box prod_j subtree(A_j(T)): the AND
    of the bit sets of the A_j(T), a few hundred machine words per QI.

    A search (:meth:`nearest`) starts T at C_s's cheapest step up on any QI and doubles it
    until the box holds another class, costs the classes in the box, and with b the least
    of their costs (an upper bound on the minimum) makes sure the box covers
    T' = b + TOL max(1, |b|), the widest cost a tie with the minimum can have in
    :func:`strategies._best`: if T' > T it costs the box of T' instead.
    The costs are computed exactly as by a full pass (the same gathers and additions,
    element by element), so the minimum and the classes within its tolerance are the full
    scan's, and the merges are the same. When the box holds many classes (NEAR_SHARE), as
    for a popped class far from all others, the caller scans every class instead.

    A merged class keeps the id of C_s, so ids stay below the initial number of classes.
    Upkeep per merge: the bits of the merged classes at their nodes' ancestors are cleared
    and the new class's set, a few vectorized updates."""

    #: bit-set memory at most (bytes): with larger hierarchies, only their upper nodes get
    #: a set, and a box uses the lowest ancestor of A_j(T) that has one (a larger box)
    BUDGET = 1 << 26

    def __init__(self, qis: list[_QI], nodes: np.ndarray) -> None:
        self.qis = qis
        n = len(nodes)
        self.words = max(1, (n + 63) // 64)
        # per QI, for each node met: see _chain
        self.chains: list[dict[int, tuple[list[float], list[int], list[int]]]] = [{} for _ in qis]
        # round-off allowance of the subtree test: P_j is computed as W(a) + W(b) - 2 W(l),
        # whose error is a few ulps of the largest W (not of P_j), W(s_j) - W(A) likewise
        self.slack = 1e-9 * (1.0 + max((float(q.to_root.max()) for q in qis), default=0.0))
        # rows: every non-root node while the budget allows, else from the top level down
        per_row = 8 * self.words
        self.row_of: list[np.ndarray] = []
        total = 0
        for q in qis:
            h = q.h
            row = np.full(h.size, -1, dtype=np.int64)
            keep = h.parents >= 0
            if (int(keep.sum()) + total) * per_row > self.BUDGET:
                for lv in range(int(h.levels.max()) + 1):
                    keep = (h.parents >= 0) & (h.levels >= lv)
                    if (int(keep.sum()) + total) * per_row <= self.BUDGET:
                        break
            ids = np.flatnonzero(keep)
            row[ids] = total + np.arange(len(ids))
            total += len(ids)
            self.row_of.append(row)
        self.bits = np.zeros((max(total, 1), self.words), dtype=np.uint64)
        for j, col in enumerate(nodes.T):
            values, inverse = np.unique(col, return_inverse=True)
            order = np.argsort(inverse, kind="stable")
            bounds = np.searchsorted(inverse[order], np.arange(len(values) + 1))
            for i, v in enumerate(values.tolist()):
                self._set_many(j, v, order[bounds[i] : bounds[i + 1]])

    def _set_many(self, j: int, v: int, ids: np.ndarray) -> None:
        """Set the bits of classes ``ids`` (all holding node v on QI j) at v's ancestors."""
        word = np.zeros(self.words, dtype=np.uint64)
        np.bitwise_or.at(word, ids >> 6, np.left_shift(np.uint64(1), (ids & 63).astype(np.uint64)))
        for r in self._chain(j, v)[1]:
            self.bits[r] |= word

    def _chain(self, j: int, v: int) -> tuple[list[float], list[int], list[int]]:
        """Node v's ancestors on QI j (itself first, the root last): how much less each
        costs to the root, W(v) - W(ancestor) (non-decreasing going up); the bit-set rows
        of those that have one (the root has none: every class lies below it); and for
        each, the row standing for its subtree, its own or its lowest ancestor's with one
        (-1: none, no bound)."""
        chain = self.chains[j].get(v)
        if chain is None:
            h, w, row = self.qis[j].h, self.qis[j].to_root, self.row_of[j]
            ups, rows = [], []
            a = v
            while a >= 0:
                ups.append(float(w[v] - w[a]))
                rows.append(int(row[a]))
                a = int(h.parents[a])
            cover = rows.copy()
            for i in range(len(cover) - 2, -1, -1):
                if cover[i] < 0:
                    cover[i] = cover[i + 1]
            chain = self.chains[j][v] = (ups, [r for r in rows if r >= 0], cover)
        return chain

    def _rows(self, key: list[int]) -> list[int]:
        return [r for j, v in enumerate(key) for r in self._chain(j, v)[1]]

    def add(self, cid: int, key: list[int]) -> None:
        self.bits[self._rows(key), cid >> 6] |= np.uint64(1 << (cid & 63))

    def remove(self, cid: int, key: list[int]) -> None:
        self.bits[self._rows(key), cid >> 6] &= np.uint64(~(1 << (cid & 63)) & (2**64 - 1))

    @staticmethod
    def _rows_at(chains: list, t: float, skip: int = -1) -> list[int]:
        """The rows of the A_j(T) for T = t (A_j(T) is the last ancestor with up <= t), all
        QIs but ``skip``; none for a QI whose A_j(T) is the root."""
        rows = []
        for j, (ups, _, cover) in enumerate(chains):
            r = cover[bisect_right(ups, t) - 1]
            if r >= 0 and j != skip:
                rows.append(r)
        return rows

    def _and(self, rows: list[int]) -> np.ndarray:
        return self.bits[rows[0]] if len(rows) == 1 else np.bitwise_and.reduce(self.bits[rows])

    def _box(self, chains: list, t: float, limit: float) -> np.ndarray | None:
        """The ids of the classes in the box of subtrees for T = t (C_s's among them), or
        None when they are too many to cost one by one."""
        t += self.slack
        rows = self._rows_at(chains, t)
        if not rows:
            return None
        acc = self._and(rows)
        ids = self._ids(acc)
        if len(ids) <= limit:
            return ids
        # too many: cut the box along the QI j whose bound is loosest (the largest
        # W(s_j) - W(A_j(T))). A class whose LCA with s_j is s_j's ancestor number i costs
        # at least ups[i] on QI j, leaving T - ups[i] to the others: the union over i of
        # subtree(ancestor i) x the box of T - ups[i] on the other QIs holds every class
        # within T, and is much smaller when QI j's steps are large
        j = max(range(len(chains)), key=lambda i: chains[i][0][bisect_right(chains[i][0], t) - 1])
        ups, _, cover = chains[j]
        acc = np.zeros(self.words, dtype=np.uint64)
        for i in range(bisect_right(ups, t)):
            rows = self._rows_at(chains, t - ups[i], skip=j)
            if cover[i] >= 0:
                rows.append(cover[i])
            if not rows:
                return None
            acc |= self._and(rows)
        ids = self._ids(acc)
        return ids if len(ids) <= limit else None

    @staticmethod
    def _ids(acc: np.ndarray) -> np.ndarray:
        """The positions of the set bits of ``acc``."""
        words = np.flatnonzero(acc)
        bits = np.unpackbits(acc[words].view(np.uint8), bitorder="little").reshape(-1, 64)
        w, b = np.nonzero(bits)
        return words[w] * 64 + b

    def nearest(self, s: int, cid: int, key: list[int], n: int, cost_fn,
                slot_of: np.ndarray) -> np.ndarray | None:  # fmt: skip
        """The slots of Delta_mu(C_s, C(T)), or None when a full scan is the cheaper way."""
        limit = NEAR_SHARE * n
        chains = [self._chain(j, v) for j, v in enumerate(key)]
        steps = sorted({u for ups, _, _ in chains for u in ups if u > 0.0})
        if not steps:
            return None
        # from the cheapest step up on any QI, doubling: a box grows with T, and a small one
        # that holds another class gives a bound b that keeps the next box small
        t = steps[0]
        while True:
            box = self._box(chains, t, limit)
            if box is None:
                return None
            if len(box) > 1:  # C_s itself is in its box
                break
            if t >= steps[-1]:  # the box is the whole table and holds C_s only
                return None
            t = max(2.0 * t, steps[bisect_right(steps, t)])
        box = box[box != cid]
        slots = slot_of[box]
        costs = cost_fn(s, n, slots)
        b = float(costs.min())
        wide = b + TOL * max(1.0, abs(b))
        if wide > t:  # the box may miss classes within the tolerance of the minimum
            box = self._box(chains, wide, limit)
            if box is None:
                return None
            box = box[box != cid]
            slots = slot_of[box]
            costs = cost_fn(s, n, slots)
        return slots[_best(costs)]


class _Support:
    """The classes' non-zero sensitive counts as entries (class id, value), for the t_clo
    of every merging when the sensitive domain is large.

    Definition 14's L1 distance between two distributions is twice the mass one has in
    excess of the other: t_clo(C) = (2 / N) sum_v max(c_v - N p_v, 0), and only values with
    c_v > 0 contribute. For the merging of C_s with C (N = |C_s| + |C|), the values C_s holds
    are read densely over all candidates, and those it lacks from each candidate's own
    entries: O(candidates x |values of C_s| + entries) per round instead of O(candidates x
    values). An entry of a class that joins another class holding the same value is
    dropped (the value keeps one entry per class)."""

    def __init__(self, counts: np.ndarray) -> None:
        cls, val = np.nonzero(counts)  # row-major: grouped by class
        self.cid = cls.astype(np.intp)
        self.val = val.astype(np.intp)
        self.live = np.ones(len(cls), dtype=bool)
        bounds = np.searchsorted(cls, np.arange(len(counts) + 1))
        self.of = [list(range(bounds[i], bounds[i + 1])) for i in range(len(counts))]

    def merge(self, cid: int, slot: int, other: int, counts: np.ndarray) -> None:
        """Class ``other``'s entries join class ``cid`` (in ``slot``; counts not yet added)."""
        e = np.asarray(self.of[other], dtype=np.intp)
        dup = counts[slot, self.val[e]] > 0
        self.live[e[dup]] = False
        keep = e[~dup]
        self.cid[keep] = cid
        mine, theirs = self.of[cid], keep.tolist()
        if len(mine) < len(theirs):
            mine, theirs = theirs, mine
        mine.extend(theirs)
        self.of[cid] = mine
        self.of[other] = []

    def tclo(self, ctx: _Context) -> np.ndarray:
        """t_clo of C_s merged with each class, for all ``ctx.n`` slots (C_s's own is
        meaningless)."""
        s, n, counts, overall = ctx.s, ctx.n, ctx.counts, ctx.overall
        # the support is kept for the strategies that read the sensitive attribute
        assert counts is not None and overall is not None and ctx.slot_of is not None
        size = ctx.sizes[:n] + ctx.sizes[s]
        held = np.flatnonzero(counts[s])
        merged = counts[:n, held] + counts[s, held]
        excess = np.maximum(merged - size[:, None] * overall[held], 0.0).sum(axis=1)
        in_s = np.zeros(len(overall), dtype=bool)
        in_s[held] = True
        sel = np.flatnonzero(self.live & ~in_s[self.val])
        val = self.val[sel]
        slot = ctx.slot_of[self.cid[sel]]
        x = np.maximum(counts[slot, val] - size[slot] * overall[val], 0.0)
        excess += np.bincount(slot, weights=x, minlength=n)[:n]
        return 2.0 * excess / size


class _Context:
    """What a strategy sees in one round: C_s's slot, the candidate slots and, computed on
    demand for the candidates asked about, the merge costs and the l_div / t_clo of each
    merging. A measure is the same number for a candidate whichever subset it is computed
    for (row by row, in the same order)."""

    def __init__(
        self,
        s: int,
        cand: np.ndarray | None,  # None: built when a strategy asks (cand)
        cost: np.ndarray | None,
        counts: np.ndarray | None,
        sizes: np.ndarray,
        n: int,
        overall: np.ndarray | None,
        xlogx: np.ndarray | None = None,
        cost_fn=None,
        support: _Support | None = None,
        slot_of: np.ndarray | None = None,
        xlogx_table: np.ndarray | None = None,
    ) -> None:
        self.s, self._cand, self.counts, self.sizes = s, cand, counts, sizes
        self.n, self.overall, self.xlogx = n, overall, xlogx
        self._cost, self._cost_fn = cost, cost_fn
        self.support, self.slot_of = support, slot_of
        self.xlogx_table = xlogx_table
        #: the index's search for the cheapest partners (None: scan), see nearest()
        self.near: Callable[[], np.ndarray | None] | None = None

    @property
    def cand(self) -> np.ndarray:
        """Every slot but C_s's (built when a strategy asks: the index's searches do not)."""
        if self._cand is None:
            self._cand = np.delete(np.arange(self.n, dtype=np.intp), self.s)
        return self._cand

    def nearest(self) -> np.ndarray:
        """Delta_mu(C_s, C(T)): the slots of the partners of least merge cost, through the
        index when there is one and it is the cheaper way, else by costing every class."""
        if self.near is not None:
            found = self.near()
            if found is not None:
                return found
        # every slot costed: C_s's own entry set to +inf leaves the very minimum and ties
        # of the other slots, without copying out the candidates
        cost = self.cost
        own = cost[self.s]
        cost[self.s] = np.inf
        try:
            return _best(cost)
        finally:
            cost[self.s] = own

    def _xlogx(self, x: np.ndarray) -> np.ndarray:
        if self.xlogx_table is None:
            return _xlogx(x)
        return self.xlogx_table[x.astype(np.intp)]

    @property
    def cost(self) -> np.ndarray:
        """mu(C_s, C) for every slot (indexable by candidate slots)."""
        if self._cost is None:
            self._cost = self._cost_fn(self.s, self.n, None)
        return self._cost

    def cost_of(self, idx: np.ndarray) -> np.ndarray:
        if self._cost is not None or 4 * len(idx) >= self.n:
            return self.cost[idx]
        return self._cost_fn(self.s, self.n, idx)

    def _rows(self, idx: np.ndarray) -> tuple[np.ndarray | slice, np.ndarray | None]:
        """Rows to compute on, and the positions of ``idx`` among them: for many
        candidates all slots (a view, no copy), else the candidates' rows."""
        if 2 * len(idx) >= self.n:
            return slice(0, self.n), idx
        return idx, None

    def ldiv(self, idx: np.ndarray) -> np.ndarray:
        """exp(entropy) of each merging C_s + C. With c the counts and N the size of the
        merged class, entropy = ln N - (sum of c ln c) / N, and the sum differs from the
        candidate's own only on the values C_s holds: O(candidates x |values of C_s|)."""
        rows, pick = self._rows(idx)
        # asked by the strategies that read the sensitive attribute: its counts are kept
        assert self.counts is not None and self.xlogx is not None
        values = np.flatnonzero(self.counts[self.s])
        own = self.counts[rows][:, values] if pick is not None else self.counts[np.ix_(idx, values)]
        merged = own + self.counts[self.s, values]
        total = self.xlogx[rows] - _rowsum(self._xlogx(own)) + _rowsum(self._xlogx(merged))
        n = self.sizes[rows] + self.sizes[self.s]
        out = np.exp(np.log(n) - total / n)
        return out if pick is None else out[pick]

    def tclo(self, idx: np.ndarray) -> np.ndarray:
        if self.support is not None and len(idx) >= SPARSE_MIN_CANDIDATES:
            return self.support.tclo(self)[idx]
        rows, pick = self._rows(idx)
        assert self.counts is not None and self.overall is not None  # as ldiv
        # _tclo's operations, in place
        merged = self.counts[rows] + self.counts[self.s]
        merged /= (self.sizes[rows] + self.sizes[self.s])[:, None]
        merged -= self.overall[None, :]
        np.abs(merged, out=merged)
        out = _rowsum(merged)
        return out if pick is None else out[pick]


__all__ = ["GreedyModel", "GreedyResult", "gaa"]

"""t-closeness (Li et al.): the distribution of the sensitive attribute in each class is at
distance at most t from its distribution in the whole table.

Distances between a class distribution p and the table's distribution q over m values:

* equal-distance EMD (Li et al., equal ground distance): ``1/2 * sum |p_i - q_i|``;
* ordered-distance EMD (Li et al., numeric/ordered values, ground distance |i-j|/(m-1)):
  ``1/(m-1) * sum_i |sum_{j<=i} (p_j - q_j)|`` with values ranked numerically when every value
  is a number (else lexically after the numbers; see :func:`sensitive_order`);
* hierarchical EMD (Li et al., ground distance = level of the LCA / top level of the
  sensitive attribute's hierarchy): ``sum over inner nodes N of level(N)/H *
  min(pos_extra(N), neg_extra(N))``;
* L1 (seed 004 Definitions 12-14): ``sum |p_i - q_i|``, the measure ``t_clo`` of seed 004 is
  its maximum over classes.

Monotonicity (every variant). Without suppression: monotone. Each distance is a convex
function of the class distribution p for the fixed table distribution q (an EMD is the
optimum of a transport problem whose constraints are linear in p; L1 is a norm), and a union's
distribution is the size-weighted mixture of its classes', so its distance is at most the
weighted mean of theirs, <= t when each is (Li et al.). Not monotone with suppression: each
distance is a function of p - q homogeneous of degree one, so a class A of a records
distributed as q (distance 0) merged with a class B of b records at distance d > t gives a class
at distance b * d / (a + b), which fails once b * d > t * (a + b): a node with classes A and B
is anonymous for a limit of b records, its generalization merging them suppresses a + b.
"""

from __future__ import annotations

import numpy as np

from anonsql.errors import InputError
from anonsql.hierarchy.hierarchy import Hierarchy
from anonsql.models.base import EPS, ClassStats, PrivacyModel, sensitive_order

_CHUNK_CELLS = 4_000_000  # dense (classes x values) blocks are computed in chunks of this size


def _chunks(n_rows: int, width: int):
    step = max(1, _CHUNK_CELLS // max(width, 1))
    for start in range(0, n_rows, step):
        yield start, min(n_rows, start + step)


class _TCloseness(PrivacyModel):
    reads_distribution = True
    needs_sensitive = True
    monotone_without_suppression = True  # convex distances (module docstring)
    monotone_with_suppression = False  # a merge with a far class fails (module docstring)

    def __init__(self, t: float) -> None:
        if isinstance(t, bool) or not isinstance(t, (int, float, np.floating)) or not 0 <= t <= 1:
            raise InputError(f"t must be a number in [0, 1], got {t!r}")
        self.t = float(t)

    def passes(self, values: np.ndarray) -> np.ndarray:
        return values <= self.t + EPS

    def sql_pass(self) -> str:
        return f"value <= {self.t + EPS!r}"

    def _dense_diff(self, stats: ClassStats, lo: int, hi: int) -> np.ndarray:
        """(p - q) for classes lo..hi-1 over every sensitive value."""
        # called after require_sensitive: the pairs, vals and the table's distribution are set
        assert stats.pair_class is not None and stats.pair_value is not None
        assert stats.pair_count is not None and stats.vals is not None
        assert stats.overall is not None
        sel = (stats.pair_class >= lo) & (stats.pair_class < hi)
        d = np.zeros((hi - lo, len(stats.overall)))
        cls = stats.pair_class[sel]
        d[cls - lo, stats.pair_value[sel]] = stats.pair_count[sel] / stats.vals[cls]
        return d - stats.overall[None, :]


class EqualDistanceEMD(_TCloseness):
    name = "equal-emd"

    def class_values(self, stats: ClassStats) -> np.ndarray:
        return 0.5 * _l1(stats)

    def sql_template(self) -> tuple[str, dict]:
        return "models/equal_emd", {}

    def describe(self) -> str:
        return f"{self.t:g}-closeness (equal-distance EMD)"


class L1Closeness(_TCloseness):
    name = "l1"

    def class_values(self, stats: ClassStats) -> np.ndarray:
        return _l1(stats)

    def sql_template(self) -> tuple[str, dict]:
        return "models/l1", {}

    def describe(self) -> str:
        return f"{self.t:g}-closeness (L1 distance, Mauger et al.)"


def _l1(stats: ClassStats) -> np.ndarray:
    # sum over all values of |p - q| = sum over present values (|p - q| - q) + sum of all q
    stats.require_sensitive("t-closeness")
    assert stats.overall is not None and stats.pair_class is not None  # required just above
    q = stats.overall[stats.pair_value]
    part = np.abs(stats.shares() - q) - q
    return np.bincount(stats.pair_class, part, minlength=stats.classes) + stats.overall.sum()


class OrderedDistanceEMD(_TCloseness):
    name = "ordered-emd"

    def class_values(self, stats: ClassStats) -> np.ndarray:
        stats.require_sensitive(self.name)
        assert stats.overall is not None  # required just above
        m = len(stats.overall)
        out = np.zeros(stats.classes)
        if m <= 1:
            return out
        order = np.argsort(sensitive_order(stats.labels or [str(i) for i in range(m)]))
        for lo, hi in _chunks(stats.classes, m):
            d = self._dense_diff(stats, lo, hi)[:, order]
            out[lo:hi] = np.abs(np.cumsum(d, axis=1)).sum(axis=1) / (m - 1)
        return out

    def sql_template(self) -> tuple[str, dict]:
        return "models/ordered_emd", {}

    def describe(self) -> str:
        return f"{self.t:g}-closeness (ordered-distance EMD)"


class HierarchicalEMD(_TCloseness):
    name = "hierarchical-emd"

    def __init__(self, t: float, hierarchy: Hierarchy | str | None = None) -> None:
        super().__init__(t)
        self.hierarchy = hierarchy

    @property
    def hierarchy_name(self) -> str:
        if self.hierarchy is None:
            raise InputError("hierarchical EMD needs a hierarchy for the sensitive attribute")
        return self.hierarchy if isinstance(self.hierarchy, str) else self.hierarchy.name

    def class_values(self, stats: ClassStats) -> np.ndarray:
        stats.require_sensitive(self.name)
        h = stats.sensitive_hierarchy
        if h is None:
            if isinstance(self.hierarchy, Hierarchy):
                h = self.hierarchy
            else:
                raise InputError("hierarchical EMD needs the sensitive attribute's hierarchy")
        # the labels come with the sensitive attribute (required above)
        assert stats.labels is not None
        tree = self._tree(h, stats.labels)
        # the pairs and the table's distribution are set (required above)
        assert stats.pair_class is not None and stats.pair_value is not None
        assert stats.pair_count is not None and stats.vals is not None
        assert stats.overall is not None
        out = np.zeros(stats.classes)
        for lo, hi in _chunks(stats.classes, h.size):
            out[lo:hi] = tree.costs(stats, lo, hi)
        return out

    def _tree(self, h: Hierarchy, labels: list[str]) -> _EMDTree:
        """The hierarchy's layout for :class:`_EMDTree`, kept for the next node (the search
        asks with the same hierarchy and labels every time)."""
        cached = self.__dict__.get("_emd_tree")
        if cached is not None and cached[0] is h and cached[1] == labels:
            return cached[2]
        missing = h.missing(labels)
        if missing:
            raise InputError(f"sensitive values missing from hierarchy {h.name!r}: {missing[:10]}")
        tree = _EMDTree(h, np.array([h.leaf(v) for v in labels], dtype=np.int64))
        self.__dict__["_emd_tree"] = (h, list(labels), tree)
        return tree

    def sql_template(self) -> tuple[str, dict]:
        top = (
            self.hierarchy.top_level if isinstance(self.hierarchy, Hierarchy) else None
        )  # filled by the compiler from the stored hierarchy when None
        return "models/hierarchical_emd", {"h": self.hierarchy_name, "top": top}

    def describe(self) -> str:
        return f"{self.t:g}-closeness (hierarchical EMD)"


class _EMDTree:
    """Hierarchical EMD of many classes at once, level by level as Li et al. define it, with
    one row per hierarchy node and one column per class (node-major).

    Each level's children are gathered into a (parents x children x classes) block, padded
    with a row of zeros where a parent has fewer children, and summed over the children:
    a handful of whole-array operations per level, where the scatter-adds this replaced
    cost a dozen numpy calls per level (the lattice search assesses hundreds of nodes of a
    few hundred classes each: the calls, not the arithmetic, are the cost). Summed along
    the middle axis, each parent's children are added one after the other in node order, as
    the scatter-adds did, and adding the padding's zeros changes nothing, so the distances
    are the same to the last bit (the tests compare them)."""

    def __init__(self, h: Hierarchy, leaf_of_value: np.ndarray) -> None:
        self.size = h.size
        self.top = h.top_level
        self.leaf_of_value = leaf_of_value
        # per level: the parents of its children, each parent's children (node order; the
        # padding points at the zero row past the nodes), and where the parents stand among
        # the level's nodes (a childless node of the level costs nothing)
        self.levels: list[tuple] = []
        for level in range(1, self.top + 1):
            children = np.flatnonzero(h.levels == level - 1)
            if not len(children):
                continue
            parents, slot = np.unique(h.parents[children], return_inverse=True)
            per = np.bincount(slot, minlength=len(parents))
            block = np.full((len(parents), int(per.max())), h.size, dtype=np.int64)
            order = np.argsort(slot, kind="stable")
            starts = np.cumsum(per) - per
            rank = np.arange(len(children)) - starts[slot[order]]
            block[slot[order], rank] = children[order]
            nodes = np.flatnonzero(h.levels == level)
            at = np.searchsorted(nodes, parents)
            inside = (at < len(nodes)) & (nodes[np.minimum(at, len(nodes) - 1)] == parents)
            # the usual case: the parents are the level's nodes, in order
            whole = len(parents) == len(nodes) and bool(inside.all())
            self.levels.append(
                (level / self.top, parents, block, len(nodes), at[inside], inside, whole)
            )

    def costs(self, stats: ClassStats, lo: int, hi: int) -> np.ndarray:
        """The distance of classes lo..hi-1."""
        assert stats.pair_class is not None and stats.pair_value is not None
        assert stats.pair_count is not None and stats.vals is not None
        assert stats.overall is not None
        # at least two columns: with one, numpy would drop the class axis and sum each
        # parent's children pairwise rather than one after the other
        width = max(hi - lo, 2)
        if lo == 0 and hi == stats.classes:
            cls, value, count = stats.pair_class, stats.pair_value, stats.pair_count
        else:
            sel = (stats.pair_class >= lo) & (stats.pair_class < hi)
            cls, value, count = stats.pair_class[sel], stats.pair_value[sel], stats.pair_count[sel]
        # p - q at the leaves (0 - q where the class lacks the value, 0 on leaves no value of
        # the table reaches); one more row of zeros, the padding of the children's blocks
        extra = np.zeros((self.size + 1, width))
        extra[self.leaf_of_value[value], cls - lo] = count / stats.vals[cls]
        extra[self.leaf_of_value] -= stats.overall[:, None]
        cost = np.zeros(width)
        last = len(self.levels) - 1
        for i, (weight, parents, block, n_nodes, at, inside, whole) in enumerate(self.levels):
            child = extra[block]
            pos = np.maximum(child, 0)
            # max(-x, 0) exactly: x - x = 0 where x > 0, 0 - x = -x elsewhere
            neg = (pos - child).sum(axis=1)
            pos = pos.sum(axis=1)
            if i < last:  # the top level's net surplus is read by no parent
                extra[parents] = child.sum(axis=1)
            if whole:
                least = np.minimum(pos, neg)
            else:
                least = np.zeros((n_nodes, width))
                least[at] = np.minimum(pos[inside], neg[inside])
            if n_nodes == 1:  # the root's level: its one term is the sum
                cost += weight * least[0]
                continue
            # summed over the level's nodes per class as a (classes x nodes) array, the
            # layout (and so the order of the additions) of the sums this replaced
            cost += weight * np.ascontiguousarray(least.T).sum(axis=1)
        return cost[: hi - lo]

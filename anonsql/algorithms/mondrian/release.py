"""What a partitioning releases: per partition and QI, a label and a node id, and the
recoding (original QI tuple -> labels, node ids) the one output writer stores.

Labels (seed 003 section II: "the interval between the minimum and maximum values ... for
continuous attributes, and ... the set comprising all the values for categorical ones"):

* numeric QI: ``[min, max]`` (the values as the source writes them), or the value itself
  when the partition holds one value;
* categorical QI: ``{a, b, c}`` in value order, or the value itself;
* QI with a hierarchy: the label of the values' lowest common ancestor.

Node ids identify a QI's released label: the hierarchy's node id for hierarchy QIs; for the
others the rank of the label among the run's labels of that QI (intervals by (min, max), sets
by their sorted values). Equal labels get equal ids, so the output's guard, which groups the
rows by node ids, tests exactly the classes a reader sees (rows with equal released QIs), as
``anonsql check`` on the released table does. Two partitions of *different* groups (TA_DA's
tree leaves or clusters, or different data controllers) can release equal labels; they then
form one released class, which the guard tests as such.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from anonsql.algorithms.recoding import Coded, TableRecoding
from anonsql.data.points import CATEGORICAL, HIERARCHY, NUMERIC, Points, row_ids


@dataclass
class PartitionKeys:
    """What every partition releases, computed for all partitions at once from each
    histogram row's partition (no Python step per partition: a 10 M-row table makes some
    600,000 of them).

    Partitions are numbered 0..P-1 in the order of the numbers they came with (the list's
    order on the in-memory path, the engine's numbers on the other)."""

    #: each histogram row's partition (0..P-1)
    part: np.ndarray
    #: per partition and QI, the node id of the released label: the hierarchy's node id, or
    #: the label's rank among the run's labels of that QI
    nodes: np.ndarray
    #: per QI, each node id's label (object array indexed by node id)
    labels: list[np.ndarray]
    #: per partition and QI, the released range in the units of Mondrian's normalized width
    #: (numbers: max - min; categorical values: distinct values - 1; hierarchy values:
    #: leaves under the LCA - 1)
    widths: np.ndarray

    @property
    def count(self) -> int:
        return len(self.nodes)


def part_of_rows(rows: int, partitions: list[np.ndarray]) -> np.ndarray:
    """Each of ``rows`` histogram rows' partition (its index in ``partitions``), checking
    that the partitions are non-empty and cover every row once."""
    if not partitions:
        return np.zeros(0, dtype=np.int64)
    sizes = np.asarray([len(r) for r in partitions], dtype=np.int64)
    if (sizes == 0).any():
        raise AssertionError("an empty partition")
    out = np.full(rows, -1, dtype=np.int64)
    out[np.concatenate(partitions)] = np.repeat(np.arange(len(partitions), dtype=np.int64), sizes)
    if (out < 0).any() or int(sizes.sum()) != rows:
        raise AssertionError("the partitions do not cover every row once")
    return out


def partition_keys(points: Points, part_of_row: np.ndarray) -> PartitionKeys:
    """Per partition and QI the released value's node id, label and width, vectorized over
    the partitions (labels are formatted once per distinct released value, not per
    partition)."""
    n = len(points.counts)
    if len(part_of_row) != n:
        raise AssertionError("the partitions do not cover every row")
    part = _dense(part_of_row)
    count = int(part.max()) + 1 if n else 0
    m = points.width
    nodes = np.zeros((count, m), dtype=np.int64)
    widths = np.zeros((count, m), dtype=np.float64)
    labels: list[np.ndarray] = [np.zeros(0, dtype=object) for _ in range(m)]
    if n == 0:
        return PartitionKeys(part, nodes, labels, widths)
    order = None  # the rows grouped by partition, for the reductions per partition
    starts = np.concatenate([[0], np.cumsum(np.bincount(part, minlength=count))[:-1]])
    for j in range(m):
        kind = points.kinds[j]
        if kind == CATEGORICAL:
            # counted per (partition, code): the rows' order does not matter
            nodes[:, j], widths[:, j], labels[j] = _categorical_keys(
                points, j, points.codes[:, j], part, count
            )
            continue
        if order is None:
            order = _grouping_order(part, count)
        keys = _hierarchy_keys if kind == HIERARCHY else _numeric_keys
        nodes[:, j], widths[:, j], labels[j] = keys(points, j, points.codes[order, j], starts)
    return PartitionKeys(part, nodes, labels, widths)


def _dense(part_of_row: np.ndarray) -> np.ndarray:
    """Partition numbers made 0..P-1, in their order (the numbers both callers pass are so
    already: then they are returned as they are)."""
    if len(part_of_row) == 0:
        return part_of_row.astype(np.int64)
    low, high = int(part_of_row.min()), int(part_of_row.max())
    if low >= 0 and high < 4 * len(part_of_row):
        present = np.bincount(part_of_row, minlength=high + 1) > 0
        if present.all():
            return part_of_row.astype(np.int64, copy=False)
        return (np.cumsum(present) - 1)[part_of_row]
    return np.unique(part_of_row, return_inverse=True)[1].ravel().astype(np.int64)


def _grouping_order(part: np.ndarray, count: int) -> np.ndarray:
    """``np.argsort(part, kind="stable")`` for partition numbers 0..count-1: by radix sorts
    of 16-bit digits (numpy sorts 16-bit integers by counting), a third faster than its
    comparison sort of int64 on millions of rows."""
    if count > 1 << 32:
        return np.argsort(part, kind="stable")
    order = np.argsort((part & 0xFFFF).astype(np.uint16), kind="stable")
    if count > 1 << 16:
        # least significant digit first: a stable sort by the high digit keeps the low order
        order = order[np.argsort((part[order] >> 16).astype(np.uint16), kind="stable")]
    return order


def _hierarchy_keys(
    points: Points, j: int, codes: np.ndarray, starts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The lowest common ancestor of every partition's leaves: the lowest level on which the
    partition's ancestors are one node (its smallest and largest ancestor ids agree)."""
    h = points.hierarchies[j]
    leaves = points.leaves[j]
    assert h is not None and leaves is not None  # a hierarchy QI has both
    leaf = leaves[codes]
    node = np.full(len(starts), -1, dtype=np.int64)
    for lv in range(h.height):
        col = h.ancestor_column(lv)[leaf]
        lo = np.minimum.reduceat(col, starts)
        hit = (lo == np.maximum.reduceat(col, starts)) & (node < 0)
        node[hit] = lo[hit]
        if (node >= 0).all():
            break
    width = (h.leaf_counts[node] - 1).astype(np.float64)
    return node, width, np.asarray(h.labels, dtype=object)


def _numeric_keys(
    points: Points, j: int, codes: np.ndarray, starts: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every partition's interval: its extreme codes (codes are ranks in value order); node
    ids rank the intervals by (min, max)."""
    nums = points.numbers[j]
    assert nums is not None  # a numeric QI's values as numbers
    size = len(points.domains[j])
    lo = np.minimum.reduceat(codes, starts)
    hi = np.maximum.reduceat(codes, starts)
    distinct, node = np.unique(lo * size + hi, return_inverse=True)
    labels = [
        label_of(points, j, (a, b))
        for a, b in zip((distinct // size).tolist(), (distinct % size).tolist(), strict=True)
    ]
    return node.ravel(), nums[hi] - nums[lo], np.asarray(labels, dtype=object)


def _categorical_keys(
    points: Points, j: int, codes: np.ndarray, part: np.ndarray, count: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every partition's set of values; node ids rank the sets as their sorted codes compare
    (Python's tuple order: element by element, a prefix first)."""
    size = len(points.domains[j])
    key = part * size + codes
    if count * size <= max(4 * len(key), 1 << 20):
        # the (partition, code) pairs present, sorted, by counting: no sort of the rows
        pairs = np.flatnonzero(np.bincount(key, minlength=count * size))
    else:
        pairs = np.unique(key)
    values = pairs % size
    lengths = np.bincount(pairs // size, minlength=count)
    firsts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    node = np.unique(_sequence_ranks(values, firsts, lengths), return_inverse=True)[1].ravel()
    # one partition per distinct set, formatted once
    rep = np.unique(node, return_index=True)[1]  # the first partition of each set
    vals = values.tolist()
    labels = [
        label_of(points, j, tuple(vals[a : a + n]))
        for a, n in zip(firsts[rep].tolist(), lengths[rep].tolist(), strict=True)
    ]
    return node, (lengths - 1).astype(np.float64), np.asarray(labels, dtype=object)


def _sequence_ranks(values: np.ndarray, firsts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """For sequences stored back to back (sequence i is ``values[firsts[i]:firsts[i] +
    lengths[i]]``, non-negative): how many sequences are smaller than each one in
    lexicographic order (a prefix before the longer sequence), so equal sequences get equal
    numbers and the numbers sort as the sequences do.

    A most-significant-first radix refinement: at step t every group of sequences equal so far
    is ordered by its members' t-th element (-1 past the end), and a member's number becomes
    its group's number plus the members before it. Groups of one, and groups whose members
    all ended, are final, so the steps touch each element about once (not sequences times the
    longest length)."""
    count = len(lengths)
    rank = np.zeros(count, dtype=np.int64)
    todo = np.arange(count, dtype=np.int64) if count > 1 else np.zeros(0, dtype=np.int64)
    t = 0
    while len(todo):
        alive = lengths[todo] > t
        elem = np.full(len(todo), -1, dtype=np.int64)
        elem[alive] = values[firsts[todo[alive]] + t]
        o = np.lexsort((elem, rank[todo]))
        seq, grp, elem = todo[o], rank[todo][o], elem[o]
        idx = np.arange(len(seq))
        same_group = np.zeros(len(seq), dtype=bool)
        same_group[1:] = grp[1:] == grp[:-1]
        run_start = ~same_group
        run_start[1:] |= elem[1:] != elem[:-1]
        # members before a member's run inside its group: its run's start - its group's start
        group_first = np.maximum.accumulate(np.where(same_group, 0, idx))
        run_first = np.maximum.accumulate(np.where(run_start, idx, 0))
        rank[seq] = grp + (run_first - group_first)
        # still tied: runs of two or more with a member going on past step t
        run = np.cumsum(run_start) - 1
        more = np.bincount(run, weights=lengths[seq] > t + 1) > 0
        keep = (np.bincount(run) > 1)[run] & more[run]
        todo = seq[keep]
        t += 1
    return rank


def label_of(points: Points, j: int, key: tuple) -> str:
    """The label of QI ``j``'s released value ``key``: (node,) for a hierarchy QI, (min code,
    max code) for a numeric one, the sorted codes for a categorical one."""
    dom = points.domains[j]
    kind = points.kinds[j]
    if kind == HIERARCHY:
        return points.hierarchies[j].labels[key[0]]  # type: ignore[union-attr]
    if kind == NUMERIC:
        lo, hi = key
        return dom[lo] if lo == hi else f"[{dom[lo]}, {dom[hi]}]"
    return dom[key[0]] if len(key) == 1 else "{" + ", ".join(dom[c] for c in key) + "}"


def release(
    points: Points, part_of_row: np.ndarray, keys: PartitionKeys | None = None
) -> tuple[TableRecoding, np.ndarray]:
    """The recoding of the partitions numbered by ``part_of_row`` (each histogram row's
    partition; each QI tuple in one of them), and each histogram row's released class (rows
    with equal labels share a class id). ``keys``: :func:`partition_keys` of the same, when
    the caller has them."""
    if keys is None:
        keys = partition_keys(points, part_of_row)
    m = points.width
    # classes are the distinct node rows; every partition holds a row, so ranking the
    # partitions' node rows gives the ranks the rows' node rows would
    part_class = row_ids(keys.nodes)
    row_class = part_class[keys.part]
    # one recoding row per distinct QI tuple, from its first histogram row
    tid = points.tuple_ids
    # each tuple's first row (np.unique's return_index, without sorting the rows again)
    first = np.full(int(tid.max()) + 1 if len(tid) else 0, len(tid), dtype=np.int64)
    np.minimum.at(first, tid, np.arange(len(tid), dtype=np.int64))
    part_of_tuple = keys.part[first]
    if not (row_class == part_class[part_of_tuple][tid]).all():
        raise AssertionError("rows with equal QI tuples were released differently")
    tuple_nodes = keys.nodes[part_of_tuple]
    # by column, as codes into each QI's values and labels: no Python object per tuple
    # (1.8 M tuples at 10 M rows), and the writer hands the engine flat arrays
    domains = [np.asarray(points.domains[j], dtype=object) for j in range(m)]
    original = Coded(points.codes[first], domains)
    generalized = Coded(tuple_nodes, list(keys.labels))
    return TableRecoding(original, generalized, tuple_nodes), row_class


_INTERVAL = re.compile(r"^\[(.+), (.+)\]$")


def midpoint(label: str) -> float:
    """The number a numeric QI's released label stands for: an interval's midpoint (seed 003
    section VI-B), or the value itself. Raises ValueError for a non-numeric label."""
    m = _INTERVAL.match(label)
    if m:
        return (float(m.group(1)) + float(m.group(2))) / 2.0
    return float(label)


def members(label: str) -> list[str]:
    """The values a categorical QI's released label stands for: a set's members, or the
    value itself."""
    if label.startswith("{") and label.endswith("}"):
        return label[1:-1].split(", ")
    return [label]


__all__ = [
    "CATEGORICAL",
    "PartitionKeys",
    "label_of",
    "members",
    "midpoint",
    "part_of_rows",
    "partition_keys",
    "release",
]

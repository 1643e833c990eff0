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

import numpy as np

from anonsql.algorithms.recoding import TableRecoding
from anonsql.data.points import CATEGORICAL, HIERARCHY, NUMERIC, Points, row_ids


def partition_keys(points: Points, partitions: list[np.ndarray]) -> list[list[tuple]]:
    """Per partition, per QI: a key of the released value (hierarchy: (node,); numeric:
    (min code, max code); categorical: the sorted codes)."""
    if not partitions:
        return []
    sizes = np.asarray([len(r) for r in partitions])
    if (sizes == 0).any():
        raise AssertionError("an empty partition")
    rows = np.concatenate(partitions)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    owner = np.repeat(np.arange(len(partitions), dtype=np.int64), sizes)
    columns: list[list[tuple]] = []
    for j in range(points.width):
        codes = points.codes[rows, j]
        if points.kinds[j] == HIERARCHY:
            h = points.hierarchies[j]
            leaves = points.leaves[j]
            columns.append(
                [
                    (h.lca_of_set(leaves[np.unique(codes[a : a + n])]),)  # type: ignore[union-attr,index]
                    for a, n in zip(starts.tolist(), sizes.tolist(), strict=True)
                ]
            )
        elif points.kinds[j] == NUMERIC:
            # codes are ranks in value order: a partition's interval is its extreme codes
            lo = np.minimum.reduceat(codes, starts).tolist()
            hi = np.maximum.reduceat(codes, starts).tolist()
            columns.append(list(zip(lo, hi, strict=True)))
        else:
            size = len(points.domains[j])
            pairs = np.unique(owner * size + codes)  # (partition, code), sorted
            bounds = np.searchsorted(pairs // size, np.arange(len(partitions) + 1)).tolist()
            values = (pairs % size).tolist()
            columns.append(
                [tuple(values[bounds[i] : bounds[i + 1]]) for i in range(len(partitions))]
            )
    return [list(k) for k in zip(*columns, strict=True)]


def label_of(points: Points, j: int, key: tuple) -> str:
    dom = points.domains[j]
    kind = points.kinds[j]
    if kind == HIERARCHY:
        return points.hierarchies[j].labels[key[0]]  # type: ignore[union-attr]
    if kind == NUMERIC:
        lo, hi = key
        return dom[lo] if lo == hi else f"[{dom[lo]}, {dom[hi]}]"
    return dom[key[0]] if len(key) == 1 else "{" + ", ".join(dom[c] for c in key) + "}"


def release(points: Points, partitions: list[np.ndarray]) -> tuple[TableRecoding, np.ndarray]:
    """The recoding of ``partitions`` (which cover every row of ``points``, each QI tuple in
    one of them), and each histogram row's released class (rows with equal labels share a
    class id)."""
    keys = partition_keys(points, partitions)
    m = points.width
    node_of: list[dict[tuple, int]] = []
    for j in range(m):
        distinct = sorted({k[j] for k in keys})
        if points.kinds[j] == HIERARCHY:
            node_of.append({k: int(k[0]) for k in distinct})
        else:
            node_of.append({k: i for i, k in enumerate(distinct)})
    row_part = np.full(len(points.counts), -1, dtype=np.int64)
    for p, rows in enumerate(partitions):
        row_part[rows] = p
    if (row_part < 0).any():
        raise AssertionError("the partitions do not cover every row")
    node_rows = np.asarray([[node_of[j][k[j]] for j in range(m)] for k in keys], dtype=np.int64)
    row_class = row_ids(node_rows[row_part])
    # one recoding row per distinct QI tuple, from its first histogram row
    tid = points.tuple_ids
    _, first = np.unique(tid, return_index=True)
    part_of_tuple = row_part[first]
    if not (node_rows[row_part] == node_rows[part_of_tuple[tid]]).all():
        raise AssertionError("rows with equal QI tuples were released differently")
    original = np.column_stack(
        [np.asarray(points.domains[j], dtype=object)[points.codes[first, j]] for j in range(m)]
    ).tolist()
    labels = [np.asarray([label_of(points, j, k[j]) for k in keys], dtype=object) for j in range(m)]
    generalized = np.column_stack([labels[j][part_of_tuple] for j in range(m)]).tolist()
    nodes = node_rows[part_of_tuple].tolist()
    return TableRecoding(original, generalized, nodes), row_class


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


__all__ = ["CATEGORICAL", "label_of", "members", "midpoint", "partition_keys", "release"]

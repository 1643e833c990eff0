"""The shared driver of ``algorithm="mondrian"`` and ``algorithm="tada"``: read the points,
split them among data controllers, partition each controller's rows into groups (all rows,
decision-tree leaves or clusters), run Mondrian in every group, and build the recoding.

Several data controllers (seed 003 section VI-A): ``controllers = m`` splits the table at
random (seeded) into m parts that are anonymized independently; the union is released. The
parts are drawn per distinct QI tuple, not per row, so rows with equal QI tuples stay in one
part and the release stays a function of the QI tuple (the paper splits rows; with few
duplicate QI tuples the difference is small, and it is what a guarded view needs).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from anonsql.algorithms.mondrian.checker import Checker
from anonsql.algorithms.mondrian.cuts import Spans, mondrian_groups
from anonsql.algorithms.mondrian.release import (
    PartitionKeys,
    part_of_rows,
    partition_keys,
    release,
)
from anonsql.algorithms.recoding import TableRecoding
from anonsql.data.points import Points
from anonsql.errors import InputError
from anonsql.models.base import PrivacyModel


@dataclass
class Partitioning:
    """What a run decided: the groups (per controller), Mondrian's partitions (each
    histogram row's partition and what each partition releases: ``keys``), the recoding and
    each histogram row's released class."""

    groups: list[np.ndarray]
    keys: PartitionKeys
    recoding: TableRecoding
    row_class: np.ndarray
    controller: np.ndarray
    timings: dict[str, float] = field(default_factory=dict)
    trees: list[Any] = field(default_factory=list)
    #: the partitions' rows, as the in-memory path made them (None: built when asked)
    parts: list[np.ndarray] | None = None

    @property
    def partitions(self) -> list[np.ndarray]:
        """The histogram rows of each partition, in partition order (built from ``keys``
        on the engine's path: the run itself reads ``keys`` only)."""
        if self.parts is None:
            self.parts = partitions_of(self.keys.part)
        return self.parts


def split_controllers(points: Points, m: int, seed: int) -> np.ndarray:
    """Controller (0..m-1) of each histogram row, drawn at random per distinct QI tuple."""
    if isinstance(m, bool) or not isinstance(m, int) or m < 1:
        raise InputError(f"controllers must be a whole number >= 1, got {m!r}")
    tid = points.tuple_ids
    return controller_of_tuples(int(tid.max()) + 1, m, seed)[tid]


def controller_of_tuples(n: int, m: int, seed: int) -> np.ndarray:
    """Controller (0..m-1) of each of ``n`` distinct QI tuples (numbered in lexicographic
    order of their codes), drawn at random."""
    rng = np.random.default_rng(seed)
    # a random permutation dealt round robin: parts differ in size by at most one tuple
    part_of_tuple = np.empty(n, dtype=np.int64)
    part_of_tuple[rng.permutation(n)] = np.arange(n) % m
    return part_of_tuple


def partition(
    points: Points,
    checker: Checker,
    mode: str = "mondrian",
    controllers: int = 1,
    seed: int = 0,
    k: int = 1,
    cluster_options: dict | None = None,
    stop: str = "next-widest",
) -> Partitioning:
    """``mode``: "mondrian" (one group per controller), "tree" (TA_DA classification) or
    "cluster" (TA_DA clustering); ``stop``: Mondrian's stop rule ("next-widest" or
    "widest", :mod:`anonsql.algorithms.mondrian.cuts`)."""
    from anonsql.algorithms.mondrian.clusters import compliant_clustering
    from anonsql.algorithms.mondrian.tree import compliant_tree

    timings: dict[str, float] = {}
    t0, c0 = time.perf_counter(), time.process_time()
    spans = Spans.of(points)
    owner = split_controllers(points, controllers, seed)
    groups: list[np.ndarray] = []
    trees = []
    for c in range(controllers):
        rows = np.flatnonzero(owner == c)
        if len(rows) == 0:
            continue
        if mode == "mondrian":
            groups.append(rows)
        elif mode == "tree":
            tree = compliant_tree(points, checker, rows)
            trees.append(tree)
            groups.extend(leaf.rows for leaf in tree.leaves())
        elif mode == "cluster":
            groups.extend(
                compliant_clustering(points, checker, k, rows, seed + c, **(cluster_options or {}))
            )
        else:  # pragma: no cover - callers pass one of the three
            raise InputError(f"unknown partitioning mode {mode!r}")
    timings["grouping"] = time.perf_counter() - t0
    timings["grouping_cpu"] = time.process_time() - c0
    t1, c1 = time.perf_counter(), time.process_time()
    parts = mondrian_groups(points, checker, groups, spans, stop)
    timings["mondrian"] = time.perf_counter() - t1
    timings["mondrian_cpu"] = time.process_time() - c1
    t2, c2 = time.perf_counter(), time.process_time()
    keys = partition_keys(points, part_of_rows(len(points.counts), parts))
    recoding, row_class = release(points, keys.part, keys)
    timings["release"] = time.perf_counter() - t2
    timings["release_cpu"] = time.process_time() - c2
    return Partitioning(groups, keys, recoding, row_class, owner, timings, trees, parts)


def partitions_of(part_of_row: np.ndarray) -> list[np.ndarray]:
    """The histogram rows of each partition (numbered by ``part_of_row``), in partition
    order, each part's rows in row order."""
    order = np.argsort(part_of_row, kind="stable")
    bounds = np.flatnonzero(np.diff(part_of_row[order])) + 1
    return np.split(order, bounds) if len(order) else []


def engine_partitioning(
    points: Points, part_of_row: np.ndarray, controllers: int, seed: int, timings: dict
) -> Partitioning:
    """What :func:`partition` returns, for partitions computed in the engine
    (:mod:`anonsql.algorithms.mondrian.engine`): the same release, built from the engine's
    histogram and each of its rows' partition."""
    owner = split_controllers(points, controllers, seed)
    groups = [g for c in range(controllers) if len(g := np.flatnonzero(owner == c))]
    t0, c0 = time.perf_counter(), time.process_time()
    keys = partition_keys(points, part_of_row)
    recoding, row_class = release(points, keys.part, keys)
    timings = {
        **timings,
        "release": time.perf_counter() - t0,
        "release_cpu": time.process_time() - c0,
    }
    return Partitioning(groups, keys, recoding, row_class, owner, timings)


def measures(points: Points, result: Partitioning, checker: Checker) -> dict[str, Any]:
    """Figures of the release: classes, their sizes, the rows in released classes failing a
    model (the guard suppresses them; only possible when groups of different controllers or
    clusters release equal labels and a model is not kept by a union, such as t-closeness),
    and the normalized certainty penalty (NCP, Xu et al. 2006: per row and QI the released
    range over the table's range, averaged; 0 is no generalization)."""
    cls = result.row_class
    ncls = int(cls.max()) + 1
    ok = checker.passes_grouped(cls, points.sens, points.counts)
    sizes = np.bincount(cls, points.counts)
    spans = Spans.of(points)
    total = float(points.counts.sum())
    per_qi = np.zeros(points.width)  # each QI's penalty: its NCP is per_qi / total
    keys = result.keys
    # each partition's rows (whole numbers: exact in floating point whatever the order)
    weight = np.bincount(keys.part, points.counts, minlength=keys.count)
    for j in range(points.width):
        span = spans.widths[j]
        if span > 0 and keys.count:
            # a cumulative sum adds the partitions one after the other, in partition order,
            # as a loop over them does: the same floating point sum to the last bit
            per_qi[j] = np.cumsum(weight * keys.widths[:, j] / span)[-1]
    pen = float(per_qi.sum())
    failing = int(sizes[~ok].sum())
    from anonsql.metrics.risk import risk_measures

    risk = risk_measures(sizes, ~ok).to_dict()
    return {
        "classes": ncls,
        "groups": len(result.groups),
        "partitions": keys.count,
        "min_class_size": int(sizes.min()),
        "avg_class_size": float(sizes.mean()),
        "rows": int(total),
        "failing_rows": failing,
        "missing_rows": points.missing_rows,
        "ncp": pen / (total * points.width) if total else 0.0,
        # NCP per QI (the report's per-QI loss): the run's NCP is their mean
        "ncp_per_qi": [float(v / total) if total else 0.0 for v in per_qi],
        **risk,  # classes, min_class_size, ...: the classes the guard releases
    }


def make_checker(points: Points, models: list[PrivacyModel], sensitive_hierarchy=None) -> Checker:
    needs = any(m.needs_sensitive for m in models)
    if needs and points.sens is None:
        raise InputError("l-diversity and t-closeness need a sensitive attribute (--sa)")
    for m in models:
        m.validate(points.rows, len(points.sens_labels) if points.sens is not None else None)
    overall = points.overall() if points.sens is not None else None
    return Checker(models, overall, points.sens_labels or None, sensitive_hierarchy)


__all__ = [
    "Partitioning",
    "controller_of_tuples",
    "engine_partitioning",
    "make_checker",
    "measures",
    "partition",
    "partitions_of",
    "split_controllers",
]

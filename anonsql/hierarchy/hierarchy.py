"""The in-memory form of a generalization hierarchy.

A hierarchy is a tree whose leaves (level 0) are the original values and whose root (level
``height - 1``) is the fully generalized value. Full-domain generalization needs every leaf to
reach the root in the same number of steps, so every input format is turned into one row per
leaf ``[leaf, level1, ..., root]`` and validated in one place (:meth:`Hierarchy.from_rows`).

A node is identified by ``(level, label)``: the same label may stand on two levels (ARX's
``fars`` age hierarchy repeats ``[80,99]`` on levels 3 and 4), but never twice on one level
with two different parents.

``height`` follows ARX and seed 004 (section 3.2): the number of nodes on a leaf-to-root path,
i.e. the number of levels.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from anonsql.errors import HierarchyError

#: the label of a suppressed row (anonsql.algorithms.recoding.SUPPRESSED_LABEL)
SUPPRESSION_MARKER = "*"


def _where(source: str, row: int | None) -> str:
    return f"{source}, row {row}" if row is not None else source


@dataclass(eq=False)
class Hierarchy:
    """Nodes are numbered 0..n-1, leaves first, then level by level (order of appearance)."""

    name: str
    labels: list[str]
    levels: np.ndarray
    parents: np.ndarray  # -1 for the root
    source: str = "memory"
    _index: dict[tuple[int, str], int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.levels = np.asarray(self.levels, dtype=np.int64)
        self.parents = np.asarray(self.parents, dtype=np.int64)
        if not self._index:
            self._index = {
                (int(lv), lb): i
                for i, (lv, lb) in enumerate(zip(self.levels, self.labels, strict=False))
            }

    def check_suppression_marker(self) -> None:
        """Refuse ``*`` (the label of a suppressed row, in every QI) on any node but the root:
        a released row generalized to an inner ``*`` would read exactly like a suppressed
        one, and the output's counts and reports could not tell them apart."""
        roots = {int(i) for i in np.flatnonzero(self.parents < 0)}
        for i, label in enumerate(self.labels):
            if label == SUPPRESSION_MARKER and i not in roots:
                raise HierarchyError(
                    f"hierarchy {self.name!r} ({self.source}): {SUPPRESSION_MARKER!r} stands at "
                    f"level {int(self.levels[i])}, below the root; it marks suppressed rows "
                    f"in every output, so only the root may be labelled {SUPPRESSION_MARKER!r} "
                    f"(rename that node, e.g. 'any' or '(all)')"
                )

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def from_rows(
        cls,
        name: str,
        rows: Iterable[Sequence[Any]],
        source: str = "memory",
        row_numbers: Sequence[int] | None = None,
    ) -> Hierarchy:
        """Build from one row per leaf, ``[leaf, level 1, ..., root]`` (ARX's CSV layout).

        Raises :class:`HierarchyError` naming the offending value and its row for: empty
        input, rows of unequal depth, empty labels, a label with two parents on one level,
        and more than one root.
        """
        rows = [[str(v) for v in r] for r in rows]
        numbers = list(row_numbers) if row_numbers is not None else list(range(1, len(rows) + 1))
        if not rows:
            raise HierarchyError(f"hierarchy {name!r} from {source} is empty: no rows")
        depth = len(rows[0])
        if depth == 0:
            raise HierarchyError(f"hierarchy {name!r}: {_where(source, numbers[0])} is empty")
        for r, n in zip(rows, numbers, strict=True):
            if len(r) != depth:
                raise HierarchyError(
                    f"hierarchy {name!r}: {_where(source, n)} has {len(r)} levels but "
                    f"{_where(source, numbers[0])} has {depth}; every leaf must have the same "
                    f"number of levels (repeat a label to fill a level)"
                )
            for lv, v in enumerate(r):
                if v.strip() == "":
                    raise HierarchyError(
                        f"hierarchy {name!r}: {_where(source, n)} has an empty label on level {lv}"
                    )
        # parent of (level, label) must be unique
        parent_of: dict[tuple[int, str], tuple[str, int]] = {}
        for r, n in zip(rows, numbers, strict=True):
            for lv in range(depth - 1):
                key = (lv, r[lv])
                seen = parent_of.get(key)
                if seen is None:
                    parent_of[key] = (r[lv + 1], n)
                elif seen[0] != r[lv + 1]:
                    raise HierarchyError(
                        f"hierarchy {name!r}: label {r[lv]!r} on level {lv} has two parents, "
                        f"{seen[0]!r} ({_where(source, seen[1])}) and {r[lv + 1]!r} "
                        f"({_where(source, n)})"
                    )
        roots = list(dict.fromkeys(r[-1] for r in rows))
        if len(roots) > 1:
            shown = ", ".join(map(repr, roots[:10]))
            raise HierarchyError(
                f"hierarchy {name!r} from {source} has {len(roots)} roots ({shown}); a "
                f"hierarchy needs a single root: add a last level such as '*'"
            )
        labels: list[str] = []
        levels: list[int] = []
        index: dict[tuple[int, str], int] = {}
        for lv in range(depth):
            for r in rows:
                key = (lv, r[lv])
                if key not in index:
                    index[key] = len(labels)
                    labels.append(r[lv])
                    levels.append(lv)
        parents = np.full(len(labels), -1, dtype=np.int64)
        for (lv, lb), pl in parent_of.items():
            parents[index[(lv, lb)]] = index[(lv + 1, pl[0])]
        return cls(name, labels, np.array(levels), parents, source, index)

    @classmethod
    def from_edges(
        cls,
        name: str,
        edges: Iterable[tuple[str, str | None, int]],
        source: str = "memory",
    ) -> Hierarchy:
        """Build from ``(child, parent or None, row number)`` edges (parent-child input).

        Labels identify nodes here, so a child listed with two parents, a cycle, several
        roots and leaves at different depths are reported as errors.
        """
        parent: dict[str, tuple[str | None, int]] = {}
        declared: set[str] = set()  # labels that had a row of their own
        order: list[str] = []
        for child, par, n in edges:
            child = str(child).strip()
            par = None if par is None or str(par).strip() == "" else str(par).strip()
            if child == "":
                raise HierarchyError(f"hierarchy {name!r}: {_where(source, n)} has no child label")
            if child == par:
                raise HierarchyError(
                    f"hierarchy {name!r}: {_where(source, n)}: {child!r} is its own parent (cycle)"
                )
            if child in declared and parent[child][0] != par:
                raise HierarchyError(
                    f"hierarchy {name!r}: label {child!r} has two parents, "
                    f"{parent[child][0]!r} ({_where(source, parent[child][1])}) and {par!r} "
                    f"({_where(source, n)})"
                )
            if child not in parent:
                order.append(child)
            parent[child] = (par, n)
            declared.add(child)
            if par is not None and par not in parent:
                parent[par] = (None, n)  # a root unless its own row says otherwise
                order.append(par)
        if not parent:
            raise HierarchyError(f"hierarchy {name!r} from {source} is empty: no rows")
        has_child = {p for p, _ in parent.values() if p is not None}
        leaves = [x for x in order if x not in has_child]
        paths: list[list[str]] = []
        numbers: list[int] = []
        for leaf in leaves:
            path = [leaf]
            seen = {leaf}
            node = leaf
            while parent[node][0] is not None:
                node = parent[node][0]  # type: ignore[assignment]
                if node in seen:
                    raise HierarchyError(
                        f"hierarchy {name!r}: cycle through {node!r} "
                        f"({_where(source, parent[node][1])})"
                    )
                seen.add(node)
                path.append(node)
            paths.append(path)
            numbers.append(parent[leaf][1])
        cls._check_cycles(name, parent, source)
        return cls.from_rows(name, paths, source, numbers)

    @staticmethod
    def _check_cycles(name: str, parent: dict[str, tuple[str | None, int]], source: str) -> None:
        # Nodes on a cycle have no path to a root and are never reached from a leaf.
        state: dict[str, int] = {}
        for start in parent:
            node: str | None = start
            trail: list[str] = []
            while node is not None and state.get(node) is None:
                state[node] = 1
                trail.append(node)
                node = parent[node][0]
            if node is not None and state.get(node) == 1:
                raise HierarchyError(
                    f"hierarchy {name!r}: cycle through {node!r} "
                    f"({_where(source, parent[node][1])})"
                )
            for t in trail:
                state[t] = 2

    @classmethod
    def from_tree(cls, name: str, tree: Any, source: str = "memory") -> Hierarchy:
        """Build from a nested tree: a node is a label (a leaf), ``{"label": ..., "children":
        [...]}``, or a one-key mapping ``{label: [children] or {child: ...}}``."""
        paths: list[list[str]] = []

        def walk(node: Any, above: list[str]) -> None:
            if isinstance(node, (str, int, float)):
                paths.append([str(node), *above])
                return
            if isinstance(node, dict) and "label" in node:
                label = str(node["label"])
                children = node.get("children") or []
            elif isinstance(node, dict) and len(node) == 1:
                label, children = next(iter(node.items()))
                label = str(label)
                if isinstance(children, dict):
                    children = [{k: v} for k, v in children.items()]
                children = children or []
            else:
                raise HierarchyError(
                    f"hierarchy {name!r} from {source}: cannot read node {node!r}; use a "
                    f'label, {{"label": ..., "children": [...]}} or {{label: [children]}}'
                )
            if not isinstance(children, list):
                raise HierarchyError(
                    f"hierarchy {name!r} from {source}: children of {label!r} must be a list"
                )
            if not children:
                paths.append([label, *above])
            for child in children:
                walk(child, [label, *above])

        walk(tree, [])
        depths = {len(p) for p in paths}
        if len(depths) > 1:
            short = min(paths, key=len)
            long = max(paths, key=len)
            raise HierarchyError(
                f"hierarchy {name!r} from {source}: leaf {short[0]!r} is {len(short) - 1} steps "
                f"below the root but leaf {long[0]!r} is {len(long) - 1}; every leaf must be "
                f"at the same depth"
            )
        return cls.from_rows(name, paths, source)

    # -- derived structure -------------------------------------------------------------------
    @property
    def height(self) -> int:
        """Number of levels (leaf to root inclusive), as in ARX and seed 004."""
        return int(self.levels.max()) + 1

    @property
    def top_level(self) -> int:
        return self.height - 1

    @property
    def size(self) -> int:
        return len(self.labels)

    @cached_property
    def leaf_ids(self) -> np.ndarray:
        return np.flatnonzero(self.levels == 0)

    @property
    def leaf_labels(self) -> list[str]:
        return [self.labels[i] for i in self.leaf_ids]

    @property
    def root(self) -> int:
        return int(np.flatnonzero(self.parents < 0)[0])

    @cached_property
    def ancestors(self) -> np.ndarray:
        """``ancestors[node, level]``: the node's ancestor on ``level`` (-1 below its level)."""
        anc = np.full((self.size, self.height), -1, dtype=np.int64)
        # nodes are numbered level by level, so a parent's row is filled when walking upward
        for node in np.argsort(-self.levels, kind="stable"):
            lv = self.levels[node]
            p = self.parents[node]
            if p >= 0:
                anc[node] = anc[p]
            anc[node, lv] = node
        return anc

    @cached_property
    def level_rank(self) -> np.ndarray:
        """Rank of each node among the nodes of its level (dense codes per level)."""
        rank = np.zeros(self.size, dtype=np.int64)
        for lv in range(self.height):
            nodes = np.flatnonzero(self.levels == lv)
            rank[nodes] = np.arange(len(nodes))
        return rank

    @cached_property
    def level_rank32(self) -> np.ndarray:
        """:attr:`level_rank` as int32, the dtype of partition codes."""
        return self.level_rank.astype(np.int32)

    @cached_property
    def level_nodes(self) -> list[np.ndarray]:
        """Node ids of each level, in rank order."""
        return [np.flatnonzero(self.levels == lv) for lv in range(self.height)]

    def rank_column(self, from_level: int, to_level: int) -> np.ndarray:
        """For the nodes of ``from_level`` (by rank): the rank of their ancestor on
        ``to_level`` (cached): one gather takes a class from one level to another."""
        cols = self.__dict__.setdefault("_rank_columns", {})
        key = (from_level, to_level)
        if key not in cols:
            anc = self.ancestors[self.level_nodes[from_level], to_level]
            cols[key] = np.ascontiguousarray(self.level_rank[anc], dtype=np.int32)
        return cols[key]

    def ancestor_column(self, level: int) -> np.ndarray:
        """Contiguous ``ancestors[:, level]`` (cached): the fast path of roll-ups."""
        cols = self.__dict__.setdefault("_ancestor_columns", {})
        if level not in cols:
            cols[level] = np.ascontiguousarray(self.ancestors[:, level])
        return cols[level]

    @cached_property
    def leaf_counts(self) -> np.ndarray:
        """Number of leaves below each node (``nl(v)`` in seed 004)."""
        counts = np.zeros(self.size, dtype=np.int64)
        for lv in range(self.height):
            np.add.at(counts, self.ancestors[self.leaf_ids, lv], 1)
        return counts

    def node(self, label: str, level: int | None = None) -> int:
        """Node id of ``label``; without a level, the lowest level holding that label."""
        if level is not None:
            try:
                return self._index[(level, label)]
            except KeyError:
                raise HierarchyError(
                    f"hierarchy {self.name!r} has no label {label!r} on level {level}"
                ) from None
        for lv in range(self.height):
            i = self._index.get((lv, label))
            if i is not None:
                return i
        raise HierarchyError(f"hierarchy {self.name!r} has no label {label!r}")

    def leaf(self, label: str) -> int:
        return self.node(label, 0)

    def generalize(self, values: Iterable[Any], level: int) -> list[str]:
        """Labels of ``values`` (leaves) generalized to ``level``."""
        anc = self.ancestors[:, level]
        return [self.labels[anc[self.leaf(str(v))]] for v in values]

    def missing(self, values: Iterable[Any]) -> list[str]:
        """The distinct values that are not leaves of this hierarchy."""
        return [v for v in dict.fromkeys(map(str, values)) if (0, v) not in self._index]

    def lca(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Lowest common ancestors of node ids ``a[i]`` and ``b[i]``, vectorized.

        The LCA is the common ancestor farthest from the root (seed 004, section 2.1); with
        levels counted from the leaves that is the common ancestor on the lowest level.
        """
        a = np.asarray(a, dtype=np.int64)
        b = np.asarray(b, dtype=np.int64)
        anc_a = self.ancestors[a]
        same = (anc_a == self.ancestors[b]) & (anc_a >= 0)
        first = same.argmax(axis=1)  # the root is always common, so a match exists
        return anc_a[np.arange(len(a)), first]

    def lca_of_set(self, nodes: Iterable[int]) -> int:
        nodes = np.asarray(list(nodes), dtype=np.int64)
        if nodes.size == 0:
            raise HierarchyError("LCA of an empty set of nodes")
        anc = self.ancestors[nodes]
        start = int(self.levels[nodes].max())
        for lv in range(start, self.height):
            col = anc[:, lv]
            if (col == col[0]).all():
                return int(col[0])
        return self.root  # pragma: no cover - unreachable: the root is common

    def to_rows(self) -> list[list[str]]:
        """One row per leaf, ``[leaf, ..., root]`` (ARX's CSV layout)."""
        anc = self.ancestors[self.leaf_ids]
        return [[self.labels[n] for n in row] for row in anc]

    def to_frame(self):  # -> pd.DataFrame
        import pandas as pd

        return pd.DataFrame(
            {
                "id": np.arange(self.size, dtype=np.int64),
                "label": self.labels,
                "level": self.levels,
                "parent": pd.array(
                    [None if p < 0 else int(p) for p in self.parents], dtype="Int64"
                ),
                "leaves": self.leaf_counts,
            }
        )

    def closure_frame(self):  # -> pd.DataFrame
        """The closure rows (ancestor, descendant, distance), the node itself included at
        distance 0: what ``sql/hierarchy/insert_closure.sql`` derives in SQL, for engines
        where a recursive query is slow."""
        import pandas as pd

        nodes, levels = np.nonzero(self.ancestors >= 0)
        return pd.DataFrame(
            {
                "ancestor": self.ancestors[nodes, levels],
                "descendant": nodes.astype(np.int64),
                "distance": (levels - self.levels[nodes]).astype(np.int64),
            }
        )

    def __repr__(self) -> str:
        return (
            f"Hierarchy({self.name!r}, height={self.height}, leaves={len(self.leaf_ids)}, "
            f"nodes={self.size}, source={self.source!r})"
        )

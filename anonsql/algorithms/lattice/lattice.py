"""The generalization lattice: one node per vector of levels (one level per QI), ordered
component-wise (seed 002 section II.C). A node's successors generalize one QI one level more.
"""

from __future__ import annotations

import numpy as np

from anonsql.errors import InputError

#: larger lattices are refused by the optimal search (it enumerates the nodes)
MAX_NODES = 5_000_000


class Lattice:
    def __init__(self, heights: list[int]) -> None:
        self.heights = np.asarray(heights, dtype=np.int64)
        size = int(np.prod(self.heights, dtype=np.float64))
        if size > MAX_NODES:
            raise InputError(
                f"the lattice has {size:,} nodes, more than the optimal search enumerates "
                f"({MAX_NODES:,}); use fewer QIs or lower hierarchies, or the best-effort "
                f"search (--algorithm heuristic, with --time-limit or --steps), which returns "
                f"an anonymous transformation that is not proven optimal"
            )
        self.size = size
        self.m = len(heights)
        # mixed-radix numbering: node id = sum levels[j] * stride[j]
        self.strides = np.ones(self.m, dtype=np.int64)
        for j in range(self.m - 2, -1, -1):
            self.strides[j] = self.strides[j + 1] * self.heights[j + 1]
        ids = np.arange(size, dtype=np.int64)
        self.levels = (ids[:, None] // self.strides[None, :]) % self.heights[None, :]
        self.level_sum = self.levels.sum(axis=1)
        # ge[j][l]: nodes whose level of QI j is >= l; tagging ANDs m of these vectors
        self._ge = [
            [self.levels[:, j] >= lv for lv in range(int(self.heights[j]))] for j in range(self.m)
        ]

    @property
    def bottom(self) -> int:
        return 0

    @property
    def top(self) -> int:
        return self.size - 1

    def node(self, levels) -> int:
        lv = np.asarray(levels, dtype=np.int64)
        if lv.shape != (self.m,) or (lv < 0).any() or (lv >= self.heights).any():
            raise InputError(f"levels {list(levels)} are outside the lattice {list(self.heights)}")
        return int((lv * self.strides).sum())

    def successors(self, node: int) -> list[int]:
        lv = self.levels[node]
        return [node + int(self.strides[j]) for j in range(self.m) if lv[j] + 1 < self.heights[j]]

    def predecessors(self, node: int) -> list[int]:
        lv = self.levels[node]
        return [node - int(self.strides[j]) for j in range(self.m) if lv[j] > 0]

    def above(self, node: int) -> np.ndarray:
        """Mask of the node and all its generalizations."""
        lv = self.levels[node].tolist()  # Python integers: cheaper to test and index with
        mask = np.ones(self.size, dtype=bool)
        for j in range(self.m):
            if lv[j]:
                mask &= self._ge[j][lv[j]]
        return mask

    def below(self, node: int) -> np.ndarray:
        """Mask of the node and all its specializations."""
        # the complement of the nodes above the node's level on some QI: one OR per QI and
        # one negation, where negating each QI's vector cost a temporary per QI (the search
        # asks for this mask thousands of times)
        lv = self.levels[node].tolist()
        heights = self.heights.tolist()
        mask = np.zeros(self.size, dtype=bool)
        for j in range(self.m):
            if lv[j] + 1 < heights[j]:
                mask |= self._ge[j][lv[j] + 1]
        return np.logical_not(mask, out=mask)

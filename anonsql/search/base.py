"""What a search is, and the node evaluator the searches share.

The evaluator computes a node's classes by rolling up the cached partition of a checked
specialization with the fewest classes (never rescanning the histogram when a finer
partition is known), assesses the privacy models and scores the quality model.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from anonsql.data.histogram import Histogram
from anonsql.data.partition import Partition
from anonsql.metrics.quality import QualityModel
from anonsql.models.requirements import Assessment, Requirements
from anonsql.search.lattice import Lattice

Progress = Callable[[int, int], None]  # (nodes checked, lattice size)


@dataclass
class Solution:
    levels: tuple[int, ...]
    score: float
    suppressed_rows: int
    classes: int
    minimal: bool = False


@dataclass
class SearchResult:
    algorithm: str
    optimum: Solution | None
    checked: int
    lattice_size: int
    solutions: list[Solution] = field(default_factory=list)
    guarantee: str = ""
    #: the optimum's classes, from the search's cache (None without an optimum)
    partition: Partition | None = None


class NodeEvaluator:
    def __init__(
        self,
        hist: Histogram,
        lattice: Lattice,
        requirements: Requirements,
        quality: QualityModel,
        cache_cells: int = 40_000_000,
    ) -> None:
        self.hist = hist
        self.lattice = lattice
        self.requirements = requirements
        self.quality = quality
        self.checked = 0
        self.cache_cells = cache_cells
        # the cache of partitions, with its keys, levels and class counts kept as arrays so
        # finding the cheapest specialization to roll up from is one vectorized scan
        self._parts: dict[int, Partition] = {}
        self._slot: dict[int, int] = {}
        cap = 1024
        self._keys = np.full(cap, -1, dtype=np.int64)
        self._levels = np.zeros((cap, lattice.m), dtype=np.int64)
        self._classes = np.zeros(cap, dtype=np.int64)
        self._used = np.zeros(cap, dtype=np.int64)
        self._tick = 0
        self._cells = 0
        self._store(0, Partition.from_histogram(hist, tuple([0] * lattice.m)))

    @staticmethod
    def _size(part: Partition) -> int:
        cells = part.classes * (part.codes.shape[1] + 1)
        if part.pair_class is not None:
            cells += 3 * len(part.pair_class)
        return cells

    def _store(self, node: int, part: Partition) -> None:
        free = np.flatnonzero(self._keys < 0)
        if not len(free):
            grow = len(self._keys)
            self._keys = np.concatenate([self._keys, np.full(grow, -1, dtype=np.int64)])
            self._levels = np.concatenate([self._levels, np.zeros_like(self._levels)])
            self._classes = np.concatenate([self._classes, np.zeros(grow, dtype=np.int64)])
            self._used = np.concatenate([self._used, np.zeros(grow, dtype=np.int64)])
            free = np.flatnonzero(self._keys < 0)
        slot = int(free[0])
        self._keys[slot] = node
        self._levels[slot] = self.lattice.levels[node]
        self._classes[slot] = part.classes
        self._tick += 1
        self._used[slot] = self._tick
        self._parts[node] = part
        self._slot[node] = slot
        self._cells += self._size(part)
        while self._cells > self.cache_cells and len(self._parts) > 1:
            valid = (self._keys >= 0) & (self._keys != 0)  # keep the bottom partition
            victim = int(np.flatnonzero(valid)[np.argmin(self._used[valid])])
            old = int(self._keys[victim])
            self._cells -= self._size(self._parts.pop(old))
            del self._slot[old]
            self._keys[victim] = -1

    def partition(self, node: int) -> Partition:
        self._tick += 1
        if node in self._parts:
            self._used[self._slot[node]] = self._tick
            return self._parts[node]
        levels = self.lattice.levels[node]
        ok = (self._keys >= 0) & (self._levels <= levels).all(axis=1)
        slots = np.flatnonzero(ok)
        slot = int(slots[np.argmin(self._classes[slots])])
        self._used[slot] = self._tick
        source = self._parts[int(self._keys[slot])]
        part = source.rollup(self.hist, tuple(int(x) for x in levels))
        self._store(node, part)
        return part

    def assess(self, node: int) -> tuple[Partition, Assessment]:
        self.checked += 1
        part = self.partition(node)
        return part, self.requirements.assess(part, self.hist)

    def score(self, part: Partition, assessment: Assessment) -> float:
        return self.quality.score(part, assessment.suppressed)


class Search(ABC):
    name: str

    @abstractmethod
    def run(
        self,
        hist: Histogram,
        requirements: Requirements,
        quality: QualityModel,
        progress: Progress | None = None,
    ) -> SearchResult: ...


def better(a: Solution | None, b: Solution, tol: float = 1e-12) -> bool:
    """True when ``b`` beats ``a``: lower score, then lower total level, then lexically lower
    levels (a deterministic tie-break; ARX also prefers the lower total level)."""
    if a is None:
        return True
    if b.score < a.score - tol * max(1.0, abs(a.score)):
        return True
    if abs(b.score - a.score) <= tol * max(1.0, abs(a.score)):
        return (sum(b.levels), b.levels) < (sum(a.levels), a.levels)
    return False

"""What a search is, and the node evaluator the searches share.

The evaluator computes a node's classes by rolling up the cached partition of a checked
specialization with the fewest classes (never rescanning the histogram when a finer
partition is known), assesses the privacy models and scores the quality model.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from anonsql.algorithms.lattice.engine_classes import is_in_engine
from anonsql.algorithms.lattice.node_summary import NodeSummary, SummaryAssessment
from anonsql.data.classes import Partition, Scratch, scratch
from anonsql.data.histogram import Histogram
from anonsql.metrics.quality import QualityModel
from anonsql.models.requirements import Assessment, Requirements, Screening

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


class LatticeNodes(Protocol):
    """What the evaluator reads of a lattice: :class:`Lattice`, or the heuristic search's
    lattice that numbers the nodes as it meets them."""

    m: int

    @property
    def levels(self) -> np.ndarray: ...

    def node(self, levels) -> int: ...


class NodeEvaluator:
    def __init__(
        self,
        hist: Histogram,
        lattice: LatticeNodes,
        requirements: Requirements,
        quality: QualityModel,
        cache_bytes: int = 512 << 20,
    ) -> None:
        self.hist = hist
        self.lattice = lattice
        self.requirements = requirements
        self.quality = quality
        self.checked = 0
        #: partitions beyond the base one are evicted (least recently used) past this size
        #: (a histogram loaded under a memory budget says how much)
        self.cache_bytes = getattr(hist, "cache_bytes", None) or cache_bytes
        # the cache of partitions, with its keys, levels and class counts kept as arrays so
        # finding the cheapest specialization to roll up from is one vectorized scan
        self._parts: dict[int, Partition] = {}
        self._slot: dict[int, int] = {}
        cap = 1024
        self._keys = np.full(cap, -1, dtype=np.int64)
        self._levels = np.zeros((cap, lattice.m), dtype=np.int64)
        self._classes = np.zeros(cap, dtype=np.int64)
        self._used = np.zeros(cap, dtype=np.int64)
        # each cached node's levels packed into one integer, a field per QI topped by a guard
        # bit, so that finding the cached specializations of a node is one subtraction over
        # the cache instead of a comparison per QI and a reduction across them (the search
        # looks for one before every roll-up): ``levels <= target`` holds on every QI
        # exactly when (target with every guard bit set) - levels keeps every guard bit,
        # each field being too small to borrow from the next. None when the fields do not
        # fit 63 bits (the comparison per QI then).
        heights = [int(h.height) for h in getattr(hist, "hierarchies", None) or []]
        bits = max(heights, default=1).bit_length() + 1
        self._packed: np.ndarray | None = None
        if len(heights) == lattice.m and 0 < bits * lattice.m <= 63:
            self._shifts = np.arange(lattice.m, dtype=np.int64) * bits
            self._guard = int(((np.int64(1) << (bits - 1)) << self._shifts).sum())
            # a free slot holds the guard bits alone, which no target keeps
            self._packed = np.full(cap, self._guard, dtype=np.int64)
        self._tick = 0
        self._bytes = 0
        #: the node every later roll-up can start from; never evicted
        self.base = 0
        #: a histogram kept in the engine computes a node's classes itself, choosing per
        #: node between a GROUP BY there and a roll-up here of a cached finer partition
        #: (:mod:`anonsql.algorithms.lattice.engine_classes`); its bottom is never read into memory
        self.node_classes = getattr(hist, "node_classes", None)
        #: the roll-ups' work arrays, reused from one to the next (in memory only: a histogram
        #: kept in the engine budgets its own roll-ups). Not counted in the cache's bytes: at
        #: most 8 bytes per row of the largest partition rolled up and 4 per element of its
        #: key span (at most 4 per row), what each such roll-up allocated afresh before
        self._scratch = Scratch() if self.node_classes is None else None
        if self.node_classes is None:
            self._store(0, Partition.from_histogram(hist, tuple([0] * lattice.m)))
        else:
            assert is_in_engine(hist)  # the one histogram that serves a node's classes
            self.cache_bytes = hist.cache_bytes
            # a node too large for the budget comes back as its assessment and score only
            # (node_summary.py): the evaluator hands those on in place of its classes
            hist.evaluate_with(requirements, quality)

    @staticmethod
    def _size(part: Partition) -> int:
        arrays = (
            part.codes,
            part.sizes,
            part.pair_class,
            part.pair_value,
            part.pair_count,
            part.row_class,
        )
        return sum(a.nbytes for a in arrays if a is not None)

    def _pack(self, levels: np.ndarray) -> int:
        """A node's levels as one integer (see ``_packed``)."""
        return int((np.asarray(levels, dtype=np.int64) << self._shifts).sum())

    def _finer(self, levels: np.ndarray) -> np.ndarray:
        """Mask of the cache's slots holding the node at ``levels`` or a specialization."""
        if self._packed is not None:
            packed = np.int64(self._pack(levels) | self._guard)
            return ((packed - self._packed) & self._guard) == self._guard
        return (self._keys >= 0) & (self._levels <= levels).all(axis=1)

    def rebase(self, levels) -> None:
        """Make the node at ``levels`` the base and drop the bottom partition: a search
        that knows every node it will check lies above ``levels`` (e.g. after a projection
        sieve) rolls up from this smaller partition instead of the near-unique bottom, and
        the bottom's memory is freed. A node below the base is still served, from the
        histogram."""
        node = self.lattice.node(tuple(int(x) for x in levels))
        if node == self.base:
            return
        if self.node_classes is not None:
            # a histogram kept in the engine keeps the floor there too
            assert is_in_engine(self.hist)
            self.hist.rebase(tuple(int(x) for x in levels))
        self.partition(node)
        old, self.base = self.base, node
        if old in self._parts:
            self._evict(old)

    def _store(self, node: int, part: Partition) -> None:
        if isinstance(part, NodeSummary):
            return  # kept by the histogram (no classes to roll up from)
        if self.node_classes is not None and self._size(part) > self.cache_bytes:
            return  # beyond the memory budget: used once, never cached
        free = np.flatnonzero(self._keys < 0)
        if not len(free):
            grow = len(self._keys)
            self._keys = np.concatenate([self._keys, np.full(grow, -1, dtype=np.int64)])
            self._levels = np.concatenate([self._levels, np.zeros_like(self._levels)])
            self._classes = np.concatenate([self._classes, np.zeros(grow, dtype=np.int64)])
            self._used = np.concatenate([self._used, np.zeros(grow, dtype=np.int64)])
            if self._packed is not None:
                fresh = np.full(grow, self._guard, dtype=np.int64)
                self._packed = np.concatenate([self._packed, fresh])
            free = np.flatnonzero(self._keys < 0)
        slot = int(free[0])
        self._keys[slot] = node
        self._levels[slot] = self.lattice.levels[node]
        if self._packed is not None:
            self._packed[slot] = self._pack(self._levels[slot])
        self._classes[slot] = part.classes
        self._tick += 1
        self._used[slot] = self._tick
        self._parts[node] = part
        self._slot[node] = slot
        self._bytes += self._size(part)
        base = self._size(self._parts[self.base]) if self.base in self._parts else 0
        while self._bytes - base > self.cache_bytes and len(self._parts) > 2:
            valid = (self._keys >= 0) & (self._keys != self.base) & (self._keys != node)
            victim = int(np.flatnonzero(valid)[np.argmin(self._used[valid])])
            self._evict(int(self._keys[victim]))

    def _evict(self, node: int) -> None:
        self._bytes -= self._size(self._parts.pop(node))
        slot = self._slot.pop(node)
        self._keys[slot] = -1
        if self._packed is not None:
            self._packed[slot] = self._guard

    def partition(self, node: int) -> Partition:
        self._tick += 1
        if node in self._parts:
            self._used[self._slot[node]] = self._tick
            return self._parts[node]
        levels = self.lattice.levels[node]
        target = tuple(int(x) for x in levels)
        slots = np.flatnonzero(self._finer(levels))
        finer = None
        if len(slots):
            slot = int(slots[np.argmin(self._classes[slots])])
            self._used[slot] = self._tick
            finer = self._parts[int(self._keys[slot])]
        if self.node_classes is not None:
            part = self.node_classes(target, finer)
        else:
            with scratch(self._scratch):
                if finer is not None:
                    part = finer.rollup(self.hist, target)
                else:  # below the base: from the histogram
                    part = Partition.from_histogram(self.hist, target)
        self._store(node, part)
        return part

    def assess(self, node: int) -> tuple[Partition, Assessment]:
        self.checked += 1
        part = self.partition(node)
        return part, self.assess_partition(part)

    def assess_partition(self, part: Partition) -> Assessment:
        if isinstance(part, NodeSummary):
            assert part.assessment is not None
            return part.assessment
        return self.requirements.assess(part, self.hist)

    def screen(self, part: Partition, stop=None) -> Screening:
        if isinstance(part, NodeSummary):
            return part.screening(self.requirements.allowed(self.hist.rows), self.hist.rows, stop)
        return self.requirements.screen(part, self.hist, stop)

    def score(self, part: Partition, assessment: Assessment) -> float:
        if isinstance(part, NodeSummary):
            return part.score
        return self.quality.score(part, assessment.suppressed)

    def partition_bound(self, part: Partition) -> float | None:
        if isinstance(part, NodeSummary):
            return part.bound
        return self.quality.partition_bound(part)

    def result_partition(self, node: int) -> Partition | None:
        """The node's classes for the result, None when they were too large to hold (the
        caller reads them again)."""
        part = self.partition(node)
        return None if isinstance(part, NodeSummary) else part


def released_classes(a: Assessment) -> int:
    """Classes an assessment releases."""
    if isinstance(a, SummaryAssessment):
        return a.released
    return int(a.passing.sum())


class Search(ABC):
    name: str
    #: prune as if every privacy model were monotone with suppression (ARX's "practical
    #: monotonicity"); only searches that prune read it, and their guarantee says when the
    #: assumption was made for models that are not (see :mod:`anonsql.algorithms.lattice.flash`)
    assume_monotone: bool = False

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

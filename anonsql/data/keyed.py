"""Partitions that carry one integer key per class, for searches that roll up one QI at a time.

A :class:`~anonsql.data.classes.Partition` rolled up to a coarser node recombines every QI's
code into a key and groups the keys (:func:`anonsql.data.classes._group`): on a near-unique
table of 73,000 rows and 16 QIs that is 16 gathers and a sort of 73,000 keys per node
checked. A best-first search from the bottom of a wide lattice checks node after node that
differs from an already checked one in a single QI; a :class:`KeyedPartition` keeps each
class's key over *fixed* radices (the number of nodes on each QI's leaf level, the widest of
its levels), so the key of a class one QI coarser is the old key plus one table lookup, and
the grouping only has to find the keys that became equal:

* a class can merge with another only if their new keys are equal; a hash of the keys into a
  table of four times as many buckets as classes leaves most keys alone in their bucket, and
  those are classes of their own without any comparison;
* the keys sharing a bucket (equal keys, and the hash's collisions) are grouped exactly, by
  sorting them (``np.unique``): a small share of the classes near the bottom of a lattice.

The result is the same partition (the same classes with the same sizes, sensitive counts and
codes) in another order: classes are numbered by their first class in the finer partition.
The codes matrix is decoded from the keys only when something reads it (the result's
classes, models that read codes); the searches' own reads (sizes, sensitive counts, a few
classes' codes for the quality model) do without it.

Fixed radices need the product of the leaf levels' node counts to fit in 63 bits
(:meth:`Radix.of` returns None otherwise, and the caller keeps plain partitions).
"""

from __future__ import annotations

import math

import numpy as np

from anonsql.data.classes import _COUNTING_SLACK, Partition, _group, _pairs
from anonsql.data.histogram import Histogram

#: a Fibonacci-hashing multiplier (2^64 / golden ratio, odd): the high bits of key * this are
#: spread evenly over the buckets even for keys that differ in one digit
_MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)
#: below this many classes ``np.unique`` groups all of them (the hash costs more than it saves)
_SMALL = 2048


class Radix:
    """The fixed mixed-radix numbering of one histogram's QI codes: key = sum of code_j *
    stride_j, where QI j's radix is its number of leaf-level nodes (no level has more)."""

    def __init__(self, widths: list[int]) -> None:
        self.widths = np.asarray(widths, dtype=np.int64)
        self.m = len(widths)
        strides = [1] * self.m
        for j in range(self.m - 2, -1, -1):
            strides[j] = strides[j + 1] * widths[j + 1]
        self.strides = np.asarray(strides, dtype=np.int64)
        self._deltas: dict[tuple[int, int, int], np.ndarray] = {}

    @classmethod
    def of(cls, hist: Histogram) -> Radix | None:
        """The radix of the histogram's hierarchies, None when its keys would not fit in a
        signed 64-bit integer."""
        widths = [max(len(h.level_nodes[0]), 1) for h in hist.hierarchies]
        if math.prod(widths) >= 2**63:
            return None
        return cls(widths)

    def keys(self, part: Partition) -> np.ndarray:
        """Every class's key, from the partition's codes."""
        keys = np.zeros(part.classes, dtype=np.int64)
        for j in range(self.m):
            if self.widths[j] > 1:
                keys += part.codes[:, j].astype(np.int64) * self.strides[j]
        return keys

    def digit(self, keys: np.ndarray, j: int) -> np.ndarray:
        """QI j's codes of the given keys."""
        out = keys // self.strides[j] if self.strides[j] > 1 else keys
        return out % self.widths[j] if j else out

    def delta(self, hist: Histogram, j: int, source: int, target: int) -> np.ndarray:
        """For each code of QI j on level ``source``: what the key gains when the class is
        generalized to level ``target``."""
        key = (j, source, target)
        table = self._deltas.get(key)
        if table is None:
            ranks = hist.hierarchies[j].rank_column(source, target).astype(np.int64)
            table = (ranks - np.arange(len(ranks), dtype=np.int64)) * self.strides[j]
            self._deltas[key] = table
        return table


class KeyedPartition(Partition):
    """A :class:`~anonsql.data.classes.Partition` with each class's key over a
    :class:`Radix`; the codes matrix is decoded from the keys when first read."""

    keys: np.ndarray
    radix: Radix

    @property
    def codes(self) -> np.ndarray:
        codes = self.__dict__.get("_codes")
        if codes is None:
            codes = np.empty((len(self.keys), self.radix.m), dtype=np.int32, order="F")
            for j in range(self.radix.m):
                codes[:, j] = self.radix.digit(self.keys, j)
            self.__dict__["_codes"] = codes
        return codes

    @codes.setter
    def codes(self, value: np.ndarray | None) -> None:
        self.__dict__["_codes"] = value

    @property
    def decoded(self) -> bool:
        """Whether the codes matrix was built (it then takes memory)."""
        return self.__dict__.get("_codes") is not None

    def code_column(self, j: int, rows: np.ndarray | None = None) -> np.ndarray:
        if self.decoded:
            return super().code_column(j, rows)
        keys = self.keys if rows is None else self.keys[rows]
        return self.radix.digit(keys, j)

    def node_column(self, j: int, mask: np.ndarray | None = None) -> np.ndarray:
        rows = None if mask is None else np.flatnonzero(mask)
        return self.hierarchies[j].level_nodes[self.levels[j]][self.code_column(j, rows)]

    @classmethod
    def wrap(cls, part: Partition, radix: Radix) -> KeyedPartition:
        """The same classes as ``part``, keyed (its codes are kept, not decoded again)."""
        out = cls._make(part.levels, radix.keys(part), part, radix)
        out.codes = part.codes
        out.row_class = part.row_class
        return out

    @classmethod
    def _make(cls, levels, keys, like: Partition, radix: Radix, sizes=None, pairs=None):
        pc, pv, pn = (
            pairs
            if pairs is not None
            else (
                like.pair_class,
                like.pair_value,
                like.pair_count,
            )
        )
        out = cls(
            tuple(levels),
            # the codes are decoded from the keys when first read
            None,  # type: ignore[arg-type]
            like.sizes if sizes is None else sizes,
            pc,
            pv,
            pn,
            like.hierarchies,
            None,
        )
        out.keys = keys
        out.radix = radix
        return out

    def rollup(self, hist: Histogram, levels: tuple[int, ...]) -> Partition:
        """The partition of a coarser transformation, from the keys (see the module's
        docstring); with privacy units (records of a unit in several classes) the plain
        roll-up, which carries each record's class along."""
        levels = tuple(int(x) for x in levels)
        if hist.unit_ids is not None:
            return Partition(
                self.levels,
                self.codes,
                self.sizes,
                self.pair_class,
                self.pair_value,
                self.pair_count,
                self.hierarchies,
                self.row_class,
            ).rollup(hist, levels)
        radix = self.radix
        hs = hist.hierarchies
        widths = [len(h.level_nodes[lv]) for h, lv in zip(hs, levels, strict=True)]
        if math.prod(widths) <= 4 * self.classes + _COUNTING_SLACK:
            # few combinations at the target: the plain roll-up's counting pass beats hashing
            # (the keys of every changed QI, then one sort, when most classes merge); the
            # codes are read off the keys
            def column(j: int, rows: np.ndarray | slice | None = None) -> np.ndarray:
                codes = self.code_column(j, None if isinstance(rows, slice) else rows)
                if isinstance(rows, slice):
                    codes = codes[rows]
                if levels[j] == self.levels[j]:
                    return codes
                return hs[j].rank_column(self.levels[j], levels[j])[codes]

            triples = (self.pair_value, self.pair_count, self.pair_class)
            return KeyedPartition.wrap(_group(levels, column, self.sizes, hs, triples), radix)
        keys = self.keys
        for j, (source, target) in enumerate(zip(self.levels, levels, strict=True)):
            if target != source:
                delta = radix.delta(hist, j, source, target)
                keys = keys + delta[radix.digit(keys, j)]
        ids, first = group_keys(keys)
        if first is None:  # no two classes merged
            return KeyedPartition._make(levels, keys, self, radix)
        count = len(first)
        sizes = np.bincount(ids, self.sizes, minlength=count).astype(np.int64)
        pairs: tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None] | None = None
        if self.pair_class is not None:
            assert self.pair_value is not None and self.pair_count is not None
            pairs = _pairs(ids[self.pair_class], self.pair_value, self.pair_count, count)
        return KeyedPartition._make(levels, keys[first], self, radix, sizes, pairs)


def group_keys(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """Dense group ids of equal keys, numbered by first occurrence, and the first position of
    each group; ``(ids, None)`` when every key is distinct (ids are then the positions)."""
    n = len(keys)
    if n <= _SMALL:
        uniq, first, inv = np.unique(keys, return_index=True, return_inverse=True)
        if len(uniq) == n:
            return np.arange(n, dtype=np.int64), None
        return _renumber(first[inv], n)
    bits = max((4 * n - 1).bit_length(), 1)
    bucket = ((keys.view(np.uint64) * _MULTIPLIER) >> np.uint64(64 - bits)).view(np.int64)
    shared = np.bincount(bucket, minlength=1 << bits)[bucket] > 1
    rows = np.flatnonzero(shared)
    if not len(rows):
        return np.arange(n, dtype=np.int64), None
    uniq, first, inv = np.unique(keys[rows], return_index=True, return_inverse=True)
    if len(uniq) == len(rows):
        return np.arange(n, dtype=np.int64), None
    # each class's group representative: itself, or the first class with its key
    rep = np.arange(n, dtype=np.int64)
    rep[rows] = rows[first[inv]]
    return _renumber(rep, n)


def _renumber(rep: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Dense ids from each position's representative (the first position of its group)."""
    heads = rep == np.arange(n, dtype=np.int64)
    number = np.cumsum(heads, dtype=np.int64)
    number -= 1
    return number[rep], np.flatnonzero(heads)


__all__ = ["KeyedPartition", "Radix", "group_keys"]

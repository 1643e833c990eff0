"""Equivalence classes of a full-domain transformation, computed from the histogram.

A :class:`Partition` knows, for each class, its size, its generalized QI nodes and its
sensitive-value counts (as sparse ``(class, value, count)`` triples). A coarser transformation
is obtained by *rolling up* any finer partition: its classes are generalized further and
merged, so the work is proportional to the number of classes, not rows.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from anonsql.data.histogram import Histogram


def group_rows(keys: np.ndarray, widths: list[int] | None = None) -> tuple[np.ndarray, int]:
    """Dense group ids for the rows of an integer matrix.
    ``widths[j]`` bounds column j's values (e.g. a hierarchy's node count)."""
    n = len(keys)
    if keys.shape[1] == 0:
        return np.zeros(n, dtype=np.int64), 1 if n else 0
    if widths is None:
        widths = [int(keys[:, j].max()) + 1 if n else 1 for j in range(keys.shape[1])]
    combined = keys[:, 0].astype(np.int64, copy=True)
    span = widths[0]
    for j in range(1, keys.shape[1]):
        width = widths[j]
        if span * width >= 2**62:  # re-densify before the mixed-radix key overflows
            combined, uniq = pd.factorize(combined)
            span = len(uniq)
        combined *= width
        combined += keys[:, j]
        span *= width
    if span <= max(8 * n, 1 << 16):
        # small key space: a counting pass is much faster than hashing
        seen = np.zeros(span, dtype=np.int64)
        seen[combined] = 1
        rank = np.cumsum(seen) - 1
        return rank[combined], int(rank[-1]) + 1
    ids, uniq = pd.factorize(combined)
    return ids.astype(np.int64), len(uniq)


@dataclass
class Partition:
    """Classes of one transformation. ``codes[:, j]`` is each class's value of QI j as its rank
    among the nodes of level ``levels[j]`` (dense codes keep keys small and grouping cheap);
    :attr:`nodes` gives node ids."""

    levels: tuple[int, ...]
    codes: np.ndarray  # (classes, m), column-major
    sizes: np.ndarray  # (classes,)
    pair_class: np.ndarray | None  # sparse sensitive counts: class, value, count
    pair_value: np.ndarray | None
    pair_count: np.ndarray | None
    hierarchies: list = None  # type: ignore[assignment]
    #: for a partition built from a histogram: class id of each histogram row (None when
    #: the rows are the classes, see :meth:`classes_of_rows`)
    row_class: np.ndarray | None = None

    def classes_of_rows(self, hist: Histogram) -> np.ndarray:
        """Class id of each histogram row."""
        if self.row_class is not None:
            return self.row_class
        if hist.sens is None and hist.unit_ids is None and not any(self.levels):
            return np.arange(len(hist.counts), dtype=np.int64)
        return Partition.from_histogram(hist, self.levels).classes_of_rows(hist)

    @property
    def classes(self) -> int:
        return len(self.sizes)

    @property
    def nodes(self) -> np.ndarray:
        """(classes, m) node ids (computed on demand)."""
        cached = self.__dict__.get("_nodes")
        if cached is None:
            cached = np.empty(self.codes.shape, dtype=np.int64, order="F")
            for j, h in enumerate(self.hierarchies):
                cached[:, j] = h.level_nodes[self.levels[j]][self.codes[:, j]]
            self.__dict__["_nodes"] = cached
        return cached

    def code_column(self, j: int, rows: np.ndarray | None = None) -> np.ndarray:
        """Codes of QI j for every class (or the classes ``rows`` selects)."""
        return self.codes[:, j] if rows is None else self.codes[:, j][rows]

    def node_column(self, j: int, mask: np.ndarray | None = None) -> np.ndarray:
        """Node ids of QI j for every class (or the classes selected by ``mask``)."""
        codes = self.codes[:, j] if mask is None else self.codes[:, j][mask]
        return self.hierarchies[j].level_nodes[self.levels[j]][codes]

    @classmethod
    def from_histogram(cls, hist: Histogram, levels: tuple[int, ...]) -> Partition:
        levels = tuple(levels)
        hs = hist.hierarchies

        def column(j: int, rows: np.ndarray | slice | None = None) -> np.ndarray:
            h = hs[j]
            leaves = hist.codes[:, j] if rows is None else hist.codes[rows, j]
            return h.level_rank32[h.ancestor_column(levels[j])[leaves]]

        if hist.sens is None and hist.unit_ids is None and not any(levels):
            # without a sensitive attribute the histogram's rows are distinct leaf
            # combinations (with a unit of several tuples they are not: distinct records of
            # units): its rows are the bottom's classes, no grouping needed; where
            # leaves are numbered first (hierarchies built by from_rows), the leaf ids are
            # the level-0 codes and the histogram's array is shared, not copied
            if all(_leaves_first(h) for h in hs):
                codes = hist.codes
            else:
                codes = np.empty(hist.codes.shape, dtype=np.int32, order="F")
                for j in range(len(hs)):
                    codes[:, j] = column(j)
            return Partition(levels, codes, hist.counts, None, None, None, list(hs), None)
        return _group(levels, column, hist.counts, hs, (hist.sens, None, None), keep_rows=True)

    def rollup(self, hist: Histogram, levels: tuple[int, ...]) -> Partition:
        """The partition of a coarser transformation (``levels`` >= ``self.levels``)."""
        levels = tuple(levels)
        hs = hist.hierarchies

        def column(j: int, rows: np.ndarray | slice | None = None) -> np.ndarray:
            codes = self.codes[:, j] if rows is None else self.codes[rows, j]
            if levels[j] == self.levels[j]:
                return codes
            return hs[j].rank_column(self.levels[j], levels[j])[codes]

        pairs = (self.pair_value, self.pair_count, self.pair_class)
        if hist.unit_ids is not None and self.row_class is not None:
            # units of several records count per class from each record's class
            # (anonsql.models.unit_requirements): carried along, a gather instead of grouping
            # every record again
            part = _group(levels, column, self.sizes, hs, pairs, keep_rows=True)
            assert part.row_class is not None
            part.row_class = part.row_class[self.row_class]
            return part
        return _group(levels, column, self.sizes, hs, pairs)


def _group(levels, column, weights, hierarchies, pairs, keep_rows=False) -> Partition:
    """Group rows into classes. ``column(j)`` yields the rows' dense codes of QI j at its
    level; columns are produced one at a time so no (rows x QIs) temporary is built."""
    widths = [len(h.level_nodes[lv]) for h, lv in zip(hierarchies, levels, strict=True)]
    n = len(weights)
    span = 1
    for w in widths:
        span *= w
    whole = weights.dtype.kind in "iu"
    if span == 1 and n and whole and pairs[0] is None and not keep_rows:
        # every QI on its top level (Flash checks the top first): one class of every row
        sizes = np.array([weights.sum()], dtype=np.int64)
        codes = np.zeros((1, len(widths)), dtype=np.uint16, order="F")
        return Partition(levels, codes, sizes, None, None, None, list(hierarchies))
    if span < 2**62:
        combined = _combine(column, widths, n)
        if pairs[0] is None and not keep_rows:
            # only the classes' keys and sizes are asked for (no sensitive counts, no class of
            # each row): no per-row class ids are built
            grouped = _sum_by_key(combined, span, weights)
            if grouped is not None:
                keys, sizes = grouped
                del combined
                return Partition(
                    levels, _decode(keys, widths), sizes, None, None, None, list(hierarchies)
                )
        if span <= 4 * n + _COUNTING_SLACK:
            # small key space: a counting pass instead of hashing
            # boolean: numpy finds the set entries of a boolean array several times faster
            # than those of an integer one
            seen = np.zeros(span, dtype=bool)
            seen[combined] = True
            keys = np.flatnonzero(seen)
            position: np.ndarray = np.cumsum(seen, dtype=np.int32 if span < 2**31 else np.int64)
            position -= 1
            ids = _gather(position, combined)
            del seen, position, combined
            count = len(keys)
            codes = _decode(keys, widths)
        else:
            # many classes: sort instead of hashing, and read each class's codes off one of
            # its rows (cheaper than decoding millions of mixed-radix keys)
            ids, first = _sort_groups(combined, span)
            del combined
            count = len(first)
            codes = np.empty((count, len(widths)), dtype=np.int32, order="F")
            for j in range(len(widths)):
                codes[:, j] = column(j, first)
    else:  # too many combinations for one integer key: group by hashing rows
        ranks = np.empty((n, len(widths)), dtype=np.int32, order="F")
        for j in range(len(widths)):
            ranks[:, j] = column(j)
        ids, count = group_rows(ranks, widths)
        first = np.empty(count, dtype=np.int64)
        first[ids[::-1]] = np.arange(n - 1, -1, -1)
        codes = _take_rows(ranks, first)
    sizes = np.bincount(ids, weights, minlength=count).astype(np.int64)
    pc = pv = pn = None
    values, counts, classes = pairs
    if values is not None:
        if classes is None:  # from the histogram: one pair per row
            pc, pv, pn = _pairs(ids, values, weights, count)
        else:
            pc, pv, pn = _pairs(ids[classes], values, counts, count)
    rows = ids.astype(np.int64, copy=False) if keep_rows else None
    return Partition(levels, codes, sizes, pc, pv, pn, list(hierarchies), rows)


#: key spans up to 4 x rows + this are grouped by a counting pass, wider ones by sorting
_COUNTING_SLACK = 1024


class Scratch:
    """Work arrays the roll-ups of one search reuse (:func:`scratch`): the rows' keys and the
    zeroed sums over a key span. A large array fresh from the allocator costs a page fault
    per 4 KiB at its first touch (the kernel zeroes each page), which in a roll-up of
    millions of rows costs as much as the arithmetic; reused, its pages are touched once.
    Each array grows to the largest size asked for and is freed with the search."""

    def __init__(self) -> None:
        self._keys = np.empty(0, dtype=np.int64)
        self._zeros = np.zeros(0, dtype=np.int32)

    def keys(self, n: int) -> np.ndarray:
        """An int64 array of ``n`` elements (contents undefined; valid until the next call)."""
        if len(self._keys) < n:
            self._keys = np.empty(n, dtype=np.int64)
        return self._keys[:n]

    def zeros(self, n: int) -> np.ndarray:
        """An int32 array of ``n`` zeros; the caller leaves it zeroed again."""
        if len(self._zeros) < n:
            self._zeros = np.zeros(n, dtype=np.int32)
        return self._zeros[:n]

    @property
    def nbytes(self) -> int:
        return int(self._keys.nbytes + self._zeros.nbytes)


#: the work arrays of the roll-ups under way (:func:`scratch`), None outside a search
_SCRATCH: Scratch | None = None


@contextlib.contextmanager
def scratch(arrays: Scratch | None) -> Iterator[None]:
    """Let the roll-ups in the block reuse ``arrays`` (None: allocate each time). One thread
    at a time: the search calls this around each roll-up."""
    global _SCRATCH
    previous, _SCRATCH = _SCRATCH, arrays
    try:
        yield
    finally:
        _SCRATCH = previous


def _sum_by_key(
    keys: np.ndarray, span: int, weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """The distinct keys in increasing order and the weights summed per key, without per-row
    group ids (no scatter or gather by row: the roll-ups of near-unique partitions of large
    tables spend most of their time in those random accesses). A key span up to about the
    rows' count is summed densely by ``np.bincount``; a wider one by sorting the keys with
    each row's weight packed into the low bits (one int64 sort, then sums over runs). None
    when neither fits (the caller groups by ids then)."""
    n = len(keys)
    if not n:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if weights.dtype.kind not in "iu" or int(weights.min()) < 1:
        return None  # a key is found by its weight: only counts of at least one row
    if span <= 4 * n + _COUNTING_SLACK:
        if _SCRATCH is not None and int(weights.sum()) < 2**31:
            # the search's zeroed sums, reused: a fresh array of the span (np.bincount's)
            # costs more in page faults than the scatter itself; 32-bit (the sums stay
            # below 2**31 here), and zeroed again only where the scatter wrote
            dense = _SCRATCH.zeros(span)
            np.add.at(dense, keys, weights.astype(np.int32, copy=False))
            # through a boolean mask, whose set entries numpy finds several times faster
            found = np.flatnonzero(dense != 0)
            sums = dense[found].astype(np.int64)
            dense[found] = 0
            return found, sums
        # counts are whole numbers below 2**53: exact as float64
        sums = np.bincount(keys, weights, minlength=span)
        found = np.flatnonzero(sums != 0)
        return found, sums[found].astype(np.int64)
    wbits = int(weights.max()).bit_length()
    if int(span - 1).bit_length() + wbits > 63:
        return None
    packed = keys << wbits
    packed |= np.asarray(weights, dtype=np.int64)
    packed.sort()
    low = packed & ((1 << wbits) - 1)
    packed >>= wbits  # now the sorted keys
    starts = np.empty(n, dtype=bool)
    starts[:1] = True
    np.not_equal(packed[1:], packed[:-1], out=starts[1:])
    first = np.flatnonzero(starts)
    return packed[first], np.add.reduceat(low, first)


def _decode(keys: np.ndarray, widths: list[int]) -> np.ndarray:
    """The per-QI codes of mixed-radix keys (:func:`_combine`'s), column-major; 16-bit where
    every level has at most 65,536 nodes (half the bytes of a cached partition's codes, so
    the search's cache holds twice the classes), else 32-bit."""
    narrow = max(widths, default=1) <= 1 << 16
    codes = np.empty((len(keys), len(widths)), dtype=np.uint16 if narrow else np.int32, order="F")
    span = 1
    for w in widths:
        span *= w
    # keys of a span below 2**31 fit 32-bit integers, whose divmod is several times faster
    # than 64-bit (numpy divides int64 by a scalar fastest in two separate operations)
    small = span < 2**31
    rest = np.asarray(keys, dtype=np.int32 if small else np.int64)
    for j in range(len(widths) - 1, -1, -1):
        w = widths[j]
        if w == 1:
            codes[:, j] = 0
        elif small:
            rest, codes[:, j] = np.divmod(rest, w)
        else:
            codes[:, j] = rest % w
            rest = rest // w
    return codes


_CHUNK = 1 << 17  # rows per block: the block's key column stays in cache across the QIs
_PARALLEL_ROWS = 1 << 18
_POOL: ThreadPoolExecutor | None = None


def _combine(column, widths: list[int], n: int) -> np.ndarray:
    """Mixed-radix key of every row: sum of code_j * (product of the later widths).

    Rows are processed in blocks, each block through all QIs while it is in cache, and on
    large inputs the blocks are shared by a thread per core (numpy releases the GIL in
    gathers and arithmetic), which halves the cost of roll-ups from near-unique partitions
    on a 2-core machine."""
    combined = np.empty(n, dtype=np.int64) if _SCRATCH is None else _SCRATCH.keys(n)

    def block(rows: slice) -> None:
        out = combined[rows]
        out[:] = 0
        for j, w in enumerate(widths):
            if w > 1:  # a QI at its top level adds nothing to the key
                out *= w
                out += column(j, rows)

    _blocks(block, n)
    return combined


def _blocks(fn, n: int) -> None:
    """Run ``fn(rows)`` over blocks of rows, on a thread per core when ``n`` is large."""
    starts = range(0, n, _CHUNK)
    if n < _PARALLEL_ROWS or (os.cpu_count() or 1) < 2:
        for start in starts:
            fn(slice(start, min(start + _CHUNK, n)))
        return
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(min(os.cpu_count() or 2, 4), "anonsql-rollup")
    list(_POOL.map(lambda start: fn(slice(start, min(start + _CHUNK, n))), starts))


def _gather(table: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``table[index]``, in blocks (see :func:`_blocks`)."""
    out = np.empty(len(index), dtype=table.dtype)

    def block(rows: slice) -> None:
        np.take(table, index[rows], out=out[rows])

    _blocks(block, len(index))
    return out


def _leaves_first(h) -> bool:
    leaves = h.level_nodes[0]
    return bool(len(leaves) == 0 or leaves[-1] == len(leaves) - 1)


def _sort_groups(keys: np.ndarray, span: int) -> tuple[np.ndarray, np.ndarray]:
    """Dense group ids (numbered in key order) and one row of each group.

    Each key is packed with its row number into one int64 and the packed values are sorted:
    numpy's int64 sort is several times faster than hashing (pd.factorize) when most keys
    are distinct, the case of roll-ups from near-unique partitions of large tables, and the
    row numbers that come out give the permutation without an argsort."""
    n = len(keys)
    row_bits = max(int(n - 1).bit_length(), 1)
    if int(span - 1).bit_length() + row_bits > 63:
        ids, uniq = pd.factorize(keys)
        first = np.empty(len(uniq), dtype=np.int64)
        first[ids] = np.arange(n, dtype=np.int64)
        return ids, first
    packed = keys << row_bits
    packed |= np.arange(n, dtype=np.int64)
    packed.sort()
    order = packed & ((1 << row_bits) - 1)
    packed >>= row_bits  # now the sorted keys
    starts = np.empty(n, dtype=bool)
    starts[:1] = True
    np.not_equal(packed[1:], packed[:-1], out=starts[1:])
    group = np.cumsum(starts, dtype=np.int64)
    group -= 1
    ids = np.empty(n, dtype=np.int64)
    ids[order] = group
    return ids, order[starts]


def _take_rows(matrix: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``matrix[rows]`` as a column-major array, gathered column by column."""
    out = np.empty((len(rows), matrix.shape[1]), dtype=matrix.dtype, order="F")
    for j in range(matrix.shape[1]):
        out[:, j] = matrix[:, j][rows]
    return out


def _pairs(class_ids: np.ndarray, values: np.ndarray, counts: np.ndarray, classes: int):
    """Sparse (class, value, count) triples, ordered by class then value."""
    width = int(values.max()) + 1 if len(values) else 1
    key = class_ids.astype(np.int64) * width + values
    span = classes * width
    # declared for both branches: mypy 1.19 crashes inferring it from the tuple unpacking
    uniq: np.ndarray
    if span <= 4 * len(key) + _COUNTING_SLACK:
        # few (class, value) combinations: a counting pass instead of sorting the keys (the
        # lattice search rolls up thousands of partitions, most of them small); counts are
        # whole numbers below 2**53, exact as float64 weights
        sums = np.bincount(key, counts, minlength=span)
        # the non-zero sums through a boolean mask: numpy's nonzero is several times faster
        # on booleans than on floats, and the mask costs less than the difference
        uniq = np.flatnonzero(sums != 0)
        return uniq // width, uniq % width, sums[uniq].astype(np.int64)
    uniq, inv = np.unique(key, return_inverse=True)
    sums = np.bincount(inv, counts).astype(np.int64)
    return uniq // width, uniq % width, sums

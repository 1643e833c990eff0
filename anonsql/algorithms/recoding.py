"""Recodings: what an algorithm returns and the one output writer materializes.

A recoding says, for every distinct original QI tuple, which labels are released and which
hierarchy nodes (or class ids) they stand for. Two forms cover every algorithm:

* :class:`LevelRecoding` - full-domain generalization (the lattice searches): one level per
  QI, applied through the pinned hierarchy versions, so it is defined for every value the
  hierarchy holds, not only those present at run time;
* :class:`TableRecoding` - a multidimensional or local recoding (GAA, and the partitioning and
  clustering algorithms): an explicit table from original tuples to released labels, stored in
  ``anonsql_recodings`` under the output's name. A tuple absent from it (a row added after the
  run) has no release and is suppressed by the guard.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from sqlglot import exp

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

#: what a suppressed row shows in every QI, whatever the recoding
SUPPRESSED_LABEL = "*"

#: string columns row by row: lists of lists, or a (rows, columns) object array
Rows = list[list[str]] | np.ndarray


@dataclass
class LevelRecoding:
    """One generalization level per QI, over the hierarchies with these pinned keys."""

    hierarchies: list[str]
    levels: list[int]

    kind = "levels"


@dataclass
class Coded:
    """Columns of strings held as codes into each column's values: row ``i`` of column ``j``
    is ``values[j][codes[i, j]]``. The recoding of a million distinct tuples repeats a few
    thousand values and labels per QI; held so, it is built and written without a Python
    object per row (the writer hands the engine flat arrays)."""

    #: (rows, columns) integer codes
    codes: np.ndarray
    #: per column, a 1-D object array of str (None for NULL)
    values: list[np.ndarray]

    @classmethod
    def of(cls, columns: Coded | Rows) -> Coded:
        """``columns`` as they are, or :meth:`of_rows` of them."""
        return columns if isinstance(columns, Coded) else cls.of_rows(columns)

    @classmethod
    def of_rows(cls, rows: Rows) -> Coded:
        """Row lists (or a 2-D object array): each column its own values, coded 0..n-1."""
        table = np.asarray(rows, dtype=object)
        if table.ndim != 2:  # no rows: no columns either
            table = table.reshape(len(table), 0)
        n, m = table.shape
        codes = np.broadcast_to(np.arange(n, dtype=np.int64)[:, None], (n, m))
        return cls(codes, [table[:, j] for j in range(m)])

    @property
    def count(self) -> int:
        return len(self.codes)

    def column(self, j: int) -> np.ndarray:
        return self.values[j][self.codes[:, j]]

    def rows(self) -> list[list[str]]:
        """The rows as lists (for engines that take Python lists, and for tests)."""
        m = len(self.values)
        if m == 0:
            return [[] for _ in range(self.count)]
        return np.stack([self.column(j) for j in range(m)], axis=1).tolist()


@dataclass
class TableRecoding:
    """Original QI tuple -> released labels and node ids (one row per distinct tuple), held
    by column: ``original`` and ``generalized`` as :class:`Coded` columns, ``nodes`` as a
    (tuples, QIs) integer array. Row lists (lists of lists) are accepted for each and
    converted."""

    original: Coded
    generalized: Coded
    nodes: np.ndarray
    output: str = ""  # set by the writer: the rows are stored under the output's name

    kind = "table"

    def __post_init__(self) -> None:
        # row lists given for the typed columns (tests, small producers) are converted here
        self.original = Coded.of(self.original)
        self.generalized = Coded.of(self.generalized)
        nodes = np.asarray(self.nodes, dtype=np.int64)
        self.nodes = nodes.reshape(len(nodes), self.width) if nodes.ndim != 2 else nodes
        if not self.original.count == self.generalized.count == len(self.nodes):
            raise AssertionError("the recoding's columns differ in length")

    @classmethod
    def of(
        cls,
        original: Coded | Rows,
        generalized: Coded | Rows,
        nodes: np.ndarray | list[list[int]],
        output: str = "",
    ) -> TableRecoding:
        """A recoding from either form of each column (row lists are converted)."""
        return cls(Coded.of(original), Coded.of(generalized), np.asarray(nodes), output)

    @property
    def width(self) -> int:
        return len(self.original.values)

    @property
    def count(self) -> int:
        return self.original.count

    def rows(self) -> tuple[list[list[str]], list[list[str]], list[list[int]]]:
        """Original tuples, labels and node ids as row lists."""
        return self.original.rows(), self.generalized.rows(), self.nodes.tolist()

    def frame(self, dialect: str) -> pa.Table | pd.DataFrame:
        """The rows of ``anonsql_recodings`` (``original``, ``generalized``, ``nodes``) in the
        form the engine's ``insert_frame`` reads best (:func:`recoding_frame`)."""
        return recoding_frame(self, dialect)

    def lookup_query(self, width: int | None = None) -> exp.Select:
        """``o<j>, g<j>, n<j>`` per QI, read from ``anonsql_recodings`` for this output
        (sqlglot's index is 0-based and shifted for 1-based dialects such as DuckDB)."""
        m = self.width if width is None else width

        def item(col: str, j: int) -> exp.Expression:
            return exp.Bracket(this=exp.column(col), expressions=[exp.Literal.number(j)])

        parts = [
            exp.alias_(item(col, j), f"{p}{j}")
            for col, p in (("original", "o"), ("generalized", "g"), ("nodes", "n"))
            for j in range(m)
        ]
        return (
            exp.select(*parts)
            .from_("anonsql_recodings")
            .where(exp.column("output").eq(exp.convert(self.output)))
        )


def recoding_frame(recoding: TableRecoding, dialect: str) -> pa.Table | pd.DataFrame:
    """The rows of ``anonsql_recodings`` (``original``, ``generalized``, ``nodes``) in the form
    the engine's ``insert_frame`` reads best."""
    if dialect == "duckdb":
        # DuckDB reads Arrow list columns as they are, where a frame of Python lists costs
        # it a conversion per row (seconds at the 1.8 M tuples of 10 M rows)
        return recoding_table(recoding)
    return recoding_lists(recoding)


def recoding_lists(recoding: TableRecoding) -> pd.DataFrame:
    """A frame of Python lists: PostgreSQL's write_frame copies lists row by row (and types
    its staging columns from them), and Spark's converts the frame to Arrow itself."""
    import pandas as pd

    original, generalized, nodes = recoding.rows()
    return pd.DataFrame({"original": original, "generalized": generalized, "nodes": nodes})


def recoding_table(recoding: TableRecoding) -> pa.Table:
    """The recoding as an Arrow table of list columns (``original``, ``generalized``: lists
    of strings; ``nodes``: lists of int64, cast to the stored INTEGER by the INSERT as a
    frame's Python ints were), one row per tuple, built from flat arrays: row i's items are
    the ``width`` values from i * width on."""
    import pyarrow as pa

    n, m = recoding.count, recoding.width
    # 64-bit offsets only where 32-bit ones would overflow
    big = n * m >= 2**31
    offsets = pa.array(np.arange(n + 1, dtype=np.int64) * m, pa.int64() if big else pa.int32())
    build = pa.LargeListArray.from_arrays if big else pa.ListArray.from_arrays

    def strings(coded: Coded) -> pa.Array:
        # every column's values in one Arrow array, the codes shifted to point into it: one
        # take (in Arrow, no Python object) gives the items in row order
        sizes = [len(v) for v in coded.values]
        shift = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        values = pa.array(
            np.concatenate(coded.values) if m else np.zeros(0, dtype=object), pa.string()
        )
        return values.take(pa.array((coded.codes + shift).ravel()))

    return pa.table(
        {
            "original": build(offsets, strings(recoding.original)),
            "generalized": build(offsets, strings(recoding.generalized)),
            "nodes": build(offsets, pa.array(recoding.nodes.ravel(), pa.int64())),
        }
    )


Recoding = LevelRecoding | TableRecoding

__all__ = [
    "SUPPRESSED_LABEL",
    "Coded",
    "LevelRecoding",
    "Recoding",
    "Rows",
    "TableRecoding",
    "recoding_frame",
    "recoding_lists",
    "recoding_table",
]

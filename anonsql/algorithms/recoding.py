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

from sqlglot import exp

#: what a suppressed row shows in every QI, whatever the recoding
SUPPRESSED_LABEL = "*"


@dataclass
class LevelRecoding:
    """One generalization level per QI, over the hierarchies with these pinned keys."""

    hierarchies: list[str]
    levels: list[int]

    kind = "levels"


@dataclass
class TableRecoding:
    """Original QI tuple -> released labels and node ids (one row per distinct tuple)."""

    original: list[list[str]]
    generalized: list[list[str]]
    nodes: list[list[int]]
    output: str = ""  # set by the writer: the rows are stored under the output's name

    kind = "table"

    @property
    def width(self) -> int:
        return len(self.original[0]) if self.original else 0

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


Recoding = LevelRecoding | TableRecoding

__all__ = ["SUPPRESSED_LABEL", "LevelRecoding", "Recoding", "TableRecoding"]

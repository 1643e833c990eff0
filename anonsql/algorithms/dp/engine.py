"""SafePub inside the engine: the stored sample's histogram and every candidate's score
counts are computed by SQL where the data lives (DuckDB, PostgreSQL, Spark); Python only
reads back a few integers per candidate.

* :data:`HIST`: one GROUP BY of the sample (:func:`anonsql.data.histogram.histogram_query`):
  its distinct QI tuples as leaf node ids with their counts; rows whose value a hierarchy
  lacks (NULL id) are counted apart (always suppressed).
* :data:`WIDE`: the histogram with each QI's ancestor on every level and the leaves below it
  beside the leaf (``sql/dp/leaf_ancestors.sql``, pivoted), written once.
* a batch of candidates (one step's new predecessors) is one query: per candidate one GROUP
  BY of :data:`WIDE` by the candidate's levels' node columns (its classes on the sample),
  UNION ALL, then summed per candidate (``sql/dp/candidate_scores.sql``) into
  :class:`~anonsql.algorithms.dp.quality.Aggregates`.
"""

from __future__ import annotations

import contextlib

from sqlglot import exp

from anonsql.algorithms.dp.quality import Aggregates
from anonsql.backend.sql_templates import (
    column,
    drop,
    query_template,
    table,
    temporary,
)
from anonsql.data.histogram import histogram_query
from anonsql.errors import InputError

HIST = "__anonsql_dp_hist"
WIDE = "__anonsql_dp_wide"
CLASSES = "__anonsql_dp_classes"


class SampleScorer:
    """Scores candidate level vectors on a stored sample, in the engine."""

    def __init__(self, db, qis: list[str], keys: list[str], tops: list[int]) -> None:
        self.db = db
        self.be = db.backend
        self.qis = list(qis)
        self.keys = list(keys)
        self.tops = list(tops)
        self.missing_rows = 0
        self.rows = 0
        self._made: list[str] = []
        self.queries = 0

    def __enter__(self) -> SampleScorer:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def prepare(self, sample: str, missing: str) -> None:
        """Write the sample's histogram with every QI's ancestors on every level beside its
        leaf (:data:`WIDE`: ``n<j>_<level>`` node ids, ``w<j>_<level>`` leaves below them),
        so that a candidate's classes are one GROUP BY of it, without joins."""
        dialect = self.be.dialect
        hist = histogram_query(sample, self.qis, self.keys, None)
        self._create(HIST, hist)
        wide = exp.select(exp.column("n", "h")).from_(exp.alias_(table(HIST), "h", table=True))
        for j, (key, top) in enumerate(zip(self.keys, self.tops, strict=True)):
            m = query_template("dp/leaf_ancestors", dialect, name=key, top=top)
            pivot = exp.select(column("leaf")).from_(exp.alias_(m.subquery(), "a", table=True))
            for lv in range(top + 1):
                at = column("level").eq(exp.convert(lv))
                for col, prefix in (("node", "n"), ("leaves", "w")):
                    value = exp.Case(ifs=[exp.If(this=at.copy(), true=column(col))])
                    pivot = pivot.select(exp.alias_(exp.Max(this=value), f"{prefix}{j}_{lv}"))
            pivot = pivot.group_by(column("leaf"))
            a = f"m{j}"
            # LEFT JOIN: a value the hierarchy lacks keeps its row, with NULL ancestors
            wide = wide.join(
                exp.alias_(pivot.subquery(), a, table=True),
                on=exp.column("leaf", a).eq(exp.column(f"q{j}", "h")),
                join_type="left",
                copy=False,
            )
            wide = wide.select(
                *[exp.column(f"{p}{j}_{lv}", a) for lv in range(top + 1) for p in ("n", "w")],
                copy=False,
            )
        self._create(WIDE, wide)
        every_known = exp.and_(
            *[column(f"q{j}").is_(exp.null()).not_() for j in range(len(self.qis))]
        )
        known = exp.Case(ifs=[exp.If(this=every_known, true=column("n"))], default=exp.convert(0))
        rows, known_rows = self.be.fetchall(
            exp.select(
                exp.func("COALESCE", exp.Sum(this=column("n")), exp.convert(0)),
                exp.func("COALESCE", exp.Sum(this=known), exp.convert(0)),
            ).from_(table(HIST))
        )[0]
        self.rows = int(rows)
        self.missing_rows = int(rows) - int(known_rows)
        if self.missing_rows and missing != "suppress":
            raise InputError(
                f"{self.missing_rows} sampled row(s) hold QI values their hierarchies lack; "
                f"add them to the hierarchies, or pass --missing suppress (option missing = "
                f"'suppress') to suppress those rows"
            )

    def _create(self, name: str, query: exp.Select) -> None:
        self.be.execute(drop("table", name))
        self.be.execute(temporary(name, query, self.be.dialect))
        self._made.append(name)

    def close(self) -> None:
        for name in reversed(self._made):
            with contextlib.suppress(Exception):
                self.be.execute(drop("table", name))
        self._made.clear()

    # -- one batch of candidates -------------------------------------------------------------
    def _classes(self, candidates: list[tuple[int, ...]]) -> exp.Select:
        """``cand, n<j>, s<j>, r<j>, size``: every candidate's classes on the sample, one
        GROUP BY of :data:`WIDE` per candidate (UNION ALL). Rows with a value a hierarchy
        lacks (NULL node) are left out: they are counted apart (:attr:`missing_rows`)."""
        parts = []
        for i, c in enumerate(candidates):
            q = exp.select(exp.alias_(exp.convert(i), "cand")).from_(table(WIDE))
            keys = []
            for j, lv in enumerate(c):
                node = column(f"n{j}_{lv}")
                keys.append(node.copy())
                q = q.select(
                    exp.alias_(node, f"n{j}"),
                    exp.alias_(exp.Max(this=column(f"w{j}_{lv}")), f"s{j}"),
                    exp.alias_(exp.convert(1 if lv == self.tops[j] else 0), f"r{j}"),
                    copy=False,
                )
            q = q.select(exp.alias_(exp.Sum(this=column("n")), "size"), copy=False)
            known = exp.and_(*[k.copy().is_(exp.null()).not_() for k in keys])
            parts.append(q.where(known, copy=False).group_by(*keys, copy=False))
        union: exp.Query = parts[0]
        for p in parts[1:]:
            union = exp.union(union, p, distinct=False)
        return exp.select("*").from_(exp.alias_(union.subquery(), "cl", table=True))

    def aggregates(
        self, candidates: list[tuple[int, ...]], k: int, entropy: bool = False
    ) -> list[Aggregates]:
        """The counts of every candidate (one query, two for the entropy score)."""
        if not candidates:
            return []
        m = len(self.qis)
        classes = self._classes(candidates)
        released = exp.GTE(this=column("size"), expression=exp.convert(k))

        def when(cond: exp.Expr, value: exp.Expr) -> exp.Expr:
            return exp.Sum(
                this=exp.Case(ifs=[exp.If(this=cond, true=value)], default=exp.convert(0))
            )

        q = query_template("dp/candidate_scores", self.be.dialect, k=k)
        for j in range(m):
            size_leaves = exp.Mul(this=column("size"), expression=column(f"s{j}"))
            root = exp.and_(released.copy(), column(f"r{j}").eq(exp.convert(1)))
            q = q.select(
                exp.alias_(when(released.copy(), size_leaves), f"leaves{j}"),
                exp.alias_(when(root, column("size")), f"root{j}"),
                copy=False,
            )
        q = q.with_(CLASSES, as_=classes, copy=False)
        rows = self.be.fetchall(q)
        self.queries += 1
        squares: dict[int, list[int]] = {}
        if entropy:
            squares = self._value_squares(classes, k, len(candidates))
        out: list[Aggregates | None] = [None] * len(candidates)
        for row in rows:
            i = int(row[0])
            rc, rr, sr, sq = (int(v or 0) for v in row[1:5])
            rest = [int(v or 0) for v in row[5:]]
            out[i] = Aggregates(
                levels=tuple(candidates[i]),
                released_classes=rc,
                released_rows=rr,
                suppressed_rows=sr + self.missing_rows,
                any_suppressed=(sr + self.missing_rows) > 0,
                sum_squares=sq,
                leaves=rest[0::2],
                root_rows=rest[1::2],
                value_squares=squares.get(i, [0] * m),
            )
        for i, a in enumerate(out):
            if a is None:  # an empty sample: no class at all
                out[i] = Aggregates(
                    tuple(candidates[i]),
                    0,
                    0,
                    self.missing_rows,
                    self.missing_rows > 0,
                    0,
                    [0] * m,
                    [0] * m,
                    [0] * m,
                )
        return out  # type: ignore[return-value]

    def _value_squares(self, classes: exp.Select, k: int, count: int) -> dict[int, list[int]]:
        """Per candidate and QI: the sum over non-root values of the released records'
        count squared (the entropy score), one query of a UNION ALL over the QIs."""
        m = len(self.qis)
        parts = []
        for j in range(m):
            inner = (
                exp.select(column("cand"), exp.alias_(exp.Sum(this=column("size")), "c"))
                .from_(CLASSES)
                .where(
                    exp.GTE(this=column("size"), expression=exp.convert(k)),
                    column(f"r{j}").eq(exp.convert(0)),
                )
                .group_by(column("cand"), column(f"n{j}"))
            )
            c = exp.column("c", "v")
            parts.append(
                exp.select(
                    exp.column("cand", "v"),
                    exp.alias_(exp.convert(j), "j"),
                    exp.alias_(exp.Sum(this=exp.Mul(this=c, expression=c.copy())), "sq"),
                )
                .from_(exp.alias_(inner.subquery(), "v", table=True))
                .group_by(exp.column("cand", "v"))
            )
        union: exp.Query = parts[0]
        for p in parts[1:]:
            union = exp.union(union, p, distinct=False)
        q = exp.select("*").from_(exp.alias_(union.subquery(), "u", table=True))
        q = q.with_(CLASSES, as_=classes, copy=False)
        out = {i: [0] * m for i in range(count)}
        for cand, j, sq in self.be.fetchall(q):
            out[int(cand)][int(j)] = int(sq or 0)
        return out

    def class_sizes(self, levels: tuple[int, ...]) -> list[int]:
        """The sizes of the classes of one transformation on the sample (the release's
        figures)."""
        q = exp.select(column("size")).from_(
            exp.alias_(self._classes([levels]).subquery(), "x", table=True)
        )
        return [int(r[0]) for r in self.be.fetchall(q)]


__all__ = ["HIST", "SampleScorer"]

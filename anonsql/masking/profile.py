"""``anonsql profile``: what each column of a table holds, measured inside the engine, and
the role and hierarchy builder anonsql suggests for it.

Per column: the engine's type, the share of NULLs, the number of distinct values, the share
of rows holding a value no other row holds (*unique share*), a detected kind
(:mod:`anonsql.masking.detect`), a suggested role and, for a quasi-identifier, a suggested
hierarchy builder. Three statements, whatever the number of columns:

1. one scan: the row count, each column's non-NULL count, its distinct count (exact up to
   :data:`EXACT_ROWS` rows; DuckDB's and Spark's HyperLogLog ``approx_count_distinct``
   above, PostgreSQL counts exactly), and numbers' minimum and maximum;
2. up to :data:`EXACT_ROWS` rows, the unique share, exactly, by one ``GROUP BY GROUPING
   SETS`` over every column; above, the bound d / n (a column with d distinct values in n
   rows has a unique share of at most d / n), from the approximate distinct count, which
   costs no second pass. The bound decides conservatively: a column is taken for an
   identifier when its bound reaches 95%, so at that scale a column unique on 90-95% of the
   rows may be flagged too (a message says so; ``allow_identifying`` overrides);
3. a sample of :data:`SAMPLE` rows for the kind detection.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from sqlglot import exp

from anonsql.backend.sql_templates import column, table
from anonsql.masking.detect import IDENTIFIER_KINDS, detect_kind, type_family

#: unique share from which a column is taken for a direct identifier
IDENTIFIER_UNIQUE = 0.95
#: rows up to which distinct counts are exact on every engine
EXACT_ROWS = 2_000_000
#: rows read for the kind detection
SAMPLE = 1000
#: a detected kind -> the mask anonsql suggests for it
SUGGESTED_MASK = {
    "email": "pseudonym",
    "phone": "token",
    "person-name": "fake",
    "ip-address": "pseudonym",
    "iban": "token",
    "card-number": "partial:0:4",
    "url": "drop",
    "free-text": "drop",
}


@dataclass
class ColumnProfile:
    column: str
    type: str
    family: str
    rows: int
    null_share: float
    distinct: int
    distinct_exact: bool
    unique_share: float
    unique_share_exact: bool  # False: an upper bound (distinct / rows)
    kind: str
    looks_identifying: bool
    suggested_role: str
    suggestion: str  # the option that gives the role

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def identifying_as_qi(self) -> bool:
        """Whether the column cannot be a quasi-identifier: a kind that identifies a person,
        or a text key unique on 95%+ of the rows. A unique date, timestamp, number or postal
        code is a fine-grained QI, the kind generalization exists for (day -> month -> year,
        intervals, digit masking), and a category (at most 50 distinct values, so unique
        only in a table of a few dozen rows) is no key: uniqueness alone does not refuse them
        as QIs; kept raw they are refused (:attr:`looks_identifying`)."""
        if self.kind in IDENTIFIER_KINDS:
            return True
        # a category (at most 50 distinct values) is no key, however few rows hold it
        generalizable = self.kind in ("date", "timestamp", "number", "postal-code", "category")
        return self.looks_identifying and not generalizable

    def describe(self) -> str:
        """A short phrase for messages: kind and uniqueness."""
        bound = "" if self.unique_share_exact else "at most "
        return (
            f"{self.kind}, {self.type}, unique in {bound}{self.unique_share:.0%} of "
            f"{self.rows} rows, {self.null_share:.0%} NULL"
        )


def _nice(width: float) -> float:
    """The smallest of 1, 2, 5 times a power of ten that is at least ``width``."""
    if width <= 0:
        return 1.0
    p = 10 ** math.floor(math.log10(width))
    for m in (1, 2, 5, 10):
        if m * p >= width:
            return float(m * p)
    return float(10 * p)


def _suggest(
    name: str,
    table_name: str,
    kind: str,
    identifying: bool,
    distinct: int,
    lo: Any,
    hi: Any,
) -> tuple[str, str]:
    fine_grained = kind in ("date", "timestamp", "number", "postal-code")
    if identifying and not fine_grained:
        mask = SUGGESTED_MASK.get(kind, "pseudonym")
        return "identifier", f"--mask {name}={mask}"
    if kind == "free-text":
        return "identifier", f"--mask {name}=drop"
    where = f"--table {table_name} --column {name}"
    if kind in ("date", "timestamp"):
        return "quasi-identifier", f"hierarchy build {name} --dates month,year,decade {where}"
    if kind == "postal-code":
        return "quasi-identifier", f"hierarchy build {name} --mask 1 {where}"
    if kind == "number" and lo is not None and hi is not None and distinct > 20:
        w = _nice((float(hi) - float(lo)) / 20)
        start = math.floor(float(lo) / w) * w
        widths = ",".join(f"{v:g}" for v in (w, 2 * w, 4 * w))
        return (
            "quasi-identifier",
            f"hierarchy build {name} --intervals {widths} --start {start:g} {where}",
        )
    if kind in ("category", "boolean", "number"):
        return "quasi-identifier", f"hierarchy build {name} --groups 2,4 {where}"
    return "quasi-identifier, sensitive or kept", f"--qi, --sa or --keep {name}"


def profile_table(
    db, source: str, columns: list[str] | None = None, quick: bool = False
) -> list[ColumnProfile]:
    """Profile ``columns`` (default: all) of ``source``, in the engine.

    ``quick`` (the check every run makes of its kept columns and QIs): what decides whether
    a column looks identifying, in as few statements as that takes. One scan counts rows,
    non-NULL values and distinct values (HyperLogLog, exact on PostgreSQL); the unique share
    is computed exactly only for columns whose distinct count could reach 95% of the rows;
    only text columns are sampled (an identifier kind is a kind of text)."""
    backend = db.backend
    if not backend.table_exists(source):
        backend.require_table(source)  # its message
    types = backend.column_types(source)  # the names and types in one read of the catalog
    all_cols = list(types)
    cols = list(all_cols if columns is None else columns)
    backend.check_columns(source, cols, all_cols)
    if not cols:
        return []
    dialect = backend.dialect
    families = {c: type_family(types[c]) for c in cols}

    # 1. one scan: counts, distinct counts, ranges
    if quick:
        n_rows = -1  # counted by the scan itself
        exact = dialect == "postgres"
    else:
        n_rows = int(
            backend.fetchall(exp.select(exp.Count(this=exp.Star())).from_(table(source)))[0][0]
        )
        exact = n_rows <= EXACT_ROWS or dialect == "postgres"
    parts: list[exp.Expression] = [exp.Count(this=exp.Star())] if quick else []
    for c in cols:
        col = column(c)
        parts.append(exp.Count(this=col.copy()))
        if exact:
            parts.append(exp.Count(this=exp.Distinct(expressions=[col.copy()])))
        else:
            parts.append(exp.ApproxDistinct(this=col.copy()))
        if families[c] == "number":
            parts += [exp.Min(this=col.copy()), exp.Max(this=col.copy())]
    row = backend.fetchall(exp.select(*parts).from_(table(source)))[0] if n_rows else None
    stats: dict[str, dict[str, Any]] = {}
    i = 0
    if quick:
        n_rows = int(row[0]) if row else 0
        row = row[1:] if row and n_rows else None
    for c in cols:
        nonnull = int(row[i]) if row else 0
        distinct = min(int(row[i + 1] or 0), nonnull) if row else 0
        i += 2
        lo = hi = None
        if families[c] == "number":
            lo, hi = (row[i], row[i + 1]) if row else (None, None)
            i += 2
        stats[c] = {"nonnull": nonnull, "distinct": distinct, "lo": lo, "hi": hi}

    # 2. exact unique shares of the columns that could be identifying
    if quick:
        # a column with d distinct values in n rows is unique on at most d / n of them
        # (10% of slack for HyperLogLog's error)
        candidates = [c for c in cols if n_rows and stats[c]["distinct"] >= 0.9 * n_rows]
    else:
        candidates = [c for c in cols if n_rows and exact]
    uniques: dict[str, int] = {}
    if candidates:
        uniques = _unique_counts(backend, source, candidates)

    # 3. a sample for the kinds
    sampled = [c for c in cols if not quick or families[c] in ("text", "other")]
    # read as plain rows: a thousand short strings convert faster than through a frame
    rows = (
        backend.fetchall(
            exp.select(*[exp.cast(column(c), "VARCHAR") for c in sampled])
            .from_(table(source))
            .limit(SAMPLE)
        )
        if sampled
        else []
    )
    values = {c: [str(r[j]) for r in rows if r[j] is not None] for j, c in enumerate(sampled)}
    out = []
    for c in cols:
        s = stats[c]
        vals = values.get(c, [])
        kind = detect_kind(c, families[c], vals, s["distinct"])
        if kind == "person-name" and vals and len(set(vals)) < 0.3 * len(vals):
            kind = "category" if s["distinct"] <= 50 else "text"  # a few names: not people
        if c in uniques:
            unique = uniques[c] / n_rows
            unique_exact = True
        else:
            unique = min(1.0, s["distinct"] / n_rows) if n_rows else 0.0
            unique_exact = unique == 0.0 or not n_rows
            if quick and unique < 0.9:
                # not a candidate: below the identifying threshold whatever the exact share
                unique_exact = False
        # exact shares decide exactly; a bound decides conservatively (see the module's text)
        identifying = kind in IDENTIFIER_KINDS or unique >= IDENTIFIER_UNIQUE
        role, suggestion = _suggest(c, source, kind, identifying, s["distinct"], s["lo"], s["hi"])
        out.append(
            ColumnProfile(
                column=c,
                type=types[c],
                family=families[c],
                rows=n_rows,
                null_share=(n_rows - s["nonnull"]) / n_rows if n_rows else 0.0,
                distinct=s["distinct"],
                distinct_exact=exact,
                unique_share=unique,
                unique_share_exact=unique_exact,
                kind=kind,
                looks_identifying=identifying,
                suggested_role=role,
                suggestion=suggestion,
            )
        )
    return out


def _unique_counts(backend, source: str, cols: list[str]) -> dict[str, int]:
    """Rows holding a value no other row holds, per column: one GROUP BY GROUPING SETS
    (one hash aggregation per column over a single scan), each set told apart by the
    GROUPING bits of its columns."""
    m = len(cols)
    gid: exp.Expr = exp.convert(0)
    for j, c in enumerate(cols):
        bit = exp.Mul(
            this=exp.func("GROUPING", column(c)), expression=exp.convert(2 ** (m - 1 - j))
        )
        gid = exp.Add(this=gid, expression=bit)
    sets = exp.GroupingSets(expressions=[exp.Tuple(expressions=[column(c)]) for c in cols])
    inner = exp.select(
        exp.alias_(gid, "gid"),
        *[exp.alias_(exp.Not(this=column(c).is_(exp.null())), f"k{j}") for j, c in enumerate(cols)],
        exp.alias_(exp.Count(this=exp.Star()), "n"),
    ).from_(table(source))
    inner.set("group", exp.Group(grouping_sets=[sets]))
    # in set j only column j is grouped; the others read NULL: a group is a value when one
    # of the k flags is true (column j not NULL)
    valued = exp.or_(*[column(f"k{j}") for j in range(m)]) if m > 1 else column("k0")
    unique = exp.Sum(
        this=exp.Case(
            ifs=[exp.If(this=exp.and_(column("n").eq(1), valued), true=exp.convert(1))],
            default=exp.convert(0),
        )
    )
    q = (
        exp.select(column("gid"), exp.alias_(unique, "u"))
        .from_(exp.alias_(inner.subquery(), "g", table=True))
        .group_by(column("gid"))
    )
    rows = backend.fetchall(q)
    out: dict[str, int] = {}
    full = 2**m - 1
    for g, u in rows:
        for j, c in enumerate(cols):
            if int(g) == full - 2 ** (m - 1 - j):
                out[c] = int(u or 0)
    return out


@dataclass
class TableProfile:
    """A table's profile: one :class:`ColumnProfile` per column, in the table's order."""

    table: str
    columns: list[ColumnProfile]

    def to_dict(self) -> dict[str, Any]:
        return {"table": self.table, "columns": [c.to_dict() for c in self.columns]}

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame([c.to_dict() for c in self.columns])

    def _repr_html_(self) -> str:  # a notebook shows the profile as a table
        return self.to_frame().to_html(index=False)

    def text(self) -> str:
        """The table as ``anonsql profile`` prints it."""
        head = ("column", "type", "nulls", "distinct", "unique", "kind", "suggested role")
        rows = [head]
        for p in self.columns:
            approx = "" if p.distinct_exact else "~"
            bound = "" if p.unique_share_exact else "<="
            rows.append(
                (
                    p.column,
                    p.type,
                    f"{p.null_share:.1%}",
                    f"{approx}{p.distinct}",
                    f"{bound}{p.unique_share:.1%}",
                    p.kind,
                    p.suggested_role,
                )
            )
        widths = [max(len(str(r[i])) for r in rows) for i in range(len(head))]
        lines = [
            "  ".join(str(v).ljust(w) for v, w in zip(r, widths, strict=True)).rstrip()
            for r in rows
        ]
        lines.append("")
        lines.append("suggested options:")
        lines += [f"  {p.column}: {p.suggestion}" for p in self.columns]
        return "\n".join(lines)


def profile_message(profiles: list[ColumnProfile]) -> str:
    return "; ".join(
        f"{p.column!r} ({p.describe()}; suggested: {p.suggested_role}, {p.suggestion})"
        for p in profiles
    )


__all__ = [
    "IDENTIFIER_UNIQUE",
    "ColumnProfile",
    "TableProfile",
    "profile_message",
    "profile_table",
]

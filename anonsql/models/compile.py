"""Compile privacy models to SQL over the equivalence classes of a table.

The classes of a table are the groups of equal QI values (``GROUP BY`` of the QIs). Four
common table expressions describe them, and every model template (``sql/models/*.sql``)
reads only these:

* ``base(class_id, s, suppressed)`` - one row per record;
* ``classes(class_id, size, suppressed, vals)`` - one row per class; ``vals`` counts its
  records with a sensitive value (NULL when none has one);
* ``class_sensitive(class_id, s, c)`` - sensitive value counts per class;
* ``overall(s, q, rnk)`` - the table's sensitive distribution, values ranked numerically
  first, then lexically (the order of ordered-distance EMD).

A NULL sensitive value is no value: its rows count in ``size`` (k) but in neither
``class_sensitive`` nor ``overall``, and a class without a value fails every model that reads
the sensitive attribute (its value is NULL).

A record is *suppressed* when every QI holds the suppression marker ``*``.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from anonsql.backend.sql_templates import column, table, template
from anonsql.models.base import NULL_SENSITIVE, PrivacyModel

SUPPRESSED = "*"

#: the value order of ordered-distance EMD (:func:`anonsql.models.base.sensitive_order`):
#: numbers first, numerically, then labels. A pattern test instead of TRY_CAST, which
#: PostgreSQL lacks; no backslash in it, since Spark reads one in a literal as an escape.
SENSITIVE_ORDER = (
    "CASE WHEN REGEXP_MATCHES({s}, '^[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?$') "
    "THEN CAST({s} AS DOUBLE) END NULLS LAST, {s}"
)


def class_ctes(
    source: str,
    qis: list[str],
    sensitive: str | None,
    marker: str = SUPPRESSED,
    unit: str | None = None,
) -> list[tuple[str, exp.Expression]]:
    """The four relations; with ``unit`` (docs/models/units.md) every count is of distinct
    units: a class's size is its units, a sensitive value counts once per unit holding it,
    each unit weighs once in the distributions (``class_shares``, ``overall``), and a row
    without a unit counts for no one."""
    by_qis = exp.Order(expressions=[exp.Ordered(this=column(q)) for q in qis])
    class_id = exp.Window(this=exp.Anonymous(this="DENSE_RANK"), order=by_qis)
    supp = exp.and_(*[exp.cast(column(q), "VARCHAR").eq(exp.convert(marker)) for q in qis])
    s = exp.cast(column(sensitive), "VARCHAR") if sensitive else exp.Null()
    base = exp.select(
        exp.alias_(class_id, "class_id"),
        exp.alias_(exp.func("COALESCE", s, exp.convert("NULL")) if sensitive else s, "s"),
        exp.alias_(exp.func("COALESCE", supp, exp.false()), "suppressed"),
    ).from_(table(source))
    count, rows = "COUNT(*)", "COUNT(*)"
    with_value = f"SUM(CASE WHEN b.s <> '{NULL_SENSITIVE}' THEN 1 ELSE 0 END)"
    if unit is not None:
        base = base.select(exp.alias_(exp.cast(column(unit), "VARCHAR"), "u"))
        count, rows = "COUNT(DISTINCT b.u)", "COUNT(DISTINCT y.u)"
        with_value = f"COUNT(DISTINCT CASE WHEN b.s <> '{NULL_SENSITIVE}' THEN b.u END)"
    order = SENSITIVE_ORDER.format(s="b.s")
    null = f"'{NULL_SENSITIVE}'"  # a constant of this module, not user input
    overall = f"""
          SELECT b.s,
                 CAST({count} AS DOUBLE) / (SELECT {rows} FROM base AS y WHERE y.s <> {null})
                   AS q,
                 ROW_NUMBER() OVER (ORDER BY {order}) AS rnk
          FROM base AS b WHERE b.s <> {null} GROUP BY b.s"""
    shares = ""
    if unit is not None:
        # each unit weighs once, shared equally among the distinct values it holds, in its
        # class (class_shares, read by the distribution models) and in the table
        # (anonsql.models.unit_requirements)
        overall = f"""
          SELECT b.s, SUM(1.0 / w.m) / (SELECT COUNT(DISTINCT y.u) FROM unit_values AS y) AS q,
                 ROW_NUMBER() OVER (ORDER BY {order}) AS rnk
          FROM unit_values AS b JOIN (SELECT u, COUNT(*) AS m FROM unit_values GROUP BY u) AS w
            ON w.u = b.u
          GROUP BY b.s"""
        shares = f"""
        , class_share_totals AS (
          SELECT b.class_id, CAST({count} AS DOUBLE) AS size,
                 MIN(CASE WHEN b.suppressed THEN 1 ELSE 0 END) = 1 AS suppressed,
                 NULLIF(CAST({with_value} AS DOUBLE), 0) AS vals
          FROM base AS b GROUP BY b.class_id
        ), unit_values AS (
          SELECT DISTINCT b.u, b.s FROM base AS b WHERE b.s <> {null} AND b.u IS NOT NULL
        ), class_unit_values AS (
          SELECT DISTINCT b.class_id, b.u, b.s FROM base AS b
          WHERE b.s <> {null} AND b.u IS NOT NULL
        ), class_shares AS (
          SELECT x.class_id, x.s, SUM(1.0 / w.m) AS c
          FROM class_unit_values AS x JOIN (
            SELECT class_id, u, COUNT(*) AS m FROM class_unit_values GROUP BY class_id, u
          ) AS w ON w.class_id = x.class_id AND w.u = x.u
          GROUP BY x.class_id, x.s
        )"""
    vals, held = f"NULLIF(CAST({with_value} AS DOUBLE), 0)", ""
    if unit is not None:
        # a count model's class total is the sum of its counts (a value once per unit holding
        # it), as its numpy side sums them; the distribution models read class_share_totals
        vals = "NULLIF(CAST(MAX(h.held) AS DOUBLE), 0)"
        held = (
            " LEFT JOIN (SELECT x.class_id, SUM(x.c) AS held FROM class_sensitive AS x "
            "GROUP BY x.class_id) AS h ON h.class_id = b.class_id"
        )
    ctes = sqlglot.parse_one(
        f"""
        WITH class_sensitive AS (
          SELECT b.class_id, b.s, CAST({count} AS DOUBLE) AS c
          FROM base AS b WHERE b.s <> {null} GROUP BY b.class_id, b.s
        ), classes AS (
          SELECT b.class_id, CAST({count} AS DOUBLE) AS size,
                 MIN(CASE WHEN b.suppressed THEN 1 ELSE 0 END) = 1 AS suppressed,
                 {vals} AS vals
          FROM base AS b{held} GROUP BY b.class_id
        ){shares}, overall AS ({overall}
        ) SELECT 1
        """,
        read="duckdb",
    ).args["with_"]
    return [("base", base)] + [(c.alias, c.this) for c in ctes.expressions]


def model_values_query(
    model: PrivacyModel,
    source: str,
    qis: list[str],
    sensitive: str | None,
    dialect: str = "duckdb",
    top_level: int | None = None,
    unit: str | None = None,
) -> exp.Select:
    """``class_id, size, suppressed, value, ok`` for every class of ``source`` (sizes and
    counts in distinct ``unit`` values when given)."""
    name, params = model.sql_template()
    if "top" in params and params["top"] is None:
        params = {**params, "top": top_level}
    values = template(name, dialect, **params)
    if unit is not None and getattr(model, "reads_distribution", False):
        # each unit weighs once in its class's distribution (class_shares above)
        shared = {"class_sensitive": "class_shares", "classes": "class_share_totals"}
        values = values.transform(
            lambda n: (
                exp.alias_(exp.to_table(shared[n.name]), n.alias or n.name, table=True)
                if isinstance(n, exp.Table) and not n.db and n.name in shared
                else n
            )
        )
    assert isinstance(values, exp.Query)  # a model's template is a query of its classes
    cond = sqlglot.parse_one(model.sql_pass(), read="duckdb")
    cond = cond.transform(
        lambda n: exp.column("value", "v") if isinstance(n, exp.Column) and n.name == "value" else n
    )
    query = (
        exp.select(
            exp.column("class_id", "c"),
            exp.column("size", "c"),
            exp.column("suppressed", "c"),
            exp.alias_(exp.column("value", "v"), "value"),
            exp.alias_(exp.func("COALESCE", cond, exp.false()), "ok"),
        )
        .from_(exp.to_table("classes").as_("c"))
        .join(
            exp.alias_(values.subquery(), "v", table=True),
            on=exp.column("class_id", "v").eq(exp.column("class_id", "c")),
            join_type="left",
        )
    )
    for alias, cte in class_ctes(source, qis, sensitive, unit=unit):
        query = query.with_(alias, as_=cte)
    return query

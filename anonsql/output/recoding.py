"""The output of a multidimensional recoding (GAA): each source row's QIs replaced by the
labels of its class, looked up in ``anonsql_recodings`` by the row's original values.

Every original QI tuple has exactly one recoding, so the inner join keeps every row.
"""

from __future__ import annotations

from sqlglot import exp

from anonsql.backend.sql_templates import column, ident, table


def recoding_query(
    source: str, columns: list[str], qis: list[str], run_id: int, extras: bool = False
) -> exp.Select:
    """SELECT of the recoded rows; with ``extras`` also ``__o<j>`` (original value) and
    ``__n<j>`` (generalized node id) per QI, as :func:`output_query` gives them."""
    m = len(qis)

    # one column per QI out of the label lists (sqlglot's index is 0-based, shifted per
    # dialect), so the join is on plain columns
    def item(col: str, j: int) -> exp.Expression:
        return exp.Bracket(this=exp.column(col), expressions=[exp.Literal.number(j)])

    parts = [
        exp.alias_(item(col, j), f"{p}{j}")
        for col, p in (("original", "o"), ("generalized", "g"), ("nodes", "n"))
        for j in range(m)
    ]
    rec = (
        exp.select(*parts)
        .from_("anonsql_recodings")
        .where(exp.column("run_id").eq(exp.convert(run_id)))
    )
    on = exp.and_(
        *[
            exp.column(f"o{j}", "r").eq(exp.cast(column(q, "s"), "VARCHAR"))
            for j, q in enumerate(qis)
        ]
    )
    q = (
        exp.select()
        .from_(exp.alias_(table(source), "s", table=True))
        .join(exp.alias_(rec.subquery(), "r", table=True), on=on)
    )
    if extras:
        for j, name in enumerate(qis):
            q = q.select(
                exp.alias_(exp.cast(column(name, "s"), "VARCHAR"), f"__o{j}"),
                exp.alias_(exp.column(f"n{j}", "r"), f"__n{j}"),
                copy=False,
            )
    for c in columns:
        value = exp.column(f"g{qis.index(c)}", "r") if c in qis else column(c, "s")
        q = q.select(exp.alias_(value, ident(c)), copy=False)
    return q


__all__ = ["recoding_query"]

"""Creating and replacing output relations, and the plain generalization of a table (QIs
replaced by their labels on chosen levels, through the closure tables)."""

from __future__ import annotations

from sqlglot import exp

from anonsql.backend.sql_templates import column, ident, table, template
from anonsql.errors import InputError

SUPPRESSED_LABEL = "*"


def output_query(
    dialect: str,
    source: str,
    columns: list[str],
    qis: list[str],
    hierarchy_keys: list[str],
    levels: list[int],
) -> exp.Select:
    """SELECT of ``source`` with its QIs generalized to ``levels`` (hierarchy versions by key),
    no model enforced: what the journalist risk generalizes a population table with. A value
    the hierarchy lacks gets the suppression marker in every QI. Published outputs use
    :func:`anonsql.output.guard.guarded_query` instead."""
    q = exp.select().from_(exp.alias_(table(source), "s", table=True))
    generalized: dict[str, exp.Expression] = {}
    unknown = []
    for j, (name, h, lv) in enumerate(zip(qis, hierarchy_keys, levels, strict=True)):
        alias = f"m{j}"
        level_map = template("hierarchy/level_map", dialect, name=h, level=lv)
        q = q.join(
            exp.alias_(level_map.subquery(), alias, table=True),
            on=exp.column("value", alias).eq(exp.cast(column(name, "s"), "VARCHAR")),
            join_type="left",
            copy=False,
        )
        generalized[name] = exp.column("generalized", alias)
        unknown.append(exp.column("node", alias).is_(exp.null()))
    suppressed = exp.or_(*unknown)
    for c in columns:
        if c in generalized:
            value = exp.Case(
                ifs=[exp.If(this=suppressed, true=exp.convert(SUPPRESSED_LABEL))],
                default=generalized[c],
            )
            q = q.select(exp.alias_(value, ident(c)), copy=False)
        else:
            q = q.select(exp.alias_(column(c, "s"), ident(c)), copy=False)
    return q


def create_statement(kind: str, output: str, query: exp.Select, replace: bool = True) -> exp.Create:
    if kind not in ("view", "table"):
        raise InputError(f"materialize as 'view' or 'table', not {kind!r}")
    return exp.Create(this=table(output), kind=kind.upper(), replace=replace, expression=query)


def replace_output(db, kind: str, name: str, query: exp.Select) -> None:
    """CREATE OR REPLACE the output as a view or table; a relation of the other kind under
    that name is dropped first (OR REPLACE cannot turn a view into a table). Engines without
    a usable OR REPLACE (PostgreSQL has no ``CREATE OR REPLACE TABLE`` and cannot replace a
    view by one with other columns) drop and create. Call inside the caller's transaction."""
    current = db.backend.relation_kind(name)
    or_replace = db.backend.create_or_replace
    if current is not None and (current != kind or not or_replace):
        db.drop_relation(name)
    db.backend.execute(create_statement(kind, name, query, replace=or_replace))


__all__ = ["create_statement", "output_query", "replace_output"]

"""Creating and replacing output relations, and the plain generalization of a table (QIs
replaced by their labels on chosen levels, through the closure tables)."""

from __future__ import annotations

from sqlglot import exp

from anonsql.algorithms.recoding import SUPPRESSED_LABEL, LevelRecoding
from anonsql.backend.sql_templates import column, ident, table
from anonsql.errors import InputError


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
    from anonsql.output.guard import _mapping_joins, _raw

    # the view's own mapping joins (anonsql/output/guard.py), without its model tests
    q = exp.select().from_(exp.alias_(table(source), "s", table=True))
    rec = LevelRecoding(list(hierarchy_keys), list(levels))
    q, nodes, labels = _mapping_joins(q, dialect, qis, rec, "s", _raw)
    generalized = dict(zip(qis, labels, strict=True))
    unknown = [nd.is_(exp.null()) for nd in nodes]
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

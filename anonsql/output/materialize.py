"""The anonymized output as SQL over the source: QIs replaced by their labels on the chosen
levels (joins on the closure tables), suppressed classes replaced by ``*`` (or dropped),
every other column kept as it is."""

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
    hierarchy_names: list[str],
    levels: list[int],
    run_id: int | None,
    drop_suppressed: bool = False,
    roots: list[int] | None = None,
) -> exp.Select:
    """SELECT of the anonymized rows. ``run_id`` None: nothing is suppressed.

    With ``roots`` (each hierarchy's root node id) the rows also carry, per QI j, the
    original value ``__o<j>`` and the generalized node id ``__n<j>`` (the root for
    suppressed rows): what the data-mining representations are computed from."""
    q = exp.select().from_(exp.alias_(table(source), "s", table=True))
    generalized: dict[str, exp.Expression] = {}
    nodes: dict[str, exp.Expression] = {}
    for j, (name, h, lv) in enumerate(zip(qis, hierarchy_names, levels, strict=True)):
        if lv == 0 and roots is None:
            generalized[name] = exp.cast(column(name, "s"), "VARCHAR")
            continue
        alias = f"m{j}"
        nodes[name] = exp.column("node", alias)
        level_map = template("hierarchy/level_map", dialect, name=h, level=lv)
        # LEFT JOIN: an outer join keeps the planner's row estimate at the source's size. With
        # inner joins PostgreSQL multiplied the lookups' selectivities down to one row and
        # chose nested loops that re-ran every level map per row (0.7 s for 800 rows). A
        # value the hierarchy lacks (a row added after the run) finds no label: its row is
        # suppressed below instead of being dropped.
        q = q.join(
            exp.alias_(level_map.subquery(), alias, table=True),
            on=exp.column("value", alias).eq(exp.cast(column(name, "s"), "VARCHAR")),
            join_type="left",
            copy=False,
        )
        generalized[name] = exp.column("generalized", alias)
    unknown = [exp.column("node", f"m{j}").is_(exp.null()) for j, n in enumerate(qis) if n in nodes]
    suppressed = None
    if run_id is not None:
        # the suppressed classes' label lists, spread into one column per QI: a join on
        # plain columns is faster than building a list key for every row (sqlglot's index
        # is 0-based and shifted for 1-based dialects such as DuckDB)
        classes = (
            exp.select(
                *[
                    exp.alias_(
                        exp.Bracket(this=exp.column("class"), expressions=[exp.Literal.number(j)]),
                        f"k{j}",
                    )
                    for j in range(len(qis))
                ]
            )
            .from_("anonsql_suppressed")
            .where(exp.column("run_id").eq(exp.convert(run_id)))
        )
        on = exp.and_(*[exp.column(f"k{j}", "sup").eq(generalized[n]) for j, n in enumerate(qis)])
        q = q.join(
            exp.alias_(classes.subquery(), "sup", table=True),
            on=on,
            join_type="left",
            copy=False,
        )
        suppressed = exp.column("k0", "sup").is_(exp.null()).not_()
    if unknown:
        suppressed = exp.or_(*([suppressed] if suppressed is not None else []), *unknown)
    if drop_suppressed and suppressed is not None:
        q = q.where(exp.not_(exp.paren(suppressed)), copy=False)
    if roots is not None:
        for j, (name, root) in enumerate(zip(qis, roots, strict=True)):
            node = nodes[name]
            if suppressed is not None:
                node = exp.Case(ifs=[exp.If(this=suppressed, true=exp.convert(root))], default=node)
            q = q.select(
                exp.alias_(exp.cast(column(name, "s"), "VARCHAR"), f"__o{j}"),
                exp.alias_(node, f"__n{j}"),
                copy=False,
            )
    for c in columns:
        if c in generalized:
            value = generalized[c]
            if suppressed is not None and not drop_suppressed:
                value = exp.Case(
                    ifs=[exp.If(this=suppressed, true=exp.convert(SUPPRESSED_LABEL))], default=value
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

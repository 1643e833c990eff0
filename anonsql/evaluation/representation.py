"""Data-mining encodings of an anonymized output (seed 000): the proportional representation
and the three baselines of its Table II.

For each QI and each node ``val`` of its hierarchy there is one column ``<qi>__<val>``:

* ``proportional`` - |S(Q, val)| / |C| (seed 000, equation 1): the share of the records of the
  row's equivalence class whose *original* value is ``val`` or lies below it, computed in SQL
  from the source rows, each row's class and the closure table;
* ``oneclass`` - 1 where the row's generalized value is ``val``;
* ``fillparent`` - 1 where ``val`` is the generalized value or one of its ancestors;
* ``fillchild`` - 1 where ``val`` is the generalized value or lies below it.

Column names: ``<qi>__<label>``; a label that occurs on several levels of the hierarchy gets
``@<level>`` appended, and a name already taken (by a source column or an earlier name) gets
``~2``, ``~3``, ... Names are quoted identifiers, so any label is a valid name.
"""

from __future__ import annotations

import json

from sqlglot import exp

from anonsql.backend.sql_templates import column, ident, table
from anonsql.errors import InputError
from anonsql.hierarchy.hierarchy import Hierarchy
from anonsql.hierarchy.store import CLOSURE, NODES

#: name of the common table expression holding the run's anonymized rows
_ROWS = "__anonsql_rows"

REPRESENTATIONS = ("proportional", "oneclass", "fillparent", "fillchild")


def column_names(qis: list[str], hierarchies: list[Hierarchy], taken: list[str]) -> list[list[str]]:
    """Per QI, the column name of each node (indexed by node id)."""
    used = set(taken)
    out = []
    for q, h in zip(qis, hierarchies, strict=True):
        levels_of: dict[str, set[int]] = {}
        for node in range(h.size):
            levels_of.setdefault(h.labels[node], set()).add(int(h.levels[node]))
        names = []
        for node in range(h.size):
            label = h.labels[node]
            name = f"{q}__{label}"
            if len(levels_of[label]) > 1:
                name += f"@{int(h.levels[node])}"
            base, i = name, 2
            while name in used:
                name, i = f"{base}~{i}", i + 1
            used.add(name)
            names.append(name)
        out.append(names)
    return out


def _run(db, run_id: int) -> dict:
    be = db.backend
    if not be.table_exists("anonsql_runs"):
        raise InputError("this database has no anonsql runs yet; anonymize a table first")
    rows = be.fetchall(
        "SELECT source, output, algorithm, parameters, levels FROM anonsql_runs WHERE run_id = ?",
        [run_id],
    )
    if not rows:
        known = [r[0] for r in be.fetchall("SELECT run_id FROM anonsql_runs ORDER BY 1")]
        listed = ", ".join(map(str, known[-20:]))  # the latest, in a database with many
        more = f"{len(known) - 20} earlier and " if len(known) > 20 else ""
        raise InputError(f"no run {run_id}; the runs are {more}{listed or 'none'}")
    source, output, algorithm, params, levels = rows[0]
    if not output:
        raise InputError(f"run {run_id} wrote no output, so there is nothing to represent")
    return {
        "source": source,
        "output": output,
        "algorithm": algorithm,
        "parameters": json.loads(params),
        "levels": json.loads(levels) if levels else None,
    }


def rows_query(
    db, run_id: int
) -> tuple[exp.Select, list[str], list[str], list[Hierarchy], list[str]]:
    """The run's released rows, as its guarded output reads them now, with ``__o<j>`` /
    ``__n<j>`` per QI (suppressed rows at the roots); also the QIs, the output's columns, the
    hierarchies and their pinned keys."""
    from anonsql.output.writer import run_query

    run = _run(db, run_id)
    run["run_id"] = run_id
    q, info = run_query(db, run, roots=True, flag=True)
    return q, info["qis"], info["columns"], info["hierarchies"], info["keys"]


def representation_query(db, run_id: int, kind: str, with_original: bool = False) -> exp.Select:
    """The representation's rows; ``with_original`` adds each QI's original value as
    ``__o<j>`` (to encode the original table the same way, e.g. for training a model)."""
    if kind not in REPRESENTATIONS:
        raise InputError(
            f"unknown representation {kind!r}; use one of {', '.join(REPRESENTATIONS)}"
        )
    query, qis, columns, hs, names = rows_query(db, run_id)
    # the anonymized rows are read up to m + 2 times: as a common table expression they are
    # computed once (PostgreSQL materializes a CTE referenced more than once; inlined copies
    # of the subquery were re-run inside nested loops there)
    rows = table(_ROWS)
    colnames = column_names(qis, hs, columns)
    m = len(qis)
    keys = [f"__n{j}" for j in range(m)]
    out = exp.select(*[exp.alias_(column(c, "r"), ident(c)) for c in columns])
    if with_original:
        out = out.select(*[column(f"__o{j}", "r") for j in range(m)], copy=False)
    if kind == "proportional":
        props = _proportions(rows, qis, names, hs, colnames)
        on = exp.and_(*[column(k, "r").eq(column(k, "p")) for k in [*keys, "__suppressed"]])
        out = out.from_(exp.alias_(rows.copy(), "r", table=True)).join(
            exp.alias_(props.subquery(), "p", table=True), on=on
        )
        for j in range(m):
            for node in range(hs[j].size):
                out = out.select(
                    exp.alias_(column(colnames[j][node], "p"), ident(colnames[j][node])),
                    copy=False,
                )
        return out.with_(ident(_ROWS), as_=query, copy=False)
    out = out.from_(exp.alias_(rows.copy(), "r", table=True))
    for j, h in enumerate(hs):
        gen = column(f"__n{j}", "r")
        for node in range(h.size):
            if kind == "oneclass":
                members = [node]
            elif kind == "fillparent":  # node is the value or one of its ancestors
                members = [d for d in range(h.size) if node in _ancestors(h, d)]
            else:  # fillchild: node is the value or below it
                members = list(_ancestors(h, node))
            hit = exp.In(this=gen, expressions=[exp.convert(int(x)) for x in members])
            value = exp.Case(
                ifs=[exp.If(this=hit, true=exp.Literal.number(1))], default=exp.Literal.number(0)
            )
            out = out.select(exp.alias_(value, ident(colnames[j][node])), copy=False)
    return out.with_(ident(_ROWS), as_=query, copy=False)


def _ancestors(h: Hierarchy, node: int) -> set[int]:
    row = h.ancestors[node]
    return {int(x) for x in row if x >= 0}


def _proportions(rows, qis, names, hs, colnames) -> exp.Select:
    """Per class (the generalized node ids): for every QI and node, the share of the class's
    records whose original value lies at or below the node - original leaf -> all its
    ancestors through the closure table, counted per class, divided by the class size."""
    m = len(qis)
    keys = [f"__n{j}" for j in range(m)]
    # Suppressed rows are encoded as fully generalized: their class (flagged, at the roots)
    # counts every row of the table, so its shares are the table's and say nothing about the
    # suppressed records themselves (else one suppressed record's shares would be its exact
    # values). Every row not suppressed is counted there once more. A released class that
    # is at the roots without being suppressed keeps its own shares (seed 000, Table III).
    flag = "__suppressed"
    originals = [column(f"__o{j}") for j in range(m)]
    rows = exp.union(
        exp.select(*[column(k) for k in keys], column(flag), *originals).from_(rows.copy()),
        exp.select(
            *[exp.alias_(exp.convert(h.root), k) for k, h in zip(keys, hs, strict=True)],
            exp.alias_(exp.true(), flag),
            *originals,
        )
        .from_(rows.copy())
        .where(exp.not_(column(flag))),
        distinct=False,
    ).subquery()
    keys = [*keys, flag]
    parts = []
    for j, name in enumerate(names):
        leaf = exp.alias_(table(NODES), "leaf", table=True)
        clo = exp.alias_(table(CLOSURE), "c", table=True)
        part = (
            exp.select(
                *[column(k, "x") for k in keys],
                exp.alias_(exp.Literal.number(j), "qi"),
                exp.alias_(column("ancestor", "c"), "node"),
            )
            .from_(exp.alias_(rows.copy(), "x", table=True))
            .join(
                leaf,
                on=exp.and_(
                    column("hierarchy", "leaf").eq(exp.convert(name)),
                    column("level", "leaf").eq(exp.Literal.number(0)),
                    column("label", "leaf").eq(column(f"__o{j}", "x")),
                ),
            )
            .join(
                clo,
                on=exp.and_(
                    column("hierarchy", "c").eq(exp.convert(name)),
                    column("descendant", "c").eq(column("id", "leaf")),
                ),
            )
        )
        parts.append(part)
    hits: exp.Query = parts[0]
    for p in parts[1:]:
        hits = exp.union(hits, p, distinct=False)
    size = exp.alias_(exp.Count(this=exp.Star()), "__size")
    sizes = (
        exp.select(*[column(k) for k in keys], size)
        .from_(exp.alias_(rows.copy(), "y", table=True))
        .group_by(*[column(k) for k in keys])
    )
    props = (
        exp.select(*[column(k, "h") for k in keys])
        .from_(exp.alias_(hits.subquery(), "h", table=True))
        .join(
            exp.alias_(sizes.subquery(), "z", table=True),
            on=exp.and_(*[column(k, "h").eq(column(k, "z")) for k in keys]),
        )
    )
    for j, h in enumerate(hs):
        for node in range(h.size):
            hit = exp.and_(
                column("qi", "h").eq(exp.Literal.number(j)),
                column("node", "h").eq(exp.convert(node)),
            )
            count = exp.Sum(
                this=exp.Case(
                    ifs=[exp.If(this=hit, true=exp.Literal.number(1))],
                    default=exp.Literal.number(0),
                )
            )
            share = exp.Div(
                this=exp.cast(count, "DOUBLE"), expression=exp.Max(this=column("__size", "z"))
            )
            props = props.select(exp.alias_(share, ident(colnames[j][node])), copy=False)
    return props.group_by(*[column(k, "h") for k in keys])


def materialize_representation(
    db,
    run_id: int,
    kind: str,
    name: str | None = None,
    materialize: str = "view",
    replace: bool = False,
) -> str:
    """Create the representation as a view (or table) named ``<output>_<kind>`` by default,
    in one transaction, so a failure leaves nothing behind. It replaces a relation of that
    name only when anonsql wrote it or ``replace`` is set, and never the run's source."""
    from anonsql.output.materialize import replace_output
    from anonsql.output.naming import check_may_replace, check_output_name, record_written

    run = _run(db, run_id)
    name = name or f"{run['output']}_{kind}"
    check_output_name(name, run["source"], db.backend)
    check_may_replace(db, name, replace)
    query = representation_query(db, run_id, kind)
    with db.backend.transaction():
        replace_output(db, materialize, name, query)
        record_written(db, name, "represent")
    return name


__all__ = ["REPRESENTATIONS", "column_names", "materialize_representation", "representation_query"]

"""SQL templates kept as files under ``sql/``, one statement per file, in DuckDB's dialect.

Templates use named placeholders (``:name``). They are parsed with sqlglot and filled with
:func:`sqlglot.expressions.replace_placeholders`, so identifiers and literals are never pasted
into SQL text: an identifier is an ``exp.Identifier`` (always quoted), a value a literal.

A backend for another engine asks for its dialect; when a file ``<dialect>__<name>.sql`` sits
beside ``<name>.sql`` it is used instead (dbt's ``default__x`` / ``postgres__x`` convention),
otherwise the DuckDB template is transpiled by sqlglot.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import sqlglot
from sqlglot import exp

from anonsql.backend import caches
from anonsql.resources import resource_dir


def sql_dir() -> Path:
    """Folder of the SQL templates: inside the wheel, or at the top of a source checkout."""
    return resource_dir("sql")


def ident(name: str) -> exp.Identifier:
    """A quoted identifier: any string, quotes and semicolons included, is just a name."""
    if not isinstance(name, str) or name == "":
        raise ValueError(f"invalid identifier {name!r}")
    return exp.to_identifier(name, quoted=True)


def table(name: str, schema: str | None = None) -> exp.Table:
    """A table reference built from parts, never parsed from text."""
    return exp.Table(this=ident(name), db=ident(schema) if schema else None)


def column(name: str, table_alias: str | None = None) -> exp.Column:
    return exp.Column(
        this=ident(name), table=exp.to_identifier(table_alias) if table_alias else None
    )


def literal(value: Any) -> exp.Expr:
    return exp.convert(value)


#: VARCHAR, built once: ``exp.cast(x, "VARCHAR")`` parses the type's name at every call
_VARCHAR = exp.DataType.build("VARCHAR")


def as_text(value: exp.Expr) -> exp.Cast:
    """``CAST(value AS VARCHAR)``."""
    return exp.Cast(this=value, to=_VARCHAR.copy())


def left_join(query: exp.Select, relation: exp.Expr, on: exp.Expr) -> exp.Select:
    """``query LEFT JOIN relation ON on``, in place: the join node built directly
    (``Select.join(..., join_type=...)`` parses a statement for the join type at every call)."""
    query.append("joins", exp.Join(this=relation, on=on, side="LEFT"))
    return query


#: where a parsed node's metadata records its place in the template's text: needed by nothing
#: after parsing, and a copy of a tree copies every node's (the bulk of a copy's cost)
_POSITION_KEYS = ("line", "col", "start", "end")


def _without_positions(tree: exp.Expr) -> exp.Expr:
    for node in tree.walk():
        meta = node._meta
        if meta:
            for k in _POSITION_KEYS:
                meta.pop(k, None)
            if not meta:
                node._meta = None
    return tree


def _read(name: str, dialect: str) -> tuple[exp.Expr, str]:
    base = sql_dir()
    rel = Path(name + ".sql")
    override = base / rel.parent / f"{dialect}__{rel.name}"
    if dialect != "duckdb" and override.is_file():
        return _without_comments(sqlglot.parse_one(override.read_text(), read=dialect)), dialect
    path = base / rel
    if not path.is_file():
        raise FileNotFoundError(f"no SQL template {name!r} in {base}")
    return _without_comments(sqlglot.parse_one(path.read_text(), read="duckdb")), "duckdb"


def _without_comments(tree: exp.Expr) -> exp.Expr:
    """A template's comments document the file, not the statement: left out of the SQL it
    builds (a view's stored definition included)."""
    for node in tree.walk():
        node.comments = None
    return tree


@cache
def _compiled(name: str, dialect: str) -> tuple[exp.Expr, frozenset[str]]:
    """Template ``name`` parsed once per process: its tree (never handed out: callers get a
    copy, filled) and the names of its placeholders."""
    tree, _ = _read(name, dialect)
    tree = _without_positions(tree)
    wanted = frozenset(p.name for p in tree.find_all(exp.Placeholder) if p.name)
    return tree, wanted


@cache
def _parsed(name: str, dialect: str) -> tuple[exp.Expr, str]:
    # the path taken with the caches off (anonsql.backend.caches.disabled): as before
    return _read(name, dialect)


def template(name: str, /, dialect: str = "duckdb", **params: Any) -> exp.Expr:
    """Load template ``sql/<name>.sql`` and fill its placeholders.

    ``params`` values: sqlglot expressions are inserted as they are (use :func:`ident` and
    :func:`table` for names); Python scalars become literals. The tree returned is the
    caller's own (a copy of the template compiled once per process).
    """
    if not caches.ENABLED:
        parsed, _ = _parsed(name, dialect)
        tree = parsed.copy()
        wanted: set[str] | frozenset[str] = {
            p.name for p in tree.find_all(exp.Placeholder) if p.name
        }
    else:
        # replace_placeholders copies the tree before it fills it: the one copy needed
        tree, wanted = _compiled(name, dialect)
    missing = wanted - params.keys()
    if missing:
        raise KeyError(f"template {name!r} needs {sorted(missing)}")
    filled = {k: v if isinstance(v, exp.Expression) else literal(v) for k, v in params.items()}
    return exp.replace_placeholders(tree, **filled)


def query_template(name: str, /, dialect: str = "duckdb", **params: Any) -> exp.Query:
    """:func:`template` of a template that is one query (a SELECT or a set operation), typed
    so: a caller selects from it, joins it or adds to it."""
    tree = template(name, dialect, **params)
    if not isinstance(tree, exp.Query):
        raise TypeError(f"SQL template {name!r} is not a query")
    return tree


def render(name: str, /, dialect: str = "duckdb", **params: Any) -> str:
    """Template ``name`` filled and written as SQL text for ``dialect``."""
    return template(name, dialect, **params).sql(dialect=dialect, comments=False)


_KINDS = {"table": "TABLE", "view": "VIEW"}


def temporary(name: str, query: exp.Query, dialect: str) -> exp.Expr:
    """A session-private relation holding ``query``'s rows: a temporary table, or on Spark a
    cached temporary view (``CACHE TABLE ... AS``, computed once, kept by the executors)."""
    if dialect == "spark":
        return exp.Cache(this=table(name), expression=query)
    return exp.Create(
        this=table(name),
        kind="TABLE",
        expression=query,
        properties=exp.Properties(expressions=[exp.TemporaryProperty()]),
    )


@cache
def _drop(kind: str) -> exp.Expr:
    return _without_positions(
        sqlglot.parse_one(f"DROP {_KINDS[kind]} IF EXISTS :target", read="duckdb")
    )


def drop(kind: str, name: str) -> exp.Expr:
    """``DROP TABLE|VIEW IF EXISTS <name>``, the name as an identifier."""
    if not caches.ENABLED:
        stmt = sqlglot.parse_one(f"DROP {_KINDS[kind]} IF EXISTS :target", read="duckdb")
    else:
        stmt = _drop(kind)  # replace_placeholders fills a copy
    return exp.replace_placeholders(stmt, target=table(name))

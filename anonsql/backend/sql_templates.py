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


def literal(value: Any) -> exp.Expression:
    return exp.convert(value)


@cache
def _parsed(name: str, dialect: str) -> tuple[exp.Expression, str]:
    base = sql_dir()
    rel = Path(name + ".sql")
    override = base / rel.parent / f"{dialect}__{rel.name}"
    if dialect != "duckdb" and override.is_file():
        return sqlglot.parse_one(override.read_text(), read=dialect), dialect
    path = base / rel
    if not path.is_file():
        raise FileNotFoundError(f"no SQL template {name!r} in {base}")
    return sqlglot.parse_one(path.read_text(), read="duckdb"), "duckdb"


def template(name: str, /, dialect: str = "duckdb", **params: Any) -> exp.Expression:
    """Load template ``sql/<name>.sql`` and fill its placeholders.

    ``params`` values: sqlglot expressions are inserted as they are (use :func:`ident` and
    :func:`table` for names); Python scalars become literals.
    """
    parsed, _ = _parsed(name, dialect)
    tree = parsed.copy()
    wanted = {p.name for p in tree.find_all(exp.Placeholder) if p.name}
    missing = wanted - params.keys()
    if missing:
        raise KeyError(f"template {name!r} needs {sorted(missing)}")
    filled = {k: v if isinstance(v, exp.Expression) else literal(v) for k, v in params.items()}
    return exp.replace_placeholders(tree, **filled)


def render(name: str, /, dialect: str = "duckdb", **params: Any) -> str:
    """Template ``name`` filled and written as SQL text for ``dialect``."""
    return template(name, dialect, **params).sql(dialect=dialect, comments=False)


_KINDS = {"table": "TABLE", "view": "VIEW"}


def drop(kind: str, name: str) -> exp.Expression:
    """``DROP TABLE|VIEW IF EXISTS <name>``, the name as an identifier."""
    stmt = sqlglot.parse_one(f"DROP {_KINDS[kind]} IF EXISTS :target", read="duckdb")
    return exp.replace_placeholders(stmt, target=table(name))

"""Constructs anonsql's SQL needs that some dialects lack.

sqlglot transpiles what it can and emits a best guess for the rest (an array column type for
T-SQL, ``ARG_MIN`` for PostgreSQL) instead of failing. anonsql checks the few constructs its
own statements use before generating them, so a run or a deployment script for a dialect
that cannot express one stops with a clear error and nothing is created.
"""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from anonsql.errors import UnsupportedDialectError

#: the dialects anonsql targets; other sqlglot dialects are accepted when the checks pass
TARGETS = ("duckdb", "postgres", "spark", "snowflake", "bigquery")


def _has_array(tree: exp.Expr) -> bool:
    return any(d.is_type(exp.DataType.Type.ARRAY) for d in tree.find_all(exp.DataType)) or any(
        True for _ in tree.find_all(exp.Bracket)
    )


def _has_recursive_cte(tree: exp.Expr) -> bool:
    return any(w.args.get("recursive") for w in tree.find_all(exp.With))


def _has_star_replace(tree: exp.Expr) -> bool:
    return any(s.args.get("replace") for s in tree.find_all(exp.Star))


def _has_arg_min(tree: exp.Expr) -> bool:
    return any(True for _ in tree.find_all(exp.ArgMin, exp.ArgMax))


# (construct, detector, dialects without it). The lists come from each engine's reference:
# no array column type in T-SQL, MySQL, SQLite, Oracle, Teradata; no recursive CTE in Hive
# or Spark before 4.1 ("spark2"); no ``* REPLACE (...)`` outside DuckDB, BigQuery, Snowflake
# and ClickHouse; no ARG_MIN / MIN_BY aggregate in PostgreSQL, SQLite, MySQL or T-SQL.
_CONSTRUCTS: list[tuple[str, Callable[[exp.Expr], bool], frozenset[str]]] = [
    (
        "array columns",
        _has_array,
        frozenset({"tsql", "fabric", "mysql", "singlestore", "sqlite", "oracle", "teradata"}),
    ),
    ("recursive common table expressions", _has_recursive_cte, frozenset({"hive", "spark2"})),
    (
        "SELECT * REPLACE (...)",
        _has_star_replace,
        frozenset(
            {"postgres", "spark", "spark2", "databricks", "hive", "tsql", "mysql", "sqlite"}
            | {"oracle", "redshift", "trino", "presto", "athena", "teradata"}
        ),
    ),
    ("ARG_MIN / MIN_BY aggregates", _has_arg_min, frozenset({"postgres", "sqlite", "tsql"})),
]


def check_dialect_name(dialect: str) -> None:
    from sqlglot.dialects.dialect import Dialect

    try:
        Dialect.get_or_raise(dialect)
    except ValueError:
        raise UnsupportedDialectError(
            f"unknown SQL dialect {dialect!r}; anonsql targets {', '.join(TARGETS)}"
        ) from None


def check_constructs(tree: exp.Expr, dialect: str, what: str = "this statement") -> None:
    """Raise :class:`UnsupportedDialectError` when ``tree`` uses a construct ``dialect``
    lacks."""
    for construct, detect, lacking in _CONSTRUCTS:
        if dialect in lacking and detect(tree):
            raise UnsupportedDialectError(
                f"the {dialect} dialect has no {construct}, which {what} needs; anonsql "
                f"targets {', '.join(TARGETS)}"
            )

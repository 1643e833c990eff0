"""Table macros for plain SQL (DuckDB): the classes, k, l and t of any table for given
columns, e.g. ``SELECT * FROM anonsql_k('adult_k5', ['age', 'sex'])``.

They are static DuckDB statements (macros and ``COLUMNS`` lambdas have no equivalent in
other engines), kept as ``sql/functions/duckdb__*.sql`` and created as TEMP macros on each
connection, so they never become part of a user's database file.
"""

from __future__ import annotations

from anonsql.resources import resource_dir

#: in creation order (later macros call earlier ones)
MACROS = ("anonsql_classes", "anonsql_sensitive_counts", "anonsql_k", "anonsql_l", "anonsql_t")


def macro_statements(dialect: str = "duckdb") -> list[str]:
    folder = resource_dir("sql") / "functions"
    return [(folder / f"{dialect}__{name}.sql").read_text() for name in MACROS]


def register_macros(con) -> None:
    for statement in macro_statements("duckdb"):
        con.execute(statement)


def install_macros(con) -> list[str]:
    """Create the macros as persistent objects of the database, for connections that do
    not go through anonsql (a dbt post-hook, a BI tool). Returns their names."""
    for statement in macro_statements("duckdb"):
        con.execute(statement.replace("CREATE OR REPLACE TEMP MACRO", "CREATE OR REPLACE MACRO"))
    return list(MACROS)


__all__ = ["MACROS", "install_macros", "macro_statements", "register_macros"]

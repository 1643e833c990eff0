"""One open database: its backend, its hierarchy store and the UDFs registered on it.

On a server engine (PostgreSQL, Spark) anonsql's own tables are created on first use, not on
connect, so a request that fails its checks leaves the target as it was."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from anonsql.backend.base import Backend
from anonsql.backend.sql_templates import drop
from anonsql.errors import AnonsqlError, InputError
from anonsql.hierarchy.store import HierarchyStore


class Database:
    """The library's entry point to a database (DuckDB file by default)."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.hierarchies = HierarchyStore(backend)
        if backend.dialect == "duckdb":
            self.hierarchies.ensure_schema()
            from anonsql.hierarchy import lca_udf

            path = getattr(backend, "path", None)
            key = str(Path(path).resolve()) if path and path != ":memory:" else None
            lca_udf.register(backend.con, self.hierarchies, key)  # type: ignore[attr-defined]
            from anonsql.backend.macros import register_macros

            register_macros(backend.con)  # type: ignore[attr-defined]

    @classmethod
    def open(cls, target: Any = "anonsql.duckdb") -> Database:
        """Open a DuckDB file (the default), a PostgreSQL URL (``postgresql://...``), a
        Spark warehouse (``spark:DIR``), or wrap an open connection or SparkSession."""
        from anonsql.backend import connect

        target = str(target) if isinstance(target, Path) else target
        if isinstance(target, Database):
            return target
        from anonsql.backend import backend_name

        if not isinstance(target, str) and backend_name(target) == "duckdb":
            import duckdb

            if not isinstance(target, duckdb.DuckDBPyConnection):
                # anything else would become a file named after its repr
                raise InputError(
                    f"cannot open a database from a {type(target).__name__}: give a path, a "
                    f"URL or an open DuckDB, psycopg or Spark connection"
                )
        try:
            backend = connect(target)
        except AnonsqlError:
            raise
        except Exception as e:  # duckdb's IOException and friends
            raise InputError(f"cannot open database {str(target)!r}: {e}") from None
        try:
            return cls(backend)
        except AnonsqlError:
            if backend.dialect != "duckdb":
                backend.close()
            raise

    def drop_relation(self, name: str) -> None:
        """Drop the view or table the engine resolves ``name`` to, if there is one."""
        kind = self.backend.relation_kind(name)
        if kind:
            self.backend.execute(drop(kind, name))

    def close(self) -> None:
        self.backend.close()

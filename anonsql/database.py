"""One open database: its backend, its hierarchy store and the UDFs registered on it."""

from __future__ import annotations

from pathlib import Path

from anonsql.backend.base import Backend
from anonsql.backend.sql_templates import drop, table, template
from anonsql.errors import AnonsqlError, InputError
from anonsql.hierarchy.store import HierarchyStore


class Database:
    """The library's entry point to a database (DuckDB file by default)."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self.hierarchies = HierarchyStore(backend)
        self.hierarchies.ensure_schema()
        if backend.dialect == "duckdb":
            from anonsql.hierarchy import lca_udf

            path = getattr(backend, "path", None)
            key = str(Path(path).resolve()) if path and path != ":memory:" else None
            lca_udf.register(backend.con, self.hierarchies, key)  # type: ignore[attr-defined]
            from anonsql.backend.macros import register_macros

            register_macros(backend.con)  # type: ignore[attr-defined]

    @classmethod
    def open(cls, path: str | Path = "anonsql.duckdb") -> Database:
        from anonsql.backend.duckdb_backend import DuckDBBackend

        try:
            return cls(DuckDBBackend(path))
        except AnonsqlError:
            raise
        except Exception as e:  # duckdb's IOException and friends
            raise InputError(f"cannot open database {str(path)!r}: {e}") from None

    def import_file(self, name: str, path: str | Path, sep: str = ",", replace: bool = False):
        """Load a CSV (with header) or Parquet file into a new table, in one transaction."""
        p = Path(path)
        if not p.is_file():
            raise InputError(f"file {str(p)!r} does not exist")
        kind = "parquet" if p.suffix.lower() in (".parquet", ".pq") else "csv"
        if self.backend.table_exists(name) and not replace:
            raise InputError(f"table {name!r} exists already; pass --replace to replace it")
        params = {"target": table(name), "path": str(p)}
        if kind == "csv":
            params["sep"] = sep
        stmt = template(f"io/import_{kind}", self.backend.dialect, **params)
        try:
            with self.backend.transaction():
                if replace:
                    self.drop_relation(name)
                self.backend.execute(stmt)
        except AnonsqlError:
            raise
        except Exception as e:
            raise InputError(f"cannot import {str(p)!r} into {name!r}: {e}") from None
        return self.backend.fetchall(f"SELECT COUNT(*) FROM {self.backend.quote(name)}")[0][0]

    def drop_relation(self, name: str) -> None:
        kind = self.backend.relation_kind(name)
        if kind:
            self.backend.execute(drop(kind, name))

    def close(self) -> None:
        self.backend.close()

"""The DuckDB backend: the embedded default (a database file, or ``:memory:``)."""

from __future__ import annotations

import string
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from sqlglot import exp

from anonsql.backend import caches
from anonsql.backend.base import Backend
from anonsql.backend.sql_templates import table

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

DEFAULT_DB = "anonsql.duckdb"
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


class DuckDBBackend(Backend):
    dialect = "duckdb"

    def __init__(self, database: str | Path | duckdb.DuckDBPyConnection = DEFAULT_DB) -> None:
        super().__init__()
        import duckdb

        if isinstance(database, duckdb.DuckDBPyConnection):
            self.con = database
            self.path = None
        else:
            self.path = str(database)
            self.con = duckdb.connect(self.path)
        self._frame_counter = 0
        self._sole_writer: bool | None = None

    @property
    def sole_writer(self) -> bool:  # type: ignore[override]
        """A local database (a file or ``:memory:``): DuckDB locks a file to the one process
        that writes it. A remote one (MotherDuck's ``md:``) has other writers."""
        if self._sole_writer is None:
            rel = self.con.execute(
                "SELECT * FROM duckdb_databases() WHERE database_name = current_database()"
            )
            names = [d[0] for d in rel.description]
            row = rel.fetchone()
            kind = row[names.index("type")] if row is not None and "type" in names else None
            remote = str(self.path or "").lower().startswith("md:")
            self._sole_writer = row is not None and not remote and kind in (None, "duckdb")
        return self._sole_writer

    def execute(self, statement: exp.Expr | str, params: list[Any] | None = None) -> None:
        self.con.execute(self.sql_text(statement), params or [])

    def fetchall(self, statement: exp.Expr | str, params: list[Any] | None = None) -> list[tuple]:
        return self.con.execute(self.sql_text(statement), params or []).fetchall()

    def fetch_df(self, statement: exp.Expr | str, params: list[Any] | None = None) -> pd.DataFrame:
        return self.con.execute(self.sql_text(statement), params or []).df()

    def fetch_columns(
        self, statement: exp.Expr | str, params: list[Any] | None = None
    ) -> dict[str, Any]:
        result = self.con.execute(self.sql_text(statement), params or []).fetchnumpy()
        # NULLs arrive as masked arrays; fill them with NaN-like markers the caller checks
        out = {}
        for name, col in result.items():
            if isinstance(col, np.ma.MaskedArray) and np.ma.is_masked(col):
                if col.dtype.kind in "OU":
                    # None itself: ``filled(None)`` would write numpy's default fill value of
                    # object arrays, the string '?', indistinguishable from a real '?'
                    data = np.asarray(col.data, dtype=object)
                    data[np.ma.getmaskarray(col)] = None
                    col = data
                else:
                    col = col.filled(-1)
            out[name] = np.asarray(col)
        return out

    def run_user_sql(self, sql: str) -> pd.DataFrame | None:
        caches.catalog_changed()  # the statement may write anonsql's tables
        relation = self.con.sql(sql)
        return None if relation is None else relation.df()

    def write_frame(self, name: str, frame: pd.DataFrame, temporary: bool = False) -> None:
        # A DataFrame is registered under a private name and copied with CREATE TABLE AS:
        # the user-visible name only ever appears as a quoted identifier.
        self._frame_counter += 1
        view = f"__anonsql_frame_{self._frame_counter}"
        self.con.register(view, frame)
        try:
            create = exp.Create(
                this=table(name),
                kind="TABLE",
                replace=True,
                expression=exp.select("*").from_(table(view)),
                properties=exp.Properties(expressions=[exp.TemporaryProperty()])
                if temporary
                else None,
            )
            self.execute(create)
        finally:
            self.con.unregister(view)

    def insert_frame(self, statement: Callable[[exp.Table], exp.Expr], frame) -> None:
        """``statement(frame)`` reading the frame registered under a private name: one
        statement (the default stages it in a temporary table first: three). The frame's
        values never become SQL text."""
        self._frame_counter += 1
        view = f"__anonsql_frame_{self._frame_counter}"
        self.con.register(view, frame)
        try:
            self.execute(statement(table(view)))
        finally:
            self.con.unregister(view)

    def _begin(self) -> None:
        self.con.begin()

    def _commit(self) -> None:
        self.con.commit()

    def _rollback(self) -> None:
        self.con.rollback()

    def canonical_name(self, name: str) -> str:
        # DuckDB's catalog compares names case-insensitively, folding ASCII letters only:
        # "ADULT" is "adult", but "Ärger" and "ärger" are two tables
        return name.translate(_ASCII_LOWER)

    def relation_kind(self, name: str) -> str | None:
        found = self._relation(name)
        return None if found is None else found[1]

    def stored_name(self, name: str) -> str | None:
        # what relation_kind reads names the relation as stored: one query, not two
        found = self._relation(name)
        return None if found is None else found[0]

    def _relation(self, name: str) -> tuple[str, str] | None:
        """(stored name, kind) of the relation ``name`` resolves to (a temporary one under
        ``name``), or None."""
        # lower() (Unicode) on both sides selects a superset of the names DuckDB resolves
        # "name" to; canonical_name then keeps the ones it really does
        # the catalog functions that information_schema.tables is a view over, read
        # directly: half the cost, and a run asks this four or five times
        rows = self.fetchall(
            "SELECT table_name, 'BASE TABLE' FROM duckdb_tables() "
            "WHERE lower(table_name) = lower($1) AND schema_name = current_schema() "
            "AND database_name = current_database() "
            "UNION ALL SELECT view_name, 'VIEW' FROM duckdb_views() "
            "WHERE lower(view_name) = lower($1) AND schema_name = current_schema() "
            "AND database_name = current_database() AND NOT internal",
            [name],
        )
        rows = [r for r in rows if self.same_relation(r[0], name)]
        stored = str(rows[0][0]) if rows else name
        if not rows:
            rows = self.fetchall(
                "SELECT table_name, 'LOCAL TEMPORARY' FROM duckdb_tables() "
                "WHERE lower(table_name) = lower(?) AND temporary",
                [name],
            )
            rows = [r for r in rows if self.same_relation(r[0], name)]
        if not rows:
            return None
        return stored, "view" if rows[0][1] == "VIEW" else "table"

    def columns(self, name: str) -> list[str]:
        rel = self.con.execute(exp.select("*").from_(table(name)).limit(0).sql("duckdb"))
        return [d[0] for d in rel.description]

    def column_types(self, name: str) -> dict[str, str]:
        rel = self.con.execute(exp.select("*").from_(table(name)).limit(0).sql("duckdb"))
        return {d[0]: str(d[1]) for d in rel.description}

    def close(self) -> None:
        self.con.close()


def connect(database: str | Path = DEFAULT_DB) -> DuckDBBackend:
    return DuckDBBackend(database)

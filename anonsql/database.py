"""One open database: its backend, its hierarchy store and the UDFs registered on it.

On a server engine (PostgreSQL, Spark) anonsql's own tables are created on first use, not on
connect, so a request that fails its checks leaves the target as it was."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlglot import exp

from anonsql.backend.base import Backend
from anonsql.backend.sql_templates import drop, table, template
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

    def import_file(self, name: str, path: str | Path, sep: str = ",", replace: bool = False):
        """Load a CSV (with header) or Parquet file into a new table, in one transaction.

        A relation the engine takes ``name`` for (any case on DuckDB) is replaced only with
        ``replace``. The table is recorded as the user's data, so no anonsql writer replaces
        it later without ``replace`` (even where an earlier run wrote that name)."""
        from anonsql.output.naming import check_output_name, existing_relation, record_written

        p = Path(path)
        if not p.is_file():
            raise InputError(f"file {str(p)!r} does not exist")
        kind = "parquet" if p.suffix.lower() in (".parquet", ".pq") else "csv"
        if kind == "csv" and not _first_line(p).strip():
            # DuckDB reads an empty file as one column named column0: no data, no header
            raise InputError(f"file {str(p)!r} is empty: a CSV file needs a header row")
        self._check_free_space(p)
        check_output_name(name, None, self.backend)
        existing = existing_relation(self.backend, name)
        if existing is not None and not replace:
            also = "" if existing == name else f" (as {existing!r})"
            raise InputError(f"table {name!r} exists already{also}; pass --replace to replace it")
        params = {"target": table(name), "path": str(p)}
        if kind == "csv":
            params["sep"] = sep
        try:
            # a server engine cannot read the client's files: DuckDB parses the file here,
            # with the same options, and the backend bulk-loads the frame
            frame = None if self.backend.dialect == "duckdb" else read_file_locally(kind, params)
            with self.backend.transaction():
                if existing is not None:
                    self.drop_relation(name)
                if frame is None:
                    self.backend.execute(template(f"io/import_{kind}", "duckdb", **params))
                else:
                    self.backend.write_frame(name, frame)
                record_written(self, name, "import")
        except AnonsqlError:
            raise
        except Exception as e:
            raise InputError(f"cannot import {str(p)!r} into {name!r}: {e}") from None
        count = exp.select(exp.Count(this=exp.Star())).from_(table(name))
        return self.backend.fetchall(count)[0][0]

    def _check_free_space(self, source: Path) -> None:
        """A DuckDB file grows by about the data it takes in: refuse an import that the file
        system cannot hold, before anything is written (a full disk midway leaves the file
        grown to the whole file system; DuckDB gives the space back only on CHECKPOINT)."""
        path = getattr(self.backend, "path", None)
        if self.backend.dialect != "duckdb" or not path or path == ":memory:":
            return
        import shutil

        folder = Path(path).resolve().parent
        need = source.stat().st_size
        free = shutil.disk_usage(folder).free
        if need > free:
            raise InputError(
                f"not enough free space for {str(source)!r} ({need:,} bytes) beside the "
                f"database {path!r} ({free:,} bytes free): free some space, or import into "
                f"a database on another file system (--db)"
            )

    def drop_relation(self, name: str) -> None:
        """Drop the view or table the engine resolves ``name`` to, if there is one."""
        kind = self.backend.relation_kind(name)
        if kind:
            self.backend.execute(drop(kind, name))

    def close(self) -> None:
        self.backend.close()


def file_columns(path: str | Path, sep: str = ",") -> list[str]:
    """The column names of a CSV (its header row, as the import reads it) or Parquet file,
    read without loading the data."""
    import duckdb

    p = Path(path)
    kind = "parquet" if p.suffix.lower() in (".parquet", ".pq") else "csv"
    if kind == "csv" and not _first_line(p).strip():
        raise InputError(f"file {str(p)!r} is empty: a CSV file needs a header row")
    con = duckdb.connect(":memory:")
    try:
        reader = (
            exp.func("read_parquet", exp.convert(str(p)))
            if kind == "parquet"
            else exp.func(
                "read_csv",
                exp.convert(str(p)),
                exp.EQ(this=exp.column("delim"), expression=exp.convert(sep)),
                exp.EQ(this=exp.column("header"), expression=exp.true()),
            )
        )
        rel = con.execute(exp.select("*").from_(reader).limit(0).sql("duckdb"))
        return [d[0] for d in rel.description]
    except duckdb.Error as e:
        raise InputError(f"cannot read {str(p)!r}: {str(e).splitlines()[0]}") from None
    finally:
        con.close()


def _first_line(path: Path) -> str:
    with open(path, "rb") as f:
        return f.readline(65536).decode("utf-8", "replace")


def read_file_locally(kind: str, params: dict[str, Any]):
    """A CSV or Parquet file as a DataFrame, parsed by an in-memory DuckDB with the import
    template (so every engine gets the same column types and values)."""
    import duckdb

    con = duckdb.connect(":memory:")
    try:
        stmt = template(f"io/import_{kind}", "duckdb", **{**params, "target": table("f")})
        con.execute(stmt.sql("duckdb"))
        return con.execute("SELECT * FROM f").df()
    finally:
        con.close()

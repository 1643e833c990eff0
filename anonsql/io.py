"""Files in and out of the database, each all or nothing: :func:`import_file` loads a CSV or
Parquet file into a new table in one transaction; :func:`export_file` writes a table or view
to a CSV or Parquet file under a temporary name renamed over the target."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from anonsql.backend.sql_templates import table, template
from anonsql.errors import AnonsqlError, InputError
from anonsql.output.naming import check_output_name, existing_relation, record_written

if TYPE_CHECKING:
    from anonsql.database import Database

#: file suffixes written as Parquet
PARQUET_SUFFIXES = (".parquet", ".pq")
#: file suffixes written as CSV (text with a header row)
CSV_SUFFIXES = (".csv", ".tsv", ".txt")


def import_file(
    db: Database, name: str, path: str | Path, sep: str = ",", replace: bool = False
) -> int:
    """Load a CSV (with header) or Parquet file into a new table, in one transaction.

    A relation the engine takes ``name`` for (any case on DuckDB) is replaced only with
    ``replace``. The table is recorded as the user's data, so no anonsql writer replaces
    it later without ``replace`` (even where an earlier run wrote that name)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"file {str(p)!r} does not exist")
    kind = "parquet" if p.suffix.lower() in (".parquet", ".pq") else "csv"
    if kind == "csv" and not _first_line(p).strip():
        # DuckDB reads an empty file as one column named column0: no data, no header
        raise InputError(f"file {str(p)!r} is empty: a CSV file needs a header row")
    _check_free_space(db, p)
    check_output_name(name, None, db.backend)
    existing = existing_relation(db.backend, name)
    if existing is not None and not replace:
        also = "" if existing == name else f" (as {existing!r})"
        raise InputError(f"table {name!r} exists already{also}; pass --replace to replace it")
    params = {"target": table(name), "path": str(p)}
    if kind == "csv":
        params["sep"] = sep
    try:
        # a server engine cannot read the client's files: DuckDB parses the file here,
        # with the same options, and the backend bulk-loads the frame
        frame = None if db.backend.dialect == "duckdb" else read_file_locally(kind, params)
        with db.backend.transaction():
            if existing is not None:
                db.drop_relation(name)
            if frame is None:
                db.backend.execute(template(f"io/import_{kind}", "duckdb", **params))
            else:
                db.backend.write_frame(name, frame)
            record_written(db, name, "import")
    except AnonsqlError:
        raise
    except Exception as e:
        raise InputError(f"cannot import {str(p)!r} into {name!r}: {e}") from None
    count = exp.select(exp.Count(this=exp.Star())).from_(table(name))
    return int(db.backend.fetchall(count)[0][0])


def _check_free_space(db: Database, source: Path) -> None:
    """A DuckDB file grows by about the data it takes in: refuse an import that the file
    system cannot hold, before anything is written (a full disk midway leaves the file
    grown to the whole file system; DuckDB gives the space back only on CHECKPOINT)."""
    path = getattr(db.backend, "path", None)
    if db.backend.dialect != "duckdb" or not path or path == ":memory:":
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


def check_output_suffix(path: str | Path) -> str:
    """``parquet`` or ``csv`` for a file name, or a one-line error for any other suffix (an
    ``.xlsx`` would otherwise hold CSV text that a spreadsheet cannot open)."""
    suffix = Path(path).suffix.lower()
    if suffix in PARQUET_SUFFIXES:
        return "parquet"
    if suffix in CSV_SUFFIXES:
        return "csv"
    known = ", ".join((*CSV_SUFFIXES, *PARQUET_SUFFIXES))
    raise InputError(
        f"cannot write {str(path)!r}: anonsql writes CSV or Parquet files, named {known}"
        f"{'' if suffix else ' (the name has no suffix)'}"
    )


def export_file(db, name: str, path: str | Path, sep: str = ",") -> int:
    """Write relation ``name`` (a guarded view is read like any query, so the file holds
    what a reader of the view gets) to ``path``: Parquet for ``.parquet``/``.pq``, else CSV
    with a header row. The file is written under a temporary name and renamed over
    ``path``, so a failure leaves the previous file, or none. Returns the rows written."""
    target = Path(path)
    if target.is_dir():
        raise InputError(f"cannot write {str(target)!r}: it is a folder")
    if not target.parent.is_dir():
        raise InputError(f"cannot write {str(target)!r}: folder {str(target.parent)!r} is missing")
    kind = check_output_suffix(target)
    db.backend.require_table(name)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    params = {"source": table(name), "path": str(tmp)}
    if kind == "csv":
        params["sep"] = sep
    try:
        if db.backend.dialect == "duckdb":
            db.backend.execute(template(f"io/export_{kind}", "duckdb", **params))
        else:
            # a server engine writes no file here: its rows come over, and an in-memory
            # DuckDB writes them with the same statement (the same CSV dialect everywhere)
            import duckdb

            frame = db.backend.fetch_df(exp.select("*").from_(table(name)))
            con = duckdb.connect(":memory:")
            try:
                con.register("exported", frame)
                con.execute(
                    template(
                        f"io/export_{kind}", "duckdb", **{**params, "source": table("exported")}
                    ).sql("duckdb")
                )
            finally:
                con.close()
        os.replace(tmp, target)
    except AnonsqlError:
        raise
    except Exception as e:
        raise InputError(f"cannot export {name!r} to {str(target)!r}: {e}") from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    count = exp.select(exp.Count(this=exp.Star())).from_(table(name))
    return int(db.backend.fetchall(count)[0][0])


__all__ = [
    "CSV_SUFFIXES",
    "PARQUET_SUFFIXES",
    "check_output_suffix",
    "export_file",
    "file_columns",
    "import_file",
]

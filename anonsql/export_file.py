"""``export_file``: a table or view of the database written to a CSV or Parquet file, all
or nothing (the counterpart of :meth:`anonsql.database.Database.import_file`)."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

from anonsql.backend.sql_templates import table, template
from anonsql.errors import AnonsqlError, InputError

#: file suffixes written as Parquet
PARQUET_SUFFIXES = (".parquet", ".pq")
#: file suffixes written as CSV (text with a header row)
CSV_SUFFIXES = (".csv", ".tsv", ".txt")


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
    from sqlglot import exp

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


__all__ = ["CSV_SUFFIXES", "PARQUET_SUFFIXES", "check_output_suffix", "export_file"]

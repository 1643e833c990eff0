"""The Python API for ETL steps: one call anonymizes a table of a DuckDB connection, of a
database file, or a pandas DataFrame, and returns what was done.

    import anonsql
    run = anonsql.anonymize(("warehouse.duckdb", "adult"), {"qi": ["age", "sex"], "k": 5,
                            "suppression": 0.05, "output": "adult_k5"})
    run.levels, run.measures["suppressed_rows"], run.to_frame()
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anonsql.errors import InputError
from anonsql.options import RunOptions, check_goal, run_options

#: table name a DataFrame source gets in its throw-away database
FRAME_TABLE = "source"


@dataclass
class Run:
    """The outcome of :func:`anonymize`: the library's result plus the database it ran in."""

    result: Any  # anonsql.anonymization.Result
    database: Any  # anonsql.database.Database

    def __getattr__(self, name: str) -> Any:  # levels, measures, output, timings, ...
        if name in ("result", "database"):
            raise AttributeError(name)
        return getattr(self.result, name)

    def to_frame(self):
        """The anonymized output as a pandas DataFrame."""
        return self.result.to_frame(self.database)

    def summary(self) -> dict[str, Any]:
        return self.result.summary()


def open_source(source: Any, table: str | None):
    """(Database, table name) for every accepted form of ``source``; a DataFrame is copied
    into an in-memory database first."""
    from anonsql.backend import backend_name
    from anonsql.database import Database

    if isinstance(source, tuple):
        if len(source) != 2 or not isinstance(source[1], str):
            raise InputError("a source tuple is (connection or database path, table name)")
        if table is not None and table != source[1]:
            raise InputError(f"two table names given: {source[1]!r} and {table!r}")
        source, table = source
    if isinstance(source, Database):
        db = source
    elif _is_frame(source):
        from anonsql.backend.duckdb_backend import DuckDBBackend

        db = Database(DuckDBBackend(":memory:"))
        table = table or FRAME_TABLE
        db.backend.write_frame(table, source)
    elif isinstance(source, str | Path):
        db = Database.open(source)
    elif type(source).__name__ == "DuckDBPyConnection":
        from anonsql.backend.duckdb_backend import DuckDBBackend

        db = Database(DuckDBBackend(source))
    elif backend_name(source) != "duckdb":  # a psycopg connection or a SparkSession
        db = Database.open(source)
    else:
        raise InputError(
            "source is a DuckDB, psycopg or Spark connection, a database path or URL, or a "
            f"pandas DataFrame (with the table name where needed), not {type(source).__name__}"
        )
    if not table:
        raise InputError("name the table to anonymize (table=...)")
    return db, table


def _is_frame(x: Any) -> bool:
    return type(x).__name__ == "DataFrame" and hasattr(x, "columns")


def as_options(spec: Any, overrides: Mapping[str, Any], where: str) -> RunOptions:
    from anonsql.anonymization import Spec

    if isinstance(spec, RunOptions):
        if overrides:
            raise InputError("pass options either in the spec or as keywords, not both")
        return spec
    if isinstance(spec, Spec):
        if overrides:
            raise InputError("pass options either in the spec or as keywords, not both")
        check_goal(spec, where)  # a Spec is built without the option checks
        return RunOptions(spec)
    if spec is None:
        spec = {}
    if not isinstance(spec, Mapping):
        raise InputError(f"spec is a mapping of options or a Spec, not {type(spec).__name__}")
    return run_options({**spec, **overrides}, where)


def run(db, table: str, options: RunOptions, base_dir: str | Path = ".", progress=None):
    """Store the hierarchies the options define and anonymize, in one transaction: a run
    that fails stores nothing (no hierarchy, no output, no provenance)."""
    from anonsql.anonymization import anonymize as run_anonymize
    from anonsql.hierarchy.definitions import store_definition

    spec = options.spec
    db.backend.require_table(table)
    with db.backend.transaction():
        for qi, definition in options.hierarchies.items():
            spec.hierarchies[qi] = store_definition(db, qi, definition, base_dir, table)
        return run_anonymize(db, table, spec, progress)


def anonymize(source: Any, spec: Any = None, /, *, table: str | None = None, **options: Any) -> Run:
    """Anonymize ``source`` as ``spec`` (a mapping of options, see the README, or a
    :class:`~anonsql.anonymization.Spec`); options may also be given as keywords.

    ``source`` is a DuckDB, psycopg or Spark connection, a database path or URL
    (``postgresql://...``, ``spark:DIR``) or an anonsql Database (with
    ``table``, or as a ``(source, table)`` tuple), or a pandas DataFrame, which is
    anonymized in a throw-away in-memory database (output name default ``anonymized``;
    read it with :meth:`Run.to_frame`)."""
    opts = as_options(spec, options, "anonymize()")
    db, name = open_source(source, table)
    if _is_frame(source) and opts.spec.output is None:
        opts.spec.output = "anonymized"
    return Run(run(db, name, opts), db)


__all__ = ["Run", "anonymize", "open_source", "run"]

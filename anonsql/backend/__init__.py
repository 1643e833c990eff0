"""Backends run SQL. Everything else in anonsql only *builds* SQL (sqlglot expressions).

:data:`BACKENDS` maps a target's scheme to its backend class (imported lazily, so the
optional drivers are only needed by the engines in use):

* a path or ``:memory:`` - DuckDB, the embedded default;
* ``postgresql://user:password@host:port/database`` (or ``postgres://``) - PostgreSQL;
* ``spark:WAREHOUSE_DIR`` - Spark SQL in local mode, tables kept under the folder.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from anonsql.backend.base import Backend

BACKENDS: dict[str, str] = {
    "duckdb": "anonsql.backend.duckdb_backend:DuckDBBackend",
    "postgres": "anonsql.backend.postgres_backend:PostgresBackend",
    "spark": "anonsql.backend.spark_backend:SparkBackend",
}


def backend_name(target: Any) -> str:
    """Which backend a target (URL, path, or open connection/session) belongs to."""
    if isinstance(target, str):
        lowered = target.lower()
        if lowered.startswith(("postgresql://", "postgres://")):
            return "postgres"
        if lowered.startswith("spark:"):
            return "spark"
        return "duckdb"
    module = type(target).__module__
    if module.startswith("psycopg"):
        return "postgres"
    if module.startswith("pyspark"):
        return "spark"
    return "duckdb"


def connect(target: Any) -> Backend:
    """The backend for ``target``: a DuckDB path, a PostgreSQL URL, ``spark:DIR``, or an
    open duckdb connection, psycopg connection or SparkSession."""
    module, _, cls = BACKENDS[backend_name(target)].partition(":")
    return getattr(import_module(module), cls)(target)

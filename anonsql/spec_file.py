"""Spec files: one anonymization run described in TOML or JSON, for ETL steps and
``anonsql run``. The keys are the run options (``anonsql.options.OPTIONS``) plus where the
data is::

    database = "warehouse.duckdb"   # optional: anonsql run --db overrides it
    table = "adult"
    qi = ["age", "sex", "zip"]
    sensitive = "salary"
    k = 5
    l = 2
    suppression = 0.05
    output = "adult_k5"

    [hierarchy]
    sex = "adult_sex"                                  # a catalog name
    zip = { builder = "mask", step = 1 }               # built from the data
    age = { file = "hierarchies/age.csv" }             # relative to the spec file
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass
from pathlib import Path

from anonsql.errors import InputError
from anonsql.options import RunOptions, run_options

SOURCE_KEYS = ("database", "table")


@dataclass
class SpecFile:
    path: Path
    database: str | None
    table: str
    options: RunOptions


def load_spec_file(path: str | Path) -> SpecFile:
    p = Path(path)
    if not p.is_file():
        raise InputError(f"spec file {str(p)!r} does not exist")
    text = p.read_text(encoding="utf-8")
    try:
        data = json.loads(text) if p.suffix.lower() == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as e:
        kind = "JSON" if p.suffix.lower() == ".json" else "TOML"
        raise InputError(f"spec file {str(p)!r} is not valid {kind}: {e}") from None
    if not isinstance(data, dict):
        raise InputError(f"spec file {str(p)!r}: expected a table of options at the top")
    where = f"spec file {p.name}"
    table = data.pop("table", None)
    database = data.pop("database", None)
    if not isinstance(table, str) or not table:
        raise InputError(f'{where}: give the source table (table = "...")')
    if database is not None and not isinstance(database, str):
        raise InputError(f"{where}: 'database' must be a path")
    if database is not None and database != ":memory:" and not Path(database).is_absolute():
        database = str(p.parent / database)
    return SpecFile(p, database, table, run_options(data, where))


__all__ = ["SpecFile", "load_spec_file"]

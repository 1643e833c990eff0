"""Spec files: one anonymization run described in TOML or JSON, for ETL steps and
``anonsql run``. The keys are the run options (``anonsql.options.OPTIONS``) plus where the
data is::

    database = "warehouse.duckdb"   # optional: anonsql run --db overrides it; a
                                    # postgresql:// URL or spark:DIR is a target as given
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

from anonsql.backend import backend_name
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
    kind = "JSON" if p.suffix.lower() == ".json" else "TOML"
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"spec file {str(p)!r} is not UTF-8 text: {e}") from None
    except OSError as e:
        raise InputError(f"cannot read spec file {str(p)!r}: {e.strerror or e}") from None
    try:
        data = json.loads(text) if kind == "JSON" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as e:
        raise InputError(f"spec file {str(p)!r} is not valid {kind}: {e}") from None
    except RecursionError:
        # both parsers recurse per nesting level; no option needs more than a few levels
        raise InputError(f"spec file {str(p)!r}: {kind} nested too deeply") from None
    if not isinstance(data, dict):
        raise InputError(f"spec file {str(p)!r}: expected a table of options at the top")
    where = f"spec file {p.name}"
    table = data.pop("table", None)
    database = data.pop("database", None)
    if not isinstance(table, str) or not table:
        raise InputError(f'{where}: give the source table (table = "...")')
    if database is not None and (not isinstance(database, str) or not database):
        raise InputError(f"{where}: 'database' must be a DuckDB file path, a URL or spark:DIR")
    # only a DuckDB file is relative to the spec file; a server URL, a libpq string or
    # spark:DIR names a target as it stands (joined to a folder it would be a wrong path
    # that an error message then prints, password and all)
    if (
        database is not None
        and backend_name(database) == "duckdb"
        and database != ":memory:"
        and not Path(database).is_absolute()
    ):
        database = str(p.parent / database)
    key_file = data.get("key_file")
    if isinstance(key_file, str) and key_file and not Path(key_file).is_absolute():
        data["key_file"] = str(p.parent / key_file)  # a key file beside the spec file
    return SpecFile(p, database, table, run_options(data, where))


__all__ = ["SpecFile", "load_spec_file"]

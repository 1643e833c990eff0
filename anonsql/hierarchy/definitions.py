"""Hierarchy *definitions*: how a spec file, a shipped manifest or a SQL statement says where
a QI's hierarchy comes from, and storing it.

A definition is a mapping with exactly one of

* ``name``: a hierarchy already in the catalog;
* ``file``: a file to load (``format``: arx, parent-child or json, guessed from the name;
  ``sep`` for CSV), relative paths taken from the definition's folder;
* ``builder``: intervals, mask, dates, groups or flat, with that builder's options; its
  values come from ``values``, a ``range`` [low, high], or the data (the QI's column, or
  ``column``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from anonsql.errors import InputError

SOURCES = ("name", "file", "builder")
FILE_KEYS = {"file", "format", "sep", "name"}
BUILDER_OPTIONS = {
    "intervals": {"widths", "start", "bottom", "top"},
    "mask": {"step", "char"},
    "dates": {"levels"},
    "groups": {"sizes"},
    "flat": set(),
}
VALUE_KEYS = {"values", "range", "column"}


def describe_keys(keys) -> str:
    return ", ".join(sorted(keys))


def check_definition(qi: str, definition: Any) -> dict[str, Any]:
    """Validate a definition's shape (before touching the database); returns it as a dict."""
    where = f"hierarchy of {qi!r}"
    if isinstance(definition, str):
        return {"name": definition}
    if not isinstance(definition, Mapping):
        raise InputError(f"{where}: give a catalog name or a table with name, file or builder")
    d = dict(definition)
    chosen = [k for k in ("file", "builder") if k in d]
    if len(chosen) > 1:
        raise InputError(f"{where}: give only one of file, builder")
    if not chosen:
        if set(d) != {"name"}:
            extra = set(d) - {"name"}
            raise InputError(
                f"{where}: give name, file or builder"
                + (f" (unknown keys: {describe_keys(extra)})" if extra else "")
            )
        if not isinstance(d["name"], str) or not d["name"]:
            raise InputError(f"{where}: name must be a non-empty string")
        return d
    if chosen[0] == "file":
        unknown = set(d) - FILE_KEYS
        if unknown:
            raise InputError(f"{where}: unknown keys {describe_keys(unknown)} for a file")
        return d
    kind = d["builder"]
    if kind not in BUILDER_OPTIONS:
        raise InputError(
            f"{where}: unknown builder {kind!r}; use one of {describe_keys(BUILDER_OPTIONS)}"
        )
    allowed = BUILDER_OPTIONS[kind] | VALUE_KEYS | {"builder", "name"}
    unknown = set(d) - allowed
    if unknown:
        raise InputError(
            f"{where}: unknown keys {describe_keys(unknown)} for builder {kind!r} "
            f"(allowed: {describe_keys(allowed - {'builder'})})"
        )
    if sum(k in d for k in VALUE_KEYS) > 1:
        raise InputError(f"{where}: give at most one of values, range, column")
    return d


def store_definition(
    db,
    qi: str,
    definition: Any,
    base_dir: str | Path = ".",
    table: str | None = None,
    source_label: str | None = None,
) -> str:
    """Make the hierarchy a definition describes available in ``db``; returns its catalog
    name. File and builder hierarchies are stored under ``name`` (default: the QI)."""
    from anonsql.hierarchy import builders
    from anonsql.hierarchy.loaders import load_file

    d = check_definition(qi, definition)
    name = d.get("name", qi)
    if "file" not in d and "builder" not in d:
        db.hierarchies.load(name)  # raises a clear error when it is not in the catalog
        return name
    if "file" in d:
        path = Path(d["file"])
        if not path.is_absolute():
            path = Path(base_dir) / path
        h = load_file(name, path, d.get("format"), d.get("sep"))
        if source_label:
            h.source = source_label
    else:
        options = {k: v for k, v in d.items() if k not in VALUE_KEYS | {"builder", "name"}}
        h = builders.build(name, d["builder"], _values(db, qi, d, table), **options)
    db.hierarchies.save(h)
    return name


def _values(db, qi: str, d: Mapping[str, Any], table: str | None) -> list[Any]:
    if "values" in d:
        if not isinstance(d["values"], list):
            raise InputError(f"hierarchy of {qi!r}: values must be a list")
        return list(d["values"])
    if "range" in d:
        from anonsql.hierarchy.builders import value_range

        r = d["range"]
        ok = isinstance(r, list) and len(r) == 2
        if not ok or any(isinstance(x, bool) or not isinstance(x, int) for x in r):
            raise InputError(f"hierarchy of {qi!r}: range must be [low, high] integers")
        return value_range(r[0], r[1], f"hierarchy of {qi!r}: range")
    if table is None:
        raise InputError(f"hierarchy of {qi!r}: a builder needs values, a range or a table")
    return column_values(db, table, d.get("column", qi))


def column_values(db, table: str, column: str) -> list[str]:
    """The distinct non-NULL values of a column, as text, in order: a builder's input."""
    db.backend.require_columns(table, [column])
    from sqlglot import exp

    from anonsql.backend.sql_templates import column as col_ref
    from anonsql.backend.sql_templates import table as table_ref

    values = (
        exp.select(exp.cast(col_ref(column), "VARCHAR"))
        .distinct()
        .from_(table_ref(table))
        .where(col_ref(column).is_(exp.null()).not_())
        .order_by(exp.Literal.number(1))
    )
    rows = db.backend.fetchall(values)
    return [r[0] for r in rows]


__all__ = ["check_definition", "column_values", "store_definition"]

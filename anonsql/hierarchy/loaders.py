"""Readers for the hierarchy formats users bring: ARX CSV, parent-child CSV and JSON trees."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from anonsql.errors import HierarchyError
from anonsql.hierarchy.hierarchy import Hierarchy

FORMATS = ("arx", "parent-child", "json")


def _read_text(path: str | Path) -> str:
    p = Path(path)
    if not p.is_file():
        raise HierarchyError(f"hierarchy file {str(p)!r} does not exist")
    try:
        # utf-8-sig drops a byte-order mark that spreadsheet exports put in front
        return p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as e:
        raise HierarchyError(f"hierarchy file {str(p)!r} is not UTF-8 text: {e}") from None
    except OSError as e:
        raise HierarchyError(f"cannot read hierarchy file {str(p)!r}: {e.strerror or e}") from None


def _sniff_sep(text: str) -> str:
    # ARX writes ';'. Labels often contain commas ("{Married, Separated}", "[20, 25)"), so a
    # ';' anywhere on the first line wins; ',' and tab are the fallbacks.
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    for sep in (";", "\t", ","):
        if sep in first:
            return sep
    return ";"


def _csv_rows(text: str, sep: str | None) -> tuple[list[list[str]], list[int]]:
    sep = sep or _sniff_sep(text)
    rows: list[list[str]] = []
    numbers: list[int] = []
    reader = csv.reader(io.StringIO(text), delimiter=sep)
    for row in reader:
        if not row or all(c.strip() == "" for c in row):
            continue
        rows.append([c.strip() for c in row])
        numbers.append(reader.line_num)
    return rows, numbers


def read_arx_csv(name: str, path: str | Path, sep: str | None = None) -> Hierarchy:
    """ARX layout: no header, one row per leaf, ``leaf;level1;...;root``; ``;`` or ``,``
    (guessed from the first line when ``sep`` is None). CRLF line ends are accepted."""
    rows, numbers = _csv_rows(_read_text(path), sep)
    return Hierarchy.from_rows(name, rows, source=str(path), row_numbers=numbers)


def read_parent_child_csv(name: str, path: str | Path, sep: str | None = None) -> Hierarchy:
    """One edge per row, ``child;parent``; the root's row has an empty parent or is absent.
    A first row ``child;parent`` (any case) is taken as a header and skipped."""
    rows, numbers = _csv_rows(_read_text(path), sep)
    if rows and [c.lower() for c in rows[0][:2]] == ["child", "parent"]:
        rows, numbers = rows[1:], numbers[1:]
    edges = []
    for r, n in zip(rows, numbers, strict=True):
        if len(r) > 2:
            raise HierarchyError(
                f"hierarchy {name!r}: {path}, row {n} has {len(r)} fields; parent-child "
                f"input has two (child, parent)"
            )
        edges.append((r[0], r[1] if len(r) > 1 else None, n))
    return Hierarchy.from_edges(name, edges, source=str(path))


def read_json(name: str, path: str | Path) -> Hierarchy:
    """A nested tree; see :meth:`Hierarchy.from_tree` for the accepted node shapes."""
    text = _read_text(path)
    try:
        tree = json.loads(text)
        # the decoder and from_tree both recurse once per level of the tree
        return Hierarchy.from_tree(name, tree, source=str(path))
    except json.JSONDecodeError as e:
        raise HierarchyError(f"hierarchy file {str(path)!r} is not valid JSON: {e}") from None
    except RecursionError:
        raise HierarchyError(
            f"hierarchy file {str(path)!r}: the JSON is nested too deeply (a hierarchy of "
            f"hundreds of levels is not one anonsql can use)"
        ) from None


def load_file(name: str, path: str | Path, fmt: str | None = None, sep: str | None = None):
    """Read a hierarchy file; ``fmt`` defaults from the extension (``.json`` -> json, else
    arx)."""
    fmt = fmt or ("json" if str(path).lower().endswith(".json") else "arx")
    if fmt == "arx":
        return read_arx_csv(name, path, sep)
    if fmt == "parent-child":
        return read_parent_child_csv(name, path, sep)
    if fmt == "json":
        return read_json(name, path)
    raise HierarchyError(f"unknown hierarchy format {fmt!r}; use one of {', '.join(FORMATS)}")

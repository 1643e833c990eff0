"""Create the demo table and store the hierarchies shipped for it in ``hierarchies/census``.

The demo writes only into what it wrote itself: a ``census`` table that the demo did not
write, or a stored hierarchy with other content than the demo's that the demo did not store,
is an error unless the caller passes ``replace``. So running the demo again works, and it
never replaces a user's table or hierarchies silently."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from anonsql.database import Database
from anonsql.demo.census import generate
from anonsql.errors import InputError
from anonsql.hierarchy import builders
from anonsql.hierarchy.definitions import VALUE_KEYS, check_definition, column_values
from anonsql.hierarchy.hierarchy import Hierarchy
from anonsql.hierarchy.loaders import load_file
from anonsql.hierarchy.store import CATALOG
from anonsql.output.naming import check_output_name, existing_relation, record_written, written_by
from anonsql.resources import resource_dir

#: the demo's quasi-identifiers (income is its sensitive attribute)
DEMO_QIS = ["age", "sex", "race", "marital_status", "education", "zip"]
#: the demo's columns released as they are (declared insensitive: every column has a role)
DEMO_KEEP = ["country", "occupation"]
#: the view ``anonsql demo`` anonymizes the demo table into
DEMO_OUTPUT = "census_anonymized"


@dataclass
class DemoSetup:
    table: str
    rows: int
    hierarchies: list[str]


def source_label(folder: str) -> str:
    """Prefix of the catalog source of every hierarchy stored from a shipped manifest: a
    hierarchy whose source still starts with it was stored by anonsql and not replaced."""
    return f"anonsql:hierarchies/{folder}/"


def manifest_hierarchies(folder: str, values: Callable[[str], list[Any]]) -> list[Hierarchy]:
    """The hierarchies a shipped manifest lists, built in memory and labelled as shipped by
    anonsql. Builders take their values from the manifest (``values``, ``range``) or from
    ``values(column)``."""
    base = resource_dir("hierarchies") / folder
    manifest = json.loads((base / "manifest.json").read_text())
    label = source_label(folder)
    out = []
    for qi, definition in manifest["hierarchies"].items():
        d = check_definition(qi, definition)
        name = d.get("name", qi)
        if "file" in d:
            h = load_file(name, base / d["file"], d.get("format"), d.get("sep"))
            h.source = f"{label}{d['file']}"
        else:
            if "values" in d:
                vals = list(d["values"])
            elif "range" in d:
                vals = list(range(d["range"][0], d["range"][1] + 1))
            else:
                vals = values(d.get("column", qi))
            options = {k: v for k, v in d.items() if k not in VALUE_KEYS | {"builder", "name"}}
            h = builders.build(name, d["builder"], vals, **options)
            h.source = f"{label}manifest.json ({h.source})"
        out.append(h)
    return out


def load_manifest_hierarchies(db: Database, folder: str, table: str) -> list[str]:
    """Store every hierarchy a shipped manifest lists; builders take their values from
    ``table`` (or a ``range``) when the manifest says so."""
    hierarchies = manifest_hierarchies(folder, lambda c: column_values(db, table, c))
    with db.backend.transaction():
        for h in hierarchies:
            db.hierarchies.save(h)
    return [h.name for h in hierarchies]


def _frame_values(frame, column: str) -> list[str]:
    """A column's distinct non-NULL values as text, in order: what a builder reads from the
    table (:func:`column_values`), taken from the frame before it is written."""
    return sorted({str(v) for v in frame[column].dropna()})


def _same_content(a: Hierarchy, b: Hierarchy) -> bool:
    """Same tree: the same path from every leaf to the root (node numbering aside)."""
    return sorted(map(tuple, a.to_rows())) == sorted(map(tuple, b.to_rows()))


def demo_conflicts(
    db: Database, table: str, hierarchies: list[Hierarchy], folder: str
) -> list[str]:
    """What the demo would replace that is not its own: ``table`` when the demo did not
    write it, and stored hierarchies with other content that the demo did not store."""
    found = []
    existing = existing_relation(db.backend, table)
    if existing is not None and written_by(db, table) != "demo":
        found.append(f"table {existing!r} (not written by the demo)")
    if not db.backend.table_exists(CATALOG):  # no hierarchy stored yet (none created here)
        return found
    for h in hierarchies:
        if not db.hierarchies.exists(h.name):
            continue
        current = db.hierarchies.load(h.name)
        if _same_content(current, h) or current.source.startswith(source_label(folder)):
            continue
        found.append(f"hierarchy {h.name!r} (other content, from {current.source})")
    return found


def setup_demo(
    db: Database,
    rows: int = 30_000,
    seed: int = 7,
    table: str = "census",
    replace: bool = False,
) -> DemoSetup:
    """Write the demo table and store its hierarchies, in one transaction. Refuses (before
    writing anything) to replace what the demo did not write, unless ``replace``."""
    check_output_name(table, None, db.backend)
    frame = generate(rows, seed)
    hierarchies = manifest_hierarchies("census", lambda c: _frame_values(frame, c))
    conflicts = demo_conflicts(db, table, hierarchies, "census")
    if conflicts and not replace:
        raise InputError(
            f"the demo would replace {', '.join(conflicts)}; pass --replace (replace=True) "
            f"to replace them, or run the demo in another database (--db)"
        )
    with db.backend.transaction():
        db.drop_relation(table)  # a view of that name, too (only reached when replaceable)
        db.backend.write_frame(table, frame)
        record_written(db, table, "demo")
        for h in hierarchies:
            db.hierarchies.save(h)
    return DemoSetup(table, len(frame), [h.name for h in hierarchies])

"""Create the demo table and store the hierarchies shipped for it in ``hierarchies/census``."""

from __future__ import annotations

import json
from dataclasses import dataclass

from anonsql.database import Database
from anonsql.demo.census import generate
from anonsql.hierarchy.definitions import store_definition
from anonsql.resources import resource_dir

#: the demo's quasi-identifiers (income is its sensitive attribute)
DEMO_QIS = ["age", "sex", "race", "marital_status", "education", "zip"]


@dataclass
class DemoSetup:
    table: str
    rows: int
    hierarchies: list[str]


def load_manifest_hierarchies(db: Database, folder: str, table: str) -> list[str]:
    """Store every hierarchy a shipped manifest lists; builders take their values from
    ``table`` (or a ``range``) when the manifest says so."""
    base = resource_dir("hierarchies") / folder
    manifest = json.loads((base / "manifest.json").read_text())
    stored = []
    for name, definition in manifest["hierarchies"].items():
        label = (
            f"anonsql:hierarchies/{folder}/{definition['file']}" if "file" in definition else None
        )
        stored.append(store_definition(db, name, definition, base, table, label))
    return stored


def setup_demo(db: Database, rows: int = 30_000, seed: int = 7, table: str = "census"):
    frame = generate(rows, seed)
    with db.backend.transaction():
        db.backend.write_frame(table, frame)
        names = load_manifest_hierarchies(db, "census", table)
    return DemoSetup(table, len(frame), names)

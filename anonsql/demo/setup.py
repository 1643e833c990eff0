"""Create the demo table and store the hierarchies shipped for it in ``hierarchies/census``."""

from __future__ import annotations

import json
from dataclasses import dataclass

from anonsql.database import Database
from anonsql.demo.census import generate
from anonsql.hierarchy import builders
from anonsql.hierarchy.loaders import read_arx_csv
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
    for name, spec in manifest["hierarchies"].items():
        if "file" in spec:
            h = read_arx_csv(name, base / spec["file"])
            h.source = f"anonsql:hierarchies/{folder}/{spec['file']}"
        else:
            options = {k: v for k, v in spec.items() if k not in ("builder", "range", "column")}
            if "range" in spec:
                lo, hi = spec["range"]
                values = list(range(lo, hi + 1))
            else:
                col = db.backend.quote(spec.get("column", name))
                rows = db.backend.fetchall(
                    f"SELECT DISTINCT CAST({col} AS VARCHAR) FROM {db.backend.quote(table)} "
                    f"ORDER BY 1"
                )
                values = [r[0] for r in rows]
            h = builders.build(name, spec["builder"], values, **options)
        db.hierarchies.save(h)
        stored.append(name)
    return stored


def setup_demo(db: Database, rows: int = 30_000, seed: int = 7, table: str = "census"):
    frame = generate(rows, seed)
    with db.backend.transaction():
        db.backend.write_frame(table, frame)
        names = load_manifest_hierarchies(db, "census", table)
    return DemoSetup(table, len(frame), names)

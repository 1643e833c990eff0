"""A new user's table (``anonsql.demo.people``) in a database, with hierarchies for its
quasi-identifiers, and scans for raw identifiers in anything anonsql wrote."""

from __future__ import annotations

from pathlib import Path

from anonsql.demo.people import people
from anonsql.hierarchy import builders
from anonsql.hierarchy.definitions import column_values

#: the people table's direct identifiers
IDENTIFIERS = ("name", "email", "phone")
QIS = ["birth_date", "zip", "gender"]
KEY = "k3y-0f-the-test-suite-7f2a9c41d0"
OTHER_KEY = "an0ther-key-for-the-tests-b81e55"


def load_people(db, rows: int = 2000, seed: int = 11, name: str = "people"):
    frame = people(rows, seed)
    db.backend.write_frame(name, frame)
    for q, kind, opts in (
        ("birth_date", "dates", {"levels": ["year", "decade"]}),
        ("zip", "mask", {}),
        ("gender", "flat", {}),
    ):
        if not db.hierarchies.exists(q):
            db.hierarchies.save(builders.build(q, kind, column_values(db, name, q), **opts))
    return frame


def raw_values(frame) -> set[str]:
    """Every raw identifier value of the frame, as text."""
    return {str(v) for c in IDENTIFIERS for v in frame[c].tolist()}


def cells(frame) -> set[str]:
    return {str(v) for c in frame.columns for v in frame[c].tolist()}


def file_hits(path: Path, needles: set[str]) -> list[str]:
    """The needles found in a file's bytes (every file under a folder)."""
    paths = [p for p in path.rglob("*") if p.is_file()] if path.is_dir() else [path]
    found = []
    for p in paths:
        data = p.read_bytes()
        found += [n for n in needles if n.encode() in data]
    return found

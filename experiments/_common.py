"""Shared set-up of the experiment scripts: Adult from ../shared/data with ARX's hierarchies,
and the NAUC of seed 004 (mean value of a curve over an interval of k)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ADULT = [
    "age",
    "sex",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
    "salary-class",
]


def adult_db():
    from anonsql.database import Database
    from anonsql.hierarchy.loaders import read_arx_csv

    folder = ROOT.parent / "shared" / "data" / "adult"
    if not folder.is_dir():
        raise SystemExit(f"Adult not found at {folder} (../shared is absent)")
    db = Database.open(":memory:")
    db.import_file("adult", folder / "adult.csv", sep=";")
    for c in ADULT:
        db.hierarchies.save(read_arx_csv(c, folder / f"adult_hierarchy_{c}.csv"))
    return db


def nauc(ks: list[int], values: list[float], lo: float, hi: float) -> float:
    """Seed 004's NAUC: (1 / (b - a)) * integral of the curve over [a, b], the curve being
    the piecewise-linear interpolation of the measured points (trapezoids)."""
    x = np.asarray(ks, dtype=float)
    y = np.asarray(values, dtype=float)
    keep = (x >= lo) & (x <= hi)
    return float(np.trapezoid(y[keep], x[keep]) / (hi - lo))

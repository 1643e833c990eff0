"""Shared set-up of the experiment scripts: Adult from ../shared/data with ARX's hierarchies,
and the NAUC of seed 004 (mean value of a curve over an interval of k)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "experiments" / "results"

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


class Log:
    """Print a line and keep it in a results file: the file holds only what a rerun
    reproduces (timings go to stderr)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.file = open(path, "w")  # noqa: SIM115 - closed by close()

    def __call__(self, line: str = "") -> None:
        print(line, flush=True)
        self.file.write(line + "\n")
        self.file.flush()

    def close(self) -> None:
        self.file.close()
        print(f"wrote {self.path}")


class Cache:
    """Measured points of a long experiment, one JSON line each, so an interrupted run can
    resume (only for deterministic computations; the results files never read it)."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self.points: dict[str, dict] = {}
        if path and Path(path).exists():
            for line in Path(path).read_text().splitlines():
                if line.strip():
                    entry = json.loads(line)
                    self.points[entry["key"]] = entry["value"]

    def get(self, *key) -> dict | None:
        return self.points.get(json.dumps(key))

    def put(self, *key_and_value) -> None:
        *key, value = key_and_value
        text = json.dumps(key)
        self.points[text] = value
        if self.path:
            with open(self.path, "a") as f:
                f.write(json.dumps({"key": text, "value": value}) + "\n")


def adult_db():
    from anonsql.database import Database
    from anonsql.hierarchy.loaders import read_arx_csv
    from anonsql.io import import_file

    folder = ROOT.parent / "shared" / "data" / "adult"
    if not folder.is_dir():
        raise SystemExit(f"Adult not found at {folder} (../shared is absent)")
    db = Database.open(":memory:")
    import_file(db, "adult", folder / "adult.csv", sep=";")
    for c in ADULT:
        db.hierarchies.save(read_arx_csv(c, folder / f"adult_hierarchy_{c}.csv"))
    return db


def canonical(hist):
    """The histogram with its rows sorted by (QI leaves..., sensitive value): the database
    returns a GROUP BY's rows in an order that changes between reads, and floating-point
    sums over the rows (GAA's class counts, the measures) depend on it in the last binary
    digit; sorted, a rerun reads the same rows in the same order."""
    import dataclasses

    keys = [hist.codes[:, j] for j in range(hist.codes.shape[1])]
    if hist.sens is not None:
        keys.append(hist.sens)
    order = np.lexsort(keys[::-1])
    codes = np.asfortranarray(hist.codes[order])
    sens = None if hist.sens is None else hist.sens[order]
    return dataclasses.replace(hist, codes=codes, counts=hist.counts[order], sens=sens)


def nauc(ks: list[int], values: list[float], lo: float, hi: float) -> float:
    """Seed 004's NAUC: (1 / (b - a)) * integral of the curve over [a, b], the curve being
    the piecewise-linear interpolation of the measured points (trapezoids)."""
    x = np.asarray(ks, dtype=float)
    y = np.asarray(values, dtype=float)
    keep = (x >= lo) & (x <= hi)
    return float(np.trapezoid(y[keep], x[keep]) / (hi - lo))

"""The shared data sets (``../shared/data``, skipped with a reason when absent) and ARX's
Adult as the tests load it."""

from __future__ import annotations

from pathlib import Path

import pytest

from anonsql.io import import_file

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
SHARED_DATA = SHARED / "data"


def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data sets not found at {SHARED_DATA} (../shared is absent)")
    return SHARED_DATA


#: Adult's nine columns in the order ARX's figures use
ADULT_QIS = [
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
    "salary-class",
]


def load_adult(db) -> None:
    """Import ../shared/data/adult/adult.csv as ``adult`` with its nine ARX hierarchies."""
    from anonsql.hierarchy.loaders import read_arx_csv

    folder = shared_data() / "adult"
    import_file(db, "adult", folder / "adult.csv", sep=";")
    for c in ADULT_QIS:
        db.hierarchies.save(read_arx_csv(c, folder / f"adult_hierarchy_{c}.csv"))


__all__ = ["ADULT_QIS", "ROOT", "SHARED", "SHARED_DATA", "load_adult", "shared_data"]

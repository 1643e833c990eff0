"""Every hierarchy of ../shared/data loads, satisfies the closure invariants, and covers its
data column (or reports exactly what it lacks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from anonsql.database import Database
from anonsql.hierarchy.loaders import read_arx_csv
from anonsql.hierarchy.validate import check_invariants
from anonsql.io import import_file
from tests.helpers.data import SHARED_DATA


def _hierarchy_files() -> list[Path]:
    if not SHARED_DATA.is_dir():
        return []
    return sorted(SHARED_DATA.glob("*/*_hierarchy_*.csv"))


FILES = _hierarchy_files()


@pytest.mark.skipif(not FILES, reason=f"shared data sets not found at {SHARED_DATA}")
@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_shared_hierarchy_loads_and_is_consistent(path: Path):
    attribute = path.stem.split("_hierarchy_", 1)[1]
    h = read_arx_csv(attribute, path)
    db = Database.open(":memory:")
    db.hierarchies.save(h)
    assert check_invariants(db.hierarchies, attribute)["unrooted"] == 0
    stored = db.hierarchies.catalog().set_index("name").loc[attribute]
    assert stored["height"] == len(h.to_rows()[0])
    assert stored["leaves"] == len(h.leaf_ids)
    db.close()


@pytest.mark.skipif(not FILES, reason=f"shared data sets not found at {SHARED_DATA}")
def test_label_on_two_levels_is_two_nodes():
    h = read_arx_csv("Race", SHARED_DATA / "ss13acs" / "ss13acs_hierarchy_Race.csv")
    white = [lv for (lv, label) in h._index if label == "White"]
    assert sorted(white)[:2] == [0, 1]


@pytest.mark.skipif(not FILES, reason=f"shared data sets not found at {SHARED_DATA}")
def test_adult_columns_are_covered_by_their_hierarchies():
    db = Database.open(":memory:")
    adult = SHARED_DATA / "adult"
    import_file(db, "adult", adult / "adult.csv", sep=";")
    for col in db.backend.columns("adult"):
        db.hierarchies.save(read_arx_csv(col, adult / f"adult_hierarchy_{col}.csv"))
        db.hierarchies.check_column("adult", col, col)
    db.close()

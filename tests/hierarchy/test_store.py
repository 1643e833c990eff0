"""Closure tables in DuckDB: round trips, invariants, atomic loads, checks against data."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings

from anonsql.database import Database
from anonsql.errors import HierarchyError, InputError, MissingValuesError
from anonsql.hierarchy.hierarchy import Hierarchy
from anonsql.hierarchy.store import HierarchyStore
from anonsql.hierarchy.validate import check_invariants
from tests.helpers.strategies import hierarchy_rows

ANIMALS = [["Cat", "Felid", "Mammal"], ["Lion", "Felid", "Mammal"], ["Dog", "Dog", "Mammal"]]


def _tables(db: Database) -> dict[str, int]:
    return {
        t: db.backend.fetchall(f"SELECT COUNT(*) FROM {t}")[0][0]
        for t in (
            "anonsql_hierarchy",
            "anonsql_hierarchy_node",
            "anonsql_hierarchy_closure",
            "anonsql_hierarchy_map",
        )
    }


def test_save_load_round_trip_and_closure(db):
    h = Hierarchy.from_rows("race", ANIMALS)
    db.hierarchies.save(h)
    back = db.hierarchies.load("race")
    assert back.to_rows() == h.to_rows()
    closure = db.backend.fetch_df(
        "SELECT a.label AS anc, a.level AS al, d.label AS des, d.level AS dl, c.distance "
        "FROM anonsql_hierarchy_closure c "
        "JOIN anonsql_hierarchy_node a ON a.hierarchy = c.hierarchy AND a.id = c.ancestor "
        "JOIN anonsql_hierarchy_node d ON d.hierarchy = c.hierarchy AND d.id = c.descendant "
        "WHERE c.hierarchy = ?",
        [db.hierarchies.pin("race")],
    )
    # 6 nodes: each is its own ancestor (6), leaves reach 2 more (3*2), level-1 nodes 1 (2)
    assert len(closure) == 6 + 6 + 2
    assert (closure["distance"] == closure["al"] - closure["dl"]).all()
    cat = db.hierarchies.catalog().set_index("name").loc["race"]
    assert (cat["height"], cat["leaves"], cat["nodes"]) == (3, 3, 6)
    assert check_invariants(db.hierarchies, "race") == dict.fromkeys(
        ["unrooted", "bad_distances", "bad_leaf_counts", "bad_depths", "extra_roots"], 0
    )


@settings(max_examples=25, deadline=None)
@given(hierarchy_rows())
def test_random_hierarchies_satisfy_closure_invariants(rows):
    db = Database.open(":memory:")
    h = db.hierarchies.save(Hierarchy.from_rows("h", rows))
    check_invariants(db.hierarchies, "h")
    assert db.hierarchies.load("h").to_rows() == h.to_rows()
    db.close()


def test_resave_replaces_and_failed_save_keeps_previous(db, monkeypatch):
    db.hierarchies.save(Hierarchy.from_rows("race", ANIMALS))
    before = _tables(db)
    db.hierarchies.save(Hierarchy.from_rows("race", ANIMALS))
    assert _tables(db) == before  # re-running replaces cleanly

    real = db.backend.execute

    def failing(stmt, params=None):
        if "anonsql_hierarchy_closure (hierarchy" in db.backend.sql_text(stmt):
            raise RuntimeError("disk full")
        return real(stmt, params)

    monkeypatch.setattr(db.backend, "execute", failing)
    with pytest.raises(RuntimeError):
        db.hierarchies.save(Hierarchy.from_rows("race", [["x", "*"], ["y", "*"]]))
    monkeypatch.undo()
    assert _tables(db) == before
    assert db.hierarchies.load("race").leaf_labels == ["Cat", "Lion", "Dog"]


def test_failed_first_save_leaves_nothing(db, monkeypatch):
    real = db.backend.execute

    def failing(stmt, params=None):
        if "INSERT INTO anonsql_hierarchy (" in db.backend.sql_text(stmt):
            raise RuntimeError("boom")
        return real(stmt, params)

    monkeypatch.setattr(db.backend, "execute", failing)
    with pytest.raises(RuntimeError):
        db.hierarchies.save(Hierarchy.from_rows("race", ANIMALS))
    monkeypatch.undo()
    assert _tables(db) == {
        "anonsql_hierarchy": 0,
        "anonsql_hierarchy_node": 0,
        "anonsql_hierarchy_closure": 0,
        "anonsql_hierarchy_map": 0,
    }


def _maps(db: Database) -> list[tuple]:
    return db.backend.fetchall(
        "SELECT hierarchy, level, value, generalized, node FROM anonsql_hierarchy_map "
        "ORDER BY 1, 2, 3"
    )


def test_the_map_holds_every_leaf_on_every_level(db):
    db.hierarchies.save(Hierarchy.from_rows("race", ANIMALS))
    got = [(lv, v, g) for _, lv, v, g, _ in _maps(db)]
    want = sorted((lv, row[0], row[lv]) for row in ANIMALS for lv in range(3))
    assert got == want
    h = db.hierarchies.load("race")
    for _, lv, v, _, node in _maps(db):
        leaf = h.labels.index(v)
        assert node == h.ancestors[leaf, lv]


def test_a_database_stored_before_the_map_gets_its_maps_when_opened(tmp_path):
    path = str(tmp_path / "old.duckdb")
    db = Database.open(path)
    db.hierarchies.save(Hierarchy.from_rows("race", ANIMALS))
    db.hierarchies.save(Hierarchy.from_rows("zone", [["North", "*"], ["South", "*"]]))
    want = _maps(db)
    db.backend.execute("DROP TABLE anonsql_hierarchy_map")  # as an earlier anonsql wrote it
    db.close()
    db = Database.open(path)
    try:
        assert db.hierarchies.exists("race")  # the store's schema is read: the maps derived
        assert _maps(db) == want and len(want) == 3 * 3 + 2 * 2
    finally:
        db.close()


def test_a_version_saved_without_its_map_gets_it_when_opened(tmp_path):
    """An earlier anonsql saving a version after the map table exists (or a save stopped
    before the map): the next connection derives that version's map."""
    path = str(tmp_path / "mixed.duckdb")
    db = Database.open(path)
    db.hierarchies.save(Hierarchy.from_rows("race", ANIMALS))
    db.hierarchies.save(Hierarchy.from_rows("zone", [["North", "*"], ["South", "*"]]))
    want = _maps(db)
    key = db.hierarchies.pin("zone")
    db.backend.execute(f"DELETE FROM anonsql_hierarchy_map WHERE hierarchy = '{key}'")
    db.close()
    db = Database.open(path)
    try:
        assert db.hierarchies.exists("zone")
        assert _maps(db) == want
    finally:
        db.close()


def test_a_map_row_written_twice_never_counts_a_row_twice(db):
    """Two processes deriving one version's map at once where the engine has no keys
    (Spark) write its rows twice: the view's lookup counts identical rows once, and leaves
    out a value whose rows disagree, so its rows are suppressed, never released in a class
    they do not belong to."""
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    db.hierarchies.save(Hierarchy.from_rows("race", ANIMALS))
    pets = pd.DataFrame({"race": ["Cat", "Cat", "Dog", "Dog", "Cat"], "id": range(5)})
    db.backend.write_frame("pets", pets)
    spec = Spec(
        qis=["race"], k=2, suppression=1.0, output="o", keep=["id"], allow_identifying=["id"]
    )
    anonymize(db, "pets", spec)
    released = sorted(db.backend.fetchall("SELECT race FROM o ORDER BY id"))
    key = db.hierarchies.pin("race")
    # the map without its key, as on Spark
    db.backend.execute("CREATE TABLE keyless AS SELECT * FROM anonsql_hierarchy_map")
    db.backend.execute("DROP TABLE anonsql_hierarchy_map")
    db.backend.execute("ALTER TABLE keyless RENAME TO anonsql_hierarchy_map")
    # every map row of the version written a second time: the same release
    db.backend.execute(
        "INSERT INTO anonsql_hierarchy_map SELECT * FROM anonsql_hierarchy_map "
        f"WHERE hierarchy = '{key}'"
    )
    assert sorted(db.backend.fetchall("SELECT race FROM o ORDER BY id")) == released
    # a conflicting row for Dog (another node): Dog's rows are suppressed, not released
    db.backend.execute(
        "INSERT INTO anonsql_hierarchy_map SELECT hierarchy, level, value, generalized, "
        f"node + 1000 FROM anonsql_hierarchy_map WHERE hierarchy = '{key}' AND value = 'Dog'"
    )
    rows = db.backend.fetchall("SELECT id, race FROM o ORDER BY id")
    assert [r for i, r in rows if i in (2, 3)] == ["*", "*"]
    assert "Dog" not in [r for _, r in rows]


def test_missing_values_are_counted_and_named(db):
    db.hierarchies.save(Hierarchy.from_rows("race", ANIMALS))
    db.backend.write_frame("pets", pd.DataFrame({"race": ["Cat", "Cow", "Cow", None, "Dog"]}))
    with pytest.raises(MissingValuesError) as err:
        db.hierarchies.check_column("pets", "race", "race")
    assert err.value.count == 2
    assert err.value.examples == ["Cow", "NULL"]
    assert "2 distinct value(s) in 3 row(s)" in str(err.value)
    many = pd.DataFrame({"race": [f"x{i}" for i in range(25)]})
    db.backend.write_frame("many", many)
    with pytest.raises(MissingValuesError) as err:
        db.hierarchies.check_column("many", "race", "race")
    assert err.value.count == 25 and len(err.value.examples) == 10


def test_unknown_names(db):
    with pytest.raises(InputError, match="no hierarchy named 'nope'"):
        db.hierarchies.load("nope")
    db.hierarchies.save(Hierarchy.from_rows("race", ANIMALS))
    with pytest.raises(InputError, match="no table or view named 'ghost'"):
        db.hierarchies.check_column("ghost", "race", "race")
    db.backend.write_frame("pets", pd.DataFrame({"race": ["Cat"]}))
    with pytest.raises(InputError, match="has no column 'colour'"):
        db.hierarchies.check_column("pets", "colour", "race")
    assert db.hierarchies.resolve("race") == "race"
    with pytest.raises(InputError, match="column 'colour' has no hierarchy"):
        db.hierarchies.resolve("colour")


def test_generalize_column_in_sql(db):
    db.hierarchies.save(Hierarchy.from_rows("race", ANIMALS))
    db.backend.write_frame("pets", pd.DataFrame({"race": ["Cat", "Dog", "Lion"], "n": [1, 2, 3]}))
    out = db.backend.fetch_df(db.hierarchies.generalize_column("pets", "race", "race", 1))
    assert sorted(zip(out["race"], out["n"], strict=True)) == [
        ("Dog", 2),
        ("Felid", 1),
        ("Felid", 3),
    ]
    with pytest.raises(HierarchyError, match=r"levels 0\.\.2"):
        db.hierarchies.generalize_column("pets", "race", "race", 3)


def test_hostile_names_are_plain_names(db):
    evil = 'x"; DROP TABLE anonsql_hierarchy; --'
    db.hierarchies.save(Hierarchy.from_rows(evil, ANIMALS))
    db.backend.write_frame(evil, pd.DataFrame({evil: ["Cat", "Lion"]}))
    db.hierarchies.check_column(evil, evil, evil)
    out = db.backend.fetch_df(db.hierarchies.generalize_column(evil, evil, evil, 2))
    assert list(out[evil]) == ["Mammal", "Mammal"]
    assert evil in db.hierarchies.names()


def test_store_works_on_a_second_store_instance(db):
    db.hierarchies.save(Hierarchy.from_rows("race", ANIMALS))
    other = HierarchyStore(db.backend)
    assert other.load("race").height == 3

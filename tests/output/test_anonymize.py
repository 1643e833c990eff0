"""Materialization in place: the output satisfies its claims, the source is untouched, a
failure changes nothing, re-running replaces, and hostile names are plain names."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonsql.database import Database
from anonsql.errors import InputError, MissingValuesError
from anonsql.hierarchy.hierarchy import Hierarchy
from anonsql.run import anonymize
from anonsql.spec import Spec
from tests.helpers import brute
from tests.helpers.snapshot import snapshot
from tests.helpers.strategies import anonymization_cases


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(anonymization_cases(max_qis=3, max_rows=50), st.data())
def test_output_satisfies_models_by_brute_force(case, data):
    df, hs = case
    qis = [h.name for h in hs]
    db = Database.open(":memory:")
    df = df.assign(id=range(len(df)))
    db.backend.write_frame("src", df)
    for h in hs:
        db.hierarchies.save(h)
    k = data.draw(st.integers(1, 4))
    use_l = data.draw(st.booleans())
    limit = data.draw(st.sampled_from([0.0, 0.2, 1.0]))
    drop = data.draw(st.booleans())
    spec = Spec(
        qis=qis,
        sensitive="s",
        k=k,
        l=2 if use_l else None,
        suppression=limit,
        output="out",
        materialize=data.draw(st.sampled_from(["view", "table"])),
        drop_suppressed=drop,
        keep=["id"],
        # id is the test's row key; a random table of a few rows makes its QIs unique text
        # keys too: both published on purpose, the test checks the models, not the profile
        allow_identifying=["id", *qis],
    )
    before = db.backend.fetch_df("SELECT * FROM src")
    try:
        r = anonymize(db, "src", spec)
    except InputError as e:
        assert any(
            x in str(e)
            for x in ("no transformation satisfies", "distinct sensitive", "larger than the table")
        )
        return
    pd.testing.assert_frame_equal(db.backend.fetch_df("SELECT * FROM src"), before)
    out = db.backend.fetch_df("SELECT * FROM out ORDER BY id")
    # brute force: generalize to the chosen levels, suppress the classes failing the models
    expected = brute.generalize(df, qis, [h.to_rows() for h in hs], list(r.levels.values()))
    size = expected.groupby(qis)["id"].transform("size")
    ok = size >= k
    if use_l:
        ok &= expected.groupby(qis)["s"].transform("nunique") >= 2
    assert int((~ok).sum()) == r.measures["suppressed_rows"]
    assert r.measures["suppressed_rows"] <= limit * len(df)
    released = expected[ok]
    if drop:
        expected = released
    else:
        expected = expected.copy()
        expected.loc[~ok, qis] = "*"
    pd.testing.assert_frame_equal(
        out.reset_index(drop=True), expected.reset_index(drop=True), check_dtype=False
    )
    if len(released):
        assert brute.k_values(released, qis).min() >= k
        if use_l:
            assert brute.distinct_values(released, qis, "s").min() >= 2
    db.close()


PETS = ["race", "sex", "ill"]


def pets_spec(**kw) -> Spec:
    """A Spec on ``pets`` that keeps, as they are, the columns it gives no other role (pets
    holds no identifiers)."""
    spec = Spec(**kw)
    spec.keep = [c for c in PETS if c not in spec.qis and c != spec.sensitive]
    return spec


@pytest.fixture
def pets():
    db = Database.open(":memory:")
    db.hierarchies.save(
        Hierarchy.from_rows(
            "race", [["Cat", "Felid", "*"], ["Lion", "Felid", "*"], ["Dog", "Canid", "*"]]
        )
    )
    db.hierarchies.save(Hierarchy.from_rows("sex", [["F", "*"], ["M", "*"]]))
    frame = pd.DataFrame(
        {
            "race": ["Cat", "Lion", "Dog", "Dog", "Cat", "Lion"],
            "sex": ["F", "F", "M", "M", "M", "F"],
            "ill": list("abcabc"),
        }
    )
    db.backend.write_frame("pets", frame)
    yield db
    db.close()


def test_rerun_replaces_and_records_provenance(pets):
    r1 = anonymize(pets, "pets", pets_spec(qis=["race", "sex"], k=2, output="out"))
    r2 = anonymize(
        pets, "pets", pets_spec(qis=["race", "sex"], k=3, output="out", materialize="table")
    )
    assert pets.backend.relation_kind("out") == "table"
    assert len(pets.backend.fetch_df("SELECT * FROM out")) == 6
    runs = pets.backend.fetch_df("SELECT run_id, output, levels FROM anonsql_runs")
    assert list(runs["run_id"]) == [r1.run_id, r2.run_id]
    sols = pets.backend.fetch_df("SELECT * FROM anonsql_solutions WHERE optimal")
    assert len(sols) == 2


def test_failure_during_materialization_leaves_previous_output(pets, monkeypatch):
    anonymize(pets, "pets", pets_spec(qis=["race", "sex"], k=2, output="out"))
    before = snapshot(pets)
    real = pets.backend.execute

    def failing(stmt, params=None):
        if "INSERT INTO anonsql_runs" in pets.backend.sql_text(stmt):
            raise RuntimeError("disk full")
        return real(stmt, params)

    monkeypatch.setattr(pets.backend, "execute", failing)
    with pytest.raises(RuntimeError):
        anonymize(
            pets, "pets", pets_spec(qis=["race", "sex"], k=3, output="out", materialize="table")
        )
    monkeypatch.undo()
    assert snapshot(pets) == before


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (pets_spec(qis=["race", "colour"], k=2), "has no column 'colour'"),
        (pets_spec(qis=["race"], k=7), "larger than the table"),
        (
            pets_spec(qis=["race"], k=2, suppression=1.5),
            r"suppression limit must be a share in \[0, 1\]",
        ),
        (pets_spec(qis=["race"], k=2, output="pets"), "would overwrite the source"),
        (
            pets_spec(qis=["race"], k=2, sensitive="race", l=2),
            "both a quasi-identifier and sensitive",
        ),
        (pets_spec(qis=["race"], sensitive="ill", l=4), "distinct sensitive values"),
        (pets_spec(qis=["race"], sensitive="ill", t=1.2), r"\[0, 1\]"),
        (pets_spec(qis=["race"], l=2), "need a sensitive attribute"),
        (pets_spec(qis=["race", "race"], k=2), "named twice"),
        (pets_spec(qis=["race"], k=2, output="anonsql_x"), "reserved"),
        (pets_spec(qis=["race"]), "privacy goal"),
        (pets_spec(qis=["race"], k=2, metric="nope"), "unknown metric"),
    ],
)
def test_bad_input_is_rejected_and_changes_nothing(pets, spec, message):
    before = snapshot(pets)
    with pytest.raises(InputError, match=message):
        anonymize(pets, "pets", spec)
    assert snapshot(pets) == before


def test_value_missing_from_hierarchy(pets):
    pets.backend.execute("INSERT INTO pets VALUES ('Cow', 'F', 'a')")
    before = snapshot(pets)
    with pytest.raises(MissingValuesError, match="'Cow'"):
        anonymize(pets, "pets", pets_spec(qis=["race", "sex"], k=2, output="out"))
    assert snapshot(pets) == before


def test_existing_foreign_relation_is_not_overwritten(pets):
    pets.backend.write_frame("mine", pd.DataFrame({"x": [1]}))
    with pytest.raises(InputError, match="not written by anonsql"):
        anonymize(pets, "pets", pets_spec(qis=["race"], k=2, output="mine"))
    anonymize(pets, "pets", pets_spec(qis=["race"], k=2, output="mine", replace=True))
    assert "race" in pets.backend.columns("mine")


def test_hostile_identifiers_are_plain_names():
    db = Database.open(":memory:")
    evil_t = 'pets"; DROP TABLE anonsql_hierarchy; --'
    evil_c = "select from where"
    evil_o = "out'); DELETE FROM x; --"
    db.hierarchies.save(Hierarchy.from_rows(evil_c, [["a", "*"], ["b", "*"]]))
    db.backend.write_frame(evil_t, pd.DataFrame({evil_c: list("aabbab"), "v": range(6)}))
    # v is unique on every row: kept and published on purpose
    spec = Spec(qis=[evil_c], k=3, output=evil_o, keep=["v"], allow_identifying=["v"])
    r = anonymize(db, evil_t, spec)
    out = db.backend.fetch_df(f"SELECT * FROM {db.backend.quote(evil_o)}")
    assert list(out.columns) == [evil_c, "v"] and len(out) == 6
    assert r.levels == {evil_c: 0}
    assert db.hierarchies.names() == [evil_c]

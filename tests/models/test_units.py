"""Privacy units (docs/models/units.md, issue 28): many rows per person, every count in
distinct units. Held to the same run on one row per person, to pandas on the published rows,
and to reads after the source changes."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonsql.database import Database
from anonsql.errors import InputError
from anonsql.hierarchy.hierarchy import Hierarchy
from anonsql.run import anonymize
from anonsql.spec import Spec
from tests.helpers.strategies import anonymization_cases

MODELS = {
    "k": {},
    "distinct-l": {"l": 2},
    "entropy-l": {"l": 1.5, "l_variant": "entropy-l"},
    "t": {"t": 0.4},
}


#: the visit number is unique per row: kept as it is, on purpose (the tests join by it)
VISIT = {"keep": ["visit"], "allow_identifying": ["visit"]}


def _visits(people: pd.DataFrame, rows_per_person: list[int]) -> pd.DataFrame:
    """Each person's row repeated 1 to 20 times (their visits), with a visit number."""
    people = people.assign(pid=[f"p{i}" for i in range(len(people))])
    out = people.loc[people.index.repeat(rows_per_person)].reset_index(drop=True)
    return out.assign(visit=np.arange(len(out)))


def _db(tables: dict[str, pd.DataFrame], hs: list[Hierarchy], path: str = ":memory:") -> Database:
    db = Database.open(path)
    for name, frame in tables.items():
        db.backend.write_frame(name, frame)
    for h in hs:
        db.hierarchies.save(h)
    return db


def _released(db: Database, output: str, source: str, qis: list[str]) -> pd.DataFrame:
    """The output's rows with their person (the unit is never released: joined back here by
    the visit number, which the output keeps)."""
    out = db.backend.fetch_df(f"SELECT * FROM {output}")
    who = db.backend.fetch_df(f"SELECT visit, pid FROM {source}")
    return out.merge(who, on="visit", how="left")


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(anonymization_cases(max_qis=3, max_rows=25), st.data())
def test_units_count_like_one_row_per_person(case, data):
    """A run with --unit over the visits equals the same run over one row per person (the
    search counts units exactly as rows when each unit has one tuple), and pandas finds every
    released class holding at least k distinct people, within the limit in people."""
    people, hs = case
    qis = [h.name for h in hs]
    reps = data.draw(st.lists(st.integers(1, 20), min_size=len(people), max_size=len(people)))
    visits = _visits(people, reps)
    k = data.draw(st.integers(1, 4))
    model = data.draw(st.sampled_from(sorted(MODELS)))
    limit = data.draw(st.sampled_from([0.0, 0.25, 1.0]))
    algorithm = data.draw(st.sampled_from(["flash", "exhaustive"]))
    persons = visits.drop(columns=["visit"]).drop_duplicates("pid")
    db = _db({"visits": visits, "persons": persons}, hs)
    base = dict(qis=qis, sensitive="s", k=k, suppression=limit, algorithm=algorithm,
                allow_identifying=[*qis, "visit"], **MODELS[model])  # fmt: skip
    try:
        per_person = {**base, "allow_identifying": [*qis, "pid"]}
        plain = anonymize(db, "persons", Spec(**per_person, output="per_person", keep=["pid"]))
    except InputError:
        with pytest.raises(InputError):
            anonymize(db, "visits", Spec(**base, unit="pid", output="o", keep=["visit"]))
        db.close()
        return
    r = anonymize(db, "visits", Spec(**base, unit="pid", output="o", keep=["visit"]))
    assert r.levels == plain.levels and r.score == pytest.approx(plain.score)
    for key in ("classes", "suppressed_rows", "min_class_size", "prosecutor_max"):
        assert r.measures[key] == plain.measures[key]
    assert r.measures["units"] == len(persons) and r.measures["source_rows"] == len(visits)
    out = _released(db, "o", "visits", qis)
    assert len(out) == len(visits) and "pid" not in db.backend.columns("o")
    if any(r.levels[h.name] == h.top_level for h in hs):
        db.close()
        return  # the roots are labelled "*" here: released rows look suppressed
    kept = out[~(out[qis] == "*").all(axis=1)]
    if len(kept):
        per_class = kept.groupby(qis)["pid"].nunique()
        assert per_class.min() >= k
    gone = out.loc[(out[qis] == "*").all(axis=1), "pid"].nunique()
    assert gone <= limit * len(persons) + 1e-9
    # no person is partly suppressed: all of a unit's rows share one tuple
    assert not (set(kept["pid"]) & set(out.loc[(out[qis] == "*").all(axis=1), "pid"]))
    db.close()


def _zip_case(path: str = ":memory:") -> Database:
    """Seven people in two zip areas, 1 to 4 visits each."""
    zips = [f"1000{i}" for i in range(4)] + [f"2000{i}" for i in range(4)]
    h = Hierarchy.from_rows("zip", [[z, z[:4] + "*", "*"] for z in zips])
    people = pd.DataFrame({"zip": ["10000", "10001", "10002", "10003", "20000", "20001", "20002"]})
    visits = _visits(people, [1, 4, 2, 3, 1, 2, 4])
    return _db({"visits": visits}, [h], path)


def test_the_guard_counts_units_after_the_source_changes():
    """k = 3 people at zip level 1: "1000*" holds 4 people (10 visits), "2000*" 3 people. After
    publication: more visits of one person add no one; deleting one person's visits leaves
    "2000*" with 2 people (suppressed at the next read, however many visits remain); moving a
    person to the other area counts them there, once."""
    db = _zip_case()
    r = anonymize(db, "visits", Spec(qis=["zip"], k=3, unit="pid", output="o", **VISIT))
    assert r.levels == {"zip": 1} and r.measures["classes"] == 2

    def per_class() -> dict[str, int]:
        out = _released(db, "o", "visits", ["zip"])
        return out[out["zip"] != "*"].groupby("zip")["pid"].nunique().to_dict()

    assert per_class() == {"1000*": 4, "2000*": 3}
    # ten more visits of p4 (zip 20000): still three people
    for i in range(10):
        db.backend.execute(f"INSERT INTO visits VALUES ('20000', 'p4', {100 + i})")
    assert per_class() == {"1000*": 4, "2000*": 3}
    # p5 leaves: two people, 15 visits, below k = 3 people: suppressed
    db.backend.execute("DELETE FROM visits WHERE pid = 'p5'")
    assert per_class() == {"1000*": 4}
    out = _released(db, "o", "visits", ["zip"])
    assert (out.loc[out["pid"].isin(["p4", "p6"]), "zip"] == "*").all()
    # p0 moves to 20003 (a new visit there): "2000*" has three people again, p0 counted once
    # in each area, and "1000*" still four
    db.backend.execute("INSERT INTO visits VALUES ('20003', 'p0', 200)")
    assert per_class() == {"1000*": 4, "2000*": 3}
    db.close()


def test_rows_without_a_unit_are_refused_or_suppressed():
    db = _zip_case()
    db.backend.execute("INSERT INTO visits VALUES ('10000', NULL, 300)")
    spec = dict(qis=["zip"], k=3, unit="pid", **VISIT)
    with pytest.raises(InputError, match=r"1 row\(s\) of 'visits' have no unit .*--missing"):
        anonymize(db, "visits", Spec(**spec, output="o"))
    assert not db.backend.relation_kind("o")
    r = anonymize(db, "visits", Spec(**spec, output="o", missing="suppress", suppression=0.2))
    assert r.measures["suppressed_rows"] == 1  # the row counts as one unit
    out = db.backend.fetch_df("SELECT * FROM o WHERE visit = 300")
    assert out["zip"].tolist() == ["*"]
    db.close()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"algorithm": "mondrian"}, "the algorithms that count units are flash"),
        ({"algorithm": "greedy"}, "the algorithms that count units are flash"),
        ({"recoding_mode": "local", "suppression": 0.5}, "with local recoding counts rows"),
        ({"keep": ["visit", "pid"]}, "the privacy unit 'pid' is also kept"),
        ({"masks": {"pid": "pseudonym"}}, "cannot be masked by pseudonym"),
        ({"qis": ["zip", "pid"]}, "the privacy unit 'pid' is also a quasi-identifier"),
    ],
)
def test_what_a_unit_does_not_combine_with(extra, message, monkeypatch):
    monkeypatch.setenv("ANONSQL_KEY", "k" * 32)
    db = _zip_case()
    spec = {"qis": ["zip"], "k": 3, "unit": "pid", **VISIT, "output": "o", **extra}
    with pytest.raises(InputError, match=message):
        anonymize(db, "visits", Spec(**spec))
    assert not db.backend.relation_kind("o")
    db.close()


def test_status_counts_units_at_the_run_and_now(tmp_path):
    """``status`` reads the suppression limit as the run did, in people: a unit counts once
    however many rows it has, and as suppressed as soon as one of its rows is."""
    from anonsql.output.status import output_status

    path = str(tmp_path / "u.duckdb")
    db = _zip_case(path)
    db.backend.execute("INSERT INTO visits VALUES ('10000', NULL, 300)")
    spec = dict(qis=["zip"], k=3, unit="pid", **VISIT, missing="suppress", suppression=0.2)
    r = anonymize(db, "visits", Spec(**spec, output="o"))
    (s,) = output_status(db, "o")
    assert s.unit == "pid" and s.to_dict()["counted_in"] == "units of pid"
    # seven people and the row without a person, which counts as one unit (suppressed)
    assert (s.rows_at_run, s.suppressed_at_run) == (8, 1) == (s.rows_now, s.suppressed_now)
    assert r.measures["suppressed_rows"] == 1
    # p5 leaves: "2000*" keeps p4 (1 visit) and p6 (4 visits), 5 rows but 2 people < k = 3,
    # so 2 people are suppressed now, not 5 rows; with the unitless row 3 of 7 units
    db.backend.execute("DELETE FROM visits WHERE pid = 'p5'")
    (s,) = output_status(db, "o")
    assert (s.rows_now, s.suppressed_now) == (7, 3) and not s.within_limit
    db.close()
    from anonsql.cli.main import cli

    out = CliRunner().invoke(cli, ["status", "o", "--db", path])
    assert out.exit_code == 1 and "now:    7 units of pid, 3 suppressed" in out.output
    # `check` of the output counts its rows (it holds no person) and says so
    out = CliRunner().invoke(cli, ["check", "o", "--qi", "zip", "--k", "3", "--db", path])
    assert (
        "o's run counted people (units of pid)" in out.output
        and "rows 16, classes 1, suppressed rows 6" in out.output
    )
    out = CliRunner().invoke(cli, ["check", "o", "--qi", "zip", "--k", "3", "--json", "--db", path])
    body = json.loads(out.output)
    assert body["counted_in"] == "rows" and body["run_counted_in"] == "units of pid"


def test_check_counts_units():
    from anonsql.evaluation.checks import check_table
    from anonsql.models import KAnonymity

    db = _zip_case()
    rows = check_table(db, "visits", ["zip"], [KAnonymity(2)])
    units = check_table(db, "visits", ["zip"], [KAnonymity(2)], unit="pid")
    # every zip is one person: 1 person per class, but 1 to 4 rows
    assert not units.models[0].holds and units.models[0].max_value == 1
    assert rows.models[0].max_value == 4 and units.rows == 7 and units.unit == "pid"
    db.close()


def test_every_surface_takes_the_unit(tmp_path):
    """CLI (--unit), SQL (COLUMN pid PARAMETERS '{"is_unit": true}'), spec files (unit) and
    the Python API give the same release."""
    import anonsql
    from anonsql.cli.main import cli

    path = tmp_path / "v.duckdb"
    db = _zip_case()
    frame = db.backend.fetch_df("SELECT * FROM visits")
    h = db.hierarchies.load("zip")
    db.close()
    target = Database.open(str(path))
    target.backend.write_frame("visits", frame)
    target.hierarchies.save(h)
    target.close()
    runner = CliRunner()
    args = ["--qi", "zip", "--k", "3", "--unit", "pid", "--keep", "visit"]
    args += ["--allow-identifying", "visit", "--db", str(path)]
    r = runner.invoke(cli, ["anonymize", "visits", *args, "--out", "by_cli", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["measures"]["units"] == 7
    stmt = (
        "CREATE VIEW by_sql AS SELECT * FROM visits WITH ANONYMIZATION (ALGORITHM 'K-ANONYMITY' "
        'PARAMETERS \'{"k": 3, "allow_identifying": ["visit"]}\' '
        "COLUMN zip PARAMETERS '{\"is_quasi_identifier\": true}' "
        "COLUMN pid PARAMETERS '{\"is_unit\": true}' "
        "COLUMN visit PARAMETERS '{\"is_insensitive\": true}')"
    )
    r = runner.invoke(cli, ["sql", stmt, "--db", str(path)])
    assert r.exit_code == 0, r.output
    spec = tmp_path / "spec.toml"
    spec.write_text(
        'table = "visits"\nqi = ["zip"]\nk = 3\nunit = "pid"\nkeep = ["visit"]\n'
        'allow_identifying = ["visit"]\noutput = "by_spec"\n'
    )
    r = runner.invoke(cli, ["run", str(spec), "--db", str(path)])
    assert r.exit_code == 0, r.output
    anonsql.anonymize((str(path), "visits"), qi=["zip"], k=3, unit="pid", output="by_api", **VISIT)
    db = Database.open(str(path))
    frames = [
        db.backend.fetch_df(f"SELECT * FROM {o} ORDER BY visit")
        for o in ("by_cli", "by_sql", "by_spec", "by_api")
    ]
    db.close()
    for f in frames[1:]:
        pd.testing.assert_frame_equal(frames[0], f)
    assert (frames[0]["zip"] != "*").all() and "pid" not in frames[0].columns


def test_units_on_server_engines_equal_duckdb(engine):
    """PostgreSQL and Spark: the same search on the units and the same guard counting units."""
    db = _zip_case()
    frame = db.backend.fetch_df("SELECT * FROM visits")
    h = db.hierarchies.load("zip")
    spec = dict(qis=["zip"], k=3, unit="pid", **VISIT)
    local = anonymize(db, "visits", Spec(**spec, output="o"))
    db.backend.execute("DELETE FROM visits WHERE pid = 'p5'")
    expected = db.backend.fetch_df("SELECT * FROM o ORDER BY visit")
    db.close()
    remote = engine()
    remote.backend.write_frame("visits", frame)
    remote.hierarchies.save(h)
    r = anonymize(remote, "visits", Spec(**spec, output="o"))
    assert r.levels == local.levels and r.measures["units"] == 7
    if engine.name == "spark":  # its tables take no DELETE: the source rewritten
        remote.backend.write_frame("visits", frame[frame["pid"] != "p5"])
    else:
        remote.backend.execute("DELETE FROM visits WHERE pid = 'p5'")
    got = remote.backend.fetch_df("SELECT * FROM o ORDER BY visit")
    pd.testing.assert_frame_equal(
        expected.reset_index(drop=True), got.reset_index(drop=True), check_dtype=False
    )

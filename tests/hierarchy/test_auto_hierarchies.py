"""Automatic hierarchies (README "Automatic hierarchies", issue 31): a QI without hierarchy
gets one built from its type and values, on every surface; exact trees for fixed inputs, the
released table checked in pandas, export in ARX's format read back."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from anonsql.database import Database
from anonsql.demo.people import people
from anonsql.errors import InputError
from anonsql.hierarchy.auto import build_auto, number_intervals
from anonsql.run import anonymize
from anonsql.spec import Spec

#: a new user's table (tests/helpers: the people generator); identifiers left out
QIS = ["birth_date", "zip", "gender", "income"]
ROLES = {"identifiers": ["name", "email", "phone"], "keep": ["diagnosis"]}


def test_number_intervals_round_widths_and_coded_tails():
    """Values 10..109 once each: the 1st and 99th percentiles are 10 and 108, width
    nice(98 / 20) = 5, doubling to 160, aligned on 0; nothing lies outside [10, 110)."""
    values = [str(v) for v in range(10, 110)]
    b = number_intervals("x", values, np.ones(100, dtype=np.int64))
    assert b.how == "intervals of 5, 10, 20, 40, 80, 160"
    rows = {r[0]: r for r in b.hierarchy.to_rows()}
    assert rows["10"] == ["10", "[10, 15)", "[10, 20)", "[0, 20)", "[0, 40)", "[0, 80)",
                          "[0, 160)", "*"]  # fmt: skip
    # one far outlier on each side: coded, not stretching the intervals
    values = ["-1000", *values, "5000"]
    b = number_intervals("x", values, np.ones(102, dtype=np.int64))
    rows = {r[0]: r for r in b.hierarchy.to_rows()}
    assert rows["-1000"][1:-1] == ["<10"] * 6 and rows["5000"][1:-1] == [">=110"] * 6
    assert b.how.endswith("(below 10 bottom-coded; from 110 top-coded)")


def _db(frame: pd.DataFrame) -> Database:
    db = Database.open(":memory:")
    db.backend.write_frame("people", frame)
    return db


def test_each_kind_gets_its_builder():
    frame = people(400, seed=3).assign(zip_int=lambda f: f["zip"].astype(int))
    db = _db(frame)
    how = {c: build_auto(db, "people", c).how for c in [*QIS, "zip_int", "diagnosis"]}
    assert how["birth_date"] == "day, month, year, decade"
    assert how["zip"] == how["zip_int"] == "one more character masked from the right on each level"
    assert how["gender"].startswith("one level") and how["diagnosis"].startswith("one level")
    assert how["income"].startswith("intervals of ")
    h = build_auto(db, "people", "birth_date").hierarchy
    day = str(frame["birth_date"].iloc[0])
    d = dt.date.fromisoformat(day)
    assert h.to_rows()[h.leaf_labels.index(day)][1:] == [
        f"{d.year:04d}-{d.month:02d}",
        str(d.year),
        f"{d.year // 10 * 10}s",
        "*",
    ]
    db.close()


def test_a_table_without_hierarchies_is_anonymized_and_holds():
    """No hierarchy at all: every QI's is built, the run says which, and pandas finds every
    released class of at least k rows and 2 distinct diagnoses."""
    frame = people(1500, seed=5)
    db = _db(frame)
    r = anonymize(db, "people", Spec(qis=QIS, sensitive="diagnosis", k=5, l=2, suppression=0.05,
                                     output="o", identifiers=ROLES["identifiers"]))  # fmt: skip
    assert set(r.measures["hierarchies_built"]) == set(QIS)
    out = db.backend.fetch_df("SELECT * FROM o")
    assert len(out) == len(frame) and not {"name", "email", "phone"} & set(out.columns)
    released = out[~(out[QIS] == "*").all(axis=1)]
    groups = released.groupby(QIS)
    assert groups.size().min() >= 5 and groups["diagnosis"].nunique().min() >= 2
    assert len(out) - len(released) == r.measures["suppressed_rows"] <= 0.05 * len(frame)
    from anonsql.evaluation.checks import check_table
    from anonsql.models import DistinctLDiversity, KAnonymity

    ev = check_table(db, "o", QIS, [KAnonymity(5), DistinctLDiversity(2)], "diagnosis")
    assert ev.anonymous
    # a later run rebuilds an automatic hierarchy from the values then present; a user's
    # hierarchy is left as it is
    db.backend.execute("INSERT INTO people SELECT * FROM people LIMIT 1")
    db.backend.execute(
        "UPDATE people SET income = 999999 WHERE income = (SELECT MAX(income) FROM people)"
    )
    r2 = anonymize(db, "people", Spec(qis=QIS, k=5, output="o2", **ROLES))
    assert "999999.0" in db.hierarchies.load("income").leaf_labels
    assert set(r2.measures["hierarchies_built"]) == set(QIS)
    db.close()


def test_a_failed_run_leaves_no_hierarchy_and_a_users_one_is_kept():
    db = _db(people(60, seed=1))
    with pytest.raises(InputError, match="k = 500"):
        anonymize(db, "people", Spec(qis=QIS, k=500, output="o", **ROLES))
    assert not any(db.hierarchies.exists(q) for q in QIS)
    from anonsql.hierarchy.builders import flat

    mine = flat("gender", ["F", "M"])
    db.hierarchies.save(mine)
    r = anonymize(db, "people", Spec(qis=QIS, k=2, output="o", **ROLES))
    assert "gender" not in r.measures["hierarchies_built"]
    assert db.hierarchies.load("gender").source != "auto"
    db.close()


def test_cli_file_in_file_out_and_export_round_trip(tmp_path):
    from anonsql.cli.main import cli
    from anonsql.hierarchy.loaders import read_arx_csv

    src = tmp_path / "people.csv"
    people(800, seed=7).to_csv(src, index=False)
    runner = CliRunner()
    out = tmp_path / "out.csv"
    r = runner.invoke(cli, ["anonymize-file", str(src), "--qi", ",".join(QIS), "--k", "5",
                            "--suppression", "0.05", "--identifiers", "name,email,phone",
                            "--keep", "diagnosis", "--out", str(out)])  # fmt: skip
    assert r.exit_code == 0, r.output
    assert "hierarchy built for income: intervals of" in r.output
    released = pd.read_csv(out, dtype=str)
    kept = released[~(released[QIS] == "*").all(axis=1)]
    assert kept.groupby(QIS).size().min() >= 5
    db = str(tmp_path / "h.duckdb")
    assert runner.invoke(cli, ["import", "people", str(src), "--db", db]).exit_code == 0
    r = runner.invoke(cli, ["hierarchy", "build", "income", "--auto", "--table", "people",
                            "--out", str(tmp_path / "income.csv"), "--db", db])  # fmt: skip
    assert r.exit_code == 0, r.output
    r = runner.invoke(cli, ["anonymize", "people", "--qi", ",".join(QIS), "--k", "5",
                            "--identifiers", "name,email,phone", "--keep", "diagnosis",
                            "--out", "p5", "--db", db])  # fmt: skip
    assert r.exit_code == 0, r.output
    r = runner.invoke(cli, ["hierarchy", "export", "zip", str(tmp_path / "zip.csv"), "--db", db])
    assert r.exit_code == 0, r.output
    back = read_arx_csv("zip", tmp_path / "zip.csv")
    stored = Database.open(db)
    assert back.to_rows() == stored.hierarchies.load("zip").to_rows()
    built = read_arx_csv("income", tmp_path / "income.csv")
    assert built.to_rows() == stored.hierarchies.load("income").to_rows()
    stored.close()


def test_sql_and_spec_surfaces_build_too(tmp_path):
    import anonsql

    frame = people(500, seed=9)
    con = anonsql.connect(":memory:")
    con.database.backend.write_frame("people", frame)
    con.sql(
        "ANONYMIZE TABLE people INTO p5 WITH (k = 5, qi = (birth_date, zip, gender, income), "
        "identifiers = (name, email, phone), keep = (diagnosis))"
    )
    out = con.database.backend.fetch_df("SELECT * FROM p5")
    kept = out[~(out[QIS] == "*").all(axis=1)]
    assert kept.groupby(QIS).size().min() >= 5
    run = anonsql.anonymize((con.database, "people"), qi=QIS, k=3, output="p3", **ROLES)
    assert set(run.measures["hierarchies_built"]) == set(QIS)
    con.close()


def test_server_engines_build_and_hold(engine):
    """The values come from the engine's GROUP BY: PostgreSQL and Spark build hierarchies
    that their own histograms and guards read, and the release holds."""
    frame = people(300, seed=2)
    db = engine()
    db.backend.write_frame("people", frame)
    # two QIs (digit masking, intervals): each stored hierarchy costs Spark seconds
    qis = ["zip", "income"]
    roles = {"identifiers": [*ROLES["identifiers"], "birth_date"], "keep": ["diagnosis", "gender"]}
    r = anonymize(db, "people", Spec(qis=qis, k=5, suppression=0.1, output="o", **roles))
    assert set(r.measures["hierarchies_built"]) == set(qis)
    out = db.backend.fetch_df("SELECT * FROM o")
    kept = out[~(out[qis] == "*").all(axis=1)]
    assert len(out) == 300 and kept.groupby(qis).size().min() >= 5

"""PostgreSQL and Spark backends against real engines (no mocks): the same run gives the same
transformation, classes, suppressed rows and output rows as on DuckDB; bad input gets a
clear error and leaves the target as it was."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlglot import exp

from anonsql.backend.sql_templates import table
from anonsql.database import Database
from anonsql.errors import AnonsqlError, BackendError, InputError, UnsupportedDialectError
from anonsql.provenance import Provenance
from anonsql.run import anonymize
from anonsql.spec import Spec
from tests.helpers.engines import QIS, SPECS, output_rows, people, roles, setup, summary


def test_same_result_as_duckdb(engine):
    frame = people()
    ref = Database.open(":memory:")
    setup(ref, frame)
    db = engine()
    setup(db, frame)
    # Spark pays seconds per statement: it runs the two specs with a sensitive attribute
    for spec in SPECS if engine.name == "postgres" else SPECS[1:]:
        expected = anonymize(ref, "people", spec)
        got = anonymize(db, "people", spec)
        assert summary(got) == summary(expected)
        pd.testing.assert_frame_equal(output_rows(db, "out"), output_rows(ref, "out"))
        suppressed = ref.backend.fetchall(
            "SELECT COUNT(*) FROM out WHERE age = '*' AND sex = '*' AND zip = '*'"
        )
        assert db.backend.fetchall(
            "SELECT COUNT(*) FROM out WHERE age = '*' AND sex = '*' AND zip = '*'"
        ) == [tuple(suppressed[0])]
    # the output really is k-anonymous (pandas groupby on what the engine wrote)
    out = output_rows(db, "out")
    kept = out[~(out[QIS] == "*").all(axis=1)]
    assert kept.groupby(QIS).size().min() >= 3
    # the Python API takes the engine's own connection or session
    import anonsql

    native = db.backend.con if engine.name == "postgres" else db.backend.session
    api_run = anonsql.anonymize(
        (native, "people"), {"qis": QIS, "k": 5, "output": "api_out", **roles()}
    )
    assert api_run.levels == anonymize(ref, "people", SPECS[0]).levels
    # GAA runs on the engine too, and agrees with DuckDB
    spec = Spec(qis=QIS, k=6, algorithm="greedy", output="greedy_out", **roles())
    assert anonymize(db, "people", spec).levels == anonymize(ref, "people", spec).levels
    pd.testing.assert_frame_equal(output_rows(db, "greedy_out"), output_rows(ref, "greedy_out"))


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    n=st.integers(20, 120),
    seed=st.integers(0, 10_000),
    k=st.integers(2, 8),
    supp=st.sampled_from([0.0, 0.05, 0.2]),
)
def test_random_tables_postgres(pg_url, n, seed, k, supp):
    """Random tables: PostgreSQL's run equals DuckDB's (transformation and output rows)."""
    frame = people(n, seed)
    ref = Database.open(":memory:")
    setup(ref, frame)
    db = Database.open(pg_url)
    try:
        setup(db, frame, name=f"p{seed}_{n}")
        ref.backend.write_frame(f"p{seed}_{n}", frame)
        spec = Spec(qis=QIS, k=k, suppression=supp, output=f"o{seed}_{n}", replace=True, **roles())
        try:
            expected = anonymize(ref, f"p{seed}_{n}", spec)
        except InputError:
            with pytest.raises(InputError):
                anonymize(db, f"p{seed}_{n}", spec)
            return
        got = anonymize(db, f"p{seed}_{n}", spec)
        assert summary(got) == summary(expected)
        pd.testing.assert_frame_equal(
            output_rows(db, f"o{seed}_{n}"), output_rows(ref, f"o{seed}_{n}")
        )
    finally:
        db.close()
        ref.close()


def test_hostile_identifiers(engine):
    """Table, column and hierarchy names are identifiers and literals, never SQL text.
    (Spark's catalog only takes letters, digits and _ in table names: there the columns and
    hierarchies carry the hostile names.)"""
    evil = 'x"; DROP TABLE people; --'
    cols = {"age": evil + " age", "sex": "sex'); --", "zip": "zip`"}
    if engine.name == "spark":
        evil = "people_x"
    frame = people(120).rename(columns=cols)
    db = engine()
    db.backend.write_frame("people", frame)
    setup(db, frame, name=evil, cols=cols)
    out_name = evil + ("_out" if engine.name == "spark" else " out")
    spec = Spec(qis=list(cols.values()), k=3, suppression=0.05, output=out_name, **roles())
    result = anonymize(db, evil, spec)
    out = db.backend.fetch_df(exp.select("*").from_(table(out_name)))
    assert len(out) == 120 and list(out.columns) == list(frame.columns)
    assert db.backend.table_exists("people")
    assert set(result.levels) == set(cols.values())


def test_rerun_replaces_and_failure_leaves_everything(engine, monkeypatch):
    frame = people(200)
    db = engine()
    setup(db, frame)
    anonymize(db, "people", Spec(qis=QIS, k=5, suppression=0.05, output="out", **roles()))
    first = output_rows(db, "out")
    anonymize(db, "people", Spec(qis=QIS, k=5, output="out", materialize="table", **roles()))
    assert db.backend.relation_kind("out") == "table"
    anonymize(db, "people", Spec(qis=QIS, k=3, suppression=0.05, output="out", **roles()))
    assert db.backend.relation_kind("out") == "view"
    before = (
        output_rows(db, "out"),
        db.backend.fetch_df("SELECT run_id FROM anonsql_runs ORDER BY run_id"),
        db.hierarchies.catalog(all_versions=True).drop(columns=["created_at"]),
    )
    assert len(first) == len(before[0])

    def broken(self, *a, **kw):
        raise RuntimeError("disk full")

    monkeypatch.setattr(Provenance, "record_run", broken)
    with pytest.raises(RuntimeError):
        anonymize(db, "people", Spec(qis=QIS, k=8, output="out", materialize="table", **roles()))
    with pytest.raises(RuntimeError):
        anonymize(db, "people", Spec(qis=QIS, k=8, output="fresh", **roles()))
    monkeypatch.undo()
    assert db.backend.relation_kind("out") == "view"
    assert not db.backend.table_exists("fresh")
    after = (
        output_rows(db, "out"),
        db.backend.fetch_df("SELECT run_id FROM anonsql_runs ORDER BY run_id"),
        db.hierarchies.catalog(all_versions=True).drop(columns=["created_at"]),
    )
    pd.testing.assert_frame_equal(after[0], before[0])
    pd.testing.assert_frame_equal(after[1], before[1])
    pd.testing.assert_frame_equal(after[2], before[2])
    assert not [t for t in db.backend.relation_names() if t.startswith("__anonsql")]


def test_spark_undoes_added_rows_by_deleting_them(spark_db):
    """Spark emulates transactions by copying a table before its first change; a table that
    only gains rows the caller names (a new run, a new hierarchy version) is not copied, and
    rollback deletes those rows, also after the table was changed otherwise or replaced."""
    import sqlglot

    from anonsql.backend.spark_backend import UNDO_PREFIX

    db = Database.open(spark_db)
    b = db.backend
    b.write_frame("t", pd.DataFrame({"k": [1, 2], "v": ["a", "b"]}))
    before = b.fetch_df("SELECT * FROM t ORDER BY k")
    added = exp.column("k").eq(3)

    def undo_tables() -> list[str]:
        return [n for n in b.relation_names() if n.startswith(UNDO_PREFIX)]

    def fails(*statements: str) -> None:
        with pytest.raises(RuntimeError), b.transaction():
            b.appends("t", added)
            for sql in statements:
                b.execute(sqlglot.parse_one(sql, read="spark"))
            if len(statements) == 1:
                assert undo_tables() == []  # only added rows: nothing copied
            raise RuntimeError("undo")
        pd.testing.assert_frame_equal(b.fetch_df("SELECT * FROM t ORDER BY k"), before)
        assert undo_tables() == []

    fails("INSERT INTO t VALUES (3, 'c')")
    fails("INSERT INTO t VALUES (3, 'c')", "DELETE FROM t WHERE k = 1")
    fails("INSERT INTO t VALUES (3, 'c')", "CREATE OR REPLACE TABLE t AS SELECT 9 AS k, 'z' AS v")
    fails("INSERT INTO t VALUES (3, 'c')", "INSERT OVERWRITE TABLE t SELECT 9 AS k, 'z' AS v")
    with b.transaction():
        b.appends("t", added)
        b.execute(sqlglot.parse_one("INSERT INTO t VALUES (3, 'c')", read="spark"))
    assert b.fetchall("SELECT k, v FROM t ORDER BY k") == [(1, "a"), (2, "b"), (3, "c")]
    assert undo_tables() == []


def test_spark_refuses_a_name_it_cannot_store(spark_db):
    """Spark's catalog takes only letters, digits and _ in table names: its refusal is a
    clear error and nothing is created."""
    db = Database.open(spark_db)
    with pytest.raises(BackendError, match=r"Spark: .*is not a valid name"):
        db.backend.write_frame('x"; DROP TABLE t; --', people(10))
    assert db.backend.relation_names() == []


def test_missing_table_and_bad_input_create_nothing(engine):
    db = engine()
    with pytest.raises(InputError, match="no table or view named 'nope'"):
        anonymize(db, "nope", Spec(qis=QIS, k=2, output="out"))
    for name in ("anonsql_runs", "anonsql_hierarchy", "anonsql_recodings", "out"):
        assert not db.backend.table_exists(name), name
    db.backend.write_frame("people", people(50))
    with pytest.raises(InputError, match="no column 'agee'"):
        anonymize(db, "people", Spec(qis=["agee"], k=2, output="out"))
    # a QI without hierarchy gets one built; a run that fails after building it removes it
    with pytest.raises(InputError, match="k = 500"):
        anonymize(db, "people", Spec(qis=["age"], k=500, output="out", **roles(qis=["age"])))
    assert not db.hierarchies.exists("age")
    with pytest.raises(InputError, match="k = 500"):
        setup(db, people(50))
        anonymize(db, "people", Spec(qis=QIS, k=500, output="out", **roles()))
    assert not db.backend.table_exists("out")
    assert not db.backend.table_exists("anonsql_runs")


def test_unsupported_construct_is_a_clear_error(engine):
    """`SELECT * REPLACE` (the column-generalizing query) has no PostgreSQL or Spark form:
    the error names the construct and nothing runs."""
    db = engine()
    setup(db, people(30))
    with pytest.raises(UnsupportedDialectError, match=r"REPLACE"):
        db.backend.fetchall(db.hierarchies.generalize_column("people", "age", "age", 1))


def test_unreachable_server_and_wrong_credentials(pg_server):
    from anonsql.backend.local_postgres import _free_port

    with pytest.raises(BackendError, match="cannot connect to PostgreSQL") as e:
        Database.open(f"postgresql://anonsql:secret@127.0.0.1:{_free_port()}/postgres")
    assert "secret" not in str(e.value)
    url = pg_server if isinstance(pg_server, str) else pg_server.url
    user_part, host_part = url.split("@", 1)
    wrong = user_part.rsplit(":", 1)[0] + ":wrong-password@" + host_part
    with pytest.raises(BackendError, match="password authentication failed") as e:
        Database.open(wrong)
    assert "wrong-password" not in str(e.value)


def test_adult_on_postgres_matches_arx(pg_url):
    """Adult at 5% suppression on PostgreSQL: ARX's optimum, classes and suppressed rows."""
    from tests.helpers.data import ADULT_QIS, load_adult

    db = Database.open(pg_url)
    load_adult(db)
    result = anonymize(db, "adult", Spec(qis=ADULT_QIS, k=5, suppression=0.05, output="adult_k5"))
    assert [result.levels[q] for q in ADULT_QIS] == [0, 3, 0, 0, 2, 1, 1, 2, 0]
    assert result.measures["suppressed_rows"] == 1346
    assert result.measures["classes"] == 397
    n = db.backend.fetchall("SELECT COUNT(*) FROM adult_k5 WHERE sex = '*'")[0][0]
    assert n == 1346
    db.close()


def test_cli_against_postgres(pg_url, tmp_path):
    from click.testing import CliRunner

    from anonsql.cli.main import cli

    runner = CliRunner()
    r = runner.invoke(cli, ["demo", "--rows", "800", "--db", pg_url])
    assert r.exit_code == 0, r.output
    assert "census_anonymized" in r.output
    r = runner.invoke(cli, ["sql", "SELECT COUNT(*) AS n FROM census_anonymized", "--db", pg_url])
    assert r.exit_code == 0 and "800" in r.output, r.output
    # the demo table's other columns are released as they are
    kept = "age, marital_status, education, zip, country, occupation, income"
    stmt = f"ANONYMIZE TABLE census INTO c2 WITH (k = 2, qi = (sex, race), keep = ({kept}))"
    r = runner.invoke(cli, ["sql", stmt + "; SELECT COUNT(*) AS n FROM c2", "--db", pg_url])
    assert r.exit_code == 0 and "800" in r.output, r.output
    r = runner.invoke(cli, ["sql", "SELECT * FROM nowhere", "--db", pg_url])
    assert r.exit_code == 1 and 'relation "nowhere" does not exist' in r.output
    r = runner.invoke(cli, ["install-macros", "--db", pg_url])
    assert r.exit_code == 1 and "nothing was installed" in r.output
    r = runner.invoke(cli, ["report", "1", "--db", pg_url, "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    # check and represent run on the engine, and agree with the same commands on DuckDB
    duck = str(tmp_path / "same.duckdb")
    assert runner.invoke(cli, ["demo", "--rows", "800", "--db", duck]).exit_code == 0
    for args in (
        ["check", "census_anonymized", "--qi", "age,sex,zip", "--k", "5", "--json"],
        ["represent", "1", "--kind", "proportional"],
        ["sql", "SELECT COUNT(*) AS n FROM census_anonymized_proportional", "--json"],
    ):
        on_pg = runner.invoke(cli, [*args, "--db", pg_url])
        on_duck = runner.invoke(cli, [*args, "--db", duck])
        assert on_pg.exit_code == on_duck.exit_code == 0, on_pg.output
        assert on_pg.output == on_duck.output
    # the report's figures (levels, sample rows, sensitive attribute per class) agree too
    pages = {}
    for name, target in (("pg", pg_url), ("duck", duck)):
        r = runner.invoke(cli, ["report", "1", "--db", target, "--out", str(tmp_path / name)])
        assert r.exit_code == 0, r.output
        report = json.loads((tmp_path / name / "anonsql_run_1.json").read_text())
        pages[name] = {k: report.get(k) for k in ("levels", "sample_rows", "sensitive")}
    assert pages["pg"] == pages["duck"] and pages["pg"]["sample_rows"]["rows"]
    columns = Database.open(pg_url).backend.columns("census_anonymized_proportional")
    assert columns == Database.open(duck).backend.columns("census_anonymized_proportional")
    bad = runner.invoke(cli, ["hierarchy", "list", "--db", pg_url.replace("anonsql:", "x:", 1)])
    assert bad.exit_code == 1 and "cannot connect" in bad.output
    assert isinstance(BackendError("x"), AnonsqlError)

"""``anonsql transpile``: the SQL of a run for another engine, run in that engine, rebuilds
the same output rows."""

from __future__ import annotations

import duckdb
import pandas as pd
import pytest
from click.testing import CliRunner

from anonsql.cli.main import cli
from anonsql.database import Database
from anonsql.errors import UnsupportedDialectError
from anonsql.output.deploy import deployment_script
from anonsql.run import anonymize
from anonsql.spec import Spec
from tests.helpers.engines import QIS, output_rows, people, setup


def roles(sensitive: str | None = None) -> dict:
    """The roles of people()'s columns that are neither a QI nor the sensitive attribute:
    released as they are. 'id' is the test's row key (outputs are compared row by row),
    published on purpose although it is unique."""
    keep = [c for c in people(1).columns if c not in QIS and c != sensitive]
    return {"keep": keep, "allow_identifying": ["id"]}


@pytest.fixture
def source(tmp_path):
    path = tmp_path / "src.duckdb"
    db = Database.open(path)
    setup(db, people(300))
    spec = Spec(
        qis=QIS,
        sensitive="disease",
        k=4,
        l=2,
        suppression=0.1,
        output="out",
        **roles(sensitive="disease"),
    )
    anonymize(db, "people", spec)
    anonymize(db, "people", Spec(qis=QIS, k=5, algorithm="greedy", output="gout", **roles()))
    yield db, path
    db.close()


def statements(script: str) -> list[str]:
    body = [line for line in script.splitlines() if not line.startswith("-- anonsql:")]
    return [s for s in "\n".join(body).split(";\n") if s.strip()]


@pytest.mark.parametrize("run", [1, 2])
def test_duckdb_script_rebuilds_the_output(source, run):
    db, _ = source
    name = "out" if run == 1 else "gout"
    script = deployment_script(db, run, "duckdb")
    target = duckdb.connect(":memory:")
    target.register("frame", people(300))
    target.execute("CREATE TABLE people AS SELECT * FROM frame")
    for s in statements(script):
        target.execute(s)
    got = target.execute(f"SELECT * FROM {name}").df().astype(str)
    got = got.sort_values(list(got.columns)).reset_index(drop=True)
    pd.testing.assert_frame_equal(got, output_rows(db, name))
    # running the script twice replaces cleanly
    for s in statements(script):
        target.execute(s)
    assert target.execute(f"SELECT COUNT(*) FROM {name}").fetchall()[0][0] == 300


@pytest.mark.parametrize("run", [1, 2])
def test_script_runs_on_the_engine(source, engine, run):
    db, _ = source
    name = "out" if run == 1 else "gout"
    dialect = "postgres" if engine.name == "postgres" else "spark"
    script = deployment_script(db, run, dialect)
    target = engine()
    target.backend.write_frame("people", people(300))
    for s in statements(script):
        if engine.name == "postgres":
            target.backend.con.execute(s)
        else:
            engine.target.sql(s).collect()
    pd.testing.assert_frame_equal(output_rows(target, name), output_rows(db, name))


def test_cli_prints_and_refuses(source, tmp_path):
    _, path = source
    runner = CliRunner()
    for dialect in ("postgres", "spark", "snowflake", "bigquery", "duckdb"):
        r = runner.invoke(cli, ["transpile", "--dialect", dialect, "--db", str(path)])
        assert r.exit_code == 0, r.output
        assert "anonsql_hierarchy_closure" in r.output and "gout" in r.output
    r = runner.invoke(cli, ["transpile", "1", "-d", "postgres", "--db", str(path)])
    assert "CREATE VIEW" in r.output and "DROP VIEW IF EXISTS" in r.output
    assert r.output.startswith("-- anonsql: output of run 1 for postgres\nBEGIN;")
    out = tmp_path / "deploy.sql"
    r = runner.invoke(cli, ["transpile", "-d", "tsql", "--out", str(out), "--db", str(path)])
    assert r.exit_code == 1
    assert "the tsql dialect has no array columns" in r.output
    assert not out.exists()
    r = runner.invoke(cli, ["transpile", "-d", "klingon", "--db", str(path)])
    assert r.exit_code == 1 and "unknown SQL dialect 'klingon'" in r.output
    r = runner.invoke(cli, ["transpile", "99", "-d", "postgres", "--db", str(path)])
    assert r.exit_code == 1 and "no run 99" in r.output


def test_constructs_a_dialect_lacks_are_refused():
    """sqlglot would write ARG_MIN for SQLite and an array type for T-SQL; anonsql refuses."""
    import sqlglot

    from anonsql.backend.base import generate

    arg_min = sqlglot.parse_one("SELECT ARG_MIN(a, b) FROM t", read="duckdb")
    assert "ARG_MIN" in generate(arg_min, "duckdb")
    with pytest.raises(UnsupportedDialectError, match="ARG_MIN"):
        generate(arg_min, "sqlite")
    array = sqlglot.parse_one("CREATE TABLE t (a VARCHAR[])", read="duckdb")
    with pytest.raises(UnsupportedDialectError, match="array columns"):
        generate(array, "tsql")
    assert "TEXT[]" in generate(array, "postgres")

"""The documentation's ETL examples (Airflow, Dagster, dbt; docs/surfaces/) are plain
functions: run them against a demo database. The Airflow and Dagster wrappers around them
are not run (neither is installed); the dbt example is run with real dbt-duckdb, as a user
would."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys

import duckdb
import pytest

from anonsql.database import Database
from anonsql.demo.setup import setup_demo
from tests.helpers.data import ROOT


def _readme() -> str:
    """The documentation's pages that hold the examples: Airflow and Dagster, then dbt."""
    pages = ("orchestrators.md", "dbt.md")
    return "\n".join((ROOT / "docs" / "surfaces" / p).read_text() for p in pages)


def _examples() -> list[str]:
    return re.findall(r"<!-- etl-example -->\n```python\n(.*?)```", _readme(), re.S)


def _yaml_block(first_line: str) -> str:
    m = re.search(r"```yaml\n(" + re.escape(first_line) + r"\n.*?)```", _readme(), re.S)
    assert m, f"the docs lost their {first_line!r} block"
    return m.group(1)


@pytest.fixture
def warehouse(tmp_path):
    path = tmp_path / "warehouse.duckdb"
    db = Database.open(path)
    setup_demo(db, rows=2000)
    db.close()
    return str(path)


def test_docs_have_the_three_examples():
    assert len(_examples()) == 3


def test_airflow_task_function(warehouse):
    ns: dict = {}
    exec(_examples()[0], ns)
    out = ns["anonymize_census"](warehouse)
    assert set(out["levels"]) == {"age", "sex", "zip"} and out["suppressed"] <= 100


def test_dagster_asset_and_check(warehouse):
    ns: dict = {}
    exec(_examples()[1], ns)
    assert ns["census_k5_asset"](warehouse) == "census_k5"
    assert ns["census_k5_is_5_anonymous"](warehouse) is True


def _dbt(args: list[str], project, env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dbt.cli.main", *args, "--no-use-colors"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_dbt_build_runs_the_docs_model_and_package_tests(tmp_path, warehouse):
    """`dbt deps && dbt build` on a project made of the docs' files: the Python model
    anonymizes through dbt's own session, the package's generic tests run on its output."""
    if importlib.util.find_spec("dbt.adapters.duckdb") is None:
        pytest.skip("dbt-duckdb is not installed (it is in the test extra)")
    project = tmp_path / "project"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text(
        "name: census\nversion: '1.0'\nconfig-version: 2\nprofile: census\n"
    )
    (project / "profiles.yml").write_text(
        "census:\n  target: dev\n  outputs:\n    dev:\n      type: duckdb\n"
        f"      path: '{warehouse}'\n      threads: 1\n"
    )
    packages = _yaml_block("# packages.yml")
    package = ROOT / "integrations" / "dbt_anonsql"
    (project / "packages.yml").write_text(
        packages.replace("path/to/anonsql/integrations/dbt_anonsql", str(package))
    )
    (project / "models" / "census_k5_source.py").write_text(_examples()[2])
    schema = _yaml_block("# models/schema.yml")
    # one more test the model must fail: a k no class reaches (a warning, so build goes on)
    schema += (
        "      - anonsql.k_anonymous:\n"
        "          arguments: {qis: [age, sex, zip], k: 100000}\n"
        "          config: {severity: warn}\n"
    )
    # and a role test the model must fail: income left out of the declared columns
    schema += (
        "      - anonsql.has_roles:\n"
        "          arguments: {qis: [age, sex, zip]}\n"
        "          config: {severity: warn}\n"
    )
    (project / "models" / "schema.yml").write_text(schema)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "DBT_PROFILES_DIR": str(project),
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
    }
    deps = _dbt(["deps"], project, env)
    assert deps.returncode == 0, deps.stdout + deps.stderr
    build = _dbt(["build"], project, env)
    out = build.stdout + build.stderr
    assert build.returncode == 0, out

    con = duckdb.connect(warehouse, read_only=True)
    model = con.sql("SELECT * FROM census_k5_source").df()
    census_rows = con.sql("SELECT count(*) FROM census").fetchall()[0][0]
    con.close()
    assert len(model) == census_rows == 2000
    # the l-diversity warning fires exactly when a brute-force groupby finds a failing class
    qis = ["age", "sex", "zip"]
    released = model[~(model[qis].astype(str) == "*").all(axis=1)]
    classes = released.groupby(qis, dropna=False)
    assert classes.size().min() >= 5
    l_fails = bool((classes["income"].nunique() < 2).any())
    summary = re.search(r"PASS=(\d+) WARN=(\d+) ERROR=(\d+)", out)
    assert summary, out
    passed, warned, errors = map(int, summary.groups())
    assert errors == 0
    # the k = 100000 test, has_roles without income, and l_diverse if it fails
    assert warned == 2 + l_fails
    # the model, has_roles, k_anonymous(5), l_diverse if it holds
    assert passed == 1 + 1 + 1 + (not l_fails)


def test_dbt_cursor_wrapper_is_accepted(warehouse):
    """What dbt-duckdb hands a Python model: a DuckDBCursorWrapper around a cursor."""
    import anonsql

    try:
        from dbt.adapters.duckdb.environments.local import DuckDBCursorWrapper
    except ImportError:  # the same shape, where dbt is absent

        class DuckDBCursorWrapper:  # type: ignore[no-redef]
            def __init__(self, cursor):
                self._cursor = cursor

            def __getattr__(self, name):
                return getattr(self._cursor, name)

    con = duckdb.connect(warehouse)
    session = DuckDBCursorWrapper(con.cursor())
    run = anonsql.anonymize(
        session,
        {"qi": ["age", "sex"], "k": 5, "output": "k5", "columns": ["age", "sex"]},
        table="census",
    )
    assert run.output == "k5"
    got = con.sql("SELECT count(*) FROM k5").fetchall()[0][0]
    assert got == 2000
    sql_con = anonsql.connect(DuckDBCursorWrapper(con.cursor()))
    assert sql_con.sql("SELECT k FROM anonsql_k('k5', ['age', 'sex'])").fetchall()[0][0] >= 5
    con.close()

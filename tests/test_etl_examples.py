"""The README's ETL examples (Airflow, Dagster, dbt) are plain functions: run them against a
demo database. The orchestrator-specific wrappers around them are not run (no Airflow,
Dagster or dbt here)."""

from __future__ import annotations

import re

import duckdb
import pytest

from anonsql.database import Database
from anonsql.demo.setup import setup_demo
from tests.conftest import ROOT


def _examples() -> list[str]:
    text = (ROOT / "README.md").read_text()
    return re.findall(r"<!-- etl-example -->\n```python\n(.*?)```", text, re.S)


@pytest.fixture
def warehouse(tmp_path):
    path = tmp_path / "warehouse.duckdb"
    db = Database.open(path)
    setup_demo(db, rows=2000)
    db.close()
    return str(path)


def test_readme_has_the_three_examples():
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


def test_dbt_python_model_and_post_hook(warehouse):
    from click.testing import CliRunner

    from anonsql.cli.main import cli

    ns: dict = {}
    exec(_examples()[2], ns)
    assert CliRunner().invoke(cli, ["install-macros", "--db", warehouse]).exit_code == 0
    session = duckdb.connect(warehouse)  # what dbt-duckdb hands a Python model
    rel = ns["model"](None, session)
    assert len(rel.df()) == 2000
    # the post-hook runs on a plain DuckDB connection, with the installed macros
    assert session.sql(ns["POST_HOOK"]).fetchall() == [(None,)]
    session.execute("CREATE OR REPLACE VIEW census_k5 AS SELECT * FROM census")
    with pytest.raises(duckdb.Error, match="not 5-anonymous"):
        session.sql(ns["POST_HOOK"]).fetchall()
    session.close()

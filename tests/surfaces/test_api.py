"""The Python API for ETL steps, spec files (``anonsql run``), ``anonsql sql`` and reports."""

from __future__ import annotations

import json

import duckdb
import pandas as pd
import pytest
from click.testing import CliRunner

import anonsql
from anonsql.cli.main import cli
from anonsql.database import Database
from anonsql.demo.setup import setup_demo
from anonsql.errors import InputError
from anonsql.evaluation.report import build_report, render_html
from anonsql.hierarchy.hierarchy import Hierarchy
from tests.helpers import brute
from tests.helpers.snapshot import snapshot

QIS = ["age", "sex", "zip"]
#: the demo census's columns; every column of an output has a role, and the ones that are
#: neither a QI nor the sensitive attribute are released as they are (``keep``)
CENSUS = [
    *("age", "sex", "race", "marital_status", "education", "zip"),
    *("country", "occupation", "income"),
]


def _keep(sensitive: str | None = None) -> list[str]:
    """The census columns kept as they are beside ``QIS`` and ``sensitive``."""
    return [c for c in CENSUS if c not in QIS and c != sensitive]


GOAL = {"qi": QIS, "k": 5, "suppression": 0.05, "keep": _keep()}


@pytest.fixture
def census_file(tmp_path):
    path = tmp_path / "w.duckdb"
    db = Database.open(path)
    setup_demo(db, rows=2000)
    db.close()
    return path


def _k_ok(frame: pd.DataFrame, qis: list[str], k: int) -> bool:
    kept = frame[~(frame[qis] == "*").all(axis=1)]
    return bool((brute.k_values(kept, qis) >= k).all())


def test_every_source_form_gives_the_same_result(census_file):
    by_path = anonsql.anonymize((str(census_file), "census"), {**GOAL, "output": "a"})
    con = duckdb.connect(str(census_file))
    by_con = anonsql.anonymize(con, GOAL, table="census", output="b")
    frame = con.sql("SELECT * FROM census").df()
    con.close()
    by_frame = anonsql.anonymize(frame, {**GOAL, "hierarchy": _definitions()})
    assert by_path.levels == by_con.levels
    assert by_frame.output == "anonymized" and _k_ok(by_frame.to_frame(), QIS, 5)
    out = by_path.to_frame()
    assert len(out) == 2000 and _k_ok(out, QIS, 5)
    assert by_path.summary()["levels"] == by_path.levels


def _definitions() -> dict:
    # a DataFrame has no catalog: every hierarchy is defined in the spec
    return {
        "age": {"builder": "intervals", "widths": [5, 10, 20], "start": 0},
        "sex": {"builder": "flat"},
        "zip": {"builder": "mask", "step": 1},
    }


def test_api_errors_are_clear(census_file):
    with pytest.raises(InputError, match="name the table"):
        anonsql.anonymize(str(census_file), GOAL)
    with pytest.raises(InputError, match="source is a DuckDB, psycopg or Spark connection"):
        anonsql.anonymize(42, GOAL, table="census")
    with pytest.raises(InputError, match="unknown option 'kay'"):
        anonsql.anonymize((str(census_file), "census"), {**GOAL, "kay": 5})
    with pytest.raises(InputError, match="'k' must be an integer"):
        anonsql.anonymize((str(census_file), "census"), {**GOAL, "k": 2.5})
    with pytest.raises(InputError, match="unknown builder"):
        anonsql.anonymize(
            pd.DataFrame({"age": [1, 2]}),
            {"qi": ["age"], "k": 1, "hierarchy": {"age": {"builder": "x"}}},
        )


SPEC_TOML = """
database = "w.duckdb"
table = "census"
qi = ["age", "sex", "zip"]
sensitive = "income"
keep = KEEP
k = 5
l = 2
suppression = 0.05
metric = "loss"
output = "census_spec"
materialize = "table"

[hierarchy]
age = { builder = "intervals", widths = [10, 20], name = "age_by_10" }
sex = { file = "sex.csv" }
zip = "zip"
"""


def test_spec_files_toml_and_json(census_file):
    folder = census_file.parent
    (folder / "sex.csv").write_text("female;*\nmale;*\n")
    (folder / "spec.toml").write_text(SPEC_TOML.replace("KEEP", json.dumps(_keep("income"))))
    r = CliRunner().invoke(cli, ["run", str(folder / "spec.toml"), "--json"])
    assert r.exit_code == 0, r.output
    summary = json.loads(r.output)
    assert summary["output"] == "census_spec" and summary["materialize"] == "table"
    db = Database.open(census_file)
    assert "age_by_10" in db.hierarchies.names()
    assert _k_ok(db.backend.fetch_df("SELECT * FROM census_spec"), QIS, 5)
    db.close()
    spec = {"table": "census", "qi": QIS, "k": 3, "output": "census_json", "keep": _keep()}
    (folder / "spec.json").write_text(json.dumps(spec))
    r = CliRunner().invoke(cli, ["run", str(folder / "spec.json"), "--db", str(census_file)])
    assert r.exit_code == 0 and "wrote view 'census_json'" in r.output, r.output


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('table = "census"\nqi = ["age"]\nk = "5"\n', "'k' must be an integer"),
        ('table = "census"\nqi = ["age"]\nk = 5\nsuppresion = 0.1\n', "unknown option"),
        ('qi = ["age"]\nk = 5\n', "give the source table"),
        ('table = "census"\nqi = ["age"\n', "not valid TOML"),
        (
            'table = "census"\nqi = ["age"]\nk = 5\n[hierarchy]\nage = { builder = "intervals", '
            "widths = [5], bogus = 1 }\n",
            "unknown keys bogus",
        ),
    ],
)
def test_bad_spec_files_change_nothing(census_file, text, message):
    (census_file.parent / "bad.toml").write_text(text)
    db = Database.open(census_file)
    before = snapshot(db)
    db.close()
    r = CliRunner().invoke(
        cli, ["run", str(census_file.parent / "bad.toml"), "--db", str(census_file)]
    )
    assert r.exit_code == 1 and message in r.output, r.output
    db = Database.open(census_file)
    assert snapshot(db) == before
    db.close()


def test_sql_command_runs_statements_and_files(census_file, tmp_path):
    runner = CliRunner()
    db = ["--db", str(census_file)]
    statements = (
        f"ANONYMIZE TABLE census INTO s5 WITH (k = 5, qi = (age, sex, zip), keep = "
        f"({', '.join(_keep())})); SELECT k FROM anonsql_k('s5', ['age', 'sex', 'zip'])"
    )
    r = runner.invoke(cli, ["sql", statements, "--json", *db])
    assert r.exit_code == 0, r.output
    assert '"output": "s5"' in r.output and '"kind": "query"' in r.output
    assert '"items": [\n    {\n      "k":' in r.output
    script = tmp_path / "job.sql"
    script.write_text("-- nightly\nSELECT COUNT(*) AS n FROM s5;\n")
    r = runner.invoke(cli, ["sql", "-f", str(script), *db])
    assert r.exit_code == 0 and "2000" in r.output, r.output
    r = runner.invoke(cli, ["sql", "ANONYMIZE TABLE census INTO s6 WITH (k = 5)", *db])
    assert r.exit_code == 1 and "give the quasi-identifiers" in r.output
    r = runner.invoke(cli, ["sql", "SELEC 1", *db])
    assert r.exit_code == 1 and "syntax error" in r.output.lower()


def test_report_json_and_html(census_file, tmp_path):
    con = anonsql.connect(census_file)
    run = con.sql(
        "ANONYMIZE TABLE census INTO r5 WITH (k = 5, l = 2, qi = (age, sex, zip), "
        f"sensitive = income, suppression = 0.05, solutions = TRUE, keep = "
        f"({', '.join(_keep('income'))}))"
    )
    report = build_report(con.database, run.run_id, population="census")
    assert report["transformation"] == run.levels
    sizes = report["class_sizes"]
    assert sum(s["classes"] for s in sizes) == run.measures["classes"]
    assert min(s["size"] for s in sizes) >= 5
    risk = report["risk"]
    assert risk["prosecutor_max"] == pytest.approx(run.measures["prosecutor_max"])
    assert risk["marketer"] == pytest.approx(run.measures["marketer"])
    assert sum(d["records"] for d in risk["distribution"]) == risk["records"]
    assert 0 < risk["journalist"]["max"] <= risk["prosecutor_max"]
    assert set(report["loss_per_qi"]) == set(QIS)
    assert any(s["optimal"] for s in report["solutions"])
    # issue 27.18: the sensitive attribute per class, checked against pandas on the output
    out = con.database.backend.fetch_df("SELECT * FROM r5")
    released = out[~(out[QIS] == "*").all(axis=1)]
    distinct = released.groupby(QIS)["income"].nunique().value_counts().sort_index()
    sens = report["sensitive"]
    assert [(e["distinct"], e["classes"]) for e in sens["distinct_per_class"]] == list(
        distinct.items()
    )
    shares = released["income"].value_counts(normalize=True)
    assert {v["value"]: v["share"] for v in sens["values"]} == pytest.approx(shares.to_dict())
    (l_model,) = sens["models"]
    assert l_model["min"] == released.groupby(QIS)["income"].nunique().min()
    assert sum(e["classes"] for e in l_model["distribution"]) == run.measures["classes"]
    # the levels chosen and released rows only, in the output's columns
    assert [(e["qi"], e["level"]) for e in report["levels"]] == list(run.levels.items())
    sample = report["sample_rows"]
    assert sample["columns"] == list(out.columns) and len(sample["rows"]) == 10
    assert all(row[out.columns.get_loc("age")] != "*" for row in sample["rows"])
    page = render_html(report)
    assert (
        "<script" not in page
        and page.count("<svg") == 7  # risk, sizes, values, distinct l, 2-diversity, loss, plot
        and "http" not in page.replace("http://www.w3.org/2000/svg", "")
        and "Levels chosen" in page
        and "Sensitive attribute income" in page
    )
    con.close()
    r = CliRunner().invoke(
        cli, ["report", str(run.run_id), "--out", str(tmp_path), "--db", str(census_file)]
    )
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / f"anonsql_run_{run.run_id}.json").read_text())["output"] == "r5"
    r = CliRunner().invoke(cli, ["report", "999", "--db", str(census_file)])
    assert r.exit_code == 1 and "no run 999" in r.output


def test_hierarchy_definitions_reject_two_parents(tmp_path):
    frame = pd.DataFrame({"q": ["a", "b"], "v": [1, 2]})
    (tmp_path / "q.csv").write_text("a;x;*\na;y;*\nb;y;*\n")
    with pytest.raises(Exception, match="two parents"):
        anonsql.anonymize(
            frame, {"qi": ["q"], "k": 1, "hierarchy": {"q": {"file": str(tmp_path / "q.csv")}}}
        )
    assert Hierarchy  # the model behind the files


def test_a_missing_database_path_is_an_error_not_a_new_file(tmp_path):
    typo = tmp_path / "warehuose.duckdb"
    with pytest.raises(InputError, match="does not exist"):
        anonsql.anonymize((str(typo), "census"), {"qi": ["age"], "k": 2})
    assert not typo.exists()

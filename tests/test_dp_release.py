"""SafePub releases end to end on DuckDB (issue 32): every released class holds at least the
derived k; nothing comes from records outside the stored sample; the view reads the stored
sample and never draws again; the budget adds up and a release beyond its limit is refused
with one line and writes nothing; refresh draws a new sample and spends again; the options
on every surface (Python API, spec files, SQL statements, CLI)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import anonsql
from anonsql.algorithms.dp.budget import budgets, set_budget
from anonsql.cli.main import cli
from anonsql.database import Database
from anonsql.demo.setup import setup_demo
from anonsql.errors import InputError
from anonsql.run import anonymize
from anonsql.spec import Spec

QIS = ["age", "sex", "zip"]


@pytest.fixture
def db(tmp_path):
    d = Database.open(str(tmp_path / "dp.duckdb"))
    setup_demo(d, rows=6000)
    yield d
    d.close()


def dp(**kw) -> Spec:
    base = dict(
        qis=QIS,
        algorithm="safepub",
        dp_epsilon=2.0,
        dp_delta=1e-4,
        dp_steps=8,
        output="census_dp",
        columns=QIS,
        seed=4,
    )
    base.update(kw)
    return Spec(**base)


def rows(db, sql: str):
    return db.backend.fetchall(sql)


def dp_params(db, run_id: int) -> dict:
    return json.loads(
        rows(db, f"SELECT parameters FROM anonsql_runs WHERE run_id = {run_id}")[0][0]
    )["dp"]


def test_every_released_class_has_at_least_k(db):
    r = anonymize(db, "census", dp())
    k = dp_params(db, r.run_id)["k"]
    sizes = rows(db, "SELECT COUNT(*) FROM census_dp GROUP BY age, sex, zip")
    assert sizes and min(s for (s,) in sizes) >= k
    assert rows(db, "SELECT COUNT(*) FROM census_dp WHERE age = '*'")[0][0] == 0  # left out
    assert r.measures["classes"] == len(sizes)
    assert "differential privacy" in r.guarantee and "SEEDED" in r.guarantee


def test_nothing_released_from_records_outside_the_sample(db):
    r = anonymize(db, "census", dp(materialize="table"))
    p = dp_params(db, r.run_id)
    sample = p["sample"]
    n_sample = rows(db, f"SELECT COUNT(*) FROM {sample}")[0][0]
    assert n_sample == p["sample_rows"] < 6000
    # the release is the sample's rows generalized: the view over the stored sample with the
    # output's levels gives the same rows; a release's row count is at most the sample's
    released = rows(db, "SELECT COUNT(*) FROM census_dp")[0][0]
    assert released <= n_sample
    # every released row maps back to a sampled record of its class: per class, the release
    # holds exactly the sampled records of that class
    lv = r.levels
    from anonsql.output.materialize import output_query

    keys = json.loads(
        rows(db, f"SELECT parameters FROM anonsql_runs WHERE run_id = {r.run_id}")[0][0]
    )["qi_keys"]
    q = output_query("duckdb", sample, QIS, QIS, keys, [lv[q] for q in QIS]).sql("duckdb")
    by_class = dict(
        ((a, s, z), n)
        for a, s, z, n in rows(db, f"SELECT age, sex, zip, COUNT(*) FROM ({q}) GROUP BY ALL")
    )
    out = rows(db, "SELECT age, sex, zip, COUNT(*) FROM census_dp GROUP BY ALL")
    for a, s, z, n in out:
        assert by_class[(a, s, z)] == n


def test_the_view_reads_the_stored_sample_and_never_draws_again(db):
    r = anonymize(db, "census", dp())
    sample = dp_params(db, r.run_id)["sample"]
    sql = rows(db, "SELECT sql FROM duckdb_views() WHERE view_name = 'census_dp'")[0][0].lower()
    assert sample in sql and "sha256" not in sql and "random" not in sql
    first = rows(db, "SELECT * FROM census_dp ORDER BY ALL")
    assert rows(db, "SELECT * FROM census_dp ORDER BY ALL") == first
    # a change of the source does not reach the release: it reads the sample
    db.backend.execute("DELETE FROM census WHERE sex = 'female'")
    assert rows(db, "SELECT * FROM census_dp ORDER BY ALL") == first


def test_seed_reproduces_a_release_and_is_recorded(db):
    a = anonymize(db, "census", dp())
    first = rows(db, "SELECT * FROM census_dp ORDER BY ALL")
    b = anonymize(db, "census", dp())
    assert rows(db, "SELECT * FROM census_dp ORDER BY ALL") == first
    assert a.levels == b.levels
    p = dp_params(db, b.run_id)
    assert p["seed"] == 4 and p["randomness"].startswith("seeded")
    # the first release's sample was dropped with the output it fed
    assert not db.backend.table_exists(dp_params(db, a.run_id)["sample"])


def test_os_randomness_by_default(db):
    r = anonymize(db, "census", dp(seed=None))
    p = dp_params(db, r.run_id)
    assert p["seed"] is None and p["randomness"] == "os"
    assert "SEEDED" not in r.guarantee


def test_the_sample_key_is_bound_never_in_a_statement(db, monkeypatch):
    """The sampler's secret key travels as a bound parameter: no statement text anonsql sends
    holds it (an engine shows running statements and logs their text)."""
    from anonsql.algorithms.dp.mechanisms import Randomness

    keys: list[str] = []
    draw = Randomness.sample_key
    monkeypatch.setattr(Randomness, "sample_key", lambda self: keys.append(draw(self)) or keys[-1])
    texts: list[str] = []
    be = type(db.backend)
    sql_text = be.sql_text
    monkeypatch.setattr(
        be, "sql_text", lambda self, st: texts.append(sql_text(self, st)) or texts[-1]
    )
    anonymize(db, "census", dp(seed=None, materialize="table"))
    (key,) = keys
    assert len(key) == 64 and any("SHA256(?" in t for t in texts)
    assert not any(key in t for t in texts)


def test_a_sample_whose_output_was_dropped_goes_at_the_next_write(tmp_path):
    """An output dropped by hand leaves its stored sample (sampled source rows) unread:
    status names it, and the next anonsql write, of any output, drops it."""
    path = str(tmp_path / "dp.duckdb")
    db = Database.open(path)
    setup_demo(db, rows=2000)
    r = anonymize(db, "census", dp())
    sample = dp_params(db, r.run_id)["sample"]
    db.backend.execute("DROP VIEW census_dp")
    db.close()
    out = CliRunner().invoke(cli, ["status", "--json", "--db", path])
    assert json.loads(out.output)["orphaned_samples"] == [sample]
    out = CliRunner().invoke(cli, ["status", "--db", path])
    assert "stored samples of dropped DP outputs (sampled source rows" in out.output
    db = Database.open(path)
    assert db.backend.table_exists(sample)
    anonymize(db, "census", Spec(qis=["age", "sex"], k=2, output="other", columns=["age", "sex"]))
    assert not db.backend.table_exists(sample)
    db.close()


def test_two_releases_add_up_and_a_release_beyond_the_limit_writes_nothing(db):
    anonymize(db, "census", dp())
    anonymize(db, "census", dp(output="census_dp2", dp_epsilon=0.5, dp_delta=1e-5))
    (b,) = budgets(db, "census")
    assert b.releases == 2
    assert b.epsilon_spent == pytest.approx(2.5) and b.delta_spent == pytest.approx(1.1e-4)
    set_budget(db, "census", 3.0, 1e-3)
    before = rows(db, "SELECT COUNT(*) FROM anonsql_runs")[0][0]
    tables = sorted(db.backend.relation_names())
    with pytest.raises(InputError) as e:
        anonymize(db, "census", dp(output="census_dp3", dp_epsilon=1.0))
    assert "refused" in str(e.value) and "\n" not in str(e.value)
    assert rows(db, "SELECT COUNT(*) FROM anonsql_runs")[0][0] == before
    assert sorted(db.backend.relation_names()) == tables  # no sample, no output
    anonymize(db, "census", dp(output="census_dp3", dp_epsilon=0.5))  # within the limit
    assert budgets(db, "census")[0].epsilon_spent == pytest.approx(3.0)


def test_refresh_draws_a_new_sample_and_spends_again(db):
    from anonsql.run import refresh

    r = anonymize(db, "census", dp(seed=None))
    old = dp_params(db, r.run_id)["sample"]
    r2 = refresh(db, "census_dp")
    new = dp_params(db, r2.run_id)["sample"]
    assert new != old and not db.backend.table_exists(old) and db.backend.table_exists(new)
    assert budgets(db, "census")[0].epsilon_spent == pytest.approx(4.0)
    assert any("new sample" in w for w in r2.measures["warnings"])


def test_fixed_levels_without_search(db):
    r = anonymize(
        db, "census", dp(dp_search_budget=0.0, dp_steps=None, levels={"age": 2, "sex": 0, "zip": 3})
    )
    assert r.levels == {"age": 2, "sex": 0, "zip": 3}
    p = dp_params(db, r.run_id)
    assert p["epsilon_search"] == 0 and p["epsilon_anon"] == 2.0 and p["steps"] == 0


@pytest.mark.parametrize("metric", ["loss", "precision", "aecs", "dm", "entropy"])
def test_every_score_function_runs(db, metric):
    r = anonymize(db, "census", dp(metric=metric))
    assert r.metric == metric and r.checked > 1


@pytest.mark.parametrize(
    "change,message",
    [
        (dict(dp_delta=None), "needs"),
        (dict(k=5), "derives k"),
        (dict(sensitive="income", columns=None), "quasi-identifiers only"),
        (dict(keep=["income"], columns=[*QIS, "income"]), "quasi-identifiers only"),
        (dict(dp_search_budget=0.0, dp_steps=None), "levels"),
        (dict(levels={"age": 1, "sex": 0, "zip": 1}), "dp_search_budget"),
        (dict(suppression=0.05), "suppression"),
        (dict(metric="ncp"), "bounded sensitivity"),
        (dict(output=None), "--out"),
        (dict(dp_epsilon=-1.0), "positive"),
        (dict(dp_search_budget=0.0, dp_steps=None, levels={"age": 9, "sex": 0, "zip": 1}), "[0,"),
    ],
)
def test_bad_input_is_one_line_and_writes_nothing(db, change, message):
    before = sorted(db.backend.relation_names())
    with pytest.raises(InputError) as e:
        anonymize(db, "census", dp(**change))
    assert message in str(e.value) and "\n" not in str(e.value)
    assert sorted(db.backend.relation_names()) == before


def test_dp_options_belong_to_safepub(db):
    with pytest.raises(InputError, match="safepub"):
        anonymize(db, "census", Spec(qis=QIS, k=5, dp_epsilon=1.0, output="x", columns=QIS))


def test_surfaces_api_spec_file_sql_and_cli(db, tmp_path):
    path = db.backend.con  # noqa: F841 - the fixture's database stays open
    target = str(tmp_path / "dp.duckdb")
    db.close()
    opts = {
        "qi": QIS,
        "algorithm": "safepub",
        "dp_epsilon": 1.5,
        "dp_delta": 1e-4,
        "dp_steps": 5,
        "seed": 1,
        "columns": QIS,
        "output": "api_dp",
    }
    run = anonsql.anonymize((target, "census"), opts)
    assert run.algorithm == "safepub"
    spec = tmp_path / "dp.toml"
    spec.write_text(
        'table = "census"\nqi = ["age", "sex", "zip"]\ncolumns = ["age", "sex", "zip"]\n'
        'algorithm = "safepub"\ndp_epsilon = 1.0\ndp_delta = 1e-4\ndp_search_budget = 0\n'
        'output = "spec_dp"\n[levels]\nage = 2\nsex = 1\nzip = 4\n'
    )
    runner = CliRunner()
    res = runner.invoke(cli, ["run", str(spec), "--db", target, "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["levels"] == {"age": 2, "sex": 1, "zip": 4}
    con = anonsql.connect(target)
    r = con.sql(
        "ANONYMIZE TABLE census INTO sql_dp WITH (qi = (age, sex, zip), columns = (age, sex, zip),"
        " algorithm = 'safepub', dp_epsilon = 1.0, dp_delta = 0.0001, dp_steps = 4, seed = 2)"
    )
    assert r.algorithm == "safepub"
    con.close()
    res = runner.invoke(
        cli,
        [
            *("anonymize", "census", "--qi", "age,sex,zip", "--columns", "age,sex,zip"),
            *("--algorithm", "safepub", "--dp-epsilon", "1", "--dp-delta", "1e-4"),
            *("--dp-search-budget", "0", "--levels", "age=1,sex=0,zip=3", "--out", "cli_dp"),
            *("--db", target),
        ],
    )
    assert res.exit_code == 0, res.output
    res = runner.invoke(
        cli, ["budget", "set", "census", "--epsilon", "5", "--delta", "1e-3", "--db", target]
    )
    assert res.exit_code == 0 and "of 5" in res.output
    res = runner.invoke(cli, ["status", "--db", target])
    assert "privacy budget" in res.output and "census: epsilon 4.5 of 5" in res.output
    res = runner.invoke(
        cli,
        [
            *("anonymize", "census", "--qi", "age,sex,zip", "--columns", "age,sex,zip"),
            *("--algorithm", "safepub", "--dp-epsilon", "1", "--dp-delta", "1e-4"),
            *("--out", "cli_dp2", "--db", target),
        ],
    )
    assert res.exit_code == 1 and "refused" in res.output
    res = runner.invoke(cli, ["algorithms"])
    assert "safepub:" in res.output


def test_anonymize_file_takes_the_dp_options(tmp_path):
    """anonymize-file takes every algorithm family's options (generated from the option
    table), SafePub's included; nothing is kept but the file, so no budget is tracked."""
    import json as _json

    import pandas as pd
    from click.testing import CliRunner

    from anonsql.algorithms.dp.params import safepub_parameters
    from anonsql.cli.main import cli
    from anonsql.demo.people import people

    src = tmp_path / "p.csv"
    people(2000, seed=3)[["birth_date", "zip", "gender"]].to_csv(src, index=False)
    out = tmp_path / "o.csv"
    args = ["anonymize-file", str(src), "--qi", "birth_date,zip,gender", "--algorithm",
            "safepub", "--dp-epsilon", "2", "--dp-delta", "1e-4", "--dp-steps", "3",
            "--seed", "5", "--out", str(out), "--json"]  # fmt: skip
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    body = _json.loads(r.output[r.output.index("{") :])
    assert body["algorithm"] == "safepub" and out.exists()
    released = pd.read_csv(out, dtype=str)
    if len(released):
        k = safepub_parameters(2.0, 1e-4, 0.1).k
        assert released.groupby(list(released.columns)).size().min() >= k

"""The CLI as a user drives it, through click's CliRunner."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from anonsql import __version__
from anonsql.cli.main import cli


@pytest.fixture
def run(tmp_path):
    dbfile = str(tmp_path / "t.duckdb")
    runner = CliRunner()

    def invoke(*args: str, ok: bool = True):
        result = runner.invoke(cli, [*args, "--db", dbfile])
        if ok:
            assert result.exit_code == 0, result.output
        else:
            assert result.exit_code != 0, result.output
        return result

    invoke.db = dbfile
    return invoke


def test_version():
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0 and __version__ in result.output


def test_help_does_not_import_heavy_modules():
    code = (
        "import sys; from anonsql.cli.main import cli\n"
        "try:\n    cli(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in ('duckdb', 'pandas', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_import_load_show_validate(run, tmp_path):
    data = tmp_path / "pets.csv"
    data.write_text("name;race\nAna;Cat\nBea;Dog\nCid;Lion\n")
    h = tmp_path / "race.csv"
    h.write_text("Cat;Felid;Mammal\nLion;Felid;Mammal\nDog;Dog;Mammal\n")
    assert "imported 3 rows" in run("import", "pets", str(data), "--sep", ";").output
    assert "exists already" in run("import", "pets", str(data), "--sep", ";", ok=False).output
    assert "imported 3 rows" in run("import", "pets", str(data), "--sep", ";", "--replace").output
    out = run("hierarchy", "load", "race", str(h)).output
    assert "3 levels (0..2), 3 leaves, 6 nodes" in out
    assert "Cat -> Felid -> Mammal" in run("hierarchy", "show", "race").output
    out = run("hierarchy", "validate", "race", "--table", "pets").output
    assert "closure table consistent" in out and "every value of pets.race" in out
    assert "race" in run("hierarchy", "list").output


def test_validate_reports_missing_values(run, tmp_path):
    data = tmp_path / "pets.csv"
    data.write_text("race\nCat\nCow\nCow\n")
    h = tmp_path / "race.json"
    h.write_text(json.dumps({"Mammal": {"Felid": ["Cat", "Lion"]}}))
    run("import", "pets", str(data))
    run("hierarchy", "load", "race", str(h))
    out = run("hierarchy", "validate", "race", "--table", "pets", ok=False).output
    assert "1 distinct value(s) in 2 row(s)" in out and "'Cow'" in out


def test_bad_hierarchy_files_fail_cleanly_and_store_nothing(run, tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("a;x;*\na;y;*\n")
    out = run("hierarchy", "load", "h", str(bad), ok=False).output
    assert "two parents" in out and "Traceback" not in out
    cyc = tmp_path / "cyc.csv"
    cyc.write_text("a;b\nb;a\nc;a\n")
    assert (
        "cycle"
        in run("hierarchy", "load", "h", str(cyc), "--format", "parent-child", ok=False).output
    )
    assert "no hierarchies stored" in run("hierarchy", "list").output


def test_builders_from_cli(run, tmp_path):
    out = run(
        "hierarchy",
        "build",
        "age",
        "--intervals",
        "5,10",
        "--range",
        "0:99",
        "--start",
        "0",
        "--top",
        "90",
    ).output
    assert "4 levels" in out and "100 leaves" in out
    assert (
        "37 -> [35, 40) -> [30, 40) -> *" in run("hierarchy", "show", "age", "--limit", "0").output
    )
    data = tmp_path / "z.csv"
    data.write_text("zip\n47012\n47013\n")
    run("import", "z", str(data))
    out = run("hierarchy", "build", "zip", "--mask", "1", "--table", "z", "--column", "zip").output
    assert "2 leaves" in out
    out = run(
        "hierarchy", "build", "d", "--dates", "month,year", "--values", "2024-01-02,2023-05-06"
    ).output
    assert "4 levels" in out
    out = run("hierarchy", "build", "g", "--groups", "2", "--values", "a,b,c").output
    assert "3 levels" in out
    assert "exactly one of" in run("hierarchy", "build", "x", "--range", "0:3", ok=False).output
    assert (
        "exactly one of --values" in run("hierarchy", "build", "x", "--mask", "1", ok=False).output
    )
    run("hierarchy", "drop", "g")
    assert "no hierarchy named 'g'" in run("hierarchy", "show", "g", ok=False).output


def test_demo_creates_table_and_hierarchies(run):
    out = run("demo", "--rows", "2000").output
    assert "created table 'census' with 2000 rows" in out
    for name in (
        "age",
        "sex",
        "race",
        "marital_status",
        "education",
        "zip",
        "country",
        "occupation",
        "income",
    ):
        assert name in out
        run("hierarchy", "validate", name, "--table", "census")


def test_unknown_table_and_file(run, tmp_path):
    assert "does not exist" in run("import", "t", str(tmp_path / "nope.csv"), ok=False).output
    run("hierarchy", "build", "a", "--groups", "2", "--values", "x,y")
    out = run("hierarchy", "validate", "a", "--table", "ghost", ok=False).output
    assert "no table or view named 'ghost'" in out


def _pets(run, tmp_path):
    data = tmp_path / "pets.csv"
    data.write_text("race,sex,ill\nCat,F,a\nLion,F,b\nDog,M,c\nDog,M,a\nCat,M,b\nLion,F,c\n")
    race = tmp_path / "race.csv"
    race.write_text("Cat;Felid;*\nLion;Felid;*\nDog;Canid;*\n")
    sex = tmp_path / "sex.csv"
    sex.write_text("F;*\nM;*\n")
    run("import", "pets", str(data))
    run("hierarchy", "load", "breed", str(race))
    run("hierarchy", "load", "sex", str(sex))


def test_anonymize_check_and_metrics(run, tmp_path):
    _pets(run, tmp_path)
    out = run(
        "anonymize",
        "pets",
        "--qi",
        "race,sex",
        "--k",
        "2",
        "--hierarchy",
        "race=breed",
        "--out",
        "pets_k2",
        "--json",
    ).output
    summary = json.loads(out)
    assert set(summary["levels"]) == {"race", "sex"}
    assert summary["output"] == "pets_k2" and summary["measures"]["min_class_size"] >= 2
    text = run(
        "anonymize",
        "pets",
        "--qi",
        "race,sex",
        "--k",
        "2",
        "--hierarchy",
        "race=breed",
        "--out",
        "pets_k2",
    ).output
    assert "race: level" in text and "wrote view 'pets_k2'" in text
    ok = run("check", "pets_k2", "--qi", "race,sex", "--k", "2").output
    assert "2-anonymity: holds" in ok
    bad = run("check", "pets_k2", "--qi", "race,sex", "--k", "4", ok=False)
    assert bad.exit_code == 1 and "DOES NOT HOLD" in bad.output
    js = json.loads(
        run("check", "pets_k2", "--qi", "race,sex", "--sa", "ill", "--l", "1", "--json").output
    )
    assert js["models"][0]["holds"] and "t_clo" in js["risk"]
    lv = run(
        "check",
        "pets",
        "--qi",
        "race,sex",
        "--k",
        "2",
        "--levels",
        "race=1,sex=1",
        "--hierarchy",
        "race=breed",
    ).output
    assert "loss:" in lv
    m = json.loads(
        run(
            "metrics", "pets", "pets_k2", "--qi", "race,sex", "--hierarchy", "race=breed", "--json"
        ).output
    )
    assert 0 <= m["mean_alteration"] <= 100 and "alteration_nllm" in m
    m2 = run(
        "metrics",
        "pets",
        "--qi",
        "race,sex",
        "--levels",
        "race=1,sex=0",
        "--hierarchy",
        "race=breed",
    ).output
    assert "entropy = " in m2


def test_anonymize_errors_are_one_line(run, tmp_path):
    _pets(run, tmp_path)
    out = run("anonymize", "pets", "--qi", "race,colour", "--k", "2", ok=False).output
    assert "has no column 'colour'" in out and "Traceback" not in out
    out = run(
        "anonymize", "pets", "--qi", "race", "--hierarchy", "race=breed", "--k", "9", ok=False
    ).output
    assert "larger than the table" in out
    out = run(
        "anonymize",
        "pets",
        "--qi",
        "race",
        "--hierarchy",
        "race=breed",
        "--k",
        "2",
        "--suppression",
        "2",
        ok=False,
    ).output
    assert "suppression limit" in out
    out = run("check", "pets", "--qi", "race", "--sa", "race", "--l", "2", ok=False).output
    assert "both a quasi-identifier and sensitive" in out
    out = run("check", "pets", "--qi", "race", "--sa", "ill", "--t", "3", ok=False).output
    assert "[0, 1]" in out


def test_demo_anonymizes(run):
    out = run("demo", "--rows", "3000").output
    assert "wrote view 'census_anonymized'" in out
    assert "first released rows" in out

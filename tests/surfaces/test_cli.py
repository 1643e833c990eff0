"""The CLI as a user drives it, through click's CliRunner."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from anonsql import __version__
from anonsql.cli.main import cli
from tests.helpers.roles import CENSUS, others


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
    # the files were refused before the database was opened: not even the file exists
    assert "does not exist" in run("hierarchy", "list", ok=False).output
    run("import", "t", str(bad), "--sep", ";")  # now it does, and holds no hierarchy
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
    for name in CENSUS:
        assert name in out
        run("hierarchy", "validate", name, "--table", "census")


def test_unknown_table_and_file(run, tmp_path):
    assert "does not exist" in run("import", "t", str(tmp_path / "nope.csv"), ok=False).output
    run("hierarchy", "build", "a", "--groups", "2", "--values", "x,y")
    out = run("hierarchy", "validate", "a", "--table", "ghost", ok=False).output
    assert "no table or view named 'ghost'" in out


#: the columns of _pets(); it holds no identifiers, so a run keeps as they are the columns it
#: gives no other role
PETS = ["race", "sex", "ill"]


def keep(table: list[str], *named: str) -> list[str]:
    """``--keep`` with the columns of ``table`` not in ``named`` (QIs, sensitive attribute)."""
    return ["--keep", ",".join(others(table, *named))]


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
        *keep(PETS, "race", "sex"),
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
        *keep(PETS, "race", "sex"),
    ).output
    assert "race: level" in text and "wrote view 'pets_k2'" in text
    ok = run("check", "pets_k2", "--qi", "race,sex", "--k", "2").output
    assert "2-anonymity: holds" in ok
    bad = run("check", "pets_k2", "--qi", "race,sex", "--k", "4", ok=False)
    assert bad.exit_code == 3 and "DOES NOT HOLD" in bad.output
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
    out = run(
        "anonymize", "pets", "--qi", "race,colour", "--k", "2", *keep(PETS, "race"), ok=False
    ).output
    assert "has no column 'colour'" in out and "Traceback" not in out
    out = run(
        "anonymize",
        "pets",
        "--qi",
        "race",
        "--hierarchy",
        "race=breed",
        "--k",
        "9",
        *keep(PETS, "race"),
        ok=False,
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
        *keep(PETS, "race"),
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


# -- issue 18: what a new user hits in the first hour -----------------------------------------


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory):
    """A small demo database, copied per test that writes to it."""
    path = tmp_path_factory.mktemp("demo") / "demo.duckdb"
    from anonsql.database import Database
    from anonsql.demo.setup import DEMO_KEEP, DEMO_OUTPUT, DEMO_QIS, setup_demo
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    # what `anonsql demo --rows 400` writes, closed so that the file can be copied
    db = Database.open(path)
    setup_demo(db, rows=400)
    goal = Spec(
        qis=DEMO_QIS,
        sensitive="income",
        k=5,
        l=2,
        suppression=0.05,
        output=DEMO_OUTPUT,
        keep=DEMO_KEEP,
    )
    anonymize(db, "census", goal)
    db.close()
    return path


@pytest.fixture
def demo(demo_db, tmp_path):
    import shutil

    path = tmp_path / "demo.duckdb"
    shutil.copy(demo_db, path)
    runner = CliRunner()

    def invoke(*args: str, code: int = 0):
        result = runner.invoke(cli, [*args, "--db", str(path)])
        assert result.exit_code == code, result.output
        return result

    invoke.db = path
    return invoke


def test_runs_lists_every_run_with_its_figures(demo):
    rest = keep(CENSUS, "age", "sex")
    demo("anonymize", "census", "--qi", "age,sex", "--k", "5", "--out", "a", *rest)
    demo(
        "anonymize",
        "census",
        "--qi",
        "age,sex",
        "--k",
        "5",
        "--algorithm",
        "greedy",
        "--out",
        "b",
        *rest,
    )
    text = demo("runs").output.splitlines()
    assert len(text) == 3 and "census -> census_anonymized" in text[0]
    assert "greedy" in text[2] and "table recoding" in text[2]
    doc = json.loads(demo("runs", "--json").output)
    assert doc["schema_version"] == 1 and doc["kind"] == "runs"
    ids = [r["run_id"] for r in doc["items"]]
    assert ids == sorted(ids) and len(ids) == 3
    first = doc["items"][0]
    assert set(first) >= {"run_id", "created_at", "source", "output", "algorithm", "levels",
                          "suppressed_rows", "score"}  # fmt: skip
    assert first["output"] == "census_anonymized" and first["exists"]
    assert doc["items"][2]["levels"] is None
    last = json.loads(demo("runs", "--last", "1", "--output", "a", "--json").output)["items"]
    assert [r["output"] for r in last] == ["a"]
    # the id is what report, transpile take
    demo("transpile", "--output", "a", "--dialect", "duckdb")


@pytest.mark.parametrize(
    "command",
    [
        ["check", "census", "--qi", "age", "--k", "2"],
        ["metrics", "census", "--qi", "age", "--levels", "age=1"],
        ["status"],
        ["runs"],
        ["report", "1"],
        ["transpile", "--dialect", "duckdb"],
        ["hierarchy", "list"],
        ["hierarchy", "show", "age"],
        ["export", "census", "x.csv"],
        ["refresh", "census_anonymized"],
        ["represent", "1"],
    ],
)
def test_read_only_commands_never_create_a_database(tmp_path, command):
    typo = tmp_path / "typo.duckdb"
    result = CliRunner().invoke(cli, [*command, "--db", str(typo)])
    assert result.exit_code == 1
    assert f"database {str(typo)!r} does not exist" in result.output
    assert not typo.exists() and "Traceback" not in result.output


def test_errors_are_json_with_json(tmp_path):
    typo = tmp_path / "typo.duckdb"
    result = CliRunner().invoke(cli, ["runs", "--json", "--db", str(typo)])
    assert result.exit_code == 1
    doc = json.loads(result.output)
    assert doc["schema_version"] == 1 and doc["kind"] == "error"
    assert doc["error"]["type"] == "InputError" and "does not exist" in doc["error"]["message"]


def test_json_has_one_shape_for_every_algorithm(demo):
    common = [
        "census",
        "--qi",
        "age,sex,zip",
        "--k",
        "5",
        "--json",
        *keep(CENSUS, "age", "sex", "zip"),
    ]
    flash = json.loads(demo("anonymize", *common, "--out", "f").output)
    greedy = json.loads(demo("anonymize", *common, "--algorithm", "greedy", "--out", "g").output)
    assert flash.keys() == greedy.keys()
    for doc in (flash, greedy):
        assert doc["schema_version"] == 1 and doc["kind"] == "anonymization"
        assert doc["qis"] == ["age", "sex", "zip"]
        assert list(doc["levels"]) == list(doc["per_qi"]) == doc["qis"]
        assert isinstance(doc["warnings"], list)
    assert flash["recoding"] == "levels" and all(
        isinstance(v, int) for v in flash["levels"].values()
    )
    assert greedy["recoding"] == "table" and set(greedy["levels"].values()) == {None}
    assert greedy["lattice_size"] is None and isinstance(flash["lattice_size"], int)
    # the Python API's Run.summary() is the same document
    import anonsql

    qis = ["age", "sex", "zip"]
    options = {"qi": qis, "k": 5, "keep": [c for c in CENSUS if c not in qis]}
    run = anonsql.anonymize((str(demo.db), "census"), options)
    assert run.summary().keys() == flash.keys()


def test_check_exit_status_tells_a_failing_model_from_bad_input(demo):
    args = ["check", "census_anonymized", "--qi", "age,sex,race,marital_status,education,zip"]
    demo(*args, "--k", "5")
    assert "DOES NOT HOLD" in demo(*args, "--k", "400", code=3).output
    assert "no column" in demo("check", "census", "--qi", "nope", "--k", "2", code=1).output
    doc = json.loads(demo("check", "census", "--qi", "nope", "--k", "2", "--json", code=1).output)
    assert doc["kind"] == "error"
    assert json.loads(demo(*args, "--k", "400", "--json", code=3).output)["kind"] == "evaluation"


def test_large_suppression_is_a_warning(demo):
    # 2-diversity of the binary income by entropy needs 50/50 classes: nearly all suppressed
    args = ["anonymize", "census", "--qi", "age,sex,zip", "--sa", "income", "--k", "5",
            *keep(CENSUS, "age", "sex", "zip", "income")]  # fmt: skip
    result = demo(*args, "--l", "2", "--l-variant", "entropy-l", "--suppression", "1", "--out", "w")
    assert "warning:" in result.stderr and "suppressed" in result.stderr
    doc = json.loads(
        demo(*args, "--l", "2", "--l-variant", "entropy-l", "--suppression", "1", "--json").stdout
    )
    assert doc["measures"]["suppressed_share"] > 0.1 and len(doc["warnings"]) == 1
    quiet = demo(*args, "--suppression", "0.05", "--out", "q")
    assert "are suppressed" not in quiet.stderr
    # --sa without an l-, t-, beta- or delta-model: the column is released as it is, and the
    # run says so (issue 27 item 14); with --l it does not
    assert quiet.stderr.count("warning:") == 1 and "no l-diversity" in quiet.stderr


def test_one_loss_per_run(demo):
    """README "One Loss per run": `metrics` on a run's output reads each label at the run's
    level, so its Loss is the run's score; `--levels` suppresses nothing and says so."""
    from anonsql.database import Database
    from anonsql.demo.setup import DEMO_QIS
    from anonsql.evaluation.checks import loss_of_tables

    run = json.loads(demo("runs", "--json").output)["items"][-1]
    qi = ",".join(DEMO_QIS)
    tables = demo("metrics", "census", run["output"], "--qi", qi, "--json")
    assert tables.stdout and json.loads(tables.stdout)["loss"] == pytest.approx(run["score"])
    assert "levels of the run" in demo("metrics", "census", run["output"], "--qi", qi).stderr
    levels = ",".join(f"{q}={run['levels'][q]}" for q in DEMO_QIS)
    text = demo("metrics", "census", "--qi", qi, "--levels", levels).stdout
    assert text.startswith("suppressed_rows = 0\nloss = ")
    # race at level 1, whose "Other" (Native American + Other) is also a leaf's label: read
    # at the leaf, as without a run, the column costs less than the run published
    r1 = json.loads(demo("anonymize", "census", "--qi", "race,sex", "--k", "5", "--out", "r1",
                         "--json", *keep(CENSUS, "race", "sex")).stdout)  # fmt: skip
    assert r1["levels"] == {"race": 1, "sex": 0}
    m = json.loads(demo("metrics", "census", "r1", "--qi", "race,sex", "--json").stdout)
    assert m["loss"] == pytest.approx(r1["score"])
    db = Database.open(demo.db)
    try:
        by_label = loss_of_tables(db, "census", "r1", ["race", "sex"])["loss"]
    finally:
        db.close()
    assert by_label < r1["score"]


def test_sql_reads_standard_input_and_keeps_crlf_in_names(demo, tmp_path):
    result = CliRunner().invoke(
        cli, ["sql", "-f", "-", "--json", "--db", str(demo.db)], input="SELECT 41 + 1 AS x"
    )
    doc = json.loads(result.output)
    assert result.exit_code == 0 and doc["kind"] == "query" and doc["items"] == [{"x": 42}]
    assert doc["schema_version"] == 1
    script = tmp_path / "crlf.sql"
    script.write_bytes(
        b'CREATE TABLE "two\r\nlines" (v INT);\r\nINSERT INTO "two\r\nlines" VALUES (1);\r\n'
    )
    demo("sql", "-f", str(script))
    out = demo(
        "sql",
        "SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'two%'",
        "--json",
    )
    assert json.loads(out.output)["items"] == [{"table_name": "two\r\nlines"}]
    missing = demo("sql", "-f", str(tmp_path / "missing.sql"), code=1).output
    assert "cannot read SQL file" in missing and len(missing.strip().splitlines()) == 1


def test_hierarchy_load_dir_stores_every_file_or_none(demo, tmp_path):
    folder = tmp_path / "h"
    folder.mkdir()
    (folder / "pets_hierarchy_kind.csv").write_text("cat;felid;*\nlion;felid;*\ndog;canid;*\n")
    (folder / "pets_hierarchy_size.csv").write_text("s;*\nm;*\nl;*\n")
    (folder / "notes.txt").write_text("not a hierarchy")
    out = demo("hierarchy", "load-dir", str(folder)).output
    assert "stored hierarchy 'kind'" in out and "stored hierarchy 'size'" in out
    (folder / "kind.json").write_text('{"*": ["x", "y"]}')
    out = demo("hierarchy", "load-dir", str(folder), "--pattern", "{column}.json").output
    assert "stored hierarchy 'kind'" in out and "'size'" not in out
    (folder / "pets_hierarchy_bad.csv").write_text("a;x;*\na;y;*\n")  # two parents
    assert "two parents" in demo("hierarchy", "load-dir", str(folder), code=1).output
    listed = demo("hierarchy", "list").output
    assert "bad" not in listed.split()
    assert (
        "no file"
        in demo("hierarchy", "load-dir", str(folder), "--pattern", "*.xml{column}", code=1).output
    )


def test_anonymize_file_and_export(tmp_path, demo):
    import pandas as pd

    rng = __import__("random").Random(3)
    rows = [
        (rng.choice("MF"), rng.randint(20, 59), rng.choice(["a", "b", "c"])) for _ in range(300)
    ]
    data = tmp_path / "people.csv"
    pd.DataFrame(rows, columns=["sex", "age", "job"]).to_csv(data, index=False)
    hier = tmp_path / "h"
    hier.mkdir()
    (hier / "people_hierarchy_sex.csv").write_text("M;*\nF;*\n")
    (hier / "people_hierarchy_age.csv").write_text(
        "".join(f"{a};{a // 10 * 10}s;*\n" for a in range(20, 60))
    )
    out = tmp_path / "people_k10.csv"
    before = set(tmp_path.iterdir())
    args = ["anonymize-file", str(data), "--qi", "sex,age", "--k", "10", "--suppression", "0.05",
            "--keep", "job"]  # fmt: skip
    result = CliRunner().invoke(cli, [*args, "--hierarchies", str(hier), "--out", str(out)])
    assert result.exit_code == 0, result.output
    released = pd.read_csv(out, dtype=str)
    assert len(released) == 300 and list(released.columns) == ["sex", "age", "job"]
    kept = released[~(released[["sex", "age"]] == "*").all(axis=1)]
    assert kept.groupby(["sex", "age"]).size().min() >= 10  # brute force: 10-anonymous
    assert (len(released) - len(kept)) <= 0.05 * 300
    assert set(tmp_path.iterdir()) - before == {out}  # nothing kept but the file
    # export: Parquet and CSV of a guarded view, as its readers see it
    demo("export", "census_anonymized", str(tmp_path / "v.parquet"))
    frame = pd.read_parquet(tmp_path / "v.parquet")
    assert len(frame) == 400 and "age" in frame.columns
    assert "no table or view" in demo("export", "nope", str(tmp_path / "n.csv"), code=1).output
    assert not (tmp_path / "n.csv").exists()


def test_progress_is_scaled_to_the_work_and_ends_full(demo):
    """The lattice bar counts settled nodes and ends at the lattice size; greedy's counts
    merges of the violating classes seen, never above them."""
    from anonsql.database import Database
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    db = Database.open(demo.db)
    calls: list[tuple[int, int]] = []
    qis = ["age", "sex", "zip"]
    rest = [c for c in CENSUS if c not in qis]
    spec = Spec(qis=qis, k=5, suppression=0.05, keep=rest)
    anonymize(db, "census", spec, lambda done, total: calls.append((done, total)))
    size = calls[-1][1]
    assert calls[-1] == (size, size) and all(0 <= d <= t == size for d, t in calls)
    calls.clear()
    greedy = Spec(qis=qis, k=40, algorithm="greedy", keep=rest)
    anonymize(db, "census", greedy, lambda done, total: calls.append((done, total)))
    assert all(0 <= d <= t for d, t in calls)
    db.close()


def test_wait_retries_while_another_process_holds_the_lock(demo):
    """DuckDB lets one process open a file for writing: without --wait the error says what
    to do; with it the command runs once the other process lets go."""
    code = (
        "import duckdb, sys, time\n"
        "con = duckdb.connect(sys.argv[1]); print('locked', flush=True)\n"
        "time.sleep(float(sys.argv[2])); con.close()\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(demo.db), "2"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        refused = demo("runs", code=1).output
        assert "lock" in refused and "--wait" in refused
        assert "census_anonymized" in demo("runs", "--wait", "60").output
    finally:
        holder.wait(timeout=60)


def test_every_command_help_has_an_example():
    import click

    def walk(group: click.Group, prefix: list[str]):
        for name, command in group.commands.items():
            yield [*prefix, name], command
            if isinstance(command, click.Group):
                yield from walk(command, [*prefix, name])

    missing = []
    for path, _ in walk(cli, []):
        text = CliRunner().invoke(cli, [*path, "--help"]).output
        if "Example" not in text:
            missing.append(" ".join(path))
    assert not missing, f"--help without an example: {missing}"

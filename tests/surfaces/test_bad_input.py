"""Bad input and faults (issue 12, item 8): each case is a one-line error, exit status 1, no
traceback, and nothing written - through the CLI and through the Python API."""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from click.testing import CliRunner, Result

import anonsql
from anonsql.cli.main import cli
from anonsql.database import Database
from anonsql.demo.setup import setup_demo
from anonsql.errors import AnonsqlError, InputError
from anonsql.hierarchy import builders
from anonsql.hierarchy.loaders import load_file
from anonsql.options import run_options
from anonsql.spec import Spec
from anonsql.spec_file import load_spec_file

DEEP = 5000  # nesting far beyond Python's recursion limit


@pytest.fixture(scope="module")
def census_template(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("census") / "census.duckdb"
    db = Database.open(path)
    setup_demo(db, rows=300)
    db.close()
    return path


@pytest.fixture
def census(census_template, tmp_path) -> Path:
    """A private copy of a small demo database."""
    path = tmp_path / "census.duckdb"
    shutil.copy(census_template, path)
    return path


def one_line_error(result: Result, *fragments: str) -> str:
    """The CLI failed the way a user should see it: status 1, one line, no traceback."""
    assert result.exit_code == 1, result.output
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


#: the census columns the runs on the QIs age and sex release as they are (every column of
#: an output has a role)
KEEP = ["race", "marital_status", "education", "zip", "country", "occupation", "income"]


def make_run(db: Path) -> None:
    """Run 1: census anonymized into the view o."""
    r = invoke(
        "anonymize", "census", "--qi", "age,sex", "--k", "2", "--keep", ",".join(KEEP),
        "--out", "o", "--db", str(db),
    )  # fmt: skip
    assert r.exit_code == 0, r.output


def relations(path: Path) -> set[str]:
    # the default configuration: a connection the API left open in this process is shared
    con = duckdb.connect(str(path))
    try:
        rows = con.execute("SELECT table_name FROM information_schema.tables").fetchall()
        return {r[0] for r in rows}
    finally:
        con.close()


def runs(path: Path) -> int:
    if "anonsql_runs" not in relations(path):
        return 0
    con = duckdb.connect(str(path))
    try:
        return con.execute("SELECT COUNT(*) FROM anonsql_runs").fetchone()[0]
    finally:
        con.close()


# -- thresholds that are NaN or infinite -------------------------------------------------------
GOAL = ["census", "--qi", "age,sex", "--sa", "income", "--k", "2"]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--l", "nan"], "--l must be a finite number, not nan"),
        (["--l", "inf", "--l-variant", "entropy-l"], "--l must be a finite number, not inf"),
        (["--t", "nan"], "--t must be a finite number, not nan"),
        (["--t", "-inf"], "--t must be a finite number, not -inf"),
        (["--l", "2", "--l-variant", "recursive-cl", "--c", "nan"], "--c must be a finite"),
        (["--suppression", "nan"], "--suppression must be a finite number, not nan"),
    ],
)
def test_cli_rejects_non_finite_thresholds(tmp_path, extra, message):
    db = tmp_path / "new.duckdb"
    r = invoke("anonymize", *GOAL, *extra, "--out", "o", "--db", str(db))
    one_line_error(r, message)
    assert not db.exists()  # refused before the database was opened
    if "--suppression" not in extra:  # check reads --suppression only with --levels
        one_line_error(invoke("check", *GOAL, *extra, "--db", str(db)), message.split(" not")[0])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"l": float("nan"), "sensitive": "income"}, "'l' must be a finite number, not nan"),
        ({"t": float("inf"), "sensitive": "income"}, "'t' must be a finite number, not inf"),
        ({"suppression": float("nan")}, "'suppression' must be a finite number"),
        ({"l": 2, "c": float("inf"), "l_variant": "recursive-cl"}, "'c' must be a finite"),
    ],
)
def test_api_rejects_non_finite_thresholds(census, options, message):
    before = relations(census)
    with pytest.raises(InputError, match=message):
        anonsql.anonymize((str(census), "census"), {"qi": ["age"], "k": 2, **options})
    spec = {"qi": ["age"], "k": 2, **options}
    spec["qis"] = spec.pop("qi")
    with pytest.raises(InputError, match="must be a finite number"):
        anonsql.anonymize((str(census), "census"), Spec(**spec, output="o"))
    assert relations(census) == before


def test_non_finite_thresholds_in_spec_files_and_sql(census, tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text('table = "census"\nqi = ["age"]\nk = 2\nl = nan\nsensitive = "income"\n')
    one_line_error(invoke("run", str(spec), "--db", str(census)), "'l' must be a finite number")
    spec = tmp_path / "s.json"
    spec.write_text('{"table": "census", "qi": ["age"], "k": 2, "t": Infinity}')
    one_line_error(invoke("run", str(spec), "--db", str(census)), "'t' must be a finite number")
    statements = [
        "ANONYMIZE TABLE census INTO o WITH (k = 2, qi = (age), l = 1e999, sensitive = income)",
        "CREATE VIEW o AS SELECT * FROM census WITH ANONYMIZATION (ALGORITHM 'L-DIVERSITY' "
        'PARAMETERS \'{"k": 2, "l": NaN}\' COLUMN age PARAMETERS '
        "'{\"is_quasi_identifier\": true}' COLUMN income PARAMETERS '{\"is_sensitive\": true}')",
    ]
    for statement in statements:
        one_line_error(invoke("sql", statement, "--db", str(census)), "must be a finite number")
        with anonsql.connect(census) as con, pytest.raises(InputError, match="finite number"):
            con.sql(statement)
    assert "o" not in relations(census) and runs(census) == 0


# -- model options without their model ---------------------------------------------------------
@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--l-variant", "entropy-l"], "--l-variant is an option of --l, which is not set"),
        (["--l-variant", "distinct-l"], "--l-variant is an option of --l"),  # typed = given
        (["--c", "2"], "--c is an option of --l"),
        (["--t-variant", "l1"], "--t-variant is an option of --t, which is not set"),
        (["--sa-hierarchy", "income"], "--sa-hierarchy is an option of --t"),
    ],
)
def test_cli_model_options_need_their_model(tmp_path, extra, message):
    db = tmp_path / "new.duckdb"
    one_line_error(invoke("anonymize", *GOAL, *extra, "--out", "o", "--db", str(db)), message)
    one_line_error(invoke("check", *GOAL, *extra, "--db", str(db)), message)
    assert not db.exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"l_variant": "entropy-l"}, "'l_variant' is an option of 'l'"),
        ({"c": 2.0}, "'c' is an option of 'l'"),
        ({"t_variant": "ordered-emd"}, "'t_variant' is an option of 't'"),
        ({"sensitive_hierarchy": "income"}, "'sensitive_hierarchy' is an option of 't'"),
        ({"sa_hierarchy": "income"}, "'sensitive_hierarchy' is an option of 't'"),
    ],
)
def test_options_need_their_model(census, options, message):
    with pytest.raises(InputError, match=message):
        run_options({"qi": ["age"], "k": 2, **options}, "spec")
    with pytest.raises(InputError, match=message):
        anonsql.anonymize((str(census), "census"), {"qi": ["age"], "k": 2, **options})
    # the same option with its model is fine
    model = "l" if "l" in message.split("option of ")[1] else "t"
    run_options({"qi": ["age"], "k": 2, model: 0.5 if model == "t" else 2, **options}, "spec")


def test_spec_objects_and_sql_need_the_model_too(census):
    with pytest.raises(InputError, match="'l_variant' is an option of 'l'"):
        anonsql.anonymize((str(census), "census"), Spec(qis=["age"], k=2, l_variant="entropy-l"))
    with pytest.raises(InputError, match="'t_variant' is an option of 't'"):
        anonsql.anonymize((str(census), "census"), Spec(qis=["age"], k=2, t_variant="l1"))
    short = "ANONYMIZE TABLE census INTO o WITH (k = 2, qi = (age), c = 2)"
    one_line_error(invoke("sql", short, "--db", str(census)), "'c' is an option of 'l'")
    view = (
        "CREATE VIEW o AS SELECT * FROM census WITH ANONYMIZATION (ALGORITHM 'K-ANONYMITY' "
        "PARAMETERS '{\"k\": 2}' COLUMN age PARAMETERS '{\"is_quasi_identifier\": true}' "
        'COLUMN income PARAMETERS \'{"is_sensitive": true, "hierarchy": "income"}\')'
    )
    one_line_error(invoke("sql", view, "--db", str(census)), "used by t-closeness only")
    assert "o" not in relations(census)


# -- hierarchy builders ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--intervals", "nan", "--range", "0:9"], "--intervals 'nan': 'nan' must be a positive"),
        (["--intervals", "5,inf", "--range", "0:9"], "'inf' must be a positive number"),
        (["--intervals", "5,x", "--range", "0:9"], "'x' is not a number"),
        (["--intervals", "0", "--range", "0:9"], "'0' must be a positive number"),
        (["--groups", "0", "--values", "a,b,c"], "--groups '0': '0' must be a positive number"),
        (["--groups", "2,1.5", "--values", "a,b,c"], "'1.5' is not a number"),
        (["--mask", "0", "--range", "0:9"], "--mask 0"),
        (["--intervals", "5", "--range", "0:99999999999"], "holds 100,000,000,000 values"),
        (["--intervals", "5", "--range", "9:0"], "--range 9:0 is empty"),
        (["--intervals", "5", "--range", "0:9", "--start", "nan"], "start nan must be a number"),
        (["--intervals", "5", "--range", "0:9", "--top", "inf"], "top inf must be a number"),
    ],
)
def test_hierarchy_build_rejects_bad_numbers(tmp_path, args, message):
    db = tmp_path / "new.duckdb"
    one_line_error(invoke("hierarchy", "build", "h", *args, "--db", str(db)), message)
    if "--start" not in args and "--top" not in args:
        assert not db.exists()  # checked before the database was opened


def test_builders_reject_bad_options_from_definitions():
    with pytest.raises(AnonsqlError, match="width nan must be a positive number"):
        builders.build("h", "intervals", [1, 2], widths=[float("nan")])
    with pytest.raises(AnonsqlError, match="give 'widths'"):
        builders.build("h", "intervals", [1, 2])
    with pytest.raises(AnonsqlError, match="'sizes' must be a list of whole numbers"):
        builders.build("h", "groups", ["a", "b"], sizes="2")
    with pytest.raises(AnonsqlError, match="size 0 must be a whole number >= 1"):
        builders.build("h", "groups", ["a", "b"], sizes=[0])
    with pytest.raises(AnonsqlError, match=r"step 1\.5 must be a whole number"):
        builders.build("h", "mask", ["123"], step=1.5)
    with pytest.raises(AnonsqlError, match="is not a finite number"):
        builders.intervals("h", [1, float("inf")], [5])
    with pytest.raises(AnonsqlError, match="holds 2,000,001 values"):
        builders.value_range(0, 2_000_000)


def test_spec_file_range_too_large_stores_nothing(census, tmp_path):
    spec = tmp_path / "s.toml"
    spec.write_text(
        'table = "census"\nqi = ["age"]\nk = 2\noutput = "o"\n[hierarchy]\n'
        'age = { builder = "intervals", widths = [5], range = [0, 100000000000], name = "a2" }\n'
    )
    one_line_error(invoke("run", str(spec), "--db", str(census)), "range 0:100000000000 holds")
    db = Database.open(census)
    assert "a2" not in set(db.hierarchies.catalog()["name"])
    db.close()


# -- the demo ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--rows", "0"], "--rows 0: the demo needs at least 100 rows"),
        (["--rows", "-5"], "--rows -5"),
        (["--seed", "-1"], "--seed -1"),
    ],
)
def test_demo_arguments(tmp_path, args, message):
    db = tmp_path / "demo.duckdb"
    one_line_error(invoke("demo", *args, "--db", str(db)), message)
    assert not db.exists()


# -- runs that do not exist ------------------------------------------------------------------
def test_represent_without_runs(tmp_path, census):
    empty = tmp_path / "empty.duckdb"
    Database.open(empty).close()
    one_line_error(invoke("represent", "1", "--db", str(empty)), "no anonsql runs yet")
    one_line_error(invoke("represent", "7", "--db", str(census)), "no anonsql runs yet")
    make_run(census)
    one_line_error(invoke("represent", "7", "--db", str(census)), "no run 7; the runs are 1")
    assert "o_proportional" not in relations(census)


# -- JSON and TOML nested thousands deep -------------------------------------------------------
def test_deep_json_hierarchy_file(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * DEEP + "]" * DEEP)
    db = tmp_path / "new.duckdb"
    one_line_error(invoke("hierarchy", "load", "h", str(path), "--db", str(db)), "nested too deep")
    assert not db.exists()
    path.write_text('{"*": ' * DEEP + '"x"' + "}" * DEEP)
    with pytest.raises(AnonsqlError, match="nested too deeply"):
        load_file("h", path)


@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_deep_spec_files(census, tmp_path, suffix):
    deep = "[" * DEEP + "]" * DEEP
    spec = tmp_path / f"s{suffix}"
    if suffix == ".json":
        spec.write_text(f'{{"table": "census", "qi": ["age"], "k": 2, "output": "o", "x": {deep}}}')
    else:
        spec.write_text(f'table = "census"\nqi = ["age"]\nk = 2\nx = {deep}\n')
    kind = suffix[1:].upper()
    one_line_error(invoke("run", str(spec), "--db", str(census)), f"{kind} nested too deeply")
    with pytest.raises(InputError, match="nested too deeply"):
        load_spec_file(spec)


def test_deep_sql(census):
    deep_json = (
        "CREATE VIEW o AS SELECT * FROM census WITH ANONYMIZATION (ALGORITHM 'K-ANONYMITY' "
        f'PARAMETERS \'{{"k": 2, "x": {"[" * DEEP}{"]" * DEEP}}}\' '
        "COLUMN age PARAMETERS '{\"is_quasi_identifier\": true}')"
    )
    one_line_error(invoke("sql", deep_json, "--db", str(census)), "JSON nested too deeply")
    deep_hierarchy = (
        "CREATE VIEW o AS SELECT * FROM census WITH ANONYMIZATION (ALGORITHM 'K-ANONYMITY' "
        "PARAMETERS '{\"k\": 2}' COLUMN age PARAMETERS "
        f'\'{{"is_quasi_identifier": true, "hierarchy": {"[" * DEEP}{"]" * DEEP}}}\')'
    )
    one_line_error(invoke("sql", deep_hierarchy, "--db", str(census)), "nested too deeply")
    deep_tuple = f"ANONYMIZE TABLE census INTO o WITH (k = 2, qi = {'(' * DEEP}age{')' * DEEP})"
    one_line_error(invoke("sql", deep_tuple, "--db", str(census)), "nested too deeply")
    with anonsql.connect(census) as con, pytest.raises(InputError, match="nested too deeply"):
        con.sql(deep_tuple)
    assert "o" not in relations(census)


def test_unreadable_files_are_one_line_errors(census, tmp_path):
    one_line_error(
        invoke("sql", "-f", str(tmp_path / "nope.sql"), "--db", str(census)), "cannot read SQL"
    )
    binary = tmp_path / "b.sql"
    binary.write_bytes(b"\xff\xfe\x00SELECT 1")
    one_line_error(invoke("sql", "-f", str(binary), "--db", str(census)), "is not UTF-8 text")
    spec = tmp_path / "s.toml"
    spec.write_bytes(b"table = '\xff'")
    one_line_error(invoke("run", str(spec), "--db", str(census)), "is not UTF-8 text")


# -- disk full -----------------------------------------------------------------------------------
def test_disk_full_at_commit_writes_nothing(census, monkeypatch):
    from anonsql.backend.duckdb_backend import DuckDBBackend

    before = relations(census)

    def full_disk(self) -> None:
        raise duckdb.IOException("Could not write file: No space left on device")

    monkeypatch.setattr(DuckDBBackend, "_commit", full_disk)
    keep = ["--keep", ",".join(KEEP)]
    r = invoke("anonymize", *GOAL[:3], "--k", "2", *keep, "--out", "o", "--db", str(census))
    line = one_line_error(r, "could not be committed", "No space left on device")
    assert "nothing was written" in line
    with pytest.raises(AnonsqlError, match="No space left on device"):
        anonsql.anonymize(
            (str(census), "census"), {"qi": ["age", "sex"], "k": 2, "keep": KEEP, "output": "o2"}
        )
    monkeypatch.undo()
    assert relations(census) == before and runs(census) == 0


def _no_space(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_report_on_a_full_disk_leaves_no_file(census, tmp_path, monkeypatch):
    make_run(census)
    out = tmp_path / "reports"
    out.mkdir()
    old = out / "anonsql_run_1.json"
    old.write_text("previous report")
    monkeypatch.setattr("anonsql.output.files.os.fsync", _no_space)
    r = invoke("report", "1", "--out", str(out), "--db", str(census))
    one_line_error(r, "cannot write", "No space left on device")
    monkeypatch.undo()
    assert sorted(p.name for p in out.iterdir()) == ["anonsql_run_1.json"]  # no temp, no html
    assert old.read_text() == "previous report"
    r = invoke("report", "1", "--out", str(out), "--db", str(census))
    assert r.exit_code == 0, r.output
    assert json.loads(old.read_text())["run_id"] == 1
    assert (out / "anonsql_run_1.html").stat().st_size > 0


def test_report_into_a_file_path_is_a_one_line_error(census, tmp_path):
    make_run(census)
    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder")
    one_line_error(invoke("report", "1", "--out", str(blocker), "--db", str(census)), "cannot")


def test_transpile_on_a_full_disk_leaves_no_file(census, tmp_path, monkeypatch):
    make_run(census)
    script = tmp_path / "deploy.sql"
    script.write_text("-- previous script\n")
    monkeypatch.setattr("anonsql.output.files.os.fsync", _no_space)
    r = invoke("transpile", "-d", "postgres", "--out", str(script), "--db", str(census))
    one_line_error(r, "cannot write", "No space left on device")
    monkeypatch.undo()
    assert script.read_text() == "-- previous script\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    r = invoke("transpile", "-d", "postgres", "--out", str(script), "--db", str(census))
    assert r.exit_code == 0, r.output
    assert "CREATE" in script.read_text()


def test_write_text_atomic_keeps_mode_and_reports_missing_folders(tmp_path):
    from anonsql.output.files import write_text_atomic

    target = tmp_path / "x.txt"
    target.write_text("old")
    target.chmod(0o640)
    write_text_atomic(target, "new")
    assert target.read_text() == "new" and (target.stat().st_mode & 0o777) == 0o640
    with pytest.raises(InputError, match="No such file or directory"):
        write_text_atomic(tmp_path / "missing" / "x.txt", "text")
    with pytest.raises(InputError, match="it is a folder"):
        write_text_atomic(tmp_path, "text")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.txt"]


def test_a_dataframe_source_with_bad_options_is_clear():
    frame = pd.DataFrame({"a": ["x", "y"] * 5, "s": ["1", "2"] * 5})
    with pytest.raises(InputError, match="'l' must be a finite number"):
        anonsql.anonymize(frame, {"qi": ["a"], "l": float("nan"), "sensitive": "s"})

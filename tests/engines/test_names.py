"""Names as the engine sees them (issue 12, item 4): every existence and overwrite check
resolves a name as the engine does (DuckDB and Spark fold case, PostgreSQL keeps 63 bytes),
and every writer - anonymize, represent, demo, both SQL statement forms, spec runs, import -
replaces only what anonsql wrote, or with replace; never its source. After every refused
(or allowed) write, the source and an unrelated canary table are unchanged."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from sqlglot import exp

import anonsql
from anonsql.backend.sql_templates import table
from anonsql.cli.main import cli
from anonsql.database import Database
from anonsql.errors import InputError
from anonsql.hierarchy import builders
from anonsql.io import import_file
from anonsql.output.naming import check_output_name, written_by

QIS = ["age", "sex", "zip"]
#: every column of an output has a role: people's row number ``id`` is a direct identifier,
#: dropped (the API's and spec files' ``mask``; the CLI's --mask id=drop, SQL's mask = (...))
MASK = {"id": "drop"}
ANONYMIZE = ["anonymize", "people", "--qi", "age,sex,zip", "--k", "3", "--suppression", "0.1"]
ANONYMIZE += ["--mask", "id=drop"]
#: 63 bytes: what PostgreSQL keeps of the 64-byte names below
LONG63 = "t" * 61 + "_x"
LONG64 = LONG63 + "y"
#: 64 bytes in UTF-8 (62 ASCII letters and a two-byte é): PostgreSQL keeps the 62 letters
LONG64_UTF8 = "u" * 62 + "é"


def people(n: int = 120, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "id": np.arange(n),
            "age": rng.integers(20, 60, n),
            "sex": rng.choice(["m", "f"], n),
            "zip": rng.choice(["13053", "13068", "14850", "14853"], n),
        }
    )


@contextmanager
def opened(target) -> Iterator[Database]:
    db = Database.open(target)
    try:
        yield db
    finally:
        if db.backend.dialect != "spark":  # the Spark session is the fixture's
            db.close()


def setup(target, extra: tuple[str, ...] = ()) -> None:
    """The source ``people`` with its hierarchies, the canary, and user tables ``extra``."""
    frame = people()
    with opened(target) as db:
        db.backend.write_frame("people", frame)
        db.backend.write_frame("canary", pd.DataFrame({"x": [1, 2, 3]}))
        for name in extra:
            db.backend.write_frame(name, pd.DataFrame({"mine": ["a", "b"]}))
        db.hierarchies.save(builders.intervals("age", range(20, 60), [5, 10, 20]))
        db.hierarchies.save(builders.flat("sex", ["m", "f"]))
        db.hierarchies.save(builders.mask("zip", sorted(frame["zip"].unique())))


def contents(db: Database, name: str) -> tuple[str | None, pd.DataFrame]:
    kind = db.backend.relation_kind(name)
    df = db.backend.fetch_df(exp.select("*").from_(table(name))).astype(str)
    return kind, df.sort_values(list(df.columns)).reset_index(drop=True)


def snapshot(target, names=("people", "canary")) -> dict:
    with opened(target) as db:
        return {n: contents(db, n) for n in names}


def assert_unchanged(target, before: dict) -> None:
    after = snapshot(target, tuple(before))
    for name, (kind, frame) in before.items():
        assert after[name][0] == kind, name
        pd.testing.assert_frame_equal(after[name][1], frame, check_dtype=False)


def run_cli(*args: str):
    return CliRunner().invoke(cli, list(args))


def refused(result, *fragments: str) -> None:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output, result.output
    for f in fragments:
        assert f in result.output, result.output


@pytest.fixture(params=["duckdb", "postgres"])
def target(request, tmp_path):
    """A fresh database of each engine: a DuckDB file or a PostgreSQL database URL."""
    if request.param == "duckdb":
        return str(tmp_path / "names.duckdb")
    return request.getfixturevalue("pg_url")


@pytest.fixture
def duck(tmp_path) -> str:
    return str(tmp_path / "names.duckdb")


# -- the engines' rules -----------------------------------------------------------------------
def test_duckdb_resolves_names_case_insensitively(db):
    be = db.backend
    be.write_frame("adult", pd.DataFrame({"x": [1]}))
    assert be.same_relation("ADULT", "adult") and be.canonical_name("AdUlT") == "adult"
    assert be.relation_kind("ADULT") == "table" and be.table_exists("Adult")
    # only ASCII letters fold, as in DuckDB's catalog: "Ärger" and "ärger" are two tables
    be.write_frame("Ärger", pd.DataFrame({"x": [1]}))
    assert not be.same_relation("Ärger", "ärger")
    assert be.relation_kind("ärger") is None and be.relation_kind("ÄRGER") == "table"
    db.backend.execute("CREATE TEMPORARY TABLE scratch AS SELECT 1 AS x")
    assert be.relation_kind("SCRATCH") == "table"


def test_postgres_keeps_63_bytes(pg_url):
    with opened(pg_url) as db:
        be = db.backend
        assert not be.same_relation("ADULT", "adult")
        assert be.identifier_limit() == 63
        be.check_name(LONG63)
        assert be.canonical_name(LONG64) == LONG63 and be.same_relation(LONG64, LONG63)
        # cut at a character boundary, as the server does: the é does not fit
        assert be.canonical_name(LONG64_UTF8) == "u" * 62
        for name in (LONG64, LONG64_UTF8):
            with pytest.raises(InputError, match="64 bytes long; PostgreSQL keeps only 63"):
                be.check_name(name)
            with pytest.raises(InputError, match="choose a shorter name"):
                be.relation_kind(name)


def test_output_name_rules_without_a_backend():
    """A caller that does not pass the backend gets the strictest rule: case never matters."""
    with pytest.raises(InputError, match="would overwrite the source"):
        check_output_name("ADULT", "adult")
    for reserved in ("anonsql_runs", "ANONSQL_RELATIONS", "__anonsql_undo_1"):
        with pytest.raises(InputError, match="reserved for anonsql"):
            check_output_name(reserved, "adult")
    check_output_name("adult_k5", "adult")


# -- anonymize, through the CLI, the API, spec files and both SQL forms ----------------------
def test_cli_case_variants_never_replace_the_source(duck):
    setup(duck, extra=("mine",))
    before = snapshot(duck)
    for out in ("PEOPLE", "People", "people"):
        for extra in ((), ("--replace",)):
            r = run_cli(*ANONYMIZE, "--out", out, "--materialize", "table", *extra, "--db", duck)
            refused(r, "would overwrite the source")
    refused(run_cli(*ANONYMIZE, "--out", "CANARY", "--db", duck), "(the existing 'canary')")
    refused(run_cli(*ANONYMIZE, "--out", "ANONSQL_RUNS", "--db", duck), "reserved for anonsql")
    # anonsql's own output is replaced under any spelling; a user table only with --replace
    assert run_cli(*ANONYMIZE, "--out", "out", "--db", duck).exit_code == 0
    r = run_cli(*ANONYMIZE, "--out", "OUT", "--materialize", "table", "--db", duck)
    assert r.exit_code == 0, r.output
    refused(run_cli(*ANONYMIZE, "--out", "MINE", "--db", duck), "was not written by anonsql")
    assert run_cli(*ANONYMIZE, "--out", "MINE", "--replace", "--db", duck).exit_code == 0
    with opened(duck) as db:
        assert db.backend.relation_kind("out") == "table"
        names = [n.lower() for n in db.backend.relation_names()]
        assert names.count("out") == 1 and names.count("mine") == 1
    assert_unchanged(duck, before)


def test_cli_on_postgres(pg_url):
    """Quoted names are case-sensitive on PostgreSQL: "PEOPLE" is another relation than
    people. A name over 63 bytes would be cut onto another relation: refused, even with
    --replace."""
    setup(pg_url, extra=(LONG63,))
    before = snapshot(pg_url, ("people", "canary", LONG63))
    refused(run_cli(*ANONYMIZE, "--out", "people", "--replace", "--db", pg_url), "source")
    for name in (LONG64, LONG64_UTF8):
        r = run_cli(
            *ANONYMIZE, "--out", name, "--replace", "--materialize", "table", "--db", pg_url
        )
        refused(r, "PostgreSQL keeps only 63 bytes")
    refused(run_cli(*ANONYMIZE, "--out", LONG63, "--db", pg_url), "was not written by anonsql")
    spec = {"qi": QIS, "k": 3, "replace": True, "mask": MASK}
    with pytest.raises(InputError, match="PostgreSQL keeps only 63 bytes"):
        anonsql.anonymize((pg_url, "people"), {**spec, "output": LONG64})
    with pytest.raises(InputError, match="would overwrite the source"):
        anonsql.anonymize((pg_url, "people"), {**spec, "output": "people"})
    r = run_cli(*ANONYMIZE, "--out", "PEOPLE", "--materialize", "table", "--db", pg_url)
    # refused by a caller's case-blind check, or written as a relation of its own
    if r.exit_code == 0:
        with opened(pg_url) as db:
            assert {"PEOPLE", "people"} <= set(db.backend.relation_names())
    else:
        refused(r, "would overwrite the source")
    assert_unchanged(pg_url, before)


def test_api_case_variants(duck):
    setup(duck, extra=("mine",))
    before = snapshot(duck)
    spec = {"qi": QIS, "k": 3, "suppression": 0.1, "materialize": "table", "mask": MASK}
    for out in ("PEOPLE", "People"):
        for replace in (False, True):
            with pytest.raises(InputError, match="would overwrite the source"):
                anonsql.anonymize((duck, "people"), {**spec, "output": out, "replace": replace})
    with pytest.raises(InputError, match="was not written by anonsql"):
        anonsql.anonymize((duck, "people"), {**spec, "output": "Canary"})
    run = anonsql.anonymize((duck, "people"), {**spec, "output": "api_out"})
    run.database.close()
    run = anonsql.anonymize((duck, "people"), {**spec, "output": "API_OUT"})
    run.database.close()
    assert_unchanged(duck, before)


def test_spec_file_case_variants(target, tmp_path):
    setup(target)
    before = snapshot(target)
    on_duckdb = target.endswith(".duckdb")
    spec = {"table": "people", "qi": QIS, "k": 3, "suppression": 0.1, "materialize": "table"}
    spec["mask"] = MASK
    path = tmp_path / "spec.json"
    # on PostgreSQL "PEOPLE" and "CANARY" are relations of their own: only "people" is refused
    for out in ("people", "PEOPLE", "CANARY") if on_duckdb else ("people",):
        for replace in (False, True) if out != "CANARY" else (False,):
            path.write_text(json.dumps({**spec, "output": out, "replace": replace}))
            refused(run_cli("run", str(path), "--db", target))
    name, message = ("ANONSQL_X", "reserved") if on_duckdb else (LONG64, "keeps only 63 bytes")
    path.write_text(json.dumps({**spec, "output": name, "replace": True}))
    refused(run_cli("run", str(path), "--db", target), message)
    assert_unchanged(target, before)


def test_sql_statements_case_variants(duck):
    setup(duck, extra=("mine",))
    before = snapshot(duck)
    columns = (
        "COLUMN age PARAMETERS '{\"is_quasi_identifier\": true}' "
        "COLUMN sex PARAMETERS '{\"is_quasi_identifier\": true}' "
        "COLUMN zip PARAMETERS '{\"is_quasi_identifier\": true}' "
        'COLUMN id PARAMETERS \'{"mask": "drop"}\''
    )
    view = (
        "CREATE {replace}TABLE {name} AS SELECT * FROM people WITH ANONYMIZATION "
        "(ALGORITHM 'K-ANONYMITY' PARAMETERS '{{\"k\": 3, \"suppression\": 0.1}}' {columns})"
    )
    short = (
        "ANONYMIZE TABLE people INTO {name} WITH (k = 3, suppression = 0.1, qi = (age, sex, zip), "
        "mask = (id = 'drop'))"
    )
    con = anonsql.connect(duck)
    try:
        for name in ("PEOPLE", '"People"', "CANARY"):
            with pytest.raises(InputError, match=r"exists already \(as '(people|canary)'\)"):
                con.sql(view.format(replace="", name=name, columns=columns))
        for name in ("PEOPLE", '"People"'):
            with pytest.raises(InputError, match="would overwrite the source"):
                con.sql(view.format(replace="OR REPLACE ", name=name, columns=columns))
            with pytest.raises(InputError, match="would overwrite the source"):
                con.sql(short.format(name=name))
        with pytest.raises(InputError, match="was not written by anonsql"):
            con.sql(short.format(name="Canary"))
        con.sql(short.format(name="stmt_out"))
        con.sql(short.format(name="STMT_OUT"))  # anonsql's own: replaced
        con.sql(view.format(replace="OR REPLACE ", name="MINE", columns=columns))
    finally:
        con.close()
    assert_unchanged(duck, before)


def test_sql_statements_on_postgres(pg_url):
    setup(pg_url, extra=(LONG63,))
    before = snapshot(pg_url, ("people", "canary", LONG63))
    con = anonsql.connect(pg_url)
    try:
        goal = "k = 3, qi = (age, sex, zip), mask = (id = 'drop')"
        stmt = f"ANONYMIZE TABLE people INTO {LONG64} WITH ({goal})"
        with pytest.raises(InputError, match="PostgreSQL keeps only 63 bytes"):
            con.sql(stmt)
        with pytest.raises(InputError, match="would overwrite the source"):
            con.sql(f"ANONYMIZE TABLE people INTO people WITH ({goal})")
    finally:
        con.close()
    assert_unchanged(pg_url, before)


# -- represent ---------------------------------------------------------------------------------
def test_represent_replaces_only_its_own(target):
    setup(target, extra=("mine",))
    before = snapshot(target)
    assert run_cli(*ANONYMIZE, "--out", "out", "--db", target).exit_code == 0
    for _ in range(2):  # its own output again: replaced
        r = run_cli("represent", "1", "--db", target)
        assert r.exit_code == 0 and "out_proportional" in r.output, r.output
    spellings = ("people", "PEOPLE") if target.endswith(".duckdb") else ("people",)
    for name in spellings:
        for extra in ((), ("--replace",)):
            r = run_cli("represent", "1", "--out", name, *extra, "--db", target)
            refused(r, "would overwrite the source")
    refused(run_cli("represent", "1", "--out", "canary", "--db", target), "not written by anonsql")
    refused(run_cli("represent", "1", "--out", "mine", "--db", target), "not written by anonsql")
    r = run_cli(
        "represent", "1", "--out", "mine", "--replace", "--kind", "oneclass", "--db", target
    )
    assert r.exit_code == 0, r.output
    r = run_cli("represent", "1", "--out", "mine", "--kind", "fillchild", "--db", target)
    assert r.exit_code == 0, r.output  # anonsql's now
    if not target.endswith(".duckdb"):
        r = run_cli("represent", "1", "--out", LONG64, "--replace", "--db", target)
        refused(r, "PostgreSQL keeps only 63 bytes")
    with opened(target) as db:
        assert written_by(db, "mine") == "represent"
        assert db.backend.columns("mine")[-1].startswith("zip__")
    assert_unchanged(target, before)


# -- import ------------------------------------------------------------------------------------
def test_import_resolves_names_and_marks_user_data(target, tmp_path):
    setup(target)
    before = snapshot(target)
    csv = tmp_path / "data.csv"
    pd.DataFrame({"a": [1, 2]}).to_csv(csv, index=False)
    if target.endswith(".duckdb"):
        r = run_cli("import", "PEOPLE", str(csv), "--db", target)
        refused(r, "exists already (as 'people')")
    else:
        r = run_cli("import", LONG64_UTF8, str(csv), "--replace", "--db", target)
        refused(r, "PostgreSQL keeps only 63 bytes")
    refused(run_cli("import", "people", str(csv), "--db", target), "exists already")
    refused(run_cli("import", "anonsql_runs", str(csv), "--db", target), "reserved for anonsql")
    assert run_cli(*ANONYMIZE, "--out", "out", "--db", target).exit_code == 0
    # a user's table imported over anonsql's output is the user's: not replaced silently
    spelling = "OUT" if target.endswith(".duckdb") else "out"
    assert run_cli("import", spelling, str(csv), "--replace", "--db", target).exit_code == 0
    refused(run_cli(*ANONYMIZE, "--out", "out", "--db", target), "was not written by anonsql")
    with opened(target) as db:
        assert written_by(db, "out") is None
        assert list(db.backend.columns("out")) == ["a"]
    assert_unchanged(target, before)


# -- demo --------------------------------------------------------------------------------------
def test_demo_twice_and_never_over_user_data(target):
    rows = "600"
    assert run_cli("demo", "--rows", rows, "--db", target).exit_code == 0
    r = run_cli("demo", "--rows", "700", "--db", target)  # its own table, hierarchies, output
    assert r.exit_code == 0, r.output
    with opened(target) as db:
        assert db.backend.fetchall("SELECT COUNT(*) FROM census")[0][0] == 700
        assert written_by(db, "census") == "demo"
        assert written_by(db, "census_anonymized") == "anonymize"


def test_a_command_closes_its_session_postgres(pg_url):
    """A command run in-process (click's runner, an orchestrator) closes the database it
    opened when it ends: with the garbage collector off, no session of it is left behind
    to hold locks against the next command."""
    import gc

    def sessions() -> int:
        with opened(pg_url) as db:
            return db.backend.fetchall(
                "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid()"
            )[0][0]

    before = sessions()
    gc.disable()
    try:
        assert run_cli("demo", "--rows", "600", "--db", pg_url).exit_code == 0
        assert run_cli("status", "--db", pg_url).exit_code == 0
        assert sessions() == before
    finally:
        gc.enable()


def test_demo_refuses_a_user_census(target):
    with opened(target) as db:
        db.backend.write_frame("census", pd.DataFrame({"mine": ["a", "b"]}))
        db.backend.write_frame("canary", pd.DataFrame({"x": [1, 2, 3]}))
    before = snapshot(target, ("census", "canary"))
    refused(run_cli("demo", "--rows", "600", "--db", target), "table 'census' (not written by")
    assert_unchanged(target, before)
    with opened(target) as db:
        assert not db.backend.table_exists("census_anonymized")
    r = run_cli("demo", "--rows", "600", "--replace", "--db", target)
    assert r.exit_code == 0, r.output
    assert_unchanged(target, {"canary": before["canary"]})


def test_demo_refuses_user_hierarchies(duck):
    from anonsql.hierarchy.loaders import load_file
    from anonsql.resources import resource_dir

    with opened(duck) as db:
        # the shipped content, loaded by the user: the same hierarchy, so no conflict
        db.hierarchies.save(load_file("race", resource_dir("hierarchies") / "census/race.csv"))
        db.hierarchies.save(builders.flat("sex", ["male", "female", "other"]))
        db.backend.write_frame("canary", pd.DataFrame({"x": [1, 2, 3]}))
    before = snapshot(duck, ("canary",))
    refused(run_cli("demo", "--rows", "600", "--db", duck), "hierarchy 'sex' (other content")
    with opened(duck) as db:
        assert not db.backend.table_exists("census")
        assert db.hierarchies.load("sex").labels[:3] == ["male", "female", "other"]
    assert run_cli("demo", "--rows", "600", "--replace", "--db", duck).exit_code == 0
    assert_unchanged(duck, before)


def test_demo_refuses_a_user_table_where_its_output_goes(duck):
    with opened(duck) as db:
        db.backend.write_frame("CENSUS_ANONYMIZED", pd.DataFrame({"mine": ["a"]}))
    before = snapshot(duck, ("census_anonymized",))
    r = run_cli("demo", "--rows", "600", "--db", duck)
    refused(r, "(the existing 'CENSUS_ANONYMIZED') exists and was not written by anonsql")
    with opened(duck) as db:
        assert not db.backend.table_exists("census")
    assert_unchanged(duck, before)
    assert run_cli("demo", "--rows", "600", "--replace", "--db", duck).exit_code == 0


# -- Spark: its catalog folds case -------------------------------------------------------------
def test_spark_case_variants(spark_db, tmp_path):
    from anonsql.output.naming import record_written
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    setup(spark_db)
    before = snapshot(spark_db)
    db = Database.open(spark_db)
    assert db.backend.same_relation("PEOPLE", "people") and db.backend.table_exists("People")
    for out, message in (("PEOPLE", "would overwrite the source"), ("Canary", "not written")):
        with pytest.raises(InputError, match=message):
            spec = Spec(qis=QIS, k=3, masks=MASK, output=out, materialize="table")
            anonymize(db, "people", spec)
    csv = tmp_path / "data.csv"
    pd.DataFrame({"a": [1, 2]}).to_csv(csv, index=False)
    with pytest.raises(InputError, match="exists already"):
        import_file(db, "PEOPLE", csv)
    # the record of writers works through the backend's journal: a rerecord replaces the row
    with db.backend.transaction():
        record_written(db, "Mine", "represent")
    import_file(db, "MINE", csv, replace=True)
    assert written_by(db, "mine") is None
    assert db.backend.fetchall("SELECT COUNT(*) FROM anonsql_relations")[0][0] == 1
    assert_unchanged(spark_db, before)

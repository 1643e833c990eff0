"""The SQL surface: both anonymization statements parse, generate back, run end to end and
reject hostile or malformed input without changing the database; plain SQL passes through;
the table macros agree with a brute-force groupby."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import sqlglot
from hypothesis import HealthCheck, given, settings

import anonsql
from anonsql.connection import Connection, split_statements
from anonsql.database import Database
from anonsql.demo.setup import setup_demo
from anonsql.dialect.anonsql_dialect import AnonSQL, Anonymize, AnonymizedCreate
from anonsql.errors import InputError
from anonsql.hierarchy.hierarchy import Hierarchy
from anonsql.run import anonymize
from anonsql.spec import Spec
from tests.helpers import brute
from tests.helpers.data import ADULT_QIS, load_adult
from tests.helpers.roles import CENSUS
from tests.helpers.roles import others as others_of
from tests.helpers.snapshot import snapshot
from tests.helpers.statements import STATEMENTS
from tests.helpers.strategies import anonymization_cases


@pytest.mark.parametrize("statement", STATEMENTS)
def test_statements_round_trip(statement):
    parsed = sqlglot.parse_one(statement, dialect=AnonSQL)
    assert isinstance(parsed, Anonymize | AnonymizedCreate)
    assert parsed.sql(dialect=AnonSQL) == statement


def test_plain_sql_is_duckdb_and_passes_through_untouched():
    text = "CREATE TABLE t AS SELECT 1 AS a; FROM t SELECT a + 1 AS b; -- a comment\n"
    assert [a for _, a in split_statements(text)] == [False, False]
    con = anonsql.connect()
    assert con.sql(text).fetchall() == [(2,)]
    assert sqlglot.parse_one("SELECT list_value(1, 2)", dialect=AnonSQL).sql(AnonSQL)


def others(*named: str) -> list[str]:
    """The census columns not in ``named``: the ones a run keeps as they are."""
    return others_of(CENSUS, *named)


def keep_option(*named: str) -> str:
    """The short form's ``keep = (...)`` of the census columns not in ``named``."""
    return f"keep = ({', '.join(others(*named))})"


def insensitive(*named: str) -> str:
    """SAP HANA's form: a COLUMN clause declaring insensitive each column not in ``named``."""
    return " ".join(f"COLUMN {c} PARAMETERS '{{\"is_insensitive\": true}}'" for c in others(*named))


@pytest.fixture
def census():
    con = anonsql.connect(":memory:")
    setup_demo(con.database, rows=2000)
    yield con
    con.close()


def _one(con, sql: str) -> tuple:
    return con.sql(sql).fetchall()[0]


def _k_ok(frame: pd.DataFrame, qis: list[str], k: int) -> bool:
    kept = frame[~(frame[qis] == "*").all(axis=1)]
    return bool((brute.k_values(kept, qis) >= k).all())


def test_short_form_runs_like_the_library(census):
    qis = ["age", "sex", "zip"]
    run = census.sql(
        "ANONYMIZE TABLE census INTO census_k5 WITH (k = 5, l = 2, qi = (age, sex, zip), "
        f"sensitive = income, suppression = 0.05, {keep_option(*qis, 'income')})"
    )
    spec = Spec(
        qis=qis, k=5, l=2, sensitive="income", suppression=0.05, keep=others(*qis, "income")
    )
    assert run.levels == anonymize(census.database, "census", spec).levels
    out = census.sql("SELECT * FROM census_k5").df()
    assert len(out) == 2000 and _k_ok(out, qis, 5)
    k, classes, suppressed = census.sql(
        "FROM anonsql_k('census_k5', ['age', 'sex', 'zip'])"
    ).fetchall()[0]
    assert k >= 5 and suppressed == run.measures["suppressed_rows"] <= 100
    assert classes == run.measures["classes"]
    distinct_l, _ = census.sql(
        "FROM anonsql_l('census_k5', ['age','sex','zip'], 'income')"
    ).fetchall()[0]
    assert distinct_l >= 2


def test_hana_form_creates_views_and_tables_of_selected_columns(census):
    run = census.sql(
        "CREATE VIEW v AS SELECT age, zip, income FROM census WITH ANONYMIZATION ("
        "ALGORITHM 'K-ANONYMITY' PARAMETERS '{\"k\": 10, \"suppression_limit\": 0.02}' "
        'COLUMN age PARAMETERS \'{"is_quasi_identifier": true, "hierarchy": "age"}\' '
        "COLUMN zip PARAMETERS '{\"is_quasi_identifier\": true}' "
        "COLUMN income PARAMETERS '{\"is_sensitive\": true}')"
    )
    assert run.materialize == "view" and set(run.levels) == {"age", "zip"}
    out = census.sql("SELECT * FROM v").df()
    assert list(out.columns) == ["age", "zip", "income"] and _k_ok(out, ["age", "zip"], 10)
    # without OR REPLACE an existing name is an error; with it the view becomes a table
    stmt = (
        "CREATE {} TABLE v AS SELECT * FROM census WITH ANONYMIZATION (ALGORITHM "
        "'K-ANONYMITY' PARAMETERS '{{\"k\": 4}}' COLUMN sex PARAMETERS "
        "'{{\"is_quasi_identifier\": true}}' {})"
    )
    with pytest.raises(InputError, match="exists already"):
        census.sql(stmt.format("", insensitive("sex")))
    census.sql(stmt.format("OR REPLACE", insensitive("sex")))
    kind = census.database.backend.relation_kind("v")
    assert kind == "table" and census.sql("SELECT COUNT(*) FROM v").fetchall()[0] == (2000,)


BAD = [
    ("ANONYMIZE TABLE census INTO x WITH (k = '5', qi = (age))", "option `k = '5'`.*integer"),
    ("ANONYMIZE TABLE census INTO x WITH (kk = 5, qi = (age))", "unknown option 'kk'"),
    ("ANONYMIZE TABLE census INTO x WITH (k = 5, qi = (age, age))", "named twice"),
    ("ANONYMIZE TABLE census INTO x WITH (k = 5, k = 6, qi = (age))", "given twice"),
    ("ANONYMIZE TABLE census INTO x WITH (k = 5, qi = (agex))", "no column 'agex'"),
    (
        f"ANONYMIZE TABLE census INTO x WITH (k = 50000, qi = (age), {keep_option('age')})",
        "larger than the table",
    ),
    ("ANONYMIZE TABLE census INTO x WITH (k = 5, qi = (age), suppression = 2)", r"\[0, 1\]"),
    ("ANONYMIZE TABLE nope INTO x WITH (k = 5, qi = (age))", "nope"),
    (
        f"ANONYMIZE TABLE census INTO census WITH (k = 5, qi = (age), {keep_option('age')})",
        "overwrite the source",
    ),
    ("ANONYMIZE census INTO x", "Expected TABLE after ANONYMIZE"),
    ("ANONYMIZE TABLE census INTO x WITH (k 5)", r"(?s)Expected = after option 'k'.*>>>5<<<"),
    (
        "ANONYMIZE TABLE census INTO x WITH (k = 5, qi = (age), hierarchy = (age = '{bad'))",
        "invalid JSON",
    ),
    (
        "CREATE VIEW x AS SELECT * FROM census WITH ANONYMIZATION (ALGORITHM 'K-ANON')",
        "unknown ALGORITHM",
    ),
    (
        "CREATE VIEW x AS SELECT * FROM census WITH ANONYMIZATION (ALGORITHM 'K-ANONYMITY' "
        'PARAMETERS \'{"k": "5"}\' COLUMN age PARAMETERS \'{"is_quasi_identifier": true}\')',
        "'k' must be an integer",
    ),
    (
        "CREATE VIEW x AS SELECT * FROM census WITH ANONYMIZATION (ALGORITHM 'K-ANONYMITY' "
        "PARAMETERS '{\"k\": 5}' COLUMN age PARAMETERS '{\"is_quasi_identifier\": 1}')",
        "COLUMN age PARAMETERS.*true or false",
    ),
    (
        "CREATE VIEW x AS SELECT * FROM census WITH ANONYMIZATION (ALGORITHM 'K-ANONYMITY' "
        "PARAMETERS '{\"k\": 5}' COLUMN age PARAMETERS '{\"quasi\": true}')",
        "unknown parameter",
    ),
    (
        "CREATE VIEW x AS SELECT * FROM census WHERE age > 30 WITH ANONYMIZATION (ALGORITHM "
        "'K-ANONYMITY' PARAMETERS '{\"k\": 5}' COLUMN age PARAMETERS "
        "'{\"is_quasi_identifier\": true}')",
        "remove WHERE",
    ),
    (
        "CREATE VIEW x AS SELECT * FROM census WITH ANONYMIZATION (ALGORITHM 'L-DIVERSITY' "
        "PARAMETERS '{\"k\": 5}' COLUMN age PARAMETERS '{\"is_quasi_identifier\": true}')",
        "needs the parameter 'l'",
    ),
    (
        "CREATE VIEW x AS SELECT * FROM census WITH ANONYMIZATION (ALGORITHM 'K-ANONYMITY' "
        "PARAMETERS '{\"k\": 5}' COLUMN age PARAMETERS '{\"is_quasi_identifier\": true}' "
        "COLUMN age PARAMETERS '{\"is_quasi_identifier\": true}')",
        "appears twice",
    ),
]


@pytest.mark.parametrize(("statement", "message"), BAD)
def test_bad_statements_are_clear_errors_and_change_nothing(census, statement, message):
    before = snapshot(census.database)
    with pytest.raises(InputError, match=message):
        census.sql(statement)
    assert snapshot(census.database) == before


def test_hostile_identifiers_through_sql():
    con = anonsql.connect()
    evil_t, evil_c, evil_o = 'x"; DROP TABLE t; --', "select", "out'); DELETE FROM x; --"
    con.database.hierarchies.save(Hierarchy.from_rows(evil_c, [["a", "*"], ["b", "*"]]))
    con.database.backend.write_frame(evil_t, pd.DataFrame({evil_c: list("aabbab"), "v": range(6)}))

    def q(name: str) -> str:
        return '"' + name.replace('"', '""') + '"'

    # v is unique on every row: kept and published on purpose
    run = con.sql(
        f"ANONYMIZE TABLE {q(evil_t)} INTO {q(evil_o)} WITH (k = 3, qi = ({q(evil_c)}), "
        "keep = (v), allow_identifying = (v))"
    )
    assert run.levels == {evil_c: 0}
    assert con.sql(f"SELECT COUNT(*) FROM {q(evil_o)}").fetchall()[0] == (6,)
    assert con.sql(f"SELECT COUNT(*) FROM {q(evil_t)}").fetchall()[0] == (6,)


def test_adult_through_sql_matches_arx():
    con = Connection(Database.open(":memory:"))
    load_adult(con.database)
    qi = ", ".join(f'"{c}"' for c in ADULT_QIS)
    run = con.sql(
        f"ANONYMIZE TABLE adult INTO adult_k5 WITH (k = 5, qi = ({qi}), suppression = 0.05)"
    )
    assert list(run.levels.values()) == [0, 3, 0, 0, 2, 1, 1, 2, 0]
    assert run.measures["suppressed_rows"] == 1346 and run.measures["classes"] == 397
    cols = ", ".join(f"'{c}'" for c in ADULT_QIS)
    assert con.sql(f"FROM anonsql_k('adult_k5', [{cols}])").fetchall()[0] == (5, 397, 1346)
    # the same through SAP HANA's form, as a table
    columns = " ".join(
        f'COLUMN "{c}" PARAMETERS \'{{"is_quasi_identifier": true}}\'' for c in ADULT_QIS
    )
    run = con.sql(
        "CREATE TABLE adult_hana AS SELECT * FROM adult WITH ANONYMIZATION (ALGORITHM "
        f"'K-ANONYMITY' PARAMETERS '{{\"k\": 5, \"suppression_limit\": 0.05}}' {columns})"
    )
    assert list(run.levels.values()) == [0, 3, 0, 0, 2, 1, 1, 2, 0]
    assert con.sql(f"FROM anonsql_k('adult_hana', [{cols}])").fetchall()[0] == (5, 397, 1346)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(anonymization_cases())
def test_table_macros_agree_with_brute_force(case):
    df, hs = case
    qis = [h.name for h in hs]
    con = anonsql.connect()
    frame = df.astype(str)
    # a numeric column among the QIs: the macros compare every QI as text
    con.database.backend.write_frame("t", frame.assign(num=1))
    qis = [*qis, "num"]
    frame = frame.assign(num="1")
    names = "[" + ", ".join(f"'{q}'" for q in qis) + "]"
    k, classes, suppressed = con.sql(f"FROM anonsql_k('t', {names})").fetchall()[0]
    kept = frame[~(frame[qis] == "*").all(axis=1)]
    sizes = brute.k_values(kept, qis)
    assert suppressed == len(frame) - len(kept)
    assert classes == len(sizes) and (k == sizes.min() if len(sizes) else k is None)
    if not len(kept):
        return
    distinct_l, entropy_l = con.sql(f"FROM anonsql_l('t', {names}, 's')").fetchall()[0]
    assert distinct_l == brute.distinct_values(kept, qis, "s").min()
    assert math.isclose(entropy_l, brute.entropy_values(kept, qis, "s").min(), rel_tol=1e-9)
    (t,) = con.sql(f"FROM anonsql_t('t', {names}, 's')").fetchall()[0]
    overall = frame["s"].value_counts(normalize=True)
    want = max(
        0.5 * sum(abs(g["s"].value_counts(normalize=True).get(v, 0.0) - p)
                  for v, p in overall.items())
        for _, g in kept.groupby(qis)
    )  # fmt: skip
    assert math.isclose(t, want, rel_tol=1e-9, abs_tol=1e-12)

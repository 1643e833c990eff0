"""Snapshots of the SQL anonsql generates, one file per case in tests/snapshots/ (as ibis
snapshots its compiled SQL). A change to generated SQL shows up as a diff of these files;
regenerate them with ``ANONSQL_UPDATE_SNAPSHOTS=1 pytest tests/test_snapshots.py``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import sqlglot

from anonsql.backend.macros import macro_statements
from anonsql.data.histogram import histogram_query
from anonsql.dialect.anonsql_dialect import AnonSQL
from anonsql.output.materialize import create_statement, output_query
from tests.test_sql_surface import STATEMENTS

SNAPSHOTS = Path(__file__).parent / "snapshots"
QIS = ["age", "sex", 'zip"; --']


def check(name: str, sql: str) -> None:
    path = SNAPSHOTS / f"{name}.sql"
    text = sql.rstrip() + "\n"
    if os.environ.get("ANONSQL_UPDATE_SNAPSHOTS") == "1" or not path.exists():
        SNAPSHOTS.mkdir(exist_ok=True)
        path.write_text(text)
        if os.environ.get("ANONSQL_UPDATE_SNAPSHOTS") != "1":
            pytest.fail(f"snapshot {path.name} was missing and has been written; run again")
    assert text == path.read_text(), f"generated SQL differs from {path.name}"


CASES = {
    "histogram_k_only": lambda: histogram_query("people", QIS, QIS, None).sql(
        "duckdb", pretty=True
    ),
    "histogram_sensitive": lambda: histogram_query(
        "people", QIS, ["age", "sex", "zip5"], "income"
    ).sql("duckdb", pretty=True),
    "output_view_no_suppression": lambda: create_statement(
        "view",
        "people_k5",
        output_query("duckdb", "people", ["id", *QIS], QIS, QIS, [2, 0, 3], None),
    ).sql("duckdb", pretty=True),
    "output_table_suppressed": lambda: create_statement(
        "table",
        "people_k5",
        output_query("duckdb", "people", [*QIS, "income"], QIS, QIS, [1, 1, 0], 7),
    ).sql("duckdb", pretty=True),
    "output_view_drop_suppressed": lambda: output_query(
        "duckdb", "people", QIS, QIS, QIS, [0, 1, 2], 3, drop_suppressed=True
    ).sql("duckdb", pretty=True),
    "output_view_postgres": lambda: output_query(
        "postgres", "people", QIS, QIS, QIS, [2, 0, 3], 7
    ).sql("postgres", pretty=True),
    "table_macros": lambda: "\n".join(macro_statements("duckdb")),
}
for i, statement in enumerate(STATEMENTS):
    CASES[f"statement_{i}"] = lambda s=statement: sqlglot.parse_one(s, dialect=AnonSQL).sql(
        AnonSQL, pretty=True
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_sql_matches_snapshot(name):
    check(name, CASES[name]())

"""Snapshots of the SQL anonsql generates, one file per case in tests/output/snapshots/ (as ibis
snapshots its compiled SQL). A change to generated SQL shows up as a diff of these files;
regenerate them with ``ANONSQL_UPDATE_SNAPSHOTS=1 pytest tests/output/test_snapshots.py``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import sqlglot

from anonsql.algorithms.recoding import LevelRecoding, TableRecoding
from anonsql.backend.macros import macro_statements
from anonsql.data.histogram import histogram_query
from anonsql.dialect.anonsql_dialect import AnonSQL
from anonsql.masking.methods import parse_mask
from anonsql.models import (
    DeltaPresence,
    DistinctLDiversity,
    EntropyLDiversity,
    HierarchicalEMD,
    KAnonymity,
    KMap,
    OrderedDistanceEMD,
)
from anonsql.output.guard import Guard, guarded_query
from anonsql.output.materialize import create_statement
from tests.helpers.statements import STATEMENTS

SNAPSHOTS = Path(__file__).parent / "snapshots"
QIS = ["age", "sex", 'zip"; --']
#: the QIs' hierarchy sizes, as a publication passes them: the classes keyed by one packed
#: BIGINT (the cases without them show the node ids one per QI)
WIDTHS = [100, 3, 1000]


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
    "output_view_k_only": lambda: create_statement(
        "view",
        "people_k5",
        guarded_query(
            "duckdb",
            "people",
            ["id", *QIS],
            QIS,
            LevelRecoding(["age@1", "sex@2", "zip@3"], [2, 0, 3]),
            Guard([KAnonymity(5)]),
            widths=WIDTHS,
        ),
    ).sql("duckdb", pretty=True),
    "output_table_l_t": lambda: create_statement(
        "table",
        "people_k5",
        guarded_query(
            "duckdb",
            "people",
            [*QIS, "income"],
            QIS,
            LevelRecoding(["age@1", "sex@2", "zip@3"], [1, 1, 0]),
            Guard(
                [KAnonymity(5), DistinctLDiversity(2), HierarchicalEMD(0.3, "income@4")],
                "income",
                "income@4",
                2,
            ),
            widths=WIDTHS,
        ),
    ).sql("duckdb", pretty=True),
    "output_view_recodings_drop_suppressed": lambda: guarded_query(
        "duckdb",
        "people",
        QIS,
        QIS,
        TableRecoding([], [], [], output="people_gaa"),
        Guard([KAnonymity(3), EntropyLDiversity(1.5)], "income"),
        drop_suppressed=True,
    ).sql("duckdb", pretty=True),
    "output_view_postgres": lambda: guarded_query(
        "postgres",
        "people",
        QIS,
        QIS,
        LevelRecoding(["age@1", "sex@2", "zip@3"], [2, 0, 3]),
        Guard([KAnonymity(5), OrderedDistanceEMD(0.2)], "income"),
        widths=WIDTHS,
    ).sql("postgres", pretty=True),
    # masked identifiers (issue 26): key-less masks in SQL, keyed ones looked up by value in
    # anonsql_masks (by digest in a deployed copy, on PostgreSQL)
    "output_view_masks": lambda: guarded_query(
        "duckdb",
        "people",
        ["id", "name", "email", "phone", *QIS],
        QIS,
        LevelRecoding(["age@1", "sex@2", "zip@3"], [2, 0, 3]),
        Guard([KAnonymity(5)]),
        masks={
            "id": parse_mask("id", "pseudonym"),
            "name": parse_mask("name", "partial:1:0"),
            "email": parse_mask("email", "email-domain"),
            "phone": parse_mask("phone", "null"),
        },
        output="people_k5",
    ).sql("duckdb", pretty=True),
    "output_view_masks_deployed_postgres": lambda: guarded_query(
        "postgres",
        "people",
        ["id", "email", *QIS],
        QIS,
        LevelRecoding(["age@1", "sex@2", "zip@3"], [2, 0, 3]),
        Guard([KAnonymity(5)]),
        masks={"id": parse_mask("id", "token"), "email": parse_mask("email", "fake:email")},
        output="people_k5",
        mask_digests=True,
    ).sql("postgres", pretty=True),
    # the population grouped by the mapping (``known`` an aggregate), the anti-join of
    # population-only classes (delta_min > 0)
    "output_view_population_postgres": lambda: guarded_query(
        "postgres",
        "people",
        QIS,
        QIS,
        LevelRecoding(["age@1", "sex@2", "zip@3"], [2, 0, 3]),
        Guard(
            [KAnonymity(2), DeltaPresence(0.05, 0.5, "census"), KMap(3, "census")],
            population="census",
        ),
    ).sql("postgres", pretty=True),
    "table_macros": lambda: "\n".join(macro_statements("duckdb")),
}


def mondrian_engine(dialect: str, models: list, what: str) -> str:
    """One depth of Mondrian in the engine (anonsql.algorithms.mondrian.engine) as generated
    for ``dialect``, on QIs age (numeric), sex (2 values: a bitmask of the distinct values) and
    a zip of 100 values (COUNT(DISTINCT)), with the domains a run reads set by hand."""
    from types import SimpleNamespace

    from anonsql.algorithms.mondrian.engine import EngineMondrian

    db = SimpleNamespace(backend=SimpleNamespace(dialect=dialect))
    em = EngineMondrian(db, "people", QIS, "income", models, True)
    em.kinds = ["numeric", "categorical", "categorical"]
    em.domains = [[str(a) for a in range(20, 60)], ["f", "m"], [f"{z:03d}" for z in range(100)]]
    em.spans = [39.0, 1.0, 99.0]
    em.sens_labels = ["NULL", "high", "low", "mid"]
    rows, parts = "__anonsql_mondrian_rows3", "__anonsql_mondrian_parts3"
    if what == "parts":
        query = em.parts_query(rows)
    else:
        query = em.try_query(rows, parts, 1, 10, "__anonsql_mondrian_try3_0")
    return query.sql(dialect, pretty=True, comments=False)


CASES["mondrian_engine_parts"] = lambda: mondrian_engine("duckdb", [KAnonymity(5)], "parts")
CASES["mondrian_engine_parts_postgres"] = lambda: mondrian_engine(
    "postgres", [KAnonymity(5)], "parts"
)
CASES["mondrian_engine_try_mask"] = lambda: mondrian_engine(
    "duckdb", [KAnonymity(5), DistinctLDiversity(2)], "try"
)
CASES["mondrian_engine_try_mask_spark"] = lambda: mondrian_engine(
    "spark", [KAnonymity(5), DistinctLDiversity(2)], "try"
)
CASES["mondrian_engine_try_counts_postgres"] = lambda: mondrian_engine(
    "postgres", [KAnonymity(5), EntropyLDiversity(1.5), OrderedDistanceEMD(0.3)], "try"
)
for i, statement in enumerate(STATEMENTS):
    CASES[f"statement_{i}"] = lambda s=statement: sqlglot.parse_one(s, dialect=AnonSQL).sql(
        AnonSQL, pretty=True
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_sql_matches_snapshot(name):
    check(name, CASES[name]())

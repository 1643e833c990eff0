"""Defects found from outside (issue 27): each test failed before its fix."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from anonsql.database import Database
from anonsql.errors import InputError
from anonsql.io import import_file
from anonsql.run import anonymize
from anonsql.spec import Spec


def _numeric(n: int = 120, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "age": rng.integers(18, 80, n).astype(np.int32),
            "hours": rng.integers(10, 60, n).astype(np.int64),
            "y": rng.choice(["a", "b"], n),
        }
    )


# -- 1. microaggregation reads the engine's catalog types ------------------------------------
@pytest.mark.parametrize("algorithm", ["mdav", "kde", "ktca", "ctca"])
def test_microaggregation_on_server_engines_equals_duckdb(engine, algorithm):
    if algorithm in ("ktca", "ctca"):
        pytest.importorskip("minisom")
    if engine.name == "spark" and algorithm != "mdav":
        # the four read their QIs' types the same way (read_tuples): PostgreSQL runs all
        # four, Spark (seconds per statement) mdav
        pytest.skip("Spark runs mdav only; the type check is shared by the four algorithms")
    frame = _numeric()

    def run(db):
        db.backend.write_frame("num", frame)
        spec = Spec(qis=["age", "hours"], k=5, algorithm=algorithm, output="m", keep=["y"],
                    suppression=1.0 if algorithm in ("kde", "ktca") else 0.0)  # fmt: skip
        res = anonymize(db, "num", spec)
        out = res.to_frame(db)
        return res, out.sort_values(["age", "hours", "y"]).reset_index(drop=True)

    local = Database.open(":memory:")
    want_res, want = run(local)
    got_res, got = run(engine())
    assert got_res.measures["smallest_group"] == want_res.measures["smallest_group"]
    assert got.astype(str).values.tolist() == want.astype(str).values.tolist()
    local.close()


# -- 2. the Python API leaves no lock on a DuckDB file -----------------------------------------
def _other_process_reads(path) -> int:
    import subprocess
    import sys

    code = (
        "import duckdb, sys; con = duckdb.connect(sys.argv[1], read_only=True); "
        "print(con.sql('SELECT count(*) FROM t').fetchall()[0][0])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


def test_api_closes_what_it_opened(tmp_path):
    import anonsql
    import anonsql.api

    path = tmp_path / "w.duckdb"
    db = Database.open(path)
    db.backend.write_frame("t", _numeric())
    db.close()
    run = anonsql.anonymize(
        (str(path), "t"),
        {
            "qi": ["age", "hours"],
            "k": 5,
            "algorithm": "mdav",
            "output": "o",
            "keep": ["y"],
        },
    )
    assert _other_process_reads(path) == 120  # no lock held after the call
    assert len(run.to_frame()) == 120  # opened again for the read, closed after
    assert _other_process_reads(path) == 120
    with run:
        assert run.database.backend.table_exists("o")
    assert _other_process_reads(path) == 120
    prof = anonsql.profile(str(path), "t")
    assert [c.column for c in prof.columns] == ["age", "hours", "y"]
    assert _other_process_reads(path) == 120
    anonsql.api.evaluate(run, task="groups")
    assert _other_process_reads(path) == 120


# -- 5. one-line errors instead of tracebacks ----------------------------------------------------
def test_huge_delta_and_controllers_are_clean(db):
    from anonsql.demo.setup import setup_demo

    setup_demo(db, rows=500)
    cols = ["age", "sex", "zip", "income"]
    res = anonymize(db, "census", Spec(qis=["age", "sex", "zip"], sensitive="income", k=5,
                                       delta=1100.0, columns=cols))  # fmt: skip
    assert res.levels  # every class passes delta 1100: no overflow
    for c in (99999999999999999999, 501):
        with pytest.raises(InputError, match="controllers"):
            anonymize(db, "census", Spec(qis=["age", "sex", "zip"], k=5, algorithm="mondrian",
                                         controllers=c, columns=cols[:3]))  # fmt: skip


# -- 7, 12, 13, 17: files and databases ------------------------------------------------------------
def test_empty_csv_unknown_suffix_and_typo_database(tmp_path):
    from click.testing import CliRunner

    from anonsql.cli.main import cli

    runner = CliRunner()
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    db_path = tmp_path / "d.duckdb"
    res = runner.invoke(cli, ["import", "e", str(empty), "--db", str(db_path)])
    assert res.exit_code == 1 and "is empty" in res.output and res.output[-1] == "\n"
    res = runner.invoke(cli, ["demo", "--rows", "300", "--db", str(db_path)])
    assert res.exit_code == 0
    res = runner.invoke(cli, ["export", "census", str(tmp_path / "x.xlsx"), "--db", str(db_path)])
    assert res.exit_code == 1 and "CSV or Parquet" in res.output
    assert not (tmp_path / "x.xlsx").exists()
    typo = tmp_path / "typo.duckdb"
    res = runner.invoke(cli, ["anonymize", "census", "--qi", "age", "--k", "5", "--db", str(typo)])
    assert res.exit_code == 1 and "does not exist" in res.output and not typo.exists()
    res = runner.invoke(
        cli,
        [
            "anonymize",
            "census",
            "--qi",
            "age,sex,zip",
            "--k",
            "5",
            "--columns",
            "age,sex,zip",
            "--db",
            str(db_path),
        ],
    )
    assert res.exit_code == 0 and "nothing written: give --out" in res.output


def test_anonymize_file_checks_names_before_loading(tmp_path):
    from click.testing import CliRunner

    from anonsql.cli.main import cli

    src = tmp_path / "d.csv"
    _numeric().to_csv(src, index=False)
    hier = tmp_path / "h"
    hier.mkdir()
    (hier / "d_hierarchy_age.csv").write_text("broken;file;with;unequal\nrows\n")
    res = CliRunner().invoke(
        cli,
        [
            "anonymize-file",
            str(src),
            "--qi",
            "agee,hours",
            "--k",
            "5",
            "--hierarchies",
            str(hier),
            "--out",
            str(tmp_path / "o.csv"),
        ],
    )
    # the misspelt name is reported, not the broken hierarchy file read after it
    assert res.exit_code == 1 and "no column 'agee'" in res.output
    res = CliRunner().invoke(
        cli,
        ["anonymize-file", str(src), "--qi", "age", "--k", "5", "--out", str(tmp_path / "o.xlsx")],
    )
    assert res.exit_code == 1 and "CSV or Parquet" in res.output


# -- 10. CREATE OR REPLACE VIEW does not replace a table -----------------------------------
def test_create_or_replace_view_over_a_table_is_refused(db):
    from anonsql.connection import Connection
    from anonsql.demo.setup import setup_demo

    setup_demo(db, rows=300)
    db.backend.execute("CREATE TABLE mine AS SELECT 1 AS precious")
    con = Connection(db)
    with pytest.raises(InputError, match="'mine' is a table"):
        con.sql(
            "CREATE OR REPLACE VIEW mine AS SELECT age, sex FROM census WITH ANONYMIZATION "
            "(ALGORITHM 'K-ANONYMITY' PARAMETERS '{\"k\": 2}' "
            "COLUMN age PARAMETERS '{\"is_quasi_identifier\": true}' "
            "COLUMN sex PARAMETERS '{\"is_quasi_identifier\": true}')"
        )
    assert db.backend.fetchall("SELECT precious FROM mine") == [(1,)]


# -- 9. the suppression marker stands only at the root -----------------------------------------
@pytest.mark.parametrize(
    "rows",
    [
        [["a", "*", "*"], ["b", "*", "*"]],  # '*' on an inner level
        [["a", "x", "*"], ["*", "x", "*"]],  # '*' as a leaf (a data value)
    ],
)
def test_a_hierarchy_with_star_below_the_root_is_refused(db, rows):
    from anonsql.errors import HierarchyError
    from anonsql.hierarchy.hierarchy import Hierarchy

    h = Hierarchy.from_rows("s", rows)
    with pytest.raises(HierarchyError, match="below the root"):
        db.hierarchies.save(h)
    assert not db.hierarchies.exists("s")
    db.hierarchies.save(Hierarchy.from_rows("s", [["a", "x", "*"], ["b", "y", "*"]]))


# -- 3. estimated k-map's SQL does not nest with its breakpoints ---------------------------------
def test_estimated_k_map_1000_publishes_and_reads(db):
    from anonsql.demo.setup import setup_demo

    setup_demo(db, rows=400)
    spec = Spec(qis=["age", "sex"], k_map=1000, population_size=300_000_000, suppression=1.0,
                output="v", columns=["age", "sex"])  # fmt: skip
    res = anonymize(db, "census", spec)
    out = res.to_frame(db)
    # k' for 400 rows of 300 million people: derived from the same breakpoints in Python
    from anonsql.models.k_map import EstimatedKMap

    k_derived = EstimatedKMap(1000, population_size=300_000_000).derived_k(400)
    released = out[(out != "*").any(axis=1)]
    sizes = released.groupby(["age", "sex"]).size()
    assert (sizes >= k_derived).all()


# -- 4. two writers of one output on PostgreSQL -------------------------------------------------
def test_a_second_writer_of_one_output_waits_or_names_the_first(pg_url):
    import threading

    import psycopg

    from anonsql.demo.setup import setup_demo

    db = Database.open(pg_url)
    setup_demo(db, rows=300)
    spec = Spec(qis=["age", "sex"], k=3, output="shared_out", columns=["age", "sex"])
    anonymize(db, "census", spec)  # the output exists; now another session holds its lock
    holder = psycopg.connect(pg_url, autocommit=False)
    import hashlib

    # the key a run takes for the output (PostgresBackend.lock_output)
    key = int.from_bytes(
        hashlib.sha256(b"anonsql output shared_out").digest()[:8], "big", signed=True
    )
    holder.execute("SELECT pg_advisory_xact_lock(%s)", [key])
    with pytest.raises(InputError, match=r"another run is writing 'shared_out': process \d+"):
        anonymize(db, "census", Spec(**{**spec.to_dict(), "replace": True}))
    assert db.backend.fetchall("SELECT count(*) FROM shared_out")[0][0] == 300
    # with a wait, the second writer goes on once the first commits
    db.backend.wait_seconds = 30.0
    threading.Timer(1.0, holder.commit).start()
    res = anonymize(db, "census", Spec(**{**spec.to_dict(), "replace": True}))
    assert res.output == "shared_out"
    holder.close()
    db.close()


# -- 8. a NULL sensitive value is no value -----------------------------------------------------
def _brute_fails(df: pd.DataFrame, model: str, param: float) -> int:
    """Rows of the classes failing ``model``, by pandas: NULL is no value (value_counts and
    nunique drop it, in the classes and in the table), and a class without a value fails."""
    import math

    q = df["s"].value_counts(normalize=True)
    failing = 0
    for _, grp in df.groupby("q"):
        p = grp["s"].value_counts(normalize=True)
        if p.empty:
            failing += len(grp)
            continue
        if model == "distinct":
            ok = len(p) >= param
        elif model == "entropy":
            ok = -sum(x * math.log(x) for x in p) >= math.log(param) - 1e-9
        elif model == "recursive":  # c = param, l = 2
            r = sorted(grp["s"].value_counts().tolist(), reverse=True)
            tail = sum(r[1:])
            ok = tail > 0 and r[0] < param * tail
        elif model == "l1":
            ok = sum(abs(p.get(v, 0.0) - q[v]) for v in q.index) <= param + 1e-9
        elif model == "beta":
            ok = max((p[v] - q[v]) / q[v] for v in p.index) <= param + 1e-9
        else:  # delta-disclosure
            ok = max(abs(math.log2(p[v] / q[v])) for v in p.index) < param - 1e-9
        failing += 0 if ok else len(grp)
    return failing


_NULL_MODELS = {
    "distinct": lambda: __import__("anonsql.models", fromlist=["x"]).DistinctLDiversity(2),
    "entropy": lambda: __import__("anonsql.models", fromlist=["x"]).EntropyLDiversity(1.5),
    "recursive": lambda: __import__("anonsql.models", fromlist=["x"]).RecursiveCLDiversity(2, 3),
    "l1": lambda: __import__("anonsql.models", fromlist=["x"]).L1Closeness(0.6),
    "beta": lambda: __import__("anonsql.models", fromlist=["x"]).BasicBetaLikeness(1.5),
    "delta": lambda: __import__("anonsql.models", fromlist=["x"]).DeltaDisclosure(1.5),
}
_NULL_PARAMS = {"distinct": 2, "entropy": 1.5, "recursive": 3, "l1": 0.6, "beta": 1.5,
                "delta": 1.5}  # fmt: skip


def _null_tables():
    from hypothesis import strategies as st

    row = st.tuples(st.sampled_from("abcd"), st.sampled_from(["x", "y", "z", None, None]))
    # at least two values (2-diversity is possible) and two classes
    return st.lists(row, min_size=4, max_size=40).filter(
        lambda rows: len({s for _, s in rows if s is not None}) >= 2
    )


def test_null_sensitive_values_count_as_no_value_everywhere():
    """The search's assessment (Python), ``check`` and the output's guard (SQL) agree with
    pandas on random tables with NULL sensitive values, for every model that reads them."""
    from hypothesis import given, settings

    from anonsql.evaluation.checks import check_table, evaluate_levels
    from anonsql.hierarchy.hierarchy import Hierarchy

    @settings(max_examples=8, deadline=None)
    @given(_null_tables())
    def run(rows):
        df = pd.DataFrame(rows, columns=["q", "s"])
        db = Database.open(":memory:")
        db.backend.write_frame("t", df)
        db.hierarchies.save(Hierarchy.from_rows("q", [[v, "*"] for v in "abcd"]))
        for name, make in _NULL_MODELS.items():
            want = _brute_fails(df, name, _NULL_PARAMS[name])
            model = make()
            got_sql = check_table(db, "t", ["q"], [model], "s").models[0].failing_rows
            ev = evaluate_levels(db, "t", ["q"], [0], [model], "s", 1.0)
            spec = Spec(qis=["q"], sensitive="s", suppression=1.0, output="v", replace=True,
                        **_spec_goal(name))  # fmt: skip
            anonymize(db, "t", spec)
            view = db.backend.fetch_df("SELECT * FROM v")
            # the guard at the run's level: compare when the optimum kept level 0
            assert got_sql == want, (name, df)
            assert ev.suppressed_rows == want, (name, df)
            level0 = (view["q"] != "*").any() and set(view["q"]) - {"*"} <= set("abcd")
            if level0:
                assert int((view["q"] == "*").sum()) == want, (name, df)
        db.close()

    run()


def _spec_goal(name: str) -> dict:
    return {
        "distinct": {"l": 2},
        "entropy": {"l": 1.5, "l_variant": "entropy-l"},
        "recursive": {"l": 2, "l_variant": "recursive-cl", "c": 3.0},
        "l1": {"t": 0.6, "t_variant": "l1"},
        "beta": {"beta": 1.5},
        "delta": {"delta": 1.5},
    }[name]


def test_gaa_refuses_null_sensitive_values_with_l(db):
    from anonsql.hierarchy.hierarchy import Hierarchy

    df = pd.DataFrame({"q": list("aabbcc"), "s": ["x", None, "y", "x", None, "y"]})
    db.backend.write_frame("t", df)
    db.hierarchies.save(Hierarchy.from_rows("q", [[v, "*"] for v in "abc"]))
    with pytest.raises(InputError, match="no NULL sensitive values"):
        anonymize(db, "t", Spec(qis=["q"], sensitive="s", k=2, l=1.5, l_variant="entropy-l",
                                algorithm="greedy", output="v"))  # fmt: skip


# -- 6. an import the file system cannot hold is refused before anything is written ------------
def test_import_checks_free_space_first(tmp_path, monkeypatch):
    import shutil
    from collections import namedtuple

    src = tmp_path / "d.csv"
    _numeric(2000).to_csv(src, index=False)
    path = tmp_path / "w.duckdb"
    Database.open(path).close()  # the file as anonsql leaves it, before any import
    size_before = path.stat().st_size
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda _p: usage(10**9, 10**9 - 100, 100))
    db = Database.open(path)
    with pytest.raises(InputError, match="not enough free space"):
        import_file(db, "d", src)
    assert not db.backend.table_exists("d")
    db.close()
    assert path.stat().st_size == size_before


def test_report_explains_level_zero_loss_and_charts_every_class_size(db):
    """27.18: a QI left at level 0 shows a loss only through the suppressed records, and the
    report says so; the class-size chart covers every class, however many sizes there are."""
    from anonsql.demo.setup import setup_demo
    from anonsql.evaluation.report import build_report, render_html, size_bins
    from tests.helpers.roles import CENSUS, others

    setup_demo(db, rows=3000)
    qis = ["age", "sex", "zip"]
    spec = Spec(qis=qis, k=5, suppression=0.1, output="o", keep=others(CENSUS, *qis))
    r = anonymize(db, "census", spec)
    assert r.levels["sex"] == 0 and r.measures["suppressed_rows"] > 0
    report = build_report(db, r.run_id)
    (note,) = [n for n in report["loss_notes"] if n.startswith("sex ")]
    assert f"the {r.measures['suppressed_rows']} suppressed records" in note
    assert note in render_html(report)
    # many sizes: geometric bins that add up to every class and reach the largest size
    sizes = [{"size": s, "classes": 1 + s % 3} for s in range(5, 400, 3)]
    labels, counts = size_bins(sizes)
    assert len(labels) <= 21 and sum(counts) == sum(s["classes"] for s in sizes)
    assert labels[-1].endswith("398") or labels[-1].endswith("–398")
    labels, counts = size_bins(sizes[:10])
    assert labels == [f"size {s['size']}" for s in sizes[:10]]


@pytest.mark.parametrize("algorithm", ["greedy", "mdav", "rho-gain", "mondrian"])
def test_report_has_loss_per_qi_for_every_algorithm(db, algorithm):
    """27.18: every algorithm gives its metric per QI (GAA's alteration, MDAV's SSE/SST,
    the passes' Loss, Mondrian's NCP: the run's NCP is their mean), so the report charts
    it."""
    from anonsql.demo.setup import setup_demo
    from anonsql.evaluation.report import build_report
    from tests.helpers.roles import CENSUS, others

    setup_demo(db, rows=600)
    qis = ["age", "zip"] if algorithm != "mdav" else ["age"]
    extra = {"rho-gain": {"rho": 1, "suppression": 0.1}}.get(algorithm, {})
    spec = Spec(qis=qis, k=5, algorithm=algorithm, output="o", keep=others(CENSUS, *qis), **extra)
    r = anonymize(db, "census", spec)
    assert set(r.per_qi) == set(qis) and all(v >= 0 for v in r.per_qi.values())
    assert build_report(db, r.run_id)["loss_per_qi"] == r.per_qi
    if algorithm == "mondrian":
        assert r.score == pytest.approx(np.mean(list(r.per_qi.values())))

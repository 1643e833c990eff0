"""Mondrian computed in the engine (:mod:`anonsql.algorithms.mondrian.engine`): the same
partitions, in the same order, as the in-memory level-by-level version (itself held to the
part-by-part recursion, test_mondrian.py) on random tables - numeric and categorical QIs,
NULL QI values left out, NULL sensitive values, k alone, distinct, entropy and recursive
l-diversity, t-closeness, beta-likeness, both stop rules, several data controllers - and the
same release (recoding, figures, output rows) through ``anonymize``; the hand-worked tables
of test_mondrian.py and test_mondrian_stop.py; how the path is chosen and recorded.
PostgreSQL and Spark: test_partition_engines.py (all in tests/algorithms/mondrian/)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonsql.algorithms.mondrian import engine
from tests.helpers.partition import (
    GOLDEN_ROLES,
    HAND,
    HAND_NEXT,
    HAND_ROLES,
    HAND_WIDEST,
    db_of,
    golden,
    output_of,
    released_age_zip,
    run_on,
)

#: the models drawn per case: spec options beside k (the first four read the counts per
#: sensitive value; distinct l-diversity and k alone take the bitmask layout)
MODELS = [
    {},
    {"l": 2},
    {"l": 2, "l_variant": "entropy-l"},
    {"l": 2, "l_variant": "recursive-cl", "c": 2.0},
    {"t": 0.4},
    {"t": 0.5, "t_variant": "ordered-emd"},
    {"l": 2, "beta": 2.5},
]


@st.composite
def tables(draw, max_rows: int = 60):
    """A random table: 1-3 QIs, numeric (with repeated values) or categorical, NULLs in some,
    a sensitive column with a NULL sometimes, a row key."""
    n = draw(st.integers(4, max_rows))
    m = draw(st.integers(1, 3))
    cols: dict[str, list] = {}
    for j in range(m):
        if draw(st.booleans()):
            values: list = draw(st.lists(st.integers(0, 30), min_size=n, max_size=n))
        else:
            values = draw(
                st.lists(st.sampled_from(["a", "b", "c", "dd", "E"]), min_size=n, max_size=n)
            )
        if draw(st.integers(0, 4)) == 0:
            values[draw(st.integers(0, n - 1))] = None
        cols[f"q{j}"] = values
    cols["s"] = draw(st.lists(st.sampled_from(["x", "y", "z", "w", None]), min_size=n, max_size=n))
    cols["rid"] = list(range(n))
    return pd.DataFrame(cols)


def _db(frame: pd.DataFrame):
    from anonsql.database import Database

    db = Database.open(":memory:")
    db.backend.write_frame("t", frame)
    return db


def _keyed(points, parts, sensitive: bool = True) -> list[list[tuple]]:
    """Each partition as its sorted (QI codes, sensitive code, rows): comparable across the
    two histograms, whose rows come in different orders but whose codes agree. Without
    ``sensitive`` the rows are summed per QI tuple (the engine reads no sensitive value
    when no model does)."""
    out = []
    for p in parts:
        rows: dict[tuple, int] = {}
        for r in p.tolist():
            s = int(points.sens[r]) if sensitive else -1
            key = (tuple(points.codes[r].tolist()), s)
            rows[key] = rows.get(key, 0) + int(points.counts[r])
        out.append(sorted((*key, n) for key, n in rows.items()))
    return out


def _in_memory(db, qis, spec, models, sens_h=None):
    from anonsql.algorithms.mondrian.driver import make_checker, partition
    from anonsql.data.points import Points

    points = Points.from_database(db, "t", qis, [None] * len(qis), "s", None, None, "suppress")
    checker = make_checker(points, models, sens_h)
    result = partition(
        points,
        checker,
        "mondrian",
        spec.controllers,
        spec.seed or 0,
        spec.k,
        stop=spec.mondrian_stop,
    )
    return points, checker, result


def _in_engine(db, qis, spec, models):
    from anonsql.algorithms.mondrian.checker import Checker
    from anonsql.algorithms.mondrian.driver import engine_partitioning

    early = Checker(models, None, None, None)
    with engine.EngineMondrian(
        db, "t", qis, "s", models, early.needs_sensitive, "suppress", spec.mondrian_stop
    ) as em:
        assert em.prepare() is None
        done = em.run(2 * early.min_rows, spec.controllers, spec.seed or 0)
    names = db.backend.fetchall(
        "SELECT table_name FROM duckdb_tables() WHERE table_name LIKE '__anonsql_mondrian%'"
    )
    assert names == []  # every temporary relation dropped
    result = engine_partitioning(
        done.points, done.part_of_row, spec.controllers, spec.seed or 0, {}
    )
    return done.points, result


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tables(),
    st.integers(1, 5),
    st.sampled_from(range(len(MODELS))),
    st.sampled_from(["next-widest", "widest"]),
    st.integers(1, 3),
    st.integers(0, 1000),
)
def test_same_partitions_as_in_memory(df, k, which, stop, controllers, seed):
    """Partition for partition, in the same (depth-first) order, and the same recoding and
    figures, as the in-memory Mondrian on the same table."""
    from anonsql.algorithms.mondrian.driver import measures
    from anonsql.errors import InputError
    from anonsql.models.goal import build_models
    from anonsql.spec import Spec

    qis = [c for c in df.columns if c.startswith("q")]
    if MODELS[which].get("t_variant") == "ordered-emd":
        # the in-memory ordered distance counts NULL among the m values it divides by
        # (m - 1), the SQL one (the guard's) does not: they differ once NULL is present
        df = df.assign(s=df["s"].fillna("x"))
    spec = Spec(
        qis=qis,
        sensitive="s",
        k=k,
        mondrian_stop=stop,
        controllers=controllers,
        seed=seed,
        **MODELS[which],
    )
    models = build_models(spec, None)
    db = _db(df)
    try:
        points, checker, expected = _in_memory(db, qis, spec, models)
    except InputError:
        return  # refused (k above the rows, l above the values, controllers above the rows)
    if controllers > points.rows:
        return
    got_points, got = _in_engine(db, qis, spec, models)
    sensitive = got_points.sens is not None
    assert sensitive == checker.needs_sensitive
    assert _keyed(got_points, got.partitions, sensitive) == _keyed(
        points, expected.partitions, sensitive
    )
    assert got.recoding.rows() == expected.recoding.rows()
    assert got_points.missing_rows == points.missing_rows
    assert len(got.groups) == len(expected.groups)
    assert measures(got_points, got, checker) == measures(points, expected, checker)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(max_rows=40), st.integers(1, 4), st.sampled_from(range(len(MODELS))))
def test_same_release_through_anonymize(df, k, which):
    """A whole run (histogram, partitions, recoding, guarded view, figures) on either path
    releases the same rows with the same figures; the engine's run says where it ran."""
    from anonsql.errors import InputError
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    qis = [c for c in df.columns if c.startswith("q")]
    if MODELS[which].get("t_variant") == "ordered-emd":
        df = df.assign(s=df["s"].fillna("x"))  # as above
    spec = Spec(
        algorithm="mondrian",
        qis=qis,
        sensitive="s",
        k=k,
        output="o",
        missing="suppress",
        keep=["rid"],
        allow_identifying=[*qis, "rid"],
        **MODELS[which],
    )
    results = []
    for threshold in (10**12, 0):
        db = _db(df)
        try:
            with pytest.MonkeyPatch.context() as mp:
                mp.setitem(engine.ENGINE_ROWS, "duckdb", threshold)
                run = anonymize(db, "t", spec)
        except InputError as e:
            results.append(str(e))
            continue
        out = db.backend.fetch_df("SELECT * FROM o").astype(str).sort_values("rid")
        results.append((run.measures, run.score, out.reset_index(drop=True)))
    if isinstance(results[0], str):
        assert results[1] == results[0]
        return
    (m0, s0, o0), (m1, s1, o1) = results
    where = m1.pop("partitioned_in")
    assert where["engine"] == "duckdb" and where["depths"] >= 1
    assert "partitioned_in" not in m0
    assert m1 == m0 and s1 == s0
    pd.testing.assert_frame_equal(o1, o0)


@pytest.fixture
def in_engine(monkeypatch):
    monkeypatch.setitem(engine.ENGINE_ROWS, "duckdb", 0)


def test_golden_table_in_the_engine(in_engine):
    """The hand-worked table of test_mondrian.py (k = 2, l = 2: age cut at its weighted
    median 40, then state per half) gives the same release in the engine."""
    db = db_of(golden())
    r = run_on(db, qis=["age", "state"], sensitive="income", k=2, l=2, **GOLDEN_ROLES)
    assert r.measures["partitioned_in"]["engine"] == "duckdb"
    out = output_of(db)
    assert sorted(zip(out["age"], out["state"], out["income"], strict=True)) == [
        ("[25, 30]", "CA", 100),
        ("[25, 30]", "CA", 200),
        ("[35, 40]", "MN", 100),
        ("[35, 40]", "MN", 300),
        ("[45, 50]", "TX", 100),
        ("[45, 50]", "TX", 200),
        ("[55, 60]", "{CA, MN}", 200),
        ("[55, 60]", "{CA, MN}", 300),
    ]
    assert r.measures["classes"] == 4
    assert r.score == pytest.approx((8 * 5 / 35 + 2 * 0.5) / 16)


@pytest.mark.parametrize("stop", ["next-widest", "widest"])
def test_stop_rules_hand_table_in_the_engine(in_engine, stop):
    """test_mondrian_stop.py's table: ``widest`` stops where the widest QI (age) has no
    allowable cut, ``next-widest`` cuts zip instead."""
    db = db_of(HAND)
    r = run_on(db, qis=["age", "zip"], k=2, mondrian_stop=stop, **HAND_ROLES)
    assert r.measures["partitioned_in"]["engine"] == "duckdb"
    assert released_age_zip(db) == (HAND_NEXT if stop == "next-widest" else HAND_WIDEST)


def test_missing_values_refused_as_in_memory(monkeypatch):
    """A NULL QI value: the same refusal on both paths (missing = 'error'), the same rows
    left out with missing = 'suppress'."""
    from anonsql.errors import InputError
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    df = pd.DataFrame({"a": [1, 2, None, 4, 5, 6], "b": list("xyxyxy"), "s": list("pqpqpq")})
    spec = Spec(algorithm="mondrian", qis=["a", "b"], sensitive="s", k=2, l=2, output="o")
    messages = []
    for threshold in (10**12, 0):
        monkeypatch.setitem(engine.ENGINE_ROWS, "duckdb", threshold)
        with pytest.raises(InputError) as e:
            anonymize(_db(df), "t", spec)
        messages.append(str(e.value))
    assert messages[0] == messages[1]
    assert "has values that are NULL" in messages[0]


def test_the_path_is_chosen_by_size_and_said(monkeypatch):
    """Below the engine's threshold the run partitions in memory and its figures say nothing
    of a place; at or above it, in the engine, and the figures (stored in the run's
    provenance) and the command line's summary say so. TA_DA and QIs with a hierarchy stay
    in memory whatever the size."""
    from anonsql.algorithms.mondrian.algorithm import partitioning_lines
    from anonsql.hierarchy import builders
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "age": rng.integers(20, 60, 300),
            "zip": rng.choice(["a", "b", "c"], 300),
            "y": rng.choice(["p", "q"], 300),
        }
    )
    spec = Spec(algorithm="mondrian", qis=["age", "zip"], k=5, output="o", keep=["y"])
    monkeypatch.setitem(engine.ENGINE_ROWS, "duckdb", 301)
    run = anonymize(_db(df), "t", spec)
    assert "partitioned_in" not in run.measures
    assert partitioning_lines(run)[0].endswith("computed in memory")
    monkeypatch.setitem(engine.ENGINE_ROWS, "duckdb", 300)
    db = _db(df)
    run = anonymize(db, "t", spec)
    where = run.measures["partitioned_in"]
    assert where["engine"] == "duckdb" and where["statements"] > where["depths"] > 1
    assert (
        f"computed in the engine (duckdb, {where['depths']} depths)" in partitioning_lines(run)[0]
    )
    stored = db.backend.fetchall("SELECT measures FROM anonsql_runs WHERE output = 'o'")
    assert "partitioned_in" in str(stored[0][0])
    tada = Spec(algorithm="tada", label="y", qis=["age", "zip"], k=5, output="o2", keep=["y"])
    assert "partitioned_in" not in anonymize(db, "t", tada).measures
    # PostgreSQL and Spark: from the rows the in-memory path would not hold in the default
    # memory budget (the in-memory path is the faster one there while it fits)
    from anonsql.data.memory import default_budget

    for dialect in ("postgres", "spark"):
        assert engine.engine_threshold(dialect) == default_budget() // engine.MEMORY_ROW_BYTES
    db.hierarchies.save(builders.mask("zip", ["a", "b", "c"]), "zip")
    assert (
        "partitioned_in"
        not in anonymize(db, "t", spec.__class__(**{**spec.to_dict(), "output": "o3"})).measures
    )

"""Mondrian's stop rule (option ``mondrian_stop``): when the widest QI has no allowable cut,
``"next-widest"`` (the default) tries the next widest QI, ``"widest"`` (LeFevre et al.'s
rule) releases the partition. A table worked by hand, both rules against a brute force on
random tables (k, l, and the refinement that makes ``"widest"`` never cut more), every
surface, and the refusal for algorithms that do not partition."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonsql.errors import InputError
from tests.helpers import brute
from tests.helpers.partition import (
    HAND,
    HAND_NEXT,
    HAND_ROLES,
    HAND_WIDEST,
    released_age_zip,
)
from tests.helpers.partition import db_of as _db
from tests.helpers.partition import run_on as _run


def test_hand_table_widest_stops_next_widest_cuts():
    """k = 2 on HAND, QIs (age, zip).

    Root: both normalized ranges are 1 (80/80, 4/4 steps); the tie goes to the first QI, age,
    cut at the weighted median: counts 10:3, 50:1, 90:4, half of 8 is reached at 50, so
    {10, 50} (rows 0-3) | {90} (rows 4-7), 4 rows a side: allowable, taken by both rules.
    Rows 0-3: age is the widest (40/80 = 0.5 against zip's 1/4); its median cut is {10} (3
    rows) | {50} (1 row), fewer than k, so age has no allowable cut. ``widest`` releases the
    4 rows as [10, 50] x {A, B}; ``next-widest`` tries zip: A (rows 0, 1) | B (rows 2, 3),
    2 rows each: allowable. Rows 4-7: age is one value (width 0), zip is the only QI left
    (2/4): C, D (2 rows) | E (2 rows) under both rules. Parts of 2 rows are final (< 2k)."""
    for stop, expected, parts in (("next-widest", HAND_NEXT, 4), ("widest", HAND_WIDEST, 3)):
        db = _db(HAND)
        r = _run(db, qis=["age", "zip"], k=2, mondrian_stop=stop, **HAND_ROLES)
        assert released_age_zip(db) == expected, stop
        assert r.measures["partitions"] == parts and r.measures["classes"] == parts
        db.close()


def test_the_default_is_next_widest():
    db = _db(HAND)
    _run(db, qis=["age", "zip"], k=2, **HAND_ROLES)
    assert released_age_zip(db) == HAND_NEXT
    db.close()


def test_hand_table_partitions_of_both_implementations():
    """The level-by-level Mondrian and the part-by-part reference give HAND's partitions
    (row indices of the histogram, one row per distinct tuple here) under both rules."""
    from anonsql.algorithms.mondrian.cuts import mondrian, mondrian_part_by_part
    from anonsql.algorithms.mondrian.driver import make_checker
    from anonsql.data.points import Points
    from anonsql.models.goal import build_models
    from anonsql.spec import Spec

    points = Points.from_frame(HAND.drop(columns="rid"), ["age", "zip"], [None, None], None)
    assert points.counts.tolist() == [2, 1, 1, 1, 1, 2]  # (10,A) x2, (10,B), (50,B), ...
    checker = make_checker(points, build_models(Spec(qis=["age", "zip"], k=2), None))
    for stop in ("next-widest", "widest"):
        got = [p.tolist() for p in mondrian(points, checker, stop=stop)]
        ref = [p.tolist() for p in mondrian_part_by_part(points, checker, stop=stop)]
        assert got == ref
        sizes = sorted(int(points.counts[p].sum()) for p in got)
        assert sizes == ([2, 2, 2, 2] if stop == "next-widest" else [2, 2, 4])


@st.composite
def numeric_tables(draw, max_rows: int = 40):
    """Small tables of 1-3 numeric QIs (few values, so ties and blocked cuts are common),
    a sensitive s of 1-4 values and a row key."""
    n = draw(st.integers(2, max_rows))
    m = draw(st.integers(1, 3))
    cols = {
        f"q{j}": draw(st.lists(st.integers(0, draw(st.integers(1, 9))), min_size=n, max_size=n))
        for j in range(m)
    }
    cols["s"] = draw(st.lists(st.sampled_from("wxyz"), min_size=n, max_size=n))
    cols["rid"] = list(range(n))
    return pd.DataFrame(cols)


def _inside(outer: list[int], inner: list[int]) -> bool:
    return set(inner) <= set(outer)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(numeric_tables(), st.integers(1, 4), st.integers(1, 3), st.integers(1, 3))
def test_both_rules_against_brute_force(df, k, l_value, n_groups):
    """Under both rules every released class has >= k rows and >= l distinct sensitive
    values (pandas groupby on the output), nothing is suppressed, and each ``next-widest``
    partition lies inside one ``widest`` partition (both rules take the same cut whenever the
    widest QI has an allowable one, and a part's decision depends on its rows only), so
    ``widest`` never has more partitions nor a smaller NCP; in groups (TA_DA's,
    controllers') as well; the level-by-level Mondrian equals the part-by-part reference
    under ``widest`` too."""
    from anonsql.algorithms.mondrian.cuts import Spans, mondrian_groups, mondrian_part_by_part
    from anonsql.algorithms.mondrian.driver import make_checker
    from anonsql.data.points import Points
    from anonsql.models.goal import build_models
    from anonsql.spec import Spec

    qis = [c for c in df.columns if c.startswith("q")]
    if k > len(df) or l_value > df["s"].nunique():
        return  # refused up front (tests/algorithms/mondrian/test_mondrian.py)
    parts, ncp = {}, {}
    for stop in ("next-widest", "widest"):
        db = _db(df)
        r = _run(
            db,
            qis=qis,
            sensitive="s",
            k=k,
            l=l_value,
            mondrian_stop=stop,
            keep=["rid"],
            allow_identifying=[*qis, "rid"],
        )
        out = db.backend.fetch_df("SELECT * FROM o").sort_values("rid")
        db.close()
        assert len(out) == len(df) and (out[qis] != "*").all(axis=None)
        assert (brute.k_values(out, qis) >= k).all()
        assert (brute.distinct_values(out, qis, "s") >= l_value).all()
        # the classes by released labels, as rid sets
        parts[stop] = [sorted(g["rid"]) for _, g in out.groupby(qis)]
        assert r.measures["classes"] == len(parts[stop])
        ncp[stop] = r.score
    assert len(parts["widest"]) <= len(parts["next-widest"])
    # a part's ranges are within its whole's: the refinement never costs NCP
    assert ncp["next-widest"] <= ncp["widest"] + 1e-12
    for inner in parts["next-widest"]:
        assert sum(_inside(outer, inner) for outer in parts["widest"]) == 1
    # the same on the histogram, in random groups
    points = Points.from_frame(df, qis, [None] * len(qis), "s")
    spec = Spec(qis=qis, sensitive="s", k=k, l=l_value)
    checker = make_checker(points, build_models(spec, None))
    owner = np.random.default_rng(len(df)).integers(0, n_groups, len(points.counts))
    groups = [np.flatnonzero(owner == g) for g in range(n_groups)]
    spans = Spans.of(points)
    by = {}
    for stop in ("next-widest", "widest"):
        got = mondrian_groups(points, checker, groups, spans, stop)
        ref = [p for g in groups for p in mondrian_part_by_part(points, checker, g, spans, stop)]
        assert [p.tolist() for p in got] == [p.tolist() for p in ref]
        by[stop] = [p.tolist() for p in got]
    assert len(by["widest"]) <= len(by["next-widest"])
    for inner in by["next-widest"]:
        if inner:  # an empty group is one empty partition
            assert sum(_inside(outer, inner) for outer in by["widest"]) == 1


def _cli(*args: str):
    from click.testing import CliRunner

    from anonsql.cli.main import cli

    return CliRunner().invoke(cli, list(args))


def _parameters(db, output: str) -> dict:
    rows = db.backend.fetch_df(
        f"SELECT parameters FROM anonsql_runs WHERE output = '{output}' ORDER BY run_id"
    )
    return json.loads(rows["parameters"].iloc[-1])


def test_every_surface(tmp_path):
    """CLI (anonymize, anonymize-file), spec files (TOML, JSON), SQL (ANONYMIZE TABLE and
    CREATE VIEW ... PARAMETERS), the Python API (keyword and Spec): widest gives HAND_WIDEST,
    and the rule is in the run's provenance (and kept by refresh)."""
    import anonsql
    from anonsql.database import Database
    from anonsql.spec import Spec

    path = tmp_path / "h.duckdb"
    d = Database.open(str(path))
    d.backend.write_frame("t", HAND)
    d.close()
    common = ["--qi", "age,zip", "--k", "2", "--keep", "rid", "--allow-identifying", "age,zip,rid"]
    res = _cli("anonymize", "t", *common, "--algorithm", "mondrian", "--mondrian-stop",
               "widest", "--out", "c1", "--db", str(path))  # fmt: skip
    assert res.exit_code == 0, res.output
    # TOML and JSON spec files
    (tmp_path / "s.toml").write_text(
        f'database = "{path}"\ntable = "t"\nqi = ["age", "zip"]\nk = 2\nkeep = ["rid"]\n'
        f'allow_identifying = ["age", "zip", "rid"]\nalgorithm = "mondrian"\n'
        f'mondrian_stop = "widest"\noutput = "c2"\n'
    )
    res = _cli("run", str(tmp_path / "s.toml"))
    assert res.exit_code == 0, res.output
    spec = {"database": str(path), "table": "t", "qi": ["age", "zip"], "k": 2, "keep": ["rid"],
            "allow_identifying": ["age", "zip", "rid"], "algorithm": "mondrian",
            "mondrian_stop": "widest", "output": "c3"}  # fmt: skip
    (tmp_path / "s.json").write_text(json.dumps(spec))
    res = _cli("run", str(tmp_path / "s.json"))
    assert res.exit_code == 0, res.output
    # SQL: the short statement and a view's PARAMETERS
    with anonsql.connect(str(path)) as con:
        con.sql(
            "ANONYMIZE TABLE t INTO c4 WITH (k = 2, qi = (age, zip), keep = (rid), "
            "allow_identifying = (age, zip, rid), algorithm = 'mondrian', "
            "mondrian_stop = 'widest')"
        )
        con.sql(
            "CREATE VIEW c5 AS SELECT * FROM t WITH ANONYMIZATION (ALGORITHM 'K-ANONYMITY' "
            'PARAMETERS \'{"k": 2, "algorithm": "mondrian", "mondrian_stop": "widest", '
            '"allow_identifying": ["age", "zip", "rid"]}\' '
            "COLUMN age PARAMETERS '{\"is_quasi_identifier\": true}' "
            "COLUMN zip PARAMETERS '{\"is_quasi_identifier\": true}' "
            "COLUMN rid PARAMETERS '{\"is_insensitive\": true}')"
        )
    # Python API: a keyword, and a Spec
    kw = {"qi": ["age", "zip"], "k": 2, "algorithm": "mondrian", **HAND_ROLES}
    r = anonsql.anonymize((str(path), "t"), output="c6", mondrian_stop="widest", **kw)
    assert r.measures["partitions"] == 3
    spec_obj = Spec(qis=["age", "zip"], k=2, algorithm="mondrian", mondrian_stop="widest",
                    output="c7", **HAND_ROLES)  # fmt: skip
    anonsql.anonymize((str(path), "t"), spec_obj)
    # TA_DA: a constant label leaves the tree one leaf, so phase 2 is Mondrian on HAND
    for stop, expected in (("widest", HAND_WIDEST), ("next-widest", HAND_NEXT)):
        r = anonsql.anonymize(HAND.assign(y="p"), label="y", mondrian_stop=stop,
                              **{**kw, "algorithm": "tada"})  # fmt: skip
        f = r.to_frame().sort_values("rid")
        assert r.measures["groups"] == 1 and r.algorithm == "tada/classification"
        assert list(zip(f["age"], f["zip"], strict=True)) == expected, stop
    db = Database.open(str(path))
    try:
        for name in ("c1", "c2", "c3", "c4", "c5", "c6", "c7"):
            assert released_age_zip(db, name) == HAND_WIDEST, name
            assert _parameters(db, name)["mondrian_stop"] == "widest", name
    finally:
        db.close()
    # refresh re-runs the stored spec: still LeFevre's rule
    res = _cli("refresh", "c1", "--db", str(path))
    assert res.exit_code == 0, res.output
    db = Database.open(str(path))
    try:
        assert released_age_zip(db, "c1") == HAND_WIDEST
    finally:
        db.close()


def test_anonymize_file(tmp_path):
    src = tmp_path / "hand.csv"
    HAND.to_csv(src, index=False)
    for stop, expected in (("widest", HAND_WIDEST), ("next-widest", HAND_NEXT)):
        out = tmp_path / f"{stop}.csv"
        res = _cli("anonymize-file", str(src), "--qi", "age,zip", "--k", "2", "--keep", "rid",
                   "--allow-identifying", "age,zip,rid", "--algorithm", "mondrian",
                   "--mondrian-stop", stop, "--out", str(out))  # fmt: skip
        assert res.exit_code == 0, res.output
        got = pd.read_csv(out, dtype=str).sort_values("rid", key=lambda c: c.astype(int))
        assert list(zip(got["age"], got["zip"], strict=True)) == expected


@pytest.mark.parametrize("algorithm", ["flash", "greedy", "mdav"])
def test_other_algorithms_refuse_it(algorithm):
    db = _db(HAND)
    with pytest.raises(InputError, match="mondrian_stop: option") as e:
        _run(db, qis=["age", "zip"], k=2, algorithm=algorithm, mondrian_stop="widest",
             **HAND_ROLES)  # fmt: skip
    assert "\n" not in str(e.value)
    db.close()


def test_refusals_on_every_surface(tmp_path):
    import anonsql
    from anonsql.options import run_options

    with pytest.raises(InputError, match="not of 'flash'"):
        run_options({"qi": ["age"], "k": 2, "mondrian_stop": "widest"}, "spec")
    with pytest.raises(InputError, match="LeFevre's rule: stop when the widest QI"):
        run_options(
            {"qi": ["age"], "k": 2, "algorithm": "mondrian", "mondrian_stop": "lefevre"}, "spec"
        )
    with pytest.raises(InputError, match="'mondrian_stop' must be a non-empty string"):
        run_options({"qi": ["age"], "k": 2, "algorithm": "mondrian", "mondrian_stop": 1}, "x")
    with anonsql.connect() as con:
        con.database.backend.write_frame("t", HAND)
        with pytest.raises(InputError, match="mondrian_stop: option"):
            con.sql(
                "ANONYMIZE TABLE t INTO o WITH (k = 2, qi = (age, zip), keep = (rid), "
                "mondrian_stop = 'widest')"
            )
    path = tmp_path / "h.duckdb"
    with anonsql.connect(str(path)) as con:
        con.database.backend.write_frame("t", HAND)
    res = _cli("anonymize", "t", "--qi", "age,zip", "--k", "2", "--keep", "rid",
               "--mondrian-stop", "widest", "--db", str(path))  # fmt: skip
    assert res.exit_code == 1
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and "mondrian_stop: option" in lines[0], res.output
    res = _cli("anonymize", "t", "--qi", "age,zip", "--k", "2", "--algorithm", "mondrian",
               "--mondrian-stop", "lefevre", "--db", str(path))  # fmt: skip
    assert res.exit_code == 2 and "lefevre" in res.output  # click's choice

"""Mondrian with l-diversity (``algorithm="mondrian"``): a hand-worked golden table, the
released classes against a pandas brute force on random tables (k, l, strictness, equal QI
tuples together, values inside their released interval or set), ``check`` and the guard
against the same brute force, hierarchies (lowest common ancestors), bad input and every
surface."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonsql.errors import InputError
from tests.helpers import brute, papers
from tests.helpers.partition import (
    GOLDEN_ROLES,
    check_release,
    db_of,
    disjoint,
    golden,
    output_of,
    run_on,
    table_roles,
    tables,
)


def test_golden_table_worked_by_hand():
    """k = 2, l = 2 over <age (numeric), state (categorical)>, income sensitive.

    Root: both QIs have normalized range 1 (age 35/35, state 2 of 2 steps); the tie goes to
    the first QI, age, cut at the weighted median (40): {25..40} | {45..60}, each with 3
    incomes. {25..40}: state is wider (1/2 > 15/35), cut CA | MN: {t1, t2} and {t3, t4}, 2
    incomes each; no further cut keeps 2 rows a side. {45..60}: state (3 values) is wider, cut
    at the median of CA(1) MN(1) TX(2): {CA, MN} | {TX}."""
    db = db_of(golden())
    r = run_on(db, qis=["age", "state"], sensitive="income", k=2, l=2, **GOLDEN_ROLES)
    out = output_of(db)
    want = papers.frame("mondrian", "golden_release.csv")
    assert sorted(zip(out["age"], out["state"], out["income"], strict=True)) == list(
        want.itertuples(index=False, name=None)
    )
    assert r.algorithm == "mondrian" and r.measures["classes"] == 4
    assert r.measures["min_class_size"] == 2 and r.metric == "ncp"
    # NCP by hand: age widths 5, 5, 5, 5 of 35; state 0, 0, 0 and 1 of 2 steps, 2 rows each
    assert r.score == pytest.approx((8 * 5 / 35 + 2 * 0.5) / 16)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), st.integers(1, 4), st.integers(1, 3))
def test_mondrian_matches_brute_force(case, k, l_value):
    df, kinds = case
    qis = [c for c in df.columns if c.startswith("q")]
    if k > len(df) or l_value > df["s"].nunique():
        return  # rejected up front (tested below)
    db = db_of(df)
    run_on(db, qis=qis, sensitive="s", k=k, l=l_value, materialize="table", **table_roles(qis))
    out = output_of(db)
    check_release(df, out, qis, kinds, k, l_value)
    # strict partitioning: two released classes are disjoint in some QI
    boxes = out[qis].drop_duplicates().to_numpy().tolist()
    for i in range(len(boxes)):
        for j in range(i):
            assert any(disjoint(boxes[i][c], boxes[j][c], kinds[c]) for c in range(len(qis))), (
                boxes[i],
                boxes[j],
            )
    # check on the released table agrees with the brute force
    from anonsql.evaluation.checks import check_table
    from anonsql.models import DistinctLDiversity, KAnonymity

    ev = check_table(db, "o", qis, [KAnonymity(k), DistinctLDiversity(l_value)], "s")
    assert ev.anonymous and ev.classes == len(boxes)
    db.close()


def _guard_brute(db, source: str, qis: list[str], k: int, l_value: int) -> pd.DataFrame:
    """Brute force of the guard: current source rows through the stored recoding, classes by
    released labels, failing classes suppressed."""
    rec = db.backend.fetch_df("SELECT original, generalized FROM anonsql_recodings")
    mapping = {tuple(o): list(g) for o, g in zip(rec["original"], rec["generalized"], strict=True)}
    src = db.backend.fetch_df(f"SELECT * FROM {source}")
    gen = [mapping.get(tuple(str(v) for v in row)) for row in src[qis].itertuples(index=False)]
    out = src.copy()
    for j, q in enumerate(qis):
        out[q] = [g[j] if g is not None else None for g in gen]
    known = out[qis].notna().all(axis=1)
    sizes = out[known].groupby(qis)["s"].transform("size")
    distinct = out[known].groupby(qis)["s"].transform("nunique")
    ok = pd.Series(False, index=out.index)
    ok[known] = (sizes >= k) & (distinct >= l_value)
    for q in qis:
        out.loc[~ok, q] = "*"
    return out


def test_guard_groups_by_node_ids_like_the_brute_force():
    rng = np.random.default_rng(3)
    n = 300
    df = pd.DataFrame(
        {
            "rid": np.arange(n),
            "age": rng.integers(18, 70, n),
            "zip": rng.choice(list("abcdef"), n),
            "s": rng.choice(["x", "y", "z"], n),
        }
    )
    db = db_of(df)
    qis = ["age", "zip"]
    # rid: the test's row key, kept although unique
    run_on(db, qis=qis, sensitive="s", k=4, l=2, keep=["rid"], allow_identifying=["rid"])
    assert (output_of(db)["age"] != "*").all()
    # edits: rows deleted (classes shrink), a new tuple (no release), duplicates of a class
    db.backend.execute("DELETE FROM t WHERE rid % 7 = 0 OR (rid % 3 = 0 AND s = 'x')")
    db.backend.execute("INSERT INTO t VALUES (1000, 99, 'zz', 'x'), (1001, 18, 'a', 'x')")
    view = output_of(db).sort_values("rid").reset_index(drop=True)
    want = _guard_brute(db, "t", qis, 4, 2).sort_values("rid").reset_index(drop=True)
    pd.testing.assert_frame_equal(view[[*qis, "rid"]], want[[*qis, "rid"]], check_dtype=False)
    assert (view["age"] == "*").any() and (view["age"] != "*").any()


def test_hierarchy_qi_released_as_lowest_common_ancestor():
    from anonsql.hierarchy.hierarchy import Hierarchy

    rows = [["a1", "A", "*"], ["a2", "A", "*"], ["b1", "B", "*"], ["b2", "B", "*"]]
    df = pd.DataFrame(
        {
            "g": ["a1", "a2", "a1", "a2", "b1", "b2", "b1", "b2"],
            "n": [1, 2, 3, 4, 5, 6, 7, 8],
            "s": ["x", "y", "x", "y", "x", "y", "y", "x"],
        }
    )
    db = db_of(df)
    db.hierarchies.save(Hierarchy.from_rows("g", rows))
    r = run_on(db, qis=["g", "n"], sensitive="s", k=4, l=2)
    out = output_of(db)
    # one cut: g among the root's children A | B (n's range is as wide, but g comes first)
    assert (
        sorted(zip(out["g"], out["n"], strict=True))
        == [("A", "[1, 4]")] * 4 + [("B", "[5, 8]")] * 4
    )
    assert r.measures["classes"] == 2
    # the hierarchy's node ids are the released ids (what the representations read)
    ids = db.backend.fetchall("SELECT DISTINCT nodes[1] FROM anonsql_recodings ORDER BY 1")
    h = db.hierarchies.load("g")
    assert sorted(h.labels[i] for (i,) in ids) == ["A", "B"]


def test_entropy_l_and_t_closeness_are_kept():
    rng = np.random.default_rng(5)
    n = 400
    df = pd.DataFrame(
        {
            "a": rng.integers(0, 50, n),
            "b": rng.choice(list("pqrs"), n),
            "s": rng.choice(["x", "y", "z"], n, p=[0.5, 0.3, 0.2]),
        }
    )
    db = db_of(df)
    r = run_on(db, qis=["a", "b"], sensitive="s", k=3, l=2, l_variant="entropy-l", t=0.3)
    out = output_of(db)
    assert (out["a"] != "*").all()
    assert (brute.entropy_values(out, ["a", "b"], "s") >= 2 - 1e-9).all()
    assert (brute.equal_emd_values(out, ["a", "b"], "s") <= 0.3 + 1e-9).all()
    assert r.measures["failing_rows"] == 0


def test_null_and_text_numbers():
    df = pd.DataFrame({"a": [1.5, 2.25, None, 4.0, 5.0, 6.0], "s": list("xyxyxy")})
    db = db_of(df)
    with pytest.raises(InputError, match="NULL"):
        run_on(db, qis=["a"], sensitive="s", k=2)
    r = run_on(db, qis=["a"], sensitive="s", k=2, missing="suppress")
    out = output_of(db)
    assert r.measures["missing_rows"] == 1
    # 5 rows: the median cut keeps the smallest prefix holding 2.5 rows, {1.5, 2.25, 4.0}
    assert sorted(out["a"]) == ["*", *["[1.5, 4.0]"] * 3, *["[5.0, 6.0]"] * 2]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"k": None, "l": 2}, "needs k"),
        ({"suppression": 0.1}, "suppression 0"),
        ({"metric": "loss"}, "ncp"),
        ({"label": "y"}, "option of algorithm 'tada'"),
        ({"controllers": 0}, "controllers"),
        ({"k": 100}, "larger than the table"),
        ({"l": 9}, "distinct"),
        ({"algorithm": "flash", "controllers": 2}, "partitioning algorithms"),
    ],
)
def test_bad_input_changes_nothing(extra, message):
    from tests.helpers.snapshot import snapshot

    db = db_of(golden())
    before = snapshot(db)
    kw = {"qis": ["age", "state"], "sensitive": "income", "k": 2, **GOLDEN_ROLES, **extra}
    with pytest.raises(InputError, match=message):
        run_on(db, **kw)
    assert snapshot(db) == before


def test_every_surface(tmp_path):
    from click.testing import CliRunner

    import anonsql
    from anonsql.cli.main import cli

    # SQL statement
    con = anonsql.connect()
    con.database.backend.write_frame("t", golden())
    run = con.sql(
        "ANONYMIZE TABLE t INTO o WITH (k = 2, l = 2, qi = (age, state), sensitive = income, "
        "keep = (job), algorithm = 'mondrian')"
    )
    assert run.algorithm == "mondrian" and run.measures["classes"] == 4
    # Python API
    r = anonsql.anonymize(
        golden(),
        qi=["age", "state"],
        sensitive="income",
        k=2,
        l=2,
        algorithm="mondrian",
        controllers=2,
        seed=1,
        **GOLDEN_ROLES,
    )
    frame = r.to_frame()
    assert len(frame) == 8 and (brute.k_values(frame, ["age", "state"]) >= 2).all()
    # spec file and CLI
    path = tmp_path / "g.duckdb"
    db = db_of(golden())
    db.close()
    from anonsql.database import Database

    d = Database.open(str(path))
    d.backend.write_frame("t", golden())
    d.close()
    spec = tmp_path / "run.toml"
    spec.write_text(
        f'database = "{path}"\ntable = "t"\nqi = ["age", "state"]\nsensitive = "income"\n'
        f'k = 2\nl = 2\nkeep = ["job"]\nalgorithm = "mondrian"\noutput = "m"\n'
    )
    res = CliRunner().invoke(cli, ["run", str(spec), "--json"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(
        cli,
        [
            "anonymize",
            "t",
            "--qi",
            "age,state",
            "--sa",
            "income",
            "--keep",
            "job",
            "--k",
            "2",
            "--l",
            "2",
            "--algorithm",
            "mondrian",
            "--out",
            "m2",
            "--db",
            str(path),
        ],
    )
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(
        cli,
        [
            "check",
            "m2",
            "--qi",
            "age,state",
            "--sa",
            "income",
            "--k",
            "2",
            "--l",
            "2",
            "--db",
            str(path),
        ],
    )
    assert res.exit_code == 0, res.output
    d = Database.open(str(path))
    assert output_of(d, "m")["age"].tolist() == output_of(d, "m2")["age"].tolist()
    d.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tables(max_rows=80),
    st.integers(1, 5),
    st.integers(1, 3),
    st.booleans(),
    st.integers(1, 4),
    st.integers(0, 10_000),
)
def test_level_by_level_equals_part_by_part(case, k, l_value, with_hierarchy, n_groups, seed):
    """The level-by-level Mondrian (all parts of one depth cut at once, all groups at once)
    gives exactly the partitions, in the same order and with the rows in the same order, of
    the part-by-part recursion in each group: numeric, categorical and hierarchy QIs."""
    from anonsql.algorithms.mondrian.cuts import Spans, mondrian_groups, mondrian_part_by_part
    from anonsql.algorithms.mondrian.driver import make_checker
    from anonsql.data.points import Points
    from anonsql.hierarchy.hierarchy import Hierarchy
    from anonsql.models.goal import build_models
    from anonsql.spec import Spec

    df, _kinds = case
    qis = [c for c in df.columns if c.startswith("q")]
    hierarchies = [None] * len(qis)
    if with_hierarchy:
        df = df.assign(h=np.random.default_rng(seed).choice(list("abcde"), len(df)))
        qis.append("h")
        rows = [[v, "AB" if v in "ab" else "CDE", "*"] for v in "abcde"]
        hierarchies.append(Hierarchy.from_rows("h", rows))
    points = Points.from_frame(df, qis, hierarchies, "s")
    l_value = min(l_value, len(points.sens_labels))
    k = min(k, points.rows)
    checker = make_checker(points, build_models(Spec(qis=qis, sensitive="s", k=k, l=l_value), None))
    owner = np.random.default_rng(seed).integers(0, n_groups, len(points.counts))
    groups = [np.flatnonzero(owner == g) for g in range(n_groups)]
    spans = Spans.of(points)
    got = mondrian_groups(points, checker, groups, spans)
    expected = [p for g in groups for p in mondrian_part_by_part(points, checker, g, spans)]
    assert [p.tolist() for p in got] == [p.tolist() for p in expected]

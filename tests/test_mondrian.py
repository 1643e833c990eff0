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
from tests import brute

GOLDEN = pd.DataFrame(
    {
        "age": [25, 30, 35, 40, 45, 50, 55, 60],
        "state": ["CA", "CA", "MN", "MN", "TX", "TX", "CA", "MN"],
        "income": [100, 200, 100, 300, 200, 100, 300, 200],
        "job": ["G", "G", "N", "N", "G", "N", "G", "N"],
    }
)
#: GOLDEN's columns beside the QIs (age, state) and the sensitive income: job is released as is
GOLDEN_ROLES = {"keep": ["job"]}


def table_roles(qis: list[str]) -> dict:
    """The roles of a random table's other columns (:func:`tables`): the label y released as
    is, rid the test's row key. On a few random rows any column may be unique, so the QIs, y
    and rid may be published although they look like identifiers."""
    return {"keep": ["y", "rid"], "allow_identifying": [*qis, "y", "rid"]}


def _db(frame: pd.DataFrame, name: str = "t"):
    from anonsql.database import Database

    db = Database.open(":memory:")
    db.backend.write_frame(name, frame)
    return db


def _run(db, source="t", **kw):
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    kw.setdefault("output", "o")
    kw.setdefault("algorithm", "mondrian")
    return anonymize(db, source, Spec(**kw))


def _out(db, name="o") -> pd.DataFrame:
    out = db.backend.fetch_df(f"SELECT * FROM {name}")
    if "rid" in out.columns:  # the source's row order (a view's order is the engine's)
        out = out.sort_values("rid").reset_index(drop=True)
    return out


def test_golden_table_worked_by_hand():
    """k = 2, l = 2 over <age (numeric), state (categorical)>, income sensitive.

    Root: both QIs have normalized range 1 (age 35/35, state 2 of 2 steps); the tie goes to
    the first QI, age, cut at the weighted median (40): {25..40} | {45..60}, each with 3
    incomes. {25..40}: state is wider (1/2 > 15/35), cut CA | MN: {t1, t2} and {t3, t4}, 2
    incomes each; no further cut keeps 2 rows a side. {45..60}: state (3 values) is wider, cut
    at the median of CA(1) MN(1) TX(2): {CA, MN} | {TX}."""
    db = _db(GOLDEN)
    r = _run(db, qis=["age", "state"], sensitive="income", k=2, l=2, **GOLDEN_ROLES)
    out = _out(db)
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
    assert r.algorithm == "mondrian" and r.measures["classes"] == 4
    assert r.measures["min_class_size"] == 2 and r.metric == "ncp"
    # NCP by hand: age widths 5, 5, 5, 5 of 35; state 0, 0, 0 and 1 of 2 steps, 2 rows each
    assert r.score == pytest.approx((8 * 5 / 35 + 2 * 0.5) / 16)


@st.composite
def tables(draw, max_rows: int = 40):
    n = draw(st.integers(2, max_rows))
    m = draw(st.integers(1, 3))
    cols = {}
    kinds = []
    for j in range(m):
        if draw(st.booleans()):
            cols[f"q{j}"] = draw(st.lists(st.integers(0, 12), min_size=n, max_size=n))
            kinds.append("numeric")
        else:
            cols[f"q{j}"] = draw(st.lists(st.sampled_from("abcde"), min_size=n, max_size=n))
            kinds.append("categorical")
    cols["s"] = draw(st.lists(st.sampled_from(["x", "y", "z", "w"]), min_size=n, max_size=n))
    cols["y"] = draw(st.lists(st.sampled_from(["p", "q"]), min_size=n, max_size=n))
    cols["rid"] = list(range(n))
    return pd.DataFrame(cols), kinds


def _contains(kind: str, label: str, value) -> bool:
    from anonsql.algorithms.mondrian.release import members, midpoint

    if kind == "numeric":
        if label.startswith("["):
            lo, hi = (float(x) for x in label[1:-1].split(", "))
            return lo <= float(value) <= hi and lo < hi
        return float(label) == float(value) and midpoint(label) == float(value)
    return str(value) in members(label)


def check_release(df: pd.DataFrame, out: pd.DataFrame, qis, kinds, k, l_value) -> None:
    """The brute force every partitioning output is held to (rows in source order)."""
    assert len(out) == len(df)
    released = out[(out[qis] != "*").all(axis=1)]
    if len(released):
        assert (brute.k_values(released, qis) >= k).all()
        assert (brute.distinct_values(released, qis, "s") >= l_value).all()
    # equal QI tuples, equal release; each value inside its released interval or set
    pairs = pd.concat(
        [df[qis].astype(str).add_prefix("o_"), out[qis].add_prefix("g_")], axis=1
    ).drop_duplicates()
    assert not pairs.duplicated([f"o_{q}" for q in qis]).any()
    for q, kind in zip(qis, kinds, strict=True):
        for v, g in zip(df[q], out[q], strict=True):
            assert g == "*" or _contains(kind, g, v), (q, v, g)
    # the whole table satisfies the models: nothing is suppressed
    if len(df) >= k and df["s"].nunique() >= l_value:
        assert len(released) == len(df)


def _disjoint(a: str, b: str, kind: str) -> bool:
    from anonsql.algorithms.mondrian.release import members

    if kind == "numeric":

        def rng(x):
            return (
                tuple(float(v) for v in x[1:-1].split(", "))
                if x.startswith("[")
                else (float(x), float(x))
            )

        (a0, a1), (b0, b1) = rng(a), rng(b)
        return a1 < b0 or b1 < a0
    return not set(members(a)) & set(members(b))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(), st.integers(1, 4), st.integers(1, 3))
def test_mondrian_matches_brute_force(case, k, l_value):
    df, kinds = case
    qis = [c for c in df.columns if c.startswith("q")]
    if k > len(df) or l_value > df["s"].nunique():
        return  # rejected up front (tested below)
    db = _db(df)
    _run(db, qis=qis, sensitive="s", k=k, l=l_value, materialize="table", **table_roles(qis))
    out = _out(db)
    check_release(df, out, qis, kinds, k, l_value)
    # strict partitioning: two released classes are disjoint in some QI
    boxes = out[qis].drop_duplicates().to_numpy().tolist()
    for i in range(len(boxes)):
        for j in range(i):
            assert any(_disjoint(boxes[i][c], boxes[j][c], kinds[c]) for c in range(len(qis))), (
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
    db = _db(df)
    qis = ["age", "zip"]
    # rid: the test's row key, kept although unique
    _run(db, qis=qis, sensitive="s", k=4, l=2, keep=["rid"], allow_identifying=["rid"])
    assert (_out(db)["age"] != "*").all()
    # edits: rows deleted (classes shrink), a new tuple (no release), duplicates of a class
    db.backend.execute("DELETE FROM t WHERE rid % 7 = 0 OR (rid % 3 = 0 AND s = 'x')")
    db.backend.execute("INSERT INTO t VALUES (1000, 99, 'zz', 'x'), (1001, 18, 'a', 'x')")
    view = _out(db).sort_values("rid").reset_index(drop=True)
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
    db = _db(df)
    db.hierarchies.save(Hierarchy.from_rows("g", rows))
    r = _run(db, qis=["g", "n"], sensitive="s", k=4, l=2)
    out = _out(db)
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
    db = _db(df)
    r = _run(db, qis=["a", "b"], sensitive="s", k=3, l=2, l_variant="entropy-l", t=0.3)
    out = _out(db)
    assert (out["a"] != "*").all()
    assert (brute.entropy_values(out, ["a", "b"], "s") >= 2 - 1e-9).all()
    assert (brute.equal_emd_values(out, ["a", "b"], "s") <= 0.3 + 1e-9).all()
    assert r.measures["failing_rows"] == 0


def test_null_and_text_numbers():
    df = pd.DataFrame({"a": [1.5, 2.25, None, 4.0, 5.0, 6.0], "s": list("xyxyxy")})
    db = _db(df)
    with pytest.raises(InputError, match="NULL"):
        _run(db, qis=["a"], sensitive="s", k=2)
    r = _run(db, qis=["a"], sensitive="s", k=2, missing="suppress")
    out = _out(db)
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

    db = _db(GOLDEN)
    before = snapshot(db)
    kw = {"qis": ["age", "state"], "sensitive": "income", "k": 2, **GOLDEN_ROLES, **extra}
    with pytest.raises(InputError, match=message):
        _run(db, **kw)
    assert snapshot(db) == before


def test_every_surface(tmp_path):
    from click.testing import CliRunner

    import anonsql
    from anonsql.cli.main import cli

    # SQL statement
    con = anonsql.connect()
    con.database.backend.write_frame("t", GOLDEN)
    run = con.sql(
        "ANONYMIZE TABLE t INTO o WITH (k = 2, l = 2, qi = (age, state), sensitive = income, "
        "keep = (job), algorithm = 'mondrian')"
    )
    assert run.algorithm == "mondrian" and run.measures["classes"] == 4
    # Python API
    r = anonsql.anonymize(
        GOLDEN,
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
    db = _db(GOLDEN)
    db.close()
    from anonsql.database import Database

    d = Database.open(str(path))
    d.backend.write_frame("t", GOLDEN)
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
    assert _out(d, "m")["age"].tolist() == _out(d, "m2")["age"].tolist()
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

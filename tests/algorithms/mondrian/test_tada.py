"""TA_DA (seed 003): the (k, l)-compliant decision tree (Definition IV.1) and clustering
(Definition IV.2), Mondrian inside their groups, several data controllers; a hand-worked
golden table, brute force on random tables, bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonsql.algorithms.mondrian.driver import make_checker
from anonsql.data.points import Points
from anonsql.errors import InputError
from anonsql.models import DistinctLDiversity, KAnonymity
from tests.helpers import brute, papers
from tests.helpers.partition import (
    GOLDEN_ROLES,
    check_release,
    db_of,
    golden,
    output_of,
    run_on,
    table_roles,
    tables,
)


def test_golden_tree_and_release():
    """golden() (age, state; income sensitive; job the label), k = l = 2.

    Gains (bits): state splits into CA {G, G, G}, MN {N, N, N}, TX {G, N}: 1 - 2/8 = 0.75,
    split info H(3/8, 3/8, 2/8) = 1.561, ratio 0.480. The best allowable age threshold
    (<= 30: {G, G} | {N, N, G, N, G, N}) gains 0.311. The mean gain is 0.53, so only state
    competes on gain ratio: the root splits on state. CA and MN are pure; TX has two rows, so
    no child could keep k = 2. Tree: state -> CA (t1, t2, t7), MN (t3, t4, t8), TX (t5, t6).

    Mondrian per leaf: CA {25, 30, 55} cuts at the median into {25, 30} | {55}: the right
    half has one row, so the leaf is released whole, age [25, 55]; MN likewise [35, 60]; TX
    [45, 50]. State stays exact (plain Mondrian released {CA, MN} for t7 and t8)."""
    from anonsql.algorithms.mondrian.tree import compliant_tree

    pts = Points.from_frame(golden(), ["age", "state"], [None, None], "income", "job")
    checker = make_checker(pts, [KAnonymity(2), DistinctLDiversity(2)])
    tree = compliant_tree(pts, checker)
    assert (
        tree.qi == 1
        and tree.threshold is None
        and tree.gain_ratio == pytest.approx(0.75 / 1.5612781244591327)
    )
    leaves = [sorted(pts.domains[0][c] for c in pts.codes[leaf.rows, 0]) for leaf in tree.leaves()]
    assert sorted(leaves) == [["25", "30", "55"], ["35", "40", "60"], ["45", "50"]]
    db = db_of(golden())
    r = run_on(
        db, algorithm="tada", label="job", qis=["age", "state"], sensitive="income", k=2, l=2
    )
    out = output_of(db)
    want = papers.frame("tada", "golden_release.csv")
    assert sorted(zip(out["age"], out["state"], out["income"], strict=True)) == list(
        want.itertuples(index=False, name=None)
    )
    assert r.algorithm == "tada/classification" and r.measures["groups"] == 3


def _leaf_compliance(df, pts, tree, k, l_value):
    """Brute force of Definition IV.1 on the tree's leaves, which partition the rows and keep
    equal QI tuples together."""
    leaves = tree.leaves()
    seen = np.concatenate([leaf.rows for leaf in leaves])
    assert sorted(seen.tolist()) == list(range(len(pts.counts)))
    owner = {}
    for i, leaf in enumerate(leaves):
        rows = leaf.rows
        assert pts.counts[rows].sum() >= k
        assert len(set(pts.sens[rows].tolist())) >= l_value
        for t in pts.tuple_ids[rows]:
            assert owner.setdefault(int(t), i) == i


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(max_rows=50), st.integers(1, 4), st.integers(1, 3), st.integers(1, 2))
def test_tada_classification_matches_brute_force(case, k, l_value, controllers):
    from anonsql.algorithms.mondrian.tree import compliant_tree

    df, kinds = case
    qis = [c for c in df.columns if c.startswith("q")]
    if k > len(df) or l_value > df["s"].nunique():
        return
    pts = Points.from_frame(df, qis, [None] * len(qis), "s", "y")
    checker = make_checker(pts, [KAnonymity(k), DistinctLDiversity(l_value)])
    _leaf_compliance(df, pts, compliant_tree(pts, checker), k, l_value)
    db = db_of(df)
    run_on(
        db,
        algorithm="tada",
        label="y",
        qis=qis,
        sensitive="s",
        k=k,
        l=l_value,
        controllers=controllers,
        seed=3,
        **table_roles(qis),
    )
    out = output_of(db)
    if controllers == 1:
        check_release(df, out, qis, kinds, k, l_value)
    else:  # a controller's share may be too small for the models: its rows are suppressed
        released = out[(out[qis] != "*").all(axis=1)]
        if len(released):
            assert (brute.k_values(released, qis) >= k).all()
            assert (brute.distinct_values(released, qis, "s") >= l_value).all()
    db.close()


def test_merging_clusters_by_hand():
    """Three clusters on one feature: c0 = {0, 0} with sensitive {x, x} fails l = 2; c1 at
    -2 and c2 at +2 are equally near; c2 holds more distinct values (3 against 2), so c0
    joins c2 (seed 003: ties go to the most distinct sensitive values)."""
    from anonsql.algorithms.mondrian.clusters import merge_until_compliant

    df = pd.DataFrame(
        {
            "f": [0, 0, -2, -2, 2, 2, 2],
            "s": ["x", "x", "x", "y", "x", "y", "z"],
        }
    )
    pts = Points.from_frame(df, ["f"], [None], "s", features=["f"])
    checker = make_checker(pts, [KAnonymity(2), DistinctLDiversity(2)])
    rows = np.arange(len(pts.counts))
    vals = pts.domains[0]
    cluster = np.asarray([{"0": 0, "-2": 1, "2": 2}[vals[c]] for c in pts.codes[:, 0]])
    groups = merge_until_compliant(pts, rows, cluster, checker)
    got = sorted(
        sorted(int(vals[pts.codes[r, 0]]) for r in g for _ in range(pts.counts[r])) for g in groups
    )
    assert got == [[-2, -2], [0, 0, 2, 2, 2]]


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables(max_rows=40), st.integers(1, 3), st.integers(1, 3))
def test_tada_clustering_is_compliant(case, k, l_value):
    pytest.importorskip("k_means_constrained")
    from anonsql.algorithms.mondrian.clusters import compliant_clustering

    df, kinds = case
    qis = [c for c in df.columns if c.startswith("q")]
    if k > len(df) or l_value > df["s"].nunique():
        return
    feats = [c for c in df.columns if c not in ("s", "y", "rid")]
    pts = Points.from_frame(df, qis, [None] * len(qis), "s", features=feats)
    checker = make_checker(pts, [KAnonymity(k), DistinctLDiversity(l_value)])
    groups = compliant_clustering(pts, checker, k, seed=1)
    owner = {}
    assert sorted(np.concatenate(groups).tolist()) == list(range(len(pts.counts)))
    for i, g in enumerate(groups):  # Definition IV.2, equal QI tuples together
        assert pts.counts[g].sum() >= k and len(set(pts.sens[g].tolist())) >= l_value
        for t in pts.tuple_ids[g]:
            assert owner.setdefault(int(t), i) == i
    db = db_of(df)
    run_on(
        db,
        algorithm="tada",
        cluster=True,
        qis=qis,
        sensitive="s",
        k=k,
        l=l_value,
        **table_roles(qis),
    )
    check_release(df, output_of(db), qis, kinds, k, l_value)
    db.close()


def test_controllers_union_satisfies_the_models():
    rng = np.random.default_rng(11)
    n = 600
    df = pd.DataFrame(
        {
            "rid": np.arange(n),
            "age": rng.integers(18, 80, n),
            "zip": rng.choice(list("abcdefgh"), n),
            "s": rng.choice(["x", "y", "z"], n),
            "y": rng.choice(["p", "q"], n),
        }
    )
    db = db_of(df)
    qis = ["age", "zip"]
    roles = {"keep": ["rid", "y"], "allow_identifying": ["rid"]}  # rid: the test's row key
    for extra in ({"algorithm": "mondrian"}, {"algorithm": "tada", "label": "y"}):
        r = run_on(db, qis=qis, sensitive="s", k=5, l=2, controllers=3, seed=2, **roles, **extra)
        check_release(df, output_of(db), qis, ["numeric", "categorical"], 5, 2)
        assert r.algorithm.endswith("/3") and r.measures["failing_rows"] == 0


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({}, "needs the downstream task"),
        ({"label": "income"}, "cannot be the sensitive"),
        ({"label": "age"}, "cannot be a quasi-identifier"),
        ({"label": "nope"}, "nope"),
    ],
)
def test_tada_bad_input(extra, message):
    db = db_of(golden())
    with pytest.raises(InputError, match=message):
        run_on(
            db,
            algorithm="tada",
            qis=["age", "state"],
            sensitive="income",
            k=2,
            **GOLDEN_ROLES,
            **extra,
        )


def test_task_encodings_read_released_labels():
    """Seed 003 VI-B: intervals by their midpoint (standardized), sets multi-hot, a
    suppressed value all ones; VI-C: sets by the mean of their members' 1..n numbers."""
    from anonsql.evaluation.task import encode

    frame = pd.DataFrame({"age": ["[20, 30]", "40", "*"], "st": ["{CA, MN}", "TX", "*"]})
    x = encode(frame, ["age"], {"st": ["CA", "MN", "TX"]})
    ages = np.asarray([25.0, 40.0, 32.5])  # the suppressed age sits at the mean
    assert x[:, 0] == pytest.approx((ages - ages.mean()) / ages.std())
    assert x[:, 1:].tolist() == [[1, 1, 0], [0, 0, 1], [1, 1, 1]]
    ranks = np.asarray([1.5, 3.0, 2.25])
    y = encode(frame, [], {"st": ["CA", "MN", "TX"]}, "clustering")
    assert y[:, 0] == pytest.approx((ranks - ranks.mean()) / ranks.std())


def _same_tree(a, b) -> None:
    """The two trees are equal node for node: split QI, threshold or values, gain ratio (to
    the bit) and rows, children in order."""
    assert (a.qi, a.threshold, a.values, a.gain_ratio) == (
        b.qi,
        b.threshold,
        b.values,
        b.gain_ratio,
    )
    assert a.rows.tolist() == b.rows.tolist()
    assert len(a.children) == len(b.children)
    for x, y in zip(a.children, b.children, strict=True):
        _same_tree(x, y)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    tables(max_rows=120),
    st.integers(1, 5),
    st.integers(1, 3),
    st.sampled_from(["distinct-l", "entropy-l", "recursive-cl", "t"]),
    st.booleans(),
    st.integers(0, 10_000),
)
def test_level_by_level_tree_equals_node_by_node(case, k, l_value, variant, with_hierarchy, seed):
    """The tree grown level by level (every node of a depth scored and tested at once) is
    the tree grown one node at a time, node for node: numeric cuts (best gain first, the
    models tested on at most 16), multiway cuts of categorical and hierarchy QIs, the mean
    gain and gain ratio rules; under distinct, entropy and recursive l-diversity and
    t-closeness."""
    from anonsql.algorithms.mondrian.tree import TreeBuilder
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
    pts = Points.from_frame(df, qis, hierarchies, "s", "y")
    k = min(k, pts.rows)
    l_value = min(l_value, len(pts.sens_labels))
    goal = {"t": 0.3} if variant == "t" else {"l": l_value, "l_variant": variant}
    checker = make_checker(pts, build_models(Spec(qis=qis, sensitive="s", k=k, **goal), None))
    rows = np.flatnonzero(np.random.default_rng(seed).random(len(pts.counts)) < 0.8)
    for subset in (None, rows):
        _same_tree(
            TreeBuilder(pts, checker).grow(subset),
            TreeBuilder(pts, checker).grow_node_by_node(subset),
        )

"""GAA (seed 004): the same result as a brute-force implementation written from the paper,
and every output satisfies its model with every value an ancestor of the original."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonsql.algorithms.greedy.gaa import GreedyModel, gaa
from anonsql.algorithms.greedy.strategies import STRATEGIES
from anonsql.data.histogram import Histogram
from anonsql.errors import InputError
from tests.helpers import brute
from tests.helpers.strategies import anonymization_cases


def _library(df, hs, k, metric, strategy, l_value=None, t=None):
    qis = [h.name for h in hs]
    hist = Histogram.from_frame(df, qis, hs, "s")
    r = gaa(hist, GreedyModel(k, l_value, t), metric, strategy)
    # generalized (level, label) per original row, via the histogram rows
    out = {}
    labels = [[str(x) for x in df[q]] for q in qis]
    leaf_row = {}
    for r_i in range(len(hist.counts)):
        key = tuple(hs[j].labels[hist.codes[r_i, j]] for j in range(len(qis)))
        leaf_row.setdefault((key, hist.sens_labels[hist.sens[r_i]]), r_i)
    for i in range(len(df)):
        key = tuple(labels[j][i] for j in range(len(qis)))
        row = leaf_row[(key, str(df["s"].iloc[i]))]
        cls = r.row_class[row]
        out[i] = tuple(
            (int(hs[j].levels[r.nodes[cls, j]]), hs[j].labels[r.nodes[cls, j]])
            for j in range(len(qis))
        )
    return out, r


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    anonymization_cases(max_rows=24),
    st.integers(1, 5),
    st.sampled_from(["s1", "s2", "s3", "s4", "s5", "s6", "s7"]),
    st.sampled_from(["total", "ncp"]),
    st.sampled_from([None, "l", "t"]),
)
def test_gaa_matches_brute_force(case, k, strategy, metric, extra):
    df, hs = case
    k = min(k, len(df))
    qis = [h.name for h in hs]
    rows = [h.to_rows() for h in hs]
    l_value = 1.5 if extra == "l" else None
    t = 0.6 if extra == "t" else None
    try:
        mine, _ = _library(df, hs, k, metric, strategy, l_value, t)
    except InputError as e:
        assert "cannot satisfy" in str(e)
        return
    want = brute.gaa(df, qis, rows, k, metric, strategy, "s", l_value, t)
    assert mine == want
    # the model holds, by an independent groupby on the generalized table
    gen = df.copy()
    for j, q in enumerate(qis):
        gen[q] = [f"{mine[i][j][0]}:{mine[i][j][1]}" for i in range(len(df))]
    assert (brute.k_values(gen, qis) >= k).all()
    if l_value is not None:
        assert (brute.entropy_values(gen, qis, "s") >= l_value * (1 - 1e-9)).all()
    # every generalized value is an ancestor (or equal) of the original value
    for j, rws in enumerate(rows):
        for i in range(len(df)):
            level, label = mine[i][j]
            leaf = str(df[qis[j]].iloc[i])
            assert any(r[0] == leaf and r[level] == label for r in rws)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    anonymization_cases(max_rows=24),
    st.integers(1, 5),
    st.sampled_from(["s3", "s5", "s6", "s7"]),
)
def test_gaa_fast_paths_match_brute_force(case, k, strategy):
    """The sparse t_clo (large sensitive domains) and the costs of a few candidates only,
    forced on small tables, reach the brute force's tables too."""
    import anonsql.algorithms.greedy.gaa as gaa_module

    df, hs = case
    k = min(k, len(df))
    qis = [h.name for h in hs]
    saved = gaa_module.SPARSE_VALUES, gaa_module.SPARSE_MIN_CANDIDATES
    gaa_module.SPARSE_VALUES, gaa_module.SPARSE_MIN_CANDIDATES = 0, 1
    try:
        mine, _ = _library(df, hs, k, "ncp", strategy)
    finally:
        gaa_module.SPARSE_VALUES, gaa_module.SPARSE_MIN_CANDIDATES = saved
    assert mine == brute.gaa(df, qis, [h.to_rows() for h in hs], k, "ncp", strategy, "s")


def test_sparse_tclo_equals_the_l1_distance():
    """_Support's t_clo (twice the excess mass over the values present) is Definition 14's
    L1 distance of every merging, on random counts with many values."""
    import numpy as np

    from anonsql.algorithms.greedy.gaa import _Context, _Support, _tclo

    rng = np.random.default_rng(7)
    counts = rng.integers(0, 3, size=(40, 60)).astype(float) * (rng.random((40, 60)) < 0.1)
    counts[counts.sum(axis=1) == 0, 0] = 1.0
    sizes = counts.sum(axis=1)
    overall = counts.sum(axis=0) / counts.sum()
    support = _Support(counts)
    slot_of = np.arange(40)
    for s in (0, 7, 39):
        ctx = _Context(s, np.delete(np.arange(40), s), None, counts, sizes, 40, overall,
                       support=support, slot_of=slot_of)  # fmt: skip
        want = _tclo(counts + counts[s], sizes + sizes[s], overall)
        assert np.allclose(support.tclo(ctx), want, rtol=1e-12, atol=1e-15)


def test_strategies_registry_and_errors():
    assert set(STRATEGIES) == {"s1", "s2", "s3", "s4", "s5", "s6", "s7", "ldiv", "tclo"}
    import pandas as pd

    from anonsql.hierarchy.hierarchy import Hierarchy

    h = Hierarchy.from_rows("q", [["a", "*"], ["b", "*"]])
    hist = Histogram.from_frame(pd.DataFrame({"q": ["a", "b"]}), ["q"], [h])
    with pytest.raises(InputError, match="larger than the table"):
        gaa(hist, GreedyModel(3))
    with pytest.raises(InputError, match="unknown strategy"):
        gaa(hist, GreedyModel(2), strategy="s9")
    with pytest.raises(InputError, match="sensitive attribute"):
        gaa(hist, GreedyModel(2), strategy="s2")
    r = gaa(hist, GreedyModel(2))
    assert r.classes == 1 and r.nodes[0, 0] == h.root


#: the demo table's columns
CENSUS = ["age", "sex", "race", "marital_status", "education", "zip", "country", "occupation",
          "income"]  # fmt: skip


def _keep(qis, sensitive=None, columns=CENSUS):
    """The columns the test releases as they are: every one that is neither a QI nor the
    sensitive attribute (every column of an output has a role)."""
    return [c for c in columns if c not in qis and c != sensitive]


def _census(rows=1500):
    from anonsql.database import Database
    from anonsql.demo.setup import setup_demo

    db = Database.open(":memory:")
    setup_demo(db, rows=rows)
    return db


@pytest.mark.parametrize("strategy", ["s1", "s3", "s7"])
def test_greedy_output_in_place_satisfies_the_model(strategy):
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    db = _census()
    qis = ["age", "sex", "zip"]
    spec = Spec(qis=qis, k=4, t=0.9, t_variant="l1", sensitive="income", algorithm="greedy",
                strategy=strategy, output="g", materialize="table",
                keep=_keep(qis, "income"))  # fmt: skip
    r = anonymize(db, "census", spec)
    out = db.backend.fetch_df("SELECT * FROM g")
    src = db.backend.fetch_df("SELECT * FROM census")
    assert len(out) == len(src) and (brute.k_values(out, qis) >= 4).all()
    assert r.measures["t_clo"] <= 0.9 + 1e-9 and r.measures["min_class_size"] >= 4
    # a second run replaces the output and its recodings
    anonymize(db, "census", spec)
    runs = db.backend.fetchall("SELECT COUNT(DISTINCT run_id) FROM anonsql_recodings")
    assert runs == [(1,)]


def test_greedy_generalizes_each_row_to_an_ancestor():
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    db = _census(800)
    db.backend.execute("CREATE TABLE c AS SELECT row_number() OVER () AS rid, * FROM census")
    qis = ["age", "marital_status", "zip"]
    # rid is the test's row key: kept (and allowed, unique as it is) so that each output row
    # pairs with its source row
    keep = _keep(qis, columns=["rid", *CENSUS])
    anonymize(db, "c", Spec(qis=qis, k=6, algorithm="greedy", output="g", keep=keep,
                            allow_identifying=["rid"]))  # fmt: skip
    pairs = db.backend.fetch_df(
        "SELECT CAST(c.age AS VARCHAR) AS age, c.marital_status, c.zip, g.age AS g_age, "
        "g.marital_status AS g_marital_status, g.zip AS g_zip FROM c JOIN g USING (rid)"
    )
    assert len(pairs) == 800
    for q in qis:
        h = db.hierarchies.load(q)
        ok = {(r[0], lab) for r in h.to_rows() for lab in r}
        assert all((a, b) in ok for a, b in zip(pairs[q], pairs[f"g_{q}"], strict=True))


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"suppression": 0.05}, "suppression 0"),
        ({"l": 2, "sensitive": "income"}, "entropy-l"),
        ({"t": 0.3, "sensitive": "income"}, "t_variant l1"),
        ({"metric": "loss"}, "Mauger et al.'s metrics"),
        ({"strategy": "s2"}, "sensitive attribute"),
        ({"k": None, "l": 2, "l_variant": "entropy-l", "sensitive": "income"}, "needs k"),
    ],
)
def test_greedy_bad_input_changes_nothing(extra, message):
    from anonsql.run import anonymize
    from anonsql.spec import Spec
    from tests.helpers.snapshot import snapshot

    db = _census(300)
    before = snapshot(db)
    keep = _keep(["age", "sex"], extra.get("sensitive"))
    spec = Spec(**{"qis": ["age", "sex"], "k": 3, "algorithm": "greedy", "output": "g",
                   "keep": keep, **extra})  # fmt: skip
    with pytest.raises(InputError, match=message):
        anonymize(db, "census", spec)
    assert snapshot(db) == before


def test_greedy_through_sql_and_cli(tmp_path):
    import anonsql

    con = anonsql.connect()
    from anonsql.demo.setup import setup_demo

    setup_demo(con.database, rows=600)
    run = con.sql(
        "ANONYMIZE TABLE census INTO g WITH (k = 5, qi = (age, sex, zip), algorithm = 'greedy', "
        "strategy = 's2', sensitive = income, metric = 'total', "
        f"keep = ({', '.join(_keep(['age', 'sex', 'zip'], 'income'))}))"
    )
    assert run.algorithm == "greedy/s2" and run.metric == "total" and run.levels == {}
    k, _, suppressed = con.sql("FROM anonsql_k('g', ['age', 'sex', 'zip'])").fetchall()[0]
    assert k >= 5 and suppressed == 0


def test_report_of_a_greedy_run():
    from anonsql.evaluation.report import build_report, render_html
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    db = _census(500)
    spec = Spec(qis=["age", "sex"], k=5, algorithm="greedy", output="g", keep=_keep(["age", "sex"]))
    r = anonymize(db, "census", spec)
    report = build_report(db, r.run_id)
    assert min(c["size"] for c in report["class_sizes"]) >= 5
    assert sum(c["classes"] for c in report["class_sizes"]) == r.measures["classes"]
    assert "multidimensional recoding" in render_html(report)
    with pytest.raises(InputError, match="journalist risk needs"):
        build_report(db, r.run_id, population="census")

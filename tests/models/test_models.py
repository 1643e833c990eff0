"""Privacy models: seed 004's worked example, and numpy == SQL == brute force on random
tables."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonsql.data.classes import Partition
from anonsql.data.histogram import Histogram
from anonsql.database import Database
from anonsql.errors import InputError
from anonsql.evaluation.checks import check_table
from anonsql.hierarchy.hierarchy import Hierarchy
from anonsql.models import (
    DistinctLDiversity,
    EntropyLDiversity,
    EqualDistanceEMD,
    HierarchicalEMD,
    KAnonymity,
    L1Closeness,
    OrderedDistanceEMD,
    RecursiveCLDiversity,
)
from anonsql.models.compile import model_values_query
from anonsql.models.requirements import Requirements
from tests.helpers import brute, papers
from tests.helpers.strategies import anonymization_cases

# Seed 004, Table 1b: the 4-anonymous version of T (Gender fully generalized, Race Lion or
# Mammal) with its Disease column (tests/fixtures/papers/gaa/table1.csv)
_TABLE_1 = papers.frame("gaa", "table1.csv")
TABLE_1B = pd.DataFrame(
    {
        "Name": [f"P_{i}" for i in _TABLE_1["record"]],
        "Gender": _TABLE_1["ano_gender"],
        "Race": _TABLE_1["ano_race"],
        "Disease": _TABLE_1["disease"],
    }
)


def test_seed004_table1_k_ldiv_tclo():
    """Both classes hold 4 records; each has distribution (1/2, 1/4, 1/4), so
    l_div = exp(-(1/2 ln 1/2 + 2 * 1/4 ln 1/4)) = 2^(3/2); the table's distribution is
    (2, 1, 2, 1, 2)/8 and each class is at L1 distance 3/4 from it, so t_clo = 0.75."""
    db = Database.open(":memory:")
    db.backend.write_frame("t1b", TABLE_1B)
    ev = check_table(db, "t1b", ["Gender", "Race"], [KAnonymity(4), KAnonymity(5)], "Disease")
    assert [m.holds for m in ev.models] == [True, False]
    assert ev.models[0].min_value == 4
    want = papers.data("gaa", "worked_values.json")["table1b_classes"]
    assert ev.risk["l_div"] == pytest.approx(min(map(papers.number, want["l_div"])), abs=1e-12)
    assert ev.risk["t_clo"] == pytest.approx(max(map(papers.number, want["t_clo"])), abs=1e-12)
    # the Gender column is '*' but Race is not: those rows are not suppressed
    assert ev.suppressed_rows == 0


def _frame_stats(df, qis, hs, sensitive, levels, sens_h=None):
    hist = Histogram.from_frame(df, qis, hs, sensitive)
    part = Partition.from_histogram(hist, tuple(levels))
    req = Requirements([KAnonymity(1)], 0.0, sens_h)
    return hist, part, req.stats(part, hist)


def _sens_hierarchy():
    return Hierarchy.from_rows(
        "s",
        [
            ["a", "ab", "*"],
            ["b", "ab", "*"],
            ["c", "c", "*"],
            ["10", "num", "*"],
            ["2", "num", "*"],
        ],
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(anonymization_cases(), st.data())
def test_models_numpy_sql_and_brute_force_agree(case, data):
    df, hs = case
    qis = [h.name for h in hs]
    levels = [data.draw(st.integers(0, h.top_level)) for h in hs]
    sens_h = _sens_hierarchy()
    _, part, stats = _frame_stats(df, qis, hs, "s", levels, sens_h)
    gen = brute.generalize(df, qis, [h.to_rows() for h in hs], levels)
    key = [tuple(h.labels[n] for h, n in zip(hs, row, strict=True)) for row in part.nodes]

    db = Database.open(":memory:")
    db.backend.write_frame("g", gen)
    db.hierarchies.save(sens_h)
    cases = [
        (KAnonymity(2), brute.k_values(gen, qis)),
        (DistinctLDiversity(2), brute.distinct_values(gen, qis, "s")),
        (EntropyLDiversity(2), brute.entropy_values(gen, qis, "s")),
        (RecursiveCLDiversity(2, 2.0), brute.recursive_values(gen, qis, "s", 2)),
        (EqualDistanceEMD(0.3), brute.equal_emd_values(gen, qis, "s")),
        (L1Closeness(0.5), brute.l1_values(gen, qis, "s")),
        (OrderedDistanceEMD(0.3), brute.ordered_emd_values(gen, qis, "s")),
        (
            HierarchicalEMD(0.3, sens_h),
            brute.hierarchical_emd_values(gen, qis, "s", sens_h.to_rows()),
        ),
    ]
    for model, expected in cases:
        exp_by_key = {(k if isinstance(k, tuple) else (k,)): v for k, v in expected.items()}
        got = model.class_values(stats)
        want = np.array([exp_by_key[k] for k in key])
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, err_msg=model.name)
        sql_model = (
            HierarchicalEMD(model.t, db.hierarchies.pin("s"))
            if isinstance(model, HierarchicalEMD)
            else model
        )
        q = model_values_query(sql_model, "g", qis, "s", top_level=sens_h.top_level)
        sql = db.backend.fetch_df(q)
        sql_vals = sql["value"].astype(float).fillna(math.inf).to_numpy()
        expected_sorted = np.sort(np.array(list(exp_by_key.values()), dtype=float))
        np.testing.assert_allclose(
            np.sort(sql_vals), expected_sorted, rtol=1e-9, atol=1e-12, err_msg=f"SQL {model.name}"
        )
        ok_sql = int(sql["ok"].sum())
        assert ok_sql == int(model.passes(got).sum()), model.name
    db.close()


def test_model_parameters_are_validated():
    with pytest.raises(InputError, match="k must be"):
        KAnonymity(0)
    with pytest.raises(InputError, match=r"t must be a number in \[0, 1\]"):
        EqualDistanceEMD(1.5)
    with pytest.raises(InputError, match=r"t must be a number in \[0, 1\]"):
        L1Closeness(-0.1)
    with pytest.raises(InputError, match="l must be"):
        DistinctLDiversity(0)
    with pytest.raises(InputError, match="larger than the table"):
        KAnonymity(10).validate(5, None)
    with pytest.raises(InputError, match="distinct sensitive values in the whole table"):
        DistinctLDiversity(4).validate(100, 3)


def test_entropy_boundary_is_inclusive():
    # two values, one record each: entropy ln 2 exactly meets l = 2
    df = pd.DataFrame({"q": ["x", "x"], "s": ["a", "b"]})
    h = Hierarchy.from_rows("q", [["x", "*"]])
    _, _, stats = _frame_stats(df, ["q"], [h], "s", [0])
    assert EntropyLDiversity(2).check(stats).all()
    assert not EntropyLDiversity(2.0001).check(stats).any()

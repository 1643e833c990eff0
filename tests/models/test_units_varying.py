"""Privacy units whose rows hold several quasi-identifier tuples and sensitive values (README
"Privacy units", issue 28 item 2): a person who moved, several diagnoses. Every count is of
distinct units, held to a pandas brute force written from the definitions in
:mod:`anonsql.models.unit_requirements`, node by node over the whole lattice; the pruned search
to the exhaustive scan; the published view to the rows pandas releases."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonsql.database import Database
from anonsql.errors import InputError
from anonsql.evaluation.checks import evaluate_levels
from anonsql.hierarchy.hierarchy import Hierarchy
from anonsql.models import DistinctLDiversity, EntropyLDiversity, KAnonymity
from anonsql.models.t_closeness import EqualDistanceEMD
from anonsql.run import anonymize
from anonsql.spec import Spec
from tests.helpers.strategies import anonymization_cases

#: the model options of a run, and the same models for evaluate_levels
MODELS = {
    "k": ({}, lambda k: [KAnonymity(k)]),
    "distinct-l": ({"l": 2}, lambda k: [KAnonymity(k), DistinctLDiversity(2)]),
    "entropy-l": (
        {"l": 1.5, "l_variant": "entropy-l"},
        lambda k: [KAnonymity(k), EntropyLDiversity(1.5)],
    ),
    "t": ({"t": 0.3}, lambda k: [KAnonymity(k), EqualDistanceEMD(0.3)]),
}
VISIT = {"keep": ["visit"], "allow_identifying": ["visit"]}


def _visits(case: pd.DataFrame, owners: list[int], repeats: list[int]) -> pd.DataFrame:
    """Each row of ``case`` is a visit of person ``owners[i]`` (so a person holds the QI
    tuples and sensitive values of all their rows), repeated ``repeats[i]`` times."""
    out = case.assign(pid=[f"p{o}" for o in owners])
    out = out.loc[out.index.repeat(repeats)].reset_index(drop=True)
    return out.assign(visit=np.arange(len(out)))


def _classes(visits: pd.DataFrame, hs: list[Hierarchy], levels: tuple[int, ...]) -> pd.Series:
    """Each row's class at ``levels``: its generalized QI labels, joined."""
    cols = [pd.Series(h.generalize(visits[h.name], lv)) for h, lv in zip(hs, levels, strict=True)]
    return pd.concat(cols, axis=1).astype(str).agg("\x1f".join, axis=1)


def _unit_weights(frame: pd.DataFrame, by: list[str]) -> pd.Series:
    """Each unit weighs once within each group of ``by``, shared among its distinct values:
    the weight of every (group, value)."""
    held = frame[[*by, "pid", "s"]].drop_duplicates()
    share = 1.0 / held.groupby([*by, "pid"])["s"].transform("nunique")
    return share.groupby([held[c] for c in [*by, "s"]]).sum()


def _failing(visits: pd.DataFrame, cls: pd.Series, model: str, k: int, sa: str = "s") -> set[str]:
    """The classes failing the models on sensitive column ``sa``, brute force (every unit
    counted once)."""
    frame = visits.assign(c=cls, s=visits[sa])
    units = frame.groupby("c")["pid"].nunique()
    fail = set(units[units < k].index)
    if model == "distinct-l":
        vals = frame.groupby("c")["s"].nunique()
        fail |= set(vals[vals < 2].index)
    elif model == "entropy-l":
        # a value counts once per unit holding it
        holders = frame[["c", "s", "pid"]].drop_duplicates().groupby(["c", "s"]).size()
        for c, counts in holders.groupby(level=0):
            p = counts.to_numpy() / counts.sum()
            if -(p * np.log(p)).sum() < math.log(1.5) - 1e-9:
                fail.add(c)
    elif model == "t":
        overall = _unit_weights(frame.assign(all=0), ["all"]).droplevel(0)
        overall = overall / overall.sum()
        per = _unit_weights(frame, ["c"])
        for c, w in per.groupby(level=0):
            p = (w.droplevel(0) / w.sum()).reindex(overall.index, fill_value=0.0)
            if 0.5 * (p - overall).abs().sum() > 0.3 + 1e-9:
                fail.add(c)
    return fail


def _brute(visits, hs, levels, model, k, limit) -> tuple[bool, set[str], set[str]]:
    """Anonymous or not; the failing classes; the units with a suppressed row."""
    cls = _classes(visits, hs, levels)
    fail = _failing(visits, cls, model, k)
    gone = set(visits.loc[cls.isin(fail), "pid"])
    return len(gone) <= limit * visits["pid"].nunique() + 1e-9, fail, gone


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(anonymization_cases(max_qis=3, max_rows=14), st.data())
def test_units_of_several_tuples_against_brute_force(case, data):
    """Every node of the lattice: anonymous exactly when pandas says so, counting units.
    Flash equals the exhaustive scan (its pruning is sound for unit counts), and the view
    releases exactly the rows of the classes pandas lets through, each class holding at least
    k people, with at most the limit's share of people touched by suppression."""
    frame, hs = case
    qis = [h.name for h in hs]
    n = len(frame)
    people = data.draw(st.integers(1, max(1, n)))
    owners = data.draw(st.lists(st.integers(0, people - 1), min_size=n, max_size=n))
    repeats = data.draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    visits = _visits(frame, owners, repeats)
    k = data.draw(st.integers(1, 3))
    model = data.draw(st.sampled_from(sorted(MODELS)))
    limit = data.draw(st.sampled_from([0.0, 0.34, 1.0]))
    options, models = MODELS[model]
    db = Database.open(":memory:")
    db.backend.write_frame("visits", visits)
    for h in hs:
        db.hierarchies.save(h)
    base = dict(qis=qis, sensitive="s", k=k, suppression=limit, unit="pid",
                **options, **VISIT)  # fmt: skip
    try:
        try:
            evaluate_levels(db, "visits", qis, [0] * len(qis), models(k), "s", unit="pid")
        except InputError:  # parameters no table of these units meets: refused alike
            with pytest.raises(InputError):
                anonymize(db, "visits", Spec(**base, algorithm="flash", output="f"))
            return
        for levels in itertools.product(*[range(h.height) for h in hs]):
            ok, _, _ = _brute(visits, hs, levels, model, k, limit)
            ev = evaluate_levels(db, "visits", qis, list(levels), models(k), "s", limit, unit="pid")
            assert ev.anonymous == ok, (levels, ev)
        try:
            exhaustive = anonymize(db, "visits", Spec(**base, algorithm="exhaustive", output="e"))
        except InputError:
            with pytest.raises(InputError):
                anonymize(db, "visits", Spec(**base, algorithm="flash", output="f"))
            return
        flash = anonymize(db, "visits", Spec(**base, algorithm="flash", output="f"))
        assert flash.levels == exhaustive.levels
        assert flash.score == pytest.approx(exhaustive.score)
        levels = tuple(flash.levels[q] for q in qis)
        ok, fail, gone = _brute(visits, hs, levels, model, k, limit)
        assert ok
        out = db.backend.fetch_df("SELECT * FROM f ORDER BY visit")
        cls = _classes(visits, hs, levels)
        suppressed = (out[qis] == "*").all(axis=1).to_numpy()
        if not all(lv == h.top_level for lv, h in zip(levels, hs, strict=True)):
            # the view withholds exactly the rows of the failing classes
            assert (suppressed == cls.isin(fail).to_numpy()).all()
            assert set(visits.loc[suppressed, "pid"]) == gone
            assert flash.measures["suppressed_rows"] == len(gone)
        released = visits.loc[~cls.isin(fail)]
        if len(released):
            # the adversary who knows all of a person's QI tuples finds each of them in a
            # class of at least k people (the person's rows are not linkable in the output)
            assert released.groupby(cls[~cls.isin(fail)])["pid"].nunique().min() >= k
        assert flash.measures["units"] == visits["pid"].nunique()
    finally:
        db.close()


def _moved() -> Database:
    """Eight people in two zip areas; p1 moved from 10001 to 20003, p2 has two diagnoses."""
    zips = [f"1000{i}" for i in range(4)] + [f"2000{i}" for i in range(4)]
    h = Hierarchy.from_rows("zip", [[z, z[:4] + "*", "*"] for z in zips])
    rows = [
        ("10000", "p0", "flu"),
        ("10001", "p1", "flu"),
        ("20003", "p1", "flu"),
        ("10002", "p2", "flu"),
        ("10002", "p2", "asthma"),
        ("10003", "p3", "cold"),
        ("20000", "p4", "cold"),
        ("20001", "p5", "flu"),
        ("20002", "p6", "asthma"),
        ("20002", "p7", "cold"),
    ]
    visits = pd.DataFrame(rows, columns=["zip", "pid", "s"]).assign(visit=range(len(rows)))
    db = Database.open(":memory:")
    db.backend.write_frame("visits", visits)
    db.hierarchies.save(h)
    return db


def test_a_person_who_moved_counts_once_in_each_class():
    """At zip level 1, "1000*" holds p0..p3 (4 people) and "2000*" p1, p4..p7 (5 people):
    p1 counts in both, once each. k = 5 fails "1000*": p0..p3 are suppressed, and p1 with
    them (their row there is), 4 of 8 people, so a limit of 50% allows it and 40% does not
    (the root is then the optimum)."""
    db = _moved()
    at_one = [1], [KAnonymity(5)]
    assert not evaluate_levels(
        db, "visits", ["zip"], *at_one, suppression=0.4, unit="pid"
    ).anonymous
    assert evaluate_levels(db, "visits", ["zip"], *at_one, suppression=0.5, unit="pid").anonymous
    spec = dict(qis=["zip"], k=5, unit="pid", masks={"s": "drop"}, **VISIT)
    r = anonymize(db, "visits", Spec(**spec, suppression=0.4, output="o"))
    assert r.levels == {"zip": 2}
    r = anonymize(db, "visits", Spec(**spec, suppression=0.5, output="o", replace=True))
    assert r.levels == {"zip": 1}
    assert r.measures["units"] == 8 and r.measures["suppressed_rows"] == 4
    assert r.measures["min_class_size"] == 5 and r.measures["source_rows"] == 10
    out = db.backend.fetch_df("SELECT zip, visit FROM o ORDER BY visit")
    assert out["zip"].tolist() == ["*"] * 2 + ["2000*"] + ["*"] * 3 + ["2000*"] * 4
    db.close()


def test_a_unit_of_several_values_weighs_once():
    """p2 holds flu and asthma at 10002: for l-diversity each value counts once per person
    holding it; for t-closeness p2 weighs 1/2 on each. "1000*" = p0 flu, p1 flu, p2 {flu,
    asthma}, p3 cold: 3 values; shares flu 2.5/4, asthma 0.5/4, cold 1/4. The table (each
    person once): flu 3.5/8 (p0, p1, p5, half of p2), asthma 1.5/8, cold 3/8. Equal-distance
    EMD = (|0.625 - 0.4375| + |0.125 - 0.1875| + |0.25 - 0.375|) / 2 = 0.1875, exactly;
    "2000*" = p1 flu, p4 cold, p5 flu, p6 asthma, p7 cold: 0.0375."""
    db = _moved()
    ev = evaluate_levels(
        db, "visits", ["zip"], [1], [DistinctLDiversity(3), EqualDistanceEMD(0.19)], "s",
        unit="pid",
    )  # fmt: skip
    assert ev.anonymous and ev.models[0].min_value == 3
    assert ev.models[1].max_value == pytest.approx(0.1875)
    assert ev.models[1].min_value == pytest.approx(0.0375)
    # the same in SQL: check over the rows, counting units
    from anonsql.evaluation.checks import check_table

    db.backend.execute(
        "CREATE TABLE g AS SELECT CASE WHEN zip LIKE '1%' THEN '1000*' ELSE '2000*' END AS zip,"
        " pid, s FROM visits"
    )
    c = check_table(db, "g", ["zip"], [EqualDistanceEMD(0.19)], sensitive="s", unit="pid")
    assert c.models[0].max_value == pytest.approx(0.1875)
    assert c.models[0].min_value == pytest.approx(0.0375)
    db.close()


def test_the_guard_counts_shares_after_the_source_changes():
    """Published with t-closeness at zip level 1 (every class passes); p6 then gains many
    asthma visits: a person still weighs once, so "2000*"'s distribution does not move and
    nothing is withheld, where counting rows would have withheld the class."""
    db = _moved()
    spec = dict(qis=["zip"], k=2, t=0.35, sensitive="s", unit="pid", **VISIT)
    anonymize(db, "visits", Spec(**spec, output="o"))
    before = db.backend.fetch_df("SELECT zip FROM o ORDER BY visit")["zip"].tolist()
    for i in range(30):
        db.backend.execute(f"INSERT INTO visits VALUES ('20002', 'p6', 'asthma', {100 + i})")
    after = db.backend.fetch_df("SELECT zip FROM o WHERE visit < 100 ORDER BY visit")
    assert after["zip"].tolist() == before and "*" not in before
    db.close()


def test_what_units_of_several_tuples_refuse():
    """A risk threshold over all classes is not counted in such units: a one-line error
    before any write."""
    db = _moved()
    db.backend.execute("ALTER TABLE visits ADD COLUMN s2 VARCHAR DEFAULT 'x'")
    spec = dict(qis=["zip"], k=2, unit="pid", **VISIT, output="o")
    with pytest.raises(InputError, match="is not counted in units whose rows hold several"):
        anonymize(
            db, "visits", Spec(**spec, max_average_risk=0.5, masks={"s": "drop", "s2": "drop"})
        )
    assert not db.backend.relation_kind("o")
    db.close()


def test_units_of_several_tuples_on_server_engines_equal_duckdb(engine):
    """PostgreSQL and Spark: the same search over units of several tuples, the same view
    (counts of people, each weighing once in t-closeness), and the same after p6 gains 30
    asthma visits and p4 leaves."""
    db = _moved()
    frame = db.backend.fetch_df("SELECT * FROM visits")
    h = db.hierarchies.load("zip")
    spec = dict(qis=["zip"], k=3, t=0.3, sensitive="s", unit="pid", suppression=0.5, **VISIT)
    local = anonymize(db, "visits", Spec(**spec, output="o"))
    extra = pd.DataFrame(
        {"zip": ["20002"] * 30, "pid": ["p6"] * 30, "s": ["asthma"] * 30, "visit": range(100, 130)}
    )
    changed = pd.concat([frame, extra])
    changed = changed[changed["pid"] != "p4"]
    db.backend.execute("DELETE FROM visits")
    db.backend.write_frame("v2", changed)
    db.backend.execute("INSERT INTO visits SELECT * FROM v2")
    expected = db.backend.fetch_df("SELECT * FROM o ORDER BY visit")
    db.close()
    remote = engine()
    remote.backend.write_frame("visits", frame)
    remote.hierarchies.save(h)
    r = anonymize(remote, "visits", Spec(**spec, output="o"))
    assert r.levels == local.levels and r.measures == local.measures
    if engine.name == "spark":  # its tables take no DELETE: the source rewritten
        remote.backend.write_frame("visits", changed)
    else:
        remote.backend.execute("DELETE FROM visits")
        remote.backend.write_frame("v2", changed)
        remote.backend.execute("INSERT INTO visits SELECT * FROM v2")
    got = remote.backend.fetch_df("SELECT * FROM o ORDER BY visit")
    pd.testing.assert_frame_equal(
        expected.reset_index(drop=True), got.reset_index(drop=True), check_dtype=False
    )


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(anonymization_cases(max_qis=2, max_rows=12), st.data())
def test_several_sensitive_attributes_of_units_against_brute_force(case, data):
    """Two sensitive attributes, units of several records: each model holds on each
    attribute, counted per unit (ARX's semantics for several attributes), node by node."""
    frame, hs = case
    qis = [h.name for h in hs]
    n = len(frame)
    people = data.draw(st.integers(1, max(1, n)))
    owners = data.draw(st.lists(st.integers(0, people - 1), min_size=n, max_size=n))
    frame = frame.assign(s2=data.draw(st.lists(st.sampled_from("xyz"), min_size=n, max_size=n)))
    visits = _visits(frame, owners, [1] * n)
    k = data.draw(st.integers(1, 3))
    model = data.draw(st.sampled_from(["distinct-l", "t"]))
    limit = data.draw(st.sampled_from([0.0, 0.5]))
    from anonsql.models.goal import build_models

    db = Database.open(":memory:")
    db.backend.write_frame("visits", visits)
    for h in hs:
        db.hierarchies.save(h)
    options = MODELS[model][0]
    spec = Spec(qis=qis, sensitive=["s", "s2"], k=k, suppression=limit, unit="pid",
                **options, **VISIT, output="f")  # fmt: skip
    try:
        wrapped = build_models(spec, None)
        for levels in itertools.product(*[range(h.height) for h in hs]):
            cls = _classes(visits, hs, levels)
            fail = _failing(visits, cls, model, k, "s") | _failing(visits, cls, model, k, "s2")
            gone = set(visits.loc[cls.isin(fail), "pid"])
            ok = len(gone) <= limit * visits["pid"].nunique() + 1e-9
            try:
                ev = evaluate_levels(
                    db, "visits", qis, list(levels), wrapped, ["s", "s2"], limit, unit="pid"
                )
            except InputError:  # parameters no table of these units meets
                with pytest.raises(InputError):
                    anonymize(db, "visits", spec)
                return
            assert ev.anonymous == ok, (levels, ev)
        try:
            r = anonymize(db, "visits", spec)
        except InputError:
            return
        levels = tuple(r.levels[q] for q in qis)
        cls = _classes(visits, hs, levels)
        fail = _failing(visits, cls, model, k, "s") | _failing(visits, cls, model, k, "s2")
        out = db.backend.fetch_df("SELECT * FROM f ORDER BY visit")
        if not all(lv == h.top_level for lv, h in zip(levels, hs, strict=True)):
            suppressed = (out[qis] == "*").all(axis=1).to_numpy()
            assert (suppressed == cls.isin(fail).to_numpy()).all()
    finally:
        db.close()

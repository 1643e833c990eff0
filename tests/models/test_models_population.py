"""Population models (issue 13, section 2): delta-presence, k-map (against a population table
and estimated), and ARX's risk thresholds (average risk, sample and population uniqueness),
with the population-uniqueness estimators (Pitman, Zayatz, SNB, Dankar) and the k-map cell-size
estimators.

* the estimators against hand-computed cases and ARX's own test values on Adult;
* numpy (the search), the SQL of the view guard and an independent brute force agree on random
  tables, random population tables and random levels, also after edits of the source;
* monotonicity as each model's file states it, with a counterexample where it fails; the
  default search returns the exhaustive optimum with every new model;
* the CLI, spec files, SQL statements and the API take the options and refuse misplaced ones.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from scipy import optimize

import anonsql
from anonsql.algorithms.lattice.searches import Exhaustive, Flash
from anonsql.algorithms.recoding import LevelRecoding
from anonsql.cli.inspect import MODEL_FAILS
from anonsql.cli.main import cli
from anonsql.data.classes import Partition
from anonsql.data.histogram import Histogram
from anonsql.database import Database
from anonsql.errors import InputError
from anonsql.hierarchy.hierarchy import Hierarchy
from anonsql.metrics.population import (
    SizeHistogram,
    kmap_breakpoints,
    kmap_derived_k,
    pitman,
    population_size_of,
    population_uniqueness,
    snb,
    zayatz,
)
from anonsql.metrics.quality import quality_model
from anonsql.models import (
    AverageRisk,
    DeltaPresence,
    EstimatedKMap,
    KAnonymity,
    KMap,
    PopulationUniqueness,
    SampleUniqueness,
)
from anonsql.models.base import ClassStats
from anonsql.models.goal import build_models
from anonsql.models.requirements import Requirements
from anonsql.options import run_options
from anonsql.output.guard import Guard, guarded_query
from tests.helpers.data import SHARED_DATA
from tests.helpers.search import documented_optimum
from tests.helpers.strategies import anonymization_cases

ADULT = SHARED_DATA / "adult"


# -- the estimators ----------------------------------------------------------------------------
def test_kmap_derived_k_by_hand():
    """lambda = (1000 / 10000) 5 = 0.5. Poisson: P(X <= 0) = e^-0.5 = 0.607, P(X <= 1) = 0.910,
    P(X <= 2) = 0.986 >= 0.95 after ARX's counter reached 3: k' = 3 + 1 = 4. Zero-truncated:
    P(1) / (1 - P(0)) = 0.771, + P(2) / (1 - P(0)) = 0.963 >= 0.95 with the counter at 3:
    k' = 3."""
    e = math.exp(-0.5)
    k, err = kmap_derived_k(5, 1000, 10000, 0.05, "poisson")
    assert k == 4 and err == pytest.approx(1 - e * (1 + 0.5 + 0.125))
    k, err = kmap_derived_k(5, 1000, 10000, 0.05, "zero-truncated-poisson")
    assert k == 3 and err == pytest.approx(1 - (e * 0.5 + e * 0.125) / (1 - e))
    # certainty once the counter reaches k; capped at k and at the sample size
    assert kmap_derived_k(3, 1000, 1000, 0.0, "poisson") == (3, 0.0)
    assert kmap_derived_k(10, 2, 4, 0.05, "poisson")[0] == 2


def _arx_poisson_loop(k: int, n: int, population: float, significance: float) -> tuple:
    """ARX's calculateKPoisson as written there, one scalar probability per counter."""
    from scipy import special

    lam, threshold, value, counter = n / population * k, 1.0 - significance, 0.0, 0
    while value < threshold:
        value = float(special.pdtr(counter, lam))
        counter += 1
        if counter >= k:
            value = 1.0
            break
    return min(k, min(counter + 1, n)), 1.0 - value


@settings(max_examples=300, deadline=None)
@given(
    k=st.integers(1, 400),
    n=st.integers(1, 100_000),
    population=st.integers(1, 10**9),
    significance=st.sampled_from([0.0, 1e-9, 0.01, 0.05, 0.2, 0.5, 0.999, 1.0]),
)
def test_kmap_derived_k_in_blocks_is_arx_loop(k, n, population, significance):
    """The blocked Poisson loop gives the scalar loop's k' and error exactly, across block
    boundaries (k up to 400, counters past 64) and at the edges (k = 1, certainty)."""
    assume(n <= population)
    got = kmap_derived_k(k, n, float(population), significance, "poisson")
    assert got == _arx_poisson_loop(k, n, float(population), significance)


def test_kmap_breakpoints_for_a_large_k_are_the_arx_loop():
    """k = 1,000 in 300 million, what an estimated k-map view's SQL asks for (21 s of CPU
    one scalar probability at a time, 3 s in blocks): at a sample of the steps, the loop's
    k' is the step's at its last size and larger just after it."""
    steps = kmap_breakpoints(1000, 3e8, 0.05, "poisson")
    assert len(steps) > 100
    for top, d in steps[:: len(steps) // 40]:
        assert _arx_poisson_loop(1000, top, 3e8, 0.05)[0] == d
        assert _arx_poisson_loop(1000, top + 1, 3e8, 0.05)[0] > d


@pytest.mark.parametrize("estimator", ["poisson", "zero-truncated-poisson"])
def test_kmap_breakpoints_are_the_derived_k_of_every_size(estimator):
    population = 5000.0
    steps = kmap_breakpoints(8, population, 0.05, estimator)
    for n in range(1, 5001, 7):
        want = kmap_derived_k(8, n, population, 0.05, estimator)[0]
        got = next((d for top, d in steps if n <= top), 8)
        assert got == want, n


def test_zayatz_by_hand():
    """Classes of sizes 1, 1, 2, 3 (n = 7, u = 4) in N = 20: with H(i) = P(one success in 7
    draws from 20 holding i), U = c1 * ((2/4) H(1) / sum_i (c_i/4) H(i)) / (7 / 20)."""

    def h(i: int) -> float:
        return math.comb(i, 1) * math.comb(20 - i, 6) / math.comb(20, 7)

    p = (2 / 4) * h(1) / ((2 / 4) * h(1) + (1 / 4) * h(2) + (1 / 4) * h(3))
    got = zayatz(SizeHistogram.of(np.array([1, 1, 2, 3])), 20)
    assert got == pytest.approx(2 * p / (7 / 20), rel=1e-12)


def test_pitman_solves_the_likelihood_equations():
    """An independent solve of Pitman's likelihood equations in their summed form (Hoshino
    2001; ARX's iterative master function) gives the same estimate."""
    sizes = np.array([1] * 30 + [2] * 10 + [3] * 5 + [5] * 3)
    u, n, big_n = len(sizes), int(sizes.sum()), 1000

    def eqs(x):
        t, a = x
        o1 = sum(1 / (t + i * a) for i in range(1, u))
        o3 = sum(i / (t + i * a) for i in range(1, u))
        o2 = sum(1 / (t + i) for i in range(1, n))
        o4 = sum(sum(1 / (j - a) for j in range(1, k)) for k in sizes if k > 1)
        return [o1 - o2, o3 - o4]

    t, a = optimize.fsolve(eqs, [10.0, 0.5], xtol=1e-13)
    want = math.exp(math.lgamma(t + 1) - math.lgamma(t + a)) * big_n**a
    assert pitman(SizeHistogram.of(sizes), big_n) == pytest.approx(want, rel=1e-6)


def test_snb_non_empty_cells_and_roots_as_arx_writes_them():
    """SNB's estimate is K b^a at a root of ARX's two equations (as ARX writes them)."""
    sizes = np.array([1] * 300 + [2] * 100 + [4] * 50)
    big_n = int(sizes.sum())  # f = 1: every class is its population class
    got = snb(SizeHistogram.of(sizes), big_n)
    # with f = 1, ARX's K is the number of classes and (1 - f) = 0 makes the first equation
    # K b^a - c1 = 0: the estimate equals the sample uniques
    assert got == pytest.approx(300, rel=1e-6)


def test_dankar_rule():
    sizes = np.array([1] * 30 + [2] * 10 + [3] * 5 + [5] * 3)
    n = int(sizes.sum())
    low = population_uniqueness(sizes, n / 0.05, "dankar")  # f <= 0.1: Pitman
    assert low.chosen == "pitman"
    assert low.uniques == pytest.approx(population_uniqueness(sizes, n / 0.05, "pitman").uniques)
    high = population_uniqueness(sizes, n / 0.5, "dankar")  # f > 0.1: min(Zayatz, SNB)
    z = population_uniqueness(sizes, n / 0.5, "zayatz").uniques
    s = population_uniqueness(sizes, n / 0.5, "snb").uniques
    assert high.uniques == pytest.approx(min(z, s) if s > 0 else z)
    # no sample unique: no population unique
    assert population_uniqueness(np.array([2, 3]), 100, "dankar").uniques == 0


@pytest.mark.skipif(not ADULT.is_dir(), reason=f"{ADULT} not found")
def test_estimators_match_arx_on_adult():
    """ARX 3.9's TestRiskMetrics.testDecisionRule2: Adult, every attribute a QI, Dankar's rule
    at sampling fractions 0.1, 0.2, 0.01 and 1 (ARX compares four decimals)."""
    df = pd.read_csv(ADULT / "adult.csv", sep=";", dtype=str)
    sizes = df.groupby(list(df.columns)).size().to_numpy()
    n = int(sizes.sum())
    arx = {0.1: 0.27684993883653597, 0.2: 0.3577099234829125, 0.01: 0.1446083531167384}
    arx[1.0] = 0.5142895033485844
    for f, want in arx.items():
        got = population_uniqueness(sizes, population_size_of(n, f), "dankar")
        assert got.share == pytest.approx(want, abs=1e-9), f
    # at 0.1 ARX's rule took Pitman, whose value (and Zayatz's) it states
    assert population_uniqueness(sizes, population_size_of(n, 0.1), "pitman").share == (
        pytest.approx(0.27684993883653597, abs=1e-9)
    )
    zay = population_uniqueness(sizes, population_size_of(n, 0.1), "zayatz").share
    assert zay == pytest.approx(0.3207402393466189, abs=1e-9)


# -- models: definitions and monotonicity --------------------------------------------------------
def test_delta_presence_values_and_bounds():
    m = DeltaPresence(0.2, 0.5, "pop")
    stats = ClassStats(np.array([1, 5, 2, 3]), population=np.array([5, 10, 4, 0]))
    values = m.class_values(stats)
    assert values[:3].tolist() == [0.2, 0.5, 0.5] and values[3] == np.inf
    assert m.passes(values).tolist() == [True, True, True, False]
    with pytest.raises(InputError, match="must not exceed"):
        DeltaPresence(0.6, 0.5, "pop")


def test_delta_presence_population_only_classes_fail_the_node():
    """The old counterexample to monotonicity (testing released classes only): a subset of 1
    ``v0`` in a population of 3 ``v0`` and 1 ``v1``. Released ``v0`` passes delta_min = 0.3
    (1/3), but the population-only class ``v1`` (delta 0) fails, so level 0 is not anonymous,
    at any suppression limit; the generalization (1/4) fails too, and is anonymous only by
    suppressing its one class. With delta_min = 0 level 0 passes."""
    m = DeltaPresence(0.3, 1.0, "pop")
    assert m.monotone_without_suppression and m.tests_unreleased
    assert not DeltaPresence(0.0, 0.5, "p").tests_unreleased
    h = Hierarchy.from_rows("q", [["v0", "*"], ["v1", "*"]])
    hist = Histogram.from_frame(pd.DataFrame({"q": ["v0"]}), ["q"], [h])
    population = Histogram.from_frame(pd.DataFrame({"q": ["v0"] * 3 + ["v1"]}), ["q"], [h])
    for limit in (0.0, 1.0):
        req = Requirements([m], limit, population=population)
        bottom = req.assess(Partition.from_histogram(hist, (0,)), hist)
        assert not bottom.anonymous and bottom.suppressed_rows == hist.rows
        top = req.assess(Partition.from_histogram(hist, (1,)), hist)
        assert top.anonymous == (limit == 1.0) and top.suppressed_rows == 1
        want = None if limit == 0 else (1,)
        for search in (Flash(), Exhaustive()):
            got = search.run(hist, req, quality_model("height")).optimum
            assert (got.levels if got else None) == want
    req = Requirements([DeltaPresence(0.0, 1.0, "pop")], 0.0, population=population)
    assert req.assess(Partition.from_histogram(hist, (0,)), hist).anonymous


def _lattice_verdicts(hist, req) -> dict[tuple, bool]:
    from itertools import product

    return {
        lv: req.assess(Partition.from_histogram(hist, lv), hist).anonymous
        for lv in product(*[range(h) for h in hist.heights])
    }


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.data(),
    anonymization_cases(max_qis=3, max_rows=30),
    st.sampled_from([0.05, 0.2, 0.3, 0.5]),
    st.sampled_from([0.5, 0.8, 1.0]),
)
def test_delta_presence_monotone_without_suppression(data, case, d_min, d_max):
    """Without suppression, with population-only classes tested: an anonymous node makes
    every generalization anonymous (hence a non-anonymous one every specialization
    non-anonymous), for every delta_min; and a node with a failing population-only class
    makes every specialization fail at any limit."""
    df, hs = case
    population = data.draw(with_population(case))
    qis = [h.name for h in hs]
    hist = Histogram.from_frame(df, qis, hs)
    pop = Histogram.from_frame(population, qis, hs)
    req = Requirements([DeltaPresence(d_min, d_max, "pop")], 0.0, population=pop)
    assert req.monotone(hist.rows)
    verdicts = _lattice_verdicts(hist, req)
    for lv, anonymous in verdicts.items():
        if anonymous:
            for other, ok in verdicts.items():
                if all(o >= x for o, x in zip(other, lv, strict=True)):
                    assert ok, (lv, other)
    every = Requirements([DeltaPresence(d_min, d_max, "pop")], 1.0, population=pop)
    for lv in verdicts:
        stats = every.stats(Partition.from_histogram(hist, lv), hist)
        if every.unreleasable(stats):
            for other in verdicts:
                if all(o <= x for o, x in zip(other, lv, strict=True)):
                    part = Partition.from_histogram(hist, other)
                    assert every.unreleasable(every.stats(part, hist)), (lv, other)
                    assert not every.assess(part, hist).anonymous


def test_delta_presence_not_monotone_with_suppression():
    """delta_max = 0.5: 1 of 10 passes, 10 of 10 fails, their union 11 of 20 fails.
    delta_min = 0.2: 1 of 20 fails, 3 of 10 passes, their union 4 of 30 fails. On a lattice:
    the node holding both classes is anonymous for a limit of the failing class's records,
    its generalization merging them is not."""
    m = DeltaPresence(0.0, 0.5, "pop")
    parts = ClassStats(np.array([1, 10]), population=np.array([10, 10]))
    union = ClassStats(np.array([11]), population=np.array([20]))
    assert m.check(parts).tolist() == [True, False]
    assert m.check(union).tolist() == [False]
    assert not DeltaPresence.monotone_with_suppression
    m = DeltaPresence(0.2, 1.0, "pop")
    parts = ClassStats(np.array([1, 3]), population=np.array([20, 10]))
    union = ClassStats(np.array([4]), population=np.array([30]))
    assert m.check(parts).tolist() == [False, True]
    assert m.check(union).tolist() == [False]
    h = Hierarchy.from_rows("q", [["v0", "*"], ["v1", "*"]])
    hist = Histogram.from_frame(pd.DataFrame({"q": ["v0"] + ["v1"] * 3}), ["q"], [h])
    pop = Histogram.from_frame(pd.DataFrame({"q": ["v0"] * 20 + ["v1"] * 10}), ["q"], [h])
    req = Requirements([m], 1 / 4, population=pop)
    node = req.assess(Partition.from_histogram(hist, (0,)), hist)
    assert node.anonymous and node.suppressed_rows == 1
    assert not req.assess(Partition.from_histogram(hist, (1,)), hist).anonymous
    assert not req.monotone(hist.rows)
    assert Flash().run(hist, req, quality_model("height")).optimum.levels == (0,)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 9), st.integers(0, 9)), min_size=2, max_size=4))
def test_union_of_passing_classes_passes(parts):
    """Without suppression: delta-presence (the mediant of the deltas) and k-map (sums)."""
    sizes = np.array([s for s, _ in parts])
    pop = np.array([s + extra for s, extra in parts])
    union = ClassStats(np.array([sizes.sum()]), population=np.array([pop.sum()]))
    for m in (DeltaPresence(0.25, 0.6, "p"), KMap(6, "p")):
        if m.check(ClassStats(sizes, population=pop)).all():
            assert m.check(union).all()
    # k-map is monotone with suppression: a union passes when one part does
    if KMap(6, "p").check(ClassStats(sizes, population=pop)).any():
        assert KMap(6, "p").check(union).all()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=2, max_size=8), st.data())
def test_table_measures_do_not_grow_when_classes_merge(sizes, data):
    """Average risk and sample uniqueness are monotone without suppression."""
    sizes = np.array(sizes)
    i, j = data.draw(st.lists(st.integers(0, len(sizes) - 1), min_size=2, max_size=2, unique=True))
    merged = np.concatenate([np.delete(sizes, [i, j]), [sizes[i] + sizes[j]]])
    for m in (AverageRisk(0.5), SampleUniqueness(0.5)):
        assert m.measure(merged) <= m.measure(sizes) + 1e-12


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(1, 6), min_size=2, max_size=8),
    st.data(),
    st.sampled_from([0.1, 0.2, 0.3, 0.5]),
    st.integers(1, 3),
)
def test_table_thresholds_monotone_with_suppression(sizes, data, tau, k):
    """With k-anonymity, a generalization (classes merged) never suppresses more for average
    risk or sample uniqueness than the node (module docstring's argument)."""
    sizes = np.array(sizes)
    groups = np.array(data.draw(st.lists(st.integers(0, len(sizes) - 1), min_size=len(sizes),
                                         max_size=len(sizes))))  # fmt: skip
    merged = np.bincount(groups, sizes)
    merged = merged[merged > 0]
    for m in (AverageRisk(tau), SampleUniqueness(tau)):

        def suppressed(s, m=m):
            kept = np.sort(s[s >= k])
            return s[s < k].sum() + kept[: m.suppress_count(kept)].sum()

        assert suppressed(merged) <= suppressed(sizes)


def test_population_uniqueness_not_monotone_with_suppression():
    """Zayatz, N = 100, threshold 0.05: classes 5, 5, 1, 1, 1 meet it after suppressing one
    unique (0.041); the generalization merging the two 5s (10, 1, 1, 1) needs two (0.063
    after one)."""
    h = Hierarchy.from_rows(
        "q",
        [["v0", "g0", "*"], ["v1", "g0", "*"], ["v2", "g2", "*"], ["v3", "g3", "*"],
         ["v4", "g4", "*"]],
    )  # fmt: skip
    df = pd.DataFrame({"q": ["v0"] * 5 + ["v1"] * 5 + ["v2", "v3", "v4"]})
    hist = Histogram.from_frame(df, ["q"], [h])
    m = PopulationUniqueness(0.05, "zayatz", population_size=100)
    req = Requirements([m], 1 / len(df))
    req.validate(hist)
    assert not req.monotone(hist.rows)
    node = req.assess(Partition.from_histogram(hist, (0,)), hist)
    generalization = req.assess(Partition.from_histogram(hist, (1,)), hist)
    assert node.anonymous and node.suppressed_rows == 1
    assert not generalization.anonymous
    assert m.measure(np.array([5, 5, 1, 1])) == pytest.approx(0.0407, abs=1e-4)
    assert m.measure(np.array([10, 1, 1])) == pytest.approx(0.0629, abs=1e-4)
    # the default search still finds [0]
    exact = Flash().run(hist, req, quality_model("height"))
    assert exact.optimum is not None and exact.optimum.levels == (0,)


def test_population_uniqueness_fails_without_an_estimate():
    """ARX: an estimate of 0 with sample uniques left fails; no sample unique holds."""
    m = PopulationUniqueness(0.5, "snb", population_size=1000)
    sizes = np.array([1, 2, 2, 3])
    if population_uniqueness(sizes, 1000, "snb").share == 0:
        assert not m.holds(sizes)
    assert m.holds(np.array([2, 3]))
    assert m.holds(np.array([], dtype=float))


# -- numpy, SQL (guard) and brute force -----------------------------------------------------------
def _labels(df: pd.DataFrame, hs: list[Hierarchy], levels) -> pd.DataFrame:
    out = pd.DataFrame(index=df.index)
    for h, lv in zip(hs, levels, strict=True):
        rows = {r[0]: r[lv] for r in h.to_rows()}
        out[h.name] = df[h.name].map(
            lambda v, rows=rows: rows.get(v) if isinstance(v, str) else None
        )
    return out


def _brute_release(sample, population, hs, levels, models) -> pd.Series:
    """Per sample row: released (True) or suppressed, from the definitions: classes of the
    known rows, each class's population count, the per-class tests, then the table-level
    thresholds by suppressing the smallest released classes first (ties: node ids), the
    population-uniqueness threshold through sample uniqueness, as the guard documents."""
    qis = [h.name for h in hs]
    lab = _labels(sample, hs, levels)
    known = lab.notna().all(axis=1)
    keys = lab[known].apply(tuple, axis=1)
    sizes = keys.value_counts()
    plab = _labels(population, hs, levels)
    pkeys = plab[plab.notna().all(axis=1)].apply(tuple, axis=1)
    pop = pkeys.value_counts()
    ok = {}
    for key, size in sizes.items():
        p = int(pop.get(key, 0))
        good = True
        for m in models:
            if isinstance(m, KAnonymity):
                good &= size >= m.k
            elif isinstance(m, KMap):
                good &= p >= m.k
            elif isinstance(m, DeltaPresence):
                good &= p > 0 and m.delta_min - 1e-9 <= size / p <= m.delta_max + 1e-9
            elif isinstance(m, EstimatedKMap):
                good &= size >= m.derived_k(int(known.sum()))
        ok[key] = bool(good)
    # a population class without sample rows has delta 0: with delta_min > 0 it fails, and
    # as it releases nothing, the whole release is withheld
    lower = any(isinstance(m, DeltaPresence) and m.delta_min > 1e-9 for m in models)
    if lower and set(pop.index) - set(sizes.index):
        ok = dict.fromkeys(ok, False)
    tables = [m for m in models if m.table_level]
    if tables:

        def node_ids(key):
            return tuple(h.node(label, lv) for h, label, lv in zip(hs, key, levels, strict=True))

        released = sorted((k for k in ok if ok[k]), key=lambda k: (sizes[k], node_ids(k)))

        def holds(rest) -> bool:
            s = np.array([sizes[k] for k in rest], dtype=float)
            n = s.sum()
            if n == 0:
                return True
            for m in tables:
                value = len(s) / n if isinstance(m, AverageRisk) else (s == 1).sum() / n
                if value > m.threshold:
                    return False
            return True

        j = 0
        while not holds(released[j:]):
            j += 1
        for k in released[:j]:
            ok[k] = False
    del qis
    return pd.Series(
        [bool(known[i]) and ok[keys[i]] for i in sample.index], index=sample.index, dtype=bool
    )


@st.composite
def population_models(draw):
    models = []
    if draw(st.booleans()):
        models.append(KAnonymity(draw(st.integers(1, 3))))
    pool = {
        "delta-presence": lambda: DeltaPresence(
            draw(st.sampled_from([0.0, 0.2, 0.3])), draw(st.sampled_from([0.5, 0.7, 1.0])), "pop"
        ),
        "k-map": lambda: KMap(draw(st.integers(2, 6)), "pop"),
        "k-map-estimated": lambda: EstimatedKMap(
            draw(st.integers(2, 6)),
            draw(st.sampled_from(["poisson", "zero-truncated-poisson"])),
            0.05,
            population_size=draw(st.sampled_from([60, 200, 1000])),
        ),
        "average-risk": lambda: AverageRisk(draw(st.sampled_from([0.2, 0.35, 0.5, 0.8]))),
        "sample-uniqueness": lambda: SampleUniqueness(draw(st.sampled_from([0.0, 0.1, 0.3]))),
    }
    names = draw(st.lists(st.sampled_from(sorted(pool)), min_size=1, max_size=2, unique=True))
    return models + [pool[n]() for n in names]


@st.composite
def with_population(draw, case):
    """The sample's rows plus 0..30 more drawn from the hierarchies' leaves."""
    df, hs = case
    extra = draw(st.integers(0, 30))
    rows = {h.name: draw(st.lists(st.sampled_from(h.leaf_labels), min_size=extra, max_size=extra))
            for h in hs}  # fmt: skip
    return pd.concat([df[[h.name for h in hs]], pd.DataFrame(rows)], ignore_index=True)


def _setup(sample, population, hs):
    db = Database.open(":memory:")
    keys = [db.hierarchies.pin(db.hierarchies.save(h).name) for h in hs]
    db.backend.write_frame("t", sample.astype(object).where(sample.notna(), None))
    db.backend.write_frame("pop", population)
    return db, keys


@settings(max_examples=45, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), anonymization_cases(max_qis=3, max_rows=40), population_models())
def test_numpy_guard_and_brute_force_agree(data, case, models):
    df, hs = case
    population = data.draw(with_population(case))
    levels = [data.draw(st.integers(0, h.top_level)) for h in hs]
    qis = [h.name for h in hs]
    sample = df.copy()
    sample["rid"] = range(len(sample))
    db, keys = _setup(sample, population, hs)
    guard = Guard(models, population="pop" if any(m.needs_population for m in models) else None)
    rec = LevelRecoding(keys, levels)
    # the classes keyed by their node ids, or by one packed key (as published)
    widths = data.draw(st.sampled_from([None, [h.size for h in hs]]))
    query = guarded_query("duckdb", "t", [*qis, "rid"], qis, rec, guard, flag=True, widths=widths)
    got = db.backend.fetch_df(query).set_index("rid").sort_index()
    released = ~got["__suppressed"].astype(bool)
    want = _brute_release(sample.set_index("rid"), population, hs, levels, models)
    assert released.tolist() == want.sort_index().tolist(), (levels, [m.describe() for m in models])
    # numpy: the search's assessment of the same node suppresses the same rows
    hist = Histogram.from_frame(df, qis, hs)
    req = Requirements(models, 1.0)
    req.population = Histogram.from_frame(population, qis, hs)
    try:
        req.validate(hist)
    except InputError:
        assume(False)  # k larger than the table
    part = Partition.from_histogram(hist, tuple(levels))
    a = req.assess(part, hist)
    assert a.suppressed_rows == int((~want).sum())
    # anonymous at a limit: within it, and no population-only class failing delta-presence
    limit = data.draw(st.sampled_from([0.0, 0.1, 0.3, 1.0]))
    plab = _labels(population, hs, levels)
    pkeys = set(plab[plab.notna().all(axis=1)].apply(tuple, axis=1))
    lab = _labels(df, hs, levels)
    keys = set(lab[lab.notna().all(axis=1)].apply(tuple, axis=1))
    lower = any(isinstance(m, DeltaPresence) and m.delta_min > 1e-9 for m in models)
    brute = (~want).sum() <= limit * len(df) and not (lower and pkeys - keys)
    at_limit = Requirements(models, limit, population=req.population)
    assert at_limit.assess(part, hist).anonymous == brute


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), anonymization_cases(max_qis=3, max_rows=30), population_models())
def test_guard_follows_edits_of_source_and_population(data, case, models):
    df, hs = case
    population = data.draw(with_population(case))
    levels = [data.draw(st.integers(0, h.top_level)) for h in hs]
    qis = [h.name for h in hs]
    sample = df.copy()
    sample["rid"] = range(len(sample))
    db, keys = _setup(sample, population, hs)
    guard = Guard(models, population="pop" if any(m.needs_population for m in models) else None)
    rec = LevelRecoding(keys, levels)
    # the classes keyed by their node ids, or by one packed key (as published)
    widths = data.draw(st.sampled_from([None, [h.size for h in hs]]))
    query = guarded_query("duckdb", "t", [*qis, "rid"], qis, rec, guard, flag=True, widths=widths)
    # edit both tables after the query was built: delete sample rows, add population rows
    drop = data.draw(st.lists(st.sampled_from(list(sample.index)), max_size=5, unique=True))
    sample = sample.drop(index=drop)
    more = data.draw(st.integers(0, 10))
    add = {h.name: data.draw(st.lists(st.sampled_from(h.leaf_labels), min_size=more,
                                      max_size=more)) for h in hs}  # fmt: skip
    population = pd.concat([population, pd.DataFrame(add)], ignore_index=True)
    # write_frame replaces a table: the query built before reads the new rows
    db.backend.write_frame("t", sample.astype(object).where(sample.notna(), None))
    db.backend.write_frame("pop", population)
    got = db.backend.fetch_df(query).set_index("rid").sort_index()
    want = _brute_release(sample.set_index("rid"), population, hs, levels, models)
    assert (~got["__suppressed"].astype(bool)).tolist() == want.sort_index().tolist()


# -- the search ---------------------------------------------------------------------------------
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.data(),
    anonymization_cases(max_qis=3, max_rows=40),
    population_models(),
    st.sampled_from([0.0, 0.05, 0.1, 0.3]),
    st.sampled_from(["loss", "height", "aecs", "dm"]),
)
def test_default_search_finds_the_exhaustive_optimum(data, case, models, limit, metric):
    df, hs = case
    population = data.draw(with_population(case))
    if data.draw(st.booleans()):
        models.append(PopulationUniqueness(0.3, "zayatz", population_size=400))
    qis = [h.name for h in hs]
    hist = Histogram.from_frame(df, qis, hs)
    req = Requirements(models, limit)
    req.population = Histogram.from_frame(population, qis, hs)
    try:
        req.validate(hist)
    except InputError:
        assume(False)  # k larger than the table
    ex = Exhaustive().run(hist, req, quality_model(metric))
    fl = Flash(frontier=data.draw(st.booleans())).run(hist, req, quality_model(metric))
    want = documented_optimum(ex.solutions)
    assert (fl.optimum is None) == (want is None)
    if want is not None:
        assert fl.optimum.levels == want.levels
        assert fl.optimum.score == pytest.approx(want.score)


# -- surfaces --------------------------------------------------------------------------------------
def test_options_and_their_checks():
    base = {"qi": ["a"]}
    spec = run_options({**base, "population": "p", "delta_max": 0.4}, "x").spec
    (m,) = build_models(spec)
    assert isinstance(m, DeltaPresence) and (m.delta_min, m.delta_max) == (0.0, 0.4)
    spec = run_options({**base, "population": "p", "delta_min": 0.1}, "x").spec
    (m,) = build_models(spec)
    assert (m.delta_min, m.delta_max) == (0.1, 1.0) and m.tests_unreleased
    spec = run_options({**base, "k_map": 5, "population_size": 1000}, "x").spec
    assert isinstance(build_models(spec)[0], EstimatedKMap)
    spec = run_options({**base, "k_map": 5, "population": "p"}, "x").spec
    assert isinstance(build_models(spec)[0], KMap)
    spec = run_options(
        {**base, "max_population_uniqueness": 0.01, "sampling_fraction": 0.1,
         "uniqueness_estimator": "pitman", "max_average_risk": 0.1,
         "max_sample_uniqueness": 0.05},
        "x",
    ).spec  # fmt: skip
    names = [m.name for m in build_models(spec)]
    assert names == ["average-risk", "sample-uniqueness", "population-uniqueness"]
    bad = [
        ({"delta_max": 0.4}, "population table"),
        ({"population": "p"}, "delta-presence or k-map"),
        ({"k_map": 5}, "population_size or sampling_fraction"),
        ({"k_map": 5, "population": "p", "population_size": 9}, "counts it"),
        ({"max_population_uniqueness": 0.1}, "population_size or sampling_fraction"),
        ({"k": 2, "population_size": 100}, "options of an estimated k-map"),
        ({"max_average_risk": 1.5}, "share in"),
        ({"max_population_uniqueness": 0.1, "population_size": 9, "sampling_fraction": 0.1},
         "not both"),
        ({"k": 2, "uniqueness_estimator": "zayatz"}, "max_population_uniqueness"),
        ({"k": 2, "significance": 0.1}, "k_map"),
        ({"k_map": 2, "population_size": 9, "k_map_estimator": "x"}, "unknown k-map"),
    ]  # fmt: skip
    for options, message in bad:
        with pytest.raises(InputError, match=message):
            build_models(run_options({**base, **options}, "x").spec)
    with pytest.raises(InputError, match="finite"):
        run_options({**base, "max_sample_uniqueness": float("nan")}, "x")
    # GAA does not know them: refused, never ignored
    from anonsql.algorithms.greedy.algorithm import greedy_model

    spec = run_options({**base, "k": 2, "max_average_risk": 0.1}, "x").spec
    with pytest.raises(InputError, match="lattice algorithm"):
        greedy_model(spec)


@pytest.fixture
def adult_db(tmp_path):
    """A 2,000-row sample of a 6,000-row population drawn from the demo's census."""
    from anonsql.demo.setup import setup_demo

    path = tmp_path / "w.duckdb"
    db = Database.open(path)
    setup_demo(db, rows=6000)
    db.backend.execute(
        "CREATE TABLE sample AS SELECT * FROM census USING SAMPLE 2000 ROWS (reservoir, 7)"
    )
    db.close()
    return path


QIS = ["age", "sex", "zip"]
#: the census columns beside the QIs, released as they are (no sensitive attribute here)
KEEP = ["race", "marital_status", "education", "country", "occupation", "income"]
KEEP_FLAGS = ["--keep", ",".join(KEEP)]
SURFACES = [
    (["--population", "census", "--delta-min", "0.05", "--delta-max", "0.5"],
     {"population": "census", "delta_min": 0.05, "delta_max": 0.5}),
    (["--population", "census", "--k-map", "8"], {"population": "census", "k_map": 8}),
    (["--k-map", "8", "--population-size", "6000", "--k-map-estimator", "zero-truncated-poisson"],
     {"k_map": 8, "population_size": 6000, "k_map_estimator": "zero-truncated-poisson"}),
    (["--max-average-risk", "0.1"], {"max_average_risk": 0.1}),
    (["--max-sample-uniqueness", "0.01"], {"max_sample_uniqueness": 0.01}),
    (["--max-population-uniqueness", "0.01", "--sampling-fraction", "0.33"],
     {"max_population_uniqueness": 0.01, "sampling_fraction": 0.33}),
]  # fmt: skip


@pytest.mark.parametrize(
    ("flags", "options"), SURFACES, ids=["d-presence", "k-map", "k-map-est", "avg", "su", "pu"]
)
def test_every_surface_runs_the_model(adult_db, flags, options):
    db_flag = ["--db", str(adult_db)]
    common = ["--qi", ",".join(QIS), *KEEP_FLAGS, "--k", "2", "--suppression", "0.05"]
    args = ["anonymize", "sample", *common, *flags, "--out", "by_cli", "--json", *db_flag]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    by_cli = json.loads(r.output)
    goal = {"qi": QIS, "keep": KEEP, "k": 2, "suppression": 0.05, **options}
    by_api = anonsql.anonymize((str(adult_db), "sample"), {**goal, "output": "by_api"})
    assert by_api.levels == by_cli["levels"]
    spec_file = adult_db.parent / "spec.json"
    spec_file.write_text(json.dumps({"table": "sample", **goal, "output": "by_file"}))
    r = CliRunner().invoke(cli, ["run", str(spec_file), *db_flag, "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["levels"] == by_cli["levels"]
    params = json.dumps({k: v for k, v in goal.items() if k not in ("qi", "keep")})
    kept = "".join(f"""COLUMN {c} PARAMETERS '{{"is_insensitive": true}}' """ for c in KEEP)
    con = anonsql.connect(str(adult_db))
    con.sql(
        f"CREATE VIEW by_sql AS SELECT * FROM sample WITH ANONYMIZATION (ALGORITHM 'K-ANONYMITY' "
        f"PARAMETERS '{params}' "
        """COLUMN age PARAMETERS '{"is_quasi_identifier": true}' """
        """COLUMN sex PARAMETERS '{"is_quasi_identifier": true}' """
        """COLUMN zip PARAMETERS '{"is_quasi_identifier": true}' """
        f"{kept})"
    )
    con.close()
    db = Database.open(adult_db)
    frames = [
        db.backend.fetch_df(f"SELECT * FROM {o} ORDER BY ALL")
        for o in ("by_cli", "by_api", "by_file", "by_sql")
    ]
    for f in frames[1:]:
        pd.testing.assert_frame_equal(f, frames[0])
    # the view releases what the run counted, except population uniqueness, which the guard
    # enforces through sample uniqueness (never less suppressed)
    supp = db.backend.fetchall("SELECT COUNT(*) FROM by_cli WHERE sex = '*'")[0][0]
    if "max_population_uniqueness" in options:
        assert supp >= by_cli["measures"]["suppressed_rows"]
    else:
        assert supp == by_cli["measures"]["suppressed_rows"]
    db.close()
    r = CliRunner().invoke(cli, ["refresh", "by_cli", *db_flag])
    assert r.exit_code == 0, r.output


def test_check_reports_the_models_and_the_estimators(adult_db):
    db_flag = ["--db", str(adult_db)]
    levels = "age=2,sex=0,zip=3"
    args = ["check", "sample", "--qi", ",".join(QIS), "--levels", levels, "--population",
            "census", "--k-map", "2", "--delta-max", "0.9", "--max-average-risk", "0.5",
            "--population-size", "6000", "--json", *db_flag]  # fmt: skip
    r = CliRunner().invoke(cli, args)
    assert r.exit_code in (0, MODEL_FAILS), r.output
    ev = json.loads(r.output)
    assert [m["model"] for m in ev["models"]] == ["delta-presence", "k-map", "average-risk"]
    for e in ("pitman", "zayatz", "snb", "dankar"):
        assert f"population_uniqueness_{e}" in ev["risk"]
    assert ev["risk"]["journalist_max"] is not None
    # delta_min > 0: the population's classes without sample rows fail (delta 0)
    args = ["check", "sample", "--qi", ",".join(QIS), "--levels", "age=0,sex=0,zip=0",
            "--population", "census", "--delta-min", "0.01", "--json", *db_flag]  # fmt: skip
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == MODEL_FAILS, r.output
    (dp,) = json.loads(r.output)["models"]
    assert not dp["holds"] and dp["min_value"] == 0.0 and dp["failing_classes"] > 0
    # on a released table: the thresholds in SQL, the estimate from the class sizes
    args = ["anonymize", "sample", "--qi", ",".join(QIS), *KEEP_FLAGS, "--k", "3", "--out", "k3"]
    r = CliRunner().invoke(cli, [*args, *db_flag])
    assert r.exit_code == 0, r.output
    args = ["check", "k3", "--qi", ",".join(QIS), "--max-sample-uniqueness", "0",
            "--max-population-uniqueness", "0.5", "--sampling-fraction", "0.33", "--json",
            *db_flag]  # fmt: skip
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    ev = json.loads(r.output)
    assert all(m["holds"] for m in ev["models"])
    assert ev["risk"]["sample_uniqueness"] == 0.0
    r = CliRunner().invoke(cli, ["check", "k3", "--qi", "sex", "--k-map", "2", "--population",
                                 "census", *db_flag])  # fmt: skip
    assert r.exit_code == 1 and "--levels" in r.output


def test_report_shows_the_estimators(adult_db, tmp_path):
    db_flag = ["--db", str(adult_db)]
    args = ["anonymize", "sample", "--qi", ",".join(QIS), *KEEP_FLAGS,
            "--max-population-uniqueness", "0.01", "--sampling-fraction", "0.33",
            "--suppression", "0.05", "--out", "pu", *db_flag]  # fmt: skip
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    from anonsql.evaluation.report import build_report

    db = Database.open(adult_db)
    rep = build_report(db, 1)
    u = rep["risk"]["uniqueness"]
    assert u["population_size"] == round(2000 / 0.33)
    assert {"population_uniqueness_pitman", "population_uniqueness_dankar"} <= set(u)
    r = CliRunner().invoke(
        cli, ["report", "1", "--out", str(tmp_path), "--population-size", "9000", *db_flag]
    )
    assert r.exit_code == 0, r.output
    page = next(tmp_path.glob("*.html")).read_text()
    assert "population uniqueness (N = 9000)" in page and "sample uniqueness" in page


# -- other engines ---------------------------------------------------------------------------------
# PostgreSQL only: on local Spark this one run takes about 50 s (each view read is a Spark job
# per CTE), a tenth of the suite's budget; tests/engines/test_backends.py runs the guard on Spark
@pytest.mark.parametrize("engine", ["postgres"], indirect=True)
def test_engines_release_duckdbs_rows(engine):
    """The population join, the estimated k-map's CASE and the risk thresholds' window functions
    run on PostgreSQL and Spark: same levels, same rows as DuckDB."""
    from anonsql.run import anonymize
    from anonsql.spec import Spec
    from tests.helpers.engines import QIS as PEOPLE_QIS
    from tests.helpers.engines import output_rows, people, roles, setup

    population = people(900, seed=5)
    sample = population.sample(300, random_state=1)
    ref = Database.open(":memory:")
    setup(ref, sample)
    ref.backend.write_frame("pop", population)
    db = engine()
    setup(db, sample)
    db.backend.write_frame("pop", population)
    specs = [
        Spec(qis=PEOPLE_QIS, k=2, population="pop", delta_min=0.05, delta_max=0.5, k_map=4,
             suppression=0.1, output="out", **roles()),
        Spec(qis=PEOPLE_QIS, k_map=6, population_size=900, max_average_risk=0.2,
             max_sample_uniqueness=0.0, suppression=0.1, output="out", replace=True, **roles()),
    ]  # fmt: skip
    for spec in specs:
        expected = anonymize(ref, "people", spec)
        got = anonymize(db, "people", spec)
        assert got.levels == expected.levels
        pd.testing.assert_frame_equal(output_rows(db, "out"), output_rows(ref, "out"))

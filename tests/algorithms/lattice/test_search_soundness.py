"""Soundness of the lattice search (issue 13).

* Each privacy model states in its own file whether it is monotone without and with
  suppression; random merges of classes hold the claims, and every model declared not monotone
  with suppression comes with a table where an anonymous node has a non-anonymous
  generalization.
* A node check proves only what holds (:meth:`Requirements.screen`): its bound of suppressed
  records holds in every specialization, a clean anonymous node has anonymous generalizations.
* The default search returns the exhaustive scan's optimum (score and documented tie-break)
  for every model, combination of models and metric, with and without suppression; with
  ``assume_monotone`` it returns an anonymous node and says when it is not proven optimal.
* The issue's Adult case (skips without ../shared).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonsql.algorithms.lattice.lattice import Lattice
from anonsql.algorithms.lattice.searches import Exhaustive, Flash
from anonsql.data.classes import Partition
from anonsql.data.histogram import Histogram
from anonsql.hierarchy.hierarchy import Hierarchy
from anonsql.metrics.quality import quality_model
from anonsql.models import (
    MODELS,
    DistinctLDiversity,
    EntropyLDiversity,
    EqualDistanceEMD,
    HierarchicalEMD,
    KAnonymity,
    PopulationUniqueness,
    PrivacyModel,
)
from anonsql.models.base import ClassStats
from anonsql.models.requirements import Requirements
from tests.helpers.data import ADULT_QIS, shared_data
from tests.helpers.search import (
    COUNTEREXAMPLES,
    METRICS,
    QI_H,
    SENS_H,
    SENSITIVE,
    T_TABLE,
    counted_rows,
    counterexample,
    counterexample_requirements,
    documented_optimum,
    histogram_s,
    model_instances,
    requirements,
)
from tests.helpers.strategies import anonymization_cases

FLAGS = ("monotone_without_suppression", "monotone_with_suppression")


# -- each model states its monotonicity -------------------------------------------------------
@pytest.mark.parametrize("cls", list(MODELS.values()), ids=list(MODELS))
def test_every_model_states_its_monotonicity_in_its_own_file(cls):
    for flag in FLAGS:
        owner = next(c for c in cls.__mro__ if flag in vars(c))
        assert owner is not PrivacyModel, f"{cls.__name__} inherits {flag} from the base class"
        assert owner.__module__ == cls.__module__, f"{cls.__name__}.{flag} is set elsewhere"
        assert isinstance(getattr(cls, flag), bool)
    # with suppression is the stronger property (a union passes if one class does)
    assert cls.monotone_without_suppression or not cls.monotone_with_suppression


@st.composite
def merges(draw):
    """2 to 4 classes (counts of each sensitive value) and the rest of the table."""
    counts = st.lists(st.integers(0, 4), min_size=len(SENSITIVE), max_size=len(SENSITIVE))
    parts = draw(st.lists(counts.filter(lambda c: sum(c) > 0), min_size=2, max_size=4))
    rest = draw(counts)
    return np.array(parts, dtype=np.int64), np.array(rest, dtype=np.int64)


def _stats(classes: np.ndarray, table: np.ndarray) -> ClassStats:
    cls, val = np.nonzero(classes)
    return ClassStats(
        classes.sum(axis=1),
        cls,
        val,
        classes[cls, val],
        table / table.sum(),
        SENSITIVE,
        SENS_H,
    )


@settings(max_examples=150, deadline=None)
@given(merges())
def test_monotonicity_claims_hold_on_random_merges(case):
    parts, rest = case
    union = parts.sum(axis=0)
    stats = _stats(np.vstack([parts, union]), union + rest)
    req = Requirements([KAnonymity(1)], 0.5, SENS_H)
    weights = parts.sum(axis=1) / union.sum()
    for model in model_instances():
        values = model.class_values(stats)
        ok = model.passes(values)
        if type(model).monotone_without_suppression and ok[:-1].all():
            assert ok[-1], f"{model.describe()}: a union of passing classes fails"
        if type(model).monotone_with_suppression and ok[:-1].any():
            assert ok[-1], f"{model.describe()}: a union with a passing class fails"
        convex = req._convex_form(model, stats)
        if convex is not None:
            # the bound of Requirements.screen rests on f(union) <= weighted mean of f(parts)
            f, _, f_max = convex(values)
            assert f[-1] <= weights @ f[:-1] + 1e-12, model.describe()
            assert (f <= f_max + 1e-12).all(), model.describe()


#: counterexamples that need more leaves than QI_H has, in the model's own test file
ELSEWHERE = {PopulationUniqueness: "tests/models/test_models_population.py"}


@pytest.mark.parametrize(
    "cls",
    [c for c in MODELS.values() if not c.monotone_with_suppression],
    ids=lambda c: c.name,
)
def test_models_not_monotone_with_suppression_have_a_counterexample(cls):
    if cls in ELSEWHERE:
        pytest.skip(f"{cls.__name__}'s counterexample is in {ELSEWHERE[cls]}")
    assert cls in COUNTEREXAMPLES, f"{cls.__name__} declares no monotonicity with suppression"
    model, hist, limit = counterexample(cls)
    req = counterexample_requirements(cls, model, limit)
    assert not req.monotone(hist.rows)
    node = req.assess(Partition.from_histogram(hist, (0,)), hist)
    generalization = req.assess(Partition.from_histogram(hist, (1,)), hist)
    assert node.anonymous and node.suppressed_rows > 0
    assert not generalization.anonymous
    # without suppression the same models are monotone: [0] is not anonymous either
    assert (
        not counterexample_requirements(cls, model, 0.0)
        .assess(Partition.from_histogram(hist, (0,)), hist)
        .anonymous
    )

    # the default search finds [0]; assuming monotonicity says what it assumed
    exact = Flash().run(hist, req, quality_model("height"))
    assert exact.optimum is not None and exact.optimum.levels == (0,)
    assert exact.guarantee.startswith("exact optimum")
    assumed = Flash(assume_monotone=True).run(hist, req, quality_model("height"))
    assert "assume_monotone" in assumed.guarantee


def test_monotonicity_of_requirements_depends_on_the_limit():
    k, distinct, entropy = KAnonymity(2), DistinctLDiversity(2), EntropyLDiversity(2)
    assert Requirements([k, distinct], 0.05).monotone(1000)
    assert not Requirements([k, entropy], 0.05).monotone(1000)
    assert not Requirements([k, EqualDistanceEMD(0.2)], 0.05).monotone(1000)
    assert Requirements([k, entropy], 0.0).monotone(1000)
    # less than one record may be suppressed: nothing is, as with no limit
    assert Requirements([k, entropy], 0.0009).monotone(1000)
    assert not Requirements([k, entropy], 0.001).monotone(1000)
    # every record may be suppressed: every node is anonymous
    assert Requirements([k, entropy], 1.0).monotone(1000)


def _assessments(hist: Histogram, req: Requirements, lat: Lattice) -> list:
    return [
        req.assess(Partition.from_histogram(hist, tuple(int(x) for x in lat.levels[n])), hist)
        for n in range(lat.size)
    ]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(anonymization_cases(max_qis=3, max_rows=40), requirements(positive_limit=True))
def test_a_check_proves_only_what_holds(case, req):
    """Requirements.screen, on every node of random lattices: its verdict agrees with the full
    assessment, its bound of suppressed records holds in every specialization, and a clean
    anonymous node has only anonymous generalizations."""
    hist = histogram_s(*case)
    lat = Lattice(hist.heights)
    truth = _assessments(hist, req, lat)
    for node in range(lat.size):
        part = Partition.from_histogram(hist, tuple(int(x) for x in lat.levels[node]))
        s = req.screen(part, hist)
        assert s.anonymous == truth[node].anonymous
        if s.assessment is not None:
            assert (s.assessment.passing == truth[node].passing).all()
        below = np.flatnonzero(lat.below(node))
        worst = min(truth[n].suppressed_rows for n in below)
        assert s.below <= worst, (lat.levels[node], s.below, worst)
        if s.clean:
            assert all(truth[n].anonymous for n in np.flatnonzero(lat.above(node)))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    anonymization_cases(max_qis=3, max_rows=40),
    requirements(),
    st.sampled_from(METRICS),
    st.booleans(),
)
def test_default_search_finds_the_exhaustive_optimum(case, req, metric, frontier):
    hist = histogram_s(*case)
    ex = Exhaustive().run(hist, req, quality_model(metric))
    fl = Flash(frontier=frontier).run(hist, req, quality_model(metric))
    want = documented_optimum(ex.solutions)
    assert (ex.optimum is None) == (want is None)
    if want is None:
        assert fl.optimum is None
        return
    assert ex.optimum.levels == want.levels
    assert fl.optimum is not None, fl.guarantee
    assert fl.optimum.levels == want.levels, (fl.optimum, want, fl.guarantee)
    assert fl.optimum.score == pytest.approx(want.score, rel=1e-12, abs=1e-12)
    assert fl.optimum.suppressed_rows == want.suppressed_rows
    assert fl.guarantee.startswith("exact optimum")
    assert fl.checked <= fl.lattice_size * 2
    if frontier:  # the solution space: every minimal anonymous node, flagged as such
        minimal = {s.levels for s in ex.solutions if s.minimal}
        assert {s.levels for s in fl.solutions if s.minimal} == minimal


def seeded_case(seed: int) -> tuple[Histogram, Requirements, str]:
    """A random table of 20 to 100 rows over 2 or 3 QIs (hierarchies of 3 to 7 leaves and
    3 or 4 levels, so lattices of up to 64 nodes), a skewed sensitive column, a combination of
    one to three models, a limit (0 for one case in five) and a metric, all from ``seed``.
    Larger than what hypothesis draws: unsound pruning shows on about 1 case in 100 here."""
    rng = np.random.default_rng(seed)
    hs = []
    for j in range(int(rng.integers(2, 4))):
        leaves, height = int(rng.integers(3, 8)), int(rng.integers(3, 5))
        rows = [[f"v{i}"] for i in range(leaves)]
        groups = list(range(leaves))
        for lv in range(1, height):
            if lv == height - 1:
                groups = [0] * leaves
            else:
                merged = {
                    g: int(rng.integers(0, max(1, (len(set(groups)) + 1) // 2))) for g in groups
                }
                groups = [merged[g] for g in groups]
            for i in range(leaves):
                rows[i].append("*" if lv == height - 1 else f"L{lv}g{groups[i]}")
        hs.append(Hierarchy.from_rows(f"q{j}", rows))
    n = int(rng.integers(20, 101))
    df = pd.DataFrame({h.name: rng.choice(h.leaf_labels, n) for h in hs})
    df["s"] = rng.choice(SENSITIVE, n, p=rng.dirichlet(np.ones(len(SENSITIVE))))
    pool = model_instances()
    picked = [pool[i] for i in rng.choice(len(pool), int(rng.integers(1, 4)), replace=False)]
    limit = 0.0 if rng.random() < 0.2 else float(rng.choice([0.05, 0.1, 0.2, 0.3]))
    req = Requirements(picked, limit, SENS_H)
    return histogram_s(df, hs), req, METRICS[int(rng.integers(len(METRICS)))]


@pytest.mark.parametrize("block", range(4))
def test_default_search_finds_the_exhaustive_optimum_on_seeded_tables(block):
    """100 seeded cases per block (see :func:`seeded_case`); the search before issue 13 fails
    on several of them."""
    for seed in range(block * 100, block * 100 + 100):
        hist, req, metric = seeded_case(seed)
        ex = Exhaustive().run(hist, req, quality_model(metric))
        fl = Flash(frontier=False).run(hist, req, quality_model(metric))
        want = documented_optimum(ex.solutions)
        if want is None:
            assert fl.optimum is None, seed
            continue
        assert fl.optimum is not None, (seed, fl.guarantee)
        assert fl.optimum.levels == want.levels, (seed, fl.optimum, want, fl.guarantee)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(anonymization_cases(max_qis=3, max_rows=40), requirements(), st.sampled_from(METRICS))
def test_assume_monotone_returns_an_anonymous_node_and_says_what_it_assumed(case, req, metric):
    hist = histogram_s(*case)
    fl = Flash(frontier=False, assume_monotone=True).run(hist, req, quality_model(metric))
    ex = Exhaustive().run(hist, req, quality_model(metric))
    if req.monotone(hist.rows):
        # nothing is assumed: the exact search
        assert (fl.optimum is None) == (ex.optimum is None)
        if fl.optimum is not None:
            assert fl.optimum.levels == ex.optimum.levels
        return
    assert "assume_monotone" in fl.guarantee
    if fl.optimum is not None:
        part = Partition.from_histogram(hist, fl.optimum.levels)
        assert req.assess(part, hist).anonymous
        assert fl.optimum.score >= ex.optimum.score - 1e-12 * max(1.0, abs(ex.optimum.score))


# -- the issue's case: Adult, t-closeness with suppression ----------------------------------------
ADULT_8 = [q for q in ADULT_QIS if q != "occupation"]


@pytest.fixture(scope="module")
def adult_occupation():
    """Adult with the ARX hierarchies, 8 QIs (all but occupation), occupation sensitive."""
    from anonsql.hierarchy.loaders import read_arx_csv

    folder = shared_data() / "adult"
    df = pd.read_csv(folder / "adult.csv", sep=";", dtype=str)
    hs = {c: read_arx_csv(c, folder / f"adult_hierarchy_{c}.csv") for c in ADULT_QIS}
    hist = Histogram.from_frame(df, ADULT_8, [hs[q] for q in ADULT_8], "occupation")
    return hist, hs["occupation"]


def test_issue_13_adult_t_closeness_with_suppression(adult_occupation):
    """k = 5 plus 0.2-closeness (hierarchical EMD over the occupation hierarchy), 5%
    suppression, monotone entropy: the exhaustive scan's optimum [1,4,0,0,3,1,2,1] (1,384 rows
    suppressed, the limit is 1,508) has a generalization, [1,4,0,1,3,1,2,1], where 2,466 rows
    fail: taking that as proof that every specialization fails lost the optimum."""
    hist, occupation = adult_occupation
    req = Requirements([KAnonymity(5), HierarchicalEMD(0.2, occupation)], 0.05, occupation)
    assert not req.monotone(hist.rows)
    fl = Flash(frontier=False).run(hist, req, quality_model("entropy"))
    assert fl.optimum.levels == (1, 4, 0, 0, 3, 1, 2, 1)
    assert fl.optimum.score == 367390.5779876774  # the issue's exhaustive figure
    assert fl.optimum.suppressed_rows == 1384
    assert fl.guarantee.startswith("exact optimum")
    generalization = Partition.from_histogram(hist, (1, 4, 0, 1, 3, 1, 2, 1))
    assert req.assess(generalization, hist).suppressed_rows == 2466
    # assuming monotonicity reproduces the issue's answer, and says it is not proven
    assumed = Flash(frontier=False, assume_monotone=True).run(hist, req, quality_model("entropy"))
    assert assumed.optimum.levels == (1, 4, 0, 0, 3, 2, 2, 1)
    assert assumed.optimum.score == 377622.78458729293
    assert "not proven optimal" in assumed.guarantee


def test_anonymize_reports_the_assumption_in_its_guarantee(db):
    """``Spec.assume_monotone`` (``--assume-monotone``) reaches the search, and the result's
    guarantee says whether the optimum is proven."""
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    limit = counterexample(EqualDistanceEMD)[2]
    db.backend.write_frame("t", counted_rows(T_TABLE))
    db.hierarchies.save(QI_H)
    spec = Spec(qis=["q"], sensitive="s", t=0.13, suppression=limit, metric="height", k=1)
    exact = anonymize(db, "t", spec)
    assert exact.levels == {"q": 0}
    assert exact.guarantee.startswith("exact optimum")
    assumed = anonymize(db, "t", Spec(**{**spec.to_dict(), "assume_monotone": True}))
    assert "not proven optimal" in assumed.guarantee

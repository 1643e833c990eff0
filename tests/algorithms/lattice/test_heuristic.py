"""The best-effort search for lattices too large to enumerate (issue 13, section 3).

* On a 12-QI table (lattice of 16.8 million nodes, refused by the optimal search) and a 40-QI
  one (10^24 nodes), it returns a node that the full assessment proves anonymous, and says it
  is heuristic, how many nodes it checked and what stopped it.
* On 6-QI subsets of the 12-QI table, small enough for the optimal search, its score is never
  better than the optimum (the gaps are printed; ``benchmarks/bench_heuristic.py`` has the
  figures).
* On random small lattices, for every model, combination and metric, with and without
  suppression: with a step limit the node is anonymous and no better than the optimum; without
  one the search exhausts the lattice and returns the exhaustive scan's optimum.
* The top is the fallback; no limit is exceeded; every surface takes the options and the
  exact searches refuse them.
"""

from __future__ import annotations

import itertools
import json

import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonsql.algorithms.lattice.heuristic import ImplicitLattice
from anonsql.algorithms.lattice.searches import Exhaustive, Flash, Heuristic
from anonsql.data.classes import Partition
from anonsql.data.histogram import Histogram
from anonsql.errors import InputError
from anonsql.hierarchy.hierarchy import Hierarchy
from anonsql.metrics.quality import quality_model
from anonsql.models import (
    EntropyLDiversity,
    EqualDistanceEMD,
    HierarchicalEMD,
    KAnonymity,
    L1Closeness,
    OrderedDistanceEMD,
    RecursiveCLDiversity,
)
from anonsql.models.requirements import Requirements
from anonsql.run import anonymize
from anonsql.spec import Spec
from tests.helpers.search import (
    METRICS,
    SENS_H,
    counterexample,
    documented_optimum,
    histogram_s,
    requirements,
    wide_table,
)
from tests.helpers.strategies import anonymization_cases


def histogram(df: pd.DataFrame, hs: list[Hierarchy], sensitive: str | None = None) -> Histogram:
    return Histogram.from_frame(df, [h.name for h in hs], hs, sensitive)


def assert_anonymous(hist: Histogram, req: Requirements, levels) -> None:
    """The full assessment of the returned node, independent of the search."""
    a = req.assess(Partition.from_histogram(hist, tuple(levels)), hist)
    assert a.anonymous, (levels, a.suppressed_rows)


@pytest.fixture(scope="module")
def wide():
    return wide_table(12, 600, seed=3)


# -- lattices too large to enumerate ------------------------------------------------------------
def test_twelve_qis_return_an_anonymous_node(wide):
    df, hs = wide
    hist = histogram(df, hs)
    req = Requirements([KAnonymity(5)], 0.05)
    with pytest.raises(InputError, match="--algorithm heuristic"):
        Flash().run(hist, req, quality_model("loss"))
    r = Heuristic(steps=1500, time_limit=120).run(hist, req, quality_model("loss"))
    assert r.lattice_size == 4**12 and r.checked == 1500
    assert r.optimum is not None and len(r.optimum.levels) == 12
    assert_anonymous(hist, req, r.optimum.levels)
    top = req.assess(Partition.from_histogram(hist, (3,) * 12), hist)
    assert top.anonymous
    # far better than the fallback (every QI at the top)
    assert r.optimum.levels != (3,) * 12 and r.optimum.score < 0.9
    assert r.guarantee.startswith("heuristic")
    assert "1,500 of 16,777,216 nodes checked" in r.guarantee
    assert "stopped by the step limit (1,500 node checks)" in r.guarantee
    assert "not proven optimal" in r.guarantee


def test_forty_qis_lattice_beyond_64_bits():
    df, hs = wide_table(40, 150, seed=5)
    hist = histogram(df, hs)
    req = Requirements([KAnonymity(3)], 0.1)
    r = Heuristic(steps=200, time_limit=120).run(hist, req, quality_model("loss"))
    assert r.lattice_size == 4**40 > 2**64
    assert r.checked == 200 and r.optimum is not None
    assert_anonymous(hist, req, r.optimum.levels)


SUBSETS = [range(0, 6), range(3, 9), range(6, 12)]


@pytest.mark.parametrize("metric", ["loss", "entropy"])
@pytest.mark.parametrize("qis", SUBSETS, ids=lambda r: f"q{r.start}-q{r.stop - 1}")
def test_score_against_the_optimum_on_subsets(wide, qis, metric, capsys):
    """6 of the 12 QIs (4,096 nodes): the optimum is known. The heuristic, limited to 300
    checks, is anonymous and never better; the gap is printed (pytest -s)."""
    df, hs = wide
    sub = [hs[j] for j in qis]
    hist = histogram(df, sub, "s")
    req = Requirements([KAnonymity(5)], 0.05)
    opt = Flash(frontier=False).run(hist, req, quality_model(metric)).optimum
    r = Heuristic(steps=300, time_limit=120).run(hist, req, quality_model(metric))
    assert r.optimum is not None
    assert_anonymous(hist, req, r.optimum.levels)
    assert r.optimum.score >= opt.score - 1e-12 * max(1.0, abs(opt.score))
    gap = (r.optimum.score - opt.score) / abs(opt.score)
    with capsys.disabled():
        print(f"\n{metric} q{qis.start}-q{qis.stop - 1}: heuristic {r.optimum.score:.6g} "
              f"({r.checked} checks), optimum {opt.score:.6g}, gap {gap:.2%}")  # fmt: skip


# -- random small lattices: sound with limits, exact when exhausted -----------------------------
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    anonymization_cases(max_qis=3, max_rows=40),
    requirements(),
    st.sampled_from(METRICS),
    st.integers(1, 12),
)
def test_limited_search_is_anonymous_and_never_beats_the_optimum(case, req, metric, steps):
    hist = histogram_s(*case)
    ex = Exhaustive().run(hist, req, quality_model(metric))
    r = Heuristic(steps=steps, time_limit=60).run(hist, req, quality_model(metric))
    assert r.checked <= steps
    if r.optimum is None:
        return
    assert_anonymous(hist, req, r.optimum.levels)
    assert ex.optimum is not None
    assert r.optimum.score >= ex.optimum.score - 1e-12 * max(1.0, abs(ex.optimum.score))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(anonymization_cases(max_qis=3, max_rows=40), requirements(), st.sampled_from(METRICS))
def test_exhausted_search_returns_the_exhaustive_optimum(case, req, metric):
    """Without a limit the queue runs empty: every node was checked or bounded, so the score
    (and here the documented tie-break too) is the exhaustive scan's."""
    hist = histogram_s(*case)
    ex = Exhaustive().run(hist, req, quality_model(metric))
    r = Heuristic(time_limit=60).run(hist, req, quality_model(metric))
    assert "exhausted" in r.guarantee or "even the top fails" in r.guarantee, r.guarantee
    want = documented_optimum(ex.solutions)
    if want is None:
        assert r.optimum is None
        return
    assert r.optimum is not None, r.guarantee
    assert r.optimum.score == pytest.approx(want.score, rel=1e-12, abs=1e-12)
    assert r.optimum.levels == want.levels
    assert r.checked <= ex.checked


@pytest.mark.parametrize(
    "cls",
    # the models not monotone with suppression whose counterexample needs no population
    [
        EntropyLDiversity,
        RecursiveCLDiversity,
        EqualDistanceEMD,
        OrderedDistanceEMD,
        L1Closeness,
        HierarchicalEMD,
    ],
    ids=lambda c: c.__name__,
)
def test_models_not_monotone_with_suppression(cls):
    """The counterexamples of the soundness tests: [0] is anonymous, its generalization [1]
    (the top) is not. The top's failure proves nothing here, so the search goes on."""
    model, hist, limit = counterexample(cls)
    req = Requirements([model], limit, SENS_H)
    r = Heuristic(time_limit=60).run(hist, req, quality_model("height"))
    assert r.optimum is not None and r.optimum.levels == (0,)
    assert "exhausted" in r.guarantee


# -- limits and the fallback --------------------------------------------------------------------
def test_one_step_returns_the_top(wide):
    df, hs = wide
    hist = histogram(df, hs)
    req = Requirements([KAnonymity(5)], 0.05)
    r = Heuristic(steps=1).run(hist, req, quality_model("loss"))
    assert r.checked == 1 and r.optimum.levels == (3,) * 12
    assert "stopped by the step limit (1 node checks)" in r.guarantee


def test_time_limit_stops_the_search(wide):
    df, hs = wide
    hist = histogram(df, hs)
    req = Requirements([KAnonymity(5)], 0.05)
    r = Heuristic(time_limit=0.05).run(hist, req, quality_model("loss"))
    assert "stopped by the time limit (0.05 s)" in r.guarantee
    assert r.optimum is not None
    assert_anonymous(hist, req, r.optimum.levels)


def test_no_anonymous_node():
    df, hs = wide_table(12, 40, seed=1)
    hist = histogram(df, hs, "s")
    # monotone with suppression: the failing top proves there is no solution
    r = Heuristic(steps=50).run(hist, Requirements([KAnonymity(50)], 0.0), quality_model("loss"))
    assert r.optimum is None and r.checked == 1
    assert "no node is anonymous: even the top fails" in r.guarantee
    # entropy l-diversity with suppression is not: the search looks, and says it found
    # nothing (six sensitive values: no class reaches entropy ln 10)
    req = Requirements([EntropyLDiversity(10)], 0.1)
    r = Heuristic(steps=50).run(hist, req, quality_model("loss"))
    assert r.optimum is None and "no anonymous node found" in r.guarantee


def test_bad_limits():
    with pytest.raises(InputError, match="positive number of seconds"):
        Heuristic(time_limit=0)
    with pytest.raises(InputError, match="at least one node check"):
        Heuristic(steps=0)


def test_implicit_lattice():
    lat = ImplicitLattice([2, 3, 2])
    assert lat.size == 12 and lat.bottom == 0 and lat.levels[lat.top].tolist() == [1, 2, 1]
    node = lat.node([1, 1, 0])
    assert sorted(lat.levels[s].tolist() for s in lat.successors(node)) == [[1, 1, 1], [1, 2, 0]]
    assert sorted(lat.levels[p].tolist() for p in lat.predecessors(node)) == [[0, 1, 0], [1, 0, 0]]
    assert lat.node((1, 1, 0)) == node  # one id per node
    with pytest.raises(InputError):
        lat.node([2, 0, 0])


# -- the perturbation phase (issue 30, target 3) -------------------------------------------------
def run_heuristic(hist, req, metric="loss", steps=None, seed=0, perturb=True, time_limit=120):
    """A heuristic run that keeps the search object (its checked nodes, its failures)."""
    h = Heuristic(steps=steps, time_limit=time_limit, seed=seed)
    if not perturb:
        h.perturb_share = 0.0
    return h, h.run(hist, req, quality_model(metric))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize(
    "req",
    [Requirements([KAnonymity(5)], 0.05), Requirements([EntropyLDiversity(2)], 0.1)],
    ids=["k-anonymity", "entropy-l-diversity"],
)
def test_perturbation_returns_a_checked_anonymous_node(wide, req, seed):
    """With the restarts running, the node returned is one the search checked and found
    anonymous, and the full assessment agrees; with a model not monotone with suppression
    no failure is kept to skip a check."""
    df, hs = wide
    hist = histogram(df, hs[:9], "s")
    h, r = run_heuristic(hist, req, "entropy", steps=600, seed=seed)
    assert h.perturb_checks > 0 and r.checked == 600
    assert r.optimum is not None
    node = h.lat.node(r.optimum.levels)
    assert node in h.info and h.info[node].anonymous
    assert_anonymous(hist, req, r.optimum.levels)
    assert h.proven == req.monotone(hist.rows)
    if not h.proven:
        assert not len(h.failing) and not h._failed and not h._fails(r.optimum.levels)


def test_step_limited_run_is_the_same_for_a_seed(wide):
    """The random choices come from the seed: the same seed and step limit give the same
    nodes checked in the same order, and so the same result."""
    df, hs = wide
    hist = histogram(df, hs[:10])
    req = Requirements([KAnonymity(5)], 0.05)
    runs = [run_heuristic(hist, req, steps=700, seed=seed) for seed in (7, 7, 8)]
    (h1, r1), (h2, r2), (h3, _) = runs
    assert h1.perturb_checks > 0
    assert list(h1.info) == list(h2.info) and [h1.lat.key(n) for n in h1.info] == [
        h2.lat.key(n) for n in h2.info
    ]
    assert r1.optimum.levels == r2.optimum.levels and r1.optimum.score == r2.optimum.score
    # another seed draws other restarts
    assert [h1.lat.key(n) for n in h1.info] != [h3.lat.key(n) for n in h3.info]


@pytest.mark.parametrize("metric", ["loss", "entropy"])
@pytest.mark.parametrize("table", [(10, 600, 3), (12, 800, 5), (12, 1500, 11)])
def test_perturbation_against_the_run_without_it(metric, table):
    """Not a guarantee: the restarts take up to half the checks from Lightning's steps and
    move the bound that prunes them, so another table could end worse. What is guaranteed
    for a seed is that a larger step limit never ends worse (the run is the same until the
    smaller limit stops it, and the best node found only improves). On these fixed wide
    tables, at the same step limit, the restarts never end worse than the run without them."""
    m, rows, seed = table
    df, hs = wide_table(m, rows, seed=seed)
    hist = histogram(df, hs)
    req = Requirements([KAnonymity(5)], 0.05)
    scores = []
    for steps in (300, 1000):
        _, with_it = run_heuristic(hist, req, metric, steps=steps)
        _, without = run_heuristic(hist, req, metric, steps=steps, perturb=False)
        tol = 1e-12 * max(1.0, abs(without.optimum.score))
        assert with_it.optimum.score <= without.optimum.score + tol, steps
        scores.append(with_it.optimum.score)
    assert scores[1] <= scores[0] + 1e-12 * max(1.0, abs(scores[0]))


def test_failures_skip_only_non_anonymous_nodes_on_a_wide_table():
    """k-anonymity with 5% suppression is monotone: over the 1,024 nodes of a 5-QI table,
    the failures kept after 400 checks pass many nodes, and each of them fails."""
    df, hs = wide_table(5, 300, seed=2)
    hist = histogram(df, hs)
    req = Requirements([KAnonymity(5)], 0.05)
    h, _ = run_heuristic(hist, req, steps=400)
    assert h.proven and h.perturb_checks > 0
    passed = [lv for lv in itertools.product(range(4), repeat=5) if h._fails(lv)]
    assert len(passed) > 50
    for levels in passed:
        assert not req.assess(Partition.from_histogram(hist, levels), hist).anonymous, levels


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    anonymization_cases(max_qis=4, max_rows=40),
    requirements(),
    st.sampled_from(METRICS),
    st.integers(2, 30),
)
def test_failures_never_skip_an_anonymous_node(case, req, metric, steps):
    """Nodes below a checked failing one are passed without a check only where anonymity is
    monotone for the models and the suppression limit; every node so passed, over the whole
    lattice, is non-anonymous by direct assessment. Elsewhere nothing is passed."""
    hist = histogram_s(*case)
    h, _ = run_heuristic(hist, req, metric, steps=steps, time_limit=60)
    heights = [int(x) for x in hist.heights]
    if not req.monotone(hist.rows):
        assert not h.proven and not len(h.failing) and not h._failed
        return
    for levels in itertools.product(*(range(x) for x in heights)):
        if h._fails(levels):
            a = req.assess(Partition.from_histogram(hist, levels), hist)
            assert not a.anonymous, levels


# -- every surface --------------------------------------------------------------------------------
@pytest.fixture
def wide_db(db, wide):
    df, hs = wide
    db.backend.write_frame("wide", df)
    for h in hs:
        db.hierarchies.save(h)
    return db


QIS = [f"q{j}" for j in range(12)]
#: wide's column s, released as it is by the runs that have no sensitive attribute
KEEP = ["s"]


def test_anonymize_publishes_the_heuristic_result(wide_db):
    r = anonymize(
        wide_db,
        "wide",
        Spec(
            qis=QIS, k=5, suppression=0.05, algorithm="heuristic", steps=400, output="w5", keep=KEEP
        ),
    )
    assert r.algorithm == "heuristic" and r.checked == 400 and r.lattice_size == 4**12
    assert "not proven optimal" in r.guarantee
    assert wide_db.backend.fetchall("SELECT COUNT(*) FROM w5")[0][0] == 600
    # the flash default refuses the lattice and points at the heuristic
    with pytest.raises(InputError, match="--algorithm heuristic"):
        anonymize(wide_db, "wide", Spec(qis=QIS, k=5, suppression=0.05, keep=KEEP))


def test_nothing_found_within_the_limit_says_so(wide_db):
    spec = Spec(qis=QIS, sensitive="s", l=5.5, l_variant="entropy-l", suppression=0.1,
                algorithm="heuristic", steps=30)  # fmt: skip
    with pytest.raises(InputError, match=r"heuristic search found no transformation .* steps"):
        anonymize(wide_db, "wide", spec)


def test_lattice_beyond_64_bits_is_published(db):
    """4^40 nodes: the result, the guarantee and the report give the exact size; the
    provenance row's 64-bit column stays NULL and the run's measures hold the exact size
    (catalogs keep their schema); a small lattice still fills the column."""
    import json

    from anonsql.evaluation.report import build_report

    df, hs = wide_table(40, 150, seed=5)
    db.backend.write_frame("w40", df.drop(columns=["s"]))
    for h in hs:
        db.hierarchies.save(h)
    spec = Spec(qis=[h.name for h in hs], k=3, suppression=0.1, algorithm="heuristic", steps=50)
    r = anonymize(db, "w40", Spec(**{**spec.to_dict(), "output": "w40_k3"}))
    assert r.checked == 50 and "of 1,208,925,819,614,629,174,706,176 nodes" in r.guarantee
    assert db.backend.fetchall("SELECT COUNT(*) FROM w40_k3")[0][0] == 150
    assert r.lattice_size == 4**40 > 2**64
    query = "SELECT lattice_size, measures FROM anonsql_runs WHERE run_id = {}"
    column, measures = db.backend.fetchall(query.format(int(r.run_id)))[0]
    assert column is None and json.loads(measures)["lattice_size"] == 4**40
    assert build_report(db, r.run_id)["lattice_size"] == 4**40
    # the other 37 columns released as they are
    small = anonymize(db, "w40", Spec(qis=spec.qis[:3], k=3, output="w3_k3", keep=spec.qis[3:]))
    column, measures = db.backend.fetchall(query.format(int(small.run_id)))[0]
    assert column == 4**3 and "lattice_size" not in json.loads(measures)
    assert build_report(db, small.run_id)["lattice_size"] == 4**3


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"steps": 10}, "'steps' limits the heuristic search"),
        ({"time_limit": 5, "algorithm": "exhaustive"}, "'time_limit' limits the heuristic"),
        ({"time_limit": 5, "steps": 3, "algorithm": "greedy"}, "'time_limit' and 'steps' limit"),
        ({"algorithm": "heuristic", "time_limit": 0}, "positive number of seconds"),
        ({"algorithm": "heuristic", "steps": 0}, "must be at least 1"),
        ({"algorithm": "heuristic", "steps": 2.5}, "'steps' must be an integer"),
    ],
)
def test_misplaced_or_bad_limits_are_refused(wide_db, values, message):
    from anonsql.options import run_options

    with pytest.raises(InputError, match=message):
        options = run_options({"qi": QIS[:2], "k": 2, **values}, "spec")
        anonymize(wide_db, "wide", options.spec)


def test_cli(tmp_path, wide):
    from anonsql.cli.main import cli
    from anonsql.database import Database

    dbfile = str(tmp_path / "w.duckdb")
    df, hs = wide
    db = Database.open(dbfile)
    db.backend.write_frame("wide", df)
    for h in hs:
        db.hierarchies.save(h)
    db.close()
    args = ["anonymize", "wide", "--qi", ",".join(QIS), "--k", "5", "--suppression", "0.05"]
    args += ["--keep", ",".join(KEEP)]
    runner = CliRunner()
    out = runner.invoke(cli, [*args, "--algorithm", "heuristic", "--steps", "200", "--json",
                              "--db", dbfile])  # fmt: skip
    assert out.exit_code == 0, out.output
    summary = json.loads(out.output)
    assert summary["algorithm"] == "heuristic" and summary["checked"] == 200
    assert summary["guarantee"].startswith("heuristic")
    out = runner.invoke(cli, [*args, "--steps", "200", "--db", dbfile])
    assert out.exit_code != 0 and "--steps limits the heuristic search" in out.output


def test_sql_statement_takes_the_limits(wide_db):
    from anonsql.connection import Connection

    qi = ", ".join(QIS)
    run = Connection(wide_db).sql(
        f"ANONYMIZE TABLE wide INTO w7 WITH (k = 5, suppression = 0.05, qi = ({qi}), "
        f"keep = ({', '.join(KEEP)}), algorithm = 'heuristic', steps = 150, time_limit = 60)"
    )
    assert run.result.checked == 150 and run.result.algorithm == "heuristic"

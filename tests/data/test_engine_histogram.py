"""A histogram kept in the engine (``memory_budget`` too small for it): the search computes
a node's classes by a GROUP BY in the engine (or rolls up a cached finer partition) and must
give the same optimum, classes, suppressed rows and output rows as the in-memory search, on
DuckDB and PostgreSQL here, and on Spark in tests/engines/test_spark_connect.py (through the Spark
Connect server that module starts: Spark pays seconds per statement, so one run there)."""

from __future__ import annotations

import dataclasses
import json
import re
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from anonsql.algorithms.lattice import engine_classes
from anonsql.algorithms.lattice.engine_classes import EngineHistogram, load_histogram
from anonsql.data.classes import Partition
from anonsql.data.histogram import Histogram
from anonsql.data.memory import (
    ENGINE_FLOOR,
    ENGINE_SHARE,
    estimated_combinations,
    parse_size,
)
from anonsql.database import Database
from anonsql.errors import InputError, MissingValuesError
from anonsql.hierarchy import builders
from anonsql.run import anonymize
from anonsql.spec import Spec
from tests.helpers.engines import QIS, SPECS, output_rows, people, roles, setup

#: a budget no histogram fits: every node's classes come from the engine
TINY = 1


def same_run(ref_db: Database, db: Database, spec: Spec, budget=TINY, source="people"):
    """Run ``spec`` in memory on ``ref_db`` and with ``budget`` on ``db``; both agree."""
    expected = anonymize(ref_db, source, spec)
    got = anonymize(db, source, dataclasses.replace(spec, memory_budget=budget, replace=True))
    assert got.levels == expected.levels
    assert got.score == pytest.approx(expected.score, rel=1e-12, abs=1e-12)
    for key in ("classes", "suppressed_rows", "rows"):
        assert got.measures[key] == expected.measures[key]
    assert "nodes_in_engine" not in expected.measures
    assert got.measures["nodes_in_engine"] >= 1
    pd.testing.assert_frame_equal(output_rows(db, spec.output), output_rows(ref_db, spec.output))
    return got


def canonical(part: Partition) -> list:
    """A partition's classes as sorted (QI nodes, size, sensitive counts) tuples."""
    nodes = part.nodes
    sens: dict[int, list] = {i: [] for i in range(part.classes)}
    if part.pair_class is not None:
        for c, v, n in zip(part.pair_class, part.pair_value, part.pair_count, strict=True):
            sens[int(c)].append((int(v), int(n)))
    return sorted(
        (tuple(map(int, nodes[i])), int(part.sizes[i]), tuple(sorted(sens[i])))
        for i in range(part.classes)
    )


def test_node_classes_equal_the_in_memory_ones(db):
    setup(db, people(600, seed=5))
    keys = [db.hierarchies.resolve(q) for q in QIS]
    mem = Histogram.from_database(db, "people", QIS, keys, "disease")
    eng = load_histogram(db, "people", QIS, keys, "disease", budget=TINY)
    assert isinstance(eng, EngineHistogram) and not isinstance(mem, EngineHistogram)
    assert eng.rows == mem.rows and eng.sens_labels == mem.sens_labels
    np.testing.assert_allclose(eng.overall_distribution(), mem.overall_distribution())
    for j in range(len(QIS)):
        np.testing.assert_array_equal(eng.marginal(j), mem.marginal(j))
    np.testing.assert_array_equal(eng.pair_marginal(0, 2), mem.pair_marginal(0, 2))
    for levels in [(0, 0, 0), (1, 0, 2), (3, 1, 5), (2, 1, 0)]:
        levels = tuple(min(lv, h.top_level) for lv, h in zip(levels, mem.hierarchies, strict=True))
        want = canonical(Partition.from_histogram(mem, levels))
        assert canonical(eng.classes_in_engine(levels)) == want
        # and a roll-up of an engine partition agrees too
        bottom = eng.classes_in_engine((0, 0, 0))
        assert canonical(bottom.rollup(eng, levels)) == want
    with pytest.raises(RuntimeError, match="kept in the engine"):
        _ = eng.codes
    eng.close()
    assert not any(n.startswith("__anonsql_hist") for n in db.backend.relation_names())


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(1, 300),
    seed=st.integers(0, 10_000),
    sensitive=st.booleans(),
    kept=st.sampled_from([0.05, 2.0]),
    steps=st.integers(2, 12),
)
def test_nodes_grouped_from_nodes_kept_in_the_engine(n, seed, sensitive, kept, steps):
    """Every node written to the engine (materialize_rows 0) and kept as a base for the
    nodes above it when small enough: any sequence of nodes (random, repeated, each read
    whole, ordered, or without its sensitive values) gets the in-memory classes, whichever
    base its GROUP BY reads; with a storage cap (BASE_ROWS) that evicts bases too; nothing
    is left in the engine after close."""
    db = Database.open(":memory:")
    setup(db, people(n, seed))
    keys = [db.hierarchies.resolve(q) for q in QIS]
    sens = "disease" if sensitive else None
    mem = Histogram.from_database(db, "people", QIS, keys, sens)
    with mock.patch.object(engine_classes, "BASE_ROWS", kept):
        eng = load_histogram(db, "people", QIS, keys, sens, budget=TINY)
        assert isinstance(eng, EngineHistogram)
        eng.materialize_rows = 0
        rng = np.random.default_rng(seed)
        levels = tuple(0 for _ in mem.heights)
        for step in range(steps):
            # every other node above the last one: a GROUP BY of a node kept below it
            drawn = tuple(int(rng.integers(0, h)) for h in mem.heights)
            levels = tuple(map(max, levels, drawn)) if step % 2 else drawn
            below = [
                lv for lv in eng._bases if lv != levels and min(map(int.__sub__, levels, lv)) >= 0
            ]
            if below:  # a kept node below has fewer rows than the histogram: it is read
                assert eng._base_for(levels)[0] != eng.relation
            want = canonical(Partition.from_histogram(mem, levels))
            assert canonical(eng.classes_in_engine(levels)) == want, levels
            # read again from what the engine kept: ordered, and as class sizes alone
            rows = eng.db.backend.fetch_df(eng.node_query(levels, ordered=True))
            assert int(rows["n"].sum()) == mem.rows
            sizes = eng.db.backend.fetch_df(eng.node_query(levels, sensitive=False))
            assert sorted(sizes["n"]) == sorted(c[1] for c in want)
        assert eng.nodes_materialized >= 1
        total = sum(b[1] for b in eng._bases.values())
        assert total <= max(
            kept * eng.distinct, max((b[1] for b in eng._bases.values()), default=0)
        )
        eng.close()
    assert not any(t.startswith("__anonsql_hist") for t in db.backend.relation_names())


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(1, 120),
    seed=st.integers(0, 10_000),
    k=st.integers(1, 6),
    supp=st.sampled_from([0.0, 0.05, 0.2]),
    with_l=st.booleans(),
    write=st.booleans(),
)
def test_random_tables_same_answers_on_duckdb(n, seed, k, supp, with_l, write):
    """``write``: every node the engine computes is written there first and the nodes above
    it grouped from it (as at 100 M rows, where MATERIALIZE_ROWS is reached)."""
    with mock.patch.object(engine_classes, "MATERIALIZE_ROWS", 0 if write else 10**12):
        _random_table_run(n, seed, k, supp, with_l)


def _random_table_run(n, seed, k, supp, with_l):
    frame = people(n, seed)
    ref, db = Database.open(":memory:"), Database.open(":memory:")
    setup(ref, frame)
    setup(db, frame)
    spec = Spec(qis=QIS, k=k, suppression=supp, output="out", **roles())
    if with_l:
        spec = dataclasses.replace(spec, sensitive="disease", l=2, **roles(sensitive="disease"))
    try:
        expected = anonymize(ref, "people", spec)
    except InputError:  # no anonymous node: the engine run must say so too
        with pytest.raises(InputError):
            anonymize(db, "people", dataclasses.replace(spec, memory_budget=TINY))
        return
    got = same_run(ref, db, spec)
    assert got.checked == expected.checked


def test_a_budget_between_gives_both_placements(db):
    """Histogram too large, some nodes' classes fit and others do not: those are read
    whole, these assessed in batches as they come (a NodeSummary); same answer."""
    frame = people(3000, seed=11)
    setup(db, frame)
    ref = Database.open(":memory:")
    setup(ref, frame)
    got = same_run(ref, db, SPECS[1], budget=200_000)
    assert got.measures["nodes_in_engine"] > got.measures["nodes_summarized"] >= 1


def test_missing_values_suppressed_in_the_engine_too(db):
    frame = people(500, seed=2)
    frame.loc[frame.index[:7], "zip"] = "99999"  # not in the zip hierarchy
    frame.loc[frame.index[7:9], "zip"] = None
    ref = Database.open(":memory:")
    # hierarchies of the other rows' values only
    setup(ref, frame.dropna().query("zip != '99999'"))
    setup(db, frame.dropna().query("zip != '99999'"))
    ref.backend.write_frame("people", frame)
    db.backend.write_frame("people", frame)
    spec = dataclasses.replace(SPECS[1], missing="suppress", suppression=0.1)
    got = same_run(ref, db, spec)
    assert got.measures["missing_rows"] == 9
    with pytest.raises(MissingValuesError, match="99999"):
        anonymize(db, "people", dataclasses.replace(SPECS[0], memory_budget=TINY, replace=True))


def test_adult_same_answer(db):
    from tests.helpers.data import ADULT_QIS, load_adult

    load_adult(db)
    ref = Database.open(":memory:")
    load_adult(ref)
    spec = Spec(
        qis=ADULT_QIS[:6],
        sensitive="occupation",
        k=5,
        l=2,
        suppression=0.02,
        output="out",
        keep=["workclass", "salary-class"],  # Adult's other columns, released as they are
    )
    same_run(ref, db, spec, source="adult")


def test_postgres_same_answers(pg_url):
    frame = people(400, seed=3)
    ref = Database.open(":memory:")
    setup(ref, frame)
    db = Database.open(pg_url)
    try:
        setup(db, frame)
        for spec in SPECS:
            same_run(ref, db, spec)
        # every node written to the engine first, the nodes above it grouped from it
        with mock.patch.object(engine_classes, "MATERIALIZE_ROWS", 0):
            got = same_run(ref, db, SPECS[1])
        assert got.measures["nodes_written_in_engine"] >= 1
    finally:
        db.close()


# -- the option on every surface ----------------------------------------------------------------
def test_parse_size():
    assert parse_size("1GiB") == 1 << 30
    assert parse_size("512 MiB") == 512 << 20
    assert parse_size("2GB") == 2 * 1000**3
    assert parse_size(4096) == 4096
    assert parse_size("1.5k") == 1536
    for bad in ["lots", "1 parsec", -1, 0, True, "0B", "nan"]:
        with pytest.raises(InputError):
            parse_size(bad)


def _role_flags(qis=QIS) -> list[str]:
    """tests.engines.test_backends.roles() as CLI options."""
    r = roles(qis)
    return ["--keep", ",".join(r["keep"]), "--allow-identifying", ",".join(r["allow_identifying"])]


def test_every_surface_takes_the_budget(tmp_path):
    import anonsql
    from anonsql.cli.main import cli

    path = tmp_path / "t.duckdb"
    db = Database.open(str(path))
    setup(db, people(200, seed=8))
    db.close()
    # CLI
    res = CliRunner().invoke(
        cli,
        [
            *("anonymize", "people", "--qi", ",".join(QIS), "--k", "3", *_role_flags()),
            *("--memory-budget", "1B", "--out", "o1", "--json", "--db", str(path)),
        ],
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["measures"]["nodes_in_engine"] >= 1
    bad = CliRunner().invoke(
        cli,
        [
            *("anonymize", "people", "--qi", "age", "--k", "3", *_role_flags(["age"])),
            *("--memory-budget", "much", "--db", str(path)),
        ],
    )
    assert bad.exit_code != 0 and "memory size" in bad.output
    # spec file
    spec_file = tmp_path / "s.toml"
    spec_file.write_text(
        f'database = "{path}"\ntable = "people"\nqi = ["age", "sex", "zip"]\nk = 3\n'
        'keep = ["id", "disease"]\nallow_identifying = ["id"]\n'
        'memory_budget = "1B"\noutput = "o2"\n'
    )
    res = CliRunner().invoke(cli, ["run", str(spec_file), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["measures"]["nodes_in_engine"] >= 1
    # SQL statement parameter, and the Python API
    with anonsql.connect(str(path)) as con:
        run = con.sql(
            "ANONYMIZE TABLE people INTO o3 WITH (k = 3, qi = (age, sex, zip), "
            "keep = (id, disease), allow_identifying = (id), memory_budget = '1B')"
        )
        assert run.measures["nodes_in_engine"] >= 1
    goal = {"qi": QIS, "k": 3, **roles()}
    run = anonsql.anonymize((str(path), "people"), {**goal, "memory_budget": 1})
    assert run.measures["nodes_in_engine"] >= 1
    run = anonsql.anonymize((str(path), "people"), goal)
    assert "nodes_in_engine" not in run.measures
    with pytest.raises(InputError, match="memory"):
        anonsql.anonymize((str(path), "people"), {**goal, "memory_budget": "x"})


def test_hierarchy_without_every_level_refused(db):
    frame = pd.DataFrame({"a": ["x", "y", "z"] * 4, "b": ["p", "q"] * 6})
    db.backend.write_frame("t", frame)
    db.hierarchies.save(builders.flat("a", ["x", "y", "z"]))
    db.hierarchies.save(builders.flat("b", ["p", "q"]))
    got = anonymize(db, "t", Spec(qis=["a", "b"], k=2, memory_budget=TINY))
    assert got.measures["nodes_in_engine"] >= 1


def test_the_budget_bounds_what_is_read(db):
    """The peak, not only what is kept: a histogram surely too large is not read to find
    out (the engine's estimate decides), a hub too large is cut off by a LIMIT, and
    DuckDB's own buffers are held to a share of the budget while the histogram is there."""
    frame = people(3000, seed=4)
    setup(db, frame)
    keys = [db.hierarchies.resolve(q) for q in QIS]
    exact = len(frame.drop_duplicates([*QIS, "disease"]))
    estimate = estimated_combinations(db, "people", QIS, "disease", cap=10)
    assert estimate == pytest.approx(exact, rel=0.1)
    # a source with no more rows than the cap fits whatever it holds: nothing is estimated
    assert estimated_combinations(db, "people", QIS, "disease", cap=3000) is None

    def limit() -> int:
        got = db.backend.fetchall("SELECT current_setting('memory_limit')")
        return parse_size(str(got[0][0]))

    db.backend.execute("SET memory_limit = '4GiB'")
    hist = load_histogram(db, "people", QIS, keys, "disease", budget=100_000)
    assert isinstance(hist, EngineHistogram)
    assert limit() <= max(int(100_000 * ENGINE_SHARE), ENGINE_FLOOR) + (1 << 20)
    mem = Histogram.from_database(db, "people", QIS, keys, "disease")
    levels = (0, 0, 0)
    rows = len(db.backend.fetch_df(hist.node_query(levels)))
    assert hist.classes_in_engine(levels, max_rows=rows - 1) is None
    full = hist.classes_in_engine(levels, max_rows=rows)
    assert full is not None
    assert canonical(full) == canonical(Partition.from_histogram(mem, levels))
    hist.close()
    assert limit() == 4 << 30


# -- nodes too large for the budget: assessed in batches (algorithms/lattice/node_summary)


def _model_sets():
    from anonsql import models as md

    return [
        lambda: [md.KAnonymity(3)],
        lambda: [md.KAnonymity(2), md.EntropyLDiversity(1.8)],
        lambda: [md.RecursiveCLDiversity(2, 3.0)],
        lambda: [md.GrassbergerEntropyLDiversity(1.5)],
        lambda: [md.DistinctLDiversity(2), md.EqualDistanceEMD(0.2)],
        lambda: [md.OrderedDistanceEMD(0.25)],
        lambda: [md.L1Closeness(0.3)],
        lambda: [md.EnhancedBetaLikeness(1.0)],
        lambda: [md.BasicBetaLikeness(0.8)],
        lambda: [md.DeltaDisclosure(1.2)],
        lambda: [md.KAnonymity(2), md.AverageRisk(0.3)],
        lambda: [md.SampleUniqueness(0.02)],
        lambda: [md.PopulationUniqueness(0.05, population_size=20_000)],
        lambda: [md.KMap(3, "pop")],
        lambda: [md.DeltaPresence(0.05, 0.7, "pop")],
        lambda: [md.EstimatedKMap(3, population_size=5_000)],
    ]


METRICS = ["loss", "precision", "height", "entropy", "entropy-nm", "aecs", "dm", "dm-star", "ncp"]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(5, 150),
    seed=st.integers(0, 10_000),
    which=st.integers(0, len(_model_sets()) - 1),
    metric=st.sampled_from(METRICS),
    supp=st.sampled_from([0.0, 0.05, 0.3]),
    batch=st.integers(1, 9),
    write=st.booleans(),
)
def test_nodes_assessed_in_batches_as_in_memory(n, seed, which, metric, supp, batch, write):
    """A node summarized batch by batch (batches of a few rows, so classes with several
    sensitive values span batches) has the in-memory node's verdict, suppressed records,
    released classes, score, partition bound and screening, for every model and metric."""
    from anonsql.algorithms.lattice.node_summary import NodeSummary
    from anonsql.metrics.quality import quality_model
    from anonsql.models.requirements import Requirements, population_histogram

    frame = people(n, seed)
    db = Database.open(":memory:")
    setup(db, frame)
    population = pd.concat([frame, people(n + 40, seed + 1)], ignore_index=True)
    db.backend.write_frame("pop", population)
    keys = [db.hierarchies.resolve(q) for q in QIS]
    mem = Histogram.from_database(db, "people", QIS, keys, "disease")
    eng = load_histogram(db, "people", QIS, keys, "disease", budget=TINY)
    runs = []
    for hist in (mem, eng):
        models = _model_sets()[which]()
        req = Requirements(models, supp)
        req.population = population_histogram(db, models, QIS, keys)
        try:
            req.validate(hist)
        except InputError:  # e.g. l above the table's distinct sensitive values
            eng.close()
            assume(False)
        quality = quality_model(metric)
        quality.prepare(hist)
        runs.append((req, quality))
    (req_m, q_m), (req_e, q_e) = runs
    eng.evaluate_with(req_e, q_e)
    eng.node_bytes, eng.batch_rows = 1, batch
    eng.materialize_rows = 0 if write else 10**12
    rng = np.random.default_rng(seed)
    heights = mem.heights
    nodes = {tuple(int(rng.integers(0, h)) for h in heights) for _ in range(4)}
    nodes.add(tuple([0] * len(heights)))
    # coarser nodes first: their class counts make finer ones known too large, which the
    # engine then tests by class sizes first (EngineHistogram._proven)
    for levels in sorted(nodes, key=lambda lv: -sum(lv)):
        got = eng._node(levels)
        part = Partition.from_histogram(mem, levels)
        if not isinstance(got, NodeSummary):  # one class: read whole
            assert part.classes == 1
            continue
        assert_same_summary(got, part, (req_m, q_m, mem), (req_e, eng))
    eng.close()


def assert_same_summary(got, part: Partition, memory: tuple, engine: tuple) -> None:
    """A NodeSummary ``got`` says of its node what the in-memory code says of ``part``:
    screening, verdict, suppressed records, released classes, score, bound, cleanness.
    ``memory``: (requirements, quality, histogram); ``engine``: (requirements, histogram)."""
    req_m, q_m, mem = memory
    req_e, eng = engine
    levels = part.levels
    # first the screening: a node proven non-anonymous in the engine by its class sizes
    # (NodeSummary.proven) answers it without its batches
    s_got = got.screening(req_e.allowed(eng.rows), eng.rows)
    s_mem = req_m.screen(part, mem)
    assert s_got.anonymous == s_mem.anonymous, levels
    assert s_got.below >= s_mem.below - 1e-9 or s_got.assessment is None
    want = req_m.assess(part, mem)
    a = got.assessment
    assert (a.anonymous, a.suppressed_rows) == (want.anonymous, want.suppressed_rows)
    assert a.released == int(want.passing.sum()) and got.classes == part.classes
    expected = q_m.score(part, want.suppressed)
    assert got.score == pytest.approx(expected, rel=1e-9, abs=1e-9), levels
    bound = q_m.partition_bound(part)
    assert (got.bound is None) == (bound is None)
    if bound is not None:
        assert got.bound == pytest.approx(bound, rel=1e-12)
    s_got = got.screening(req_e.allowed(eng.rows), eng.rows)
    assert s_got.anonymous == s_mem.anonymous
    assert s_got.below >= s_mem.below - 1e-9
    if s_mem.anonymous:
        assert s_got.clean == s_mem.clean


# every node of each drawn lattice is checked (tens of engine statements per node): 15 tables
# per run, new ones at every run
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(5, 200),
    seed=st.integers(0, 10_000),
    k=st.integers(2, 6),
    metric=st.sampled_from(METRICS),
    supp=st.sampled_from([0.0, 0.05, 0.3]),
    sensitive=st.booleans(),
    write=st.booleans(),
)
def test_k_anonymity_summaries_from_class_sizes(n, seed, k, metric, supp, sensitive, write):
    """With k-anonymity alone, a node too large to hold is summarized from its class sizes
    and the suppressed records' counts per QI value in the engine, not its batches: every
    node of the lattice has the in-memory node's verdict, suppressed records, released
    classes, score, bound and screening, for every metric, with and without a sensitive
    attribute, and from nodes kept in the engine."""
    import itertools

    from anonsql import models as md
    from anonsql.algorithms.lattice.node_summary import NodeSummary
    from anonsql.metrics.quality import quality_model
    from anonsql.models.requirements import Requirements

    db = Database.open(":memory:")
    setup(db, people(n, seed))
    keys = [db.hierarchies.resolve(q) for q in QIS]
    sens = "disease" if sensitive else None
    mem = Histogram.from_database(db, "people", QIS, keys, sens)
    eng = load_histogram(db, "people", QIS, keys, sens, budget=TINY)
    runs = []
    for hist in (mem, eng):
        req = Requirements([md.KAnonymity(k)], supp)
        quality = quality_model(metric)
        quality.prepare(hist)
        runs.append((req, quality))
    (req_m, q_m), (req_e, q_e) = runs
    eng.evaluate_with(req_e, q_e)
    eng.node_bytes = 1  # every node of more than one row is too large to hold
    eng.materialize_rows = 0 if write else 10**12
    assert eng._scored_in_sql()
    lattice = itertools.product(*[range(h) for h in mem.heights])
    summarized = 0
    for levels in sorted(lattice, key=lambda lv: -sum(lv)):
        got = eng._node(levels)
        part = Partition.from_histogram(mem, levels)
        if not isinstance(got, NodeSummary):  # one row: read whole
            continue
        summarized += 1
        assert_same_summary(got, part, (req_m, q_m, mem), (req_e, eng))
    assert summarized >= 1
    eng.close()
    assert not any(t.startswith("__anonsql_hist") for t in db.backend.relation_names())


def test_engine_out_of_memory_is_a_clear_error(db, monkeypatch):
    """DuckDB's aggregate can run out of memory under the budget's share (100 M near-unique
    rows, README "Histogram kept in the engine"): the user hears what to raise, and nothing
    is left behind (no output, DuckDB's memory limit restored)."""
    setup(db, people(200, seed=3))
    limit = db.backend.fetchall("SELECT current_setting('memory_limit')")[0][0]
    real = type(db.backend).execute

    def execute(self, statement, params=None):
        if "__anonsql_hist_" in self.sql_text(statement) and "CREATE" in self.sql_text(statement):
            raise RuntimeError("Out of Memory Error: could not allocate block of size 256.0 KiB")
        return real(self, statement, params)

    monkeypatch.setattr(type(db.backend), "execute", execute)
    with pytest.raises(InputError, match=r"ran out of memory .* larger --memory-budget"):
        anonymize(db, "people", dataclasses.replace(SPECS[0], memory_budget=TINY))
    monkeypatch.undo()
    assert not db.backend.table_exists("out")
    # restored from its text, which DuckDB rounds to one decimal of GiB
    now = db.backend.fetchall("SELECT current_setting('memory_limit')")[0][0]
    assert parse_size(now) == pytest.approx(parse_size(limit), rel=0.01)


# -- the histogram built in hash parts (DuckDB: 100 M near-unique rows, README) -------------


def _relation_rows(db: Database, hist: EngineHistogram) -> pd.DataFrame:
    frame = db.backend.fetch_df(f'SELECT * FROM "{hist.relation}"')
    keys = [c for c in frame.columns if c != "n"]
    # rows whose values a hierarchy lacks (a NULL id) are counted together per id tuple
    frame = frame.groupby(keys, dropna=False, as_index=False)["n"].sum()
    return frame.sort_values(keys).reset_index(drop=True).astype({"n": "int64"})


def _temporary_relations(db: Database) -> list[str]:
    got = db.backend.fetchall(
        "SELECT table_name FROM duckdb_tables() WHERE table_name LIKE '__anonsql_hist_%'"
    )
    return [r[0] for r in got]


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(1, 150),
    seed=st.integers(0, 10_000),
    parts=st.integers(2, 6),
    sensitive=st.booleans(),
    lacking=st.integers(0, 5),
)
def test_histogram_in_parts_is_the_histogram(n, seed, parts, sensitive, lacking):
    """The parts' GROUP BYs together hold the one GROUP BY's rows (the same combinations
    of leaf ids and counts), and the in-memory histogram's."""
    frame = people(n, seed)
    frame.loc[frame.index[: min(lacking, n)], "zip"] = "99999"  # not in the zip hierarchy
    db = Database.open(":memory:")
    setup(db, frame)
    keys = [db.hierarchies.resolve(q) for q in QIS]
    s = "disease" if sensitive else None
    one = EngineHistogram.build(db, "people", QIS, keys, s, "suppress", TINY, parts=1)
    cut = EngineHistogram.build(db, "people", QIS, keys, s, "suppress", TINY, parts=parts)
    assert (one.parts, cut.parts) == (1, parts)
    pd.testing.assert_frame_equal(_relation_rows(db, cut), _relation_rows(db, one))
    mem = Histogram.from_database(db, "people", QIS, keys, s, "suppress")
    assert (cut.rows, cut.missing_rows) == (mem.rows, mem.missing_rows)
    assert cut.sens_labels == mem.sens_labels
    levels = (1, 0, 1)
    assert canonical(cut.classes_in_engine(levels)) == canonical(
        Partition.from_histogram(mem, levels)
    )
    one.close()
    cut.close()
    assert _temporary_relations(db) == []


def test_parts_follow_the_estimate_and_the_engine_limit(monkeypatch):
    """The parts derived from the estimate of combinations and DuckDB's limit (here made
    large by a larger cost per combination, capped at MAX_PARTS) give the in-memory
    search's optimum, classes, suppressed rows and output rows."""
    import anonsql.algorithms.lattice.engine_classes as ec

    frame = people(800, seed=21)
    ref, db = Database.open(":memory:"), Database.open(":memory:")
    setup(ref, frame)
    setup(db, frame)
    monkeypatch.setattr(ec, "GROUP_BYTES", 1 << 40)
    monkeypatch.setattr(ec, "MAX_PARTS", 4)
    for spec in SPECS[:2]:
        got = same_run(ref, db, spec)
        assert got.measures["histogram_parts"] == 4
    assert _temporary_relations(db) == []


def test_out_of_memory_in_a_part_starts_again_in_more_parts(db, monkeypatch):
    """DuckDB running out of memory in a part drops what the earlier parts wrote and builds
    again in PART_GROWTH times the parts; when MAX_PARTS fail too, the run stops with the
    budget error and leaves no temporary relation, its limit restored."""
    import anonsql.algorithms.lattice.engine_classes as ec

    frame = people(400, seed=8)
    setup(db, frame)
    ref = Database.open(":memory:")
    setup(ref, frame)
    real = type(db.backend).execute
    seen: list[int] = []

    def execute(self, statement, params=None):
        text = self.sql_text(statement)
        if "__anonsql_hist_" in text and "INSERT" in text:
            parts = int(re.search(r"% (\d+)", text).group(1))
            seen.append(parts)
            if parts < fail_below:
                raise RuntimeError("Out of Memory Error: failed to pin block of size 256.0 KiB")
        return real(self, statement, params)

    # two parts first: 1.5 times DuckDB's limit (the floor under a tiny budget) estimated
    estimate = estimated_combinations(db, "people", QIS, None, cap=0)
    monkeypatch.setattr(ec, "GROUP_BYTES", int(np.ceil(1.5 * ec.ENGINE_FLOOR / estimate)))
    monkeypatch.setattr(ec, "MAX_PARTS", 8)
    monkeypatch.setattr(type(db.backend), "execute", execute)
    fail_below = 8  # two parts fail, then eight pass
    got = same_run(ref, db, SPECS[0])
    assert got.measures["histogram_parts"] == 8 and seen[0] == 2
    assert _temporary_relations(db) == []
    fail_below = 10**9  # every attempt fails
    limit = db.backend.fetchall("SELECT current_setting('memory_limit')")[0][0]
    with pytest.raises(InputError, match=r"ran out of memory .* larger --memory-budget"):
        anonymize(db, "people", dataclasses.replace(SPECS[0], memory_budget=TINY, replace=True))
    assert _temporary_relations(db) == []
    monkeypatch.undo()
    now = db.backend.fetchall("SELECT current_setting('memory_limit')")[0][0]
    assert parse_size(now) == pytest.approx(parse_size(limit), rel=0.01)


def test_the_output_is_written_under_the_held_limit(db, monkeypatch):
    """DuckDB's limit, held while the histogram is kept in the engine, stays held while the
    output is written (the write of a 100 M-row table under the machine's limit took the
    process past the budget), and is restored after it, also when the write fails."""
    import anonsql.output.writer as an

    setup(db, people(600, seed=7))
    db.backend.execute("SET memory_limit = '4GiB'")

    def limit() -> int:
        got = db.backend.fetchall("SELECT current_setting('memory_limit')")
        return parse_size(str(got[0][0]))

    seen = []
    real = an.publish

    def watching(*args, **kwargs):
        seen.append(limit())
        return real(*args, **kwargs)

    monkeypatch.setattr(an, "publish", watching)
    spec = Spec(qis=QIS, k=3, suppression=0.05, output="out_held", memory_budget=TINY, **roles())
    result = anonymize(db, "people", spec)
    assert result.measures["nodes_in_engine"] > 0
    assert seen and seen[0] < 4 << 30
    assert limit() == 4 << 30

    def failing(*args, **kwargs):
        seen.append(limit())
        raise RuntimeError("write failed")

    monkeypatch.setattr(an, "publish", failing)
    spec = dataclasses.replace(spec, output="out_failed")
    with pytest.raises(RuntimeError, match="write failed"):
        anonymize(db, "people", spec)
    assert seen[-1] < 4 << 30
    assert limit() == 4 << 30

"""Several sensitive attributes (README "Several sensitive attributes"): each model that reads
a sensitive attribute applies to each (ARX's semantics), in the search, the guard, ``check``
and the report, on every surface. Held to a pandas brute force (tests/helpers/brute.py)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonsql.database import Database
from anonsql.errors import InputError
from anonsql.hierarchy.hierarchy import Hierarchy
from anonsql.run import anonymize
from anonsql.spec import Spec
from tests.helpers import brute
from tests.helpers.strategies import anonymization_cases

EPS = 1e-9
#: spec options of each model that reads a sensitive attribute, and its brute-force test
MODELS = {
    "distinct-l": (
        {"l": 2},
        lambda df, q, s: brute.distinct_values(df, q, s) >= 2,
    ),
    "entropy-l": (
        {"l": 1.5, "l_variant": "entropy-l"},
        lambda df, q, s: np.log(brute.entropy_values(df, q, s)) >= math.log(1.5) - EPS,
    ),
    "recursive-cl": (
        {"l": 2, "l_variant": "recursive-cl", "c": 2},
        lambda df, q, s: brute.recursive_values(df, q, s, 2) < 2,
    ),
    "equal-emd": ({"t": 0.3}, lambda df, q, s: brute.equal_emd_values(df, q, s) <= 0.3 + EPS),
    "ordered-emd": (
        {"t": 0.3, "t_variant": "ordered-emd"},
        lambda df, q, s: brute.ordered_emd_values(df, q, s) <= 0.3 + EPS,
    ),
    "l1": (
        {"t": 0.5, "t_variant": "l1"},
        lambda df, q, s: brute.l1_values(df, q, s) <= 0.5 + EPS,
    ),
    "beta": ({"beta": 1.0}, lambda df, q, s: brute.beta_values(df, q, s) <= 1.0 + EPS),
    "enhanced-beta": (
        {"beta": 1.0, "beta_variant": "enhanced"},
        lambda df, q, s: brute.beta_values(df, q, s, "enhanced") <= 1.0 + EPS,
    ),
    "delta": ({"delta": 1.5}, lambda df, q, s: brute.delta_values(df, q, s) < 1.5 - EPS),
}
SENSITIVE = ["s", "s2"]


def _db(df: pd.DataFrame, hs: list[Hierarchy]) -> Database:
    db = Database.open(":memory:")
    db.backend.write_frame("src", df)
    for h in hs:
        db.hierarchies.save(h)
    return db


def _spec(qis: list[str], options: dict, **kw) -> Spec:
    return Spec(
        qis=qis,
        sensitive=list(SENSITIVE),
        allow_identifying=list(qis),
        **options,
        **kw,
    )


def _passing(gen: pd.DataFrame, qis: list[str], test) -> pd.Series:
    """Per row of ``gen``: whether its class satisfies ``test`` on every sensitive attribute
    (the table's distributions are those of every row, as the guard counts them)."""
    ok = pd.Series(True, index=gen.index)
    keys = gen[qis].apply(tuple, axis=1)
    for s in SENSITIVE:
        per_class = test(gen, qis, s)
        ok &= keys.map(lambda key, p=per_class: bool(p.loc[key if len(key) > 1 else key[0]]))
    return ok


@settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    anonymization_cases(max_qis=2, max_rows=30),
    st.lists(st.sampled_from(["x", "y", "z", "7"]), min_size=30, max_size=30),
    st.sampled_from(sorted(MODELS)),
    st.sampled_from([None, 2]),
    st.sampled_from([0.0, 0.3]),
    st.sampled_from([None, 1]),
)
def test_search_and_guard_match_the_brute_force(case, s2, model, k, suppression, budget):
    """``budget``: None, the histogram in memory; 1 byte, kept in the engine."""
    df, hs = case
    df = df.assign(s2=s2[: len(df)])
    qis = [c for c in df.columns if c.startswith("q")]
    options, test = MODELS[model]
    db = _db(df, hs)
    try:
        spec = _spec(qis, options, k=k, suppression=suppression, output="out")
        spec.memory_budget = budget
        spec.drop_suppressed = True  # the view holds the released rows only
        try:
            run = anonymize(db, "src", spec)
        except InputError:
            # no optimum (or a goal no table could meet): the exhaustive scan agrees
            exhaustive = _spec(qis, options, k=k, suppression=suppression, algorithm="exhaustive")
            with pytest.raises(InputError):
                anonymize(db, "src", exhaustive)
            return
        exhaustive = anonymize(
            db, "src", _spec(qis, options, k=k, suppression=suppression, algorithm="exhaustive")
        )
        assert run.score == pytest.approx(exhaustive.score, abs=1e-9)
        levels = [run.levels[q] for q in qis]
        gen = brute.generalize(df, qis, [h.to_rows() for h in hs], levels)
        ok = _passing(gen, qis, test)
        if k is not None:
            sizes = gen.groupby(qis)[qis[0]].transform("size")
            ok &= sizes >= k
        # the run is anonymous: its failing classes stay within the limit
        assert (~ok).sum() <= suppression * len(df) + EPS
        out = db.backend.fetch_df("SELECT * FROM out")
        # the view keeps every sensitive attribute, and releases exactly the passing classes
        assert {"s", "s2"} <= set(out.columns)
        key = [*qis, "s", "s2"]
        assert sorted(map(tuple, out[key].astype(str).values.tolist())) == sorted(
            map(tuple, gen.loc[ok, key].astype(str).values.tolist())
        )
    finally:
        db.close()


# -- a small table: every surface, the guard after the source changes, check and the report --
ZIP = Hierarchy.from_rows("zip", [[z, z[:2] + "**", "*"] for z in ("1301", "1302", "1401", "1402")])
ROWS = pd.DataFrame(
    {
        "id": [1, 2, 3, 4, 5, 6],
        "zip": ["1301", "1302", "1301", "1401", "1402", "1401"],
        "s": ["lo", "hi", "lo", "lo", "hi", "hi"],
        "s2": ["a", "b", "a", "a", "b", "a"],
    }
)
ROLES = {"keep": ["id"], "allow_identifying": ["id", "zip"]}


def _small(path: str = ":memory:") -> Database:
    db = Database.open(path)
    db.backend.write_frame("src", ROWS)
    db.hierarchies.save(ZIP)
    return db


def _released(db: Database, output: str) -> dict[int, str]:
    return dict(db.backend.fetchall(f"SELECT id, zip FROM {output} ORDER BY id"))


def test_guard_enforces_every_attribute_after_the_source_changes():
    """Distinct 2-diversity on s and on s2: zip level 1. Deleting row 5 leaves "14**" with
    two values of s but one of s2: its rows are suppressed at the next read."""
    db = _small()
    r = anonymize(db, "src", Spec(qis=["zip"], sensitive="s,s2", l=2, output="o", **ROLES))
    assert r.levels == {"zip": 1}
    assert _released(db, "o") == {1: "13**", 2: "13**", 3: "13**", 4: "14**", 5: "14**", 6: "14**"}
    assert list(db.backend.fetch_df("SELECT * FROM o").columns) == ["id", "zip", "s", "s2"]
    db.backend.execute("DELETE FROM src WHERE id = 5")
    assert _released(db, "o") == {1: "13**", 2: "13**", 3: "13**", 4: "*", 6: "*"}
    # one attribute alone would release it: the guard tests each
    single = Spec(qis=["zip"], sensitive="s", l=2, output="o1", keep=["id", "s2"])
    single.allow_identifying = ROLES["allow_identifying"]
    single = anonymize(db, "src", single)
    assert single.levels == {"zip": 1} and _released(db, "o1")[4] == "14**"
    db.close()


def test_every_surface_takes_several_sensitive_attributes(tmp_path):
    """CLI (--sa s,s2), SQL (two is_sensitive COLUMNs; sensitive = (s, s2)), spec files (a
    list) and the Python API give the same release; check and the report name each."""
    import anonsql
    from anonsql.cli.main import cli

    path = str(tmp_path / "m.duckdb")
    _small(path).close()
    runner = CliRunner()
    args = ["--qi", "zip", "--sa", "s,s2", "--l", "2", "--keep", "id"]
    args += ["--allow-identifying", "id,zip", "--db", path]
    r = runner.invoke(cli, ["anonymize", "src", *args, "--out", "by_cli", "--json"])
    assert r.exit_code == 0, r.output
    stmt = (
        "CREATE VIEW by_sql AS SELECT * FROM src WITH ANONYMIZATION (ALGORITHM 'L-DIVERSITY' "
        'PARAMETERS \'{"l": 2, "allow_identifying": ["id", "zip"]}\' '
        "COLUMN zip PARAMETERS '{\"is_quasi_identifier\": true}' "
        "COLUMN s PARAMETERS '{\"is_sensitive\": true}' "
        "COLUMN s2 PARAMETERS '{\"is_sensitive\": true}' "
        "COLUMN id PARAMETERS '{\"is_insensitive\": true}')"
    )
    r = runner.invoke(cli, ["sql", stmt, "--db", path])
    assert r.exit_code == 0, r.output
    short = (
        "ANONYMIZE TABLE src INTO by_short WITH (l = 2, qi = (zip), sensitive = (s, s2), "
        "keep = (id), allow_identifying = (id, zip))"
    )
    r = runner.invoke(cli, ["sql", short, "--db", path])
    assert r.exit_code == 0, r.output
    spec = tmp_path / "spec.json"
    spec.write_text(
        json.dumps(
            {
                "table": "src",
                "qi": ["zip"],
                "sensitive": ["s", "s2"],
                "l": 2,
                "output": "by_spec",
                **ROLES,
            }
        )
    )
    r = runner.invoke(cli, ["run", str(spec), "--db", path])
    assert r.exit_code == 0, r.output
    anonsql.anonymize(
        (path, "src"), qi=["zip"], sensitive=["s", "s2"], l=2, output="by_api", **ROLES
    )
    db = Database.open(path)
    frames = [
        db.backend.fetch_df(f"SELECT id, zip, s, s2 FROM {o} ORDER BY id")
        for o in ("by_cli", "by_sql", "by_short", "by_spec", "by_api")
    ]
    db.backend.execute("DELETE FROM src WHERE id = 5")
    after = [_released(db, o) for o in ("by_cli", "by_sql", "by_short", "by_spec", "by_api")]
    db.close()
    for f in frames[1:]:
        pd.testing.assert_frame_equal(frames[0], f)
    assert (frames[0]["zip"] != "*").all()
    assert all(a == {1: "13**", 2: "13**", 3: "13**", 4: "*", 6: "*"} for a in after)
    # check: each model on each attribute (the output fails s2 now)
    r = runner.invoke(
        cli, ["check", "src", "--qi", "zip", "--sa", "s,s2", "--l", "2", "--json", "--db", path]
    )
    models = {m["description"]: m["holds"] for m in json.loads(r.output)["models"]}
    assert models == {"distinct 2-diversity on s": False, "distinct 2-diversity on s2": False}
    r = runner.invoke(
        cli,
        [
            "check",
            "src",
            "--qi",
            "zip",
            "--levels",
            "zip=1",
            "--sa",
            "s,s2",
            "--l",
            "2",
            "--json",
            "--db",
            path,
        ],
    )
    models = {m["description"]: m["holds"] for m in json.loads(r.output)["models"]}
    assert models == {"distinct 2-diversity on s": True, "distinct 2-diversity on s2": False}
    # the report: one section per attribute
    r = runner.invoke(cli, ["report", "1", "--out", str(tmp_path), "--db", path])
    assert r.exit_code == 0, r.output
    report = json.loads((tmp_path / "anonsql_run_1.json").read_text())
    assert [x["attribute"] for x in report["sensitive"]] == ["s", "s2"]
    assert [m["model"] for x in report["sensitive"] for m in x["models"]] == [
        "distinct 2-diversity",
        "distinct 2-diversity",
    ]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"algorithm": "mondrian", "k": 2}, "the algorithms that protect several are flash"),
        ({"algorithm": "greedy", "k": 2}, "the algorithms that protect several are flash"),
        ({"recoding_mode": "local"}, "with local recoding"),
        ({"t": 0.2, "t_variant": "hierarchical-emd", "l": None}, "hierarchical-EMD"),
    ],
)
def test_what_refuses_several_sensitive_attributes(options, message):
    db = _small()
    goal = {"l": 2, **options}
    goal = {k: v for k, v in goal.items() if v is not None}
    with pytest.raises(InputError, match=message):
        anonymize(db, "src", Spec(qis=["zip"], sensitive=["s", "s2"], **goal, **ROLES))
    db.close()


def test_several_sensitive_attributes_with_a_unit():
    """With a privacy unit the composite is built over the units' rows: each attribute's
    values count once per unit."""
    frame = ROWS.assign(pid=[f"p{i}" for i in ROWS["id"]])
    frame = pd.concat([frame, frame.assign(id=frame["id"] + 10)])  # two rows per person
    db = Database.open(":memory:")
    db.backend.write_frame("src", frame)
    db.hierarchies.save(ZIP)
    spec = Spec(qis=["zip"], sensitive=["s", "s2"], l=2, unit="pid", output="o", **ROLES)
    r = anonymize(db, "src", spec)
    assert r.levels == {"zip": 1} and r.measures["units"] == 6
    db.backend.execute("DELETE FROM src WHERE pid = 'p5'")
    got = db.backend.fetch_df("SELECT zip, count(*) AS n FROM o GROUP BY zip ORDER BY zip")
    assert got.values.tolist() == [["*", 4], ["13**", 6]]
    db.close()


def test_several_sensitive_attributes_on_server_engines_equal_duckdb(engine):
    """PostgreSQL and Spark: the same search and the same guard on each attribute."""
    db = _small()
    spec = dict(qis=["zip"], sensitive=["s", "s2"], l=2, t=0.5, **ROLES)
    local = anonymize(db, "src", Spec(**spec, output="o"))
    published = db.backend.fetch_df("SELECT * FROM o ORDER BY id")
    db.backend.execute("DELETE FROM src WHERE id = 5")
    expected = db.backend.fetch_df("SELECT * FROM o ORDER BY id")
    db.close()
    remote = engine()
    remote.backend.write_frame("src", ROWS)
    remote.hierarchies.save(ZIP)
    r = anonymize(remote, "src", Spec(**spec, output="o"))
    assert r.levels == local.levels and r.score == pytest.approx(local.score)
    if engine.name == "spark":
        # one read of the view as published (a read plans both attributes' CTEs: ~8 s on
        # Spark); the read after a change is the same SQL, tested on DuckDB and PostgreSQL
        got = remote.backend.fetch_df("SELECT * FROM o ORDER BY id")
        pd.testing.assert_frame_equal(
            published.reset_index(drop=True), got.reset_index(drop=True), check_dtype=False
        )
        return
    remote.backend.execute("DELETE FROM src WHERE id = 5")
    got = remote.backend.fetch_df("SELECT * FROM o ORDER BY id")
    pd.testing.assert_frame_equal(
        expected.reset_index(drop=True), got.reset_index(drop=True), check_dtype=False
    )


def test_null_is_no_value_in_each_attribute():
    """A NULL is no value in its own attribute only: "13**" holds two values of s and of s2
    besides its NULLs; "14**" holds one value of s (its other rows NULL there), so distinct
    2-diversity suppresses it, in the search and in the guard."""
    frame = pd.DataFrame(
        {
            "id": [1, 2, 3, 4, 5, 6],
            "zip": ["1301", "1302", "1301", "1401", "1402", "1401"],
            "s": ["lo", None, "hi", "lo", None, None],
            "s2": ["a", "b", None, "a", "b", "c"],
        }
    )
    db = Database.open(":memory:")
    db.backend.write_frame("src", frame)
    db.hierarchies.save(ZIP)
    spec = Spec(qis=["zip"], sensitive=["s", "s2"], l=2, suppression=0.5, output="o", **ROLES)
    r = anonymize(db, "src", spec)
    assert r.levels == {"zip": 1} and r.measures["suppressed_rows"] == 3
    assert _released(db, "o") == {1: "13**", 2: "13**", 3: "13**", 4: "*", 5: "*", 6: "*"}
    db.close()


@pytest.mark.parametrize("algorithm", ["exhaustive", "heuristic"])
def test_every_lattice_search_protects_each_attribute(algorithm):
    db = _small()
    spec = dict(qis=["zip"], sensitive=["s", "s2"], l=2, **ROLES)
    flash = anonymize(db, "src", Spec(**spec))
    other = anonymize(db, "src", Spec(**spec, algorithm=algorithm))
    assert other.levels == flash.levels == {"zip": 1} and other.score == flash.score
    db.close()

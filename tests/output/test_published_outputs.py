"""Published outputs never release what they hide (issue 12): the sequences of the issue, each
on DuckDB and PostgreSQL. After every step the output passes ``anonsql check`` for every model
of its run, an independent pandas groupby over the output finds no released class failing
them, and neither the source (apart from the test's own edits) nor an unrelated canary table
is changed by anonsql."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from anonsql.cli.main import cli
from anonsql.database import Database
from anonsql.hierarchy import builders
from anonsql.hierarchy.hierarchy import Hierarchy
from tests.helpers.strategies import anonymization_cases

QIS = ["age", "sex", "zip"]
QI_ARG = ",".join(QIS)
ZIPS = ["13053", "13068", "14850", "14853", "14867"]
#: a leaf of the zip hierarchy that no row holds: a row with it forms a new class
SPARE_ZIP = "14899"
DISEASE_ROWS = [
    ["flu", "infection", "*"],
    ["hiv", "infection", "*"],
    ["cancer", "chronic", "*"],
    ["gastritis", "chronic", "*"],
]


def people(n: int = 300, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "id": np.arange(n),
            "name": [f"person {i}" for i in range(n)],
            "age": rng.integers(20, 60, n),
            "sex": rng.choice(["m", "f"], n),
            "zip": rng.choice(ZIPS, n),
            "disease": rng.choice(["flu", "cancer", "hiv", "gastritis"], n, p=[0.5, 0.2, 0.2, 0.1]),
        }
    )


def roles(run_args=(), name: bool = True) -> list[str]:
    """The CLI options giving a role to each column of ``people`` that is neither a QI nor
    the sensitive attribute (every column of an output has a role): ``id`` is the test's row
    key (the tests find rows again by it), kept although unique; ``name`` is a direct
    identifier, dropped (``name=False``: the test declares it itself, or the table has none);
    ``disease``, unless ``run_args`` make it the sensitive attribute, is kept as it is."""
    keep = "id" if "--sa" in run_args else "id,disease"
    out = ["--keep", keep, "--allow-identifying", "id"]
    return [*out, "--mask", "name=drop"] if name else out


#: the same roles in a spec file
SPEC_ROLES = 'keep = ["id", "disease"]\nallow_identifying = ["id"]\nmask = { name = "drop" }\n'


def canary() -> pd.DataFrame:
    return pd.DataFrame({"k": [1, 2, 3], "secret": ["a", "b", None]})


def store_hierarchies(db: Database, age_widths=(5, 10, 20)) -> None:
    db.hierarchies.save(builders.intervals("age", range(20, 60), list(age_widths)), "age")
    db.hierarchies.save(builders.flat("sex", ["m", "f"]), "sex")
    db.hierarchies.save(builders.mask("zip", [*ZIPS, SPARE_ZIP]), "zip")
    db.hierarchies.save(Hierarchy.from_rows("disease", DISEASE_ROWS))


class Env:
    """One database (a DuckDB file or a fresh PostgreSQL database): a connection for the
    test's own SQL and the CLI against the same target."""

    def __init__(self, engine: str, target: str) -> None:
        self.engine = engine
        self.target = target
        self.db = Database.open(target)
        self.runner = CliRunner()
        #: the source holds rows with QI values the hierarchies lack (suppressed by the guard)
        self.unknown_rows = False

    def cli(self, *args: str, code: int | None = 0):
        result = self.runner.invoke(cli, [*args, "--db", self.target])
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        if code is not None:
            assert result.exit_code == code, result.output
        return result

    def execute(self, sql: str, params: list | None = None) -> None:
        self.db.backend.execute(sql, params)

    def frame(self, name: str) -> pd.DataFrame:
        return self.db.backend.fetch_df(f'SELECT * FROM "{name}"')

    def frozen(self, name: str) -> list[str]:
        """The relation's rows, order-free and NULL-safe."""
        return sorted(repr(tuple(r)) for r in self.db.backend.fetchall(f'SELECT * FROM "{name}"'))

    def relations(self) -> list[str]:
        return sorted(self.db.backend.relation_names())

    def runs(self) -> list[tuple]:
        if not self.db.backend.table_exists("anonsql_runs"):
            return []
        return self.db.backend.fetchall(
            "SELECT run_id, output, algorithm, levels FROM anonsql_runs ORDER BY run_id"
        )

    def latest_run(self, output: str) -> int:
        rows = self.db.backend.fetchall(
            "SELECT MAX(run_id) FROM anonsql_runs WHERE output = ?", [output]
        )
        return int(rows[0][0])

    def check(self, view: str, check_args: list[str], qis: list[str] = QIS) -> None:
        """``anonsql check`` passes for the run's models (its source and the canary table
        unchanged by it)."""
        result = self.cli("check", view, "--qi", ",".join(qis), *check_args, code=None)
        assert result.exit_code == 0, result.output

    def close(self) -> None:
        self.db.close()


@pytest.fixture(params=["duckdb", "postgres"])
def env(request, tmp_path):
    if request.param == "duckdb":
        target = str(tmp_path / "t.duckdb")
    else:
        target = request.getfixturevalue("pg_url")
    e = Env(request.param, target)
    yield e
    e.close()


def setup_people(env: Env, frame: pd.DataFrame | None = None) -> pd.DataFrame:
    frame = people() if frame is None else frame
    env.db.backend.write_frame("people", frame)
    env.db.backend.write_frame("canary", canary())
    store_hierarchies(env.db)
    return frame


class Untouched:
    """Asserts that what anonsql runs inside the block leaves these relations as they were."""

    def __init__(self, env: Env, *names: str) -> None:
        self.env, self.names = env, names or ("people", "canary")

    def __enter__(self):
        self.before = {n: self.env.frozen(n) for n in self.names}
        return self

    def __exit__(self, *exc) -> None:
        if exc[0] is None:
            for n in self.names:
                assert self.env.frozen(n) == self.before[n], f"{n} changed"


# -- what a released class must satisfy, computed by pandas from the output ----------------
def suppressed_mask(frame: pd.DataFrame, qis: list[str]) -> pd.Series:
    return (frame[qis].astype(str) == "*").all(axis=1)


def assert_released_anonymous(
    frame: pd.DataFrame,
    qis: list[str],
    k: int,
    sensitive: str | None = None,
    l: int | None = None,  # noqa: E741
    t: float | None = None,
    overall: pd.Series | None = None,
) -> None:
    """No released (not fully suppressed) class of ``frame`` is smaller than k, has fewer
    than l distinct sensitive values, or is farther than t (equal-distance EMD, i.e. total
    variation) from ``overall`` (default: the whole output's distribution)."""
    released = frame[~suppressed_mask(frame, qis)]
    if released.empty:
        return
    groups = released.astype({q: str for q in qis}).groupby(qis, dropna=False)
    sizes = groups.size()
    assert sizes.min() >= k, sizes[sizes < k]
    if l is not None:
        distinct = groups[sensitive].nunique(dropna=False)
        assert distinct.min() >= l, distinct[distinct < l]
    if t is not None:
        q = frame[sensitive].value_counts(normalize=True) if overall is None else overall
        for key, g in groups:
            p = g[sensitive].value_counts(normalize=True)
            d = 0.5 * p.sub(q, fill_value=0).abs().sum()
            assert d <= t + 1e-9, (key, d)


# -- 1. source changes ------------------------------------------------------------------------
RUNS = {
    "k": (["--k", "5", "--suppression", "0.05"], {"k": 5}),
    "distinct-l": (
        ["--sa", "disease", "--k", "3", "--l", "2", "--suppression", "0.05"],
        {"k": 3, "l": 2},
    ),
    "equal-emd": (
        ["--sa", "disease", "--k", "3", "--t", "0.2", "--suppression", "0.05"],
        {"k": 3, "t": 0.2},
    ),
    "hierarchical-emd": (
        [
            "--sa",
            "disease",
            "--k",
            "3",
            "--t",
            "0.2",
            "--t-variant",
            "hierarchical-emd",
            "--suppression",
            "0.05",
        ],
        {"k": 3},
    ),
    "greedy": (["--k", "5", "--algorithm", "greedy"], {"k": 5}),
}


def check_args_of(run_args: list[str]) -> list[str]:
    """The run's model options, as ``anonsql check`` takes them."""
    out, skip = [], False
    for i, a in enumerate(run_args):
        if skip:
            skip = False
            continue
        if a in ("--suppression", "--algorithm"):
            skip = True
            continue
        out.append(a)
        if i + 1 < len(run_args) and not run_args[i + 1].startswith("--"):
            out.append(run_args[i + 1])
            skip = True
    return out


@pytest.mark.parametrize("variant", list(RUNS))
def test_source_edits_never_release_a_failing_class(env, variant):
    """Deleting rows, inserting a new combination, values the hierarchies lack and NULLs in a
    QI kept at level 0: after each, the view suppresses what now fails, shows no raw value,
    and passes ``anonsql check``."""
    run_args, goal = RUNS[variant]
    check_args = check_args_of(run_args)
    setup_people(env)
    with Untouched(env):
        out = env.cli(
            "anonymize", "people", "--qi", QI_ARG, *run_args, *roles(run_args), "--out", "v",
            "--json",
        )  # fmt: skip
    levels = json.loads(out.output)["levels"]
    sensitive = "disease" if "--sa" in run_args else None
    next_id = [1000]
    unknown_ids: set[int] = set()  # rows holding a QI value the hierarchies lack, or NULL

    def insert(age, sex, zip_, disease="flu") -> int:
        rid = next_id[0]
        next_id[0] += 1
        env.execute(
            "INSERT INTO people (id, name, age, sex, zip, disease) VALUES (?, ?, ?, ?, ?, ?)",
            [rid, f"new {rid}", age, sex, zip_, disease],
        )
        return rid

    def step(*hidden: int) -> pd.DataFrame:
        """After an edit: the rows ``hidden`` and every unknown row are suppressed in every
        QI, the output has one row per source row, every released class passes, and
        ``check`` agrees."""
        env.unknown_rows = bool(unknown_ids)
        with Untouched(env):
            view = env.frame("v")
            env.check("v", check_args)
        assert len(view) == env.db.backend.fetchall("SELECT COUNT(*) FROM people")[0][0]
        rows = view.set_index("id")
        for rid in (r for r in [*hidden, *unknown_ids] if r in rows.index):
            assert (rows.loc[rid, QIS].astype(str) == "*").all(), rows.loc[rid]
        # t-closeness as the guard defines it: against the rows it classifies
        overall = None
        if sensitive is not None:
            known = view[~view["id"].isin(unknown_ids)]
            overall = known[sensitive].value_counts(normalize=True)
        assert_released_anonymous(
            view, QIS, goal["k"], sensitive, goal.get("l"), goal.get("t"), overall
        )
        return view

    view = step()
    # deleting rows: a released class shrinks below k and is suppressed now
    released = view[~suppressed_mask(view, QIS)]
    cls = released.groupby(QIS).size().sort_values().index[0]
    members = released.set_index(QIS).loc[[cls], "id"].tolist()
    keep, gone = members[: goal["k"] - 1], members[goal["k"] - 1 :]
    env.execute(f"DELETE FROM people WHERE id IN ({', '.join(map(str, gone))})")
    view = step(*keep)

    # one inserted row forming a new combination is not released as a class of 1
    view = step(insert(33, "f", SPARE_ZIP))

    # a QI kept at level 0 (if the run kept one): a value its hierarchy lacks, and NULL,
    # by update and by insert: suppressed in every QI, never shown raw
    q0 = ([q for q in QIS if levels.get(q) == 0] or ["sex"])[0]
    unknown = {"age": 150, "sex": "x", "zip": "99999"}[q0]
    victims = view[~suppressed_mask(view, QIS)]["id"].tolist()
    env.execute(f"UPDATE people SET {q0} = ? WHERE id = ?", [unknown, victims[0]])
    unknown_ids.add(victims[0])
    step()
    env.execute(f"UPDATE people SET {q0} = NULL WHERE id = ?", [victims[1]])
    unknown_ids.add(victims[1])
    step()
    rid = insert(40, "m", "13053")
    env.execute(f"UPDATE people SET {q0} = ? WHERE id = ?", [unknown, rid])
    unknown_ids.update(
        [rid, insert(None, "m", "13053"), insert(41, "m", None), insert(42, None, "13053")]
    )
    values = {"age": 43, "sex": "f", "zip": "14850", q0: unknown}
    unknown_ids.add(insert(values["age"], values["sex"], values["zip"]))
    step()
    # many unknown rows with one sensitive value: hidden, and every released class passes
    unknown_ids.update(insert(99, "x", "00000", "hiv") for _ in range(12))
    step()
    # the table shrunk by half: classes shrink and vanish
    env.execute("DELETE FROM people WHERE MOD(id, 2) = 0")
    step()


# -- 2. hierarchy changes ---------------------------------------------------------------------
def write_other_age_tree(path: Path) -> Path:
    """An ARX CSV for age with another tree: intervals of 4 and 8 years."""
    lines = [
        f"{a};{a // 4 * 4}-{a // 4 * 4 + 3};{a // 8 * 8}-{a // 8 * 8 + 7};*" for a in range(20, 60)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_hierarchy_changes_leave_outputs_on_their_pinned_versions(env, tmp_path):
    setup_people(env)
    env.cli(
        "anonymize", "people", "--qi", QI_ARG, "--k", "5", "--suppression", "0.05", *roles(),
        "--out", "v",
    )  # fmt: skip
    before = env.frozen("v")
    pinned = env.db.hierarchies.pin("age")
    with Untouched(env, "people", "canary", "v"):
        env.cli("hierarchy", "load", "age", str(write_other_age_tree(tmp_path / "age4.csv")))
    assert env.db.hierarchies.pin("age") != pinned
    assert env.frozen("v") == before
    env.check("v", ["--k", "5"])

    versions = env.db.hierarchies.catalog(all_versions=True)
    age = versions[versions["name"] == "age"].set_index("key")
    assert len(age) == 2
    assert age.loc[pinned, "users"] == "v" and not age.loc[pinned, "current"]
    assert age.loc[env.db.hierarchies.pin("age"), "users"] == ""
    listed = env.cli("hierarchy", "list", "--versions").output.splitlines()
    age_lines = [ln for ln in listed if ln.split()[0] == "age"]
    assert len(age_lines) == 2
    old_line, new_line = sorted(age_lines, key=lambda ln: pinned not in ln)
    assert pinned in old_line and old_line.split()[-1] == "v"  # the user is listed
    assert new_line.split()[-1] == "True"  # the current version: no user

    with Untouched(env, "people", "canary", "v"):
        refused = env.cli("hierarchy", "drop", "age", code=1)
    assert "'v'" in refused.output and "Traceback" not in refused.output
    after = env.db.hierarchies.catalog(all_versions=True)
    pd.testing.assert_frame_equal(after, versions)
    assert env.frozen("v") == before

    # a spec run that is rejected stores neither its hierarchies nor any relation
    sex_file = tmp_path / "sex_tree.csv"
    sex_file.write_text("m;person;*\nf;person;*\n")
    spec = tmp_path / "spec.toml"
    spec.write_text(
        'table = "people"\nqi = ["age", "sex", "zip"]\nk = 100000\noutput = "w"\n'
        f"{SPEC_ROLES}"
        '[hierarchy]\nsex = { file = "sex_tree.csv" }\n'
        'age = { file = "age4.csv", name = "age_spec" }\n'
    )
    relations = env.relations()
    runs = env.runs()
    with Untouched(env, "people", "canary", "v"):
        rejected = env.cli("run", str(spec), code=1)
    assert "100000" in rejected.output
    assert env.relations() == relations
    assert env.runs() == runs
    pd.testing.assert_frame_equal(env.db.hierarchies.catalog(all_versions=True), versions)
    assert env.frozen("v") == before
    # the same spec with a k the table allows stores what the rejected run did not
    spec.write_text(spec.read_text().replace("k = 100000", "k = 5"))
    env.cli("run", str(spec))
    assert set(env.db.hierarchies.catalog()["name"]) >= {"age_spec", "sex"}
    assert "w" in env.relations()

    # a refresh moves the output onto the current version; the old one has no user left
    env.cli("refresh", "v")
    versions = env.db.hierarchies.catalog(all_versions=True).set_index("key")
    assert versions.loc[env.db.hierarchies.pin("age"), "users"] == "v"
    assert pinned not in versions.index or versions.loc[pinned, "users"] == ""
    assert "drop or refresh" in env.cli("hierarchy", "drop", "age", code=1).output


DEMO_QIS = "age,sex,race,marital_status,education,zip"
#: the census columns a user's run on age, sex and zip releases as they are
CENSUS_KEEP = "race,marital_status,education,country,occupation,income"


def test_demo_twice_keeps_outputs_readable_and_anonymous(env):
    env.db.backend.write_frame("canary", canary())
    env.cli("demo", "--rows", "300", "--seed", "1")
    first_demo = env.frozen("census_anonymized")
    env.check("census_anonymized", ["--k", "5", "--sa", "income", "--l", "2"], DEMO_QIS.split(","))
    # run again, the demo replaces its own table, hierarchies and output: the same rows
    with Untouched(env, "canary"):
        env.cli("demo", "--rows", "300", "--seed", "1")
    assert env.frozen("census_anonymized") == first_demo
    env.cli("anonymize", "census", "--qi", "age,sex,zip", "--k", "3", "--suppression", "0.1",
            "--keep", CENSUS_KEEP, "--out", "mine")  # fmt: skip
    mine = env.frozen("mine")
    with Untouched(env, "canary"):
        again = env.cli("demo", "--rows", "300", "--seed", "1", code=None)
    if again.exit_code != 0:
        # PostgreSQL cannot drop census while the user's view reads it: a clean refusal that
        # changes nothing (DuckDB's views bind late, so there the demo replaces its table)
        assert env.engine == "postgres", again.output
        assert "census" in again.output and "Traceback" not in again.output
        assert env.frozen("census_anonymized") == first_demo
    # same seed: the same rows, so the user's output reads exactly what it read before
    assert env.frozen("mine") == mine
    env.check("mine", ["--k", "3"], ["age", "sex", "zip"])
    env.check("census_anonymized", ["--k", "5", "--sa", "income", "--l", "2"], DEMO_QIS.split(","))
    assert_released_anonymous(env.frame("mine"), ["age", "sex", "zip"], 3)
    assert_released_anonymous(env.frame("census_anonymized"), DEMO_QIS.split(","), 5, "income", 2)
    # another seed: the pinned hierarchies keep the user's output readable and anonymous
    with Untouched(env, "canary"):
        env.cli("demo", "--rows", "300", "--seed", "2", code=None)
    env.check("mine", ["--k", "3"], ["age", "sex", "zip"])
    assert_released_anonymous(env.frame("mine"), ["age", "sex", "zip"], 3)
    env.check("census_anonymized", ["--k", "5", "--sa", "income", "--l", "2"], DEMO_QIS.split(","))


# -- 3. status and refresh --------------------------------------------------------------------
def view_definition(env: Env, name: str) -> str:
    if env.engine == "duckdb":
        rows = env.db.backend.fetchall("SELECT sql FROM duckdb_views() WHERE view_name = ?", [name])
    else:
        rows = env.db.backend.fetchall("SELECT definition FROM pg_views WHERE viewname = ?", [name])
    return str(rows[0][0])


def status_of(env: Env, output: str, code: int) -> dict:
    with Untouched(env):
        result = env.cli("status", output, "--json", code=code)
    (status,) = json.loads(result.output)["items"]  # the JSON document's list (schema 1)
    return status


def test_status_and_refresh_follow_the_source(env):
    import anonsql
    from anonsql.errors import AnonsqlError

    setup_people(env)
    env.cli(
        "anonymize", "people", "--qi", QI_ARG, "--k", "5", "--suppression", "0.05", *roles(),
        "--out", "v",
    )  # fmt: skip
    first = env.latest_run("v")
    status = status_of(env, "v", 0)
    assert status["run_id"] == first and status["within_limit"]
    assert status["rows_now"] == status["rows_at_run"] == 300
    assert status["suppressed_now"] == status["suppressed_at_run"] > 0

    # shrink released classes to k - 1 rows until the suppressed share exceeds the limit
    view = env.frame("v")
    released = view[~suppressed_mask(view, QIS)]
    suppressed, rows, gone = int(suppressed_mask(view, QIS).sum()), len(view), []
    for _, members in sorted(released.groupby(QIS)["id"], key=lambda kv: len(kv[1])):
        gone += members.tolist()[4:]
        suppressed, rows = suppressed + 4, rows - (len(members) - 4)
        if suppressed > 0.05 * rows:
            break
    env.execute(f"DELETE FROM people WHERE id IN ({', '.join(map(str, gone))})")
    view = env.frame("v")
    status = status_of(env, "v", 1)
    assert status["run_id"] == first and not status["within_limit"]
    assert status["rows_now"] == len(view) == rows
    assert status["suppressed_now"] == int(suppressed_mask(view, QIS).sum()) == suppressed
    assert status["share_now"] > 0.05 and status["rows_at_run"] == 300
    env.check("v", ["--k", "5"])

    # refresh re-runs the stored spec: a new run, within the limit again
    with Untouched(env):
        env.cli("refresh", "v")
    second = env.latest_run("v")
    assert second > first
    status = status_of(env, "v", 0)
    assert status["run_id"] == second and status["within_limit"] and status["rows_at_run"] == rows
    env.check("v", ["--k", "5"])
    assert_released_anonymous(env.frame("v"), QIS, 5)

    # the SQL statement does the same
    con = anonsql.connect(env.target)
    try:
        env.execute("DELETE FROM people WHERE id IN (SELECT MIN(id) FROM people)")
        with Untouched(env):
            run = con.sql("REFRESH VIEW v ANONYMIZATION")
        third = env.latest_run("v")
        assert run.run_id == third > second
        assert status_of(env, "v", 0)["run_id"] == third
        env.check("v", ["--k", "5"])

        # an l-diverse output whose refresh has no solution: only flu left
        w_args = ["--sa", "disease", "--k", "3", "--l", "2", "--suppression", "0.05"]
        env.cli("anonymize", "people", "--qi", QI_ARG, *w_args, *roles(w_args), "--out", "w")
        env.execute("DELETE FROM people WHERE disease <> 'flu'")
        # every class fails 2-diversity now: the view suppresses every row
        w = env.frame("w")
        assert suppressed_mask(w, QIS).all()
        assert not status_of(env, "w", 1)["within_limit"]
        # fewer rows than k: no solution either
        for output, delete in (
            ("w", None),
            ("v", "DELETE FROM people WHERE id NOT IN (SELECT id FROM people ORDER BY id LIMIT 3)"),
        ):
            if delete:
                env.execute(delete)
            count = env.db.backend.fetchall("SELECT COUNT(*) FROM people")[0][0]
            if output == "v":
                assert count < 5, count
            before = (env.frozen(output), env.runs(), view_definition(env, output))
            relations = env.relations()
            with Untouched(env):
                failed = env.cli("refresh", output, code=1)
                assert "Traceback" not in failed.output and failed.output.startswith("Error")
                with pytest.raises(AnonsqlError):
                    con.sql(f"REFRESH VIEW {output} ANONYMIZATION")
            assert (env.frozen(output), env.runs(), view_definition(env, output)) == before
            assert env.relations() == relations
            assert status_of(env, output, 1)["run_id"] == env.latest_run(output)
    finally:
        con.close()


# -- 4. deployment scripts --------------------------------------------------------------------
def _sorted_rows(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.astype(str)
    return frame.sort_values(list(frame.columns)).reset_index(drop=True)


def test_deploy_scripts_of_two_databases_into_one_target(env, tmp_path):
    """Two DuckDB databases, each with its run 1 (a greedy recoding, a lattice run) and its
    own 'age' hierarchy under the same name; both scripts deployed into one target."""
    runner = CliRunner()
    made = {}
    for tag, widths, args in (
        ("a", (5, 10, 20), ["--k", "5", "--algorithm", "greedy"]),
        ("b", (4, 8, 16), ["--sa", "disease", "--k", "4", "--l", "2", "--suppression", "0.05"]),
    ):
        path = str(tmp_path / f"{tag}.duckdb")
        src = Database.open(path)
        frame = people(160, seed=ord(tag))
        src.backend.write_frame(f"people_{tag}", frame)
        store_hierarchies(src, widths)
        src.close()
        run = ["anonymize", f"people_{tag}", "--qi", QI_ARG, *args, *roles(args)]
        run += ["--out", f"out_{tag}"]
        result = runner.invoke(cli, [*run, "--db", path])
        assert result.exit_code == 0, result.output
        dialect = "duckdb" if env.engine == "duckdb" else "postgres"
        script = runner.invoke(cli, ["transpile", "1", "-d", dialect, "--db", path])
        assert script.exit_code == 0, script.output
        src = Database.open(path)
        expected = _sorted_rows(src.backend.fetch_df(f"SELECT * FROM out_{tag}"))
        src.close()
        made[tag] = (frame, script.output, expected)
    assert "anonsql_recodings" in made["a"][1]

    env.db.backend.write_frame("canary", canary())
    for tag, (frame, _, _) in made.items():
        env.db.backend.write_frame(f"people_{tag}", frame)

    def deploy(tag: str) -> None:
        env.db.backend.con.execute(made[tag][1])

    def assert_outputs() -> None:
        for tag, (_, _, expected) in made.items():
            got = _sorted_rows(env.frame(f"out_{tag}"))
            pd.testing.assert_frame_equal(got, expected)

    with Untouched(env, "people_a", "people_b", "canary"):
        deploy("a")
        deploy("b")
    assert_outputs()
    versions = env.db.hierarchies.catalog(all_versions=True)
    assert (versions["name"] == "age").sum() == 2  # both trees, under their content keys
    with Untouched(env, "people_a", "people_b", "canary", "out_b"):
        deploy("a")
    assert_outputs()
    with Untouched(env, "people_a", "people_b", "canary", "out_a"):
        deploy("b")
    assert_outputs()
    # the deployed outputs guard themselves in the target too
    env.execute("DELETE FROM people_a WHERE MOD(id, 3) = 0")
    env.execute("DELETE FROM people_b WHERE MOD(id, 3) = 0")
    env.check("out_a", ["--k", "5"])
    env.check("out_b", ["--sa", "disease", "--k", "4", "--l", "2"])
    assert_released_anonymous(env.frame("out_a"), QIS, 5)
    assert_released_anonymous(env.frame("out_b"), QIS, 4, "disease", 2)


# -- 5. side tables ---------------------------------------------------------------------------
def test_proportional_representation_hides_a_single_suppressed_record(env):
    """Exactly one record is suppressed: its proportional columns are the whole table's
    shares, not its own values."""
    combos = [(30, "m", "13053"), (31, "f", "13068"), (45, "m", "14850"), (46, "f", "14853")]
    rows = [c for c in combos for _ in range(6)] + [(58, "f", "14867")]
    frame = pd.DataFrame(rows, columns=QIS)
    frame.insert(0, "id", np.arange(len(frame)))
    frame["disease"] = ["flu", "hiv", "cancer"] * 8 + ["gastritis"]
    setup_people(env, frame)
    out = env.cli("anonymize", "people", "--qi", QI_ARG, "--k", "5", "--suppression", "0.05",
                  *roles(name=False), "--out", "v", "--json")  # fmt: skip
    summary = json.loads(out.output)
    assert summary["measures"]["suppressed_rows"] == 1
    run_id = summary["run_id"]
    with Untouched(env, "people", "canary", "v"):
        env.cli("represent", str(run_id), "--kind", "proportional")
    rep = env.frame("v_proportional").set_index("id")
    view = env.frame("v").set_index("id")
    assert (view.loc[24, QIS] == "*").all()

    from anonsql.evaluation.representation import column_names

    sql = "SELECT parameters FROM anonsql_runs WHERE run_id = ?"
    params = json.loads(env.db.backend.fetchall(sql, [run_id])[0][0])
    hs = [env.db.hierarchies.load(k) for k in params["qi_keys"]]
    names = column_names(QIS, hs, list(view.reset_index().columns))
    n = len(frame)
    for q, h, cols in zip(QIS, hs, names, strict=True):
        leaf = {h.labels[i]: i for i in h.leaf_ids}
        share = np.zeros(h.size)
        for value in frame[q].astype(str):
            for anc in h.ancestors[leaf[value]]:
                if anc >= 0:
                    share[anc] += 1 / n
        for node, col in enumerate(cols):
            # the suppressed record: the table's shares
            assert rep.loc[24, col] == pytest.approx(share[node]), col
        if q != "sex":  # its own age and zip are unique: 1/n, where its own class says 1
            assert rep.loc[24, f"{q}__{frame.loc[24, q]}"] == pytest.approx(1 / n)
        # a released record of a pure class: its own class's shares
        assert rep.loc[0, f"{q}__{frame.loc[0, q]}"] == pytest.approx(1.0)


# -- 6. roles ---------------------------------------------------------------------------------
def test_columns_identifiers_and_missing_values(env):
    setup_people(env)
    goal = ["--qi", QI_ARG, "--k", "5", "--suppression", "0.05"]
    kept = roles(name=False)  # name: --identifiers name below
    with Untouched(env):
        env.cli("anonymize", "people", *goal, *kept, "--columns", "id,name,age,sex,zip,disease",
                "--identifiers", "name", "--out", "v")  # fmt: skip
        env.cli("anonymize", "people", *goal, "--keep", "disease", "--identifiers", "name,id",
                "--out", "w")  # fmt: skip
        env.cli("anonymize", "people", *goal, "--columns", "zip,age,sex", "--out", "x")
    assert list(env.frame("v").columns) == ["id", "age", "sex", "zip", "disease"]
    assert list(env.frame("w").columns) == ["age", "sex", "zip", "disease"]
    assert list(env.frame("x").columns) == ["zip", "age", "sex"]
    for name in ("v", "w", "x"):
        env.check(name, ["--k", "5"])
        assert_released_anonymous(env.frame(name), QIS, 5)
    # an identifier that is also a QI is refused
    both = env.cli("anonymize", "people", *goal, "--identifiers", "age", "--out", "y", code=1)
    assert "identifier" in both.output and "Traceback" not in both.output

    # values the hierarchies lack: an error that says how to go on, or suppressed rows
    env.execute("UPDATE people SET sex = 'x' WHERE id < 4")
    env.execute("UPDATE people SET age = NULL WHERE id IN (4, 5)")
    env.execute("UPDATE people SET zip = '99999' WHERE id = 6")
    relations, runs = env.relations(), env.runs()
    with Untouched(env):
        refused = env.cli(
            "anonymize", "people", *goal, *kept, "--identifiers", "name", "--out", "m", code=1
        )
    assert "--missing suppress" in refused.output and "Traceback" not in refused.output
    assert env.relations() == relations and env.runs() == runs
    with Untouched(env):
        ran = env.cli("anonymize", "people", *goal, *kept, "--missing", "suppress", "--out", "m",
                      "--identifiers", "name", "--json")  # fmt: skip
    measures = json.loads(ran.output)["measures"]
    assert measures["missing_rows"] == 7 and measures["rows"] == 300
    assert 7 <= measures["suppressed_rows"] <= 0.05 * 300
    m = env.frame("m").set_index("id")
    assert "name" not in m.columns
    assert (m.loc[list(range(7)), QIS] == "*").all().all()
    assert int(suppressed_mask(m, QIS).sum()) == measures["suppressed_rows"]
    env.check("m", ["--k", "5"])
    assert_released_anonymous(m, QIS, 5)
    status = status_of(env, "m", 0)
    assert status["suppressed_now"] == measures["suppressed_rows"] and status["within_limit"]
    # a refresh keeps the run's choice
    env.execute("UPDATE people SET sex = 'y' WHERE id = 7")
    with Untouched(env):
        env.cli("refresh", "m")
    assert (env.frame("m").set_index("id").loc[7, QIS] == "*").all()
    # more missing rows than the limit allows: refused, the output as it was
    env.execute("UPDATE people SET sex = 'x' WHERE id < 40")
    before, runs = env.frozen("m"), env.runs()
    with Untouched(env):
        over = env.cli("anonymize", "people", *goal, *kept, "--identifiers", "name",
                       "--missing", "suppress", "--out", "m", code=1)  # fmt: skip
    assert "Traceback" not in over.output and "suppression" in over.output
    assert env.frozen("m") == before and env.runs() == runs


# -- 7. property: random tables, hierarchies and edits ----------------------------------------
@st.composite
def edit_cases(draw):
    frame, hs = draw(anonymization_cases(max_qis=3, max_rows=40))
    qis = [f"q{j}" for j in range(len(hs))]
    frame.insert(0, "rid", np.arange(len(frame)))
    k = draw(st.integers(2, 4))
    algorithm = draw(st.sampled_from(["flash", "flash", "greedy"]))
    l = None if algorithm == "greedy" else draw(st.sampled_from([None, 2]))  # noqa: E741
    suppression = 0.0 if algorithm == "greedy" else draw(st.sampled_from([0.0, 0.1, 0.3]))
    values = {q: [*h.leaf_labels, "zz", None] for q, h in zip(qis, hs, strict=True)}
    values["s"] = ["a", "b", "c", "10", "2", None]
    column = st.sampled_from([*qis, "s"])
    edit = st.one_of(
        st.tuples(st.just("insert"), st.fixed_dictionaries(
            {c: st.sampled_from(v) for c, v in values.items()})),
        st.tuples(st.just("delete"), st.integers(0, 200)),
        column.flatmap(
            lambda c: st.tuples(
                st.just("update"), st.integers(0, 200), st.just(c), st.sampled_from(values[c])
            )
        ),
    )  # fmt: skip
    edits = draw(st.lists(edit, min_size=1, max_size=6))
    return frame, hs, qis, k, l, suppression, algorithm, edits


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=edit_cases())
def test_random_edits_never_release_a_failing_class(case):
    from anonsql.errors import InputError
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    frame, hs, qis, k, l, suppression, algorithm, edits = case  # noqa: E741
    db = Database.open(":memory:")
    try:
        db.backend.write_frame("t", frame)
        for h in hs:
            db.hierarchies.save(h)
        # every column has a role: rid is the test's row key, s is kept unless sensitive; in
        # a random table of a few rows any column may look unique, so all are allowed
        keep = ["rid"] if l else ["rid", "s"]
        spec = Spec(qis=qis, sensitive="s" if l else None, k=k, l=l, suppression=suppression,
                    algorithm=algorithm, output="v", keep=keep,
                    allow_identifying=[*keep, *qis])  # fmt: skip
        try:
            anonymize(db, "t", spec)
        except InputError:
            return  # no solution for this table
        leaves = {q: set(h.leaf_labels) for q, h in zip(qis, hs, strict=True)}
        next_rid = len(frame)
        for edit in edits:
            rids = [r[0] for r in db.backend.fetchall("SELECT rid FROM t ORDER BY rid")]
            if edit[0] == "insert":
                row = {"rid": next_rid, **edit[1]}
                next_rid += 1
                cols = ", ".join(row)
                marks = ", ".join("?" for _ in row)
                db.backend.execute(f"INSERT INTO t ({cols}) VALUES ({marks})", list(row.values()))
            elif not rids:
                continue
            elif edit[0] == "delete":
                db.backend.execute("DELETE FROM t WHERE rid = ?", [rids[edit[1] % len(rids)]])
            else:
                _, i, col, value = edit
                db.backend.execute(
                    f"UPDATE t SET {col} = ? WHERE rid = ?", [value, rids[i % len(rids)]]
                )
            source = db.backend.fetch_df("SELECT * FROM t").set_index("rid").sort_index()
            view = db.backend.fetch_df("SELECT * FROM v").set_index("rid").sort_index()
            assert list(view.index) == list(source.index)
            hidden = suppressed_mask(view, qis)
            # a value the hierarchy lacks, or NULL, is never released
            unknown = np.zeros(len(source), dtype=bool)
            for q in qis:
                unknown |= ~source[q].isin(leaves[q]).to_numpy()
            assert hidden[unknown].all()
            # sensitive values are the source's, row by row
            pd.testing.assert_series_equal(view["s"], source["s"])
            assert_released_anonymous(view, qis, k, "s", l)
    finally:
        db.close()


# -- two bugs the sequences met, each on its own -----------------------------------
def test_t_closeness_view_with_unknown_rows_passes_check(tmp_path):
    env = Env("duckdb", str(tmp_path / "t.duckdb"))
    try:
        setup_people(env)
        args = ["--sa", "disease", "--k", "3", "--t", "0.2", "--suppression", "0.05"]
        env.cli("anonymize", "people", "--qi", QI_ARG, *args, *roles(args), "--out", "v")
        for i in range(30):  # sex 'x' is no leaf: suppressed in the view
            env.execute(f"INSERT INTO people VALUES ({1000 + i}, 'n', 30, 'x', '13053', 'hiv')")
        env.cli("check", "v", "--qi", QI_ARG, *check_args_of(args))
    finally:
        env.close()


def test_check_with_a_text_sensitive_attribute_on_postgres(pg_url):
    env = Env("postgres", pg_url)
    try:
        setup_people(env)
        env.cli("check", "people", "--qi", QI_ARG, "--sa", "disease", "--l", "1")
    finally:
        env.close()

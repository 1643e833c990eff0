"""``anonsql evaluate --task groups``: seed 001's utility measures of a run's output read back
from the database - equal to the figures the microaggregation run reported, recomputed by
hand (groups, structural utility) on a table worked out here, after source edits (the guard's
suppression), on every surface, and bad input."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from anonsql import api
from anonsql.cli.main import cli
from anonsql.database import Database
from anonsql.errors import InputError
from anonsql.evaluation.groups import evaluate_groups
from anonsql.run import anonymize
from anonsql.spec import Spec

pytest.importorskip("sklearn", reason="scikit-learn (anonsql[eval]) is not installed")

MEASURES = ("silhouette", "davies_bouldin", "structural_utility", "separability")


def _table(n: int = 120, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.normal(40, 10, n).round(1)
    b = rng.integers(0, 50, n).astype(float)
    return pd.DataFrame(
        {"a": a, "b": b, "city": rng.choice(["x", "y"], n), "y": np.where(a > 40, "hi", "lo")}
    )


def _db(tmp_path, frame: pd.DataFrame) -> Database:
    db = Database.open(str(tmp_path / "g.duckdb"))
    db.backend.con.register("frame", frame)
    db.backend.con.execute("CREATE TABLE t AS SELECT * FROM frame")
    db.backend.con.unregister("frame")
    return db


def _spec(db: Database, qis: tuple[str, ...], **options) -> Spec:
    """A run of ``t`` that releases every column besides the QIs and the label as it is
    (every column of an output has a role)."""
    label = options.get("label")
    keep = [c for c in db.backend.columns("t") if c not in qis and c != label]
    return Spec(**{"qis": qis, "output": "t_out", "keep": keep, **options})


@pytest.mark.parametrize("algorithm", ["mdav", "kde"])
def test_equals_the_runs_own_measures(tmp_path, algorithm):
    """On a fresh output the measures read back are the ones the run reported (same
    records, same order, same seeded folds; the prototypes are read back from their text in
    the output, hence the tolerance)."""
    db = _db(tmp_path, _table())
    res = anonymize(db, "t", _spec(db, ("a", "b"), k=4, algorithm=algorithm, label="y"))
    got = evaluate_groups(db, res.run_id, label="y")
    for m in MEASURES:
        assert getattr(got, m) == pytest.approx(res.measures[m], abs=1e-9), m
    assert got.combined_utility == pytest.approx(res.measures["combined_utility"], abs=1e-9)
    assert got.rows == 120 and got.suppressed_rows == 0


def test_hand_worked_groups_and_structural_utility(tmp_path):
    """Six records, k = 3, one QI: MDAV groups {1, 2, 3} and {10, 11, 12} (means 2 and 11).
    W1 between the column and its release is (1 + 0 + 1 + 1 + 0 + 1) / 6 = 2/3, the range is
    11, so structural utility = 1 - (2/3) / 11 = 31/33; two groups of three."""
    frame = pd.DataFrame({"a": [1.0, 2.0, 3.0, 10.0, 11.0, 12.0], "y": list("pppqqq")})
    db = _db(tmp_path, frame)
    res = anonymize(db, "t", _spec(db, ("a",), k=3, algorithm="mdav"))
    got = evaluate_groups(db, res.run_id)
    assert (got.groups, got.smallest_group, got.rows) == (2, 3, 6)
    assert got.structural_utility == pytest.approx(31 / 33)
    assert got.normalized_w1 == {"a": pytest.approx(2 / 33)}
    assert got.separability is None and got.combined_utility is None


def test_after_source_edits_only_released_rows_count(tmp_path):
    """Deleting rows makes groups smaller than k; the guard suppresses them at read, and the
    measures cover only what the view releases now."""
    db = _db(tmp_path, _table())
    res = anonymize(db, "t", _spec(db, ("a", "b"), k=4, algorithm="mdav"))
    db.backend.con.execute("DELETE FROM t WHERE rowid % 3 = 0")
    got = evaluate_groups(db, res.run_id)
    released = db.backend.con.execute("SELECT count(*) FROM t_out WHERE a <> '*'").fetchone()[0]
    assert got.rows == released < 80
    assert got.suppressed_rows == 80 - released
    assert got.smallest_group >= 4


def test_every_surface(tmp_path):
    db = _db(tmp_path, _table())
    res = anonymize(db, "t", _spec(db, ("a", "b"), k=4, algorithm="mdav"))
    path = str(tmp_path / "g.duckdb")
    db.close()
    out = CliRunner().invoke(
        cli,
        ["evaluate", str(res.run_id), "--task", "groups", "--label", "y", "--json", "--db", path],
    )
    assert out.exit_code == 0, out.output
    doc = json.loads(out.output)
    assert doc["groups"] >= 2 and doc["separability"] is not None
    text = CliRunner().invoke(cli, ["evaluate", str(res.run_id), "--task", "groups", "--db", path])
    assert text.exit_code == 0, text.output
    assert "structural utility" in text.output
    got = api.evaluate(path, res.run_id, task="groups", label="y")
    assert got.separability == pytest.approx(doc["separability"])


def test_bad_input(tmp_path):
    db = _db(tmp_path, _table())
    res = anonymize(db, "t", _spec(db, ("a", "city"), k=4, algorithm="mondrian"))
    with pytest.raises(InputError, match="numeric quasi-identifiers; not numeric: city"):
        evaluate_groups(db, res.run_id)
    res = anonymize(db, "t", _spec(db, ("a", "b"), k=4, algorithm="mdav", output="t_out2"))
    with pytest.raises(InputError, match="no column 'nope'"):
        evaluate_groups(db, res.run_id, label="nope")

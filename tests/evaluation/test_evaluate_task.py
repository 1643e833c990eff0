"""``anonsql evaluate --task``: seed 003's downstream tasks (section VI-B, VI-C) on any run's
output - how released values are read (a hand-worked Mondrian release, a lattice run's
hierarchy nodes against a brute force), the CLI, the Python API and bad input."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from anonsql.cli.main import cli
from anonsql.database import Database
from anonsql.errors import InputError
from anonsql.evaluation.task import encode, evaluate_task, task_frames
from anonsql.run import anonymize
from anonsql.spec import Spec
from tests.helpers.partition import golden

pytest.importorskip("sklearn", reason="scikit-learn (anonsql[eval]) is not installed")

#: the hand-worked golden table (tests/fixtures/papers/mondrian/golden.csv): Mondrian with
#: k = l = 2 releases t1, t2 ([25, 30], CA); t3, t4 ([35, 40], MN); t5, t6 ([45, 50], TX);
#: t7, t8 ([55, 60], {CA, MN}) (golden_release.csv beside it)
GOLDEN = golden()


#: the demo table's columns
CENSUS = ["age", "sex", "race", "marital_status", "education", "zip", "country", "occupation",
          "income"]  # fmt: skip


def _keep(columns, qis, *others) -> list[str]:
    """The columns a run releases as they are: every one that is neither a QI nor in
    ``others`` (the sensitive attribute, the label): every column of an output has a role."""
    return [c for c in columns if c not in qis and c not in others]


def _standardized(values) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    return (v - v.mean()) / v.std()


def _table(n: int = 240, seed: int = 0) -> pd.DataFrame:
    """A small table whose label depends on the QIs (age, zip) and a non-QI (hours)."""
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, n)
    hours = rng.integers(10, 60, n)
    return pd.DataFrame(
        {
            "age": age,
            "zip": rng.choice(["z1", "z2", "z3", "z4", "z5"], n),
            "sex": rng.choice(["f", "m"], n),
            "hours": hours,
            "disease": rng.choice(["a", "b", "c"], n),
            "y": np.where(age + hours > 85, "hi", "lo"),
        }
    )


def test_golden_mondrian_release_encoded_by_hand():
    """Section VI-B: intervals -> midpoints 27.5, 37.5, 47.5, 57.5 (mean 42.5, standard
    deviation sqrt(125)), sets multi-hot over (CA, MN, TX): t7, t8 {CA, MN} -> 1 1 0; the
    raw rows keep their values. VI-C: state -> 1..3, the set {CA, MN} -> 1.5."""
    db = Database.open(":memory:")
    db.backend.write_frame("t", GOLDEN)
    r = anonymize(db, "t", Spec(qis=["age", "state"], sensitive="income", k=2, l=2,
                                algorithm="mondrian", output="o",
                                keep=_keep(GOLDEN, ["age", "state"], "income")))  # fmt: skip
    tf = task_frames(db, r.run_id, "classification", "job")
    assert tf.numeric == ["age", "income"] and tf.categorical == {"state": ["CA", "MN", "TX"]}
    # rows come in a fixed order (by content digest): read them by their raw age
    order = np.argsort(tf.raw["age"].to_numpy())
    rel, raw = tf.released.iloc[order], tf.raw.iloc[order]
    assert raw["age"].tolist() == GOLDEN["age"].tolist()
    assert rel["age"].tolist() == [27.5, 27.5, 37.5, 37.5, 47.5, 47.5, 57.5, 57.5]
    assert (
        rel["state"].tolist() == [("CA",)] * 2 + [("MN",)] * 2 + [("TX",)] * 2 + [("CA", "MN")] * 2
    )
    x = encode(tf.released, tf.numeric, tf.categorical)[order]
    mid = np.array([27.5, 27.5, 37.5, 37.5, 47.5, 47.5, 57.5, 57.5])
    assert np.allclose(x[:, 0], (mid - 42.5) / np.sqrt(125.0))
    assert np.allclose(x[:, 1], _standardized(GOLDEN["income"]))  # exact: not a QI
    hot = [[1, 0, 0]] * 2 + [[0, 1, 0]] * 2 + [[0, 0, 1]] * 2 + [[1, 1, 0]] * 2
    assert np.array_equal(x[:, 2:], np.asarray(hot, dtype=float))
    xr = encode(tf.raw, tf.numeric, tf.categorical)[order]
    assert np.allclose(xr[:, 0], _standardized(GOLDEN["age"]))
    assert np.array_equal(xr[6:, 2:], [[1.0, 0, 0], [0, 1.0, 0]])
    # clustering: the sensitive attribute is no feature; 1..n ranks, a set its mean rank
    tc = task_frames(db, r.run_id, "clustering")
    assert tc.numeric == ["age"] and list(tc.categorical) == ["state", "job"]
    xc = encode(tc.released, tc.numeric, tc.categorical, "clustering")
    xc = xc[np.argsort(tc.raw["age"].to_numpy())]
    assert np.allclose(xc[:, 1], _standardized([1, 1, 2, 2, 3, 3, 1.5, 1.5]))


def test_lattice_release_covers_the_original_values(tmp_path):
    """A full-domain run (hierarchies): each released node stands for the leaves below it,
    checked against a brute force that rolls every leaf up to the run's level; suppressed
    rows stand for the whole domain."""
    from anonsql.demo.setup import setup_demo

    db = Database.open(tmp_path / "d.duckdb")
    setup_demo(db, rows=400)
    qis = ["age", "sex", "zip"]
    r = anonymize(db, "census", Spec(qis=qis, k=5, suppression=0.05, output="c5",
                                     keep=_keep(CENSUS, qis)))  # fmt: skip
    tf = task_frames(db, r.run_id, "classification", "income")
    assert tf.suppressed.any() or r.measures["suppressed_rows"] == 0
    for q in ("age", "zip"):
        h = db.hierarchies.load(q)
        level = int(r.levels[q])
        # brute force: each released label -> the leaves whose ancestor at `level` has it
        cover: dict[str, list[str]] = {}
        for leaf in h.leaf_ids:
            cover.setdefault(h.labels[h.ancestors[leaf, level]], []).append(h.labels[leaf])
        out = db.backend.fetch_df("SELECT * FROM c5")  # the labels the view releases
        assert set(out[q].astype(str)) <= set(cover) | {"*"}
        for i in range(len(tf.raw)):
            original, got = tf.raw[q].iloc[i], tf.released[q].iloc[i]
            if tf.suppressed[i]:
                assert (got is np.nan or np.isnan(got)) if q == "age" else got == "*"
                continue
            label = h.labels[h.ancestors[h.node(str(original), 0), level]]
            if q == "age":
                nums = [float(v) for v in cover[label]]
                assert got == pytest.approx((min(nums) + max(nums)) / 2)
            else:
                assert sorted(got) == sorted(cover[label]) and str(original) in got
    db.close()


def test_cli_classification_and_clustering(tmp_path):
    path = tmp_path / "w.duckdb"
    db = Database.open(path)
    table = _table()
    db.backend.write_frame("t", table)
    qis = ["age", "zip", "sex"]
    tada = anonymize(db, "t", Spec(qis=qis, sensitive="disease", k=5, l=2, algorithm="tada",
                                   label="y", output="o",
                                   keep=_keep(table, qis, "disease", "y")))  # fmt: skip
    exact = anonymize(db, "t", Spec(qis=qis, k=1, algorithm="mondrian", output="e",
                                    keep=_keep(table, qis)))  # fmt: skip
    db.close()
    runner = CliRunner()

    def run(*args):
        res = runner.invoke(cli, ["evaluate", *map(str, args), "--db", str(path)])
        assert res.exit_code == 0, res.output
        return res.output

    text = run(tada.run_id, "--task", "classification", "--label", "y", "--seeds", "2")
    assert "anonymized  accuracy" in text and "raw" in text and "f1_macro" in text
    doc = json.loads(run(tada.run_id, "--task", "classification", "--label", "y", "--json"))
    assert doc["kind"] == "task_utility" and doc["seeds"] == 3 and doc["rows"] == 240
    assert doc["features"] == ["age", "zip", "sex", "hours", "disease"]
    for scores in (doc["anonymized"], doc["raw"]):
        assert all(0.0 <= v <= 1.0 for v in scores["accuracy"] + scores["f1_macro"])
    # fixed seeds: a rerun gives the same figures
    again = json.loads(run(tada.run_id, "--task", "classification", "--label", "y", "--json"))
    assert again == doc
    clu = json.loads(
        run(tada.run_id, "--task", "clustering", "--ignore", "y", "--seeds", "1", "--json")
    )
    assert clu["features"] == ["age", "zip", "sex", "hours"] and clu["raw"]["ari"] == [1.0]
    assert -1.0 <= clu["anonymized"]["ari"][0] <= 1.0 and 0 <= clu["anonymized"]["nmi"][0] <= 1
    # k = 1 generalizes nothing: the release scores exactly as the raw rows
    same = json.loads(run(exact.run_id, "--task", "classification", "--label", "y", "--json"))
    assert same["anonymized"] == same["raw"]
    one = json.loads(run(exact.run_id, "--task", "clustering", "--label", "y", "--json"))
    assert one["anonymized"]["ari"] == [1.0] * 3


def test_api_and_bad_input(tmp_path):
    from anonsql.api import anonymize as api_anonymize
    from anonsql.api import evaluate

    table = _table(120, seed=1)
    run = api_anonymize(table, {"qi": ["age", "zip"], "k": 4, "algorithm": "mondrian",
                                "keep": _keep(table, ["age", "zip"])})  # fmt: skip
    ev = run.evaluate("clustering", label="y", seeds=1)
    assert ev.task == "clustering" and ev.rows == 120 and ev.mean("raw") == {"ari": 1, "nmi": 1}
    cls = evaluate(run, task="classification", label="y", seeds=1)
    assert set(cls.mean()) == {"accuracy", "f1_macro"} and len(cls.anonymized["accuracy"]) == 1
    db = run.database
    rid = run.result.run_id
    for kw, msg in [
        ({"task": "classification"}, "needs the label"),
        ({"task": "classification", "label": "age"}, "quasi-identifier"),
        ({"task": "classification", "label": "nope"}, "no column 'nope'"),
        ({"task": "regression"}, "unknown task"),
        ({"task": "clustering", "seeds": 0}, "at least 1"),
    ]:
        with pytest.raises(InputError, match=msg):
            evaluate_task(db, rid, **kw)
    with pytest.raises(InputError, match="no run 99"):
        evaluate_task(db, 99, "clustering")
    # the CLI: today's protocol still needs --target; bad input exits 1 with a message
    path = tmp_path / "w.duckdb"
    d = Database.open(path)
    table = _table(60)
    d.backend.write_frame("t", table)
    r = anonymize(d, "t", Spec(qis=["age"], k=3, algorithm="mondrian", output="o",
                               keep=_keep(table, ["age"])))  # fmt: skip
    d.close()
    res = CliRunner().invoke(cli, ["evaluate", str(r.run_id), "--db", str(path)])
    assert res.exit_code == 2 and "--target" in res.output
    res = CliRunner().invoke(
        cli, ["evaluate", str(r.run_id), "--task", "classification", "--db", str(path)]
    )
    assert res.exit_code == 1 and "label" in res.output

"""Seed 000's evaluation protocol (issue 17): one split drawn from the rows' contents
(independent of the database's row order), one model per seed trained on the original table
and tested on every encoding, models trained on another run (Figures 4-5), multi-class
targets (accuracy, macro AUC)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from anonsql.database import Database
from anonsql.demo.setup import setup_demo
from anonsql.errors import InputError
from anonsql.evaluation.mlp import row_keys, stable_split
from anonsql.run import anonymize
from anonsql.spec import Spec

pytest.importorskip("sklearn", reason="scikit-learn (anonsql[eval]) is not installed")

QIS = ["age", "sex", "education"]
#: the demo table's columns
CENSUS = ["age", "sex", "race", "marital_status", "education", "zip", "country", "occupation",
          "income"]  # fmt: skip


def _spec(qis: list[str], **options) -> Spec:
    """A greedy run that releases every column besides the QIs as it is (the evaluation's
    targets among them: every column of an output has a role)."""
    keep = [c for c in CENSUS if c not in qis]
    return Spec(qis=qis, algorithm="greedy", keep=keep, **options)


@pytest.fixture(scope="module")
def demo():
    db = Database.open(":memory:")
    setup_demo(db, rows=450)
    runs = {}
    for k in (1, 5, 20):
        spec = _spec(QIS, k=k, output=f"g{k}")
        runs[k] = anonymize(db, "census", spec).run_id
    yield db, runs
    db.close()


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(["a", "b", "c"]), min_size=2, max_size=2), min_size=1, max_size=30
    ),
    st.randoms(use_true_random=False),
)
def test_split_depends_on_contents_not_order(rows, rnd):
    """The same rows in any order get the same keys, so the same rows (as contents) train."""
    shuffled = rows[:]
    rnd.shuffle(shuffled)
    keys_a, keys_b = row_keys(rows), row_keys(shuffled)
    assert sorted(keys_a) == sorted(keys_b)
    order_a, train_a = stable_split(keys_a)
    order_b, train_b = stable_split(keys_b)
    seq_a = [tuple(rows[i]) for i in order_a]
    seq_b = [tuple(shuffled[i]) for i in order_b]
    assert seq_a == seq_b  # the same sequence of contents, so the same training order
    assert train_a.tolist() == train_b.tolist()
    assert int(train_a.sum()) == int(len(rows) * 2 / 3)


def test_duplicates_are_split_like_other_rows():
    """Identical rows get distinct keys (their rank among the copies), so copies of a row
    fall on both sides of the split instead of all on one."""
    keys = row_keys([["x"]] * 300)
    assert len(set(keys.tolist())) == 300
    _, train = stable_split(keys)
    assert train.sum() == 200


def test_scores_do_not_depend_on_the_database_row_order(demo):
    from anonsql.evaluation.mlp import evaluate_run

    db, runs = demo
    before = evaluate_run(db, runs[5], "income", seeds=1, kinds=["proportional", "oneclass"])
    # rewrite the source in another physical order: the run's view reads it in that order
    db.backend.execute("CREATE TABLE census_copy AS SELECT * FROM census ORDER BY random()")
    db.backend.execute("DELETE FROM census")
    db.backend.execute("INSERT INTO census SELECT * FROM census_copy ORDER BY occupation DESC")
    after = evaluate_run(db, runs[5], "income", seeds=1, kinds=["proportional", "oneclass"])
    assert [s.aucs for s in before] == [s.aucs for s in after]
    assert [s.accuracies for s in before] == [s.accuracies for s in after]


def test_paper_protocol_trains_one_model_per_seed(demo, monkeypatch):
    import anonsql.evaluation.mlp as utility

    db, runs = demo
    fits: list[int] = []
    real = utility.train_models

    def counting(x, labels, seeds, fitted=None):
        fits.append(seeds)
        return real(x, labels, seeds, fitted)

    monkeypatch.setattr(utility, "train_models", counting)
    scores = utility.evaluate_run(db, runs[1], "income", seeds=2)
    assert fits == [2]  # one training phase: 2 models, tested on the four encodings
    assert [s.representation for s in scores] == [
        "proportional", "oneclass", "fillparent", "fillchild"
    ]  # fmt: skip
    assert {s.trained_on for s in scores} == {"original proportional"}
    by = {s.representation: s for s in scores}
    # k = 1 generalizes nothing: proportional and fillParent ARE the training encoding, and
    # the same models score them identically
    assert by["proportional"].aucs == by["fillparent"].aucs
    fits.clear()
    per = utility.evaluate_run(db, runs[1], "income", seeds=2, protocol="per-encoding")
    assert fits == [2, 2, 2, 2]  # a model per encoding
    assert [s.trained_on for s in per][1] == "original oneclass"


def test_training_on_another_run(demo):
    from anonsql.evaluation.mlp import evaluate_run

    db, runs = demo
    scores = evaluate_run(db, runs[5], "income", seeds=1, train_run=runs[20],
                          train_kind="fillparent")  # fmt: skip
    assert {s.trained_on for s in scores} == {f"run {runs[20]} fillparent"}
    assert all(0.0 <= s.mean_auc <= 1.0 for s in scores)
    with pytest.raises(InputError, match="protocol 'paper'"):
        evaluate_run(db, runs[5], "income", seeds=1, train_run=runs[20], protocol="per-encoding")
    other = anonymize(db, "census", _spec(["age", "sex"], k=5, output="g_other")).run_id
    with pytest.raises(InputError, match="same rows"):
        evaluate_run(db, runs[5], "income", seeds=1, train_run=other)


def test_multiclass_target(demo):
    from anonsql.evaluation.mlp import evaluate_run

    db, runs = demo
    scores = evaluate_run(db, runs[5], "occupation", seeds=1, kinds=["proportional"])
    s = scores[0]
    assert 0.0 <= s.mean_accuracy <= 1.0 and 0.0 <= s.mean_auc <= 1.0
    with pytest.raises(InputError, match="protocol"):
        evaluate_run(db, runs[5], "occupation", protocol="bogus")


def test_missing_target_values_are_a_class_of_their_own(demo):
    """A NULL target is one more class, under a printable label: numpy's string arrays (and
    so scikit-learn's classes_) drop a trailing NUL, which broke the scoring."""
    from anonsql.evaluation.mlp import MISSING_LABEL, encode_run, evaluate_run

    db, _ = demo
    db.backend.execute(
        "CREATE TABLE census_null AS SELECT * REPLACE "
        "(CASE WHEN age % 3 = 0 THEN NULL ELSE occupation END AS occupation) FROM census"
    )
    run = anonymize(db, "census_null", _spec(QIS, k=5, output="gn")).run_id
    assert MISSING_LABEL in set(encode_run(db, run, "occupation", ["proportional"]).labels)
    s = evaluate_run(db, run, "occupation", seeds=1, kinds=["proportional"])[0]
    assert 0.0 <= s.mean_accuracy <= 1.0 and 0.0 <= s.mean_auc <= 1.0


def test_scores_match_sklearn():
    """Binary: AUC-ROC of the second value; several values: macro one-vs-rest AUC, as
    scikit-learn computes it when every value is present; accuracy of the argmax."""
    from sklearn.metrics import accuracy_score, roc_auc_score

    from anonsql.evaluation.mlp import scores, train_models

    rng = np.random.default_rng(0)
    x = rng.normal(size=(240, 3))
    labels = np.array(["a", "b", "c"])[(x[:, 0] > 0).astype(int) + (x[:, 1] > 0.5)]
    model = train_models(x[:160], labels[:160], 1)[0]
    auc, acc = scores(model, x[160:], labels[160:], ["a", "b", "c"])
    proba = model.predict_proba(x[160:])
    assert auc == pytest.approx(roc_auc_score(labels[160:], proba, multi_class="ovr"))
    assert acc == pytest.approx(accuracy_score(labels[160:], model.predict(x[160:])))
    binary = np.where(labels == "a", "a", "z")
    model = train_models(x[:160], binary[:160], 1)[0]
    auc, _ = scores(model, x[160:], binary[160:], ["a", "z"])
    expect = roc_auc_score(binary[160:] == "z", model.predict_proba(x[160:])[:, 1])
    assert auc == pytest.approx(expect)

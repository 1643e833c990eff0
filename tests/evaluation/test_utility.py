"""``anonsql evaluate``: the seed 000 MLP protocol on a run's encodings."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from anonsql.cli.main import cli
from anonsql.database import Database
from anonsql.demo.setup import setup_demo
from anonsql.errors import InputError
from anonsql.run import anonymize
from anonsql.spec import Spec

pytest.importorskip("sklearn", reason="scikit-learn (anonsql[eval]) is not installed")


def test_evaluate_scores_every_representation(tmp_path):
    from anonsql.evaluation.mlp import evaluate_run

    path = tmp_path / "w.duckdb"
    db = Database.open(path)
    setup_demo(db, rows=600)
    qis = ["age", "sex", "education"]
    # the census holds no identifiers: the columns that are not QIs (the targets among them)
    # are released as they are
    keep = [c for c in db.backend.columns("census") if c not in qis]
    r = anonymize(db, "census", Spec(qis=qis, k=10, algorithm="greedy", output="g", keep=keep))
    scores = evaluate_run(db, r.run_id, "income", seeds=2)
    assert [s.representation for s in scores] == [
        "proportional", "oneclass", "fillparent", "fillchild"
    ]  # fmt: skip
    for s in scores:
        assert 0.0 <= s.mean_auc <= 1.0 and len(s.aucs) == 2
    with pytest.raises(InputError, match="quasi-identifier"):
        evaluate_run(db, r.run_id, "age")
    # a target with more values: accuracy and macro AUC (tests/evaluation/test_evaluate_protocol.py)
    many = evaluate_run(db, r.run_id, "occupation", seeds=1, kinds=["oneclass"])
    assert 0.0 <= many[0].mean_accuracy <= 1.0
    db.close()
    res = CliRunner().invoke(
        cli, ["evaluate", str(r.run_id), "--target", "income", "--seeds", "1", "--db", str(path)]
    )
    assert res.exit_code == 0 and "proportional" in res.output, res.output

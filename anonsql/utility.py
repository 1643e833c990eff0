"""Data utility for data mining (seed 000, section IV): train the paper's MLP on the original
table and measure AUC-ROC on each encoding of the anonymized table.

Protocol (seed 000 IV-C): two hidden layers of 5 and 2 ReLU units, Adam with a constant
learning rate of 1e-3, batches of 200, training stops after 10 epochs without improvement of
the loss (at most 500 epochs); 2/3 of the records train, the other 1/3 evaluate; 10 seeds
(split and initialization), mean and standard deviation. The original table is encoded with
the same columns (one per hierarchy node): for an exact value, proportional and fillParent
give the value and its ancestors 1, oneClass and fillChild the value alone. The model
trained on the original encoding is evaluated on the held-out rows of the anonymized table
in that encoding.

Needs scikit-learn: ``pip install anonsql[eval]``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from anonsql.errors import InputError
from anonsql.output.representation import REPRESENTATIONS, column_names, representation_query


@dataclass
class UtilityScore:
    representation: str
    mean_auc: float
    std_auc: float
    aucs: list[float]


def _sklearn():
    try:
        from sklearn.metrics import roc_auc_score
        from sklearn.neural_network import MLPClassifier
    except ImportError:
        raise InputError("the evaluation needs scikit-learn: pip install 'anonsql[eval]'") from None
    return MLPClassifier, roc_auc_score


def _original_encoding(frame, hs, kind) -> np.ndarray:
    """The original values in the representation's columns (one block per QI)."""
    cols = []
    for j, h in enumerate(hs):
        leaf = np.asarray([h.node(str(v), 0) for v in frame[f"__o{j}"]])
        block = np.zeros((len(frame), h.size))
        if kind in ("proportional", "fillparent"):
            anc = h.ancestors[leaf]
            rows = np.repeat(np.arange(len(frame)), anc.shape[1])
            flat = anc.ravel()
            ok = flat >= 0
            block[rows[ok], flat[ok]] = 1.0
        else:
            block[np.arange(len(frame)), leaf] = 1.0
        cols.append(block)
    return np.hstack(cols)


def evaluate_run(db, run_id: int, target: str, seeds: int = 10, kinds=REPRESENTATIONS):
    MLPClassifier, roc_auc_score = _sklearn()
    from anonsql.output.representation import rows_query

    _, qis, columns, hs, _ = rows_query(db, run_id)
    if target in qis:
        raise InputError(f"the target {target!r} is a quasi-identifier of the run")
    if target not in columns:
        raise InputError(f"the run's output has no column {target!r}")
    names = column_names(qis, hs, columns)
    features = [n for per_qi in names for n in per_qi]
    scores = []
    for kind in kinds:
        q = representation_query(db, run_id, kind, with_original=True)
        frame = db.backend.fetch_df(q)
        labels = frame[target].astype(str)
        classes = sorted(labels.unique())
        if len(classes) != 2:
            raise InputError(f"AUC-ROC needs a binary target; {target!r} has {len(classes)} values")
        y = (labels == classes[1]).to_numpy().astype(int)
        x_anon = frame[features].to_numpy(dtype=float)
        x_orig = _original_encoding(frame, hs, kind)
        aucs = []
        for seed in range(seeds):
            order = np.random.default_rng(seed).permutation(len(frame))
            cut = (2 * len(frame)) // 3
            train, test = order[:cut], order[cut:]
            model = MLPClassifier(
                hidden_layer_sizes=(5, 2),
                activation="relu",
                solver="adam",
                learning_rate_init=1e-3,
                learning_rate="constant",
                batch_size=200,
                n_iter_no_change=10,
                max_iter=500,
                random_state=seed,
            )
            with warnings.catch_warnings():
                # the protocol caps training at 500 epochs; hitting the cap is expected
                warnings.simplefilter("ignore", category=UserWarning)
                model.fit(x_orig[train], y[train])
            aucs.append(float(roc_auc_score(y[test], model.predict_proba(x_anon[test])[:, 1])))
        scores.append(UtilityScore(kind, float(np.mean(aucs)), float(np.std(aucs)), aucs))
    return scores


__all__ = ["UtilityScore", "evaluate_run"]

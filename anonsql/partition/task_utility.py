"""Seed 003's downstream tasks on a released table (section VI): how each released value is
encoded, and the classification and clustering scores.

Encodings (section VI-B and VI-C):

* classification: a categorical attribute is one-hot over its domain; a released set is
  multi-hot (every member 1), a suppressed value (``*``) all ones; a numeric attribute is its
  value, an interval's midpoint, standardized (a suppressed value sits at the mean);
* clustering: a categorical attribute's n values are mapped onto 1..n (value order), a set
  onto the mean of its members' numbers; numbers and midpoints as above; every column
  standardized.

Scores: a neural network (hidden layers 64, 32, 16, ReLU, Adam; scikit-learn's
MLPClassifier) trained on a training split and scored on the held-out split of the same
(anonymized) table - accuracy and macro F1; k-means with 5 clusters on the released table
against k-means with 5 clusters on the raw table - adjusted Rand index and normalized mutual
information. Needs scikit-learn (``anonsql[eval]``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from anonsql.errors import InputError
from anonsql.partition.release import members, midpoint

SUPPRESSED = "*"


def _number(value) -> float:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return np.nan
    text = str(value)
    if text == SUPPRESSED:
        return np.nan
    return midpoint(text)


def _standardize(x: np.ndarray) -> np.ndarray:
    x = np.where(np.isnan(x), np.nanmean(x) if (~np.isnan(x)).any() else 0.0, x)
    std = x.std()
    return (x - x.mean()) / std if std > 0 else np.zeros_like(x)


def encode(
    frame: pd.DataFrame,
    numeric: list[str],
    categorical: dict[str, list[str]],
    kind: str = "classification",
) -> np.ndarray:
    """The feature matrix of ``frame``; ``categorical`` maps a column to its domain (value
    order)."""
    blocks = []
    for c in numeric:
        blocks.append(_standardize(np.asarray([_number(v) for v in frame[c]]))[:, None])
    for c, domain in categorical.items():
        index = {v: i for i, v in enumerate(domain)}
        values = frame[c].astype(str)
        if kind == "classification":
            block = np.zeros((len(frame), len(domain)))
            for r, v in enumerate(values):
                if v == SUPPRESSED:
                    block[r] = 1.0
                    continue
                for mbr in members(v):
                    block[r, index[mbr]] = 1.0
            blocks.append(block)
        else:
            ranks = np.asarray(
                [
                    np.nan if v == SUPPRESSED else np.mean([index[m] + 1.0 for m in members(v)])
                    for v in values
                ]
            )
            blocks.append(_standardize(ranks)[:, None])
    return np.hstack(blocks) if blocks else np.zeros((len(frame), 0))


def _sklearn():
    try:
        import sklearn  # noqa: F401
    except ImportError:
        raise InputError("the task scores need scikit-learn: pip install 'anonsql[eval]'") from None


def classification_scores(
    x: np.ndarray, y: np.ndarray, seed: int, test_size: float = 0.2, max_iter: int = 200
) -> dict[str, float]:
    """Accuracy and macro F1 of seed 003's network on a held-out ``test_size`` split
    (stratified by the label, seeded)."""
    _sklearn()
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.metrics import accuracy_score, f1_score
    from sklearn.model_selection import train_test_split
    from sklearn.neural_network import MLPClassifier

    # stratified by the label, unless a label value has a single row (Nursery's "recommend"
    # has 2 of 12,960; a subsample may keep one)
    _, per_label = np.unique(y, return_counts=True)
    strata = y if per_label.min() >= 2 else None
    xtr, xte, ytr, yte = train_test_split(
        x, y, test_size=test_size, random_state=seed, stratify=strata
    )
    net = MLPClassifier(
        hidden_layer_sizes=(64, 32, 16),
        activation="relu",
        solver="adam",
        max_iter=max_iter,
        early_stopping=True,
        random_state=seed,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        net.fit(xtr, ytr)
    pred = net.predict(xte)
    return {
        "accuracy": float(accuracy_score(yte, pred)),
        "f1_macro": float(f1_score(yte, pred, average="macro")),
    }


def kmeans_labels(x: np.ndarray, seed: int, clusters: int = 5) -> np.ndarray:
    _sklearn()
    from sklearn.cluster import KMeans

    return KMeans(n_clusters=clusters, n_init=10, random_state=seed).fit_predict(x)


def clustering_scores(raw_labels: np.ndarray, x: np.ndarray, seed: int) -> dict[str, float]:
    """ARI and NMI of k-means (5 clusters) on ``x`` against the raw table's clustering."""
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    labels = kmeans_labels(x, seed)
    return {
        "ari": float(adjusted_rand_score(raw_labels, labels)),
        "nmi": float(normalized_mutual_info_score(raw_labels, labels)),
    }


__all__ = ["classification_scores", "clustering_scores", "encode", "kmeans_labels"]

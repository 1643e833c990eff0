"""Seed 001's utility measures (§5.2-5.3) of a microaggregation.

* cluster validity: Silhouette and Davies-Bouldin of the groups, over the original records
  in z-scores (each record once; Silhouette on a seeded sample of 10,000 records when there
  are more, as scikit-learn's ``sample_size``; Davies-Bouldin's mean over groups on a seeded
  sample of 1,000 groups when there are more than 10,000 groups);
* separability: accuracy of a decision tree (scikit-learn's ``DecisionTreeClassifier``,
  ``random_state=0``) under 10-fold stratified cross-validation (shuffled, seed 0) on the
  released QI values, predicting the label (on a seeded sample of 100,000 records when there
  are more);
* structural utility: per attribute, the order-1 Wasserstein distance (EMD) between the
  original and the released column, normalized by the attribute's original range (so it lies
  in [0, 1] while released values stay in the range), then 1 - the mean over attributes;
* combined utility: alpha * separability + (1 - alpha) * structural, alpha = 1/2;
* Score(A_i) = sum_j CU(A_i, D_j) / max_i CU(A_i, D_j) (the paper's formula after [19]).
"""

from __future__ import annotations

from typing import Any

import numpy as np

SILHOUETTE_SAMPLE = 10_000
SEPARABILITY_SAMPLE = 100_000
DB_EXACT_GROUPS = 10_000
DB_SAMPLE_GROUPS = 1_000
DB_CHUNK = 4_000_000


def davies_bouldin(x: np.ndarray, groups: np.ndarray, counts: np.ndarray, seed: int = 0) -> float:
    """Davies-Bouldin index of ``groups`` over points ``x`` weighted by ``counts``: equal to
    scikit-learn's ``davies_bouldin_score`` on the records (each point repeated count
    times). 0 for fewer than two groups.

    The index is the mean over groups i of max_j (s_i + s_j) / d(c_i, c_j), quadratic in the
    number of groups; it is computed in chunks of rows, and beyond ``DB_EXACT_GROUPS`` groups
    (MDAV at 1 M records makes 200,000) as the mean over a seeded sample of
    ``DB_SAMPLE_GROUPS`` groups i, each max_j taken exactly over every group: an unbiased
    estimate of the mean."""
    g = np.unique(groups, return_inverse=True)[1].reshape(-1)
    n = int(g.max()) + 1 if len(g) else 0
    if n < 2:
        return 0.0
    w = np.bincount(g, weights=counts, minlength=n)
    cent = np.zeros((n, x.shape[1]))
    np.add.at(cent, g, x * counts[:, None])
    cent /= w[:, None]
    dist = np.sqrt(((x - cent[g]) ** 2).sum(axis=1))
    scatter = np.bincount(g, weights=dist * counts, minlength=n) / w
    rows = np.arange(n)
    if n > DB_EXACT_GROUPS:
        rows = np.sort(np.random.default_rng(seed).choice(n, DB_SAMPLE_GROUPS, replace=False))
    worst = np.empty(len(rows))
    step = max(1, DB_CHUNK // (n * x.shape[1]))  # a chunk's temporary: step x n x m floats
    for a in range(0, len(rows), step):
        r = rows[a : a + step]
        sep = np.sqrt(((cent[r, None, :] - cent[None, :, :]) ** 2).sum(axis=2))
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = (scatter[r, None] + scatter[None, :]) / sep
        ratio[~np.isfinite(ratio)] = 0.0  # scikit-learn: coinciding centroids count as 0
        ratio[np.arange(len(r)), r] = -np.inf
        worst[a : a + step] = ratio.max(axis=1)
    return float(worst.mean())


def silhouette(x: np.ndarray, labels: np.ndarray, seed: int = 0) -> float | None:
    """Mean silhouette of the records ``x`` under ``labels`` (None for one group, or as many
    groups as records)."""
    from sklearn.metrics import silhouette_score

    if len(x) > SILHOUETTE_SAMPLE:  # the sample scikit-learn's ``sample_size`` would draw
        idx = np.random.RandomState(seed).permutation(len(x))[:SILHOUETTE_SAMPLE]
        x, labels = x[idx], labels[idx]
    n_groups = len(np.unique(labels))
    if n_groups < 2 or n_groups >= len(x):
        return None
    return float(silhouette_score(x, labels))


def structural_utility(original: np.ndarray, released: np.ndarray) -> tuple[float, list[float]]:
    """1 - the mean normalized W1 distance per attribute, and each attribute's normalized W1."""
    from scipy.stats import wasserstein_distance

    per = []
    for j in range(original.shape[1]):
        span = float(original[:, j].max() - original[:, j].min())
        d = wasserstein_distance(original[:, j], released[:, j])
        per.append(min(1.0, d / span) if span > 0 else (0.0 if d == 0 else 1.0))
    return 1.0 - float(np.mean(per)), per


def separability(x: np.ndarray, y: np.ndarray, seed: int = 0) -> float:
    """Decision-tree accuracy under 10-fold stratified cross-validation (seed 001 Table 4)."""
    import warnings

    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.tree import DecisionTreeClassifier

    if len(x) > SEPARABILITY_SAMPLE:
        idx = np.random.default_rng(seed).choice(len(x), SEPARABILITY_SAMPLE, replace=False)
        x, y = x[idx], y[idx]
    folds = StratifiedKFold(n_splits=10, shuffle=True, random_state=seed)
    with warnings.catch_warnings():  # classes with fewer than 10 records (Ecoli, Yeast)
        warnings.simplefilter("ignore", UserWarning)
        scores = cross_val_score(DecisionTreeClassifier(random_state=0), x, y, cv=folds)
    return float(scores.mean())


def combined_utility(sep: float, structural: float, alpha: float = 0.5) -> float:
    return alpha * sep + (1 - alpha) * structural


def score(table: dict[str, dict[str, float]]) -> dict[str, float]:
    """Score(A_i) = sum over data sets D_j of CU(A_i, D_j) / max_i CU(A_i, D_j); ``table``
    maps method -> data set -> combined utility."""
    sets = {d for row in table.values() for d in row}
    best = {d: max(row[d] for row in table.values() if d in row) for d in sets}
    return {a: float(sum(v / best[d] for d, v in row.items())) for a, row in table.items()}


def utility_measures(
    original: np.ndarray,
    z: np.ndarray,
    released: np.ndarray,
    classes: np.ndarray,
    y: np.ndarray | None,
    seed: int = 0,
) -> dict[str, Any]:
    """The measures of one release, per record: ``original``/``z``/``released`` (n x m) are the
    records' original values, z-scores and released values, ``classes`` their groups."""
    counts = np.ones(len(z))
    out: dict[str, Any] = {
        "silhouette": silhouette(z, classes, seed),
        "davies_bouldin": davies_bouldin(z, classes, counts, seed),
    }
    structural, per = structural_utility(original, released)
    out["structural_utility"] = structural
    out["normalized_w1"] = per
    if y is not None:
        out["separability"] = separability(released, y, seed)
        out["combined_utility"] = combined_utility(out["separability"], structural)
    return out


__all__ = [
    "combined_utility",
    "davies_bouldin",
    "score",
    "separability",
    "silhouette",
    "structural_utility",
    "utility_measures",
]

"""Seed 001's utility measures (§5.2-5.3) of a microaggregation.

* cluster validity: Silhouette and Davies-Bouldin of the groups, over the original records
  in z-scores (each record once; Silhouette on a seeded sample of 10,000 records when there
  are more, as scikit-learn's ``sample_size``; Davies-Bouldin exact at any size);
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

from itertools import chain, pairwise
from typing import Any

import numpy as np

SILHOUETTE_SAMPLE = 10_000
#: distances per chunk of silhouette's rows
SILHOUETTE_CHUNK = 4_000_000
SEPARABILITY_SAMPLE = 100_000
#: Davies-Bouldin costs every pair of groups up to this many groups; beyond, it costs each
#: group against the DB_HIGH groups of largest scatter, then against its DB_NEIGHBOURS (then
#: 4, 16, ... times as many) nearest centroids in tiers of smaller scatter, DB_TIER times
#: larger each (:func:`_worst_ratios`)
DB_EXACT_GROUPS = 10_000
DB_HIGH = 64
DB_TIER = 16
DB_NEIGHBOURS = 8
#: rows per ball query of _worst_ratios (bounds the lists it returns)
DB_BALL_ROWS = 20_000
DB_CHUNK = 4_000_000


def davies_bouldin(x: np.ndarray, groups: np.ndarray, counts: np.ndarray, seed: int = 0) -> float:
    """Davies-Bouldin index of ``groups`` over points ``x`` weighted by ``counts``: equal to
    scikit-learn's ``davies_bouldin_score`` on the records (each point repeated count
    times). 0 for fewer than two groups. ``seed`` is not used (the index is exact); it stays
    for the callers that pass one.

    The index is the mean over groups i of max_j R_ij, R_ij = (s_i + s_j) / d(c_i, c_j),
    quadratic in the number of groups if every pair is costed. Up to ``DB_EXACT_GROUPS``
    groups it is (in chunks of rows); beyond (MDAV at 1 M records makes 200,000 groups),
    :func:`_worst_ratios` finds each row's maximum among a few candidates, exactly."""
    g = np.unique(groups, return_inverse=True)[1].reshape(-1)
    n = int(g.max()) + 1 if len(g) else 0
    if n < 2:
        return 0.0
    w = np.bincount(g, weights=counts, minlength=n)
    # per attribute, the weighted sums in the records' order (np.add.at's additions, faster)
    cent: np.ndarray = np.stack(
        [np.bincount(g, weights=x[:, j] * counts, minlength=n) for j in range(x.shape[1])],
        axis=1,
    )
    cent /= w[:, None]
    dist = np.sqrt(((x - cent[g]) ** 2).sum(axis=1))
    scatter = np.bincount(g, weights=dist * counts, minlength=n) / w
    if n > DB_EXACT_GROUPS:
        return float(_worst_ratios(cent, scatter).mean())
    return float(_dense_worst(cent, scatter, np.arange(n)).mean())


def _ratios(cent: np.ndarray, scatter: np.ndarray, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    """R_ij for the pairs (i[a], j[a]), or rows i against columns j when both are 2-D by
    broadcasting: the distance as the dense pass computes it (differences squared, summed
    over the last axis), coinciding centroids 0 as scikit-learn counts them."""
    sep = np.sqrt(((cent[i] - cent[j]) ** 2).sum(axis=-1))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (scatter[i] + scatter[j]) / sep
    ratio[~np.isfinite(ratio)] = 0.0
    return ratio


def _dense_worst(cent: np.ndarray, scatter: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """max_{j != i} R_ij for the groups ``rows``, over every group, in chunks of rows."""
    n = len(cent)
    worst = np.empty(len(rows))
    step = max(1, DB_CHUNK // (n * cent.shape[1]))  # a chunk's temporary: step x n x m floats
    every = np.arange(n)
    for a in range(0, len(rows), step):
        r = rows[a : a + step]
        ratio = _ratios(cent, scatter, r[:, None], every[None, :])
        ratio[np.arange(len(r)), r] = -np.inf
        worst[a : a + step] = ratio.max(axis=1)
    return worst


def _worst_ratios(cent: np.ndarray, scatter: np.ndarray) -> np.ndarray:
    """max_{j != i} R_ij for every group i, the same numbers as :func:`_dense_worst`
    without costing every pair.

    The groups are cut into tiers by scatter: the DB_HIGH largest, then tiers DB_TIER times
    as large as the one before, the last holding most groups. The first tier is costed
    against every group. In a later tier of largest scatter S, R_ij <= (s_i + S) / d_ij, so
    with group i's best ratio b_i so far, only the tier's groups closer than (s_i + S) / b_i
    to c_i can beat it. The tiers are taken from the last (small scatter, most groups) to
    the second, each with a k-d tree of its centroids (scipy's cKDTree). In the last, every
    row's DB_NEIGHBOURS nearest centroids are costed first, which gives it a good b_i (and
    settles it when the K-th is already beyond (s_i + S) / b_i); then in every tier a ball
    query per row proposes the groups within (s_i + S) / b_i, widened by a relative 1e-9
    for the tree's rounding. A row with b_i = 0 asks for its K nearest, then 4 K, ...
    until the K-th is beyond its bound, and is costed against the whole tier once K
    reaches a quarter of it. The tree only proposes candidates; every ratio is computed as
    the dense pass computes it, so each row's maximum is the dense pass's."""
    from scipy.spatial import cKDTree

    n = len(cent)
    order = np.argsort(-scatter, kind="stable")
    # every R_ij >= 0 (coinciding centroids 0) and n >= 2, so each row's maximum is >= 0
    worst = np.zeros(n)
    every = np.arange(n)
    step = max(1, DB_CHUNK // (n * cent.shape[1]))
    cuts = [0, min(n, DB_HIGH)]
    while cuts[-1] < n:
        cuts.append(min(n, max(1, cuts[-1]) * DB_TIER))
    tiers = [order[a:b] for a, b in pairwise(cuts) if b > a]
    for a in range(0, len(tiers[0]), step):  # the first tier against every group
        h = tiers[0][a : a + step]
        ratio = _ratios(cent, scatter, every[:, None], h[None, :])
        ratio[h, np.arange(len(h))] = -np.inf
        np.maximum(worst, ratio.max(axis=1), out=worst)
    for t, tier in reversed(list(enumerate(tiers))[1:]):
        top = float(scatter[tier[0]])
        tree = cKDTree(cent[tier])
        todo = every[scatter + top > 0.0]  # else every ratio with the tier is 0
        k = DB_NEIGHBOURS
        if t == len(tiers) - 1 and len(tier) > 4 * k:
            # the largest tier first: every row's K nearest give it a good b_i
            todo = _nearest_step(tree, tier, cent, scatter, worst, todo, k, top)
            k *= 4
        # rows with b_i > 0: every group of the tier within (s_i + S) / b_i (a ball query)
        ball, todo = todo[worst[todo] > 0.0], todo[worst[todo] == 0.0]
        for a in range(0, len(ball), DB_BALL_ROWS):
            r = ball[a : a + DB_BALL_ROWS]
            radius = (scatter[r] + top) / worst[r] * (1.0 + 1e-9)
            found = tree.query_ball_point(cent[r], radius)
            sizes = np.fromiter(map(len, found), dtype=np.intp, count=len(r))
            if not sizes.sum():
                continue
            j = tier[np.fromiter(chain.from_iterable(found), dtype=np.intp, count=sizes.sum())]
            i = np.repeat(r, sizes)
            ratio = _ratios(cent, scatter, i, j)
            ratio[i == j] = -np.inf
            hit = sizes > 0
            starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))[hit]
            worst[r[hit]] = np.maximum(worst[r[hit]], np.maximum.reduceat(ratio, starts))
        while len(todo):  # rows with b_i = 0: their K nearest, 4 K, ... until settled
            if 4 * k >= len(tier):  # a quarter of the tier: cost it all
                for a in range(0, len(todo), step):
                    r = todo[a : a + step]
                    ratio = _ratios(cent, scatter, r[:, None], tier[None, :])
                    ratio[r[:, None] == tier[None, :]] = -np.inf
                    worst[r] = np.maximum(worst[r], ratio.max(axis=1))
                break
            todo = _nearest_step(tree, tier, cent, scatter, worst, todo, k, top)
            k *= 4
    return worst


def _nearest_step(
    tree,
    tier: np.ndarray,
    cent: np.ndarray,
    scatter: np.ndarray,
    worst: np.ndarray,
    todo: np.ndarray,
    k: int,
    top: float,
) -> np.ndarray:
    """Raise ``worst`` of the rows ``todo`` by their ratios with their k nearest centroids of
    the tier (k + 1 neighbours: a group of the tier finds itself among them); return the rows
    not settled, those whose best ratio a group beyond the k-th could still beat (a tier's
    ratio is at most (s_i + top) / d)."""
    d, nb = tree.query(cent[todo], k=k + 1)
    cand = tier[nb]
    ratio = _ratios(cent, scatter, todo[:, None], cand)
    ratio[cand == todo[:, None]] = -np.inf
    worst[todo] = np.maximum(worst[todo], ratio.max(axis=1))
    with np.errstate(divide="ignore"):  # d_K = 0: not settled
        beyond = (scatter[todo] + top) / (d[:, -1] * (1.0 - 1e-9))
    return todo[worst[todo] < beyond]


def silhouette(x: np.ndarray, labels: np.ndarray, seed: int = 0) -> float | None:
    """Mean silhouette of the records ``x`` under ``labels`` (None for one group, or as many
    groups as records): scikit-learn's ``silhouette_score`` on the same sample, computed
    for the records that need it only.

    scikit-learn gives 0 to a record alone in its group within the sample; with many small
    groups (MDAV at 1 M records: 200,000 groups of 5, a sample of 10,000) nearly every
    sampled record is alone, so only the others' rows of distances are computed (with
    scikit-learn's ``pairwise_distances``, the diagonal 0 as scikit-learn sets it) and
    reduced as scikit-learn's ``silhouette_samples`` reduces them."""
    from sklearn.metrics import pairwise_distances

    if len(x) > SILHOUETTE_SAMPLE:  # the sample scikit-learn's ``sample_size`` would draw
        idx = np.random.RandomState(seed).permutation(len(x))[:SILHOUETTE_SAMPLE]
        x, labels = x[idx], labels[idx]
    codes = np.unique(labels, return_inverse=True)[1].reshape(-1)
    freq = np.bincount(codes)
    if len(freq) < 2 or len(freq) >= len(x):
        return None
    sil = np.zeros(len(x))
    rows = np.flatnonzero(freq[codes] > 1)
    step = max(1, SILHOUETTE_CHUNK // len(x))
    for a in range(0, len(rows), step):
        r = rows[a : a + step]
        dist = pairwise_distances(x[r], x)
        dist[np.arange(len(r)), r] = 0.0
        sums: np.ndarray = np.stack(
            [np.bincount(codes, weights=row, minlength=len(freq)) for row in dist]
        )
        own = (np.arange(len(r)), codes[r])
        intra = sums[own] / (freq[codes[r]] - 1)
        sums[own] = np.inf
        sums /= freq
        inter = sums.min(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):  # 0 / 0: 0, as scikit-learn
            sil[r] = (inter - intra) / np.maximum(intra, inter)
    return float(np.mean(np.nan_to_num(sil)))


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

"""Seed 003 section IV-B: a (k, l)-compliant clustering (Definition IV.2).

1. Features: every attribute but the sensitive one and the label (and the direct
   identifiers), categorical values mapped onto 1..n (value order), then every column
   standardized (mean 0, standard deviation 1; a constant column becomes 0) - section VI-C.
2. Constrained k-means (the ``k-means-constrained`` package; seed 003 VI-C) with
   ``n / (2k)`` clusters (at least one) and a minimum cluster size of k, over the rows (a
   histogram row counted n times is n points).
3. Equal QI tuples together (our addition: the release must be a function of the QI tuple,
   and non-QI features can put rows with equal QI tuples in different clusters): every
   distinct QI tuple joins the cluster holding most of its rows (ties: the lowest cluster id).
4. Merging (seed 003 IV-B and Appendix B): while a cluster fails the models (fewer than l
   distinct sensitive values; after step 3 also fewer than k rows), the failing cluster with
   the fewest rows (ties: lowest id) is merged into the cluster whose centroid is nearest
   (Euclidean, standardized features); among equally near ones, the one with the most
   distinct sensitive values, then the lowest id. Centroids are recomputed after a merge.

The result satisfies Definition IV.2 (every cluster >= k rows and >= l distinct values) when
the whole table does (one cluster is the limit of merging).
"""

from __future__ import annotations

import numpy as np

from anonsql.algorithms.mondrian.checker import Checker
from anonsql.data.points import Points
from anonsql.errors import InputError


def standardized(x: np.ndarray, weights: np.ndarray) -> np.ndarray:
    w = weights / weights.sum()
    mean = (x * w[:, None]).sum(axis=0)
    std = np.sqrt(((x - mean) ** 2 * w[:, None]).sum(axis=0))
    return np.where(std > 0, (x - mean) / np.where(std > 0, std, 1.0), 0.0)


def kmeans_constrained(x: np.ndarray, n_clusters: int, size_min: int, seed: int, **opts):
    try:
        from k_means_constrained import KMeansConstrained
    except ImportError:
        raise InputError(
            "TA_DA's clustering needs the k-means-constrained package: pip install 'anonsql[ml]'"
        ) from None
    if n_clusters <= 1:
        return np.zeros(len(x), dtype=np.int64)
    model = KMeansConstrained(
        n_clusters=n_clusters,
        size_min=size_min,
        random_state=seed,
        n_init=opts.get("n_init", 1),
        max_iter=opts.get("max_iter", 30),
    )
    return np.asarray(model.fit_predict(x), dtype=np.int64)


def initial_clusters(points: Points, rows: np.ndarray, k: int, seed: int = 0, **opts) -> np.ndarray:
    """Cluster id per row of ``rows`` after steps 1-3."""
    if points.features is None:
        raise InputError("the clustering needs features")
    cnt = points.counts[rows]
    x = standardized(points.features[rows], cnt.astype(float))
    n = int(cnt.sum())
    expand = np.repeat(np.arange(len(rows)), cnt)
    labels = kmeans_constrained(x[expand], max(n // (2 * k), 1), k, seed, **opts)
    # step 3: each QI tuple to the cluster holding most of its rows
    tid = points.tuple_ids[rows]
    _, tix = np.unique(tid, return_inverse=True)
    tix = tix.ravel()
    nclu = int(labels.max()) + 1
    votes = np.zeros((tix.max() + 1, nclu))
    np.add.at(votes, (tix[expand], labels), 1.0)
    return votes.argmax(axis=1)[tix]  # argmax: ties to the lowest cluster id


def merge_until_compliant(
    points: Points, rows: np.ndarray, cluster: np.ndarray, checker: Checker
) -> list[np.ndarray]:
    """Step 4: the clusters (arrays of indices into ``points``) after merging."""
    cnt = points.counts[rows].astype(float)
    x = standardized(points.features[rows], cnt)  # type: ignore[index]
    groups = {int(c): np.flatnonzero(cluster == c) for c in np.unique(cluster)}

    def centroid(ix):
        return (x[ix] * cnt[ix, None]).sum(axis=0) / cnt[ix].sum()

    def distinct(ix):
        return 0 if points.sens is None else len(np.unique(points.sens[rows[ix]]))

    cents = {c: centroid(ix) for c, ix in groups.items()}
    while len(groups) > 1:
        ids = sorted(groups)
        ok = checker.passes(
            [
                (None if points.sens is None else points.sens[rows[groups[c]]], cnt[groups[c]])
                for c in ids
            ]
        )
        failing = [c for c, good in zip(ids, ok, strict=True) if not good]
        if not failing:
            break
        c = min(failing, key=lambda c: (cnt[groups[c]].sum(), c))
        others = [o for o in ids if o != c]
        dist = np.asarray([np.linalg.norm(cents[o] - cents[c]) for o in others])
        near = dist <= dist.min() + 1e-12
        target = min(
            (o for o, n in zip(others, near, strict=True) if n),
            key=lambda o: (-distinct(groups[o]), o),
        )
        groups[target] = np.concatenate([groups[target], groups.pop(c)])
        cents.pop(c)
        cents[target] = centroid(groups[target])
    return [rows[np.sort(ix)] for _, ix in sorted(groups.items())]


def compliant_clustering(
    points: Points,
    checker: Checker,
    k: int,
    rows: np.ndarray | None = None,
    seed: int = 0,
    **opts,
) -> list[np.ndarray]:
    """The (k, l)-compliant clustering of ``rows`` (default: all): groups of row indices."""
    if rows is None:
        rows = np.arange(len(points.counts))
    cluster = initial_clusters(points, rows, k, seed, **opts)
    return merge_until_compliant(points, rows, cluster, checker)


__all__ = ["compliant_clustering", "initial_clusters", "merge_until_compliant", "standardized"]

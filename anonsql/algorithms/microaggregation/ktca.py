"""k-TCA and C-TCA (seed 001 §3.1; Zouinina et al.'s topological collaborative anonymization):
pre-anonymization by topological collaboration between one self-organizing map per view,
then a fine-tuning map over the pre-anonymized data whose units are the groups.

What the paper leaves open, and what is used here (README "Microaggregation"):

* views: the attributes in the order given, split into two halves (one view for a single
  attribute: no collaboration);
* maps: ``minisom`` SOMs, rectangular grid, Gaussian neighbourhood, PCA initialization (random
  for one attribute), ``sigma`` = half the longer side, learning rate 0.5, trained on
  ``min(max(10 n, 5000), 50000)`` records drawn with replacement in proportion to the tuples'
  counts (seeded);
* map size: Kohonen's heuristic as the SOM Toolbox states it, about 5 sqrt(n) units for n
  records, on a grid of round(sqrt(units)) rows; every view's map and the fine-tuning map have
  that size (the collaboration compares neighbourhoods of the same grid);
* collaboration: the horizontal collaboration of Grozavu and Bennani (the maps describe the
  same records in different views): each view's prototypes are recomputed in batch with the
  weights K_v(j, b_v(x)) + beta * sum_o (K_v(j, b_v(x)) - K_o(j, b_o(x)))^2, Gaussian
  neighbourhood K of width 1 on the grid, beta = 1; rounds repeat while the mean
  Davies-Bouldin index of the views' BMU partitions decreases, and a round that raises it is
  undone (the paper's stop rule), at most 10 rounds;
* pre-anonymization: each view's attributes replaced by its BMU's prototype (for C-TCA too:
  the paper's "linear mixture of models" is not specified);
* groups: the fine-tuning map's units; k-TCA keeps them (its k is the smallest unit), C-TCA
  moves the tuples of units with fewer than k records to the nearest units
  (:func:`~anonsql.algorithms.microaggregation.grouping.move_small_groups`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from anonsql.algorithms.microaggregation.grouping import move_small_groups, renumber
from anonsql.algorithms.microaggregation.measures import davies_bouldin

COLLABORATION_BETA = 1.0
COLLABORATION_SIGMA = 1.0
MAX_ROUNDS = 10


def map_units(records: int) -> int:
    """Kohonen's heuristic for the number of units: about 5 sqrt(n)."""
    return max(2, round(5 * math.sqrt(records)))


def grid_shape(units: int) -> tuple[int, int]:
    rows = max(1, round(math.sqrt(units)))
    return rows, math.ceil(units / rows)


def _iterations(records: int) -> int:
    return int(min(max(10 * records, 5000), 50000))


def train_som(
    data: np.ndarray, counts: np.ndarray, shape: tuple[int, int], seed: int
) -> np.ndarray:
    """A trained ``minisom`` map's prototypes, one row per unit (row-major grid order)."""
    from minisom import MiniSom  # the [ml] extra; imported here so the CLI stays fast

    rows, cols = shape
    som = MiniSom(
        rows,
        cols,
        data.shape[1],
        sigma=max(1.0, max(rows, cols) / 2),
        learning_rate=0.5,
        neighborhood_function="gaussian",
        random_seed=seed,
    )
    if data.shape[1] > 1 and len(data) > 1:
        som.pca_weights_init(data)
    else:
        som.random_weights_init(data)
    rng = np.random.default_rng(seed)
    n = _iterations(int(counts.sum()))
    sample = data[rng.choice(len(data), size=n, p=counts / counts.sum())]
    som.train(sample, n)  # in the drawn order: the draw is already random
    return som.get_weights().reshape(rows * cols, data.shape[1]).copy()


def bmu(data: np.ndarray, protos: np.ndarray, chunk: int = 20000) -> np.ndarray:
    """Index of each row's best-matching unit (nearest prototype; ties: lower index)."""
    out = np.empty(len(data), dtype=np.int64)
    p2 = (protos**2).sum(axis=1)
    for s in range(0, len(data), chunk):
        x = data[s : s + chunk]
        d = p2[None, :] - 2 * x @ protos.T
        out[s : s + chunk] = d.argmin(axis=1)
    return out


def _grid_kernel(shape: tuple[int, int]) -> np.ndarray:
    rows, cols = shape
    pos = np.array([(i, j) for i in range(rows) for j in range(cols)], dtype=np.float64)
    d2 = ((pos[:, None, :] - pos[None, :, :]) ** 2).sum(axis=2)
    return np.exp(-d2 / (2 * COLLABORATION_SIGMA**2))


def views_of(width: int) -> list[np.ndarray]:
    if width == 1:
        return [np.arange(1)]
    half = (width + 1) // 2
    return [np.arange(half), np.arange(half, width)]


def _mean_db(views: list[np.ndarray], bmus: list[np.ndarray], counts: np.ndarray) -> float:
    return float(np.mean([davies_bouldin(v, b, counts) for v, b in zip(views, bmus, strict=True)]))


def collaborate(
    views: list[np.ndarray], counts: np.ndarray, protos: list[np.ndarray], shape
) -> tuple[list[np.ndarray], list[float]]:
    """Horizontal topological collaboration rounds with the Davies-Bouldin stop rule; returns
    the accepted prototypes and the DB index after each accepted state (first: before)."""
    kernel = _grid_kernel(shape)
    bmus = [bmu(v, p) for v, p in zip(views, protos, strict=True)]
    history = [_mean_db(views, bmus, counts)]
    if len(views) < 2:
        return protos, history
    for _ in range(MAX_ROUNDS):
        new = []
        for a, x in enumerate(views):
            ka = kernel[:, bmus[a]]
            coef = ka.copy()
            for o in range(len(views)):
                if o != a:
                    coef += COLLABORATION_BETA * (ka - kernel[:, bmus[o]]) ** 2
            coef *= counts[None, :]
            den = coef.sum(axis=1)
            upd = (coef @ x) / np.where(den > 0, den, 1.0)[:, None]
            upd[den <= 0] = protos[a][den <= 0]
            new.append(upd)
        new_bmus = [bmu(v, p) for v, p in zip(views, new, strict=True)]
        db = _mean_db(views, new_bmus, counts)
        if not db < history[-1]:
            break  # the collaboration became negative (seed 001 §3.1)
        protos, bmus = new, new_bmus
        history.append(db)
    return protos, history


def tca(
    z: np.ndarray, counts: np.ndarray, k: int, constrained: bool, seed: int = 0
) -> tuple[np.ndarray, dict[str, Any]]:
    """Group ids of the standardized tuples ``z`` (k-TCA, or C-TCA with ``constrained``)."""
    records = int(counts.sum())
    units = map_units(records)
    shape = grid_shape(units)
    parts = views_of(z.shape[1])
    views = [np.ascontiguousarray(z[:, p]) for p in parts]
    protos = [train_som(v, counts, shape, seed + 1 + i) for i, v in enumerate(views)]
    protos, history = collaborate(views, counts, protos, shape)
    pre = np.empty_like(z)
    for p, v, w in zip(parts, views, protos, strict=True):
        pre[:, p] = w[bmu(v, w)]
    fine = train_som(pre, counts, shape, seed)
    units_of = bmu(pre, fine)
    natural = np.bincount(units_of, weights=counts, minlength=len(fine))
    info: dict[str, Any] = {
        "map_units": int(shape[0] * shape[1]),
        "map_shape": list(shape),
        "views": [len(p) for p in parts],
        "collaboration_rounds": len(history) - 1,
        "collaboration_db": history,
        "natural_k": int(natural[natural > 0].min()),
    }
    if constrained:
        units_of = move_small_groups(pre, counts, units_of, fine, k)
    groups, _ = renumber(units_of)
    return groups, info


__all__ = ["bmu", "collaborate", "grid_shape", "map_units", "tca", "train_som", "views_of"]

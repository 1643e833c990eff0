"""wLVQ2 (seed 001 Algorithm 1, after Bassiouny et al. [1]): LVQ2 with adaptive feature
weights, supervising a microaggregation's prototypes with a label (the "++" variants).

The paper's cost is R = ||Wx - m_j||^2 - ||Wx - m_i||^2 for x of class C_j, m_i the nearest
codeword (wrong class), m_j the second nearest (right class). Its prose says m_i "is moved
away from x" and m_j "moved closer", but its formulas write m_i + a(Wx - m_j) and
m_j - a(Wx - m_j), which do the opposite for m_j. Gradient descent on R gives the prose:

    m_i <- m_i - alpha (Wx - m_i)        (dR/dm_i = +2 (Wx - m_i))
    m_j <- m_j + alpha (Wx - m_j)        (dR/dm_j = -2 (Wx - m_j))
    w_k <- w_k - beta x_k (m_i^k - m_j^k)  (dR/dw_k = 2 x_k (m_i^k - m_j^k): the paper's rule)

and that is what is implemented (W diagonal, w_k clipped at 0). Choices where the paper is
silent (README "Microaggregation"):

* codewords: one per group of the microaggregation, of the group's majority label, started
  at the group's prototype (z-scores); they are kept in the data's space as p with
  m = W p, so a released prototype stays in the data's units: the updates above act on m at
  fixed W, i.e. p_i <- p_i - alpha (x - p_i), p_j <- p_j + alpha (x - p_j);
* window: LVQ2.1's symmetric window of relative width 0.3 around the midplane of m_i and
  m_j (Kohonen): x is inside when min(d_i / d_j, d_j / d_i) > (1 - 0.3) / (1 + 0.3);
* learning rates: alpha(t) = 0.05 (1 - t/T), beta(t) = 0.005 (1 - t/T), linearly decayed to
  zero as the paper recommends; T = min(10 n, 100,000) examples drawn with replacement in
  proportion to (tuple, label) record counts (seeded);
* then every tuple is coded by its nearest codeword (distance ||W(x - p)||), the tuples of
  codewords with fewer than k records move to the nearest remaining codeword (as C-TCA), and a
  group releases its codeword: "improves the found prototypes and then represents the
  micro-clusters using them" (§4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from anonsql.algorithms.microaggregation.grouping import move_small_groups, renumber
from anonsql.data.tuples import WeightedTuples

WINDOW = 0.3
ALPHA = 0.05
BETA = 0.005
EPOCHS = 10
MAX_STEPS = 100_000


@dataclass
class Codebook:
    """Codewords ``p`` (data space, z-scores), their classes and the feature weights."""

    p: np.ndarray
    classes: np.ndarray
    w: np.ndarray
    #: sum_k w_k^2 p_k^2 per codeword, kept between updates (most examples update nothing)
    _sq: np.ndarray | None = None

    def sq_distances(self, x: np.ndarray) -> np.ndarray:
        """||W(x - p)||^2 for every codeword: ||Wx||^2 - 2 (W^2 x) . p + ||Wp||^2."""
        w2 = self.w * self.w
        if self._sq is None:
            self._sq = (self.p * self.p) @ w2
        return np.maximum(self._sq - 2 * (self.p @ (x * w2)) + float((x * x) @ w2), 0.0)


def in_window(d_i: float, d_j: float, window: float = WINDOW) -> bool:
    if d_i <= 0 or d_j <= 0:
        return False
    s = (1 - window) / (1 + window)
    return min(d_i / d_j, d_j / d_i) > s


def step(
    book: Codebook, x: np.ndarray, y: int, alpha: float, beta: float, window: float = WINDOW
) -> bool:
    """One presentation of example ``x`` (z-scores) of class ``y``; True when it updated."""
    if len(book.p) < 2:
        return False
    d2 = book.sq_distances(x)
    two = np.argpartition(d2, 1)[:2]  # the two nearest in linear time
    i, j = (int(two[0]), int(two[1])) if d2[two[0]] <= d2[two[1]] else (int(two[1]), int(two[0]))
    if book.classes[i] == y or book.classes[j] != y:
        return False
    if not in_window(float(np.sqrt(d2[i])), float(np.sqrt(d2[j])), window):
        return False
    mi, mj = book.p[i] * book.w, book.p[j] * book.w  # m = W p
    book.p[i] -= alpha * (x - book.p[i])  # away from x
    book.p[j] += alpha * (x - book.p[j])  # closer to x
    book.w = np.maximum(book.w - beta * x * (mi - mj), 0.0)
    book._sq = None
    return True


def train(
    book: Codebook,
    z: np.ndarray,
    data: WeightedTuples,
    seed: int = 0,
    alpha: float = ALPHA,
    beta: float = BETA,
) -> int:
    """Run wLVQ2 over examples drawn from the labelled tuples; returns the updates made."""
    assert data.label_tuple is not None and data.label_count is not None
    steps = int(min(EPOCHS * data.records, MAX_STEPS))
    # the labelled tuples' arrays (from_records with labels)
    assert data.label_tuple is not None and data.label_code is not None
    assert data.label_count is not None
    rng = np.random.default_rng(seed)
    pick = rng.choice(
        len(data.label_tuple), size=steps, p=data.label_count / data.label_count.sum()
    )
    updates = 0
    for t, r in enumerate(pick):
        decay = 1.0 - t / steps
        updates += step(
            book, z[data.label_tuple[r]], int(data.label_code[r]), alpha * decay, beta * decay
        )
    return updates


def supervise(
    data: WeightedTuples,
    z: np.ndarray,
    groups: np.ndarray,
    prototypes_z: np.ndarray,
    k: int,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """The "++" variant of a grouping: (new group ids, each group's released codeword in
    z-scores, figures)."""
    g, n = renumber(groups)
    book = Codebook(
        np.asarray(prototypes_z, dtype=np.float64).copy(),
        data.majority(g, n),
        np.ones(z.shape[1]),
    )
    updates = train(book, z, data, seed)
    from anonsql.algorithms.microaggregation.ktca import bmu

    nearest = bmu(z * book.w, book.p * book.w)
    repaired = move_small_groups(z, data.counts, nearest, book.p, k, book.w)
    new, _ = renumber(repaired)
    used = np.unique(repaired)
    info = {
        "lvq_updates": updates,
        "lvq_codewords": n,
        "feature_weights": [float(x) for x in book.w],
        "lvq_moved_tuples": int((nearest != g).sum()),
    }
    return new, book.p[used], info


__all__ = ["Codebook", "in_window", "step", "supervise", "train"]

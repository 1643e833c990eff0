"""Attribute-oriented microaggregation by kernel density estimation (seed 001 §3.2).

Per attribute: a 1-D Gaussian KDE of the records; its local minima are the groups' borders,
its local maxima their prototypes, and each value is recoded to the maximum between its two
minima. The paper does not bound group sizes; here a group of fewer than k records merges
with the neighbour across its shallower border (the minimum of higher density: the valley
that separates least), keeping the higher maximum as prototype, until every group of the
attribute holds >= k records. Choices (README "Microaggregation"): Scott's bandwidth over the
records, h = sd * n^(-1/5) (scipy's ``gaussian_kde`` default); the density's derivative is
evaluated on 2,048 points over the attribute's range (exactly up to 20,000 distinct values,
else binned onto 8,192 points and convolved) and each sign change refined by a root finder
on the exact derivative (up to 20,000 distinct values); a value on a border joins the group
to its right.

Per-attribute groups of >= k records do not make the records k-anonymous jointly: the
combinations of groups are the classes, and the output's guard suppresses those below k.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

GRID = 2048
EXACT_LIMIT = 20_000
BINS = 8192


@dataclass
class AttributeGroups:
    """One attribute's groups: ``borders`` (sorted, len G - 1), ``prototypes`` (len G),
    ``density_at_borders`` (log density, up to a constant) and the KDE's raw extrema."""

    borders: np.ndarray
    prototypes: np.ndarray
    density_at_borders: np.ndarray
    minima: np.ndarray
    maxima: np.ndarray
    bandwidth: float

    def group_of(self, v: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.borders, v, side="right")


def scott_bandwidth(values: np.ndarray, counts: np.ndarray) -> float:
    n = counts.sum()
    mu = counts @ values / n
    sd = np.sqrt(counts @ (values - mu) ** 2 / n)
    return float(sd * n ** (-1 / 5)) if sd > 0 else 0.0


def _terms(x: np.ndarray, v: np.ndarray, c: np.ndarray, h: float, deriv: bool):
    """Per point x: log of the kernel sum's scale and the scaled sum, so that points far
    from every value (exp underflow) keep their sign and order."""
    scale = np.empty(len(x))
    total = np.empty(len(x))
    for s in range(0, len(x), 256):
        u = (x[s : s + 256, None] - v[None, :]) / h
        a = -0.5 * u * u
        top = a.max(axis=1)
        phi = np.exp(a - top[:, None])
        scale[s : s + 256] = top
        total[s : s + 256] = ((-u * phi) if deriv else phi) @ c
    return scale, total


def _slope_sign(x: np.ndarray, v: np.ndarray, c: np.ndarray, h: float) -> np.ndarray:
    """The KDE's derivative at x up to a positive factor (its sign, and its roots)."""
    return _terms(x, v, c, h, True)[1]


def _log_density(x: np.ndarray, v: np.ndarray, c: np.ndarray, h: float) -> np.ndarray:
    """log of the KDE up to a constant (compares densities, also in the tails)."""
    if len(v) > EXACT_LIMIT:
        with np.errstate(divide="ignore"):
            return np.log(_binned(np.asarray(x, dtype=np.float64), v, c, h, False))
    top, total = _terms(np.asarray(x, dtype=np.float64), v, c, h, False)
    return top + np.log(total)


def _binned(x: np.ndarray, v: np.ndarray, c: np.ndarray, h: float, deriv: bool):
    lo, hi = float(v.min()), float(v.max())
    edges = np.linspace(lo, hi, BINS + 1)
    mass = np.histogram(v, bins=edges, weights=c)[0]
    centers = (edges[:-1] + edges[1:]) / 2
    step = centers[1] - centers[0]
    half = min(int(np.ceil(6 * h / step)), BINS)
    t = np.arange(-half, half + 1) * step / h
    kern = (-t * np.exp(-0.5 * t * t)) if deriv else np.exp(-0.5 * t * t)
    dens = np.convolve(mass, kern, mode="same")
    return np.interp(x, centers, dens)


def extrema(values: np.ndarray, counts: np.ndarray, h: float) -> tuple[np.ndarray, np.ndarray]:
    """(minima, maxima) of the KDE of ``values`` weighted by ``counts``, each sorted."""
    v = np.asarray(values, dtype=np.float64)
    c = np.asarray(counts, dtype=np.float64)
    lo, hi = float(v.min()), float(v.max())
    if h <= 0 or lo == hi:
        return np.array([]), np.array([lo])
    grid = np.linspace(lo, hi, GRID)
    exact = len(v) <= EXACT_LIMIT
    d = _slope_sign(grid, v, c, h) if exact else _binned(grid, v, c, h, True)
    sign = np.sign(d)
    nz = np.flatnonzero(sign != 0)
    minima: list[float] = []
    maxima: list[float] = []
    for a, b in itertools.pairwise(nz):
        if sign[a] == sign[b]:
            continue
        if b > a + 1:  # a flat (underflowed) stretch: its middle
            x = float((grid[a + 1] + grid[b - 1]) / 2)
        elif exact:
            from scipy.optimize import brentq

            x = float(brentq(lambda t: _slope_sign(np.array([t]), v, c, h)[0], grid[a], grid[b]))
        else:
            x = float(grid[a] - d[a] * (grid[b] - grid[a]) / (d[b] - d[a]))
        (maxima if sign[a] > 0 else minima).append(x)
    # the density rises from the left end and falls to the right end of the data's range, so
    # maxima and minima alternate starting and ending with a maximum; an end where the
    # derivative has the other sign holds a maximum at the end itself
    if len(nz) and sign[nz[0]] < 0:
        maxima.insert(0, lo)
    if len(nz) and sign[nz[-1]] > 0:
        maxima.append(hi)
    if not maxima:
        maxima = [float(v[np.argmax(c)])]
    return np.array(minima), np.array(maxima)


def attribute_groups(
    values: np.ndarray, counts: np.ndarray, k: int, bandwidth: float | None = None
) -> AttributeGroups:
    """One attribute's KDE groups, merged until each holds >= k records."""
    v = np.asarray(values, dtype=np.float64)
    c = np.asarray(counts, dtype=np.float64)
    h = scott_bandwidth(v, c) if bandwidth is None else float(bandwidth)
    minima, maxima = extrema(v, c, h)
    borders = list(minima)
    protos = list(maxima)
    assert len(protos) == len(borders) + 1, (borders, protos)

    def dens(x: list[float]) -> list[float]:
        return list(_log_density(np.asarray(x), v, c, h)) if x and h > 0 else [0.0] * len(x)

    border_d = dens(borders)
    peak_d = dens(protos)
    while True:
        sizes = np.bincount(
            np.searchsorted(np.asarray(borders), v, side="right"),
            weights=c,
            minlength=len(protos),
        )
        small = [g for g in range(len(protos)) if sizes[g] < k]
        if not small or len(protos) == 1:
            break
        g = min(small, key=lambda i: (sizes[i], i))
        if g == 0:
            b = 0
        elif g == len(protos) - 1:
            b = g - 1
        else:  # the shallower valley: the border of higher density (ties: the left one)
            b = g - 1 if border_d[g - 1] >= border_d[g] else g
        keep = b if peak_d[b] >= peak_d[b + 1] else b + 1
        protos[b], peak_d[b] = protos[keep], peak_d[keep]
        del protos[b + 1], peak_d[b + 1], borders[b], border_d[b]
    return AttributeGroups(
        np.asarray(borders),
        np.asarray(protos),
        np.asarray(border_d),
        minima,
        maxima,
        h,
    )


def attribute_kde(values: np.ndarray, counts: np.ndarray, k: int):
    """Every attribute's groups: (per-tuple group ids u x m, per-tuple prototypes u x m,
    the per-attribute :class:`AttributeGroups`)."""
    u, m = values.shape
    nodes = np.empty((u, m), dtype=np.int64)
    released = np.empty((u, m))
    groups = []
    for j in range(m):
        distinct, inverse = np.unique(values[:, j], return_inverse=True)
        inverse = inverse.reshape(-1)
        cnt = np.bincount(inverse, weights=counts, minlength=len(distinct))
        ag = attribute_groups(distinct, cnt, k)
        gid = ag.group_of(distinct)[inverse]
        nodes[:, j] = gid
        released[:, j] = ag.prototypes[gid]
        groups.append(ag)
    return nodes, released, groups


__all__ = ["AttributeGroups", "attribute_groups", "attribute_kde", "extrema", "scott_bandwidth"]

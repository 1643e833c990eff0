"""Estimates about the population a table was sampled from, computed from its class sizes only.

Two families, both as ARX 3.9 computes them (``org.deidentifier.arx.risk`` and
``org.deidentifier.arx.criteria.KMap``):

* **population uniqueness**: the number of records unique in the population, estimated from
  the sample's class-size histogram (``c_i`` = number of classes of size i, ``u`` classes,
  ``n`` records, population size ``N``, sampling fraction ``f = n / N``):

  - *Zayatz* (L. Zayatz, Estimation of the percent of unique population elements on a
    microdata file using the sample, Census SRD Report 91/08, 1991; ARX ``ModelZayatz``):
    ``U = c_1 * P / f`` with the conditional uniqueness
    ``P = (c_1 / u) H(1; N, 1, n) / sum_i (c_i / u) H(1; N, i, n)``, where ``H(1; N, i, n)`` is
    the hypergeometric probability of one success in ``n`` draws from ``N`` items holding
    ``i`` successes (ARX evaluates it at the *sample* class sizes i);
  - *Pitman* (J. Pitman, Random discrete distributions invariant under size-biased
    permutation, 1996; Hoshino, Applying Pitman's sampling formula to microdata disclosure
    risk assessment, J. Official Statistics 17(4), 2001; ARX ``ModelPitman``): the maximum
    likelihood (theta, alpha) of Pitman's two-parameter sampling formula solve
    ``sum_{i=1}^{u-1} 1/(theta + i alpha) = sum_{i=1}^{n-1} 1/(theta + i)`` and
    ``sum_{i=1}^{u-1} i/(theta + i alpha) = sum_{k>1} c_k sum_{j=1}^{k-1} 1/(j - alpha)``
    (Newton-Raphson from Hoshino's moment start ``theta_0, alpha_0``), then
    ``U = Gamma(theta + 1) / Gamma(theta + alpha) * N^alpha``;
  - *SNB*, the shifted negative binomial (G. Chen, S. Keller-McNulty, Estimation of
    identification disclosure risk in microdata, J. Official Statistics 14(1), 1998; ARX
    ``ModelSNB``): an estimate K of the population's non-empty cells, then (a, b) solving ARX's
    two moment equations in ``c_1`` and ``c_2``, and ``U = K b^a``;
  - *Dankar's decision rule* (F. Dankar, K. El Emam, A. Neisa, T. Roffey, Estimating the
    re-identification risk of clinical data sets, BMC Med. Inform. Decis. Mak. 12:66, 2012;
    ARX ``RiskModelPopulationUniqueness.getNumUniqueTuplesDankar``): Pitman when f <= 0.1,
    else the smaller of Zayatz and SNB (Zayatz when SNB has no valid estimate).

  An estimate that is NaN or 0 is *not available* (ARX's ``isValid``) and reported as 0; the
  population-uniqueness model then fails a table with sample uniques (ARX's
  ``PopulationUniqueness.isFulfilled``).

  ARX solves with its own Newton-Raphson (accuracy 1e-6, 1,000 iterations per try, its 16
  default start values after the given one). Here the same equations are solved by scipy's
  ``root`` (MINPACK's hybrid method) from the same start values in the same order, accepting
  the first solution whose residuals are within 1e-6 and that meets the constraint (Pitman:
  theta >= 0). Where the equations have one admissible root this is ARX's estimate; ARX's
  time limits per try are not modelled.

* **k-map estimates** (K. El Emam, F. Dankar, Protecting privacy using k-anonymity, JAMIA
  15(5), 2008; ARX ``KMap`` with ``CellSizeEstimator``): without a population table, the
  population's class sizes are modelled as Poisson with ``lambda = f k`` (or zero-truncated
  Poisson); the derived k' is the smallest sample class size for which a class's population
  count reaches k with probability at least 1 - significance. k-map then is k'-anonymity of
  the sample (k' <= k, at most the sample size).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# scipy is imported inside the estimators that use it: a run without a population model
# (a plain k-anonymity run, the CLI's start) loads none of it

#: the estimators of population uniqueness (option ``estimator`` of ``max_population_uniqueness``)
UNIQUENESS_ESTIMATORS = ("pitman", "zayatz", "snb", "dankar")
#: the cell-size estimators of k-map without a population table (ARX ``CellSizeEstimator``)
KMAP_ESTIMATORS = ("poisson", "zero-truncated-poisson")

#: ARX's solver defaults (``ARXSolverConfiguration``)
ACCURACY = 1e-6
_START_GRID = [(a * 0.33, b * 0.33) for a in range(4) for b in range(4)]


def check_population(population_size: object, sampling_fraction: object, missing: str) -> None:
    """The population the estimated models need: exactly one of N (a whole number >= 1) and
    the sampling fraction f in (0, 1]; ``missing`` is the error when neither or both are given."""
    from anonsql.errors import InputError

    if (population_size is None) == (sampling_fraction is None):
        raise InputError(missing)
    if population_size is not None and (
        isinstance(population_size, bool)
        or not isinstance(population_size, (int, np.integer))
        or population_size < 1
    ):
        raise InputError(f"population_size must be a whole number >= 1: {population_size!r}")
    if sampling_fraction is not None and not 0 < sampling_fraction <= 1:  # type: ignore[operator]
        raise InputError(f"sampling_fraction must be in (0, 1], got {sampling_fraction!r}")


def population_size_of(sample_size: int, sampling_fraction: float) -> int:
    """ARX ``ARXPopulationModel(sampleSize, samplingFraction)``: round(n / f)."""
    return round(sample_size / sampling_fraction)


@dataclass(frozen=True)
class SizeHistogram:
    """``sizes[i]`` classes hold ``counts[i]`` each... as ARX's ``RiskModelHistogram``:
    distinct class sizes ascending and how many classes have each."""

    sizes: np.ndarray  # distinct class sizes, ascending
    counts: np.ndarray  # number of classes of that size

    @classmethod
    def of(cls, class_sizes: np.ndarray) -> SizeHistogram:
        s = np.asarray(class_sizes, dtype=np.int64)
        s = s[s > 0]
        sizes, counts = np.unique(s, return_counts=True)
        return cls(sizes.astype(np.float64), counts.astype(np.float64))

    @property
    def classes(self) -> float:
        return float(self.counts.sum())

    @property
    def records(self) -> float:
        return float((self.sizes * self.counts).sum())

    def of_size(self, size: int) -> float:
        hit = self.counts[self.sizes == size]
        return float(hit[0]) if len(hit) else 0.0


def _valid(x: float) -> bool:
    return not math.isnan(x) and x != 0.0


def _solve(fun, starts, ok) -> tuple[float, float] | None:
    from scipy import optimize

    for x0 in starts:
        try:
            with np.errstate(all="ignore"):
                sol = optimize.root(fun, np.asarray(x0, dtype=np.float64), method="hybr")
                x = sol.x
                res = np.asarray(fun(x))
        except Exception:  # MINPACK rejects NaN residuals: try the next start
            continue
        if np.all(np.isfinite(x)) and np.all(np.abs(res) <= ACCURACY) and ok(x):
            return float(x[0]), float(x[1])
    return None


def zayatz(h: SizeHistogram, population: float) -> float:
    """Zayatz's estimate of the population uniques (ARX ``ModelZayatz``)."""
    from scipy import stats

    c1 = h.of_size(1)
    if c1 == 0:
        return 0.0
    n, u = h.records, h.classes
    big_n, sample = int(min(population, 2**31 - 1)), int(min(n, 2**31 - 1))
    temp = float(
        ((h.counts / u) * stats.hypergeom.pmf(1, big_n, h.sizes.astype(np.int64), sample)).sum()
    )
    p1 = float(stats.hypergeom.pmf(1, big_n, 1, sample))
    uniqueness = (c1 / u) * p1 / temp
    return c1 * uniqueness / (n / population)


def pitman(h: SizeHistogram, population: float) -> float:
    """Pitman's estimate of the population uniques (ARX ``ModelPitman``); NaN when the
    likelihood equations have no admissible solution."""
    from scipy import special

    c1, c2 = h.of_size(1), h.of_size(2)
    if c1 == 0:
        return 0.0
    u, n = h.classes, h.records
    c2 = c2 if c2 != 0 else 1.0  # ARX: overestimate
    c = c1 * (c1 - 1) / c2
    with np.errstate(all="ignore"):  # Java's division: infinite or NaN, not an error
        t0 = np.float64(n * u * c - c1 * (n - 1) * (2 * u + c)) / np.float64(
            2 * c1 * u + c1 * c - n * c
        )
        a0 = (t0 * (c1 - n) + (n - 1) * c1) / (n * u)
    big = h.sizes > 1
    ks, cs = h.sizes[big], h.counts[big]

    def fun(x: np.ndarray) -> np.ndarray:
        t, a = float(x[0]), float(x[1])
        o1 = (special.digamma(u + t / a) - special.digamma(t / a + 1)) / a
        o3 = (-t * special.digamma(u + t / a) + a * (u - 1) + t * special.digamma(t / a + 1)) / (
            a * a
        )
        o2 = special.digamma(n + t) - special.digamma(t + 1)
        o4 = float((cs * (special.digamma(ks - a) - special.digamma(1 - a))).sum())
        return np.array([o1 - o2, o3 - o4])

    first = [(float(t0), float(a0))] if np.isfinite(t0) and np.isfinite(a0) else []
    root = _solve(fun, [*first, *_START_GRID], lambda x: x[0] >= 0)
    if root is None:
        return math.nan
    t, a = root
    if a == 0:
        return math.nan
    with np.errstate(all="ignore"):
        v = float(np.exp(special.gammaln(t + 1) - special.gammaln(t + a) + a * np.log(population)))
    return v if 0 <= v <= population else math.nan


def snb(h: SizeHistogram, population: float) -> float:
    """The shifted negative binomial estimate of the population uniques (Chen and
    Keller-McNulty; ARX ``ModelSNB``, its equations as ARX writes them)."""
    c1, c2 = h.of_size(1), h.of_size(2)
    if c1 == 0:
        return 0.0
    f = h.records / population
    s, cnt = h.sizes, h.counts
    with np.errstate(all="ignore"):
        var1 = float((s * f * f * (1 - f * f) ** (s - 1) * cnt).sum())
        var2 = float(((1 - f) ** s * cnt * (1 + f) ** s - 1).sum())
        var3 = float(((1 - f) ** s * cnt).sum())
        var4 = float((s * f * (1 - f) ** (s - 1) * cnt).sum())
        k = h.classes + c1 * (var1 / var2) * (var3 / var4) * (var3 / var4)

    def fun(x: np.ndarray) -> np.ndarray:
        a, b = np.float64(x[0]), np.float64(x[1])  # Java's pow: NaN, not complex
        d = (1 - f) * (1 - b)
        r0 = k * f * (b / (1 - d)) ** a * (a * d / (1 - d) + 1) - c1
        r1 = k * a * b**a * (f * f) * (1 - b) / 2 * (1 - d) ** (a + 2) * (2 - (1 - a) * d) - c2
        return np.array([r0, r1])

    root = _solve(fun, _START_GRID, lambda x: True)
    if root is None or not math.isfinite(k):
        return math.nan
    a, b = root
    with np.errstate(all="ignore"):
        return float(k * b**a)


@dataclass(frozen=True)
class Uniqueness:
    """Estimated population uniques (records) and their share of the population, with the
    estimator that produced them (for Dankar: the one its rule chose)."""

    estimator: str
    uniques: float
    share: float
    chosen: str | None = None


def population_uniqueness(
    class_sizes: np.ndarray, population: float, estimator: str = "dankar", fallback: bool = True
) -> Uniqueness:
    """ARX ``RiskModelPopulationUniqueness``: ``estimator``'s estimate of the population's
    unique records, 0 where it is not available. ``fallback`` is Dankar's use of Zayatz when
    Pitman fails at f <= 0.1 (the ``PopulationUniqueness`` criterion does not fall back,
    reports do)."""
    h = SizeHistogram.of(class_sizes)
    if estimator not in UNIQUENESS_ESTIMATORS:
        raise ValueError(f"unknown estimator {estimator!r}; use {UNIQUENESS_ESTIMATORS}")
    if h.of_size(1) == 0 or population <= 0:
        return Uniqueness(estimator, 0.0, 0.0, "dankar" if estimator == "dankar" else None)
    chosen = None
    if estimator == "zayatz":
        value = zayatz(h, population)
    elif estimator == "pitman":
        value = pitman(h, population)
    elif estimator == "snb":
        value = snb(h, population)
    else:
        value, chosen = math.nan, None
        if h.records / population <= 0.1:
            p = pitman(h, population)
            if _valid(p):
                value, chosen = p, "pitman"
            elif fallback:
                value, chosen = zayatz(h, population), "zayatz"
        else:
            s, z = snb(h, population), zayatz(h, population)
            if _valid(s):
                value, chosen = (z, "zayatz") if z < s else (s, "snb")
            else:
                value, chosen = z, "zayatz"
    value = value if _valid(value) else 0.0
    return Uniqueness(estimator, value, value / population, chosen)


def uniqueness_report(
    class_sizes: np.ndarray,
    population_size: float | None = None,
    sampling_fraction: float | None = None,
    rows: int | None = None,
) -> dict[str, float | str | None]:
    """What ``check`` and reports show: the sample uniqueness of the released classes and
    each estimator's population uniqueness (share of the population; Dankar with the estimator
    its rule chose, falling back to Zayatz as ARX's risk analysis does). N is
    ``population_size``, or round(rows / f) (``rows``: the table's records, default the
    released ones)."""
    sizes = np.asarray(class_sizes, dtype=np.float64)
    n = float(sizes.sum())
    out: dict[str, float | str | None] = {
        "sample_uniqueness": float((sizes == 1).sum()) / n if n else 0.0
    }
    if population_size is None and sampling_fraction is None:
        return out
    if population_size is not None:
        big_n = float(population_size)
    else:
        assert sampling_fraction is not None  # one of the two, checked above
        big_n = float(population_size_of(rows if rows is not None else int(n), sampling_fraction))
    out["population_size"] = big_n
    for e in UNIQUENESS_ESTIMATORS:
        u = population_uniqueness(sizes, big_n, e)
        out[f"population_uniqueness_{e}"] = float(u.share)
        if e == "dankar":
            out["dankar_estimator"] = u.chosen
    return out


def _poisson_cdfs(counters: np.ndarray, lam: float) -> np.ndarray:
    """P(X <= c) for X ~ Poisson(lam) at each counter c (the regularized gamma function, as
    Apache Commons Math's ``PoissonDistribution.cumulativeProbability`` computes it); one
    call of scipy's ufunc for a block of counters gives each value a scalar call would."""
    from scipy import special

    return special.pdtr(counters, lam)


def _poisson_pmf(c: int, lam: float) -> float:
    return math.exp(c * math.log(lam) - lam - math.lgamma(c + 1)) if lam > 0 else float(c == 0)


#: counters whose probabilities are computed at once: ARX's loops stop at the first counter
#: whose probability reaches the threshold, usually within the first few
_BLOCK = 64


def kmap_derived_k(
    k: int, sample_size: int, population: float, significance: float, estimator: str
) -> tuple[int, float]:
    """ARX ``KMap.initialize``: the derived k' (k-map estimated as k'-anonymity of the sample)
    and the type-I error ``1 - P``; lambda = (n / N) k. ``poisson``: ARX's loop over
    ``P(X <= counter)`` returning counter + 1; ``zero-truncated-poisson``: its loop summing
    ``P(X = counter) / (1 - P(X = 0))`` from counter 1, returning counter. Both stop once the
    counter reaches k (certainty); k' is then capped at the sample size and at k.

    The Poisson loop's probabilities are computed a block of counters at a time (the same
    values, in one ufunc call each): a view's breakpoints ask for k' at some ten thousand
    sample sizes, which took 21 s of CPU for k = 1,000 one scalar call at a time (3 s in
    blocks)."""
    if estimator not in KMAP_ESTIMATORS:
        raise ValueError(f"unknown estimator {estimator!r}; use {KMAP_ESTIMATORS}")
    lam = sample_size / population * k
    threshold = 1.0 - significance
    value = 0.0
    if estimator == "poisson":
        counter = 0
        # ARX's loop: while value < threshold { value = P(X <= counter); counter++; if
        # counter >= k { value = 1; break } }. It stops at the first counter c with
        # P(X <= c) >= threshold or c + 1 >= k, leaving counter = c + 1
        if value < threshold:
            start = 0
            while True:
                block = np.arange(start, start + _BLOCK, dtype=np.int64)
                cdfs = _poisson_cdfs(block, lam)
                stop = (cdfs >= threshold) | (block + 1 >= k)
                if stop.any():
                    first = int(np.argmax(stop))
                    c = start + first
                    counter = c + 1
                    value = 1.0 if counter >= k else float(cdfs[first])
                    break
                start += _BLOCK
        derived = counter + 1
    else:
        v2 = 1.0 - _poisson_pmf(0, lam)
        counter = 1
        while value < threshold:
            value += _poisson_pmf(counter, lam) / v2
            counter += 1
            if counter >= k:
                value = 1.0
                break
        derived = counter
    derived = min(derived, sample_size)
    return min(k, derived), 1.0 - value


def kmap_breakpoints(
    k: int, population: float, significance: float, estimator: str
) -> list[tuple[int, int]]:
    """The derived k' as a step function of the sample size n <= N: ``(n_max, k')`` pairs,
    k' holding for every sample size up to n_max (after the previous pair's), ascending;
    sample sizes above the last n_max get k. k' does not decrease with n (lambda = n k / N
    grows, so each Poisson probability the loops sum shrinks, and the cap n grows), so each
    n_max is found by bisection. What a guarded view evaluates at every read, with the
    table's size at that moment."""
    top = max(1, int(population))
    steps: list[tuple[int, int]] = []
    n = 1
    while n <= top:
        d = kmap_derived_k(k, n, population, significance, estimator)[0]
        if d >= k:
            break
        lo, hi = n, top  # largest m with k'(m) <= d
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if kmap_derived_k(k, mid, population, significance, estimator)[0] <= d:
                lo = mid
            else:
                hi = mid - 1
        steps.append((lo, d))
        n = lo + 1
    return steps


__all__ = [
    "KMAP_ESTIMATORS",
    "UNIQUENESS_ESTIMATORS",
    "SizeHistogram",
    "Uniqueness",
    "kmap_breakpoints",
    "kmap_derived_k",
    "pitman",
    "population_size_of",
    "population_uniqueness",
    "snb",
    "uniqueness_report",
    "zayatz",
]

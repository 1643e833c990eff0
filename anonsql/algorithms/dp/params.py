"""SafePub's parameters: the sampling probability beta and the class-size threshold k that
make "random sampling, then strongly-safe k-anonymization" (epsilon_anon, delta)-differentially
private (Bild, Kuhn, Prasser, "SafePub: A Truthful Data Anonymization Algorithm With Strong
Privacy Guarantees", PoPETs 2018(1), section 3, after Li, Qardaji, Su, "On Sampling,
Anonymization, and Differential Privacy", ASIACCS 2012, Theorem 5).

The theorem: an algorithm that draws every record with probability beta and then suppresses
every equivalence class of fewer than k records (the generalization being chosen by a
differentially private mechanism, or fixed beforehand) satisfies (epsilon, delta)-DP for

    (1)  epsilon >= -ln(1 - beta)                        so beta = 1 - e^(-epsilon)
    (2)  delta = d(k, beta, epsilon) = max_{n >= n_m} a_n
    (3)  a_n = sum_{j > gamma n}^{n} f(j; n, beta)       f: the binomial probability mass
    (4)  n_m = ceil(k / gamma - 1)
    (5)  gamma = (e^epsilon - 1 + beta) / e^epsilon

The maximum over the infinitely many n >= n_m is found with the Chernoff bound of the tail,
(6) a_n <= c_n = exp(-n (gamma ln(gamma / beta) - (gamma - beta))), which falls with n: once
the largest a_n seen is at least c_n, no later a_n can exceed it (SafePub section 3; ARX's
``ParameterCalculation`` computes the same). k is the smallest whole number whose bound d(k)
is below the delta asked for; as ARX, the release suppresses classes below k = k_min + 1
(:func:`safepub_parameters`).

Every rounding leans to more privacy: beta is rounded down onto the grid of 2^-52 that the
engine's sampler compares against (:mod:`anonsql.algorithms.dp.sampling`), so the beta that
is used is exactly the one the bound is computed for and (1) still holds; floor(gamma n) is
taken of a lower bound of gamma n (one more term in the tail); d(k) must stay below delta by
a relative margin that covers the binomial tail's floating-point error; the search over n
goes on while the bound is within that margin of the maximum.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from anonsql.errors import InputError

#: the sampler draws 52 uniform bits per record: beta is a multiple of 2^-52
BETA_BITS = 52
#: relative margin for floating-point error in the binomial tails (scipy's regularized
#: incomplete beta is accurate to about 1e-14 relative; this is far above it)
REL_MARGIN = 1e-9
#: a release whose k would exceed this is refused (epsilon far too small for delta)
MAX_K = 1_000_000


@dataclass(frozen=True)
class SafePubParameters:
    """What a release spends and derives: epsilon = epsilon_anon + epsilon_search."""

    epsilon: float
    delta: float
    epsilon_anon: float
    epsilon_search: float
    beta: float
    #: the class-size threshold used: k_min + 1, as ARX
    k: int
    #: the smallest k whose bound (2) is below delta (the theorem's)
    k_min: int
    #: the bound d(k_min) of (2), below delta (d falls with k: it bounds d(k) too)
    delta_k: float
    #: the sampler's threshold: a record is drawn when its 52 random bits are below it
    threshold: int

    def to_dict(self) -> dict[str, float | int]:
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "epsilon_anon": self.epsilon_anon,
            "epsilon_search": self.epsilon_search,
            "beta": self.beta,
            "k": self.k,
            "k_min": self.k_min,
            "delta_k": self.delta_k,
        }


def sampling_threshold(epsilon_anon: float) -> int:
    """Eq. (1) on the sampler's grid: the largest T with T / 2^52 <= 1 - e^(-epsilon_anon),
    less one step for the error of the exponential (-expm1 is within one ulp)."""
    beta = -math.expm1(-epsilon_anon)
    return max(math.floor(beta * 2**BETA_BITS) - 1, 0)


def beta_of(threshold: int) -> float:
    """The exact sampling probability of a threshold (a multiple of 2^-52, so exact)."""
    return float(Fraction(threshold, 2**BETA_BITS))


def gamma_of(epsilon: float, beta: float) -> float:
    """Eq. (5)."""
    power = math.exp(epsilon)
    return (power - 1.0 + beta) / power


def n_min(k: int, gamma: float) -> int:
    """Eq. (4), n_m = ceil(k / gamma - 1), of a lower bound of k / gamma - 1 (ARX takes the
    lower bound too: a smaller n_m adds terms to the maximum of (2))."""
    x = k / gamma - 1.0
    return max(math.ceil(x - abs(x) * REL_MARGIN), 0)


class _Tails:
    """a_n of Eq. (3) and c_n of Eq. (6), computed once per n and kept for every k."""

    def __init__(self, epsilon: float, beta: float) -> None:
        self.beta = beta
        self.gamma = gamma_of(epsilon, beta)
        g, b = self.gamma, beta
        self.rate = g * math.log(g / b) - (g - b)  # the exponent's factor in (6)
        self.a = np.empty(0)

    def a_n(self, n: int) -> float:
        if n >= len(self.a):
            size = max(2 * len(self.a), n + 1, 1024)
            ns = np.arange(size, dtype=np.float64)
            # floor of a lower bound of gamma n: one more term where gamma n is (nearly) whole
            lo = np.floor(ns * self.gamma * (1.0 - REL_MARGIN))
            # imported here: scipy loads only for a DP run (a k-anonymity run never needs it)
            from scipy.stats import binom

            self.a = binom.sf(lo, ns, self.beta)  # P[J > lo] = sum_{j >= lo + 1} f(j; n, b)
        return float(self.a[n])

    def c_n(self, n: int) -> float:
        return math.exp(-n * self.rate)


def delta_bound(k: int, epsilon: float, beta: float, tails: _Tails | None = None) -> float:
    """d(k, beta, epsilon) of Eq. (2): the maximum of a_n over n >= n_m, searched until the
    Chernoff bound c_n (6) shows that no later n can give more."""
    t = tails or _Tails(epsilon, beta)
    n = n_min(k, t.gamma)
    best = -1.0
    while True:
        best = max(best, t.a_n(n))
        # go on while the bound is not clearly below the maximum found
        if best * (1.0 + REL_MARGIN) >= t.c_n(n) and best >= 0.0:
            return best
        n += 1


def safepub_k(epsilon_anon: float, delta: float, beta: float) -> tuple[int, float]:
    """The smallest k whose bound d(k, beta, epsilon_anon) (2) is below ``delta`` (with the
    relative margin), and that bound. d(k) falls as k grows (n_m grows, the maximum is over
    fewer n)."""
    tails = _Tails(epsilon_anon, beta)
    k = 1
    while k <= MAX_K:
        d = delta_bound(k, epsilon_anon, beta, tails)
        if d * (1.0 + REL_MARGIN) < delta:
            return k, d
        k += 1
    raise InputError(
        f"no k up to {MAX_K:,} reaches delta = {delta:g} with epsilon = {epsilon_anon:g} for "
        f"the sampling: give a larger epsilon or delta"
    )


def check_budget_values(epsilon: float, delta: float, share: float) -> None:
    """ARX's checks (``ARXAnonymizer.checkBeforeEncoding``): epsilon > 0, 0 < delta < 1, and
    a search budget below the whole (here a share in [0, 1))."""
    if not (isinstance(epsilon, int | float) and math.isfinite(epsilon) and epsilon > 0):
        raise InputError(f"dp_epsilon must be a positive number, not {epsilon!r}")
    if not (isinstance(delta, int | float) and math.isfinite(delta) and 0 < delta < 1):
        raise InputError(f"dp_delta must be in (0, 1), not {delta!r}")
    if not (isinstance(share, int | float) and math.isfinite(share) and 0 <= share < 1):
        raise InputError(
            f"dp_search_budget is the share of epsilon spent on choosing the generalization, "
            f"in [0, 1), not {share!r}"
        )


def safepub_parameters(epsilon: float, delta: float, search_share: float) -> SafePubParameters:
    """Split epsilon into the search's share and the anonymization's rest (SafePub section
    4: the whole is (epsilon_anon + epsilon_search, delta)-DP by sequential composition), and
    derive beta (1) and k (2)-(6) from epsilon_anon."""
    check_budget_values(epsilon, delta, search_share)
    epsilon_search = float(epsilon) * float(search_share)
    epsilon_anon = float(epsilon) - epsilon_search
    threshold = sampling_threshold(epsilon_anon)
    if threshold <= 0:
        raise InputError(f"epsilon = {epsilon:g} is too small to draw any sample")
    beta = beta_of(threshold)
    k_min, d = safepub_k(epsilon_anon, float(delta), beta)
    # ARX's ParameterCalculation.calculateK returns one more than the smallest k whose bound
    # holds (its loop increments k after computing the bound that ends it). anonsql uses the
    # same k: classes of k_min records are suppressed too, which only adds privacy, and ARX's
    # own test cases are reproduced exactly (tests/algorithms/dp/test_dp_arx.py)
    return SafePubParameters(
        float(epsilon),
        float(delta),
        epsilon_anon,
        epsilon_search,
        beta,
        k_min + 1,
        k_min,
        d,
        threshold,
    )


__all__ = [
    "SafePubParameters",
    "beta_of",
    "check_budget_values",
    "delta_bound",
    "gamma_of",
    "n_min",
    "safepub_k",
    "safepub_parameters",
    "sampling_threshold",
]

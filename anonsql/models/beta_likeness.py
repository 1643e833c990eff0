"""beta-likeness (J. Cao, P. Karras: Publishing Microdata with a Robust Privacy Guarantee,
PVLDB 5(11), 2012), basic and enhanced, as ARX 3.9 implements them (``BasicBLikeness``,
``EnhancedBLikeness``).

With q the sensitive attribute's distribution in the whole table and p its distribution in a
class, the *relative distance* of value s is ``D(s) = (p(s) - q(s)) / q(s)``; only gains in
confidence (p > q) are bounded:

* basic beta-likeness (Cao and Karras, Definition 2): ``D(s) <= beta`` for every s;
* enhanced beta-likeness (Definition 4): ``D(s) <= min(beta, -ln q(s))`` for every s (natural
  logarithm), which tightens the bound for frequent values.

ARX tests the values present in the class; an absent value has D = -1 and passes anyway, so
that is every value. Both comparisons are inclusive (ARX fails a class when ``D > bound``) and
allow :data:`~anonsql.models.base.EPS` of rounding. beta must be positive (ARX refuses
beta <= 0).

Monotonicity (both variants). Without suppression: monotone. Each test is a bound on p(s)
(``p(s) <= q(s) (1 + bound(s))``), linear in p, and a union's distribution is the
size-weighted mixture of its classes', so a union of passing classes passes (ARX: monotonic
with generalization). Not monotone with suppression: with q = (1/2, 1/2) and beta = 0.27, a
class {5 a, 5 b} (D = 0) passes, {4 a} (D(a) = 1) fails, and their union {9 a, 5 b}
(D(a) = 2/7) fails: a node with both classes is anonymous for a limit of 4 records, its
generalization merging them suppresses 14.
"""

from __future__ import annotations

import math

import numpy as np

from anonsql.errors import InputError
from anonsql.models.base import EPS, ClassStats, PrivacyModel


def _check_beta(beta: float) -> float:
    ok = isinstance(beta, (int, float, np.integer, np.floating)) and not isinstance(beta, bool)
    if not ok or not math.isfinite(beta) or beta <= 0:
        raise InputError(f"beta must be a positive number, got {beta!r}")
    return float(beta)


def relative_distances(stats: ClassStats) -> tuple[np.ndarray, np.ndarray]:
    """``(p - q) / q`` for every sparse (class, value) pair, and q for the pair's value."""
    # read by the models of the sensitive attribute, after require_sensitive
    assert stats.overall is not None and stats.pair_value is not None
    q = stats.overall[stats.pair_value]
    return (stats.shares() - q) / q, q


def _class_max(stats: ClassStats, per_pair: np.ndarray) -> np.ndarray:
    out = np.full(stats.classes, -np.inf)
    assert stats.pair_class is not None  # per_pair has one entry per pair
    np.maximum.at(out, stats.pair_class, per_pair)
    return out


class _BetaLikeness(PrivacyModel):
    reads_distribution = True
    needs_sensitive = True
    monotone_without_suppression = True  # a linear bound on p per value (module docstring)
    monotone_with_suppression = False  # a merge with a failing class fails (module docstring)

    def __init__(self, beta: float) -> None:
        self.beta = _check_beta(beta)

    def bounds(self, q: np.ndarray) -> np.ndarray:
        """The bound on the relative distance of values with table shares q."""
        raise NotImplementedError

    def share_caps(self, overall: np.ndarray) -> np.ndarray:
        """Per sensitive value s: the largest share ``q(s) (1 + bound(s) + EPS)`` a passing
        class can hold, linear in the class distribution: what
        :meth:`anonsql.models.requirements.Requirements.screen` bounds suppression with."""
        with np.errstate(divide="ignore"):
            return overall * (1 + self.bounds(overall) + EPS)

    def passes(self, values: np.ndarray) -> np.ndarray:
        return values <= self.beta + EPS

    def sql_pass(self) -> str:
        return f"value <= {self.beta + EPS!r}"


class BasicBetaLikeness(_BetaLikeness):
    """Basic beta-likeness (Cao and Karras, Definition 2; ARX ``BasicBLikeness``). Value: the
    class's largest relative distance ``max_s (p(s) - q(s)) / q(s)``; passes when
    ``value <= beta``."""

    name = "basic-beta-likeness"

    def bounds(self, q: np.ndarray) -> np.ndarray:
        return np.full(q.shape, self.beta)

    def class_values(self, stats: ClassStats) -> np.ndarray:
        stats.require_sensitive(self.name)
        d, _ = relative_distances(stats)
        return _class_max(stats, d)

    def sql_template(self) -> tuple[str, dict]:
        return "models/basic_beta_likeness", {}

    def describe(self) -> str:
        return f"basic {self.beta:g}-likeness"


class EnhancedBetaLikeness(_BetaLikeness):
    """Enhanced beta-likeness (Cao and Karras, Definition 4; ARX ``EnhancedBLikeness``):
    ``D(s) <= min(beta, -ln q(s))`` for every value s. Value: the smallest beta for which the
    class passes, i.e. its largest relative distance, or infinity when some value's distance
    exceeds ``-ln q(s)``, the bound that no beta lifts; passes when ``value <= beta``."""

    name = "enhanced-beta-likeness"

    def bounds(self, q: np.ndarray) -> np.ndarray:
        return np.minimum(self.beta, -np.log(q))

    def class_values(self, stats: ClassStats) -> np.ndarray:
        stats.require_sensitive(self.name)
        d, q = relative_distances(stats)
        largest = _class_max(stats, d)
        over = np.zeros(stats.classes, dtype=bool)
        assert stats.pair_class is not None  # required above
        np.logical_or.at(over, stats.pair_class, d + np.log(q) > EPS)
        return np.where(over, np.inf, largest)

    def sql_template(self) -> tuple[str, dict]:
        return "models/enhanced_beta_likeness", {"eps": EPS}

    def describe(self) -> str:
        return f"enhanced {self.beta:g}-likeness"


BETA_VARIANTS: dict[str, type[_BetaLikeness]] = {
    "basic": BasicBetaLikeness,
    "enhanced": EnhancedBetaLikeness,
}

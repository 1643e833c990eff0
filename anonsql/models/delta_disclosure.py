"""delta-disclosure privacy (J. Brickell, V. Shmatikov: The Cost of Privacy: Destruction of
Data-Mining Utility in Anonymized Data Publishing, KDD 2008), as ARX 3.9 implements it
(``DDisclosurePrivacy``).

With q the sensitive attribute's distribution in the whole table and p its distribution in a
class, the class is delta-disclosure private when ``|log2(p(s) / q(s))| < delta`` for every
sensitive value s *present in the class*. The paper's test runs over every value, and a value
missing from a class (log 0) would fail it; ARX skips the values a class does not hold, takes
the logarithm to base 2, and fails a class when ``|log2(p/q)| >= delta`` (strict test). So does
anonsql; the strict comparison keeps :data:`~anonsql.models.base.EPS` on the safe side (a
value within EPS of delta fails). delta must be positive (no class passes delta <= 0).

Value: ``max_s |log2(p(s) / q(s))|`` over the values in the class; passes when
``value < delta``.

Monotonicity. Not monotone without suppression (ARX: not monotonic with generalization
either): because absent values are not tested, a union can hold a value at a share its
classes never had. With q = (1/2, 1/2) and delta = 1.2, classes {a} (|log2 2| = 1) and
{a, a, a, b} (|log2 0.5| = 1) pass; their union {4 a, b} has p(b) = 1/5 and
|log2 0.4| = 1.32, and fails. Not monotone with suppression: with delta = 0.45 a class
{5 a, 5 b} passes, {4 a} fails, and their union {9 a, 5 b} (|log2(5/7)| = 0.49) fails.

What the search may still use (:meth:`anonsql.models.requirements.Requirements.screen`): a
passing class holds every value s below ``q(s) 2^delta`` (absent values at 0), a bound linear
in the class distribution, so a class holding more keeps a share of suppressed records in
every specialization (:meth:`DeltaDisclosure.share_caps`).
"""

from __future__ import annotations

import math

import numpy as np

from anonsql.errors import InputError
from anonsql.models.base import EPS, ClassStats, PrivacyModel

_LN2 = math.log(2)


class DeltaDisclosure(PrivacyModel):
    """delta-disclosure privacy (Brickell and Shmatikov; ARX ``DDisclosurePrivacy``): every
    value present in a class has ``|log2(p / q)| < delta``."""

    reads_distribution = True

    name = "delta-disclosure"
    needs_sensitive = True
    monotone_without_suppression = False  # absent values are not tested (module docstring)
    monotone_with_suppression = False

    def __init__(self, delta: float) -> None:
        ok = isinstance(delta, (int, float, np.integer, np.floating)) and not isinstance(
            delta, bool
        )
        if not ok or not math.isfinite(delta) or delta <= 0:
            raise InputError(f"delta must be a positive number, got {delta!r}")
        self.delta = float(delta)

    def _ratios(self, stats: ClassStats) -> np.ndarray:
        stats.require_sensitive(self.name)
        assert stats.overall is not None and stats.pair_value is not None  # required above
        return stats.shares() / stats.overall[stats.pair_value]

    def class_values(self, stats: ClassStats) -> np.ndarray:
        out = np.zeros(stats.classes)
        ratios = self._ratios(stats)  # requires the sensitive attribute
        assert stats.pair_class is not None
        # ARX's log2: ln(x) / ln(2)
        np.maximum.at(out, stats.pair_class, np.abs(np.log(ratios) / _LN2))
        return out

    def share_caps(self, overall: np.ndarray) -> np.ndarray:
        """Per sensitive value s: a passing class holds it below ``q(s) 2^(delta - EPS)``
        (absent, at 0): what :meth:`anonsql.models.requirements.Requirements.screen` bounds
        suppression with."""
        # p / q <= 1 / q, and 1 / q < 2^1000 for any share a float holds: past that exponent
        # the bound holds every value, and 2.0 ** delta would overflow (delta = 1100)
        return overall * 2.0 ** min(self.delta - EPS, 1000.0)

    def passes(self, values: np.ndarray) -> np.ndarray:
        return values < self.delta - EPS

    def sql_template(self) -> tuple[str, dict]:
        return "models/delta_disclosure", {}

    def sql_pass(self) -> str:
        return f"value < {self.delta - EPS!r}"

    def describe(self) -> str:
        return f"{self.delta:g}-disclosure privacy"

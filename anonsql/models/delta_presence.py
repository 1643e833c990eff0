"""delta-presence (M. E. Nergiz, M. Atzori, C. Clifton: Hiding the presence of individuals from
shared databases, SIGMOD 2007, Definition 3), as ARX 3.9 implements it (``DPresence``).

The released table T is a *research subset* of a population table P (P holds every row of T).
With a class C of the released generalization, the probability that an individual of P in C
is in T is ``delta(C) = |T ∩ C| / |P ∩ C|``; the table is (delta_min, delta_max)-present when
``delta_min <= delta(C) <= delta_max`` for every released class. Both bounds are inclusive
(ARX: ``delta >= dMin && delta <= dMax``); comparisons allow
:data:`~anonsql.models.base.EPS` of rounding. ``|P ∩ C|`` is computed in the database: the
population's rows generalize with the same levels and are counted per class (a GROUP BY of the
population on its raw QI values joined to the hierarchies, like the sample's histogram); a
class the population lacks (population count 0, the population does not hold the subset) has
no finite delta and fails.

Suppression: ARX tests the classes holding research-subset rows (``entry.count > 0``) and a
failing class is suppressed like any other; suppressed records are not tested. Classes of the
population without subset rows are not released, so they are not tested either (ARX:
``entry.count == 0`` gives delta 0 but such a class has no released record to suppress).

Monotonicity. Without suppression: monotone when delta_min = 0, not otherwise (ARX flags
``DPresence`` monotonic with generalization in both cases). A generalized class is the union
of its sample classes *and of population classes that hold no subset record*; its delta is
the mediant ``sum |T ∩ C_i| / sum |P ∩ C_i|`` over all of them, so it is at most the largest
of the sample classes' deltas (the population-only parts only add to the denominator): a union
of classes below delta_max stays below it. It can fall below delta_min: a subset of 1 record
of ``v0`` in a population of 3 ``v0`` (delta 1/3) passes delta_min = 0.3, but generalizing
``v0`` with ``v1`` adds the population's ``v1`` record (delta 1/4) and fails. So with
delta_min > 0 nothing is tagged predictively (each instance sets
``monotone_without_suppression`` from its delta_min; the class flag is the conservative
False). Not monotone with suppression (ARX: ``monotonicWithSuppression = false``): with
delta_max = 0.5, a class of 1 subset record in 10 population records passes, a class of 10 in
10 fails, and their union (11 / 20 = 0.55) fails; a node with both is anonymous for a limit of
10 records, its generalization merging them suppresses 11.
"""

from __future__ import annotations

import math

import numpy as np

from anonsql.errors import InputError
from anonsql.models.base import EPS, ClassStats, PrivacyModel


def _share(value, name: str) -> float:
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or not 0 <= value <= 1:
        raise InputError(f"{name} must be a share in [0, 1], got {value!r}")
    return float(value)


class DeltaPresence(PrivacyModel):
    """(delta_min, delta_max)-presence against ``population`` (a table of the database).
    Value: ``|T ∩ C| / |P ∩ C|`` (infinite when the population lacks the class); passes when
    ``delta_min <= value <= delta_max``."""

    name = "delta-presence"
    needs_population = True
    #: conservative: an instance with delta_min = 0 is monotone (module docstring)
    monotone_without_suppression = False
    monotone_with_suppression = False  # a merge with a failing class fails (module docstring)

    def __init__(self, delta_min: float, delta_max: float, population: str) -> None:
        self.delta_min = _share(delta_min, "delta_min")
        self.delta_max = _share(delta_max, "delta_max")
        if self.delta_min > self.delta_max:
            raise InputError(
                f"delta_min ({self.delta_min:g}) must not exceed delta_max ({self.delta_max:g})"
            )
        if not isinstance(population, str) or not population:
            raise InputError("delta-presence needs a population table (--population)")
        self.population = population
        # the mediant of a union never exceeds its parts' largest delta, but population-only
        # parts can lower it below delta_min (module docstring)
        self.monotone_without_suppression = self.delta_min == 0

    def class_values(self, stats: ClassStats) -> np.ndarray:
        pop = stats.require_population(self.name).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(pop > 0, stats.sizes / np.where(pop > 0, pop, 1.0), np.inf)

    def passes(self, values: np.ndarray) -> np.ndarray:
        return (values >= self.delta_min - EPS) & (values <= self.delta_max + EPS)

    def sql_template(self) -> tuple[str, dict]:
        return "models/delta_presence", {}

    def sql_pass(self) -> str:
        return f"value >= {self.delta_min - EPS!r} AND value <= {self.delta_max + EPS!r}"

    def describe(self) -> str:
        return f"({self.delta_min:g}, {self.delta_max:g})-presence in {self.population}"

"""delta-presence (M. E. Nergiz, M. Atzori, C. Clifton: Hiding the presence of individuals from
shared databases, SIGMOD 2007, Definition 3), as ARX 3.9 implements it (``DPresence``).

The released table T is a *research subset* of a population table P (P holds every row of T).
With a class C of the generalization, the probability that an individual of P in C is in T
is ``delta(C) = |T ∩ C| / |P ∩ C|``; the table is (delta_min, delta_max)-present when
``delta_min <= delta(C) <= delta_max`` for every class of the population (below). Both bounds
are inclusive (ARX: ``delta >= dMin && delta <= dMax``); comparisons allow
:data:`~anonsql.models.base.EPS` of rounding. ``|P ∩ C|`` is computed in the database: the
population's rows generalize with the same levels and are counted per class (a GROUP BY of the
population on its raw QI values joined to the hierarchies, like the sample's histogram); a
class the population lacks (population count 0, the population does not hold the subset) has
no finite delta and fails.

Classes of the population without subset rows. Nergiz et al. require
``delta_min <= P(t in T | T*) <= delta_max`` for every record t of the *population*. A class
of the population that holds no subset record (a *population-only* class) gives its records
delta 0: with delta_min > 0 it fails, and as it releases no record, no suppression can repair
it - the transformation fails as a whole. This is ARX's rule (``HashGroupify.analyzeAll``: a
class with ``count == 0`` failing d-presence sets ``dpresent = false``; its ``DPresence``
gives such a class delta 0). anonsql applies it whatever other models are combined; ARX
does not when a model with a minimal class size (k-anonymity, l-diversity, estimated k-map) is
combined with d-presence: its minimal-class-size test runs first, fails the empty class (0 <
k) and so never reaches the d-presence test, and suppressing 0 records costs nothing
(``tests/algorithms/lattice/test_arx_cases.py`` shows the consequence on Adult and checks
that this rule gives ARX's optima). With delta_min = 0 a population-only class passes and
nothing changes.

Suppression: a released class (one holding subset rows) that fails is suppressed like any
other, and suppressed records are not tested (ARX: only classes with ``count > 0`` are
suppressed). A read of a guarded view that finds a population-only class failing withholds
every row (:mod:`anonsql.output.guard`); the search's assessment counts such a node as
suppressing every row and never anonymous (:class:`~anonsql.models.requirements.Requirements`).

Monotonicity (stated for the models' tests in ``tests/models/test_models_population.py``).

* Without suppression: monotone, for every delta_min. A class of a generalization is the union
  of classes of the node, each holding subset records (on an anonymous node no population
  class lacks them, or delta_min = 0 and those add delta 0); its delta is the mediant
  ``sum |T ∩ C_i| / sum |P ∩ C_i|`` of theirs, which lies between their smallest and their
  largest: a union of passing classes passes. And a population-only class of a generalization
  is a union of population-only classes of the node, so a node without one has generalizations
  without one. (Testing released classes only, delta-presence with delta_min > 0 would not be
  monotone: a subset of 1 ``v0`` record in a population of 3 ``v0`` and 1 ``v1`` passes
  delta_min = 0.3 with ``v0`` released alone (1/3) and fails once ``v0`` and ``v1`` merge
  (1/4); counting the population-only ``v1`` class, the first node fails too.)
* With suppression: not monotone (ARX: ``monotonicWithSuppression = false``): with delta_max =
  0.5, a class of 1 subset record in 10 population records passes, a class of 10 in 10 fails,
  and their union (11 / 20 = 0.55) fails; a node with both is anonymous for a limit of 10
  records, its generalization merging them suppresses 11. Likewise with delta_min = 0.2: 1 in 20
  fails, 3 in 10 passes, their union 4 in 30 fails.
* A node with a failing population-only class makes every specialization fail too (their
  population-only classes split its one), whatever the suppression limit: the search may tag
  downwards from such a node (:meth:`~anonsql.models.requirements.Requirements.screen`).
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
    #: with population-only classes tested (module docstring)
    monotone_without_suppression = True
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

    def class_values(self, stats: ClassStats) -> np.ndarray:
        pop = stats.require_population(self.name).astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(pop > 0, stats.sizes / np.where(pop > 0, pop, 1.0), np.inf)

    def passes(self, values: np.ndarray) -> np.ndarray:
        return (values >= self.delta_min - EPS) & (values <= self.delta_max + EPS)

    @property
    def tests_unreleased(self) -> bool:
        """Whether a population-only class (delta 0) fails: delta_min > 0."""
        return not bool(self.passes(np.zeros(1))[0])

    def fails_unreleased(self, stats: ClassStats) -> bool:
        return stats.population_only > 0 and self.tests_unreleased

    def sql_template(self) -> tuple[str, dict]:
        return "models/delta_presence", {}

    def sql_pass(self) -> str:
        return f"value >= {self.delta_min - EPS!r} AND value <= {self.delta_max + EPS!r}"

    def describe(self) -> str:
        return f"({self.delta_min:g}, {self.delta_max:g})-presence in {self.population}"

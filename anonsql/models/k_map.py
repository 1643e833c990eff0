"""k-map (L. Sweeney, Computational disclosure control, PhD thesis, MIT 2001; K. El Emam,
F. K. Dankar: Protecting privacy using k-anonymity, JAMIA 15(5), 2008), as ARX 3.9 implements
it (``KMap``): every released class must match at least k records of the *population* the
table was sampled from, so an attacker who knows someone is in the population cannot narrow
them down below k.

Two forms, as in ARX:

* with a population table P (:class:`KMap`; ARX ``KMap(k, subset)``): the class's count in P,
  ``|P ∩ C| >= k``. The population's rows generalize with the same levels and are counted per
  class in the database (the rows never leave it);
* estimated from the sample (:class:`EstimatedKMap`; ARX ``KMap(k, significance, population
  model, estimator)``): the population's class sizes are modelled as Poisson
  (``poisson``) or zero-truncated Poisson (``zero-truncated-poisson``) with lambda = f k
  (f = n / N, the sampling fraction, N the population size); k-map holds at the significance
  level when every class has at least k' records, the derived k' of
  :func:`anonsql.metrics.population.kmap_derived_k` (ARX ``calculateKPoisson``,
  ``calculateKZeroPoisson``), k' <= k. A guarded view recomputes k' from the table's size at
  every read (:func:`~anonsql.metrics.population.kmap_breakpoints`).

Monotonicity (both forms): monotone without and with suppression (ARX: ``super(true, true)``).
A union's population count is the sum of its classes' (its size, for the estimate), so it
reaches k (k') as soon as one of its classes does.
"""

from __future__ import annotations

import math

import numpy as np
from sqlglot import exp

from anonsql.errors import InputError
from anonsql.metrics.population import (
    KMAP_ESTIMATORS,
    check_population,
    kmap_breakpoints,
    kmap_derived_k,
)
from anonsql.models.base import ClassStats, PrivacyModel


def _check_k(k) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"k-map's k must be a whole number >= 1, got {k!r}")
    return int(k)


class KMap(PrivacyModel):
    """k-map against a population table: value ``|P ∩ C|``, passes when ``value >= k``."""

    name = "k-map"
    needs_population = True
    monotone_without_suppression = True
    monotone_with_suppression = True

    def __init__(self, k: int, population: str) -> None:
        self.k = _check_k(k)
        if not isinstance(population, str) or not population:
            raise InputError("k-map needs a population table, or an estimator")
        self.population = population

    def class_values(self, stats: ClassStats) -> np.ndarray:
        return stats.require_population(self.name).astype(np.float64)

    def passes(self, values: np.ndarray) -> np.ndarray:
        return values >= self.k

    def sql_template(self) -> tuple[str, dict]:
        return "models/k_map", {}

    def sql_pass(self) -> str:
        return f"value >= {self.k}"

    def describe(self) -> str:
        return f"{self.k}-map in {self.population}"


class EstimatedKMap(PrivacyModel):
    """k-map estimated from the sample: value ``|C| / k'(n)`` with n the table's records;
    passes when ``value >= 1``. ``population_size`` N, or ``sampling_fraction`` f (then
    N = round(n / f), ARX ``ARXPopulationModel.create(n, f)``)."""

    name = "k-map-estimated"
    monotone_without_suppression = True
    monotone_with_suppression = True

    def __init__(
        self,
        k: int,
        estimator: str = "poisson",
        significance: float = 0.05,
        population_size: int | None = None,
        sampling_fraction: float | None = None,
    ) -> None:
        self.k = _check_k(k)
        if estimator not in KMAP_ESTIMATORS:
            raise InputError(f"unknown k-map estimator {estimator!r}; use {KMAP_ESTIMATORS}")
        self.estimator = estimator
        ok = isinstance(significance, (int, float)) and not isinstance(significance, bool)
        if not ok or not math.isfinite(significance) or not 0 <= significance <= 1:
            raise InputError(f"the significance level must be in [0, 1], got {significance!r}")
        self.significance = float(significance)
        check_population(
            population_size,
            sampling_fraction,
            "an estimated k-map needs the population: give population_size or "
            "sampling_fraction (or a population table)",
        )
        self.population_size = population_size
        self.sampling_fraction = sampling_fraction
        self._rows: int | None = None

    def population_of(self, rows: int) -> float:
        if self.population_size is not None:
            return float(self.population_size)
        # lambda = f k exactly (ARX rounds N = round(n / f) first: at most half a record apart)
        assert self.sampling_fraction is not None  # __init__ requires one of the two
        return rows / self.sampling_fraction

    def derived_k(self, rows: int) -> int:
        """k' for a table of ``rows`` records (ARX ``KMap.getDerivedK``)."""
        if rows < 1:
            return 1
        return kmap_derived_k(
            self.k, rows, self.population_of(rows), self.significance, self.estimator
        )[0]

    def validate(self, rows: int, distinct_sensitive: int | None) -> None:
        self._rows = rows

    def class_values(self, stats: ClassStats) -> np.ndarray:
        rows = self._rows if self._rows is not None else int(stats.sizes.sum())
        return stats.sizes.astype(np.float64) / self.derived_k(rows)

    def passes(self, values: np.ndarray) -> np.ndarray:
        return values >= 1

    def sql_template(self) -> tuple[str, dict]:
        total = exp.select(exp.Sum(this=exp.column("size", "x"))).from_(
            exp.alias_(exp.to_table("classes"), "x", table=True)
        )
        n = exp.Subquery(this=total)
        if self.sampling_fraction is not None:
            # lambda = f k whatever n is: k' depends on n only through the cap k' <= n
            d = kmap_derived_k(
                self.k, 10**9, 10**9 / self.sampling_fraction, self.significance, self.estimator
            )[0]
            derived: exp.Expr = exp.func("LEAST", exp.convert(d), n)
        else:
            assert self.population_size is not None  # __init__ requires one of the two
            steps = kmap_breakpoints(
                self.k, float(self.population_size), self.significance, self.estimator
            )
            # k' of the smallest breakpoint at or above n, looked up in a VALUES list: one
            # CASE branch per breakpoint would nest as deep as there are breakpoints (k = 1000
            # gives hundreds, past DuckDB's expression depth limit of 1000)
            derived = exp.convert(self.k)
            if steps:
                points = exp.values(
                    [(exp.convert(top), exp.convert(d)) for top, d in steps],
                    alias="b",
                    columns=["top", "d"],
                )
                lookup = (
                    exp.select(exp.column("d", "b"))
                    .from_(points)
                    .where(exp.GTE(this=exp.column("top", "b"), expression=n.copy()))
                    .order_by(exp.column("top", "b"))
                    .limit(1)
                )
                derived = exp.func("COALESCE", exp.Subquery(this=lookup), exp.convert(self.k))
        return "models/k_map_estimated", {"derived": exp.cast(derived, "DOUBLE")}

    def sql_pass(self) -> str:
        return "value >= 1"

    def describe(self) -> str:
        pop = (
            f"N = {self.population_size}"
            if self.population_size is not None
            else f"f = {self.sampling_fraction:g}"
        )
        return (
            f"{self.k}-map estimated ({self.estimator}, significance {self.significance:g}, {pop})"
        )

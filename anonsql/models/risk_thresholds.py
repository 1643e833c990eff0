"""ARX's risk-based privacy models (ARX 3.9 ``RiskBasedCriterion``): thresholds on a measure of
re-identification risk over the *whole released table*, not on each class.

* **average re-identification risk** (ARX ``AverageReidentificationRisk``; the prosecutor
  model's average risk, K. El Emam: Guide to the de-identification of personal health
  information, 2013, section on average risk): ``classes / records`` over the released
  classes (1 / the average class size) ``<= threshold``;
* **sample uniqueness** (ARX ``SampleUniqueness``): the share of released records that are
  alone in their class ``<= threshold``;
* **population uniqueness** (ARX ``PopulationUniqueness``): the estimated share of the
  population's records that are unique in the population ``<= threshold``, by the Pitman,
  Zayatz, SNB or Dankar estimator (:mod:`anonsql.metrics.population`) given the population
  size N or the sampling fraction f (N = round(n / f), n the table's rows, as ARX's
  ``ARXPopulationModel``). An estimate that is not available (0 with sample uniques left)
  fails, as in ARX.

A table-level measure is met the way ARX meets it (``RiskBasedCriterion.enforce``): the
classes failing the per-class models are suppressed first; then, while the measure fails,
released classes are suppressed *smallest first* (ties: by their node ids, QI by QI), and the
node is anonymous when everything suppressed stays within the limit. ARX finds the number of
classes to suppress by a binary search over that order; here it is the smallest number that
meets every table-level model (computed for every prefix at once for the first two, by the same
binary search for population uniqueness, then checked). An empty release meets each model.

Monotonicity. A generalization's classes are unions of the node's classes.

* Average risk and sample uniqueness are monotone without suppression (merging lowers the
  class count at the same records, and a merged class has two or more records) and *with*
  suppression, as ARX flags them (``super(true, true, ...)``), also in conjunction with per-class
  models that are monotone with suppression. Smallest-first suppresses the fewest records of
  any choice of classes that meets the threshold: for average risk, keeping the c largest
  classes keeps the most records of any c classes, so a kept set K meeting it lets
  smallest-first stop after at most ``C - |K|`` classes, which hold at most the records outside
  K; for sample uniqueness, a kept set K with ``a`` sample uniques and ``b`` other records
  suppressed meets ``(U - a) / (N - a - b) <= t``, hence ``(U - a - b) / (N - a - b) <= t``:
  suppressing ``a + b`` uniques suffices. In a generalization, the classes containing the
  node's kept classes pass the per-class models, are no more numerous, hold at least as many
  records and no more sample uniques (a unique class of the generalization is an unmerged unique
  class of the node): they meet the threshold, so smallest-first suppresses at most what the
  node suppressed (also checked on random merges in ``tests/test_models_population.py``).
* Population uniqueness is monotone neither without nor with suppression (ARX: not with
  suppression; with generalization for Zayatz only): merging two large classes lowers the
  denominator of Zayatz's conditional uniqueness (``H(1; N, i + j, n) < H(1; N, i, n) +
  H(1; N, j, n)``), so the estimate *grows*: classes of 5, 5, 1, 1, 1 in N = 100 have a Zayatz
  share of 0.041 after one unique is suppressed, their generalization 10, 1, 1, 1 of 0.063, so
  at a threshold of 0.05 the node is anonymous suppressing 1 record and the generalization needs
  2 (``tests/test_models_population.py``).

What a guarded view enforces (:mod:`anonsql.output.guard`): average risk and sample uniqueness
exactly as here, on the classes as they are at the read, with window functions. Population
uniqueness is enforced through sample uniqueness at the same threshold: a record unique in the
population is unique in the sample, so the population's uniques are at most the sample's and a
release whose sample uniqueness meets the threshold meets it for the population (conservative:
a read may suppress more than the run counted).
"""

from __future__ import annotations

import math

import numpy as np

from anonsql.errors import InputError
from anonsql.metrics.population import (
    UNIQUENESS_ESTIMATORS,
    check_population,
    population_uniqueness,
)
from anonsql.models.base import ClassStats, PrivacyModel


def _threshold(value, name: str) -> float:
    ok = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    if not ok or not math.isfinite(value) or not 0 <= value <= 1:
        raise InputError(f"{name} must be a share in [0, 1], got {value!r}")
    return float(value)


def _prefixes(ordered: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For j = 0..C classes suppressed (smallest first): classes, records and sample uniques
    left."""
    c = len(ordered)
    j = np.arange(c + 1)
    records = float(ordered.sum()) - np.concatenate(([0.0], np.cumsum(ordered, dtype=np.float64)))
    ones = np.concatenate(([0.0], np.cumsum(ordered == 1, dtype=np.float64)))
    return (c - j).astype(np.float64), records, float((ordered == 1).sum()) - ones


class RiskThreshold(PrivacyModel):
    """A threshold on a table-level risk measure; the per-class interface gives every class the
    table's measure (what ``check`` reports), :meth:`suppress_count` what the search and the
    guard enforce."""

    table_level = True
    option: str

    def __init__(self, threshold: float) -> None:
        self.threshold = _threshold(threshold, self.option)

    def measure(self, sizes: np.ndarray) -> float:
        """The measure over released classes of these sizes."""
        raise NotImplementedError

    def holds(self, sizes: np.ndarray) -> bool:
        sizes = np.asarray(sizes, dtype=np.float64)
        return sizes.sum() == 0 or self.measure(sizes) <= self.threshold

    def holds_prefixes(self, ordered: np.ndarray) -> np.ndarray:
        """Whether the model holds after suppressing the j smallest classes, j = 0..C."""
        return np.array([self.holds(ordered[j:]) for j in range(len(ordered) + 1)])

    def suppress_count(self, ordered: np.ndarray, most: int | None = None) -> int:
        """The fewest classes (smallest first, ``ordered`` ascending) to suppress; when more
        than ``most`` are needed, ``len(ordered)``."""
        ok = self.holds_prefixes(ordered)
        j = int(np.argmax(ok)) if ok.any() else len(ordered)
        return j if most is None or j <= most else len(ordered)

    def class_values(self, stats: ClassStats) -> np.ndarray:
        return np.full(stats.classes, self.measure(stats.sizes) if stats.classes else 0.0)

    def passes(self, values: np.ndarray) -> np.ndarray:
        return values <= self.threshold

    def sql_pass(self) -> str:
        return f"value <= {self.threshold!r}"


class AverageRisk(RiskThreshold):
    """Average re-identification risk (ARX ``AverageReidentificationRisk``): released classes
    over released records, ``<= threshold``."""

    name = "average-risk"
    option = "max_average_risk"
    monotone_without_suppression = True  # module docstring
    monotone_with_suppression = True  # smallest-first is optimal (module docstring)

    def measure(self, sizes: np.ndarray) -> float:
        n = float(np.sum(sizes))
        return len(sizes) / n if n else 0.0

    def holds_prefixes(self, ordered: np.ndarray) -> np.ndarray:
        classes, records, _ = _prefixes(np.asarray(ordered, dtype=np.float64))
        with np.errstate(divide="ignore", invalid="ignore"):
            return (records == 0) | (classes / records <= self.threshold)

    def sql_template(self) -> tuple[str, dict]:
        return "models/average_risk", {}

    def describe(self) -> str:
        return f"average re-identification risk <= {self.threshold:g}"


class SampleUniqueness(RiskThreshold):
    """Sample uniqueness (ARX ``SampleUniqueness``): released records alone in their class
    over released records, ``<= threshold``."""

    name = "sample-uniqueness"
    option = "max_sample_uniqueness"
    monotone_without_suppression = True  # module docstring
    monotone_with_suppression = True  # smallest-first is optimal (module docstring)

    def measure(self, sizes: np.ndarray) -> float:
        sizes = np.asarray(sizes, dtype=np.float64)
        n = float(sizes.sum())
        return float((sizes == 1).sum()) / n if n else 0.0

    def holds_prefixes(self, ordered: np.ndarray) -> np.ndarray:
        _, records, uniques = _prefixes(np.asarray(ordered, dtype=np.float64))
        with np.errstate(divide="ignore", invalid="ignore"):
            return (records == 0) | (uniques / records <= self.threshold)

    def sql_template(self) -> tuple[str, dict]:
        return "models/sample_uniqueness", {}

    def describe(self) -> str:
        return f"sample uniqueness <= {self.threshold:g}"


class PopulationUniqueness(RiskThreshold):
    """Population uniqueness (ARX ``PopulationUniqueness``): the estimated share of population
    uniques ``<= threshold``; holds with no sample unique, fails when the estimate is not
    available (0) while sample uniques remain."""

    name = "population-uniqueness"
    option = "max_population_uniqueness"
    monotone_without_suppression = False  # the estimators are not monotone (module docstring)
    monotone_with_suppression = False  # Zayatz's counterexample (module docstring)

    def __init__(
        self,
        threshold: float,
        estimator: str = "dankar",
        population_size: int | None = None,
        sampling_fraction: float | None = None,
    ) -> None:
        super().__init__(threshold)
        if estimator not in UNIQUENESS_ESTIMATORS:
            raise InputError(
                f"unknown population-uniqueness estimator {estimator!r}; use "
                f"{UNIQUENESS_ESTIMATORS}"
            )
        self.estimator = estimator
        check_population(
            population_size,
            sampling_fraction,
            "population uniqueness needs the population: give population_size or sampling_fraction",
        )
        self.population_size = population_size
        self.sampling_fraction = sampling_fraction
        self._rows: int | None = None

    def validate(self, rows: int, distinct_sensitive: int | None) -> None:
        self._rows = rows
        if self.population_size is not None and self.population_size < rows:
            raise InputError(
                f"population_size {self.population_size} is smaller than the table ({rows} rows)"
            )

    def population(self, rows: int) -> float:
        """N: the population size, or round(n / f) for the table's n rows (ARX)."""
        if self.population_size is not None:
            return float(self.population_size)
        assert self.sampling_fraction is not None  # __init__ requires one of the two
        return float(round(rows / self.sampling_fraction))

    def measure(self, sizes: np.ndarray) -> float:
        sizes = np.asarray(sizes, dtype=np.float64)
        rows = self._rows if self._rows is not None else int(sizes.sum())
        return population_uniqueness(
            sizes, self.population(rows), self.estimator, fallback=False
        ).share

    def holds(self, sizes: np.ndarray) -> bool:
        sizes = np.asarray(sizes, dtype=np.float64)
        if sizes.sum() == 0 or not (sizes == 1).any():
            return True  # ARX: nothing released, or no sample unique (estimate 0)
        share = self.measure(sizes)
        return 0 < share <= self.threshold

    def suppress_count(self, ordered: np.ndarray, most: int | None = None) -> int:
        """ARX's binary search over the classes smallest first; suppressing every sample
        unique (the first ``U`` classes) always meets the model, so the search runs over
        0..U; where the measure is not monotone in the prefix, the count found is raised
        until the model holds. As ARX aborts once the suppression limit is exceeded, a count
        above ``most`` is not searched for: ``len(ordered)`` (everything) is returned when the
        model fails after ``most`` classes."""
        ordered = np.asarray(ordered, dtype=np.float64)
        u = int((ordered == 1).sum())
        if most is not None and most < u:
            if not self.holds(ordered[most:]):
                return len(ordered)
            u = most
        lo, hi = 0, u
        while lo < hi:
            mid = (lo + hi) // 2
            if self.holds(ordered[mid:]):
                hi = mid
            else:
                lo = mid + 1
        while not self.holds(ordered[lo:]):
            lo += 1
        return lo

    def class_values(self, stats: ClassStats) -> np.ndarray:
        if not (stats.sizes == 1).any():
            return np.zeros(stats.classes)
        share = self.measure(stats.sizes)
        # an unavailable estimate (0 with sample uniques) fails: report it as infinite
        return np.full(stats.classes, share if share > 0 else np.inf)

    def sql_template(self) -> tuple[str, dict]:
        # SQL cannot run the estimators: the guard enforces the bound through sample
        # uniqueness (module docstring); check computes the estimate from the class sizes
        return "models/sample_uniqueness", {}

    def describe(self) -> str:
        pop = (
            f"N = {self.population_size}"
            if self.population_size is not None
            else f"f = {self.sampling_fraction:g}"
        )
        return f"population uniqueness ({self.estimator}, {pop}) <= {self.threshold:g}"


def enforce_table_models(
    models: list[RiskThreshold],
    sizes: np.ndarray,
    order: np.ndarray,
    budget: float | None = None,
) -> np.ndarray:
    """The classes (indices into ``sizes``, taken in ``order``: size, then node ids) that the
    table-level models suppress: the fewest smallest ones after which every model holds.
    With ``budget`` (records that may still be suppressed), a count suppressing more is not
    searched for: every class is returned instead (the node is not anonymous either way)."""
    ordered = np.asarray(sizes, dtype=np.float64)[order]
    most = None
    if budget is not None:
        most = int(np.searchsorted(np.cumsum(ordered), budget + 1e-9, side="right"))
    j = max(m.suppress_count(ordered, most) for m in models)
    while j < len(ordered) and not all(m.holds(ordered[j:]) for m in models):
        if most is not None and j >= most:
            return order
        j += 1
    return order[:j]

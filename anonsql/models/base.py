"""What a privacy model is: a value per equivalence class and a test on it.

A model computes its per-class value twice, from the same definition: with numpy over the
classes of a transformation (what the lattice search uses) and as SQL over a table's classes
(what ``anonsql check`` runs in the database). Tests hold both to a brute-force pandas
implementation.

Suppressed records (all QIs ``*``) are removed before a model is tested, as ARX does: they
form no class a model must accept. :meth:`PrivacyModel.suppressed_form_a_class` documents
each model's choice.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from anonsql.errors import InputError
from anonsql.hierarchy.hierarchy import Hierarchy

#: tolerance for comparisons of computed real values with thresholds (entropy, distances)
EPS = 1e-9
#: the label a NULL sensitive value reaches the models with (histograms and the SQL
#: relations write NULL so); it is no value: see :meth:`ClassStats.__post_init__`
NULL_SENSITIVE = "NULL"


def sensitive_order(labels: list[str]) -> np.ndarray:
    """Rank of each sensitive value for ordered distances: numbers in numeric order first,
    then other labels in lexical order (the SQL side sorts by the same key)."""

    def key(i: int):
        try:
            return (0, float(labels[i]), labels[i])
        except ValueError:
            return (1, 0.0, labels[i])

    order = sorted(range(len(labels)), key=key)
    rank = np.empty(len(labels), dtype=np.int64)
    rank[order] = np.arange(len(labels))
    return rank


@dataclass
class ClassStats:
    """Equivalence classes as the models see them.

    ``sizes[c]`` is the size of class c; sensitive counts come as sparse triples
    ``(pair_class, pair_value, pair_count)``; ``overall[v]`` is the share of value v in the
    whole table; ``labels`` names the values.
    """

    sizes: np.ndarray
    pair_class: np.ndarray | None = None
    pair_value: np.ndarray | None = None
    pair_count: np.ndarray | None = None
    overall: np.ndarray | None = None
    labels: list[str] | None = None
    sensitive_hierarchy: Hierarchy | None = None
    #: per class: its records in the population table (models with ``needs_population``)
    population: np.ndarray | None = None
    #: classes of the population (generalized alike) holding no record of the table: not
    #: classes of the release, yet delta-presence tests them (``PrivacyModel.fails_unreleased``)
    population_only: int = 0

    #: per class: its records whose sensitive value is not NULL (set from the pairs)
    vals: np.ndarray | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        # A NULL sensitive value is no value (README "NULL sensitive values"): the row counts
        # toward its class's size (k) but in no sensitive distribution, neither the class's
        # nor the table's. NULL reaches the models as the label NULL_SENSITIVE.
        if self.pair_class is None:
            return
        if self.labels is not None and NULL_SENSITIVE in self.labels:
            null = list(self.labels).index(NULL_SENSITIVE)
            keep = self.pair_value != null
            if not keep.all():
                self.pair_class = self.pair_class[keep]
                self.pair_value = self.pair_value[keep]
                self.pair_count = self.pair_count[keep]
            if self.overall is not None and self.overall[null] > 0:
                o = np.asarray(self.overall, dtype=np.float64).copy()
                o[null] = 0.0
                total = o.sum()
                self.overall = o / total if total > 0 else o
        self.vals = np.bincount(self.pair_class, self.pair_count, minlength=len(self.sizes)).astype(
            np.float64
        )

    @property
    def classes(self) -> int:
        return len(self.sizes)

    def require_sensitive(self, model: str) -> None:
        if self.pair_class is None or self.overall is None:
            raise InputError(f"{model} needs a sensitive attribute (--sa)")

    def require_population(self, model: str) -> np.ndarray:
        if self.population is None:
            raise InputError(f"{model} needs a population table (--population)")
        return self.population

    def shares(self) -> np.ndarray:
        """p(value | class) for every sparse pair, among the class's non-NULL values."""
        return self.pair_count / self.vals[self.pair_class]


class PrivacyModel(ABC):
    """A privacy requirement on every (non-suppressed) equivalence class."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # every model that reads the sensitive attribute fails a class holding no value (all
        # its rows NULL): its class_values give NaN there, which no ``passes`` accepts
        super().__init_subclass__(**kwargs)
        fn = cls.__dict__.get("class_values")
        if fn is None or not cls.needs_sensitive or getattr(fn, "_valued", False):
            return

        def class_values(self, stats: ClassStats, _fn=fn) -> np.ndarray:
            values = _fn(self, stats)
            if stats.vals is None:
                return values
            return np.where(stats.vals > 0, values, np.nan)

        class_values._valued = True  # type: ignore[attr-defined]
        class_values.__doc__ = fn.__doc__
        cls.class_values = class_values  # type: ignore[method-assign]

    name: ClassVar[str]
    needs_sensitive: ClassVar[bool] = False
    #: the model reads each class's count in a population table (:attr:`ClassStats.population`)
    needs_population: ClassVar[bool] = False
    #: a *table-level* model (:mod:`anonsql.models.risk_thresholds`): a measure over all
    #: released classes, met by suppressing classes smallest first, not a per-class test
    table_level: ClassVar[bool] = False
    # Monotonicity over the lattice. A generalization's classes are unions of the node's
    # classes (seed 002 section II.C), so what the search may infer from a checked node depends
    # on how the model behaves when classes merge:
    #: *Without suppression*: a union of classes that all satisfy the model satisfies it. Then
    #: with no suppression allowed an anonymous node makes every generalization anonymous and
    #: a non-anonymous one every specialization non-anonymous (predictive tagging is sound).
    monotone_without_suppression: ClassVar[bool] = True
    #: *With suppression*: a union of classes satisfies the model as soon as *one* of them
    #: does. Then a generalization's failing classes are unions of failing classes only, its
    #: suppressed records a subset of the node's, and tagging stays sound under any
    #: suppression limit. A model without this property is not monotone with suppression:
    #: a passing class A and a failing class B whose union fails make the node with classes
    #: {A, B} anonymous for a limit of |B| records and its generalization merging them not.
    #: ARX calls the pair ``isMonotonicWithGeneralization`` / ``isMonotonicWithSuppression``.
    monotone_with_suppression: ClassVar[bool] = False

    @abstractmethod
    def class_values(self, stats: ClassStats) -> np.ndarray:
        """The model's value for each class."""

    @abstractmethod
    def passes(self, values: np.ndarray) -> np.ndarray:
        """Which classes satisfy the model, given their values."""

    @abstractmethod
    def sql_template(self) -> tuple[str, dict]:
        """Name of the SQL template computing ``(class_id, value)`` and its parameters."""

    @abstractmethod
    def sql_pass(self) -> str:
        """Comparison of ``value`` with the threshold, as SQL over the template's output."""

    @abstractmethod
    def describe(self) -> str: ...

    def suppressed_form_a_class(self) -> bool:
        """Whether suppressed rows must themselves satisfy the model (no model here does)."""
        return False

    def validate(self, rows: int, distinct_sensitive: int | None) -> None:  # noqa: B027
        """Reject parameters that no table could satisfy, before any work (default: none)."""

    def check(self, stats: ClassStats) -> np.ndarray:
        return self.passes(self.class_values(stats))

    def fails_unreleased(self, stats: ClassStats) -> bool:
        """Whether a class of the population without any record of the table
        (``stats.population_only``) fails the model. Such a class releases nothing, so no
        suppression can repair it: the whole transformation fails (ARX's ``HashGroupify``
        for d-presence). Only delta-presence with delta_min > 0 says yes."""
        return False

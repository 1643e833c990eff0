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
class Composite:
    """Several sensitive attributes as one composite value (a tuple of values): per
    composite value its code in each attribute (``codes[v, i]``), each attribute's labels
    (NULL as :data:`NULL_SENSITIVE`) and the table's distribution of each attribute (NULL
    left out, the rest normalized)."""

    columns: list[str]
    codes: np.ndarray
    labels: list[list[str]]
    overall: list[np.ndarray]

    @classmethod
    def build(
        cls, columns: list[str], composite_labels: list[str], rows: list[tuple], overall
    ) -> Composite:
        """``rows``: (composite label, value of each attribute as text or None) for every
        composite label; ``overall``: the composite values' shares in the table."""
        per = {r[0]: r[1:] for r in rows}
        codes = np.zeros((len(composite_labels), len(columns)), dtype=np.int64)
        labels: list[list[str]] = []
        dists: list[np.ndarray] = []
        for i in range(len(columns)):
            values = [
                NULL_SENSITIVE if per[c][i] is None else str(per[c][i]) for c in composite_labels
            ]
            names = sorted(set(values))
            index = {v: j for j, v in enumerate(names)}
            codes[:, i] = [index[v] for v in values]
            dist = np.bincount(codes[:, i], np.asarray(overall, dtype=np.float64), len(names))
            if NULL_SENSITIVE in index:
                dist[index[NULL_SENSITIVE]] = 0.0
            total = dist.sum()
            labels.append(names)
            dists.append(dist / total if total > 0 else dist)
        return cls(list(columns), codes, labels, dists)


class OnAttribute:
    """A model that reads a sensitive attribute, applied to one of several (ARX's semantics:
    each such model applies to each sensitive attribute). Every test is the inner model's on
    :meth:`ClassStats.attribute`; monotonicity is the inner model's (a class of a union
    passes on attribute i exactly as the inner model says on attribute i's counts)."""

    needs_sensitive = True
    needs_population = False
    table_level = False

    def __init__(self, inner: PrivacyModel, index: int, column: str) -> None:
        self.inner, self.index, self.column = inner, index, column
        self.name = inner.name
        self.monotone_with_suppression = inner.monotone_with_suppression
        self.monotone_without_suppression = inner.monotone_without_suppression

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet (copy, pickle)
            raise AttributeError(name)
        return getattr(self.inner, name)

    def __repr__(self) -> str:
        return f"OnAttribute({self.inner!r}, {self.index}, {self.column!r})"

    def class_values(self, stats: ClassStats) -> np.ndarray:
        return self.inner.class_values(stats.attribute(self.index))

    def passes(self, values: np.ndarray) -> np.ndarray:
        return self.inner.passes(values)

    def check(self, stats: ClassStats) -> np.ndarray:
        return self.inner.check(stats.attribute(self.index))

    def describe(self) -> str:
        return f"{self.inner.describe()} on {self.column}"

    def fails_unreleased(self, stats: ClassStats) -> bool:
        return False

    def suppressed_form_a_class(self) -> bool:
        return False


def unwrap(model: Any) -> tuple[Any, int | None]:
    """The model itself and None, or for :class:`OnAttribute` the inner model and its
    attribute's index."""
    if isinstance(model, OnAttribute):
        return model.inner, model.index
    return model, None


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
    #: several sensitive attributes: the sensitive values are tuples, described here
    #: (:meth:`attribute` gives one attribute's stats)
    composite: Composite | None = None

    #: per class: its records whose sensitive value is not NULL (set from the pairs)
    vals: np.ndarray | None = field(default=None, init=False)
    _attributes: dict = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        # A NULL sensitive value is no value (README "NULL sensitive values"): the row counts
        # toward its class's size (k) but in no sensitive distribution, neither the class's
        # nor the table's. NULL reaches the models as the label NULL_SENSITIVE.
        if self.pair_class is None:
            return
        # the three sparse arrays come together
        assert self.pair_value is not None and self.pair_count is not None
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

    def attribute(self, i: int) -> ClassStats:
        """The stats of sensitive attribute ``i`` alone: the (class, tuple, count) pairs
        summed to (class, value of attribute i, count), over that attribute's labels and
        table distribution (NULL is no value: README "NULL sensitive values")."""
        if self.composite is None:
            if i == 0:
                return self
            raise ValueError("one sensitive attribute")
        got = self._attributes.get(i)
        if got is not None:
            return got
        comp = self.composite
        width = len(comp.labels[i])
        if self.pair_class is None:
            pairs: tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None] = (
                None,
                None,
                None,
            )
        else:
            key = self.pair_class.astype(np.int64) * width + comp.codes[self.pair_value, i]
            uniq, inverse = np.unique(key, return_inverse=True)
            counts = np.bincount(inverse, self.pair_count, minlength=len(uniq))
            pairs = (uniq // width, uniq % width, counts.astype(np.int64))
        got = ClassStats(
            self.sizes,
            *pairs,
            comp.overall[i],
            comp.labels[i],
            None,
            self.population,
            self.population_only,
        )
        self._attributes[i] = got
        return got

    def shares(self) -> np.ndarray:
        """p(value | class) for every sparse pair, among the class's non-NULL values."""
        # read by the models of the sensitive attribute only: the pairs and vals are set
        assert self.pair_class is not None and self.pair_count is not None
        assert self.vals is not None
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
    #: the model reads each class's sensitive *distribution* (t-closeness, beta-likeness,
    #: delta-disclosure), not counts of values: with a privacy unit whose records hold several
    #: values, each unit then weighs once in its class, shared equally among its values,
    #: where a count model counts a value once per unit holding it (docs/models/units.md)
    reads_distribution: ClassVar[bool] = False
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

"""A privacy goal counted in units whose records hold several QI tuples (README "Privacy
units", units of several records).

A person with several visits may hold several quasi-identifier tuples (they moved; the visit
date is a QI) and several sensitive values. Each of their records then falls into its own
class, and a class's size is its number of *distinct units*, which no longer adds up when
classes merge: two classes of 3 units each may make a class of 4. The histogram's rows are the
table's distinct (unit, QI tuple, sensitive value) records (:mod:`anonsql.data.units`); this
module counts the units of each class of a node from them.

What each count is (the definitions the guard and ``check`` compute in SQL, too):

* k: a class holds at least k distinct units (Sweeney's "at least k individuals").
* The suppression limit is a share of the table's units. A unit counts as suppressed as soon
  as one of its records is, partly suppressed units included: the limit bounds the people the
  release touches, so counting a partly suppressed person as untouched would understate it.
* Count models (l-diversity: distinct, entropy, recursive (c,l), Grassberger): a sensitive
  value counts once per unit holding it in the class. Machanavajjhala et al.'s l-diversity
  (TKDD 2007) assumes one tuple per individual; counting each (value, unit) once keeps its
  argument about individuals (an adversary must rule out values that distinct people of the
  class hold), where counting rows would let one person's repeated value pass for several.
* Distribution models (t-closeness, beta-likeness, delta-disclosure): each unit weighs once in
  its class, shared equally among the distinct values it holds there; the table's distribution
  weighs each unit once alike. A unit holding one value weighs 1 on it: the plain definitions.

What the search may infer (every rule below is what :class:`Requirements` proves for rows,
re-proven for these counts; the tests hold the searches to the exhaustive scan):

* k-anonymity and distinct l-diversity stay monotone with suppression: a union of classes
  holds at least the distinct units (values) of each part. So a class failing them has parts
  failing them in every specialization, and its records are suppressed there too: the units
  with a record in such classes are a lower bound of the suppressed units of the node and of
  every specialization (``below``), and the suppressed records of a generalization are a
  subset of the node's, so its suppressed units are too.
* The other models are not treated as monotone in either sense: with units spanning several
  classes, a union's distribution is not the mixture of its parts' (a unit's weight is shared
  anew), so the convexity bounds of :meth:`Requirements.screen` do not carry over. Nodes are
  then settled by their own checks only.
* Risk thresholds over all released classes (table-level models) and a population table are
  refused with units of several records (:func:`check_unit_models`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from anonsql.data.classes import Partition
from anonsql.data.histogram import Histogram
from anonsql.errors import InputError
from anonsql.models.base import NULL_SENSITIVE, ClassStats, PrivacyModel, unwrap
from anonsql.models.requirements import Assessment, Requirements, Screening, _subset


def check_unit_models(models: list[PrivacyModel]) -> None:
    """Refuse the models whose unit counts are not defined here, before anything is written."""
    for m in models:
        if m.table_level or m.needs_population:
            raise InputError(
                f"{m.describe()} is not counted in units whose rows hold several "
                f"quasi-identifier tuples or sensitive values (documentation: Privacy units); "
                f"use k, l-diversity, t-closeness, beta-likeness or delta-disclosure"
            )


@dataclass
class UnitStats:
    """A node's classes counted in units: their sizes, the class of each distinct
    (class, unit), and the stats each kind of model reads."""

    sizes: np.ndarray  # distinct units per class
    single_class: np.ndarray  # the class of each unit of one record
    pair_class: np.ndarray  # one entry per distinct (class, unit) of units of several records
    pair_unit: np.ndarray
    #: the (counts, shares) stats of a sensitive attribute (None: the only one; i: the i-th
    #: of several), computed when a model first reads it
    attribute: Callable[[int | None], tuple[ClassStats, ClassStats]]
    _seen: dict = field(default_factory=dict, repr=False)

    def of(self, model: PrivacyModel) -> ClassStats:
        """What ``model`` reads: a count model the counts of its attribute (a value once per
        unit holding it), a distribution model the shares (each unit weighing once)."""
        if not getattr(model, "needs_sensitive", False):
            return ClassStats(self.sizes)  # sizes alone: no sensitive attribute to count
        _, index = unwrap(model)
        got = self._seen.get(index)
        if got is None:
            got = self._seen[index] = self.attribute(index)
        counts, shares = got
        return shares if getattr(model, "reads_distribution", False) else counts

    @property
    def counts(self) -> ClassStats:
        """The count stats of the first (or only) sensitive attribute, or the sizes alone."""
        return self.of(_FIRST)

    def units_in(self, classes: np.ndarray) -> int:
        """Distinct units with a record in the classes selected by the mask ``classes``."""
        several = len(np.unique(self.pair_unit[classes[self.pair_class]]))
        return int(classes[self.single_class].sum()) + several


@dataclass
class UnitRequirements(Requirements):
    """:class:`Requirements` with every count a count of distinct units (module docstring)."""

    #: units of the table (every unit with a record, suppressed or not)
    units: int = 0
    #: units with a record left out before the search (a value its hierarchy lacks, or no
    #: unit): suppressed already, charged to the limit
    missing_units: int = 0
    _unit_overall: dict = field(default_factory=dict, repr=False)
    _multi: np.ndarray | None = field(default=None, repr=False)

    #: counts of classes do not add up when classes merge (the searches' projection sieve
    #: and other bounds over summed counts are off)
    additive: ClassVar[bool] = False

    def validate(self, hist: Histogram) -> None:
        """:meth:`Requirements.validate` with the table's units as its size."""
        check_unit_models(self.models)
        for m in self.models:
            if m.needs_sensitive and hist.sens is None:
                raise InputError(f"{m.describe()} needs a sensitive attribute (--sa)")
            distinct = None
            if hist.sens is not None:
                _, labels = self._values(hist, unwrap(m)[1])
                distinct = len([v for v in labels if v != NULL_SENSITIVE])  # NULL is no value
            m.validate(self.units, distinct)

    def allowed(self, rows: int) -> float:
        """Units that may be suppressed, less those suppressed already (``rows`` is the
        histogram's records, not its units, and is not read)."""
        return self.suppression_limit * self.units - self.missing_units

    def monotone(self, rows: int) -> bool:
        allowed = self.allowed(rows)
        if allowed >= self.units - self.missing_units:
            return True  # everything may be suppressed: every node is anonymous
        return all(m.monotone_with_suppression for m in self.models)

    # -- the counts ------------------------------------------------------------------------------
    def unit_stats(self, part: Partition, hist: Histogram) -> UnitStats:
        """The node's classes in units. A unit of one record (most of them, typically) is
        counted by adding, as rows are; only the records of units with several are
        deduplicated per class, by sorting their (class, unit) keys."""
        assert hist.unit_ids is not None
        units = max(hist.units, 1)
        rc = part.classes_of_rows(hist).astype(np.int64, copy=False)
        uid = hist.unit_ids
        multi = self._several(hist)
        single_class = rc[~multi]
        cu = np.unique(rc[multi] * units + uid[multi])
        pair_class, pair_unit = cu // units, cu % units
        sizes = np.bincount(single_class, minlength=part.classes).astype(np.int64)
        sizes += np.bincount(pair_class, minlength=part.classes).astype(np.int64)

        def attribute(index: int | None) -> tuple[ClassStats, ClassStats]:
            if hist.sens is None:
                plain = ClassStats(sizes)
                return plain, plain
            values, labels = self._values(hist, index)
            overall = self._overall_by_unit(hist, index)
            width = len(labels)
            null = labels.index(NULL_SENSITIVE) if NULL_SENSITIVE in labels else -1
            valued = values != null
            # units of one record: their one value, weight 1 (count and share alike)
            one = valued & ~multi
            single_key = rc[one] * width + values[one]
            # units of several: their distinct (class, unit, value), sorted by (class, unit)
            several = valued & multi
            cuv = np.unique((rc[several] * units + uid[several]) * width + values[several])
            c_u, value = cuv // width, cuv % width
            # each unit weighs once, shared among its values in the class
            _, per_unit = np.unique(c_u, return_counts=True)
            w = np.repeat(1.0 / per_unit, per_unit)
            keys = np.concatenate([single_key, (c_u // units) * width + value])
            held = np.ones(len(keys))
            weight = np.concatenate([np.ones(len(single_key)), w])
            cv, (per_cv, ws) = _sum_by(keys, [held, weight], part.classes * width)
            h = self.sensitive_hierarchy
            # a value counts once per unit holding it
            counts = ClassStats(
                sizes, cv // width, cv % width, np.rint(per_cv).astype(np.int64), overall, labels, h
            )
            shares = ClassStats(sizes, cv // width, cv % width, ws, overall, labels, h)
            return counts, shares

        return UnitStats(sizes, single_class, pair_class, pair_unit, attribute)

    def _values(self, hist: Histogram, index: int | None) -> tuple[np.ndarray, list[str]]:
        """Each record's value of the sensitive attribute (``index`` of several) and their
        labels."""
        assert hist.sens is not None
        if index is None or self.composite is None:
            return hist.sens, hist.sens_labels
        return self.composite.codes[hist.sens, index], self.composite.labels[index]

    def _several(self, hist: Histogram) -> np.ndarray:
        """Which records belong to a unit with several records (computed once)."""
        if self._multi is None:
            assert hist.unit_ids is not None
            per_unit = np.bincount(hist.unit_ids, minlength=hist.units)
            self._multi = per_unit[hist.unit_ids] > 1
        return self._multi

    def _overall_by_unit(self, hist: Histogram, index: int | None = None) -> np.ndarray:
        """The table's distribution of a sensitive attribute with each unit weighing once,
        shared among its distinct values (records outside the search included; NULL is no
        value)."""
        got = self._unit_overall.get(index)
        if got is not None:
            return got
        assert hist.sens is not None and hist.unit_ids is not None
        values, labels = self._values(hist, index)
        width = len(labels)
        uid, val = hist.unit_ids, values
        if hist.missing_unit_values is not None:
            left_out = hist.missing_unit_values[1]
            if index is not None and self.composite is not None:
                left_out = self.composite.codes[left_out, index]
            uid = np.concatenate([uid, hist.missing_unit_values[0]])
            val = np.concatenate([val, left_out])
        if NULL_SENSITIVE in labels:
            keep = val != labels.index(NULL_SENSITIVE)
            uid, val = uid[keep], val[keep]
        uv = np.unique(uid * width + val)
        u, v = uv // width, uv % width
        _, per_unit = np.unique(u, return_counts=True)
        w = np.repeat(1.0 / per_unit, per_unit)  # uv is sorted by unit
        dist = np.bincount(v, w, minlength=width)
        total = dist.sum()
        got = self._unit_overall[index] = dist / total if total > 0 else dist
        return got

    def stats(self, part: Partition, hist: Histogram) -> ClassStats:
        """The count models' view (``check`` and the report read the models through it)."""
        return self.unit_stats(part, hist).counts

    # -- checks ------------------------------------------------------------------------------------
    def _passing(self, us: UnitStats, models: list[PrivacyModel], passing: np.ndarray) -> None:
        for m in models:
            still = np.flatnonzero(passing)
            if not len(still):
                return
            # a model on one of several attributes reads that attribute's stats (us.of)
            inner, _ = unwrap(m)
            passing[still] = inner.check(_subset_stats(us.of(m), still))

    def assess(self, part: Partition, hist: Histogram) -> Assessment:
        us = self.unit_stats(part, hist)
        passing = np.ones(part.classes, dtype=bool)
        monotone = [m for m in self.class_models if m.monotone_with_suppression]
        self._passing(us, monotone, passing)
        self._passing(us, [m for m in self.class_models if m not in monotone], passing)
        suppressed = us.units_in(~passing)
        return Assessment(passing, suppressed, suppressed <= self.allowed(hist.rows))

    def screen(self, part: Partition, hist: Histogram, stop=None) -> Screening:
        """:meth:`Requirements.screen` in units: ``below`` is the units with a record in a
        class failing k-anonymity or distinct l-diversity (suppressed in every
        specialization, module docstring); a node is never ``clean``."""
        us = self.unit_stats(part, hist)
        allowed = self.allowed(hist.rows)
        passing = np.ones(part.classes, dtype=bool)
        monotone = [m for m in self.class_models if m.monotone_with_suppression]
        rest = [m for m in self.class_models if m not in monotone]
        self._passing(us, monotone, passing)
        below = float(us.units_in(~passing))
        if below > allowed:
            return Screening(False, None, below)
        if rest and stop is not None and stop(below):
            return Screening(None, None, below)
        self._passing(us, rest, passing)
        suppressed = us.units_in(~passing)
        a = Assessment(passing, suppressed, suppressed <= allowed)
        return Screening(a.anonymous, a, below)


class _First:
    """A model reading the first sensitive attribute's counts (:attr:`UnitStats.counts`)."""

    needs_sensitive = True
    reads_distribution = False


_FIRST: PrivacyModel = _First()  # type: ignore[assignment]


def _sum_by(
    keys: np.ndarray, weights: list[np.ndarray], span: int
) -> tuple[np.ndarray, list[np.ndarray]]:
    """The distinct ``keys`` (sorted) and each weight summed per key: a counting pass when the
    key space is small, else a sort."""
    # declared for both branches: mypy 1.19 crashes inferring it from the tuple unpacking
    uniq: np.ndarray
    if span <= 4 * len(keys) + 1024:
        sums = [np.bincount(keys, w, minlength=span) for w in weights]
        present = np.bincount(keys, minlength=span) > 0
        uniq = np.flatnonzero(present)
        return uniq, [x[uniq] for x in sums]
    uniq, inverse = np.unique(keys, return_inverse=True)
    return uniq, [np.bincount(inverse, w, minlength=len(uniq)) for w in weights]


def _subset_stats(stats: ClassStats, classes: np.ndarray) -> ClassStats:
    return _subset(stats, classes)


__all__ = ["UnitRequirements", "UnitStats", "check_unit_models"]

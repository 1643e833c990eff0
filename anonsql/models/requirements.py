"""A privacy goal: models that every class must satisfy, and how many records may be
suppressed to get there (ARX's semantics: classes that fail a model are suppressed; the
transformation is anonymous when the suppressed records stay within the limit).

What a check of one node proves about the others (:meth:`Requirements.screen`) follows from
the models' monotonicity (``monotone_without_suppression`` / ``monotone_with_suppression`` in
:mod:`anonsql.models.base`) and from one fact about the lattice: every class of a node is a
union of classes of each of its specializations (seed 002 section II.C).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import pairwise
from typing import ClassVar

import numpy as np

from anonsql.data.classes import Partition, group_rows
from anonsql.data.histogram import Histogram
from anonsql.errors import InputError
from anonsql.hierarchy.hierarchy import Hierarchy
from anonsql.models.base import EPS, NULL_SENSITIVE, ClassStats, Composite, PrivacyModel, unwrap
from anonsql.models.beta_likeness import BasicBetaLikeness, EnhancedBetaLikeness
from anonsql.models.delta_disclosure import DeltaDisclosure
from anonsql.models.l_diversity import EntropyLDiversity
from anonsql.models.risk_thresholds import enforce_table_models
from anonsql.models.t_closeness import (
    EqualDistanceEMD,
    HierarchicalEMD,
    L1Closeness,
    OrderedDistanceEMD,
)

#: classes passing the monotone models are screened against the others largest first: the
#: first 256, then up to the 4,096th and the 65,536th, then the rest. A model call costs a fixed
#: overhead, so a first chunk of a few hundred classes costs little more than one of a few; on
#: large tables the largest classes usually prove a node non-anonymous before the many small
#: ones are assessed (see :meth:`Requirements.screen`)
_SCREEN_CHUNKS = (256, 4096, 65536)


@dataclass
class Assessment:
    passing: np.ndarray  # per class: satisfies every model
    suppressed_rows: int
    anonymous: bool

    @property
    def suppressed(self) -> np.ndarray:
        return ~self.passing


@dataclass
class Screening:
    """What one check of a node proves (:meth:`Requirements.screen`).

    ``anonymous`` is None when the check stopped before settling it (the caller's ``stop``);
    ``assessment`` is the exact assessment whenever every class was assessed. ``below`` is a
    lower bound of the records suppressed in the node *and in every specialization of it*;
    ``below`` above the limit proves them all non-anonymous. ``clean`` says that no class
    fails a model that is not monotone with suppression, so a generalization suppresses
    exactly what the monotone models make it suppress.
    """

    anonymous: bool | None
    assessment: Assessment | None
    below: float
    clean: bool = False


@dataclass
class Requirements:
    models: list[PrivacyModel]
    suppression_limit: float = 0.0
    sensitive_hierarchy: Hierarchy | None = None
    #: the population table's histogram (QIs only, same pinned hierarchies), for the models
    #: with ``needs_population`` (k-map, delta-presence)
    population: Histogram | None = None
    #: several sensitive attributes: the histogram's sensitive values are tuples
    #: (:class:`~anonsql.models.base.Composite`); each model on one is an ``OnAttribute``
    composite: Composite | None = None
    _overall: np.ndarray | None = field(default=None, repr=False)
    #: per model: the largest class value over point masses (see :meth:`_convex_form`)
    _f_max: dict = field(default_factory=dict, repr=False)
    #: class counts add up when classes merge (rows, or units of one record each): the
    #: searches' bounds over summed counts (Flash's projection sieve) hold
    additive: ClassVar[bool] = True

    def __post_init__(self) -> None:
        lim = self.suppression_limit
        if isinstance(lim, bool) or not isinstance(lim, (int, float)) or not 0 <= lim <= 1:
            raise InputError(f"the suppression limit must be a share in [0, 1], got {lim!r}")
        if not self.models:
            raise InputError("give at least one privacy model (e.g. k)")

    @property
    def needs_sensitive(self) -> bool:
        return any(m.needs_sensitive for m in self.models)

    @property
    def class_models(self) -> list[PrivacyModel]:
        """The per-class models (every model but the table-level risk thresholds)."""
        return [m for m in self.models if not m.table_level]

    @property
    def table_models(self) -> list:
        return [m for m in self.models if m.table_level]

    def validate(self, hist: Histogram) -> None:
        distinct = (
            len([v for v in hist.sens_labels if v != NULL_SENSITIVE])
            if hist.sens is not None
            else None
        )  # NULL is no value
        if any(m.needs_population for m in self.models) and self.population is None:
            names = ", ".join(m.describe() for m in self.models if m.needs_population)
            raise InputError(f"{names} needs a population table")
        for m in self.models:
            if m.needs_sensitive and hist.sens is None:
                raise InputError(f"{m.describe()} needs a sensitive attribute (--sa)")
            _, index = unwrap(m)
            if index is not None and self.composite is not None:
                # each attribute's distinct values (NULL is no value)
                labels = self.composite.labels[index]
                distinct = len([v for v in labels if v != NULL_SENSITIVE])
            m.validate(hist.rows, distinct)

    def stats(self, part: Partition, hist: Histogram) -> ClassStats:
        if hist.sens is not None and self._overall is None:
            self._overall = hist.overall_distribution()
        population, population_only = None, 0
        if self.population is not None and any(m.needs_population for m in self.models):
            population, population_only = population_classes(part, self.population)
        return ClassStats(
            part.sizes,
            part.pair_class,
            part.pair_value,
            part.pair_count,
            self._overall,
            hist.sens_labels or None,
            self.sensitive_hierarchy,
            population,
            population_only,
            self.composite,
        )

    def unreleasable(self, stats: ClassStats) -> bool:
        """Whether a class of the population without records of the table fails a model
        (delta-presence with delta_min > 0): no suppression repairs it, so the node fails
        whatever the limit, and so do its specializations (their population-only classes
        split it; :mod:`anonsql.models.delta_presence`)."""
        return any(m.fails_unreleased(stats) for m in self.models)

    def _enforce_tables(
        self, part: Partition, passing: np.ndarray, rows: int | None = None
    ) -> np.ndarray:
        """``passing`` less the classes the table-level models suppress (smallest first, ties
        by node ids: :func:`~anonsql.models.risk_thresholds.enforce_table_models`)."""
        tables = self.table_models
        if not tables:
            return passing
        released = np.flatnonzero(passing)
        if len(released):
            nodes = part.nodes[released]
            keys = [nodes[:, j] for j in range(nodes.shape[1] - 1, -1, -1)]
            order = np.lexsort([*keys, part.sizes[released]])
            budget = None
            if rows is not None:
                budget = self.allowed(rows) - float(part.sizes[~passing].sum())
            dropped = enforce_table_models(tables, part.sizes[released], order, budget)
            passing = passing.copy()
            passing[released[dropped]] = False
        return passing

    def assess(self, part: Partition, hist: Histogram) -> Assessment:
        """Which classes pass every model, and whether the suppressed records stay within the
        limit. The models monotone with suppression (cheap counts) run first; the others only
        on the classes still passing, which is the same result for less work."""
        stats = self.stats(part, hist)
        if self.unreleasable(stats):
            # nothing can be released (the guard withholds every row)
            return Assessment(np.zeros(part.classes, dtype=bool), hist.rows, False)
        passing = np.ones(part.classes, dtype=bool)
        for m in self.class_models:
            if m.monotone_with_suppression:
                passing &= m.check(stats)
        for m in self.class_models:
            if not m.monotone_with_suppression:
                still = np.flatnonzero(passing)
                passing[still] = m.check(_subset(stats, still))
        passing = self._enforce_tables(part, passing, hist.rows)
        suppressed_rows = int(part.sizes[~passing].sum())
        return Assessment(
            passing, suppressed_rows, suppressed_rows <= self.suppression_limit * hist.rows
        )

    # -- what a check proves about other nodes ---------------------------------------------------
    def allowed(self, rows: int) -> float:
        """Records that may be suppressed in a table of ``rows`` records."""
        return self.suppression_limit * rows

    def monotone(self, rows: int) -> bool:
        """Whether anonymity is monotone over the lattice for these models and this limit, so
        that an anonymous node makes its generalizations anonymous and a non-anonymous one its
        specializations non-anonymous (predictive tagging is sound).

        With less than one record allowed, nothing may be suppressed and monotonicity without
        suppression decides; with every record allowed, every node is anonymous except those
        with a population-only class failing delta-presence, and a node without one has
        generalizations without one (:meth:`unreleasable`); otherwise every model must be
        monotone with suppression (the property is closed under conjunction: a union passes
        all of them as soon as one of its classes does)."""
        allowed = self.allowed(rows)
        if allowed >= rows:
            return True
        if allowed < 1:
            return all(m.monotone_without_suppression for m in self.models)
        return all(m.monotone_with_suppression for m in self.models)

    @property
    def not_monotone_with_suppression(self) -> list[PrivacyModel]:
        return [m for m in self.models if not m.monotone_with_suppression]

    def screen(
        self,
        part: Partition,
        hist: Histogram,
        stop: Callable[[float], bool] | None = None,
    ) -> Screening:
        """Assess a node in stages, proving as much about its neighbours as it can.

        1. The models monotone with suppression (M: k-anonymity, distinct l-diversity) are
           assessed on every class. A union of classes passes M as soon as one of them does,
           so a class of the node failing M is a union of classes failing M in every
           specialization: its records are suppressed there too. ``below`` starts with them.
        2. ``stop(below)``, when given, may end the check here (e.g. when a node suppressing
           that many records cannot beat the best score); ``anonymous`` is then None.
        3. The other models (R) are assessed on the classes passing M, largest first, in
           chunks. Each such class C failing R adds to ``below``: C's parts in a specialization
           that are not suppressed pass R, so when every R model is monotone without
           suppression at least one part is suppressed (one record); for a model with a
           convex function f of the class distribution that every passing class keeps at
           f <= tau (t-closeness: the distance; entropy l-diversity: minus the entropy;
           beta-likeness and delta-disclosure: how far the share of a value exceeds the cap
           a passing class keeps it under, which holds although delta-disclosure is not
           monotone without suppression), the suppressed share w of C satisfies
           f(C) <= w * f_max + (1 - w) * tau (the parts' f averaged by size bounds f(C) from
           above, f_max = max f over point masses), so w >= (f(C) - tau) / (f_max - tau).
           The check stops as soon as ``below`` exceeds the limit: the node and every
           specialization are then proven non-anonymous.
        4. An anonymous node whose classes all pass R (those failing M included) is ``clean``:
           a generalization's classes are unions of classes passing R, hence pass R, and the
           generalization suppresses only what M makes it suppress, which is at most what the
           node suppresses.

        Without R models this is :meth:`assess` and ``below`` is the suppressed count.
        """
        allowed = self.allowed(hist.rows)
        stats = self.stats(part, hist)
        sizes = part.sizes
        if self.unreleasable(stats):
            # the node and every specialization fail whatever they suppress: a bound above
            # any limit says so
            none = Assessment(np.zeros(part.classes, dtype=bool), hist.rows, False)
            return Screening(False, none, float(hist.rows) + 1.0)
        passing = np.ones(part.classes, dtype=bool)
        rest = []
        for m in self.class_models:
            if m.monotone_with_suppression:
                passing &= m.check(stats)
            else:
                rest.append(m)
        # table-level models (risk thresholds) only suppress more: every bound below holds
        # with them, but a node is never clean (what a generalization suppresses for them
        # depends on all its classes)
        tables = bool(self.table_models)
        below = float(sizes[~passing].sum())
        if below > allowed:
            rows = int(below)
            a = Assessment(passing, rows, False)
            return Screening(False, a if not (rest or tables) else None, below)
        if not rest:
            passing = self._enforce_tables(part, passing, hist.rows)
            rows = int(sizes[~passing].sum())
            a = Assessment(passing, rows, rows <= allowed)
            return Screening(a.anonymous, a, below)
        if stop is not None and stop(below):
            return Screening(None, None, below)
        candidates = np.flatnonzero(passing)
        candidates = candidates[np.argsort(-sizes[candidates], kind="stable")]
        bounds = [0, *[b for b in _SCREEN_CHUNKS if b < len(candidates)], len(candidates)]
        failed = below
        m_failing = ~passing
        # steps 3 and 4 rest on every R model being monotone without suppression
        merges_pass = all(m.monotone_without_suppression for m in rest)
        for lo, hi in pairwise(bounds):
            chunk = candidates[lo:hi]
            ok, share = self._assess_rest(rest, _subset(stats, chunk))
            fails = ~ok
            passing[chunk[fails]] = False
            c_sizes = sizes[chunk[fails]].astype(np.float64)
            failed += float(c_sizes.sum())
            # records are whole, so a class's bound rounds up (after a slack that covers
            # rounding errors in the class values); a failing class suppresses at least one
            # when unions of passing classes pass
            proven = np.maximum(np.ceil(c_sizes * (share[fails] - 1e-9)), 0.0)
            if merges_pass:
                proven = np.maximum(proven, 1.0)
            below += float(proven.sum())
            if below > allowed:
                return Screening(False, None, below)
            if failed > allowed and below + float(sizes[candidates[hi:]].sum()) <= allowed:
                # not anonymous, and the classes left cannot lift the bound over the limit
                return Screening(False, None, below)
        if tables:
            passing = self._enforce_tables(part, passing, hist.rows)
            failed = float(sizes[~passing].sum())
        rows = int(failed)
        a = Assessment(passing, rows, rows <= allowed)
        clean = False
        if merges_pass and not tables and a.anonymous and not (passing ^ ~m_failing).any():
            # every class passing M passes R: clean if the classes failing M pass R too
            others = np.flatnonzero(m_failing)
            clean = bool(self._assess_rest(rest, _subset(stats, others))[0].all())
        return Screening(a.anonymous, a, below, clean)

    def _assess_rest(
        self, models: list[PrivacyModel], stats: ClassStats
    ) -> tuple[np.ndarray, np.ndarray]:
        """Which classes pass every model, and the share of each class's records that
        step 3 of :meth:`screen` proves suppressed in any specialization (0 where no bound
        is known)."""
        ok = np.ones(stats.classes, dtype=bool)
        share = np.zeros(stats.classes)
        for wrapped in models:
            # a model on one of several sensitive attributes: its bound is the inner model's
            # on that attribute's distribution, a sound bound for the conjunction as well
            # (a class's parts that are released pass every model, this one included)
            m, index = unwrap(wrapped)
            m_stats = stats if index is None else stats.attribute(index)
            values = m.class_values(m_stats)
            ok &= m.passes(values)
            convex = self._convex_form(m, m_stats)
            if convex is not None:
                f, tau, f_max = convex(values)
                with np.errstate(invalid="ignore"):
                    s = np.clip((f - tau) / (f_max - tau), 0.0, 1.0)
                # the convexity argument weighs a class's parts by their non-NULL records
                # (the distributions are over those): s is a share of those records, so of
                # the class's records s * vals / size are proven suppressed
                if m_stats.vals is not None:
                    with np.errstate(invalid="ignore", divide="ignore"):
                        s = s * m_stats.vals / np.maximum(m_stats.sizes, 1)
                # a class without values has s = NaN, no bound: fmax keeps the other side
                # (the same as np.maximum with NaN read as 0, share being >= 0, cheaper)
                share = np.fmax(share, s)
        return ok, share

    def _convex_form(self, model: PrivacyModel, stats: ClassStats):
        """For a model with a convex function f of the class distribution that every passing
        class keeps at f <= tau (for most models the class value, up to a monotone
        transform), a function mapping class values to ``(f, tau, f_max)``, f <= f_max on
        every distribution. None for other models (recursive (c,l)-diversity's test is not of
        this form, Grassberger's entropy estimate is not a function of the distribution)."""
        if isinstance(model, (BasicBetaLikeness, EnhancedBetaLikeness, DeltaDisclosure)):
            # each value s has a cap u(s) on its share in a passing class (beta-likeness:
            # q (1 + bound); delta-disclosure: q 2^delta, absent values being 0 < u), so
            # f = max(0, max_s (p(s) - u(s)) / (1 - u(s))) over the values with u < 1 is convex
            # (a maximum of functions linear in p), 0 on passing classes, 1 at most
            assert stats.overall is not None  # these models read the sensitive attribute
            caps = model.share_caps(stats.overall)
            if not (caps < 1).any():
                return None
            return lambda values: (_over_caps(stats, caps), 0.0, 1.0)
        if isinstance(model, EntropyLDiversity):
            # f = -entropy (convex: entropy is concave), tau = -(ln l - EPS), f_max = 0 (a
            # point mass has entropy 0)
            tau = -(math.log(model.l) - EPS)
            if tau >= 0:
                return None  # l = 1: no class fails
            return lambda values: (-np.log(values), tau, 0.0)
        if isinstance(model, (EqualDistanceEMD, HierarchicalEMD, OrderedDistanceEMD, L1Closeness)):
            # f = the distance (convex, see anonsql.models.t_closeness); its maximum over the
            # simplex is reached at a vertex, a class holding one value only
            key = (id(model), id(stats.overall))
            if key not in self._f_max:
                self._f_max[key] = float(np.nanmax(model.class_values(_point_masses(stats))))
            tau, f_max = model.t + EPS, self._f_max[key]
            if f_max <= tau:
                return None
            return lambda values: (values, tau, f_max)
        return None


def population_table(models: list[PrivacyModel]) -> str | None:
    """The population table the models read (one table for all of them), or None."""
    tables = {m.population for m in models if m.needs_population}  # type: ignore[attr-defined]
    if len(tables) > 1:
        raise InputError(f"the models name different population tables: {sorted(tables)}")
    return next(iter(tables), None)


def population_histogram(db, models: list[PrivacyModel], qis: list[str], keys: list[str]):
    """The population table's histogram over the QIs (one GROUP BY in the database, the
    sample's query: :func:`anonsql.data.histogram.histogram_query`), for the models that
    need it; None otherwise. Population rows with values a hierarchy lacks can match no
    released class and are left out."""
    name = population_table(models)
    if name is None:
        return None
    db.backend.require_columns(name, list(qis))
    return Histogram.from_database(db, name, list(qis), list(keys), None, missing="suppress")


def population_classes(part: Partition, population: Histogram) -> tuple[np.ndarray, int]:
    """Per class of ``part``: the population's records in it; and how many classes of the
    population hold no class of ``part`` (population-only classes). The population's rows
    (leaf ids of the same hierarchies) generalize with the partition's levels; their class keys
    and the partition's are grouped together, so a population row counts for the class with
    the same generalized values (0 where the population has none)."""
    hs = part.hierarchies
    m = len(hs)
    pop_codes = np.empty((len(population.counts), m), dtype=np.int64)
    widths = []
    for j, h in enumerate(hs):
        lv = part.levels[j]
        pop_codes[:, j] = h.level_rank32[h.ancestor_column(lv)[population.codes[:, j]]]
        widths.append(len(h.level_nodes[lv]))
    keys = np.concatenate([np.asarray(part.codes, dtype=np.int64), pop_codes])
    ids, groups = group_rows(keys, widths)
    per_group = np.bincount(ids[part.classes :], population.weights, minlength=groups)
    # the partition's classes are distinct groups: the others are the population's alone
    return per_group[ids[: part.classes]], groups - part.classes


def _over_caps(stats: ClassStats, caps: np.ndarray) -> np.ndarray:
    """Per class: ``max(0, max_s (p(s) - caps(s)) / (1 - caps(s)))`` over its values with a
    cap below 1 (absent values and values with a cap of 1 or more only contribute 0)."""
    assert stats.pair_class is not None and stats.pair_value is not None  # as caps: sensitive
    u = caps[stats.pair_value]
    capped = u < 1
    over = np.where(capped, (stats.shares() - u) / np.where(capped, 1 - u, 1.0), 0.0)
    out = np.zeros(stats.classes)
    np.maximum.at(out, stats.pair_class, over)
    return out


def _subset(stats: ClassStats, classes: np.ndarray) -> ClassStats:
    """The classes ``classes`` of ``stats``, renumbered 0..len-1 in that order."""
    pos = np.full(stats.classes, -1, dtype=np.int64)
    pos[classes] = np.arange(len(classes))
    pair_class = pos[stats.pair_class] if stats.pair_class is not None else None
    keep = pair_class >= 0 if pair_class is not None else None
    # the three sparse arrays come together (ClassStats.__post_init__)
    value, count = stats.pair_value, stats.pair_count
    return ClassStats(
        stats.sizes[classes],
        pair_class[keep] if pair_class is not None else None,
        value[keep] if value is not None and keep is not None else None,
        count[keep] if count is not None and keep is not None else None,
        stats.overall,
        stats.labels,
        stats.sensitive_hierarchy,
        stats.population[classes] if stats.population is not None else None,
        stats.population_only,
        stats.composite,
    )


def _point_masses(stats: ClassStats) -> ClassStats:
    """One class per sensitive value, holding that value only."""
    assert stats.overall is not None  # a model of the sensitive attribute asks for them
    v = len(stats.overall)
    one = np.ones(v, dtype=np.int64)
    return ClassStats(
        one,
        np.arange(v),
        np.arange(v),
        one,
        stats.overall,
        stats.labels,
        stats.sensitive_hierarchy,
    )

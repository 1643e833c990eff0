"""What the search needs of a node whose classes do not fit the memory budget, computed from
its classes in bounded batches (issue 19): the privacy models' verdict, the quality model's
score and partition bound, and the bound of records suppressed in every specialization.

A node of a histogram kept in the engine (``engine_classes.py``) can have more
classes than the budget holds (near-unique data, nodes near the bottom of the lattice). Its
classes then come from the engine in batches of whole classes (ordered by their QI values
when a class can span several rows, i.e. with a sensitive attribute, or when the order
matters, i.e. with table-level models), and each batch is a :class:`Partition` assessed by the
same per-class code as an in-memory node (:meth:`PrivacyModel.check`,
:meth:`Requirements._assess_rest`); what crosses batches is reduced:

* per-class models (k-anonymity, every l-diversity, t-closeness, beta-likeness,
  delta-disclosure, k-map, delta-presence) decide each class alone, so the batches' verdicts
  are the node's. With a population table (k-map, delta-presence) each batch's classes are
  counted in the population as in memory; the population-only classes (which the in-memory
  check counts from the whole node) are the population's classes at the node's levels less
  those matched by a class of the node;
* table-level models (risk thresholds) suppress released classes smallest first, ties by QI
  node ids (:func:`~anonsql.models.risk_thresholds.enforce_table_models`): the released
  classes' sizes are kept in the order the engine sends them (by node ids), 8 bytes a class,
  which is the order of the in-memory tie-break; which classes that drops is then a size
  threshold and a count of classes at that size;
* the quality models' scores are sums over classes (suppressed classes' domain shares for
  Loss, squared sizes for DM, ...) or per-QI value counts of the suppressed records
  (non-monotone entropy), summed over batches. When the table-level models drop classes, or a
  population-only class fails delta-presence (every record suppressed), which classes are
  suppressed is known only at the end: the score is then computed by a second pass over the
  batches, when it is asked for.

The verdict, suppressed records, released classes and score are those of the in-memory
assessment (up to floating-point summation order; ``tests/test_engine_histogram.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

import numpy as np

from anonsql.data.classes import Partition, group_rows
from anonsql.metrics.quality import (
    AECS,
    Alteration,
    Discernibility,
    DiscernibilityStar,
    Height,
    Loss,
    NonMonotoneEntropy,
    NonUniformEntropy,
    Precision,
    QualityModel,
)
from anonsql.models.base import ClassStats
from anonsql.models.requirements import Assessment, Requirements, Screening, _subset
from anonsql.models.risk_thresholds import enforce_table_models

#: quality models whose score :class:`NodeReducer` reduces over batches (exact types: a
#: subclass may score differently)
SUMMABLE: tuple[type[QualityModel], ...] = (
    Loss,
    Precision,
    Height,
    NonUniformEntropy,
    NonMonotoneEntropy,
    AECS,
    Discernibility,
    DiscernibilityStar,
    Alteration,
)


def summable(quality: QualityModel) -> bool:
    return type(quality) in SUMMABLE


@dataclass
class SummaryAssessment(Assessment):
    """An assessment without its per-class flags (``passing`` is empty): ``released`` is
    the number of classes that pass."""

    released: int = 0


@dataclass
class _Rule:
    """Classes suppressed beyond those failing a per-class model: every class
    (``everything``), or released classes smaller than ``size``, and the first ``ties``
    released classes of that size in the engine's order."""

    everything: bool = False
    size: float = -np.inf
    ties: int = 0


class NodeSummary:
    """A node's assessment and score without its classes (see the module docstring)."""

    def __init__(self, levels: tuple[int, ...]) -> None:
        self.levels = tuple(levels)
        self.classes = 0
        self.rows = 0
        #: records in classes failing the models monotone with suppression
        self.below_monotone = 0.0
        #: ``below_monotone`` plus what :meth:`Requirements.screen`'s step 3 proves for the
        #: classes failing the other models
        self.below = 0.0
        self.clean = False
        self.unreleasable = False
        self.assessment: SummaryAssessment | None = None
        self.bound: float | None = None
        self._score: float | None = None
        self._rescore: Callable[[], float] | None = None
        self._has_rest = False
        self._has_tables = False
        #: set when the engine proved the node non-anonymous from its class sizes alone
        #: (:meth:`proven`): the records in classes smaller than k; the rest is computed
        #: by ``_complete`` (a pass over the batches) only if asked for
        self.proven_below: float | None = None
        self._complete: Callable[[], NodeSummary] | None = None

    @classmethod
    def proven(
        cls,
        levels: tuple[int, ...],
        below: float,
        classes: int,
        rows: int,
        bound: float | None,
        complete: Callable[[], NodeSummary],
    ) -> NodeSummary:
        """A node whose classes smaller than k hold ``below`` records, more than may be
        suppressed: not anonymous, and neither is any specialization (k-anonymity is
        monotone with suppression), whatever the other models say."""
        out = cls(levels)
        out.proven_below = float(below)
        out.below_monotone = out.below = float(below)
        out.classes, out.rows, out.bound = classes, rows, bound
        out._complete = complete
        return out

    def _fill(self) -> None:
        if self._complete is None:
            return
        full = self._complete()
        self._complete = None
        self.__dict__.update({k: v for k, v in full.__dict__.items() if k != "proven_below"})

    @property
    def assessment(self) -> SummaryAssessment | None:
        self._fill()
        return self._assessment

    @assessment.setter
    def assessment(self, value: SummaryAssessment | None) -> None:
        self._assessment = value

    @property
    def score(self) -> float:
        self._fill()
        if self._score is None:
            assert self._rescore is not None
            self._score = self._rescore()
            self._rescore = None
        return self._score

    def screening(self, allowed: float, rows: int, stop=None) -> Screening:
        """What :meth:`Requirements.screen` returns for this node: the same verdict and
        stages (``stop`` is asked with the records the monotone models suppress); the
        bound ``below`` is the whole node's, which may exceed what the in-memory screen
        finds before it stops early (both are sound)."""
        if self.proven_below is not None and self._complete is not None:
            return Screening(False, None, self.proven_below)
        a = self.assessment
        assert a is not None
        if self.unreleasable:
            return Screening(False, a, float(rows) + 1.0)
        rest, tables = self._has_rest, self._has_tables
        if self.below_monotone > allowed:
            return Screening(False, a, self.below_monotone)
        if not rest:
            return Screening(a.anonymous, a, self.below_monotone)
        if stop is not None and stop(self.below_monotone):
            return Screening(None, None, self.below_monotone)
        return Screening(a.anonymous, a, self.below, self.clean and not tables)


class NodeReducer:
    """Assesses batches of whole classes of one node and reduces them to a
    :class:`NodeSummary`. ``rule`` (a second pass) suppresses more classes, see
    :class:`_Rule`."""

    def __init__(
        self,
        levels: tuple[int, ...],
        requirements: Requirements,
        quality: QualityModel,
        hist,
        rule: _Rule | None = None,
    ) -> None:
        self.levels = tuple(levels)
        self.req = requirements
        self.quality = quality
        self.hist = hist
        self.rule = rule
        self.monotone = [m for m in requirements.class_models if m.monotone_with_suppression]
        self.rest = [m for m in requirements.class_models if not m.monotone_with_suppression]
        self.tables = requirements.table_models
        self.merges_pass = all(m.monotone_without_suppression for m in self.rest)
        self.population = requirements.population is not None and any(
            m.needs_population for m in requirements.models
        )
        self.out = NodeSummary(levels)
        self.failed = 0.0
        self.released = 0
        self.matched = 0
        self.rest_failed = False
        self.clean = True
        self.released_sizes: list[np.ndarray] = []
        self.ties_seen = 0
        self.sum_squares = 0.0
        self.score = ScoreSum(quality, self.levels, hist)

    def add(self, part: Partition) -> None:
        stats = self.req.stats(part, self.hist)
        if self.population:
            # the batch's classes are counted in the whole population, as in memory; the
            # population-only classes are counted for the whole node in finish()
            assert stats.population is not None  # the requirements read a population
            self.matched += int((stats.population > 0).sum())
            stats = replace(stats, population_only=0)
        sizes = part.sizes
        passing = np.ones(part.classes, dtype=bool)
        for m in self.monotone:
            passing &= m.check(stats)
        m_failing = ~passing
        monotone_rows = float(sizes[m_failing].sum())
        self.out.below_monotone += monotone_rows
        self.out.below += monotone_rows
        if self.rest:
            candidates = np.flatnonzero(passing)
            ok, share = self.req._assess_rest(self.rest, _subset(stats, candidates))
            fails = ~ok
            passing[candidates[fails]] = False
            c_sizes = sizes[candidates[fails]].astype(np.float64)
            # Requirements.screen, step 3: the share of a failing class proven suppressed in
            # every specialization
            proven = np.maximum(np.ceil(c_sizes * (share[fails] - 1e-9)), 0.0)
            if self.merges_pass:
                proven = np.maximum(proven, 1.0)
            self.out.below += float(proven.sum())
            self.rest_failed |= bool(fails.any())
            if self.merges_pass and not self.rest_failed and self.clean:
                # step 4: clean when the classes failing the monotone models pass the others
                others = np.flatnonzero(m_failing)
                if len(others):
                    ok = self.req._assess_rest(self.rest, _subset(stats, others))[0]
                    self.clean = bool(ok.all())
        self.failed += float(sizes[~passing].sum())
        if self.tables:
            self.released_sizes.append(np.asarray(sizes[passing], dtype=np.float64))
        suppressed = self._apply_rule(sizes, passing)
        self.released += int((~suppressed).sum())
        self.out.classes += part.classes
        self.out.rows += int(sizes.sum())
        s = sizes.astype(np.float64)
        self.sum_squares += float((s * s).sum())
        self.score.add(part, suppressed)

    def _apply_rule(self, sizes: np.ndarray, passing: np.ndarray) -> np.ndarray:
        rule = self.rule
        if rule is None:
            return ~passing
        if rule.everything:
            return np.ones(len(sizes), dtype=bool)
        dropped = passing & (sizes < rule.size)
        tied = np.flatnonzero(passing & (sizes == rule.size))
        take = tied[: max(rule.ties - self.ties_seen, 0)]
        self.ties_seen += len(tied)
        dropped[take] = True
        return ~passing | dropped

    def finish(self, rescore: Callable[[_Rule], float]) -> NodeSummary:
        out = self.out
        hist = self.hist
        allowed = self.req.allowed(hist.rows)
        if self.population:
            only = _population_groups(self.req.population, self.levels, hist) - self.matched
            probe = ClassStats(np.empty(0, dtype=np.int64), population_only=int(only))
            out.unreleasable = self.req.unreleasable(probe)
        out._has_rest = bool(self.rest)
        out._has_tables = bool(self.tables)
        out.clean = self.merges_pass and self.clean and not self.rest_failed
        rule: _Rule | None = None
        suppressed_rows = self.failed
        released = self.released
        if out.unreleasable:
            suppressed_rows, released = float(hist.rows), 0
            rule = _Rule(everything=True)
        elif self.tables and self.rule is None:
            sizes = np.concatenate(self.released_sizes) if self.released_sizes else np.empty(0)
            self.released_sizes = []
            if len(sizes):
                # stable: ties stay in the engine's order, by node ids (the in-memory order)
                order = np.argsort(sizes, kind="stable")
                dropped = enforce_table_models(self.tables, sizes, order, allowed - self.failed)
                j = len(dropped)
                if j:
                    suppressed_rows += float(sizes[dropped].sum())
                    released -= j
                    edge = float(sizes[order[j - 1]])
                    rule = _Rule(size=edge, ties=j - int((sizes < edge).sum()))
        suppressed = int(suppressed_rows)
        out.assessment = SummaryAssessment(
            np.empty(0, dtype=bool), suppressed, suppressed <= allowed, released
        )
        out.bound = self._bound()
        if rule is None or self.rule is not None:
            out._score = self.score.value(released, suppressed_rows)
        else:
            out._rescore = lambda: rescore(rule)
        return out

    def _bound(self) -> float | None:
        """The quality model's :meth:`~QualityModel.partition_bound` of the whole node."""
        q = self.quality
        if type(q) is AECS:
            return float(self.out.rows) / self.out.classes if self.out.classes else None
        if type(q) in (Discernibility, DiscernibilityStar):
            return self.sum_squares
        return None


class ScoreSum:
    """A quality model's score as sums over batches (per the model's definition in
    :mod:`anonsql.metrics.quality`)."""

    def __init__(self, quality: QualityModel, levels: tuple[int, ...], hist) -> None:
        self.q = quality
        self.levels = levels
        self.hist = hist
        m = len(levels)
        self.rows = 0.0
        self.supp_rows = 0.0
        self.supp_classes = 0
        self.share = np.zeros(m)  # Loss: the suppressed records' domain shares per QI
        self.cost = 0.0  # Alteration: the suppressed records' cost to the root
        self.dm = 0.0
        self.dm_star = 0.0
        self.values: list[np.ndarray] | None = None  # non-monotone entropy: per QI value
        if type(quality) is NonMonotoneEntropy or (
            type(quality) is NonUniformEntropy and not quality.monotone_variant
        ):
            self.values = [np.zeros(h.size) for h in hist.hierarchies]

    def add(self, part: Partition, suppressed: np.ndarray) -> None:
        q = self.q
        sizes = part.sizes.astype(np.float64)
        self.rows += float(sizes.sum())
        s = sizes[suppressed]
        self.supp_rows += float(s.sum())
        self.supp_classes += int(suppressed.sum())
        t = type(q)
        if t is Loss and len(s):
            for j, lv in enumerate(part.levels):
                codes = part.codes[:, j][suppressed]
                self.share[j] += float(s @ q.level_shares[j][lv][codes])  # type: ignore[attr-defined]
        elif t is Alteration and len(s):
            for j in range(part.codes.shape[1]):
                root = q.unified.to_root[j]  # type: ignore[attr-defined]
                self.cost += float((root[part.node_column(j, suppressed)] * s).sum())
        elif t is Discernibility:
            # released classes' squared sizes; suppressed records are charged in value()
            self.dm += float((sizes[~suppressed] ** 2).sum())
        elif t is DiscernibilityStar:
            self.dm_star += float((sizes * sizes).sum())
        if self.values is not None and len(s):
            for j, acc in enumerate(self.values):
                acc += np.bincount(part.node_column(j, suppressed), s, minlength=len(acc))

    def needs_values(self) -> bool:
        """Whether the score reads the suppressed records' values (:meth:`add_values`)."""
        return type(self.q) in (Loss, Alteration) or self.values is not None

    def add_values(self, j: int, ids: np.ndarray, counts: np.ndarray) -> None:
        """Suppressed records of QI ``j``: ``counts[i]`` of them with the node ``ids[i]`` (at
        the node's level), what :meth:`add` reads of the suppressed classes per QI."""
        q = self.q
        t = type(q)
        counts = np.asarray(counts, dtype=np.float64)
        if t is Loss:
            h = self.hist.hierarchies[j]
            shares = q.level_shares[j][self.levels[j]]  # type: ignore[attr-defined]
            self.share[j] += float(counts @ shares[h.level_rank32[ids]])
        elif t is Alteration:
            root = q.unified.to_root[j]  # type: ignore[attr-defined]
            self.cost += float((root[ids] * counts).sum())
        if self.values is not None:
            acc = self.values[j]
            acc += np.bincount(ids, counts, minlength=len(acc))

    def value(self, released: int, suppressed_rows: float) -> float:
        q = self.q
        t = type(q)
        levels = self.levels
        if t is Loss:
            raw = np.array([q.gen_table[j][lv] for j, lv in enumerate(levels)])  # type: ignore[attr-defined]
            if self.supp_classes:
                total = self.supp_rows
                for j in range(len(levels)):
                    share = self.share[j]
                    s_factor = q.s_factor  # type: ignore[attr-defined]
                    supp = total if s_factor == 1 else share + s_factor * (total - share)
                    raw[j] += supp - share * q.g_factor  # type: ignore[attr-defined]
            return float(q._aggregate(q._normalize(raw[None, :]))[0])  # type: ignore[attr-defined]
        if t is Precision:
            lv = np.asarray(levels) / q.tops  # type: ignore[attr-defined]
            n, supp = self.rows, self.supp_rows
            return float(((lv * (n - supp) + supp) / n).mean())
        if t is Height:
            return float(sum(levels))
        if t in (NonUniformEntropy, NonMonotoneEntropy):
            base = float(sum(q.table[j][lv] for j, lv in enumerate(levels)))  # type: ignore[attr-defined]
            if self.values is None or not self.supp_classes:
                return base
            total = self.supp_rows
            extra = 0.0
            for c in self.values:
                c = c[c > 0]
                extra += float(-(c * np.log2(c / total)).sum())
            return base + extra
        if t is AECS:
            classes = released + (1 if self.supp_classes else 0)
            return self.rows / classes
        if t is Discernibility:
            # each suppressed record is charged the table's size
            return self.dm + self.rows * self.supp_rows
        if t is DiscernibilityStar:
            return self.dm_star
        if t is Alteration:
            cost = float(sum(q.table[j][lv] for j, lv in enumerate(levels))) + self.cost  # type: ignore[attr-defined]
            return 100.0 * cost / q.worst if q.worst else 0.0  # type: ignore[attr-defined]
        raise TypeError(f"no batched score for {q.name!r}")


def _population_groups(population, levels: tuple[int, ...], hist) -> int:
    """Classes of the population at ``levels`` (its rows generalized as the node's)."""
    hs = hist.hierarchies
    codes = np.empty((len(population.counts), len(hs)), dtype=np.int64)
    widths = []
    for j, h in enumerate(hs):
        codes[:, j] = h.level_rank32[h.ancestor_column(levels[j])[population.codes[:, j]]]
        widths.append(len(h.level_nodes[levels[j]]))
    return group_rows(codes, widths)[1]


def reduce_batches(
    levels: tuple[int, ...],
    batches: Iterable[Partition],
    requirements: Requirements,
    quality: QualityModel,
    hist,
    again: Callable[[], Iterable[Partition]],
) -> NodeSummary:
    """The summary of the node whose classes ``batches`` yields (each batch whole classes);
    ``again`` yields them once more, for a score that needs a second pass."""
    reducer = NodeReducer(levels, requirements, quality, hist)
    for part in batches:
        reducer.add(part)

    def rescore(rule: _Rule) -> float:
        second = NodeReducer(levels, requirements, quality, hist, rule)
        for part in again():
            second.add(part)
        second.out.assessment = None
        return second.score.value(second.released, second.score.supp_rows)

    return reducer.finish(rescore)


__all__ = ["NodeReducer", "NodeSummary", "SummaryAssessment", "reduce_batches", "summable"]

"""Re-anonymizing the suppressed outliers: seed 002's rho-Gain (Eq. 1, Table I) and ARX's local
recoding (``ARXResult.optimizeIterative``).

Full-domain generalization with suppression releases the classes that satisfy the models and
suppresses the others, the *outlier equivalence classes* (seed 002 section I: 43.7% of Adult in
its first pass). Both algorithms run the lattice search again on the outlier records only:

* **rho-Gain** (``algorithm="rho-gain"``, ``rho``): Table I. Pass rho' = 0 anonymizes the table
  (step 2.6); the records of released classes keep that pass's labels (GAIN = 0, step 2.8); the
  outliers are restored to their original values (step 3.1) and anonymized again, for passes
  rho' = 1, ..., rho. A literal reading of step 2.5 ("if rho' = rho go to 3.4", checked before
  the anonymization) gives rho passes; the paper's figures show three passes (rho' = 0, 1, 2)
  for rho = 2 (Figs. 3, 5, 7 and Table IV), which is what is done here: rho + 1 passes. Records
  still outlying after the last pass are published suppressed (step 3.4 moves the records
  with GAIN = 0 only).
* **local recoding** (``recoding="local"`` with a lattice algorithm): ARX's loop. After the
  first anonymization (the spec's metric and ``gs_factor``), each iteration anonymizes the
  outliers with Loss weighted by ``local_gs_factor``; when an iteration releases nothing, the
  factor grows by ``adaption_factor`` (favouring generalization) and the same outliers are
  tried again while it stays <= 1; at most ``max_iterations`` iterations, and only while the
  outliers can form a class (ARX's ``isOptimizable``: at least the minimal class size).

Every pass reads its input in the database: a temporary table holds the outliers' distinct
QI tuples and the pass's histogram is the GROUP BY of the source joined to it (the rows never
leave the database; :meth:`anonsql.data.histogram.Histogram.from_database`, ``within``). The
models that compare a class with the table (t-closeness, delta-disclosure, beta-likeness)
compare it with the *whole* table's sensitive distribution in every pass, as ARX does
(``DataManagerSubset.getDistribution`` delegates to the full data).

The suppression limit applies to each pass's input, as in ARX (each iteration's configuration
applies the relative limit to the subset it anonymizes): pass rho' may suppress
``suppression * (its input records)``. Overall, the suppressed records only fall from pass to
pass, so the output suppresses at most what the first pass did, within the limit of the table.

Models that read a population table (k-map against a table, delta-presence). ARX refuses
both for local recoding (``isLocalRecodingSupported`` is false for ``DPresence`` and for
``KMap`` with a research subset). Here every population row is assigned to at most one
released class, the way a full-domain run assigns it by its levels: each pass generalizes,
with its levels, its input *and the population rows no earlier pass assigned* (pass 0: the
whole population, so pass 0 is exactly the lattice search's run); a class's population count
is its rows among those; a class of the population without input rows fails delta_min > 0
for the whole pass, as in the lattice search (:mod:`anonsql.models.delta_presence`); and the
population rows in a class the pass releases are assigned to it. The recoding table maps the
tuples of the assigned population rows too (a population tuple the source lacks gets the
labels of the class it was assigned to), so the guard, which counts per class the population
rows the recoding maps to it (``_population_counts``), counts exactly what the passes
counted, summed over the passes whose classes share labels (k-map: the counts add up;
delta-presence: the union's share is the mediant of its parts', between their smallest and
largest, so both are closed under the union). Population rows never assigned - in classes
that stayed suppressed in every pass - map to nothing and are tested by no model, as the
people of a suppressed class are not in a lattice run (ARX tests released classes only).
Population rows are read once (one GROUP BY, as the lattice search reads them); a pass selects
its open rows by their leaf ids.

The output is one :class:`~anonsql.algorithms.recoding.TableRecoding`: each original QI tuple ->
the labels of the pass that released it; tuples never released are absent and suppressed by
the guard. Node ids are made canonical per label (the smallest node id of the hierarchy with
that label), so classes of different passes with the same labels are *one* class for the
guard and ``check``, as they are for a reader. Whether their union satisfies the models is
checked here (:func:`union_classes`) and enforced by the guard at every read; the models
closed under that union are those monotone without suppression (README, "rho-Gain").
"""

from __future__ import annotations

import math
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from anonsql.algorithms.base import Algorithm, Outcome, RunContext, given_options
from anonsql.algorithms.lattice.algorithm import sensitive_hierarchy, suppression_budget
from anonsql.algorithms.lattice.base import Search
from anonsql.algorithms.lattice.heuristic import Heuristic as HeuristicSearch
from anonsql.algorithms.lattice.searches import search as make_search
from anonsql.algorithms.recoding import Coded, TableRecoding
from anonsql.backend.sql_templates import drop
from anonsql.data.classes import Partition, group_rows
from anonsql.data.histogram import Histogram
from anonsql.errors import InputError
from anonsql.metrics.quality import quality_model, release_score
from anonsql.metrics.risk import risk_measures
from anonsql.models.base import ClassStats, PrivacyModel
from anonsql.models.goal import build_models
from anonsql.models.requirements import Requirements, population_histogram
from anonsql.models.risk_thresholds import RiskThreshold, enforce_table_models
from anonsql.spec import Spec, Spell, single_sensitive

#: the temporary table of the outliers' distinct QI tuples (raw values as VARCHAR)
OUTLIERS = "__anonsql_outliers"
#: the lattice algorithms local recoding runs on
LATTICE = ("flash", "exhaustive", "heuristic")
RECODINGS = ("global", "local")


@dataclass
class Pass:
    """One pass over the outliers: what it released."""

    number: int
    levels: list[int] | None  # None: the search found no anonymous transformation
    gs_factor: float | None
    input_rows: int
    released_rows: int
    classes: int
    suppressed_after: int
    sizes: np.ndarray = field(repr=False)  # the released classes' sizes
    score: float | None
    checked: int
    seconds: float

    def to_dict(self, qis: list[str]) -> dict[str, Any]:
        sizes, counts = np.unique(self.sizes, return_counts=True)
        transformation = (
            ", ".join(f"{q}={lv}" for q, lv in zip(qis, self.levels, strict=True))
            if self.levels is not None
            else None
        )
        return {
            "pass": self.number,
            "transformation": transformation,
            "levels": self.levels,
            "gs_factor": self.gs_factor,
            "input_rows": self.input_rows,
            "released_rows": self.released_rows,
            "classes": self.classes,
            "suppressed_after": self.suppressed_after,
            "class_sizes": [[int(s), int(c)] for s, c in zip(sizes, counts, strict=True)],
            "prosecutor_max": float(1 / self.sizes.min()) if len(self.sizes) else 0.0,
            "prosecutor_avg": self.classes / self.released_rows if self.released_rows else 0.0,
            "aecs_released": self.released_rows / self.classes if self.classes else 0.0,
            "score": self.score,
            "nodes_checked": self.checked,
            "seconds": round(self.seconds, 6),
        }


def canonical_ids(labels: list[str]) -> np.ndarray:
    """Per node id: the smallest node id carrying the same label. Released classes are told
    apart by these ids (guard, ``check``), so equal labels are one class whatever the level
    or pass that produced them."""
    ids = np.arange(len(labels))
    return pd.Series(ids).groupby(pd.Series(labels, dtype=object)).transform("min").to_numpy()


def minimal_class_size(models: list[PrivacyModel]) -> int:
    """The fewest records a class passing every model holds (ARX's ``getMinimalGroupSize``):
    k for k-anonymity, ceil(l) distinct values for every l-diversity."""
    size = 1
    for m in models:
        if m.needs_population:
            continue  # k-map's k counts population records: one record can pass it
        for attr in ("k", "l"):
            v = getattr(m, attr, None)
            if isinstance(v, int | float) and not isinstance(v, bool) and v > 0:
                size = max(size, math.ceil(v - 1e-9))
    return size


@dataclass
class _State:
    """What the passes have released so far: per histogram row of the whole table, the
    canonical node ids of its release (-1: not released yet)."""

    hist: Histogram
    release: np.ndarray  # (rows, m) canonical node ids, -1 where unreleased
    labels: list[np.ndarray]
    canon: list[np.ndarray]
    pass_of_row: np.ndarray  # the pass that released each row (-1: none)
    passes: list[Pass] = field(default_factory=list)
    #: k-map / delta-presence: the population table's histogram (leaf ids of the same
    #: hierarchies) and, per row of it, the canonical node ids of the released class it was
    #: assigned to (-1: none yet); None without such a model (module docstring)
    population: Histogram | None = None
    pop_release: np.ndarray | None = None

    @property
    def released(self) -> np.ndarray:
        return self.release[:, 0] >= 0


class _Passes(Algorithm):
    """The pass engine both algorithms share; subclasses decide the passes' gs factors and
    when to stop."""

    inner = "flash"

    def summary_lines(self, result: Any) -> list[str]:
        lines = [f"passes over the outliers ({result.algorithm}, {result.checked} nodes checked):"]
        for p in result.measures["passes"]:
            lines.append(
                f"  pass {p['pass']}: {p['transformation'] or 'no transformation'}: released "
                f"{p['released_rows']} rows in {p['classes']} classes, "
                f"{p['suppressed_after']} suppressed after"
                + (
                    f", {result.metric} {p['score']:.6g} on its input"
                    if p["score"] is not None
                    else ""
                )
            )
        return lines

    def _search(self, spec) -> Search:
        if self.inner == "heuristic":
            return HeuristicSearch(
                time_limit=spec.time_limit, steps=spec.steps, seed=spec.seed or 0
            )
        return make_search(self.inner)

    def _next_gs(self, spec, number: int, released: int, gs: float | None) -> float | None:
        """The gs factor of pass ``number`` + 1 after pass ``number`` released ``released``
        records with ``gs``; raise StopIteration to stop."""
        raise NotImplementedError

    def run(self, ctx: RunContext) -> Outcome:
        spec = ctx.spec
        metric = spec.metric or "loss"
        models = build_models(spec, ctx.sensitive_key)
        sens_h = sensitive_hierarchy(ctx, models)
        hist = Histogram.from_database(
            ctx.db, ctx.source, spec.qis, ctx.pinned_keys, single_sensitive(spec), spec.missing
        )
        if hist.rows == 0:
            if hist.missing_rows:
                raise InputError(f"every row of {ctx.source!r} holds a value its hierarchy lacks")
            raise InputError(f"table {ctx.source!r} is empty")
        # the whole table's distribution, missing rows included (as check and the guard count
        # it), compared with in every pass
        overall = hist.overall_distribution() if hist.sens is not None else None
        ctx.timings["histogram"] = time.perf_counter() - ctx.t0
        hs = hist.hierarchies
        # the whole population, one GROUP BY in the database as the lattice search reads it
        population = population_histogram(ctx.db, models, list(spec.qis), ctx.pinned_keys)
        state = _State(
            hist,
            np.full(hist.codes.shape, -1, dtype=np.int64),
            [np.asarray(h.labels, dtype=object) for h in hs],
            [canonical_ids(list(h.labels)) for h in hs],
            np.full(len(hist.counts), -1, dtype=np.int64),
            population=population,
            pop_release=None if population is None else np.full(population.codes.shape, -1),
        )
        smallest = minimal_class_size(models)
        solutions: list[dict] = []
        t_search = time.perf_counter()
        current = hist
        gs: float | None = spec.gs_factor if metric == "loss" else None
        number = 0
        t_pass = ctx.t0  # a pass's time includes its histogram
        try:
            while True:
                if number == 0:
                    budget = suppression_budget(spec.suppression, hist.rows, hist.missing_rows)
                else:
                    budget = spec.suppression  # ARX: the relative limit of each pass's input
                requirements = Requirements(models, budget, sens_h)
                requirements._overall = overall  # the whole table's, in every pass
                # the population rows no earlier pass assigned (module docstring)
                requirements.population = _open_population(state)
                if number == 0:
                    requirements.validate(current)
                search = self._search(spec)
                if hasattr(search, "frontier"):
                    search.frontier = spec.solutions and number == 0
                if hasattr(search, "assume_monotone"):
                    search.assume_monotone = spec.assume_monotone
                quality = quality_model(metric, gs if gs is not None else 0.5)
                result = search.run(current, requirements, quality, ctx.progress)
                del search
                if result.optimum is None and number == 0:
                    goal = ", ".join(m.describe() for m in models)
                    raise InputError(
                        f"no transformation satisfies {goal} with at most "
                        f"{spec.suppression:.1%} of the records suppressed"
                    )
                released_rows = 0
                sizes = np.zeros(0, dtype=np.int64)
                levels = None
                if result.optimum is not None:
                    levels = [int(x) for x in result.optimum.levels]
                    part = result.partition or Partition.from_histogram(current, tuple(levels))
                    assessment = requirements.assess(part, current)
                    if not assessment.anonymous:  # a bug, never input: stop before publishing
                        raise RuntimeError(
                            f"pass {number}: {result.algorithm} returned {levels}, which fails "
                            f"the privacy models"
                        )
                    rows = assessment.passing[part.classes_of_rows(current)]
                    sizes = part.sizes[assessment.passing].astype(np.int64)
                    released_rows = int(sizes.sum())
                    _record(state, current, rows, levels, number)
                    _assign_population(state, current, rows, levels)
                    if number == 0:
                        solutions = [_solution_row(s, spec.qis, result) for s in result.solutions]
                left = int(hist.counts[~state.released].sum())
                state.passes.append(
                    Pass(
                        number,
                        levels,
                        gs,
                        current.rows,
                        released_rows,
                        len(sizes),
                        left + hist.missing_rows,
                        sizes,
                        float(result.optimum.score) if result.optimum is not None else None,
                        result.checked,
                        time.perf_counter() - t_pass,
                    )
                )
                if left == 0 or left < smallest:
                    break  # nothing left, or too few records for one class (ARX)
                try:
                    gs = self._next_gs(spec, number, released_rows, gs)
                except StopIteration:
                    break
                number += 1
                t_pass = time.perf_counter()
                if released_rows:  # else the same outliers again (with another gs factor)
                    current = _outlier_histogram(ctx, spec, state)
        finally:
            ctx.db.backend.execute(drop("table", OUTLIERS))
        ctx.timings["search"] = time.perf_counter() - t_search
        t_union = time.perf_counter()
        outcome = self._outcome(ctx, spec, metric, models, sens_h, state, overall, solutions)
        ctx.timings["union"] = time.perf_counter() - t_union
        return outcome

    def _outcome(self, ctx, spec, metric, models, sens_h, state, overall, solutions) -> Outcome:
        hist = state.hist
        union = union_classes(state, models, sens_h, overall)
        released = state.released
        # the guard suppresses at every read what the union fails: the figures count it so
        supp = np.concatenate([~union.passing, [True]])
        sizes = np.concatenate([union.sizes, [int(hist.counts[~released].sum())]])
        measures = risk_measures(sizes, supp).to_dict()
        measures["rows"] = measures["rows"] + hist.missing_rows
        measures["suppressed_rows"] = measures["suppressed_rows"] + hist.missing_rows
        if hist.missing_rows:
            measures["missing_rows"] = hist.missing_rows
        measures["suppressed_share"] = (
            measures["suppressed_rows"] / measures["rows"] if measures["rows"] else 0.0
        )
        kept = union.sizes[union.passing]
        rows_all = measures["rows"]
        supp_rows = measures["suppressed_rows"]
        # AECS both ways: ARX's (suppressed records form one more class) and seed 002's
        # Table IV (released records / classes: 16,981 / 1,183 = 14.35 for its first pass)
        measures["aecs"] = rows_all / (len(kept) + (1 if supp_rows else 0)) if rows_all else 0.0
        measures["aecs_arx"] = measures["aecs"]
        measures["aecs_released"] = float(kept.sum()) / len(kept) if len(kept) else 0.0
        measures["union_failing_classes"] = int((~union.passing).sum())
        if state.population is not None:
            # k-map / delta-presence: the population rows assigned to released classes (the
            # rest, in classes suppressed in every pass, is in no class; module docstring)
            assigned = state.pop_release[:, 0] >= 0
            measures["population_rows"] = int(state.population.counts.sum())
            measures["population_rows_assigned"] = int(state.population.counts[assigned].sum())
        measures["merged_classes"] = union.merged
        passes = [p.to_dict(list(spec.qis)) for p in state.passes]
        first = passes[0]
        measures["passes"] = passes
        measures["before"] = {
            "classes": first["classes"],
            "released_rows": first["released_rows"],
            "suppressed_rows": first["suppressed_after"],
            "aecs_released": first["aecs_released"],
            "aecs_arx": rows_all / (first["classes"] + (1 if first["suppressed_after"] else 0)),
            "prosecutor_max": first["prosecutor_max"],
            "prosecutor_avg": first["prosecutor_avg"],
        }
        # the score is the released table's, every record at the levels of the pass that
        # released it (issue: the first pass's score is not what is published); each pass's
        # own score is in its row of measures["passes"], the first one's under "before" too
        measures["before"]["score"] = state.passes[0].score
        score, per_qi = _released_score(metric, state, union)
        if score is None:  # height: no score when the records' levels differ
            score = float(state.passes[0].score or 0.0)
            measures["score_of"] = "first pass"
        else:
            measures["score_of"] = "released table"
        failing = measures["union_failing_classes"]
        guarantee = self._guarantee(len(state.passes))
        if failing:
            guarantee += (
                f"; {failing} class(es) that passes released under the same labels fail a "
                f"model together and are suppressed by the guard at every read"
            )
        return Outcome(
            recoding=_recoding(state),
            models=models,
            metric=metric,
            score=score,
            per_qi=dict(zip(spec.qis, per_qi, strict=True)) if per_qi else None,
            measures=measures,
            checked=sum(p.checked for p in state.passes),
            algorithm=self._name(spec, len(state.passes)),
            guarantee=guarantee,
            solutions=solutions,
        )

    def _guarantee(self, passes: int) -> str:
        raise NotImplementedError

    def _name(self, spec, passes: int) -> str:
        raise NotImplementedError


class RhoGain(_Passes):
    """Seed 002's rho-Gain: the optimal full-domain node (Flash), then rho more passes over
    the outliers."""

    name = "rho-gain"
    options = ("rho", "solutions", "assume_monotone")

    @classmethod
    def check(
        cls,
        spec: Spec,
        prefix: str,
        given: Collection[str] | None,
        spell: Spell,
        chosen: type[Algorithm] | None,
        alone: bool = False,
    ) -> None:
        """rho is a non-negative integer, the number of passes of rho-Gain only, which
        needs it."""
        rho = spec.rho
        if rho is not None and (isinstance(rho, bool) or not isinstance(rho, int) or rho < 0):
            raise InputError(f"{prefix}{spell('rho')} must be a non-negative integer, not {rho!r}")
        if alone or (given is not None and not given):
            # options checked one by one (SQL's short form): how they combine comes later;
            # a Spec without options that differ from the defaults has none to combine
            return
        if rho is not None and spec.algorithm != cls.name:
            raise InputError(
                f"{prefix}{spell('rho')} is the number of rho-Gain passes: use algorithm "
                f"'rho-gain', not {spec.algorithm!r}, or leave {spell('rho')} out"
            )
        if spec.algorithm == cls.name and rho is None:
            raise InputError(
                f"{prefix}algorithm 'rho-gain' needs {spell('rho')}, the number of passes over "
                f"the outliers after the first (the rho-Gain paper uses 2)"
            )

    def _next_gs(self, spec, number, released, gs):
        if number >= spec.rho or (number > 0 and not released):
            # rho + 1 passes (the paper's figures); a pass that released nothing would be
            # repeated exactly by the next one
            raise StopIteration
        return gs

    def _guarantee(self, passes: int) -> str:
        return (
            f"rho-Gain, {passes} pass(es): each pass is the optimal full-domain "
            f"node for its outliers (Flash); every released class satisfies the models"
        )

    def _name(self, spec, passes: int) -> str:
        return f"rho-gain/rho={spec.rho}"


class LocalRecoding(_Passes):
    """ARX's local recoding: the lattice algorithm ``inner``, then ``optimizeIterative``."""

    name = "local-recoding"
    options = ("local_gs_factor", "max_iterations", "adaption_factor")
    selectable = False

    @classmethod
    def claims(cls, spec: Spec) -> bool:
        # chosen by recoding="local" beside a lattice algorithm, not by its own name
        return spec.recoding_mode == "local" and spec.algorithm in LATTICE

    @classmethod
    def for_spec(cls, spec: Spec) -> Algorithm:
        return cls(spec.algorithm)

    @classmethod
    def check(
        cls,
        spec: Spec,
        prefix: str,
        given: Collection[str] | None,
        spell: Spell,
        chosen: type[Algorithm] | None,
        alone: bool = False,
    ) -> None:
        """recoding is global or local; local recoding's factors in [0, 1] and its
        iterations >= 1 (ARX's ranges), given only with it; local recoding only after a
        lattice search, and its gs factors only for the Loss metric."""
        recoding = spec.recoding_mode
        if recoding not in RECODINGS:
            raise InputError(
                f"{prefix}{spell('recoding')} is 'global' or 'local', not {recoding!r}"
            )
        for option in ("local_gs_factor", "adaption_factor"):
            v = getattr(spec, option)
            if isinstance(v, bool) or not isinstance(v, int | float) or not 0 <= v <= 1:
                raise InputError(f"{prefix}{spell(option)} must be a number in [0, 1], not {v!r}")
        it = spec.max_iterations
        if isinstance(it, bool) or not isinstance(it, int) or it < 1:
            raise InputError(
                f"{prefix}{spell('max_iterations')} must be an integer >= 1, not {it!r}"
            )
        if alone or (given is not None and not given):
            # options checked one by one (SQL's short form): how they combine comes later;
            # a Spec without options that differ from the defaults has none to combine
            return
        local = ("local_gs_factor", "max_iterations", "adaption_factor")
        given = given_options(spec, given, local)
        if recoding == "global":
            named = [o for o in local if o in given]
            if named:
                raise InputError(
                    f"{prefix}{', '.join(spell(o) for o in named)}: options of local recoding; "
                    f"give {spell('recoding')} local or leave them out"
                )
            return
        if spec.algorithm not in LATTICE:
            raise InputError(
                f"{prefix}local recoding re-runs a lattice search ({', '.join(LATTICE)}) on the "
                f"suppressed records, not algorithm {spec.algorithm!r}"
            )
        metric = spec.metric or "loss"
        named = [o for o in ("local_gs_factor", "adaption_factor") if o in given]
        if named and metric != "loss":
            raise InputError(
                f"{prefix}{' and '.join(spell(o) for o in named)} weigh(s) the Loss metric; "
                f"metric {metric!r} does not take a gs factor"
            )

    def __init__(self, inner: str = "flash") -> None:
        if inner not in LATTICE:
            raise InputError(f"local recoding runs a lattice search ({', '.join(LATTICE)})")
        self.inner = inner
        self.iterations = 0

    def _next_gs(self, spec, number, released, gs):
        # ARX's optimizeIterative: the first anonymization is not an iteration
        if number >= spec.max_iterations:
            raise StopIteration
        if number == 0:
            return spec.local_gs_factor if gs is not None else None
        if released:
            return gs
        if gs is None or spec.adaption_factor <= 0:
            raise StopIteration  # the same outliers, the same search: nothing would change
        gs += spec.adaption_factor
        if gs > 1 + 1e-12:
            raise StopIteration
        return min(gs, 1.0)

    def _guarantee(self, passes: int) -> str:
        return (
            f"ARX's local recoding, {passes} pass(es): each pass is a full-domain node for "
            f"its outliers ({self.inner}); every released class satisfies the models"
        )

    def _name(self, spec, passes: int) -> str:
        return f"{self.inner}+local-recoding"


def _record(
    state: _State, current: Histogram, rows: np.ndarray, levels: list[int], number: int
) -> None:
    """Give the whole table's histogram rows with the released tuples of ``current`` their
    canonical node ids at ``levels``."""
    if not rows.any():
        return
    hs = state.hist.hierarchies
    codes = current.codes[rows]
    gen = np.empty(codes.shape, dtype=np.int64)
    for j, h in enumerate(hs):
        gen[:, j] = state.canon[j][h.ancestor_column(levels[j])[codes[:, j]]]
    if current is state.hist:  # the first pass reads the whole table's histogram
        found = np.flatnonzero(rows)
        if (state.release[found, 0] >= 0).any():
            raise RuntimeError("a pass released a tuple an earlier pass had released")
        state.release[found] = gen
        state.pass_of_row[found] = number
        return
    # a later pass: match its released tuples among the rows not released yet (few)
    m = codes.shape[1]
    cols = [f"q{j}" for j in range(m)]
    new = pd.DataFrame(codes, columns=cols).assign(**{f"g{j}": gen[:, j] for j in range(m)})
    new = new.drop_duplicates(cols)
    open_rows = np.flatnonzero(~state.released)
    hit = pd.DataFrame(state.hist.codes[open_rows], columns=cols).merge(new, on=cols, how="left")
    matched = hit["g0"].notna().to_numpy()
    found = open_rows[matched]
    if len(np.unique(codes, axis=0)) != len(
        np.unique(state.hist.codes[found], axis=0) if len(found) else found
    ):
        raise RuntimeError("a pass released a tuple that is not an outlier of the passes before")
    for j in range(m):
        state.release[found, j] = hit[f"g{j}"].to_numpy()[matched].astype(np.int64)
    state.pass_of_row[found] = number


def _write_tuples(ctx: RunContext, state: _State, rows: np.ndarray) -> None:
    """The distinct QI tuples of the table's histogram rows ``rows`` (raw values as VARCHAR,
    the leaf labels) into the temporary table :data:`OUTLIERS`, which the passes' GROUP BYs
    join to: the rows never leave the database."""
    codes = np.unique(state.hist.codes[rows], axis=0)
    frame = pd.DataFrame(
        {f"v{j}": state.labels[j][codes[:, j]].astype(str) for j in range(codes.shape[1])}
    )
    ctx.db.backend.write_frame(OUTLIERS, frame, temporary=True)


def _open_population(state: _State) -> Histogram | None:
    """The population rows not assigned to a released class yet: those of the table's
    tuples not released yet and those of tuples the table lacks that no pass released a
    class for (all of them in the first pass: the lattice search's population)."""
    pop = state.population
    if pop is None:
        return None
    assert state.pop_release is not None  # set with the population
    open_rows = state.pop_release[:, 0] < 0
    return Histogram(pop.qis, pop.hierarchies, pop.codes[open_rows], pop.counts[open_rows])


def _assign_population(
    state: _State, current: Histogram, rows: np.ndarray, levels: list[int]
) -> None:
    """Assign the open population rows that fall, with ``levels``, into a class the pass
    releases (``rows``: its released histogram rows) to that class: the pass counted them
    for it (:meth:`Requirements.stats` over :func:`_open_population`)."""
    pop = state.population
    if pop is None or not rows.any():
        return
    assert state.pop_release is not None  # set with the population
    open_rows = np.flatnonzero(state.pop_release[:, 0] < 0)
    if not len(open_rows):
        return
    hs = state.hist.hierarchies
    m = len(hs)

    def canon(codes: np.ndarray) -> np.ndarray:
        out = np.empty(codes.shape, dtype=np.int64)
        for j, h in enumerate(hs):
            out[:, j] = state.canon[j][h.ancestor_column(levels[j])[codes[:, j]]]
        return out

    cols = [f"g{j}" for j in range(m)]
    classes = pd.DataFrame(canon(current.codes[rows]), columns=cols).drop_duplicates()
    people = pd.DataFrame(canon(pop.codes[open_rows]), columns=cols).assign(r=open_rows)
    hit = people.merge(classes, on=cols, how="inner")
    found = hit["r"].to_numpy(np.int64)
    state.pop_release[found] = hit[cols].to_numpy(np.int64)


def _outlier_histogram(ctx: RunContext, spec, state: _State) -> Histogram:
    """The histogram of the records not released yet: their distinct QI tuples go to a
    temporary table, and the source's GROUP BY is joined to it, in the database."""
    hist = state.hist
    _write_tuples(ctx, state, ~state.released)
    sub = Histogram.from_database(
        ctx.db,
        ctx.source,
        spec.qis,
        ctx.pinned_keys,
        single_sensitive(spec),
        "suppress",
        within=OUTLIERS,
    )
    if sub.sens is not None:
        # index the sensitive values as the whole table does, so its distribution applies
        where = pd.Index(hist.sens_labels).get_indexer(sub.sens_labels)
        if (where < 0).any():
            raise RuntimeError("the outliers hold a sensitive value the table lacks")
        sub.sens = where[sub.sens]
        sub.sens_labels = list(hist.sens_labels)
    sub.missing_rows = 0
    sub.missing_sens = None
    return sub


@dataclass
class UnionClasses:
    """The released classes as a reader sees them: records of every pass grouped by their
    labels (canonical node ids)."""

    sizes: np.ndarray
    passing: np.ndarray
    merged: int  # classes holding records of more than one pass
    class_of_row: np.ndarray  # per histogram row of the table: union class, -1 unreleased


def union_classes(
    state: _State, models: list[PrivacyModel], sens_h, overall: np.ndarray | None
) -> UnionClasses:
    """Group the released records by their labels and test every model on the groups, the
    per-class models on each class and the table-level ones (smallest first) on all of them,
    as the guard does at a read."""
    hist = state.hist
    released = state.released
    idx = np.flatnonzero(released)
    class_of_row = np.full(len(hist.counts), -1, dtype=np.int64)
    if not len(idx):
        empty = np.zeros(0, dtype=np.int64)
        return UnionClasses(empty, np.zeros(0, dtype=bool), 0, class_of_row)
    ids, n = group_rows(state.release[idx])
    class_of_row[idx] = ids
    sizes = np.bincount(ids, hist.counts[idx], minlength=n).astype(np.int64)
    # classes holding records of two passes or more (equal labels, one class)
    per_pass = np.unique(ids * (len(state.passes) + 1) + state.pass_of_row[idx])
    merged = int((np.bincount(per_pass // (len(state.passes) + 1), minlength=n) > 1).sum())
    pairs: tuple[np.ndarray | None, np.ndarray | None, np.ndarray | None] = (None, None, None)
    if hist.sens is not None:
        key = ids * len(hist.sens_labels) + hist.sens[idx]
        uniq, inv = np.unique(key, return_inverse=True)
        cnt = np.bincount(inv, hist.counts[idx]).astype(np.int64)
        pairs = (uniq // len(hist.sens_labels), uniq % len(hist.sens_labels), cnt)
    pop = None
    if state.population is not None:
        pop = _union_population(state, idx, ids, n)
    # no population-only class: every population row assigned is in a released class
    stats = ClassStats(sizes, *pairs, overall, list(hist.sens_labels) or None, sens_h, pop, 0)
    passing = np.ones(n, dtype=bool)
    for m in models:
        if not m.table_level:
            passing &= np.asarray(m.check(stats), dtype=bool)
    tables = [m for m in models if isinstance(m, RiskThreshold)]  # the table-level models
    if tables and passing.any():
        kept = np.flatnonzero(passing)
        nodes = state.release[idx][np.unique(ids, return_index=True)[1]]
        keys = [nodes[kept, j] for j in range(nodes.shape[1] - 1, -1, -1)]
        order = np.lexsort([*keys, sizes[kept]])
        dropped = enforce_table_models(tables, sizes[kept], order)
        passing[kept[dropped]] = False
    return UnionClasses(sizes, passing, merged, class_of_row)


def _released_score(
    metric: str, state: _State, union: UnionClasses
) -> tuple[float | None, list[float] | None]:
    """The metric on the released table (:func:`release_score`): each record generalized
    to the levels of the pass that released it; a record no pass released, or in a union
    class the guard suppresses, counts as suppressed in its first-pass class."""
    hist = state.hist
    first = state.passes[0]
    gs = first.gs_factor if first.gs_factor is not None else 0.5
    pass_of_row = np.where(state.pass_of_row >= 0, state.pass_of_row, 0)
    nodes = np.empty(hist.codes.shape, dtype=np.int64)
    for p in np.unique(pass_of_row):
        rows = pass_of_row == p
        levels = state.passes[int(p)].levels
        assert levels is not None  # a pass that released records found a transformation
        for j, h in enumerate(hist.hierarchies):
            nodes[rows, j] = h.ancestor_column(levels[j])[hist.codes[rows, j]]
    cls = union.class_of_row
    released = cls >= 0
    released[released] = union.passing[cls[released]]
    sizes = union.sizes[union.passing]
    return release_score(quality_model(metric, gs), hist, nodes, released, sizes)


def _union_population(state: _State, idx: np.ndarray, ids: np.ndarray, n: int) -> np.ndarray:
    """Per union class: the population rows assigned to it, which the output's recoding maps
    to it, as the guard counts them (:func:`anonsql.output.guard._population_counts`: a
    population tuple the recoding lacks is in no class)."""
    m = state.hist.codes.shape[1]
    cols = [f"g{j}" for j in range(m)]
    classes = pd.DataFrame(state.release[idx], columns=cols).assign(c=ids).drop_duplicates(cols)
    # called with a population, whose rows the passes assigned
    assert state.population is not None and state.pop_release is not None
    assigned = np.flatnonzero(state.pop_release[:, 0] >= 0)
    people = pd.DataFrame(state.pop_release[assigned], columns=cols).assign(
        w=state.population.weights[assigned]
    )
    hit = people.merge(classes, on=cols, how="left")
    if hit["c"].isna().any():  # assigned only to classes a pass released
        raise RuntimeError("a population row was assigned to a class no pass released")
    return np.bincount(hit["c"].to_numpy(np.int64), hit["w"].to_numpy(), minlength=n)


def _population_tuples(state: _State) -> tuple[np.ndarray, np.ndarray]:
    """The population's tuples the table lacks that a pass assigned to a released class, and
    their canonical node ids (in the order of their leaf ids): the recoding table maps them
    too, so the guard counts their population rows for that class as the passes did. A
    population tuple the table holds was assigned with the table's tuple (checked)."""
    pop, hist = state.population, state.hist
    m = hist.codes.shape[1]
    q, g = [f"q{j}" for j in range(m)], [f"g{j}" for j in range(m)]
    assert pop is not None and state.pop_release is not None  # called with a population
    assigned = np.flatnonzero(state.pop_release[:, 0] >= 0)
    people = pd.DataFrame(pop.codes[assigned], columns=q)
    people[g] = state.pop_release[assigned]
    table = pd.DataFrame(hist.codes, columns=q)
    table[[f"t{j}" for j in range(m)]] = state.release
    table = table.drop_duplicates(q)
    hit = people.merge(table, on=q, how="left")
    inside = hit["t0"].notna().to_numpy()
    same = hit[[f"t{j}" for j in range(m)]].to_numpy()[inside] == hit[g].to_numpy()[inside]
    if not same.all():
        raise RuntimeError("a population tuple was assigned apart from the table's tuple")
    extra = hit[~inside].drop_duplicates(q).sort_values(q)
    return extra[q].to_numpy(np.int64), extra[g].to_numpy(np.int64)


def _recoding(state: _State) -> TableRecoding:
    """Each released distinct QI tuple -> its labels and canonical node ids, in the order of
    the tuples' leaf ids (deterministic, whatever order the passes released them in); then
    the population's tuples the table lacks that the passes assigned to released classes."""
    hist = state.hist
    idx = np.flatnonzero(state.released)
    # histogram rows differ by sensitive value too: one row per distinct QI tuple
    ids, n = group_rows(np.asarray(hist.codes[idx], dtype=np.int64))
    first = np.full(n, len(idx), dtype=np.int64)
    np.minimum.at(first, ids, np.arange(len(idx)))
    rows = idx[first]
    codes, nodes = hist.codes[rows], state.release[rows]
    m = codes.shape[1]
    if state.population is not None:
        extra_codes, extra_nodes = _population_tuples(state)
        codes = np.concatenate([codes, extra_codes])
        nodes = np.concatenate([nodes, extra_nodes])
    # codes into each QI's labels (object arrays): no Python object per tuple
    labels = [np.asarray(state.labels[j], dtype=object) for j in range(m)]
    return TableRecoding(Coded(codes, labels), Coded(nodes, labels), nodes)


def _solution_row(s, qis, result) -> dict:
    from anonsql.algorithms.lattice.algorithm import _solution_row as row

    return row(s, qis, result)


#: the family's algorithms, for the registry (:func:`anonsql.algorithms.registry`)
ALGORITHMS: tuple[type[Algorithm], ...] = (RhoGain, LocalRecoding)

__all__ = [
    "ALGORITHMS",
    "OUTLIERS",
    "LocalRecoding",
    "Pass",
    "RhoGain",
    "UnionClasses",
    "canonical_ids",
    "minimal_class_size",
    "union_classes",
]

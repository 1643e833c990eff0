"""Full-domain generalization with record suppression, as ARX does it: the optimal node of the
lattice of level vectors (``flash``, ``exhaustive``), or the best anonymous node a limited
search finds where the lattice is too large to enumerate (``heuristic``); the searches live in
:mod:`anonsql.algorithms.lattice`. The recoding is one level per QI over the pinned hierarchies."""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from anonsql.algorithms.base import Algorithm, Outcome, RunContext, given_options
from anonsql.algorithms.lattice.base import Search, SearchResult
from anonsql.algorithms.lattice.engine_classes import is_in_engine, load_histogram
from anonsql.algorithms.lattice.heuristic import Heuristic as HeuristicSearch
from anonsql.algorithms.lattice.searches import search as make_search
from anonsql.algorithms.recoding import LevelRecoding
from anonsql.backend.sql_templates import drop
from anonsql.data.classes import Partition
from anonsql.data.histogram import Histogram
from anonsql.data.memory import parse_size
from anonsql.data.units import UNITS, units_relation
from anonsql.errors import InputError
from anonsql.metrics.quality import quality_model
from anonsql.metrics.risk import risk_measures
from anonsql.models import HierarchicalEMD
from anonsql.models.goal import build_models
from anonsql.models.multi_sa import MULTI_SA, SA_COLUMN, composite, multi_sa_relation
from anonsql.models.requirements import Requirements, population_histogram
from anonsql.models.unit_requirements import UnitRequirements, check_unit_models
from anonsql.spec import Spec, Spell, sensitive_columns

if TYPE_CHECKING:
    from anonsql.hierarchy.hierarchy import Hierarchy


def suppression_budget(limit: float, known_rows: int, missing_rows: int) -> float:
    """The share of the *classified* rows the search may suppress when ``missing_rows`` rows
    (values their hierarchy lacks) are suppressed already: the limit applies to all rows."""
    total = known_rows + missing_rows
    allowed = limit * total - missing_rows
    if allowed < 0:
        raise InputError(
            f"{missing_rows} row(s) hold values missing from their hierarchies, more than the "
            f"suppression limit allows ({limit:.1%} of {total} rows)"
        )
    return min(1.0, allowed / known_rows) if known_rows else 0.0


def sensitive_hierarchy(ctx: RunContext, models: list) -> Hierarchy | None:
    """The sensitive attribute's hierarchy when a model needs it (hierarchical EMD), after
    checking that every model needing a sensitive attribute has one."""
    spec = ctx.spec
    sens_h = None
    if any(isinstance(m, HierarchicalEMD) for m in models):
        if spec.sensitive is None:
            raise InputError("hierarchical EMD needs a sensitive attribute (--sa)")
        # one attribute (the options refuse several), whose hierarchy the run pinned
        assert isinstance(spec.sensitive, str) and ctx.sensitive_key is not None
        ctx.db.hierarchies.check_column(ctx.source, spec.sensitive, ctx.sensitive_key)
        sens_h = ctx.db.hierarchies.load(ctx.sensitive_key)
    if any(m.needs_sensitive for m in models) and spec.sensitive is None:
        raise InputError("l-diversity and t-closeness need a sensitive attribute (--sa)")
    return sens_h


#: the options of every lattice search: the solution space, the monotone shortcut, the
#: histogram's memory, and local recoding after the search (its own options are
#: :class:`~anonsql.algorithms.lattice.passes.LocalRecoding`'s)
LATTICE_OPTIONS: tuple[str, ...] = ("solutions", "assume_monotone", "memory_budget", "recoding")


class _Lattice(Algorithm):
    options = LATTICE_OPTIONS
    several_sensitive = True
    progress = "lattice nodes settled"

    @classmethod
    def claims(cls, spec: Spec) -> bool:
        # with recoding="local" the lattice search is the first pass of local recoding
        return spec.algorithm == cls.name and spec.recoding_mode != "local"

    def summary_lines(self, result: Any) -> list[str]:
        lines = [
            f"transformation ({result.algorithm}, {result.checked} of {result.lattice_size} "
            f"nodes checked):"
        ]
        return lines + [f"  {q}: level {lv}" for q, lv in result.levels.items()]

    def run(self, ctx: RunContext) -> Outcome:
        spec = ctx.spec
        metric = spec.metric or "loss"
        search = self._search(spec)
        models = build_models(spec, ctx.sensitive_key)
        quality = quality_model(metric, spec.gs_factor)
        sens_h = sensitive_hierarchy(ctx, models)
        units = None
        source = ctx.source
        several = sensitive_columns(spec) if isinstance(spec.sensitive, list) else None
        # the one sensitive column the search reads (several: their composite, below)
        sensitive = None if isinstance(spec.sensitive, list) else spec.sensitive
        if spec.unit is not None:
            # one row per unit (docs/models/units.md): the search counts units as rows
            units = units_relation(ctx.db, ctx.source, spec.qis, spec.sensitive, spec.unit)
            source = UNITS
            ctx.after.callback(ctx.db.backend.execute, drop("table", UNITS))
            if units.null_rows and spec.missing != "suppress":
                raise InputError(
                    f"{units.null_rows} row(s) of {ctx.source!r} have no unit ({spec.unit} is "
                    f"NULL); give missing='suppress' (--missing suppress) to suppress them, "
                    f"each counted as one unit against the suppression limit, or fill the unit"
                )
        if units is not None and units.varying:
            return self._run_units(ctx, units, search, models, quality, metric, sens_h, several)
        if several is not None:
            # several sensitive attributes: the search reads their tuple as one composite
            # value (anonsql.models.multi_sa), each model tests each attribute
            keep = [*([spec.unit] if spec.unit is not None else []), *spec.qis]
            multi_sa_relation(ctx.db, source, keep, several)
            source, sensitive = MULTI_SA, SA_COLUMN
            ctx.after.callback(ctx.db.backend.execute, drop("table", MULTI_SA))
        # in memory when it fits the budget, else kept in the engine (engine_classes.py)
        hist = load_histogram(
            ctx.db,
            source,
            spec.qis,
            ctx.pinned_keys,
            sensitive,
            spec.missing,
            None if spec.memory_budget is None else parse_size(spec.memory_budget),
        )
        if units is not None and units.null_rows:
            hist.missing_rows += units.null_rows  # suppressed at every read by the guard
        try:
            comp = None
            if several is not None:
                comp = composite(ctx.db, several, hist.sens_labels, hist.overall_distribution())
            outcome = self._run(ctx, hist, search, models, quality, metric, sens_h, comp)
            if units is not None and spec.unit is not None:  # units come with a unit
                outcome.measures.update(units.figures(spec.unit))
            return outcome
        finally:
            if is_in_engine(hist):
                # DuckDB's limit stays held while the output is written: written under the
                # machine's limit, the output table of 100 M rows took the process to 1.2 GiB
                # against 0.7 GiB for the search (README "Histogram kept in the engine")
                hist.close(keep_limit=True)
                ctx.after.callback(hist.release_limit)

    def _run_units(self, ctx, units, search, models, quality, metric, sens_h, several):
        """Units whose rows hold several QI tuples or sensitive values: the search reads
        their distinct records and counts each class's units itself
        (:mod:`anonsql.models.unit_requirements`)."""
        spec = ctx.spec
        check_unit_models(models)
        source, sensitive, comp = UNITS, spec.sensitive, None
        if several is not None:
            # several sensitive attributes: their tuple as one composite value per record
            # (anonsql.models.multi_sa); each model reads its attribute's unit counts
            multi_sa_relation(ctx.db, UNITS, [spec.unit, *spec.qis], several)
            ctx.after.callback(ctx.db.backend.execute, drop("table", MULTI_SA))
            source, sensitive = MULTI_SA, SA_COLUMN
        hist = Histogram.from_database(
            ctx.db, source, spec.qis, ctx.keys, sensitive, spec.missing, unit=spec.unit
        )
        if several is not None:
            comp = composite(ctx.db, several, hist.sens_labels, hist.overall_distribution())
        requirements = UnitRequirements(models, spec.suppression, sens_h)
        requirements.composite = comp
        requirements.units = hist.units + units.null_rows
        requirements.missing_units = hist.missing_units + units.null_rows
        if requirements.allowed(0) < 0:
            raise InputError(
                f"{requirements.missing_units} unit(s) have rows without a unit or with values "
                f"missing from their hierarchies, more than the suppression limit allows "
                f"({spec.suppression:.1%} of {requirements.units} units)"
            )
        outcome = self._run(ctx, hist, search, models, quality, metric, sens_h, None, requirements)
        outcome.measures.update(units.figures(spec.unit))
        return outcome

    def _run(
        self, ctx, hist, search, models, quality, metric, sens_h, comp=None, requirements=None
    ) -> Outcome:
        spec = ctx.spec
        if hist.rows == 0:
            if hist.missing_rows:
                raise InputError(f"every row of {ctx.source!r} holds a value its hierarchy lacks")
            raise InputError(f"table {ctx.source!r} is empty")
        if requirements is None:
            budget = suppression_budget(spec.suppression, hist.rows, hist.missing_rows)
            requirements = Requirements(models, budget, sens_h)
            requirements.composite = comp
            requirements.population = population_histogram(ctx.db, models, spec.qis, ctx.keys)
        requirements.validate(hist)
        ctx.timings["histogram"] = time.perf_counter() - ctx.t0

        t1 = time.perf_counter()
        if hasattr(search, "frontier"):
            search.frontier = spec.solutions
        if hasattr(search, "assume_monotone"):
            search.assume_monotone = spec.assume_monotone
        result = search.run(hist, requirements, quality, ctx.progress)
        ctx.timings["search"] = time.perf_counter() - t1
        del search  # frees the search's partition cache before the output is written
        if result.optimum is None:
            goal = ", ".join(m.describe() for m in models)
            raise InputError(self._none_found(goal, spec, result))
        levels = list(result.optimum.levels)
        if result.partition is not None:
            part = result.partition
        elif is_in_engine(hist):
            part = hist.classes(tuple(levels))
        else:
            part = Partition.from_histogram(hist, tuple(levels))
        assessment = requirements.assess(part, hist)
        if not assessment.anonymous:
            # every search returns only nodes an assessment found anonymous; publishing one
            # that fails would release what the models forbid, so stop (a bug, not input)
            raise RuntimeError(
                f"{result.algorithm} returned {levels}, which fails the privacy models"
            )
        if isinstance(requirements, UnitRequirements):
            # per class its distinct units (a unit with records in several classes counts in
            # each); the table's units and the suppressed ones, counted once each
            sizes = requirements.unit_stats(part, hist).sizes
            measures = risk_measures(sizes, assessment.suppressed).to_dict()
            measures["rows"] = requirements.units
            measures["suppressed_rows"] = assessment.suppressed_rows + requirements.missing_units
            measures["suppressed_share"] = measures["suppressed_rows"] / requirements.units
            measures["unit_records"] = hist.rows + hist.missing_rows
        else:
            measures = risk_measures(part.sizes, assessment.suppressed).to_dict()
        if hist.missing_rows and not isinstance(requirements, UnitRequirements):
            measures["missing_rows"] = hist.missing_rows
            measures["suppressed_rows"] = measures.get("suppressed_rows", 0) + hist.missing_rows
            measures["rows"] = measures.get("rows", 0) + hist.missing_rows
        per_qi = quality.per_qi(part, assessment.suppressed)
        if is_in_engine(hist):
            # where the search's nodes were computed (a GROUP BY there, or a roll-up here)
            measures.update(hist.placement())
        return Outcome(
            recoding=LevelRecoding(list(ctx.keys), levels),
            models=models,
            metric=metric,
            score=result.optimum.score,
            measures=measures,
            checked=result.checked,
            algorithm=result.algorithm,
            guarantee=result.guarantee,
            levels=dict(zip(spec.qis, levels, strict=True)),
            per_qi=per_qi,
            # exact, however large (only the heuristic searches lattices beyond 64 bits, e.g.
            # 32 QIs of 4 levels); the writer records what the 64-bit column cannot hold in the
            # run's measures
            lattice_size=result.lattice_size,
            solutions=[_solution_row(s, spec.qis, result) for s in result.solutions],
        )

    def _search(self, spec) -> Search:
        return make_search(self.name)

    @staticmethod
    def _none_found(goal: str, spec, result: SearchResult) -> str:
        return (
            f"no transformation satisfies {goal} with at most {spec.suppression:.1%} of "
            f"the records suppressed"
        )


def _solution_row(s, qis, result: SearchResult) -> dict:
    return {
        "levels": list(s.levels),
        "transformation": ", ".join(f"{q}={lv}" for q, lv in zip(qis, s.levels, strict=True)),
        "score": s.score,
        "suppressed_rows": s.suppressed_rows,
        "classes": s.classes,
        "minimal": s.minimal,
        "optimal": result.optimum is not None and s.levels == result.optimum.levels,
    }


class Flash(_Lattice):
    """The optimal node, found by Flash's pruned search."""

    name = "flash"


class Exhaustive(_Lattice):
    """The optimal node, found by scoring every node."""

    name = "exhaustive"


class Heuristic(_Lattice):
    """The best anonymous node a time- or step-limited search finds, for lattices too large
    to enumerate (:mod:`anonsql.algorithms.lattice.heuristic`): anonymous, not proven optimal."""

    name = "heuristic"
    options = (*LATTICE_OPTIONS, "time_limit", "steps", "seed")
    progress = "heuristic search (of its time or step limit)"

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
        """The search's limits: a positive number of seconds, at least one node check, and
        only for this search (the exact searches and the greedy one have no limit)."""
        limits = sorted(given_options(spec, given, ("time_limit", "steps")), reverse=True)
        if limits and spec.algorithm != cls.name:
            names = " and ".join(spell(o) for o in limits)
            raise InputError(
                f"{prefix}{names} limit{'' if len(limits) > 1 else 's'} the heuristic search; "
                f"the {spec.algorithm!r} algorithm has no limit: use algorithm 'heuristic' or "
                f"leave {names} out"
            )
        tl = spec.time_limit
        if tl is not None and not (isinstance(tl, numbers.Real) and math.isfinite(tl) and tl > 0):
            raise InputError(f"{prefix}{spell('time_limit')} must be a positive number of seconds")
        steps = spec.steps
        if steps is not None and (
            isinstance(steps, bool) or not isinstance(steps, int) or steps < 1
        ):
            raise InputError(f"{prefix}{spell('steps')} must be at least 1 (node checks)")

    def _search(self, spec) -> Search:
        return HeuristicSearch(time_limit=spec.time_limit, steps=spec.steps, seed=spec.seed or 0)

    @staticmethod
    def _none_found(goal: str, spec, result: SearchResult) -> str:
        if "stopped by" not in result.guarantee:  # the search settled it
            return _Lattice._none_found(goal, spec, result)
        return (
            f"the heuristic search found no transformation that satisfies {goal} with at "
            f"most {spec.suppression:.1%} of the records suppressed ({result.guarantee}); "
            f"give it more time (--time-limit) or steps (--steps)"
        )


#: the family's algorithms, for the registry (:func:`anonsql.algorithms.registry`)
ALGORITHMS: tuple[type[Algorithm], ...] = (Flash, Exhaustive, Heuristic)

__all__ = ["ALGORITHMS", "Exhaustive", "Flash", "Heuristic", "suppression_budget"]

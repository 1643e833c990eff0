"""``algorithm="mondrian"``: Mondrian with l-diversity (LeFevre et al. 2006; seed 003 section
V) on the table's histogram. Its answer is a multidimensional recoding: each distinct original
QI tuple -> its partition's released values (intervals, sets or lowest common ancestors; see
:mod:`anonsql.algorithms.mondrian.release`). QIs need no hierarchy (:mod:`anonsql.data.points`
says how each is read)."""

from __future__ import annotations

import time
from collections.abc import Collection
from typing import Any

from sqlglot import exp

from anonsql.algorithms.base import Algorithm, Outcome, RunContext
from anonsql.algorithms.catalog import SEE
from anonsql.backend.sql_templates import table
from anonsql.errors import InputError
from anonsql.models.goal import build_models
from anonsql.spec import Spec, Spell, single_sensitive

GUARANTEE = (
    "heuristic (Mondrian, strict multidimensional partitioning): every released class "
    "satisfies the models; the partitions are greedily, not globally, minimal"
)


def check_spec(spec: Spec, name: str) -> None:
    """Options the partitioning algorithms do not take."""
    if spec.k is None:
        raise InputError(f"{name} needs k (k-anonymity, with l-diversity and t-closeness if set)")
    if spec.suppression:
        raise InputError(
            f"{name} partitions instead of suppressing records: use suppression 0 (rows with "
            f"values missing from a hierarchy are still left out with missing='suppress') {SEE}"
        )
    if spec.metric not in (None, "ncp"):
        raise InputError(
            f"{name} reports the normalized certainty penalty (metric 'ncp'), not {spec.metric!r}"
        )
    if spec.gs_factor != 0.5:
        raise InputError("gs_factor weighs ARX's Loss metric, which the partitioning does not use")
    if spec.label is not None and spec.label in spec.qis:
        raise InputError(f"the label {spec.label!r} cannot be a quasi-identifier")
    if spec.label is not None and spec.label == spec.sensitive:
        raise InputError(
            f"the label {spec.label!r} cannot be the sensitive attribute "
            f"(the TA_DA paper, section III)"
        )


def partitioning_lines(result: Any) -> list[str]:
    """What the command line says of a Mondrian or TA_DA run, and where it partitioned."""
    where = result.measures.get("partitioned_in")
    place = f"in the engine ({where['engine']}, {where['depths']} depths)" if where else "in memory"
    return [
        f"multidimensional partitioning ({result.algorithm}): {result.measures['groups']} "
        f"groups, {result.measures['partitions']} Mondrian partitions, computed {place}"
    ]


def hierarchies_of(ctx: RunContext) -> list:
    return [None if k is None else ctx.db.hierarchies.load(k) for k in ctx.keys]


#: the most data controllers a run takes (seed 003 splits the rows among them)
MAX_CONTROLLERS = 1_000_000


def engine_path(ctx: RunContext, mode: str, models: list, hierarchies: list) -> str | None:
    """Why this run partitions in memory (None: it partitions in the engine): TA_DA's groups,
    a QI with a hierarchy or several sensitive attributes, which the engine path does not
    serve (:func:`anonsql.algorithms.mondrian.engine.engine_unsupported`), or a table below
    the engine's size threshold (:func:`anonsql.algorithms.mondrian.engine.engine_threshold`),
    where the in-memory path is faster."""
    from anonsql.algorithms.mondrian import engine

    spec = ctx.spec
    needs = any(m.needs_sensitive for m in models)
    if needs and spec.sensitive is None:
        return "no sensitive attribute"  # the in-memory path says what is missing
    reason = engine.engine_unsupported(
        [h is not None for h in hierarchies], spec.sensitive, mode, needs
    )
    if reason is not None:
        return reason
    be = ctx.db.backend
    threshold = engine.engine_threshold(be.dialect)
    (rows,) = be.fetchall(exp.select(exp.Count(this=exp.Star())).from_(table(ctx.source)))[0]
    if int(rows) < threshold:
        return f"{int(rows):,} rows, below the engine path's {threshold:,}"
    return None


def run_partitioning(ctx: RunContext, mode: str, algorithm: str, guarantee: str) -> Outcome:
    from anonsql.algorithms.mondrian.checker import Checker
    from anonsql.algorithms.mondrian.driver import make_checker, measures, partition
    from anonsql.data.points import Points

    spec = ctx.spec
    models = build_models(spec, ctx.sensitive_key)
    hierarchies = hierarchies_of(ctx)
    sens_h = ctx.db.hierarchies.load(ctx.sensitive_key) if ctx.sensitive_key else None
    reason = engine_path(ctx, mode, models, hierarchies)
    result = None
    if reason is None:
        from anonsql.algorithms.mondrian.driver import engine_partitioning
        from anonsql.algorithms.mondrian.engine import EngineMondrian

        # the models' kinds and the smallest class, before anything runs in the engine
        early = Checker(models, None, None, sens_h)
        with EngineMondrian(
            ctx.db,
            ctx.source,
            list(spec.qis),
            single_sensitive(spec),
            models,
            early.needs_sensitive,
            spec.missing,
            spec.mondrian_stop,
            sens_h.top_level if sens_h is not None else None,
        ) as em:
            reason = em.prepare()
            if reason is None:
                if spec.controllers > em.rows:
                    raise InputError(
                        f"controllers ({spec.controllers}) must be at most the table's rows "
                        f"({em.rows}): each data controller anonymizes a share of them"
                    )
                done = em.run(2 * early.min_rows, spec.controllers, spec.seed or 0)
        if reason is None:
            points = done.points
            t = done.timings
            ctx.timings["histogram"] = t["histogram"]
            checker = make_checker(points, models, sens_h)
            result = engine_partitioning(
                points,
                done.part_of_row,
                spec.controllers,
                spec.seed or 0,
                {
                    "grouping": 0.0,
                    "grouping_cpu": 0.0,
                    "mondrian": t["levels"] + t["read"],
                    # CPU seconds of this process (DuckDB's threads included)
                    "histogram_cpu": t["histogram_cpu"],
                    "mondrian_cpu": t["levels_cpu"] + t["read_cpu"],
                },
            )
            where: dict[str, object] | None = {
                "engine": ctx.db.backend.dialect,
                "depths": done.levels,
                "statements": done.statements,
            }
    if result is None:
        features = None
        if mode == "cluster":
            from anonsql.masking.roles import declared_masks

            # identifiers (masked or dropped) are no features of the clustering
            drop = {spec.sensitive, spec.label, *declared_masks(spec)}
            features = [c for c in ctx.db.backend.columns(ctx.source) if c not in drop]
        label = spec.label if mode == "tree" else None
        c0 = time.process_time()
        points = Points.from_database(
            ctx.db,
            ctx.source,
            list(spec.qis),
            hierarchies,
            single_sensitive(spec),
            label,
            features,
            spec.missing,
        )
        ctx.timings["histogram"] = time.perf_counter() - ctx.t0
        ctx.timings["histogram_cpu"] = time.process_time() - c0
        checker = make_checker(points, models, sens_h)
        if spec.controllers > points.rows:
            raise InputError(
                f"controllers ({spec.controllers}) must be at most the table's rows "
                f"({points.rows}): each data controller anonymizes a share of them"
            )
        assert spec.k is not None  # check_spec requires it
        result = partition(
            points, checker, mode, spec.controllers, spec.seed or 0, spec.k, stop=spec.mondrian_stop
        )
        where = None
    ctx.timings.update(result.timings)
    t0 = time.perf_counter()
    figures = measures(points, result, checker)
    ctx.timings["measures"] = time.perf_counter() - t0
    if where is not None:
        # where the partitions were computed (absent: in memory, the path of small tables)
        figures["partitioned_in"] = where
    return Outcome(
        recoding=result.recoding,
        models=models,
        metric="ncp",
        score=figures["ncp"],
        per_qi=dict(zip(spec.qis, figures.pop("ncp_per_qi"), strict=True)),
        measures=figures,
        checked=figures["partitions"],
        algorithm=algorithm,
        guarantee=guarantee,
    )


class MondrianAlgorithm(Algorithm):
    name = "mondrian"
    options = ("mondrian_stop", "controllers", "seed")
    hierarchies_optional = True

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
        """Seed 003's options (label, cluster, controllers, seed) and Mondrian's stop rule
        (mondrian_stop) belong to the partitioning algorithms (unless the chosen algorithm
        takes one of them too: microaggregation's wLVQ2 reads the label and the seed); a
        whole number of controllers of at least one; a known stop rule. TA_DA's options are
        checked here too: they are Mondrian's, and the task's."""
        if alone:
            return  # how options combine; an option checked alone is not judged so
        from anonsql.algorithms.mondrian.cuts import NEXT_WIDEST, check_stop

        algo = spec.algorithm
        stop = spec.mondrian_stop
        set_ = [
            name
            for name, on in (
                ("label", spec.label is not None),
                ("cluster", bool(spec.cluster)),
                ("controllers", spec.controllers != 1),
                ("seed", spec.seed not in (None, 0)),
                ("mondrian_stop", stop != NEXT_WIDEST),
            )
            if on
        ]
        partitioning = ("mondrian", "tada")
        if chosen is not None and algo not in partitioning:
            set_ = [name for name in set_ if name not in chosen.options]
        if set_ and algo not in partitioning:
            raise InputError(
                f"{prefix}{', '.join(set_)}: option(s) of the partitioning algorithms "
                f"('mondrian', 'tada'), not of {algo!r} {SEE}"
            )
        for name in ("label", "cluster"):
            if name in set_ and algo == cls.name:
                raise InputError(
                    f"{prefix}{name} is an option of algorithm 'tada' (TA_DA, target-aware "
                    f"anonymization); plain Mondrian ignores the task"
                )
        c = spec.controllers
        if isinstance(c, bool) or not isinstance(c, int) or c < 1:
            raise InputError(f"{prefix}controllers must be a whole number >= 1, not {c!r}")
        if c > MAX_CONTROLLERS:
            raise InputError(
                f"{prefix}controllers must be at most {MAX_CONTROLLERS:,} (each holds a share "
                f"of the rows), not {c}"
            )
        seed = spec.seed
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise InputError(f"{prefix}seed must be a whole number >= 0, not {seed!r}")
        try:
            check_stop(stop)
        except InputError as e:
            raise InputError(f"{prefix}{e}") from None

    def summary_lines(self, result: Any) -> list[str]:
        return partitioning_lines(result)

    def run(self, ctx: RunContext) -> Outcome:
        check_spec(ctx.spec, "Mondrian")
        algo = "mondrian" + (f"/{ctx.spec.controllers}" if ctx.spec.controllers > 1 else "")
        return run_partitioning(ctx, "mondrian", algo, GUARANTEE)


#: the family's algorithms, for the registry (:func:`anonsql.algorithms.registry`)
ALGORITHMS: tuple[type[Algorithm], ...] = (MondrianAlgorithm,)

__all__ = [
    "ALGORITHMS",
    "GUARANTEE",
    "MondrianAlgorithm",
    "check_spec",
    "run_partitioning",
]

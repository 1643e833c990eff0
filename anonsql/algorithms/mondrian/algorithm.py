"""``algorithm="mondrian"``: Mondrian with l-diversity (LeFevre et al. 2006; seed 003 section
V) on the table's histogram. Its answer is a multidimensional recoding: each distinct original
QI tuple -> its partition's released values (intervals, sets or lowest common ancestors; see
:mod:`anonsql.algorithms.mondrian.release`). QIs need no hierarchy (:mod:`anonsql.data.points`
says how each is read)."""

from __future__ import annotations

import time

from anonsql.algorithms.base import Algorithm, Outcome, RunContext
from anonsql.algorithms.catalog import SEE
from anonsql.errors import InputError
from anonsql.models.goal import build_models

GUARANTEE = (
    "heuristic (Mondrian, strict multidimensional partitioning): every released class "
    "satisfies the models; the partitions are greedily, not globally, minimal"
)


def check_spec(spec, name: str) -> None:
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
            f"the label {spec.label!r} cannot be the sensitive attribute (seed 003 section III)"
        )


def hierarchies_of(ctx: RunContext) -> list:
    return [None if k is None else ctx.db.hierarchies.load(k) for k in ctx.keys]


#: the most data controllers a run takes (seed 003 splits the rows among them)
MAX_CONTROLLERS = 1_000_000


def run_partitioning(ctx: RunContext, mode: str, algorithm: str, guarantee: str) -> Outcome:
    from anonsql.algorithms.mondrian.driver import make_checker, measures, partition
    from anonsql.data.points import Points

    spec = ctx.spec
    models = build_models(spec, ctx.sensitive_key)
    features = None
    if mode == "cluster":
        from anonsql.masking.roles import declared_masks

        # identifiers (masked or dropped) are no features of the clustering
        drop = {spec.sensitive, spec.label, *declared_masks(spec)}
        features = [c for c in ctx.db.backend.columns(ctx.source) if c not in drop]
    label = spec.label if mode == "tree" else None
    points = Points.from_database(
        ctx.db,
        ctx.source,
        list(spec.qis),
        hierarchies_of(ctx),
        spec.sensitive,
        label,
        features,
        spec.missing,
    )
    ctx.timings["histogram"] = time.perf_counter() - ctx.t0
    sens_h = ctx.db.hierarchies.load(ctx.sensitive_key) if ctx.sensitive_key else None
    checker = make_checker(points, models, sens_h)
    if spec.controllers > points.rows:
        raise InputError(
            f"controllers ({spec.controllers}) must be at most the table's rows ({points.rows}): "
            f"each data controller anonymizes a share of them"
        )
    result = partition(
        points, checker, mode, spec.controllers, spec.seed, spec.k, stop=spec.mondrian_stop
    )
    ctx.timings.update(result.timings)
    t0 = time.perf_counter()
    figures = measures(points, result, checker)
    ctx.timings["measures"] = time.perf_counter() - t0
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
    hierarchies_optional = True

    def run(self, ctx: RunContext) -> Outcome:
        check_spec(ctx.spec, "Mondrian")
        algo = "mondrian" + (f"/{ctx.spec.controllers}" if ctx.spec.controllers > 1 else "")
        return run_partitioning(ctx, "mondrian", algo, GUARANTEE)


def check_partition_options(spec, prefix: str = "") -> None:
    """Seed 003's options (label, cluster, controllers, seed) and Mondrian's stop rule
    (mondrian_stop) belong to the partitioning algorithms; a whole number of controllers of
    at least one; a known stop rule."""
    from anonsql.algorithms.mondrian.cuts import NEXT_WIDEST, check_stop

    algo = getattr(spec, "algorithm", None)
    stop = getattr(spec, "mondrian_stop", NEXT_WIDEST)
    set_ = [
        name
        for name, on in (
            ("label", getattr(spec, "label", None) is not None),
            ("cluster", bool(getattr(spec, "cluster", False))),
            ("controllers", getattr(spec, "controllers", 1) != 1),
            ("seed", getattr(spec, "seed", 0) != 0),
            ("mondrian_stop", stop != NEXT_WIDEST),
        )
        if on
    ]
    if algo in ("mdav", "ktca", "ctca", "kde"):  # seed 001's microaggregation: wLVQ2's label
        set_ = [name for name in set_ if name not in ("label", "seed")]
    if set_ and algo not in ("mondrian", "tada"):
        raise InputError(
            f"{prefix}{', '.join(set_)}: option(s) of the partitioning algorithms "
            f"('mondrian', 'tada'), not of {algo!r} {SEE}"
        )
    for name in ("label", "cluster"):
        if name in set_ and algo == "mondrian":
            raise InputError(
                f"{prefix}{name} is an option of algorithm 'tada' (seed 003's target-aware "
                f"anonymization); plain Mondrian ignores the task"
            )
    c = getattr(spec, "controllers", 1)
    if isinstance(c, bool) or not isinstance(c, int) or c < 1:
        raise InputError(f"{prefix}controllers must be a whole number >= 1, not {c!r}")
    if c > MAX_CONTROLLERS:
        raise InputError(
            f"{prefix}controllers must be at most {MAX_CONTROLLERS:,} (each holds a share of "
            f"the rows), not {c}"
        )
    seed = getattr(spec, "seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"{prefix}seed must be a whole number >= 0, not {seed!r}")
    try:
        check_stop(stop)
    except InputError as e:
        raise InputError(f"{prefix}{e}") from None


__all__ = [
    "GUARANTEE",
    "MondrianAlgorithm",
    "check_partition_options",
    "check_spec",
    "run_partitioning",
]

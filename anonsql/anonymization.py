"""The main job: find the best full-domain generalization of a table and materialize it in
place. Everything is validated before the database is touched; the output, its suppressed
classes, the solution space and the provenance row are written in one transaction."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from sqlglot import exp

from anonsql.backend.sql_templates import table
from anonsql.data.histogram import Histogram
from anonsql.data.partition import Partition
from anonsql.database import Database
from anonsql.errors import InputError
from anonsql.metrics.quality import quality_model
from anonsql.metrics.risk import risk_measures
from anonsql.models import (
    L_VARIANTS,
    MODELS,
    T_VARIANTS,
    DistinctLDiversity,
    EntropyLDiversity,
    HierarchicalEMD,
    KAnonymity,
    PrivacyModel,
    RecursiveCLDiversity,
)
from anonsql.models.requirements import Requirements
from anonsql.output.materialize import output_query, replace_output
from anonsql.output.naming import check_may_replace, check_output_name
from anonsql.output.provenance import Provenance
from anonsql.search import search as make_search
from anonsql.search.base import Progress, SearchResult


@dataclass
class Spec:
    """What to anonymize and how. ``hierarchies`` maps a QI to its hierarchy's name when
    that is not the QI's own name."""

    qis: list[str]
    sensitive: str | None = None
    k: int | None = None
    l: float | None = None  # noqa: E741
    l_variant: str = "distinct-l"
    c: float = 3.0
    t: float | None = None
    t_variant: str = "equal-emd"
    sensitive_hierarchy: str | None = None
    suppression: float = 0.0
    metric: str | None = None  # default: "loss" (lattice), "nllm" (greedy)
    algorithm: str = "flash"  # flash, exhaustive, or greedy (seed 004's GAA)
    strategy: str = "s1"  # GAA's merging strategy (seed 004 Def. 17)
    hierarchies: dict[str, str] = field(default_factory=dict)
    output: str | None = None
    materialize: str = "view"
    drop_suppressed: bool = False
    solutions: bool = False  # also resolve and score every minimal anonymous node
    # opt-in: prune as if anonymity were monotone with suppression (may lose the optimum)
    assume_monotone: bool = False
    replace: bool = False  # replace an existing relation anonsql did not create
    columns: list[str] | None = None  # columns of the output (default: all the source's)

    def to_dict(self) -> dict:
        return asdict(self)


def build_models(spec: Spec) -> list[PrivacyModel]:
    models: list[PrivacyModel] = []
    if spec.k is not None:
        models.append(KAnonymity(spec.k))
    if spec.l is not None:
        if spec.l_variant not in L_VARIANTS:
            raise InputError(f"unknown l-diversity variant {spec.l_variant!r}; use {L_VARIANTS}")
        if spec.l_variant == "distinct-l":
            models.append(DistinctLDiversity(spec.l))
        elif spec.l_variant == "entropy-l":
            models.append(EntropyLDiversity(spec.l))
        else:
            models.append(RecursiveCLDiversity(spec.l, spec.c))
    if spec.t is not None:
        if spec.t_variant not in T_VARIANTS:
            raise InputError(f"unknown t-closeness variant {spec.t_variant!r}; use {T_VARIANTS}")
        if spec.t_variant == "hierarchical-emd":
            models.append(HierarchicalEMD(spec.t, spec.sensitive_hierarchy or spec.sensitive))
        else:
            models.append(MODELS[spec.t_variant](spec.t))  # type: ignore[call-arg]
    if not models:
        raise InputError("give a privacy goal: at least one of k, l, t")
    return models


def validate_columns(db: Database, source: str, spec: Spec) -> list[str]:
    """Check names before any work; returns the source's columns."""
    cols = db.backend.require_table(source)
    if not spec.qis:
        raise InputError("give at least one quasi-identifier")
    dupes = sorted({q for q in spec.qis if spec.qis.count(q) > 1})
    if dupes:
        raise InputError(f"quasi-identifier(s) named twice: {', '.join(map(repr, dupes))}")
    db.backend.require_columns(source, list(spec.qis))
    if spec.sensitive is not None:
        db.backend.require_columns(source, [spec.sensitive])
        if spec.sensitive in spec.qis:
            raise InputError(f"{spec.sensitive!r} cannot be both a quasi-identifier and sensitive")
    unknown = sorted(set(spec.hierarchies) - set(spec.qis))
    if unknown:
        raise InputError(f"--hierarchy names a column that is not a QI: {', '.join(unknown)}")
    if spec.columns is not None:
        db.backend.require_columns(source, list(spec.columns))
        dupes = sorted({c for c in spec.columns if spec.columns.count(c) > 1})
        if dupes:
            raise InputError(f"output column(s) named twice: {', '.join(map(repr, dupes))}")
        return list(spec.columns)
    return cols


@dataclass
class Result:
    run_id: int | None
    source: str
    output: str | None
    materialize: str | None
    levels: dict[str, int]
    metric: str
    score: float
    per_qi: dict[str, float] | None
    measures: dict[str, Any]
    checked: int
    lattice_size: int
    algorithm: str
    guarantee: str
    timings: dict[str, float]
    solutions: list[dict] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("solutions")
        out["solutions"] = len(self.solutions)
        return out

    def to_frame(self, db: Database) -> pd.DataFrame:
        if not self.output:
            raise InputError("this run wrote no output")
        return db.backend.fetch_df(exp.select("*").from_(table(self.output)))


def anonymize(db: Database, source: str, spec: Spec, progress: Progress | None = None) -> Result:
    """Search the lattice and (when ``spec.output`` is set) materialize the optimum."""
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    columns = validate_columns(db, source, spec)
    if spec.output is not None:
        check_output_name(spec.output, source)
    if spec.algorithm == "greedy":
        from anonsql.greedy.run import anonymize_greedy

        names = [db.hierarchies.resolve(q, spec.hierarchies.get(q)) for q in spec.qis]
        if spec.output is not None:
            check_may_replace(db, spec.output, spec.replace)
        return anonymize_greedy(db, source, spec, columns, names, progress, t0, timings)
    spec = replace(spec, metric=spec.metric or "loss")
    search = make_search(spec.algorithm)
    models = build_models(spec)
    quality = quality_model(spec.metric)
    names = [db.hierarchies.resolve(q, spec.hierarchies.get(q)) for q in spec.qis]
    sens_h = None
    if any(isinstance(m, HierarchicalEMD) for m in models):
        if spec.sensitive is None:
            raise InputError("hierarchical EMD needs a sensitive attribute (--sa)")
        sname = db.hierarchies.resolve(spec.sensitive, spec.sensitive_hierarchy)
        db.hierarchies.check_column(source, spec.sensitive, sname)
        sens_h = db.hierarchies.load(sname)
    requirements = Requirements(models, spec.suppression, sens_h)
    if requirements.needs_sensitive and spec.sensitive is None:
        raise InputError("l-diversity and t-closeness need a sensitive attribute (--sa)")
    if spec.output is not None:
        check_may_replace(db, spec.output, spec.replace)
    hist = Histogram.from_database(db, source, spec.qis, names, spec.sensitive)
    if hist.rows == 0:
        raise InputError(f"table {source!r} is empty")
    requirements.validate(hist)
    timings["histogram"] = time.perf_counter() - t0

    t1 = time.perf_counter()
    if hasattr(search, "frontier"):
        search.frontier = spec.solutions
    if hasattr(search, "assume_monotone"):
        search.assume_monotone = spec.assume_monotone
    result = search.run(hist, requirements, quality, progress)
    timings["search"] = time.perf_counter() - t1
    del search  # frees the search's partition cache before the database writes the output
    if result.optimum is None:
        goal = ", ".join(m.describe() for m in models)
        raise InputError(
            f"no transformation satisfies {goal} with at most {spec.suppression:.1%} of the "
            f"records suppressed"
        )

    levels = list(result.optimum.levels)
    part = result.partition or Partition.from_histogram(hist, tuple(levels))
    assessment = requirements.assess(part, hist)
    measures = risk_measures(part.sizes, assessment.suppressed).to_dict()
    per_qi = quality.per_qi(part, assessment.suppressed)
    score = result.optimum.score

    hierarchies = hist.hierarchies
    # the histogram (also held by the quality model) is not needed any more: free it
    # before the database builds the output
    del hist, quality, requirements
    run_id = None
    if spec.output is not None:
        t2 = time.perf_counter()
        run_id = _write(
            db,
            source,
            columns,
            spec,
            names,
            hierarchies,
            part,
            assessment,
            result,
            measures,
            timings,
            models,
            per_qi,
        )
        timings["materialize"] = time.perf_counter() - t2
    timings["total"] = time.perf_counter() - t0
    return Result(
        run_id,
        source,
        spec.output,
        spec.materialize if spec.output else None,
        dict(zip(spec.qis, levels, strict=True)),
        spec.metric,
        score,
        per_qi,
        measures,
        result.checked,
        result.lattice_size,
        result.algorithm,
        result.guarantee,
        timings,
        [_solution_row(s, spec.qis, result) for s in result.solutions],
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


def _write(
    db,
    source,
    columns,
    spec,
    names,
    hierarchies,
    part,
    assessment,
    result,
    measures,
    timings,
    models,
    per_qi,
) -> int:
    backend = db.backend
    prov = Provenance(backend)
    levels = list(result.optimum.levels)
    supp = np.flatnonzero(assessment.suppressed)
    label_columns = [
        np.asarray(h.labels, dtype=object)[part.node_column(j)[supp]]
        for j, h in enumerate(hierarchies)
    ]
    suppressed_keys = [list(key) for key in zip(*label_columns, strict=True)]
    with backend.transaction():
        run_id = prov.next_run_id()
        prov.replace_suppressed(run_id, spec.output, suppressed_keys)
        query = output_query(
            backend.dialect,
            source,
            columns,
            spec.qis,
            names,
            levels,
            run_id if suppressed_keys else None,
            spec.drop_suppressed,
        )
        replace_output(db, spec.materialize, spec.output, query)
        solutions = pd.DataFrame([_solution_row(s, spec.qis, result) for s in result.solutions])
        prov.record_solutions(run_id, solutions)
        params = spec.to_dict()
        params["hierarchies"] = dict(zip(spec.qis, names, strict=True))
        params["models"] = [m.describe() for m in models]
        prov.record_run(
            run_id,
            source=source,
            output=spec.output,
            materialize=spec.materialize,
            algorithm=result.algorithm,
            parameters=params,
            levels=dict(zip(spec.qis, levels, strict=True)),
            measures={
                "score": result.optimum.score,
                "metric": spec.metric,
                **measures,
                "per_qi": per_qi,
            },
            timings={k: round(v, 6) for k, v in timings.items()},
            checked=result.checked,
            lattice_size=result.lattice_size,
        )
    return run_id


__all__ = ["Result", "Spec", "anonymize", "build_models"]

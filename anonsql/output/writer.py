"""The one output writer: any algorithm's recoding becomes a self-guarding view (or a table
snapshot of it), with its provenance row and its pinned hierarchies, in one transaction.

The view is :func:`anonsql.output.guard.guarded_query` over the source: it re-applies the
run's transformation and privacy models at every read. A table is the same query's rows at
publication time. Run records keep what it takes to rebuild the query later (``status``,
``refresh``, representations, deployment scripts): the spec, the pinned hierarchy keys, the
levels or the recoding rows.
"""

from __future__ import annotations

import time
from dataclasses import fields
from typing import TYPE_CHECKING, Any

import pandas as pd
from sqlglot import exp

from anonsql.algorithms.dp.sampling import drop_sample, stale_samples
from anonsql.algorithms.recoding import LevelRecoding, Recoding, TableRecoding
from anonsql.backend.sql_templates import table
from anonsql.errors import InputError
from anonsql.models.base import PrivacyModel
from anonsql.models.requirements import population_table
from anonsql.models.t_closeness import HierarchicalEMD
from anonsql.output.guard import Guard, guarded_query
from anonsql.output.materialize import replace_output
from anonsql.output.naming import record_written
from anonsql.provenance import Provenance
from anonsql.spec import Spec

if TYPE_CHECKING:
    from anonsql.algorithms.base import Outcome
    from anonsql.masking.roles import Roles
    from anonsql.masking.tokens import Tokens


def make_guard(db, spec: Spec, models: list[PrivacyModel], sensitive_key: str | None) -> Guard:
    top = None
    population = population_table(models)
    unit = getattr(spec, "unit", None)
    if any(isinstance(m, HierarchicalEMD) for m in models):
        top = db.hierarchies.load(sensitive_key).top_level
        return Guard(models, spec.sensitive, sensitive_key, top, population, unit)
    sensitive = spec.sensitive if any(m.needs_sensitive for m in models) else None
    return Guard(models, sensitive, population=population, unit=unit)


def output_columns(spec: Spec, columns: list[str]) -> list[str]:
    """The output's columns: the chosen ones less the dropped identifiers."""
    from anonsql.masking.roles import declared_masks

    dropped = {c for c, m in declared_masks(spec).items() if m.method == "drop"}
    return [c for c in columns if c not in dropped]


def publish(
    db,
    source: str,
    roles: Roles,
    spec: Spec,
    outcome: Outcome,
    keys: list[str | None],
    sensitive_key: str | None,
    timings: dict[str, float],
    tokens: Tokens | None = None,
) -> int:
    """Write ``outcome``'s recoding as ``spec.output`` in one transaction; returns the run id.
    Call inside the run's transaction when the run stored hierarchies of its own. ``roles``
    says what each output column is (:func:`anonsql.masking.roles.resolve_roles`);
    ``tokens`` holds the keyed masks' tokens (:func:`anonsql.masking.tokens.prepare_tokens`)."""
    assert spec.output is not None  # the run publishes only when it names an output
    backend = db.backend
    masks = {**roles.masks, **(tokens.masks if tokens else {})}
    guard = make_guard(db, spec, outcome.models, sensitive_key)
    recoding: Recoding = outcome.recoding
    t0 = time.perf_counter()
    with backend.transaction():
        backend.lock_output(spec.output)  # a second run into this output waits or stops
        if outcome.before_write is not None:
            outcome.before_write(db)  # SafePub: the budget's limit, under its lock
        prov = Provenance(backend)  # creates anonsql's tables inside the transaction
        run_id = prov.next_run_id()
        # a DP release's stored sample read by the output this run replaces (anonsql.algorithms.dp)
        old_sample, orphans = stale_samples(db, spec.output, keep=outcome.release_source)
        if isinstance(recoding, TableRecoding):
            recoding.output = spec.output
            prov.replace_recodings(run_id, spec.output, recoding.frame(backend.dialect))
        prov.replace_masks(run_id, spec.output, tokens.frame if tokens else None)
        widths = None
        if isinstance(recoding, LevelRecoding) and all(k is not None for k in keys):
            # each QI's node-id bound: the classes are keyed by one packed column
            widths = [db.hierarchies.load(k).size for k in keys if k is not None]
        query = guarded_query(
            backend.dialect,
            outcome.release_source or source,
            roles.columns,
            list(spec.qis),
            recoding,
            guard,
            spec.drop_suppressed,
            masks=masks,
            output=spec.output,
            source_rows=outcome.measures.get("rows"),
            widths=widths,
        )
        replace_output(db, spec.materialize, spec.output, query)
        if old_sample and old_sample != outcome.release_source:
            drop_sample(db, old_sample)
        # samples of DP outputs dropped by hand: sampled source rows nothing publishes
        for orphan in orphans:
            drop_sample(db, orphan)
        record_written(db, spec.output, "anonymize")
        prov.record_solutions(run_id, pd.DataFrame(outcome.solutions))
        params = spec.to_dict()
        # a QI without hierarchy (the partitioning algorithms) has key None and no entry
        params["hierarchies"] = {
            q: db.hierarchies.load(k).name
            for q, k in zip(spec.qis, keys, strict=True)
            if k is not None
        }
        params["qi_keys"] = list(keys)
        params["sensitive_key"] = sensitive_key
        params["hierarchy_keys"] = [k for k in keys if k is not None] + (
            [sensitive_key] if sensitive_key else []
        )
        params["models"] = [m.describe() for m in outcome.models]
        # the Spec's own "recoding" (global/local) stays; the output's kind goes beside it
        params["recoding_kind"] = recoding.kind
        params["columns"] = list(roles.columns)
        # each column's role, and the masks as run (fake's kind resolved); no key material
        params["roles"] = roles.describe()
        params["masks"] = {**dict(spec.masks or {}), **{c: m.text() for c, m in masks.items()}}
        params.update(outcome.parameters)
        timings["materialize"] = time.perf_counter() - t0
        prov.record_run(
            run_id,
            source=source,
            output=spec.output,
            materialize=spec.materialize,
            algorithm=outcome.algorithm,
            parameters=params,
            levels=outcome.levels or None,
            measures={
                "score": outcome.score,
                "metric": outcome.metric,
                **outcome.measures,
                "per_qi": outcome.per_qi,
                "guarantee": outcome.guarantee,
                **_wide_lattice(outcome.lattice_size),
            },
            timings={k: round(v, 6) for k, v in timings.items()},
            checked=outcome.checked,
            lattice_size=_column_lattice(outcome.lattice_size),
        )
    return run_id


#: the largest lattice size the provenance column (a signed 64-bit integer on every engine)
#: holds
_BIGINT_MAX = 2**63 - 1


def _column_lattice(size: int | None) -> int | None:
    """The ``lattice_size`` column's value: the size, or NULL when a 64-bit integer cannot
    hold it (then :func:`_wide_lattice` records it)."""
    return size if size is None or size <= _BIGINT_MAX else None


def _wide_lattice(size: int | None) -> dict[str, int]:
    """A lattice size beyond the column's 64 bits, kept exactly in the run's measures (JSON
    integers have no bound; :func:`lattice_size_of_run` reads it back). The column keeps its
    type, so catalogs written before stay readable on every engine."""
    return {} if size is None or size <= _BIGINT_MAX else {"lattice_size": size}


def lattice_size_of_run(column: Any, measures: dict[str, Any]) -> int | None:
    """A run's lattice size: the column, or the measures' exact value where the column is NULL
    (beyond 64 bits); None for algorithms without a lattice."""
    import pandas as pd

    if column is not None and not pd.isna(column):
        return int(column)
    wide = measures.get("lattice_size")
    return int(wide) if wide is not None else None


def spec_of_run(run: dict[str, Any]):
    """The run's :class:`~anonsql.spec.Spec`, rebuilt from its parameters."""
    params = dict(run["parameters"])
    if params.get("recoding") not in (None, "global", "local"):
        del params["recoding"]  # a run recorded before recoding_kind: the kind, not the Spec's
    names = {f.name for f in fields(Spec)}
    return Spec(**{k: v for k, v in params.items() if k in names})


def recoding_kind(params: dict[str, Any]) -> str:
    """``levels`` or ``table``: the kind of recoding a run's output reads (runs recorded
    before ``recoding_kind`` kept it under ``recoding``)."""
    kind = params.get("recoding_kind") or params.get("recoding")
    return "table" if kind == "table" else "levels"


def run_query(
    db,
    run: dict[str, Any],
    *,
    roots: bool = False,
    flag: bool = False,
    drop_suppressed: bool | None = None,
    dialect: str | None = None,
    originals: bool = False,
    mask_digests: bool = False,
    extra: list[str] | None = None,
) -> tuple[exp.Select, dict[str, Any]]:
    """The guarded query of a recorded run (as its view reads it), and what it was built
    from: ``qis``, ``columns``, ``keys`` (pinned), ``hierarchies`` (loaded). ``originals``:
    the rows carry ``__o<j>`` and ``__n<j>`` as with ``roots``, for runs with QIs without
    hierarchy too (a suppressed row's node is then the root, or -1 without hierarchy)."""
    params = run["parameters"]
    if "qi_keys" not in params:
        raise InputError(
            f"run {run['run_id']} was written by an older anonsql without pinned hierarchies; "
            f"run it again"
        )
    spec = spec_of_run(run)
    qis = list(spec.qis)
    keys = list(params["qi_keys"])
    sensitive_key = params.get("sensitive_key")
    models = _models_of_run(spec, sensitive_key)
    guard = make_guard(db, spec, models, sensitive_key)
    recoding: Recoding
    if recoding_kind(params) == "table":
        recoding = TableRecoding.of([], [], [], output=run["output"])
    else:
        recoding = LevelRecoding(keys, [int(run["levels"][q]) for q in qis])
    hs = [None if k is None else db.hierarchies.load(k) for k in keys]
    if roots and any(h is None for h in hs):
        raise InputError(
            f"run {run['run_id']} released QIs without hierarchy (intervals or sets): the "
            f"hierarchy-node encodings need a hierarchy for every QI"
        )
    columns = list(params.get("columns") or db.backend.columns(run["source"]))
    # ``extra``: source columns read by anonsql itself (the report's unit counts), never a
    # published relation's
    columns += [c for c in extra or [] if c not in columns]
    from anonsql.masking.methods import parse_masks

    masks = {c: m for c, m in parse_masks(params.get("masks") or {}).items() if c in columns}
    query = guarded_query(
        dialect or db.backend.dialect,
        (params.get("dp") or {}).get("sample") or run["source"],  # a DP release's sample
        columns,
        qis,
        recoding,
        guard,
        spec.drop_suppressed if drop_suppressed is None else drop_suppressed,
        roots=[h.root for h in hs if h is not None]  # every QI has one (checked above)
        if roots
        else ([-1 if h is None else h.root for h in hs] if originals else None),
        flag=flag,
        masks=masks,
        output=run["output"],
        mask_digests=mask_digests,
        widths=[h.size for h in hs if h is not None] if all(h is not None for h in hs) else None,
    )
    return query, {"qis": qis, "columns": columns, "keys": keys, "hierarchies": hs}


def _models_of_run(spec: Spec, sensitive_key: str | None) -> list[PrivacyModel]:
    """The models the run's algorithm has its guard enforce (GAA's are its own)."""
    from anonsql.algorithms import algorithm_for

    return algorithm_for(spec).guard_models(spec, sensitive_key)


def suppressed_now(db, run: dict[str, Any]) -> tuple[int, int]:
    """(rows, suppressed rows) that the run's guarded query releases now. With a privacy
    unit, (units, suppressed units), counted as the run counted them (docs/models/units.md):
    a unit is suppressed as soon as one of its rows is."""
    unit = run["parameters"].get("unit")
    query, _ = run_query(db, run, flag=True, drop_suppressed=False, extra=[unit] if unit else None)
    flagged = exp.alias_(query.subquery(), "v", table=True)
    is_suppressed = exp.column("__suppressed", "v")
    if unit:
        # a row without a unit is never released and counts as one unit of its own, as the
        # run counted it (anonsql.data.units); COUNT(DISTINCT) leaves those rows out
        who = exp.column(unit, "v")
        alone = exp.func(
            "COALESCE",
            exp.Sum(
                this=exp.Case(
                    ifs=[exp.If(this=who.copy().is_(exp.null()), true=exp.convert(1))],
                    default=exp.convert(0),
                )
            ),
            exp.convert(0),
        )
        units = exp.Add(this=exp.Count(this=exp.Distinct(expressions=[who])), expression=alone)
        touched = exp.Add(
            this=exp.Count(
                this=exp.Distinct(
                    expressions=[exp.Case(ifs=[exp.If(this=is_suppressed, true=who.copy())])]
                )
            ),
            expression=alone.copy(),
        )
        agg = exp.select(units, touched).from_(flagged)
    else:
        agg = exp.select(
            exp.Count(this=exp.Star()),
            exp.func(
                "COALESCE",
                exp.Sum(
                    this=exp.Case(
                        ifs=[exp.If(this=is_suppressed, true=exp.convert(1))],
                        default=exp.convert(0),
                    )
                ),
                exp.convert(0),
            ),
        ).from_(flagged)
    rows, supp = db.backend.fetchall(agg)[0]
    return int(rows), int(supp or 0)


def source_rows(db, source: str) -> int:
    count = exp.select(exp.Count(this=exp.Star())).from_(table(source))
    return int(db.backend.fetchall(count)[0][0])


__all__ = ["make_guard", "output_columns", "publish", "run_query", "spec_of_run", "suppressed_now"]

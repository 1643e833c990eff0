"""The main job: find the best full-domain generalization of a table and materialize it in
place. Everything is validated before the database is touched; the output, its suppressed
classes, the solution space and the provenance row are written in one transaction."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

import pandas as pd
from sqlglot import exp

from anonsql.algorithms.lattice.base import Progress
from anonsql.backend.sql_templates import table
from anonsql.database import Database
from anonsql.errors import InputError
from anonsql.masking.roles import declared_roles
from anonsql.output.naming import check_may_replace, check_output_name
from anonsql.spec import Spec, normalize_sensitive, sensitive_columns

if TYPE_CHECKING:
    from anonsql.algorithms.base import Algorithm
    from anonsql.masking.roles import Roles
    from anonsql.masking.tokens import Tokens


def validate_columns(db: Database, source: str, spec: Spec) -> list[str]:
    """Check names before any work; returns the source's columns."""
    cols = db.backend.require_table(source)
    if not spec.qis:
        raise InputError("give at least one quasi-identifier")
    dupes = sorted({q for q in spec.qis if spec.qis.count(q) > 1})
    if dupes:
        raise InputError(f"quasi-identifier(s) named twice: {', '.join(map(repr, dupes))}")
    # the columns read above answer every check below: one catalog read for all of them
    db.backend.check_columns(source, list(spec.qis), cols)
    if spec.sensitive is not None:
        spec.sensitive = normalize_sensitive(spec.sensitive)
        db.backend.check_columns(source, sensitive_columns(spec), cols)
        overlap = sorted(set(sensitive_columns(spec)) & set(spec.qis))
        if overlap and isinstance(spec.sensitive, list):
            raise InputError(f"{overlap[0]!r} cannot be both a quasi-identifier and sensitive")
    if spec.identifiers:
        db.backend.check_columns(source, list(spec.identifiers), cols)
    declared_roles(spec)  # a column named for two roles
    lim = spec.suppression
    if isinstance(lim, bool) or not isinstance(lim, int | float) or not 0 <= lim <= 1:
        raise InputError(f"the suppression limit must be a share in [0, 1], got {lim!r}")
    if spec.missing not in ("error", "suppress"):
        raise InputError(f"missing is 'error' or 'suppress', not {spec.missing!r}")
    if spec.materialize not in ("view", "table"):
        raise InputError(f"materialize as 'view' or 'table', not {spec.materialize!r}")
    unknown = sorted(set(spec.hierarchies) - set(spec.qis))
    if unknown:
        raise InputError(f"--hierarchy names a column that is not a QI: {', '.join(unknown)}")
    if spec.columns is not None:
        db.backend.check_columns(source, list(spec.columns), cols)
        dupes = sorted({c for c in spec.columns if spec.columns.count(c) > 1})
        if dupes:
            raise InputError(f"output column(s) named twice: {', '.join(map(repr, dupes))}")
        return list(spec.columns)
    return cols


def unprotected_sensitive(spec: Spec, models: list, algo: Algorithm) -> str | None:
    """A warning when ``--sa`` names a column that no model reads: it is then released as it
    is, which ``keep`` says plainly (unless the algorithm reads it itself: GAA's strategies
    S2-S7 choose merges by it, TA_DA's clustering leaves it out of the features)."""
    if spec.sensitive is None or any(getattr(m, "needs_sensitive", False) for m in models):
        return None
    if algo.reads_sensitive(spec):
        return None
    what = (
        f"{spec.sensitive!r} is the sensitive attribute"
        if isinstance(spec.sensitive, str)
        else f"{', '.join(spec.sensitive)} are the sensitive attributes"
    )
    return (
        f"{what}, but no l-diversity, t-closeness, "
        f"beta-likeness or delta-disclosure protects it: it is released as it is. Add one "
        f"(--l, --t, --beta, --delta), or declare the column with --keep to say so"
    )


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
    #: the registered algorithm that ran (``local-recoding`` for a lattice search with
    #: recoding="local"): what the command line asks to sum the run up
    registered: str | None = None

    def summary(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("solutions")
        out.pop("registered")
        out["solutions"] = len(self.solutions)
        return out

    def to_frame(self, db: Database) -> pd.DataFrame:
        if not self.output:
            raise InputError("this run wrote no output")
        return db.backend.fetch_df(exp.select("*").from_(table(self.output)))


def anonymize(db: Database, source: str, spec: Spec, progress: Progress | None = None) -> Result:
    """Run ``spec.algorithm`` on ``source`` and, when ``spec.output`` is set, publish its
    recoding through the one output writer (a self-guarding view or a table snapshot)."""
    from anonsql.backend import caches

    # one read of the hierarchy catalog answers the run's lookups, on every engine
    with caches.one_run():
        return _anonymize(db, source, spec, progress)


def _anonymize(db: Database, source: str, spec: Spec, progress: Progress | None) -> Result:
    from anonsql.algorithms import algorithm_for
    from anonsql.algorithms.dp.safepub import dp_spec
    from anonsql.masking.roles import resolve_roles
    from anonsql.masking.tokens import prepare_tokens
    from anonsql.options import check_goal
    from anonsql.output.guard import check_source_name

    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    spec = dp_spec(spec)  # safepub: no suppression limit, suppressed rows left out
    check_goal(spec, "")
    columns = validate_columns(db, source, spec)
    check_source_name(source)
    roles = resolve_roles(db, source, spec, columns)
    tokens = prepare_tokens(db, source, spec, roles) if spec.output is not None else None
    if spec.output is not None:
        check_output_name(spec.output, source, db.backend)
        check_may_replace(db, spec.output, spec.replace)
    algo = algorithm_for(spec)
    built: dict[str, str] = {}
    new_names: list[str] = []
    if not algo.hierarchies_optional:
        # a QI without a hierarchy gets one built from its type and values (README
        # "Automatic hierarchies"); a rejected run removes the names it added
        from anonsql.hierarchy.auto import ensure_hierarchies

        new_names = [
            q for q in spec.qis if q not in spec.hierarchies and not db.hierarchies.exists(q)
        ]
    try:
        if not algo.hierarchies_optional:
            built = ensure_hierarchies(db, source, list(spec.qis), spec.hierarchies)
        return _run(db, source, spec, algo, roles, tokens, built, progress, timings, t0)
    except BaseException:
        for q in new_names:
            if db.hierarchies.exists(q):
                db.hierarchies.drop(q)
        raise


def _run(
    db: Database,
    source: str,
    spec: Spec,
    algo: Algorithm,
    roles: Roles,
    tokens: Tokens | None,
    built: dict[str, str],
    progress: Progress | None,
    timings: dict[str, float],
    t0: float,
) -> Result:
    from anonsql.algorithms.base import RunContext
    from anonsql.output.writer import publish

    names = [
        None
        if algo.hierarchies_optional and q not in spec.hierarchies and not db.hierarchies.exists(q)
        else db.hierarchies.resolve(q, spec.hierarchies.get(q))
        for q in spec.qis
    ]
    # a QI without hierarchy (partitioning algorithms only) has no pinned key: None
    keys = [None if n is None else db.hierarchies.pin(n) for n in names]
    sensitive_key = None
    if spec.t is not None and spec.t_variant == "hierarchical-emd":
        if spec.sensitive is None:
            raise InputError("hierarchical EMD needs a sensitive attribute (--sa)")
        if isinstance(spec.sensitive, list):  # the options refuse it first
            raise InputError("hierarchical EMD reads the hierarchy of one sensitive attribute")
        sname = db.hierarchies.resolve(spec.sensitive, spec.sensitive_hierarchy)
        sensitive_key = db.hierarchies.pin(sname)
    ctx = RunContext(db, source, spec, keys, sensitive_key, progress, timings, t0)
    with ctx.after:
        outcome = algo.run(ctx)
        if built:
            outcome.measures["hierarchies_built"] = built
        unprotected = unprotected_sensitive(spec, outcome.models, algo)
        if unprotected:
            outcome.measures.setdefault("warnings", []).append(unprotected)
        run_id = None
        if spec.output is not None:
            run_id = publish(db, source, roles, spec, outcome, keys, sensitive_key, timings, tokens)
    timings["total"] = time.perf_counter() - t0
    return Result(
        run_id,
        source,
        spec.output,
        spec.materialize if spec.output else None,
        outcome.levels,
        outcome.metric,
        outcome.score,
        outcome.per_qi,
        outcome.measures,
        outcome.checked,
        outcome.lattice_size or 0,
        outcome.algorithm,
        outcome.guarantee,
        timings,
        outcome.solutions,
        algo.name,
    )


def refresh(db, output: str, progress=None, missing: str | None = None):
    """Re-run ``output``'s stored spec on the current source and hierarchies, replacing the
    output in one transaction; returns the new run's :class:`~anonsql.run.Result`."""
    from anonsql.output.status import find_output
    from anonsql.output.writer import spec_of_run

    run = find_output(db, output)
    spec = replace(spec_of_run(run), output=run["output"], replace=False)
    if missing is not None:
        spec = replace(spec, missing=missing)
    return anonymize(db, run["source"], spec, progress)


__all__ = ["Result", "anonymize", "refresh", "unprotected_sensitive", "validate_columns"]

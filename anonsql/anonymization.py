"""The main job: find the best full-domain generalization of a table and materialize it in
place. Everything is validated before the database is touched; the output, its suppressed
classes, the solution space and the provenance row are written in one transaction."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

import pandas as pd
from sqlglot import exp

from anonsql.backend.sql_templates import table
from anonsql.database import Database
from anonsql.errors import InputError
from anonsql.masking.roles import declared_roles
from anonsql.models.goal import build_models
from anonsql.output.naming import check_may_replace, check_output_name
from anonsql.search.base import Progress


@dataclass
class Spec:
    """What to anonymize and how. ``hierarchies`` maps a QI to its hierarchy's name when
    that is not the QI's own name."""

    qis: list[str]
    #: one sensitive attribute, or several (a list, or "a,b"): README "Several sensitive
    #: attributes"; each model that reads one applies to each (ARX's semantics)
    sensitive: str | list[str] | None = None
    k: int | None = None
    l: float | None = None  # noqa: E741
    l_variant: str = "distinct-l"
    c: float = 3.0
    l_estimator: str = "shannon"  # entropy-l's estimator: "shannon" or "grassberger" (ARX)
    t: float | None = None
    t_variant: str = "equal-emd"
    sensitive_hierarchy: str | None = None
    beta: float | None = None  # beta-likeness (Cao, Karras)
    beta_variant: str = "basic"  # "basic" or "enhanced"
    delta: float | None = None  # delta-disclosure privacy (Brickell, Shmatikov)
    # a population table (QIs named as in the source): k-map and delta-presence count its rows
    population: str | None = None
    delta_min: float | None = None  # delta-presence (Nergiz et al.): lower bound, default 0
    delta_max: float | None = None  # delta-presence: upper bound, default 1
    k_map: int | None = None  # k-map (El Emam, Dankar): against population, or estimated
    k_map_estimator: str = "poisson"  # without a population: "poisson", "zero-truncated-poisson"
    significance: float = 0.05  # the estimated k-map's significance level
    population_size: int | None = None  # N, for estimated k-map and population uniqueness
    sampling_fraction: float | None = None  # or f = n / N
    max_average_risk: float | None = None  # ARX's AverageReidentificationRisk
    max_sample_uniqueness: float | None = None  # ARX's SampleUniqueness
    max_population_uniqueness: float | None = None  # ARX's PopulationUniqueness
    uniqueness_estimator: str = "dankar"  # "pitman", "zayatz", "snb", "dankar"
    suppression: float = 0.0
    metric: str | None = None  # default: "loss" (lattice), "nllm" (greedy)
    gs_factor: float = 0.5  # Loss: ARX's gsFactor, 0 favours suppression, 1 generalization
    algorithm: str = "flash"  # flash, exhaustive, heuristic, or greedy (seed 004's GAA)
    strategy: str = "s1"  # GAA's merging strategy (seed 004 Def. 17)
    hierarchies: dict[str, str] = field(default_factory=dict)
    output: str | None = None
    materialize: str = "view"
    drop_suppressed: bool = False
    solutions: bool = False  # also resolve and score every minimal anonymous node
    # opt-in: prune as if anonymity were monotone with suppression (may lose the optimum)
    assume_monotone: bool = False
    # the heuristic search's limits: seconds (None: 30, ARX's default) and node checks (None:
    # no limit); the result says which one stopped it
    time_limit: float | None = None
    steps: int | None = None
    # seed 002's rho-Gain (algorithm "rho-gain"): passes over the outliers after the first
    rho: int | None = None
    # "local": ARX's local recoding after a lattice algorithm (optimizeIterative's gsFactor,
    # maxIterations, adaptionFactor; defaults as ARX's GUI)
    recoding_mode: str = "global"  # option "recoding" ("recoding" in provenance is its kind)
    local_gs_factor: float = 0.05
    max_iterations: int = 100
    adaption_factor: float = 0.05
    # seed 003 (algorithms "mondrian" and "tada"): the label TA_DA's decision tree predicts,
    # clustering instead of classification, data controllers anonymizing their share of the
    # rows independently, and the seed of their random split (and of the k-means)
    label: str | None = None
    #: the privacy unit (docs/models/units.md): a column naming the person each row belongs
    #: to; k, the suppression limit and the risk figures count its distinct values
    unit: str | None = None
    cluster: bool = False
    controllers: int = 1
    # None: the algorithm's default (0 for the partitioning and microaggregation; for
    # safepub the operating system's randomness: a seed is for tests and reproductions)
    seed: int | None = None
    # Mondrian's stop rule when the widest QI has no allowable cut: "next-widest" tries the
    # next widest QI, "widest" releases the partition (LeFevre et al.'s rule)
    mondrian_stop: str = "next-widest"
    # algorithm "mdav" (seed 001): largest block of distinct QI tuples MDAV runs on exactly;
    # larger inputs are cut by median splits first (None: the default, 50,000)
    mdav_block: int | None = None
    replace: bool = False  # replace an existing relation anonsql did not create
    columns: list[str] | None = None  # columns of the output (default: all the source's)
    identifiers: list[str] | None = None  # direct identifiers: never in the output (drop)
    # the other roles of columns (anonsql.masking.roles): kept as they are, or masked
    keep: list[str] | None = None  # insensitive columns, released as they are
    masks: dict[str, str] = field(default_factory=dict)  # column -> masking method
    # columns that look like direct identifiers, published (kept or as QIs) all the same
    allow_identifying: list[str] | None = None
    fake_locale: str = "en_US"  # faker's locale of the fake mask
    # where the masking key is read from (else ANONSQL_KEY); the key itself is never stored
    key_file: str | None = None
    missing: str = "error"  # a QI value its hierarchy lacks: "error" or "suppress"
    # bytes (or "1GiB") the lattice search may use for the histogram; a larger one stays in
    # the engine (anonsql.data.engine_classes). None: a share of the machine's memory
    memory_budget: int | str | None = None
    # differential privacy (algorithm "safepub", anonsql.algorithms.dp): epsilon and delta
    # spent, the share of epsilon spent choosing the generalization (0: ``levels``, QI ->
    # level, fixed beforehand) and the exponential mechanism's steps
    dp_epsilon: float | None = None
    dp_delta: float | None = None
    dp_search_budget: float | None = None
    dp_steps: int | None = None
    levels: dict[str, int] | list[int] | None = None

    def __post_init__(self) -> None:
        self.sensitive = normalize_sensitive(self.sensitive)

    def to_dict(self) -> dict:
        return asdict(self)


#: the algorithms that protect several sensitive attributes (the lattice searches)
MULTI_SA_ALGORITHMS = ("flash", "exhaustive", "heuristic")


def normalize_sensitive(value: Any, where: str = "sensitive") -> str | list[str] | None:
    """One attribute as a str, several as a list of >= 2 names ("a,b" is split); a list of
    one name is that name."""
    if value is None:
        return None
    if isinstance(value, str):
        if "," not in value:
            return value
        value = value.split(",")
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise InputError(f"{where} is a column name or a list of column names, not {value!r}")
    names = [v.strip() for v in value]
    if not names or not all(names):
        raise InputError(f"{where}: an empty column name in {value!r}")
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise InputError(f"{where}: sensitive attribute(s) named twice: {', '.join(dupes)}")
    return names[0] if len(names) == 1 else names


def sensitive_columns(spec: Any) -> list[str]:
    """Every sensitive attribute of ``spec`` (none, one or several)."""
    s = spec if isinstance(spec, str | list | tuple) or spec is None else spec.sensitive
    if s is None:
        return []
    return [s] if isinstance(s, str) else list(s)


def check_sensitive_options(spec: Any, prefix: str = "", spell=repr) -> None:
    """Several sensitive attributes: the lattice searches with global recoding only, and no
    hierarchical EMD (it reads one attribute's hierarchy)."""
    if not isinstance(getattr(spec, "sensitive", None), list):
        return
    algorithm = getattr(spec, "algorithm", None) or "flash"
    if algorithm not in MULTI_SA_ALGORITHMS or getattr(spec, "recoding_mode", "global") != "global":
        raise InputError(
            f"{prefix}several sensitive attributes: algorithm {algorithm!r}"
            + (" with local recoding" if algorithm in MULTI_SA_ALGORITHMS else "")
            + f" protects one; the algorithms that protect several are "
            f"{', '.join(MULTI_SA_ALGORITHMS)} with global recoding"
        )
    if (
        getattr(spec, "t", None) is not None
        and getattr(spec, "t_variant", "") == "hierarchical-emd"
    ):
        raise InputError(
            f"{prefix}hierarchical-EMD t-closeness reads the hierarchy of one sensitive "
            f"attribute ({spell('sensitive_hierarchy')}); with several, use another "
            f"{spell('t_variant')} (equal-emd, ordered-emd, l1)"
        )


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
        spec.sensitive = normalize_sensitive(spec.sensitive)
        db.backend.require_columns(source, sensitive_columns(spec))
        overlap = sorted(set(sensitive_columns(spec)) & set(spec.qis))
        if overlap and isinstance(spec.sensitive, list):
            raise InputError(f"{overlap[0]!r} cannot be both a quasi-identifier and sensitive")
    if spec.identifiers:
        db.backend.require_columns(source, list(spec.identifiers))
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
        db.backend.require_columns(source, list(spec.columns))
        dupes = sorted({c for c in spec.columns if spec.columns.count(c) > 1})
        if dupes:
            raise InputError(f"output column(s) named twice: {', '.join(map(repr, dupes))}")
        return list(spec.columns)
    return cols


def unprotected_sensitive(spec: Spec, models: list) -> str | None:
    """A warning when ``--sa`` names a column that no model reads: it is then released as it
    is, which ``keep`` says plainly (GAA's strategies S2-S7 read it to choose merges, and
    TA_DA's clustering leaves it out of the features: there it has a use)."""
    if spec.sensitive is None or any(getattr(m, "needs_sensitive", False) for m in models):
        return None
    if spec.algorithm == "greedy" and spec.strategy not in ("s1",):
        return None
    if spec.algorithm == "tada" and spec.cluster:
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
    """Run ``spec.algorithm`` on ``source`` and, when ``spec.output`` is set, publish its
    recoding through the one output writer (a self-guarding view or a table snapshot)."""
    from anonsql.algorithms import algorithm
    from anonsql.algorithms.dp import dp_spec
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
    algo = algorithm(spec.algorithm)
    if spec.recoding_mode == "local":
        from anonsql.algorithms.rho_gain import LocalRecoding

        algo = LocalRecoding(spec.algorithm)
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


def _run(db, source, spec, algo, roles, tokens, built, progress, timings, t0) -> Result:
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
        sname = db.hierarchies.resolve(spec.sensitive, spec.sensitive_hierarchy)
        sensitive_key = db.hierarchies.pin(sname)
    ctx = RunContext(db, source, spec, keys, sensitive_key, progress, timings, t0)
    with ctx.after:
        outcome = algo.run(ctx)
        if built:
            outcome.measures["hierarchies_built"] = built
        unprotected = unprotected_sensitive(spec, outcome.models)
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
    )


__all__ = [
    "MULTI_SA_ALGORITHMS",
    "Result",
    "Spec",
    "anonymize",
    "build_models",
    "check_sensitive_options",
    "normalize_sensitive",
    "sensitive_columns",
]

"""What to anonymize and how: the run's options as one value. A leaf module (it imports
nothing of anonsql but its errors), so the orchestrator (:mod:`anonsql.run`), the option
table (:mod:`anonsql.options`), the output writer and every algorithm can name the type."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from anonsql.errors import InputError

#: how a surface spells an option's name in its errors (a CLI flag, a spec-file key)
Spell = Callable[[str], str]


@dataclass(frozen=True)
class Option:
    """One run option as every surface takes it: its name (spec-file key, SQL parameter,
    keyword of the Python API), the Spec field it sets, its kind (str, int, number, bool,
    list, columns, mapping, masks, size: :func:`anonsql.options.check_value`), and for the
    command line its help, its flag when not ``--name-with-dashes``, and its choices."""

    name: str
    field: str
    kind: str
    help: str = ""
    flag: str | None = None
    choices: tuple[str, ...] | None = None

    @property
    def cli_flag(self) -> str:
        return self.flag or "--" + self.name.replace("_", "-")


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
    # the engine (anonsql.algorithms.lattice.engine_classes). None: a share of the machine's memory
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


def single_sensitive(spec: Spec) -> str | None:
    """The sensitive attribute of a run whose algorithm protects one; the options refuse
    several for the others before a run starts (``check_sensitive_options``)."""
    if isinstance(spec.sensitive, list):
        raise InputError(
            f"algorithm {spec.algorithm!r} protects one sensitive attribute, not several"
        )
    return spec.sensitive


def sensitive_columns(spec: Any) -> list[str]:
    """Every sensitive attribute of ``spec`` (none, one or several)."""
    s = spec if isinstance(spec, str | list | tuple) or spec is None else spec.sensitive
    if s is None:
        return []
    return [s] if isinstance(s, str) else list(s)


__all__ = [
    "Option",
    "Spec",
    "Spell",
    "normalize_sensitive",
    "sensitive_columns",
    "single_sensitive",
]

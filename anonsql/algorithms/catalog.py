"""What each algorithm is, for ``anonsql algorithms`` and the errors that point there: its
method and paper, its recoding, its guarantee, the privacy models and options it takes,
whether it needs hierarchies, the engines it runs on.
``tests/algorithms/test_algorithms_catalog.py`` keeps this table and the algorithms
``algorithm`` takes (:func:`anonsql.algorithms.selectable`) the same set."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

#: every privacy model of the lattice searches
ALL_MODELS = (
    "k-anonymity",
    "l-diversity (distinct, entropy with Shannon or Grassberger, recursive (c,l))",
    "t-closeness (equal, ordered, hierarchical EMD; L1)",
    "beta-likeness (basic, enhanced)",
    "delta-disclosure",
    "delta-presence",
    "k-map (population table or estimated)",
    "average risk, sample and population uniqueness",
)
ENGINES = ("DuckDB", "PostgreSQL", "Spark")
#: the point of the errors about an option an algorithm does not take
SEE = "(anonsql algorithms lists what each algorithm takes)"


@dataclass(frozen=True)
class AlgorithmInfo:
    name: str
    summary: str  # one line: the method and its paper
    recoding: str
    guarantee: str
    models: tuple[str, ...]
    options: tuple[str, ...]  # its own options, beyond the shared goal and roles
    suppression: bool  # takes a suppression limit above 0
    hierarchies: str  # "needed" (built when missing), "optional", "none"
    units: bool  # counts privacy units (--unit)
    engines: tuple[str, ...] = ENGINES

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


_LATTICE_OPTIONS = ("metric", "gs_factor", "solutions", "assume_monotone", "memory_budget")
_MICRO = ("k-anonymity",)


def _micro(name: str, summary: str, every_group_k: bool) -> AlgorithmInfo:
    """A microaggregation method built on the same release (groups' means of numeric QIs)."""
    return AlgorithmInfo(
        name,
        summary,
        "microaggregation of numeric QIs",
        "every group holds at least k records"
        if every_group_k
        else "groups below k are suppressed within the limit",
        _MICRO,
        ("label (wLVQ2)", "seed"),
        True,
        "none (numeric QIs)",
        False,
    )


CATALOG: dict[str, AlgorithmInfo] = {
    i.name: i
    for i in (
        AlgorithmInfo(
            "flash",
            "the optimal full-domain generalization with suppression: ARX's Flash search over "
            "the lattice of levels (Kohlmayer et al. 2012)",
            "full-domain generalization (one level per QI), classes that fail suppressed",
            "exact optimum of the metric",
            ALL_MODELS,
            (*_LATTICE_OPTIONS, "recoding=local (ARX's local recoding)"),
            True,
            "needed (built when missing)",
            True,
        ),
        AlgorithmInfo(
            "exhaustive",
            "every node of the lattice of levels checked: the reference the other searches "
            "are tested against",
            "full-domain generalization, classes that fail suppressed",
            "exact optimum of the metric",
            ALL_MODELS,
            (*_LATTICE_OPTIONS, "recoding=local"),
            True,
            "needed (built when missing)",
            True,
        ),
        AlgorithmInfo(
            "heuristic",
            "a limited search of large lattices, after ARX's Lightning (Prasser et al. 2016): "
            "best-first with greedy climbs, a local search and its seeded random restarts, "
            "stopped by a time or step limit",
            "full-domain generalization, classes that fail suppressed",
            "heuristic: the best anonymous node found within the limit",
            ALL_MODELS,
            (*_LATTICE_OPTIONS, "time_limit", "steps", "seed", "recoding=local"),
            True,
            "needed (built when missing)",
            True,
        ),
        AlgorithmInfo(
            "rho-gain",
            "rho-Gain: the optimal node, then rho more passes over the suppressed outliers "
            "(the rho-Gain paper, Eq. 1 and Table I)",
            "a full-domain generalization per pass (records of one pass share its levels)",
            "each pass an exact optimum for its outliers; every released class satisfies the "
            "models",
            ALL_MODELS,
            ("rho", *_LATTICE_OPTIONS),
            True,
            "needed (built when missing)",
            False,
        ),
        AlgorithmInfo(
            "greedy",
            "the Greedy Anonymization Algorithm: classes merged at their lowest common "
            "ancestors (Mauger et al., strategies S1-S7)",
            "a generalization per class (multidimensional)",
            "greedy: every released class satisfies the models, no optimum claimed",
            ("k-anonymity", "entropy l-diversity", "t-closeness (L1)"),
            ("strategy", "metric (the seven unified loss metrics)"),
            False,
            "needed (built when missing)",
            False,
        ),
        AlgorithmInfo(
            "mondrian",
            "Mondrian strict multidimensional partitioning (LeFevre et al. 2006), extended to "
            "l-diversity and t-closeness (the TA_DA paper, section V)",
            "a partition per class: intervals or value sets",
            "partition: every released class satisfies the models; greedily minimal cuts",
            ("k-anonymity", "l-diversity", "t-closeness"),
            ("mondrian_stop", "controllers", "seed"),
            False,
            "optional (numbers and categories without one)",
            False,
        ),
        AlgorithmInfo(
            "tada",
            "target-aware anonymization for a downstream task (TA_DA): a (k,l)-compliant "
            "decision tree or clustering, then Mondrian",
            "a partition per class: intervals or value sets",
            "partition: every released class satisfies the models",
            ("k-anonymity", "l-diversity", "t-closeness"),
            ("label", "cluster", "controllers", "seed", "mondrian_stop"),
            False,
            "optional (numbers and categories without one)",
            False,
        ),
        AlgorithmInfo(
            "mdav",
            "MDAV microaggregation (Domingo-Ferrer and Torra; Zouinina et al. 2020): groups of "
            "at least k records, released as their means",
            "microaggregation of numeric QIs",
            "every group holds at least k records",
            _MICRO,
            ("mdav_block", "label (wLVQ2)", "seed"),
            True,
            "none (numeric QIs)",
            False,
        ),
        _micro(
            "ktca", "k-TCA: microaggregation by a self-organizing map (Zouinina et al. 2020)", False
        ),
        _micro(
            "ctca",
            "C-TCA: k-TCA with its small groups merged into their nearest (Zouinina et al. 2020)",
            True,
        ),
        _micro(
            "kde",
            "attribute-oriented microaggregation by kernel density estimation "
            "(Zouinina et al. 2020)",
            False,
        ),
        AlgorithmInfo(
            "safepub",
            "SafePub: (epsilon, delta)-differentially private microdata by random sampling, "
            "an exponential-mechanism search of the lattice and strongly-safe k-anonymization "
            "(Bild, Kuhn, Prasser, PoPETs 2018; ARX's EDDifferentialPrivacy)",
            "full-domain generalization of a stored random sample, classes below k left out",
            "(epsilon, delta)-differential privacy of the release; k derived from them",
            ("(epsilon, delta)-differential privacy",),
            (
                *("dp_epsilon", "dp_delta", "dp_search_budget", "dp_steps", "levels"),
                *("metric (loss, precision, aecs, dm, entropy)", "seed (tests only)"),
            ),
            False,
            "needed (built when missing)",
            False,
        ),
    )
}


def catalog() -> list[AlgorithmInfo]:
    return list(CATALOG.values())


__all__ = ["CATALOG", "SEE", "AlgorithmInfo", "catalog"]

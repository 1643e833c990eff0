"""What the lattice-search tests share (the soundness, heuristic and privacy-model tests):
a sensitive hierarchy over the values :func:`tests.helpers.strategies.anonymization_cases`
draws, each model with thresholds where classes pass and fail, the counterexamples to
monotonicity with suppression, random requirements, the documented tie-break of an optimum,
and a wide correlated table for lattices too large to enumerate."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import strategies as st

from anonsql.algorithms.lattice.base import Solution
from anonsql.data.histogram import Histogram
from anonsql.hierarchy.hierarchy import Hierarchy
from anonsql.metrics.quality import QUALITY
from anonsql.metrics.unified import METRICS as UNIFIED_METRICS
from anonsql.models import (
    AverageRisk,
    BasicBetaLikeness,
    DeltaDisclosure,
    DeltaPresence,
    DistinctLDiversity,
    EnhancedBetaLikeness,
    EntropyLDiversity,
    EqualDistanceEMD,
    EstimatedKMap,
    GrassbergerEntropyLDiversity,
    HierarchicalEMD,
    KAnonymity,
    L1Closeness,
    OrderedDistanceEMD,
    PrivacyModel,
    RecursiveCLDiversity,
    SampleUniqueness,
)
from anonsql.models.requirements import Requirements

SENSITIVE = ["a", "b", "c", "10", "2"]  # the values anonymization_cases draws for ``s``
METRICS = [*QUALITY, *UNIFIED_METRICS]


def sensitive_hierarchy() -> Hierarchy:
    return Hierarchy.from_rows(
        "s",
        [
            ["a", "ab", "*"],
            ["b", "ab", "*"],
            ["c", "c", "*"],
            ["10", "num", "*"],
            ["2", "num", "*"],
        ],
    )


SENS_H = sensitive_hierarchy()


def model_instances() -> list[PrivacyModel]:
    """Each model class with a few parameters, thresholds where classes pass and fail."""
    return [
        KAnonymity(2),
        KAnonymity(4),
        DistinctLDiversity(2),
        DistinctLDiversity(3),
        EntropyLDiversity(1.5),
        EntropyLDiversity(2),
        RecursiveCLDiversity(2, 1.5),
        RecursiveCLDiversity(2, 3.0),
        RecursiveCLDiversity(3, 2.0),
        EqualDistanceEMD(0.2),
        EqualDistanceEMD(0.4),
        HierarchicalEMD(0.15, SENS_H),
        HierarchicalEMD(0.3, SENS_H),
        OrderedDistanceEMD(0.2),
        OrderedDistanceEMD(0.35),
        L1Closeness(0.4),
        L1Closeness(0.8),
        BasicBetaLikeness(0.5),
        BasicBetaLikeness(1.5),
        EnhancedBetaLikeness(0.4),
        EnhancedBetaLikeness(2.0),
        DeltaDisclosure(0.8),
        DeltaDisclosure(1.5),
        GrassbergerEntropyLDiversity(2),
        GrassbergerEntropyLDiversity(2.8),
    ]


# One QI whose hierarchy merges v0 and v1 on level 1: node [0] has classes A (v0), B (v1)
# and D (v2), node [1] has A u B and D. Each case: a passing A and a failing B whose union
# fails, and a limit of |B| suppressed records, so [0] is anonymous and [1] is not.
QI_H = Hierarchy.from_rows("q", [["v0", "g1", "*"], ["v1", "g1", "*"], ["v2", "g2", "*"]])


def counted_rows(spec: dict[str, dict[str, int]]) -> pd.DataFrame:
    """Rows (q, s) from counts per QI value and sensitive value."""
    rows = [(q, s) for q, counts in spec.items() for s, n in counts.items() for _ in range(n)]
    return pd.DataFrame(rows, columns=["q", "s"])


# t-closeness: the table is half a, half b; A (5a 5b) is at distance 0, B (4a) far, D (6a 10b)
# close, A u B (9a 5b) at equal-distance EMD 1/7 (L1 2/7, hierarchical EMD 1/14: a and b meet
# on level 1 of 2)
T_TABLE = {"v0": {"a": 5, "b": 5}, "v1": {"a": 4}, "v2": {"a": 6, "b": 10}}
COUNTEREXAMPLES = {
    EntropyLDiversity: (EntropyLDiversity(2), {"v0": {"a": 1, "b": 1}, "v1": {"a": 2}}, 2),
    RecursiveCLDiversity: (
        RecursiveCLDiversity(2, 2.0),
        {"v0": {"a": 1, "b": 1}, "v1": {"a": 3}},
        3,
    ),
    EqualDistanceEMD: (EqualDistanceEMD(0.13), T_TABLE, 4),
    OrderedDistanceEMD: (OrderedDistanceEMD(0.13), T_TABLE, 4),
    L1Closeness: (L1Closeness(0.26), T_TABLE, 4),
    HierarchicalEMD: (HierarchicalEMD(0.065, SENS_H), T_TABLE, 4),
    # beta-likeness: B (4a) has D(a) = 1, A u B (9a 5b) 2/7, D (6a 10b) D(b) = 1/4
    BasicBetaLikeness: (BasicBetaLikeness(0.27), T_TABLE, 4),
    EnhancedBetaLikeness: (EnhancedBetaLikeness(0.27), T_TABLE, 4),
    # delta-disclosure: |log2| of B (4a) 1, of A u B 0.49 (b), of D 0.42 (a)
    DeltaDisclosure: (DeltaDisclosure(0.45), T_TABLE, 4),
    # Grassberger: {a x 8} has one value; {9 a, b} has H_G = 0.557 < ln 2
    GrassbergerEntropyLDiversity: (
        GrassbergerEntropyLDiversity(2),
        {"v0": {"a": 1, "b": 1}, "v1": {"a": 8}},
        8,
    ),
}


COUNTEREXAMPLES[DeltaPresence] = (
    # delta_max 0.5: v0 (1 of 10 in the population) passes, v1 (10 of 10) fails, g1 11 of 20
    DeltaPresence(0.0, 0.5, "pop"),
    {"v0": {"a": 1}, "v1": {"a": 10}},
    10,
)
#: the population tables of the counterexamples for models that read one (rows per leaf)
POPULATIONS = {DeltaPresence: {"v0": {"a": 10}, "v1": {"a": 10}}}


def counterexample(cls):
    """The model of ``cls``'s counterexample, its histogram and its suppression limit."""
    model, table, allowed = COUNTEREXAMPLES[cls]
    df = counted_rows(table)
    hist = Histogram.from_frame(df, ["q"], [QI_H], "s")
    return model, hist, allowed / len(df)


def counterexample_requirements(cls, model, limit) -> Requirements:
    req = Requirements([model], limit, SENS_H)
    if cls in POPULATIONS:
        req.population = Histogram.from_frame(counted_rows(POPULATIONS[cls]), ["q"], [QI_H])
    return req


@st.composite
def requirements(draw, positive_limit: bool | None = None) -> Requirements:
    """k-anonymity or not, with up to two other models (any combination), and a limit."""
    models: list[PrivacyModel] = []
    if draw(st.booleans()):
        models.append(KAnonymity(draw(st.integers(1, 4))))
    pool = {
        "distinct": lambda: DistinctLDiversity(draw(st.integers(2, 3))),
        "entropy": lambda: EntropyLDiversity(draw(st.sampled_from([1.3, 1.8, 2.5]))),
        "recursive": lambda: RecursiveCLDiversity(
            draw(st.integers(2, 3)), draw(st.sampled_from([1.0, 2.0, 3.0]))
        ),
        "equal": lambda: EqualDistanceEMD(draw(st.sampled_from([0.1, 0.25, 0.4]))),
        "hierarchical": lambda: HierarchicalEMD(draw(st.sampled_from([0.1, 0.2, 0.35])), SENS_H),
        "ordered": lambda: OrderedDistanceEMD(draw(st.sampled_from([0.1, 0.2, 0.3]))),
        "l1": lambda: L1Closeness(draw(st.sampled_from([0.2, 0.5, 0.8]))),
        "basic-beta": lambda: BasicBetaLikeness(draw(st.sampled_from([0.3, 0.8, 2.0]))),
        "enhanced-beta": lambda: EnhancedBetaLikeness(draw(st.sampled_from([0.3, 0.8, 2.0]))),
        "delta": lambda: DeltaDisclosure(draw(st.sampled_from([0.6, 1.0, 1.6]))),
        "grassberger": lambda: GrassbergerEntropyLDiversity(draw(st.sampled_from([1.5, 2.5]))),
        # issue 13's models that need no population table (the others, with a drawn population,
        # in tests/models/test_models_population.py)
        "k-map-estimated": lambda: EstimatedKMap(
            draw(st.integers(2, 5)),
            "poisson",
            0.05,
            population_size=draw(st.sampled_from([80, 400])),
        ),
        "average-risk": lambda: AverageRisk(draw(st.sampled_from([0.2, 0.4, 0.7]))),
        "sample-uniqueness": lambda: SampleUniqueness(draw(st.sampled_from([0.0, 0.1, 0.3]))),
    }
    names = draw(st.lists(st.sampled_from(sorted(pool)), max_size=2, unique=True))
    models += [pool[n]() for n in names]
    if not models:
        models.append(KAnonymity(draw(st.integers(2, 4))))
    if positive_limit is None:
        positive_limit = draw(st.booleans())
    limit = draw(st.sampled_from([0.05, 0.1, 0.2, 0.3, 0.5])) if positive_limit else 0.0
    return Requirements(models, limit, SENS_H)


def histogram_s(df, hs) -> Histogram:
    """The histogram of a drawn case, ``s`` sensitive."""
    return Histogram.from_frame(df, [h.name for h in hs], hs, "s")


def documented_optimum(solutions: list[Solution]) -> Solution | None:
    """The lowest score; ties (within the search's tolerance): lower total level, then
    lexically lower levels (README, "Anonymize")."""
    if not solutions:
        return None
    low = min(s.score for s in solutions)
    tied = [s for s in solutions if s.score <= low + 1e-12 * max(1.0, abs(low))]
    return min(tied, key=lambda s: (sum(s.levels), s.levels))


def wide_table(m: int, rows: int, seed: int = 0) -> tuple[pd.DataFrame, list[Hierarchy]]:
    """``rows`` rows over ``m`` QIs ``q0..``, each with 8 leaves and 4 levels (leaf, pair,
    quad, ``*``): a lattice of 4^m nodes. A hidden cluster drives every column (each value
    is the cluster's pair, or noise with a per-column probability), so QIs are correlated as
    in real data and anonymous nodes lie in the middle of the lattice, not only at the top. A
    sensitive column ``s`` follows the cluster."""
    rng = np.random.default_rng(seed)
    hs = [
        Hierarchy.from_rows(f"q{j}", [[f"v{i}", f"p{i // 2}", f"g{i // 4}", "*"] for i in range(8)])
        for j in range(m)
    ]
    cluster = rng.integers(0, 4, rows)
    data = {}
    for j in range(m):
        noise = rng.random(rows) < 0.15 + 0.4 * rng.random()
        pair = (2 * cluster + rng.integers(0, 2, rows)) % 8
        data[f"q{j}"] = [f"v{x}" for x in np.where(noise, rng.integers(0, 8, rows), pair)]
    data["s"] = [f"s{x}" for x in cluster + rng.integers(0, 3, rows)]
    return pd.DataFrame(data), hs


__all__ = [
    "COUNTEREXAMPLES",
    "METRICS",
    "POPULATIONS",
    "QI_H",
    "SENSITIVE",
    "SENS_H",
    "T_TABLE",
    "counted_rows",
    "counterexample",
    "counterexample_requirements",
    "documented_optimum",
    "histogram_s",
    "model_instances",
    "requirements",
    "sensitive_hierarchy",
    "wide_table",
]

"""Privacy models. Each model describes a per-class value, the test that value must pass, and
the SQL that computes the value over equivalence classes; ``MODELS`` maps user-facing names
to classes (like sqlglot's ``DIALECTS``)."""

from __future__ import annotations

from anonsql.models.base import ClassStats, PrivacyModel
from anonsql.models.beta_likeness import BETA_VARIANTS, BasicBetaLikeness, EnhancedBetaLikeness
from anonsql.models.delta_disclosure import DeltaDisclosure
from anonsql.models.delta_presence import DeltaPresence
from anonsql.models.k_anonymity import KAnonymity
from anonsql.models.k_map import EstimatedKMap, KMap
from anonsql.models.l_diversity import (
    DistinctLDiversity,
    EntropyLDiversity,
    GrassbergerEntropyLDiversity,
    RecursiveCLDiversity,
)
from anonsql.models.risk_thresholds import (
    AverageRisk,
    PopulationUniqueness,
    RiskThreshold,
    SampleUniqueness,
)
from anonsql.models.t_closeness import (
    EqualDistanceEMD,
    HierarchicalEMD,
    L1Closeness,
    OrderedDistanceEMD,
)

MODELS: dict[str, type[PrivacyModel]] = {
    "k-anonymity": KAnonymity,
    "distinct-l": DistinctLDiversity,
    "entropy-l": EntropyLDiversity,
    "entropy-l-grassberger": GrassbergerEntropyLDiversity,
    "recursive-cl": RecursiveCLDiversity,
    "equal-emd": EqualDistanceEMD,
    "hierarchical-emd": HierarchicalEMD,
    "ordered-emd": OrderedDistanceEMD,
    "l1": L1Closeness,
    "basic-beta-likeness": BasicBetaLikeness,
    "enhanced-beta-likeness": EnhancedBetaLikeness,
    "delta-disclosure": DeltaDisclosure,
    "delta-presence": DeltaPresence,
    "k-map": KMap,
    "k-map-estimated": EstimatedKMap,
    "average-risk": AverageRisk,
    "sample-uniqueness": SampleUniqueness,
    "population-uniqueness": PopulationUniqueness,
}

L_VARIANTS = ("distinct-l", "entropy-l", "recursive-cl")
T_VARIANTS = ("equal-emd", "hierarchical-emd", "ordered-emd", "l1")
#: entropy l-diversity's estimators (ARX's ``EntropyEstimator``): option ``l_estimator``
L_ESTIMATORS = ("shannon", "grassberger")

__all__ = [
    "BETA_VARIANTS",
    "L_ESTIMATORS",
    "L_VARIANTS",
    "MODELS",
    "T_VARIANTS",
    "AverageRisk",
    "BasicBetaLikeness",
    "ClassStats",
    "DeltaDisclosure",
    "DeltaPresence",
    "DistinctLDiversity",
    "EnhancedBetaLikeness",
    "EntropyLDiversity",
    "EqualDistanceEMD",
    "EstimatedKMap",
    "GrassbergerEntropyLDiversity",
    "HierarchicalEMD",
    "KAnonymity",
    "KMap",
    "L1Closeness",
    "OrderedDistanceEMD",
    "PopulationUniqueness",
    "PrivacyModel",
    "RecursiveCLDiversity",
    "RiskThreshold",
    "SampleUniqueness",
]

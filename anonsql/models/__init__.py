"""Privacy models. Each model describes a per-class value, the test that value must pass, and
the SQL that computes the value over equivalence classes; ``MODELS`` maps user-facing names
to classes (like sqlglot's ``DIALECTS``)."""

from __future__ import annotations

from anonsql.models.base import ClassStats, PrivacyModel
from anonsql.models.beta_likeness import BETA_VARIANTS, BasicBetaLikeness, EnhancedBetaLikeness
from anonsql.models.delta_disclosure import DeltaDisclosure
from anonsql.models.k_anonymity import KAnonymity
from anonsql.models.l_diversity import (
    DistinctLDiversity,
    EntropyLDiversity,
    GrassbergerEntropyLDiversity,
    RecursiveCLDiversity,
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
    "BasicBetaLikeness",
    "ClassStats",
    "DeltaDisclosure",
    "DistinctLDiversity",
    "EnhancedBetaLikeness",
    "EntropyLDiversity",
    "EqualDistanceEMD",
    "GrassbergerEntropyLDiversity",
    "HierarchicalEMD",
    "KAnonymity",
    "L1Closeness",
    "OrderedDistanceEMD",
    "PrivacyModel",
    "RecursiveCLDiversity",
]

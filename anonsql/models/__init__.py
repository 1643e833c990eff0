"""Privacy models. Each model describes a per-class value, the test that value must pass, and
the SQL that computes the value over equivalence classes; ``MODELS`` maps user-facing names
to classes (like sqlglot's ``DIALECTS``)."""

from __future__ import annotations

from anonsql.models.base import ClassStats, PrivacyModel
from anonsql.models.k_anonymity import KAnonymity
from anonsql.models.l_diversity import DistinctLDiversity, EntropyLDiversity, RecursiveCLDiversity
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
    "recursive-cl": RecursiveCLDiversity,
    "equal-emd": EqualDistanceEMD,
    "hierarchical-emd": HierarchicalEMD,
    "ordered-emd": OrderedDistanceEMD,
    "l1": L1Closeness,
}

L_VARIANTS = ("distinct-l", "entropy-l", "recursive-cl")
T_VARIANTS = ("equal-emd", "hierarchical-emd", "ordered-emd", "l1")

__all__ = [
    "L_VARIANTS",
    "MODELS",
    "T_VARIANTS",
    "ClassStats",
    "DistinctLDiversity",
    "EntropyLDiversity",
    "EqualDistanceEMD",
    "HierarchicalEMD",
    "KAnonymity",
    "L1Closeness",
    "OrderedDistanceEMD",
    "PrivacyModel",
    "RecursiveCLDiversity",
]

"""The privacy models a spec asks for (``k``, ``l`` with its variant and entropy estimator,
``t`` with its distance, ``beta`` with its variant, ``delta``), as
:class:`~anonsql.models.base.PrivacyModel` objects."""

from __future__ import annotations

from typing import Any

from anonsql.errors import InputError
from anonsql.models import (
    BETA_VARIANTS,
    L_ESTIMATORS,
    L_VARIANTS,
    MODELS,
    T_VARIANTS,
    DeltaDisclosure,
    DistinctLDiversity,
    EntropyLDiversity,
    GrassbergerEntropyLDiversity,
    HierarchicalEMD,
    KAnonymity,
    PrivacyModel,
    RecursiveCLDiversity,
)


def build_models(spec: Any, sensitive_hierarchy: str | None = None) -> list[PrivacyModel]:
    """The spec's models; ``sensitive_hierarchy`` (a pinned key) overrides the hierarchy a
    hierarchical EMD reads."""
    models: list[PrivacyModel] = []
    if spec.k is not None:
        models.append(KAnonymity(spec.k))
    estimator = getattr(spec, "l_estimator", "shannon")
    if estimator not in L_ESTIMATORS:
        raise InputError(f"unknown entropy estimator {estimator!r}; use {L_ESTIMATORS}")
    if estimator != "shannon" and (spec.l is None or spec.l_variant != "entropy-l"):
        raise InputError(
            f"the {estimator} estimator is an option of entropy l-diversity: give l with "
            f"l_variant 'entropy-l'"
        )
    if spec.l is not None:
        if spec.l_variant not in L_VARIANTS:
            raise InputError(f"unknown l-diversity variant {spec.l_variant!r}; use {L_VARIANTS}")
        if spec.l_variant == "distinct-l":
            models.append(DistinctLDiversity(spec.l))
        elif spec.l_variant == "entropy-l" and estimator == "grassberger":
            models.append(GrassbergerEntropyLDiversity(spec.l))
        elif spec.l_variant == "entropy-l":
            models.append(EntropyLDiversity(spec.l))
        else:
            models.append(RecursiveCLDiversity(spec.l, spec.c))
    if spec.t is not None:
        if spec.t_variant not in T_VARIANTS:
            raise InputError(f"unknown t-closeness variant {spec.t_variant!r}; use {T_VARIANTS}")
        if spec.t_variant == "hierarchical-emd":
            name = sensitive_hierarchy or spec.sensitive_hierarchy or spec.sensitive
            models.append(HierarchicalEMD(spec.t, name))
        else:
            models.append(MODELS[spec.t_variant](spec.t))  # type: ignore[call-arg]
    beta = getattr(spec, "beta", None)
    variant = getattr(spec, "beta_variant", "basic")
    if variant not in BETA_VARIANTS:
        raise InputError(f"unknown beta-likeness variant {variant!r}; use {tuple(BETA_VARIANTS)}")
    if beta is not None:
        models.append(BETA_VARIANTS[variant](beta))
    delta = getattr(spec, "delta", None)
    if delta is not None:
        models.append(DeltaDisclosure(delta))
    if not models:
        raise InputError("give a privacy goal: at least one of k, l, t, beta, delta")
    return models


__all__ = ["build_models"]

"""The privacy models a spec asks for (``k``, ``l`` with its variant, ``t`` with its
distance), as :class:`~anonsql.models.base.PrivacyModel` objects."""

from __future__ import annotations

from typing import Any

from anonsql.errors import InputError
from anonsql.models import (
    L_VARIANTS,
    MODELS,
    T_VARIANTS,
    DistinctLDiversity,
    EntropyLDiversity,
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
    if spec.l is not None:
        if spec.l_variant not in L_VARIANTS:
            raise InputError(f"unknown l-diversity variant {spec.l_variant!r}; use {L_VARIANTS}")
        if spec.l_variant == "distinct-l":
            models.append(DistinctLDiversity(spec.l))
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
    if not models:
        raise InputError("give a privacy goal: at least one of k, l, t")
    return models


__all__ = ["build_models"]

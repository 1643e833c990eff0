"""The privacy models a spec asks for (``k``, ``l`` with its variant and entropy estimator,
``t`` with its distance, ``beta`` with its variant, ``delta``, and the population models:
``delta_min``/``delta_max`` with ``population`` for delta-presence, ``k_map`` against
``population`` or estimated, ``max_average_risk``, ``max_sample_uniqueness``,
``max_population_uniqueness``), as :class:`~anonsql.models.base.PrivacyModel` objects."""

from __future__ import annotations

from typing import cast

from anonsql.errors import InputError
from anonsql.models import (
    BETA_VARIANTS,
    L_ESTIMATORS,
    L_VARIANTS,
    MODELS,
    T_VARIANTS,
    AverageRisk,
    DeltaDisclosure,
    DeltaPresence,
    DistinctLDiversity,
    EntropyLDiversity,
    EstimatedKMap,
    GrassbergerEntropyLDiversity,
    HierarchicalEMD,
    KAnonymity,
    KMap,
    PopulationUniqueness,
    PrivacyModel,
    RecursiveCLDiversity,
    SampleUniqueness,
)
from anonsql.models.base import OnAttribute
from anonsql.spec import Spec


def build_models(spec: Spec, sensitive_hierarchy: str | None = None) -> list[PrivacyModel]:
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
            if isinstance(name, list):  # the options refuse it first (check_sensitive_options)
                raise InputError(
                    "hierarchical-EMD t-closeness reads the hierarchy of one sensitive "
                    "attribute; with several, use another t_variant (equal-emd, ordered-emd, l1)"
                )
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
    sensitive = getattr(spec, "sensitive", None)
    if isinstance(sensitive, list | tuple) and len(sensitive) > 1:
        # several sensitive attributes: each model that reads one applies to each (ARX)
        # (an OnAttribute stands in for its inner model: it forwards every attribute to it)
        models = [
            wrapped
            for m in models
            for wrapped in (
                [cast(PrivacyModel, OnAttribute(m, i, col)) for i, col in enumerate(sensitive)]
                if m.needs_sensitive
                else [m]
            )
        ]
    models += population_models(spec)
    if not models:
        raise InputError(
            "give a privacy goal: at least one of k, l, t, beta, delta, delta_min/delta_max, "
            "k_map, max_average_risk, max_sample_uniqueness, max_population_uniqueness"
        )
    return models


def population_models(spec: Spec) -> list[PrivacyModel]:
    """delta-presence, k-map and the risk thresholds (:mod:`anonsql.models.delta_presence`,
    :mod:`~anonsql.models.k_map`, :mod:`~anonsql.models.risk_thresholds`), and the checks on
    how their options combine."""
    models: list[PrivacyModel] = []
    population = getattr(spec, "population", None)
    size = getattr(spec, "population_size", None)
    fraction = getattr(spec, "sampling_fraction", None)
    d_min, d_max = getattr(spec, "delta_min", None), getattr(spec, "delta_max", None)
    k_map = getattr(spec, "k_map", None)
    pu = getattr(spec, "max_population_uniqueness", None)
    if d_min is not None or d_max is not None:
        if population is None:
            raise InputError("delta-presence needs the population table (population)")
        models.append(
            DeltaPresence(
                0.0 if d_min is None else d_min, 1.0 if d_max is None else d_max, population
            )
        )
    estimated = k_map is not None and population is None
    if k_map is not None and population is not None:
        if (size, fraction) != (None, None):
            raise InputError(
                "k-map against a population table counts it: population_size and "
                "sampling_fraction are for the estimate without one"
            )
        models.append(KMap(k_map, population))
    elif k_map is not None:  # estimated
        models.append(EstimatedKMap(k_map, spec.k_map_estimator, spec.significance, size, fraction))
    if population is not None and not models:
        raise InputError("population is the table of delta-presence or k-map: give either")
    if pu is None and not estimated and (size, fraction) != (None, None):
        raise InputError(
            "population_size and sampling_fraction are options of an estimated k-map or of "
            "max_population_uniqueness"
        )
    if size is not None and fraction is not None:
        raise InputError("give population_size or sampling_fraction, not both")
    risk = getattr(spec, "max_average_risk", None)
    if risk is not None:
        models.append(AverageRisk(risk))
    su = getattr(spec, "max_sample_uniqueness", None)
    if su is not None:
        models.append(SampleUniqueness(su))
    if pu is not None:
        models.append(PopulationUniqueness(pu, spec.uniqueness_estimator, size, fraction))
    return models


__all__ = ["build_models", "population_models"]

"""``algorithm="greedy"``: seed 004's GAA (Algorithm 1) on the table's histogram. Its answer
is a multidimensional recoding: each distinct original QI tuple -> its class's labels (the
per-QI lowest common ancestors of the merged classes)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from anonsql.algorithms.base import Algorithm, Outcome, RunContext
from anonsql.algorithms.catalog import SEE
from anonsql.algorithms.greedy.gaa import GreedyModel, GreedyResult, _ldiv, _tclo, gaa
from anonsql.algorithms.recoding import Coded, TableRecoding
from anonsql.data.classes import group_rows
from anonsql.data.histogram import Histogram
from anonsql.errors import InputError
from anonsql.metrics.risk import risk_measures
from anonsql.metrics.unified import METRICS, UnifiedMetric
from anonsql.models import EntropyLDiversity, KAnonymity, L1Closeness, PrivacyModel
from anonsql.models.base import NULL_SENSITIVE
from anonsql.spec import Spec, single_sensitive

GUARANTEE = (
    "heuristic (Mauger et al.'s GAA): every class satisfies the model; the generalization cost "
    "is greedily, not globally, minimal"
)


def greedy_model(spec: Spec) -> GreedyModel:
    if spec.k is None:
        raise InputError(
            "GAA needs k (Mauger et al. anonymize with k-anonymity, optionally with l/t)"
        )
    if spec.suppression:
        raise InputError(
            f"GAA merges classes instead of suppressing records: use suppression 0 {SEE}"
        )
    if spec.l is not None and spec.l_variant != "entropy-l":
        raise InputError(
            "GAA uses entropy l-diversity (Mauger et al., Def. 10): l_variant entropy-l"
        )
    if spec.t is not None and spec.t_variant != "l1":
        raise InputError(
            "GAA uses t-closeness with the L1 distance (Mauger et al., Def. 13): t_variant l1"
        )
    if spec.beta is not None or spec.delta is not None or spec.l_estimator != "shannon":
        raise InputError(
            "GAA knows Mauger et al.'s models only (k, entropy l with the Shannon estimator, "
            "L1 t): "
            "use a lattice algorithm for beta-likeness, delta-disclosure or l_estimator"
        )
    if spec.gs_factor != 0.5:
        raise InputError("gs_factor weighs ARX's Loss metric, which GAA does not use")
    from anonsql.models.goal import population_models

    if population_models(spec):
        raise InputError(
            "GAA knows Mauger et al.'s models only: use a lattice algorithm for delta-presence, "
            "k-map and the risk thresholds"
        )
    return GreedyModel(spec.k, spec.l, spec.t)


def guard_models(model: GreedyModel) -> list[PrivacyModel]:
    """The privacy models of :mod:`anonsql.models` that define GAA's (seed 004 Defs. 10 and
    13): what the output's guard enforces at every read."""
    models: list[PrivacyModel] = [KAnonymity(model.k)]
    if model.l is not None:
        models.append(EntropyLDiversity(model.l))
    if model.t is not None:
        models.append(L1Closeness(model.t))
    return models


class GreedyAlgorithm(Algorithm):
    name = "greedy"
    options = ("strategy",)
    progress = "violating classes merged"
    counted = "class merges"

    def reads_sensitive(self, spec: Spec) -> bool:
        # strategies S2-S7 read the sensitive attribute to choose merges (seed 004 Def. 17)
        return spec.strategy not in ("s1",)

    def guard_models(self, spec: Spec, sensitive_key: str | None) -> list[PrivacyModel]:
        return guard_models(greedy_model(spec))

    def summary_lines(self, result: Any) -> list[str]:
        return [f"multidimensional recoding ({result.algorithm}, {result.checked} class merges)"]

    def run(self, ctx: RunContext) -> Outcome:
        spec = ctx.spec
        model = greedy_model(spec)
        metric = spec.metric or "nllm"
        if metric not in METRICS:
            raise InputError(
                f"GAA uses Mauger et al.'s metrics ({', '.join(METRICS)}), not {metric!r}"
            )
        if spec.missing == "suppress":
            raise InputError(
                "GAA suppresses no records: missing='suppress' is for the lattice searches"
            )
        hist = Histogram.from_database(
            ctx.db, ctx.source, spec.qis, ctx.pinned_keys, single_sensitive(spec)
        )
        if hist.rows == 0:
            raise InputError(f"table {ctx.source!r} is empty")
        if (model.l is not None or model.t is not None) and NULL_SENSITIVE in hist.sens_labels:
            # a NULL sensitive value is no value (README "NULL sensitive values"); seed 004's
            # merge measures (Defs. 10-13) are defined on the class sizes, so GAA would count
            # NULL rows in a distribution the output's guard leaves them out of
            nulls = int(hist.counts[hist.sens == hist.sens_labels.index(NULL_SENSITIVE)].sum())
            raise InputError(
                f"GAA's l-diversity and t-closeness take no NULL sensitive values, and "
                f"{spec.sensitive!r} holds {nulls} (NULL is no value); use a lattice "
                f"algorithm (flash), mondrian, or a table without those rows"
            )
        ctx.timings["histogram"] = time.perf_counter() - ctx.t0
        t1 = time.perf_counter()
        result = gaa(hist, model, metric, spec.strategy, ctx.progress)
        ctx.timings["search"] = time.perf_counter() - t1
        measures = greedy_measures(hist, result, metric)
        return Outcome(
            recoding=recoding_of(hist, result),
            models=guard_models(model),
            metric=metric,
            score=measures["alteration"],
            per_qi=dict(zip(spec.qis, measures.pop("alteration_per_qi"), strict=True)),
            measures=measures,
            checked=result.merges,
            algorithm=f"greedy/{spec.strategy}",
            guarantee=GUARANTEE,
        )


def recoding_of(hist: Histogram, result: GreedyResult) -> TableRecoding:
    """Each distinct original QI tuple (in the order of its first histogram row: rows differ
    by sensitive value too) and its class's labels and node ids, as codes into the
    hierarchies' labels (leaves are distinct nodes, so distinct tuples are distinct codes)."""
    labels = [np.asarray(h.labels, dtype=object) for h in hist.hierarchies]
    codes = np.asarray(hist.codes, dtype=np.int64)
    ids, n = group_rows(codes)
    first = np.full(n, len(codes), dtype=np.int64)
    np.minimum.at(first, ids, np.arange(len(codes), dtype=np.int64))
    rows = np.sort(first)
    nodes = np.asarray(result.nodes, dtype=np.int64)[result.row_class[rows]]
    return TableRecoding(Coded(codes[rows], labels), Coded(nodes, labels), nodes)


def greedy_measures(hist: Histogram, result: GreedyResult, metric: str) -> dict:
    """Risk measures, the alteration for the chosen metric (seed 004 Def. 7) and, with a
    sensitive attribute, the table's l_div and t_clo values (Defs. 11 and 14)."""
    m = len(hist.qis)
    out = risk_measures(result.sizes, np.zeros(result.classes, dtype=bool)).to_dict()
    gen = result.nodes[result.row_class]
    original = [hist.codes[:, j] for j in range(m)]
    generalized = [gen[:, j] for j in range(m)]
    unified = UnifiedMetric(metric, hist.hierarchies)
    out["alteration"] = unified.alteration(original, generalized, hist.counts)
    # Definition 7 per QI: that QI's cost over its own worst cost (the report's per-QI loss)
    out["alteration_per_qi"] = []
    for j in range(m):
        w = unified.to_root[j]
        worst = float(w[original[j]] @ hist.counts)
        cost = float((w[original[j]] - w[generalized[j]]) @ hist.counts)
        out["alteration_per_qi"].append(100.0 * cost / worst if worst else 0.0)
    out["merges"] = result.merges
    if result.sens_counts is not None:
        sizes = result.sizes.astype(float)
        out["l_div"] = float(_ldiv(result.sens_counts, sizes).min())
        out["t_clo"] = float(_tclo(result.sens_counts, sizes, hist.overall_distribution()).max())
    return out


#: the family's algorithms, for the registry (:func:`anonsql.algorithms.registry`)
ALGORITHMS: tuple[type[Algorithm], ...] = (GreedyAlgorithm,)

__all__ = [
    "ALGORITHMS",
    "GreedyAlgorithm",
    "greedy_measures",
    "greedy_model",
    "guard_models",
    "recoding_of",
]

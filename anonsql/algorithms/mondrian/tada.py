"""``algorithm="tada"``: seed 003's target-aware anonymization. Phase 1 partitions the rows
for the downstream task - a (k, l)-compliant decision tree on the QIs guided by ``label``
(classification, Definition IV.1) or a (k, l)-compliant constrained k-means clustering
(``cluster``, Definition IV.2); phase 2 runs Mondrian with l-diversity in every group; the
union is released (seed 003 Appendix A: a union of (k, l)-anonymous groups is
(k, l)-anonymous)."""

from __future__ import annotations

from typing import Any

from anonsql.algorithms.base import Algorithm, Outcome, RunContext
from anonsql.algorithms.mondrian.algorithm import check_spec, partitioning_lines, run_partitioning
from anonsql.errors import InputError
from anonsql.spec import Spec

GUARANTEE = (
    "heuristic (TA_DA: target-aware groups, then Mondrian in each): every "
    "released class satisfies the models; utility for the task is not proven optimal"
)


class TadaAlgorithm(Algorithm):
    name = "tada"
    options = ("label", "cluster", "controllers", "seed", "mondrian_stop")
    hierarchies_optional = True

    def reads_sensitive(self, spec: Spec) -> bool:
        # the clustering leaves the sensitive attribute out of its features: it has a use
        return bool(spec.cluster)

    def summary_lines(self, result: Any) -> list[str]:
        return partitioning_lines(result)

    def run(self, ctx: RunContext) -> Outcome:
        spec = ctx.spec
        check_spec(spec, "TA_DA")
        if spec.cluster:
            mode, task = "cluster", "clustering"
        elif spec.label is not None:
            mode, task = "tree", "classification"
        else:
            raise InputError(
                "TA_DA needs the downstream task: a label to predict (--label COLUMN) for "
                "classification, or --cluster for clustering"
            )
        if spec.label is not None:
            ctx.db.backend.require_columns(ctx.source, [spec.label])
        algo = f"tada/{task}" + (f"/{spec.controllers}" if spec.controllers > 1 else "")
        return run_partitioning(ctx, mode, algo, GUARANTEE)


#: the family's algorithms, for the registry (:func:`anonsql.algorithms.registry`)
ALGORITHMS: tuple[type[Algorithm], ...] = (TadaAlgorithm,)

__all__ = ["ALGORITHMS", "GUARANTEE", "TadaAlgorithm"]

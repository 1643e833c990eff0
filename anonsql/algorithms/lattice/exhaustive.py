"""Exhaustive search: every node of the lattice is checked and scored. The reference the
optimal search is tested against, and a baseline for benchmarks. It prunes nothing, so it
assumes nothing: ``assume_monotone`` has no effect on it."""

from __future__ import annotations

from anonsql.algorithms.lattice.base import (
    NodeEvaluator,
    Progress,
    Search,
    SearchResult,
    Solution,
    better,
    released_classes,
)
from anonsql.algorithms.lattice.lattice import Lattice
from anonsql.data.histogram import Histogram
from anonsql.metrics.quality import QualityModel
from anonsql.models.requirements import Requirements


class Exhaustive(Search):
    name = "exhaustive"

    def run(
        self,
        hist: Histogram,
        requirements: Requirements,
        quality: QualityModel,
        progress: Progress | None = None,
    ) -> SearchResult:
        lattice = Lattice(hist.heights)
        quality.prepare(hist)
        ev = NodeEvaluator(hist, lattice, requirements, quality)
        anonymous: dict[int, Solution] = {}
        best = None
        for node in sorted(range(lattice.size), key=lambda n: lattice.level_sum[n]):
            part, a = ev.assess(node)
            if a.anonymous:
                sol = Solution(
                    tuple(int(x) for x in lattice.levels[node]),
                    ev.score(part, a),
                    a.suppressed_rows,
                    released_classes(a),
                )
                anonymous[node] = sol
                if better(best, sol):
                    best = sol
            if progress:
                progress(ev.checked, lattice.size)
        for node, sol in anonymous.items():
            sol.minimal = not any(p in anonymous for p in lattice.predecessors(node))
        return SearchResult(
            self.name,
            best,
            ev.checked,
            lattice.size,
            list(anonymous.values()),
            "exact optimum: every node checked",
            ev.result_partition(lattice.node(best.levels)) if best is not None else None,
        )

"""SafePub's search over the lattice of generalization levels (SafePub section 4,
Algorithm 1; ARX's ``DataDependentEDDPAlgorithm``), with a private final choice.

The walk: the pivot starts at the top (every QI on its highest level), the candidates are
{top}. In each of ``steps`` rounds the pivot's predecessors (one QI one level lower) join the
candidates, the pivot leaves them, and the exponential mechanism picks the next pivot among
the candidates with budget epsilon_walk / steps. Every selection reads the data only through
the exponential mechanism, so the walk is epsilon_walk-DP by sequential composition (the
candidate set is a function of the earlier selections only).

The output: ARX (and the paper's Algorithm 1) returns the best-scoring pivot of the walk by
its exact score. That comparison reads the data outside any mechanism (one record can flip
which of two close pivots is best, and so the output), which the privacy proof's sequential
composition does not cover. Here the output is chosen among the walk's pivots by one more
exponential mechanism with the rest of the search budget (:data:`FINAL_SHARE` of it), so the
search as a whole is epsilon_search-DP: epsilon_walk = (1 - FINAL_SHARE) epsilon_search,
epsilon_final = FINAL_SHARE epsilon_search.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from anonsql.algorithms.dp.engine import SampleScorer
from anonsql.algorithms.dp.mechanisms import Randomness
from anonsql.algorithms.dp.quality import Aggregates, ScoreContext, score

#: the share of the search budget spent on the final choice among the pivots
FINAL_SHARE = 0.5

Levels = tuple[int, ...]


@dataclass
class WalkResult:
    chosen: Levels
    aggregates: Aggregates
    pivots: list[Levels]
    scored: int  # candidates scored (nodes checked)
    queries: int
    scores: dict[Levels, float] = field(default_factory=dict)


def predecessors(node: Levels) -> list[Levels]:
    """One QI one level lower (the lattice's direct specializations)."""
    return [(*node[:j], node[j] - 1, *node[j + 1 :]) for j in range(len(node)) if node[j] > 0]


def safepub_search(
    scorer: SampleScorer,
    ctx: ScoreContext,
    tops: list[int],
    steps: int,
    epsilon_search: float,
    rnd: Randomness,
    progress: Callable[[int, int], None] | None = None,
) -> WalkResult:
    entropy = ctx.metric == "entropy"
    aggs: dict[Levels, Aggregates] = {}
    scores: dict[Levels, float] = {}

    def add(nodes: list[Levels]) -> None:
        new = [n for n in nodes if n not in aggs]
        for n, a in zip(new, scorer.aggregates(new, ctx.k, entropy), strict=True):
            aggs[n] = a
            scores[n] = score(a, ctx)

    eps_walk = epsilon_search * (1.0 - FINAL_SHARE) / steps
    eps_final = epsilon_search * FINAL_SHARE
    top: Levels = tuple(tops)
    add([top])
    pivot = top
    pivots = [top]
    candidates: dict[Levels, None] = {top: None}  # insertion-ordered set
    expanded: set[Levels] = set()
    for step in range(1, steps + 1):
        preds = [p for p in predecessors(pivot) if p not in expanded]
        add(preds)
        for p in preds:
            candidates.setdefault(p, None)
        expanded.add(pivot)
        candidates.pop(pivot, None)
        if not candidates:
            break
        options = list(candidates)
        pivot = options[rnd.choose([scores[o] for o in options], eps_walk)]
        pivots.append(pivot)
        if progress is not None:
            progress(step, steps)
    unique = list(dict.fromkeys(pivots))
    chosen = unique[rnd.choose([scores[p] for p in unique], eps_final)]
    return WalkResult(chosen, aggs[chosen], pivots, len(aggs), scorer.queries, scores)


__all__ = ["FINAL_SHARE", "WalkResult", "predecessors", "safepub_search"]

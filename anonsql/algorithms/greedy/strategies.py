"""GAA's merging strategies: seed 004 Definition 17 (S1-S7) and the two pure strategies of
its Section 4.3.2 (only l_div, only t_clo). Each selects, among the candidate partners of
C_s, the set its conditions allow (the caller breaks remaining ties).

Delta sets (Definition 16) are computed with a relative tolerance of 1e-12, so values equal
in exact arithmetic but rounded differently stay in the same set.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

TOL = 1e-12


def _best(values: np.ndarray, maximize: bool = False) -> np.ndarray:
    """Positions of the optimal values (with tolerance)."""
    if maximize:
        top = values.max()
        return np.flatnonzero(values >= top - TOL * max(1.0, abs(top)))
    low = values.min()
    return np.flatnonzero(values <= low + TOL * max(1.0, abs(low)))


def _cost(ctx, idx):
    return ctx.cost_of(idx)


def s1(ctx):  # Delta_mu(C_s, C(T)); the context costs every class without copying them out
    nearest = getattr(ctx, "nearest", None)
    if nearest is not None:
        return nearest()
    return ctx.cand[_best(_cost(ctx, ctx.cand))]


def s2(ctx):  # Delta_ldiv(C_s, Delta_mu(C_s, C(T)))
    first = s1(ctx)
    return first[_best(ctx.ldiv(first), maximize=True)]


def s3(ctx):  # Delta_mu(C_s, Delta_ldiv(C_s, C(T)))
    first = ctx.cand[_best(ctx.ldiv(ctx.cand), maximize=True)]
    return first[_best(_cost(ctx, first))]


def s4(ctx):  # Delta_{mu/ldiv}(C_s, C(T)), Definition 15
    return ctx.cand[_best(_cost(ctx, ctx.cand) / ctx.ldiv(ctx.cand))]


def s5(ctx):  # Delta_tclo(C_s, Delta_mu(C_s, C(T)))
    first = s1(ctx)
    return first[_best(ctx.tclo(first))]


def s6(ctx):  # Delta_mu(C_s, Delta_tclo(C_s, C(T)))
    first = ctx.cand[_best(ctx.tclo(ctx.cand))]
    return first[_best(_cost(ctx, first))]


def s7(ctx):  # Delta_{mu*tclo}(C_s, C(T)), Definition 15
    return ctx.cand[_best(_cost(ctx, ctx.cand) * ctx.tclo(ctx.cand))]


def only_ldiv(ctx):  # Section 4.3.2's Strategy l_div
    return ctx.cand[_best(ctx.ldiv(ctx.cand), maximize=True)]


def only_tclo(ctx):  # Section 4.3.2's Strategy t_clo
    return ctx.cand[_best(ctx.tclo(ctx.cand))]


@dataclass(frozen=True)
class Strategy:
    name: str
    select: Callable
    uses_cost: bool
    uses_sensitive: bool
    description: str


STRATEGIES: dict[str, Strategy] = {
    s.name: s
    for s in (
        Strategy("s1", s1, True, False, "minimal generalization cost"),
        Strategy("s2", s2, True, True, "minimal cost, then maximal l_div"),
        Strategy("s3", s3, True, True, "maximal l_div, then minimal cost"),
        Strategy("s4", s4, True, True, "minimal cost / l_div"),
        Strategy("s5", s5, True, True, "minimal cost, then minimal t_clo"),
        Strategy("s6", s6, True, True, "minimal t_clo, then minimal cost"),
        Strategy("s7", s7, True, True, "minimal cost x t_clo"),
        Strategy("ldiv", only_ldiv, False, True, "maximal l_div only"),
        Strategy("tclo", only_tclo, False, True, "minimal t_clo only"),
    )
}

__all__ = ["STRATEGIES", "Strategy"]

"""Privacy-budget accounting per source table.

Every DP release records the epsilon and delta it spent, with its source, in its provenance
row (``parameters.dp`` of ``anonsql_runs``); the budget spent on a table is their sum over
every release ever made from it (basic sequential composition: releases of one table add up,
outputs replaced or dropped included, since what was published stays published). A limit
set with ``anonsql budget set TABLE --epsilon E --delta D`` is kept in ``anonsql_dp_budget``
(the latest row of a table wins); a release that would take the spent budget past it is
refused before anything is drawn, and again inside the release's transaction (a concurrent
release of the same table waits for the lock on its budget).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from typing import Any

from anonsql.backend.sql_templates import template
from anonsql.errors import InputError

BUDGET = "anonsql_dp_budget"
ALGORITHM = "safepub"


@dataclass
class Budget:
    """A table's budget: spent (with the releases that spent it) and its limit (if any)."""

    source: str
    epsilon_spent: float
    delta_spent: float
    releases: int
    epsilon_limit: float | None = None
    delta_limit: float | None = None

    def allows(self, epsilon: float, delta: float) -> bool:
        eps_ok = (
            self.epsilon_limit is None
            or self.epsilon_spent + epsilon <= self.epsilon_limit * (1 + 1e-12)
        )
        delta_ok = self.delta_limit is None or self.delta_spent + delta <= self.delta_limit * (
            1 + 1e-12
        )
        return eps_ok and delta_ok

    def to_dict(self) -> dict:
        return asdict(self)

    def describe(self) -> str:
        def limit(v: float | None) -> str:
            return "" if v is None else f" of {v:g}"

        return (
            f"{self.source}: epsilon {self.epsilon_spent:g}{limit(self.epsilon_limit)}, "
            f"delta {self.delta_spent:g}{limit(self.delta_limit)} spent in {self.releases} "
            f"DP release{'s' if self.releases != 1 else ''}"
        )


def _ensure_table(backend) -> None:
    if BUDGET not in backend.schemas_ready:
        backend.execute(template("dp/create_budget", backend.dialect))
        backend.restrict_access(BUDGET)
        backend.schemas_ready.add(BUDGET)


def _spent(db) -> dict[str, list[Any]]:
    """canonical source name -> [epsilon, delta, releases, shown name]."""
    be = db.backend
    out: dict[str, list[Any]] = {}
    if not be.table_exists("anonsql_runs"):
        return out
    rows = be.fetchall(
        "SELECT source, parameters FROM anonsql_runs WHERE algorithm = 'safepub' ORDER BY run_id"
    )
    for source, params in rows:
        dp = json.loads(params).get("dp") or {}
        key = be.canonical_name(str(source))
        entry = out.setdefault(key, [0.0, 0.0, 0, str(source)])
        entry[0] += float(dp.get("epsilon", 0.0))
        entry[1] += float(dp.get("delta", 0.0))
        entry[2] += 1
    return out


def _limits(db) -> dict[str, tuple[str, float, float]]:
    be = db.backend
    if not be.table_exists(BUDGET):
        return {}
    out = {}
    for source, eps, delta, _ in be.fetchall(template("dp/select_budget", be.dialect)):
        out[be.canonical_name(str(source))] = (str(source), float(eps), float(delta))
    return out


def budgets(db, source: str | None = None) -> list[Budget]:
    """The budget of ``source`` (one entry), or of every table with a DP release or a
    limit."""
    be = db.backend
    spent, limits = _spent(db), _limits(db)
    keys = [be.canonical_name(source)] if source is not None else sorted(set(spent) | set(limits))
    out = []
    for key in keys:
        eps, delta, n, shown = spent.get(key, [0.0, 0.0, 0, source or key])
        lim = limits.get(key)
        out.append(
            Budget(
                lim[0] if lim and not n else shown,
                eps,
                delta,
                n,
                lim[1] if lim else None,
                lim[2] if lim else None,
            )
        )
    return out


def set_budget(db, source: str, epsilon: float, delta: float) -> Budget:
    """Set ``source``'s limit (a new row; earlier limits stay as history)."""
    for name, v in (("epsilon", epsilon), ("delta", delta)):
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
            raise InputError(f"the budget's {name} must be a finite number >= 0, not {v!r}")
    if delta >= 1:
        raise InputError(f"the budget's delta must be below 1, not {delta!r}")
    db.backend.require_table(source)
    with db.backend.transaction():
        _ensure_table(db.backend)
        db.backend.execute(
            template(
                "dp/insert_budget",
                db.backend.dialect,
                source=source,
                epsilon=float(epsilon),
                delta=float(delta),
            )
        )
    return budgets(db, source)[0]


def refuse_beyond(db, source: str, epsilon: float, delta: float) -> Budget:
    """Raise a one-line error when a release of (epsilon, delta) from ``source`` would exceed
    its limit; return the budget otherwise."""
    b = budgets(db, source)[0]
    if not b.allows(epsilon, delta):
        raise InputError(
            f"release refused: it would spend epsilon {epsilon:g}, delta {delta:g} of "
            f"{source!r}'s budget, which has epsilon {b.epsilon_spent:g} of "
            f"{b.epsilon_limit if b.epsilon_limit is not None else 'unlimited'} and delta "
            f"{b.delta_spent:g} of {b.delta_limit if b.delta_limit is not None else 'unlimited'}"
            f" spent already (anonsql budget set {source} raises the limit); nothing was written"
        )
    return b


def lock_budget(db, source: str) -> None:
    """Hold the right to spend ``source``'s budget until the transaction ends (releases of
    one table are checked and recorded one after the other)."""
    db.backend.lock_output(f"{BUDGET}:{db.backend.canonical_name(source)}")


__all__ = ["BUDGET", "Budget", "budgets", "lock_budget", "refuse_beyond", "set_budget"]

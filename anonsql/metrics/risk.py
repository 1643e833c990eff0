"""Re-identification risk and class statistics of a generalized table.

Suppressed records are removed from the released classes: they count in the table size but
belong to no class an attacker can match (the choice ARX makes). The risk of a record in a
class of size f is 1/f (prosecutor: the attacker knows the target is in the table); with a
population table whose matching class has size F, the journalist risk is 1/F and the
marketer risk, the expected share of records re-identified, is (1/n) * sum f/F.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np


@dataclass
class RiskMeasures:
    rows: int
    classes: int
    suppressed_rows: int
    suppressed_share: float
    min_class_size: int
    aecs: float
    discernibility: float
    discernibility_star: float
    prosecutor_max: float
    prosecutor_avg: float
    marketer: float
    journalist_max: float | None = None
    journalist_avg: float | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def risk_measures(
    sizes: np.ndarray,
    suppressed: np.ndarray,
    population_sizes: np.ndarray | None = None,
) -> RiskMeasures:
    """``sizes``: class sizes; ``suppressed``: which classes are suppressed;
    ``population_sizes``: size of each class's match in the population (same order)."""
    sizes = np.asarray(sizes, dtype=np.float64)
    suppressed = np.asarray(suppressed, dtype=bool)
    n = float(sizes.sum())
    kept = sizes[~suppressed]
    supp_rows = float(sizes[suppressed].sum())
    released = float(kept.sum())
    classes = len(kept)
    # ARX: suppressed records form one additional class for AECS
    aecs = n / (classes + (1 if supp_rows else 0)) if n else 0.0
    dm = float((kept**2).sum() + supp_rows * n)
    dm_star = float((sizes**2).sum())
    out = RiskMeasures(
        rows=int(n),
        classes=classes,
        suppressed_rows=int(supp_rows),
        suppressed_share=supp_rows / n if n else 0.0,
        min_class_size=int(kept.min()) if classes else 0,
        aecs=aecs,
        discernibility=dm,
        discernibility_star=dm_star,
        prosecutor_max=float(1 / kept.min()) if classes else 0.0,
        prosecutor_avg=classes / released if released else 0.0,
        marketer=classes / n if n else 0.0,
    )
    if population_sizes is not None:
        F = np.asarray(population_sizes, dtype=np.float64)[~suppressed]
        if (kept > F).any():
            raise ValueError("a population class is smaller than its sample class")
        out.journalist_max = float((1 / F).max()) if classes else 0.0
        out.journalist_avg = float((kept / F).sum() / n) if n else 0.0
        out.marketer = out.journalist_avg
    return out

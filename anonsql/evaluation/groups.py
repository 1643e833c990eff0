"""Seed 001's utility measures (§5.2-5.3) of any run's output, read back from the database:
``anonsql evaluate RUN --task groups`` and :func:`anonsql.api.evaluate`.

A microaggregation run reports these measures when it publishes; this module recomputes them
later, on the rows as the guarded output reads them *now* (after source edits the guard may
have suppressed more), and for outputs of any algorithm whose quasi-identifiers are numeric:

* the records are the output's released rows (suppressed rows are left out and counted);
* a record's original values are its source QI values, its released values the output's (a
  microaggregation prototype as it is, an interval or hierarchy node by its midpoint, as
  seed 003's evaluation reads them: :func:`anonsql.evaluation.task.task_frames`);
* the groups are the classes of equal released QI tuples;
* the measures are :func:`anonsql.algorithms.microaggregation.measures.utility_measures`:
  Silhouette and Davies-Bouldin of the groups over the original values in z-scores,
  structural utility (1 - mean normalized W1 per attribute), and, with a label, separability
  (decision tree, 10-fold stratified cross-validation on the released values) and the
  combined utility ½ separability + ½ structural.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from anonsql.errors import InputError


@dataclass
class GroupUtility:
    """Seed 001's measures of one run's output (None where a measure is undefined: one
    group, or no label for separability and combined utility)."""

    run_id: int
    qis: list[str]
    label: str | None
    rows: int
    suppressed_rows: int
    groups: int
    smallest_group: int
    silhouette: float | None
    davies_bouldin: float
    structural_utility: float
    normalized_w1: dict[str, float]
    separability: float | None = None
    combined_utility: float | None = None


def evaluate_groups(db, run_id: int, label: str | None = None, seed: int = 0) -> GroupUtility:
    """Seed 001's utility measures of ``run_id``'s output (see the module's docstring);
    ``label`` (a column of the output, not a QI) adds separability and combined utility;
    ``seed`` draws the samples and the cross-validation folds."""
    from anonsql.algorithms.microaggregation.measures import utility_measures
    from anonsql.evaluation.representation import _run
    from anonsql.evaluation.task import task_frames

    try:
        import sklearn  # noqa: F401  (Silhouette and the decision tree)
    except ImportError:
        raise InputError(
            "the utility measures need scikit-learn: pip install 'anonsql[eval]'"
        ) from None
    qis = list(_run(db, run_id)["parameters"]["qis"])
    tf = task_frames(
        db, run_id, "classification" if label else "clustering", label or None, ignore=()
    )
    not_numeric = [q for q in qis if q not in tf.numeric]
    if not_numeric:
        raise InputError(
            "Zouinina et al.'s utility measures are defined on numeric quasi-identifiers; "
            "not numeric: " + ", ".join(not_numeric)
        )
    keep = ~tf.suppressed
    released = tf.released.loc[keep, qis].astype(float).to_numpy()
    original = tf.raw.loc[keep, qis].astype(float).to_numpy()
    # a released row is suppressed when the guard (or the run) hid it; a released value that
    # still reads as no number (NULL in the source) cannot be measured either
    ok = ~(np.isnan(released).any(axis=1) | np.isnan(original).any(axis=1))
    released, original = released[ok], original[ok]
    rows = len(original)
    if rows < 2:
        raise InputError(f"run {run_id}'s output has {rows} released rows; nothing to evaluate")
    y = None
    if label:
        y = tf.raw.loc[keep, label].map(lambda v: "NULL" if pd.isna(v) else str(v))
        y = y.to_numpy()[ok].astype(str)
        if len(set(y.tolist())) < 2:
            raise InputError(f"the label {label!r} holds a single value; nothing to separate")
    # the records in the order a microaggregation run measures them (by original QI tuple,
    # then label), so the seeded samples and folds are the run's and a fresh output gives
    # the run's own figures
    keys = [original[:, j] for j in reversed(range(original.shape[1]))]
    order = np.lexsort(keys if y is None else [y, *keys])
    original, released = original[order], released[order]
    y = None if y is None else y[order]
    mu, sd = original.mean(axis=0), original.std(axis=0)
    z = (original - mu) / np.where(sd > 0, sd, 1.0)
    groups = pd.factorize(pd.MultiIndex.from_arrays(released.T.tolist()))[0]
    m: dict[str, Any] = utility_measures(original, z, released, groups, y, seed)
    sizes = np.bincount(groups)
    return GroupUtility(
        run_id=run_id,
        qis=qis,
        label=label,
        rows=rows,
        suppressed_rows=int(len(tf.suppressed) - rows),
        groups=len(sizes),
        smallest_group=int(sizes.min()),
        silhouette=m["silhouette"],
        davies_bouldin=float(m["davies_bouldin"]),
        structural_utility=float(m["structural_utility"]),
        normalized_w1={q: float(v) for q, v in zip(qis, m["normalized_w1"], strict=True)},
        separability=m.get("separability"),
        combined_utility=m.get("combined_utility"),
    )


__all__ = ["GroupUtility", "evaluate_groups"]

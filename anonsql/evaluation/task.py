"""Seed 003's downstream tasks on a released table (section VI): how each released value is
encoded, and the classification and clustering scores.

Encodings (section VI-B and VI-C):

* classification: a categorical attribute is one-hot over its domain; a released set is
  multi-hot (every member 1), a suppressed value (``*``) all ones; a numeric attribute is its
  value, an interval's midpoint, standardized (a suppressed value sits at the mean);
* clustering: a categorical attribute's n values are mapped onto 1..n (value order), a set
  onto the mean of its members' numbers; numbers and midpoints as above; every column
  standardized.

Scores: a neural network (hidden layers 64, 32, 16, ReLU, Adam; scikit-learn's
MLPClassifier) trained on a training split and scored on the held-out split of the same
(anonymized) table - accuracy and macro F1; k-means with 5 clusters on the released table
against k-means with 5 clusters on the raw table - adjusted Rand index and normalized mutual
information. Needs scikit-learn (``anonsql[eval]``).

:func:`evaluate_task` (``anonsql evaluate --task``) scores any run's output this way: the
rows as the guarded output reads them now, each with its original QI values (the raw
baseline, the same rows). A released QI value stands for the original values it covers: an
interval ``[a, b]`` for its midpoint, a set ``{a, b}`` for its members, a hierarchy node (a
lattice run's level, Mondrian's lowest common ancestor) for the leaves below it (a numeric QI:
the midpoint of their smallest and largest), a suppressed row (``*``) for the whole domain,
any other label (a microaggregation prototype) for itself. A QI is numeric when its source
column is (as Mondrian reads it). Rows are put in a fixed order, by a digest of their
original contents (:func:`anonsql.evaluation.mlp.row_keys`), so a rerun gives the same figures
whatever order the engine returns them in; seed r draws the split, the network's
initialization and k-means' for run r.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from anonsql.algorithms.mondrian.release import members, midpoint
from anonsql.errors import InputError

SUPPRESSED = "*"
TASKS = ("classification", "clustering")
#: seed 003 VI-B: the share of the rows held out to score the network (the paper does not
#: say; 80/20, stratified by the label)
TEST_SIZE = 0.2
#: seed 003 VI-C: k-means' clusters downstream
CLUSTERS = 5


def _number(value) -> float:
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return np.nan
    if isinstance(value, int | float | np.integer | np.floating):
        return float(value)
    text = str(value)
    if text == SUPPRESSED:
        return np.nan
    return midpoint(text)


def _standardize(x: np.ndarray) -> np.ndarray:
    x = np.where(np.isnan(x), np.nanmean(x) if (~np.isnan(x)).any() else 0.0, x)
    std = x.std()
    return (x - x.mean()) / std if std > 0 else np.zeros_like(x)


def _members(value) -> list[str] | None:
    """The original values a categorical cell stands for (None: every value, suppressed).
    A cell is a released label or, from :func:`evaluate_task`, a tuple of members."""
    if isinstance(value, tuple):
        return list(value)
    text = str(value)
    return None if text == SUPPRESSED else members(text)


def encode(
    frame: pd.DataFrame,
    numeric: list[str],
    categorical: dict[str, list[str]],
    kind: str = "classification",
) -> np.ndarray:
    """The feature matrix of ``frame``; ``categorical`` maps a column to its domain (value
    order). Members outside the domain are ignored."""
    blocks = []
    for c in numeric:
        codes, uniques = pd.factorize(frame[c], use_na_sentinel=False)
        values = np.asarray([_number(v) for v in uniques], dtype=float)
        blocks.append(_standardize(values[codes])[:, None])
    for c, domain in categorical.items():
        index = {v: i for i, v in enumerate(domain)}
        cells = frame[c].map(lambda v: v if isinstance(v, tuple) else str(v))
        codes, uniques = pd.factorize(cells, use_na_sentinel=False)
        if kind == "classification":
            # one row per distinct released value, then gathered: sets are multi-hot
            table = np.zeros((len(uniques), len(domain)))
            for u, v in enumerate(uniques):
                mbrs = _members(v)
                if mbrs is None:
                    table[u] = 1.0
                    continue
                for mbr in mbrs:
                    if mbr in index:
                        table[u, index[mbr]] = 1.0
            blocks.append(table[codes])
        else:
            ranks = np.full(len(uniques), np.nan)
            for u, v in enumerate(uniques):
                mbrs = _members(v)
                known = [index[m] + 1.0 for m in mbrs if m in index] if mbrs is not None else []
                if known:
                    ranks[u] = np.mean(known)
            blocks.append(_standardize(ranks[codes])[:, None])
    return np.hstack(blocks) if blocks else np.zeros((len(frame), 0))


def _sklearn():
    try:
        import sklearn  # noqa: F401
    except ImportError:
        raise InputError("the task scores need scikit-learn: pip install 'anonsql[eval]'") from None


def classification_scores(
    x: np.ndarray, y: np.ndarray, seed: int, test_size: float = 0.2, max_iter: int = 200
) -> dict[str, float]:
    """Accuracy and macro F1 of seed 003's network on a held-out ``test_size`` split
    (stratified by the label, seeded)."""
    _sklearn()
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.metrics import accuracy_score, f1_score
    from sklearn.model_selection import train_test_split
    from sklearn.neural_network import MLPClassifier

    # stratified by the label, unless a label value has a single row (Nursery's "recommend"
    # has 2 of 12,960; a subsample may keep one)
    _, per_label = np.unique(y, return_counts=True)
    strata = y if per_label.min() >= 2 else None
    xtr, xte, ytr, yte = train_test_split(
        x, y, test_size=test_size, random_state=seed, stratify=strata
    )
    net = MLPClassifier(
        hidden_layer_sizes=(64, 32, 16),
        activation="relu",
        solver="adam",
        max_iter=max_iter,
        early_stopping=True,
        random_state=seed,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        net.fit(xtr, ytr)
    pred = net.predict(xte)
    return {
        "accuracy": float(accuracy_score(yte, pred)),
        "f1_macro": float(f1_score(yte, pred, average="macro")),
    }


def kmeans_labels(x: np.ndarray, seed: int, clusters: int = CLUSTERS) -> np.ndarray:
    _sklearn()
    from sklearn.cluster import KMeans

    return KMeans(n_clusters=clusters, n_init=10, random_state=seed).fit_predict(x)


def clustering_scores(
    raw_labels: np.ndarray, x: np.ndarray, seed: int, clusters: int = CLUSTERS
) -> dict[str, float]:
    """ARI and NMI of k-means (``clusters`` clusters) on ``x`` against the raw table's
    clustering."""
    from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

    labels = kmeans_labels(x, seed, clusters)
    return {
        "ari": float(adjusted_rand_score(raw_labels, labels)),
        "nmi": float(normalized_mutual_info_score(raw_labels, labels)),
    }


@dataclass
class TaskEvaluation:
    """Seed 003's scores of one run's output: per metric one value per seed, for the
    released rows (``anonymized``) and for the same rows with their original QI values
    (``raw``; for clustering the baseline itself, 1 by definition)."""

    run_id: int
    task: str
    label: str | None
    seeds: int
    rows: int
    suppressed_rows: int
    features: list[str]
    anonymized: dict[str, list[float]] = field(default_factory=dict)
    raw: dict[str, list[float]] = field(default_factory=dict)
    test_size: float | None = None
    clusters: int | None = None

    def mean(self, which: str = "anonymized") -> dict[str, float]:
        scores = self.anonymized if which == "anonymized" else self.raw
        return {m: float(np.mean(v)) for m, v in scores.items()}

    def std(self, which: str = "anonymized") -> dict[str, float]:
        scores = self.anonymized if which == "anonymized" else self.raw
        return {m: float(np.std(v)) for m, v in scores.items()}


def _cover(h, node: int, label: str) -> list[str] | None:
    """The leaves below hierarchy node ``node`` when it is the node of ``label`` (node ids
    of a recoding that are no hierarchy nodes, e.g. a microaggregation's groups: None)."""
    if h is None or node < 0 or node >= h.size or h.labels[node] != label:
        return None
    leaves = h.leaf_ids[(h.ancestors[h.leaf_ids] == node).any(axis=1)]
    return [h.labels[i] for i in leaves]


def _released_cell(label, node: int, h, numeric: bool):
    """What a released QI value stands for: a number (numeric QI) or a tuple of members."""
    text = str(label)
    if text == SUPPRESSED:
        return np.nan if numeric else SUPPRESSED
    leaves = _cover(h, int(node), text)
    if numeric:
        if leaves is not None:
            try:
                nums = [float(v) for v in leaves]
            except ValueError:
                nums = []
            if nums:
                return (min(nums) + max(nums)) / 2.0
        try:
            return _number(text)
        except ValueError:
            raise InputError(f"cannot read the released value {text!r} as a number") from None
    if leaves is not None:
        return tuple(leaves)
    return tuple(members(text))


@dataclass
class TaskFrames:
    """A run's rows in a fixed order: as released (a QI cell a number or a tuple of members,
    see :func:`_released_cell`) and raw (original values), with the feature columns."""

    released: pd.DataFrame
    raw: pd.DataFrame
    numeric: list[str]
    categorical: dict[str, list[str]]
    suppressed: np.ndarray

    @property
    def features(self) -> list[str]:
        return [c for c in self.released.columns if c in self.numeric or c in self.categorical]


def task_frames(
    db,
    run_id: int,
    task: str = "classification",
    label: str | None = None,
    ignore: list[str] | tuple[str, ...] = (),
) -> TaskFrames:
    """``run_id``'s rows as its guarded output reads them now, released and raw. Features:
    every column of the output but ``label``, the ``ignore`` columns and, for clustering,
    the sensitive attribute."""
    from sqlglot import exp

    from anonsql.backend.sql_templates import column, table
    from anonsql.evaluation.mlp import row_keys
    from anonsql.evaluation.representation import _run
    from anonsql.output.writer import run_query

    if task not in TASKS:
        raise InputError(f"unknown task {task!r}; use one of {', '.join(TASKS)}")
    if task == "classification" and not label:
        raise InputError("classification needs the label column to predict (--label)")
    run = _run(db, run_id)
    run["run_id"] = run_id
    query, info = run_query(db, run, flag=True, originals=True)
    qis, columns, hs = info["qis"], info["columns"], info["hierarchies"]
    missing = [c for c in [label, *ignore] if c and c not in columns]
    if missing:
        raise InputError(
            f"the output of run {run_id} has no column {missing[0]!r}; it has {', '.join(columns)}"
        )
    if label in qis:
        raise InputError(f"the label {label!r} is a quasi-identifier of the run")
    sensitive = run["parameters"].get("sensitive")
    drop = {label, *ignore} | ({sensitive} if task == "clustering" else set())
    feats = [c for c in columns if c not in drop]
    if not feats:
        raise InputError("no column is left to learn from")
    frame = db.backend.fetch_df(query)
    if len(frame) < 2:
        raise InputError(f"run {run_id}'s output has {len(frame)} rows; nothing to evaluate")
    # a fixed row order: by the digest of the original contents
    originals = [f"__o{j}" for j in range(len(qis))]
    key_cols = originals + [c for c in columns if c not in qis]
    contents = [
        ["\x00" if pd.isna(v) else str(v) for v in row]
        for row in frame[key_cols].itertuples(index=False)
    ]
    frame = frame.iloc[np.argsort(row_keys(contents), kind="stable")].reset_index(drop=True)
    keep = [c for c in columns if c in feats or c == label]
    raw, released = frame[keep].copy(), frame[keep].copy()
    # the guard reads original QI values as text: a QI's kind is its source column's type
    types = db.backend.fetch_df(
        exp.select(*[column(q) for q in qis]).from_(table(run["source"])).limit(100)
    )
    numeric, categorical = [], {}
    for c in feats:
        j = qis.index(c) if c in qis else None
        col = types[c] if j is not None else frame[c]
        is_num = pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col)
        if j is not None:
            col = frame[originals[j]]
            if is_num:
                raw[c] = col = pd.to_numeric(col, errors="coerce")
            else:
                raw[c] = col.map(lambda v: None if pd.isna(v) else str(v))
            pairs = pd.Series(list(zip(frame[c].astype(str), frame[f"__n{j}"], strict=True)))
            codes, uniques = pd.factorize(pairs)
            cells = [_released_cell(lab, nd, hs[j], is_num) for lab, nd in uniques]
            released[c] = pd.Series([cells[i] for i in codes], dtype=object)
        if is_num:
            numeric.append(c)
        else:
            categorical[c] = sorted(col.dropna().astype(str).unique())
    return TaskFrames(released, raw, numeric, categorical, frame["__suppressed"].to_numpy(bool))


def evaluate_task(
    db,
    run_id: int,
    task: str = "classification",
    label: str | None = None,
    seeds: int = 3,
    ignore: list[str] | tuple[str, ...] = (),
    clusters: int = CLUSTERS,
    progress=None,
) -> TaskEvaluation:
    """Seed 003's downstream task on ``run_id``'s output (see the module's docstring):
    classification of ``label`` (accuracy and macro F1 on a held-out 20 %) or clustering
    (ARI and NMI of k-means on the released rows against k-means on the raw rows), one
    value per seed, with the raw rows as the baseline; features as :func:`task_frames`.
    ``progress(done, total)`` is called after each seed."""
    _sklearn()
    if seeds < 1:
        raise InputError("seeds must be at least 1")
    if clusters < 2:
        raise InputError("clustering needs at least 2 clusters")
    tf = task_frames(db, run_id, task, label, ignore)
    x = encode(tf.released, tf.numeric, tf.categorical, task)
    x_raw = encode(tf.raw, tf.numeric, tf.categorical, task)
    ev = TaskEvaluation(
        run_id, task, label, seeds, len(tf.raw), int(tf.suppressed.sum()), tf.features,
        test_size=TEST_SIZE if task == "classification" else None,
        clusters=clusters if task == "clustering" else None,
    )  # fmt: skip
    if task == "classification":
        y = tf.raw[label].map(lambda v: "" if pd.isna(v) else str(v)).to_numpy()
        if len(set(y.tolist())) < 2:
            raise InputError(f"the label {label!r} holds a single value; nothing to learn")
    from threadpoolctl import threadpool_limits  # scikit-learn's dependency

    # one BLAS thread: these matrices are small, so threads mostly contend (several times
    # slower on a busy 2-core machine), and the figures do not depend on the thread count
    with threadpool_limits(1):
        for seed in range(seeds):
            if task == "classification":
                got = classification_scores(x, y, seed, TEST_SIZE)
                base = classification_scores(x_raw, y, seed, TEST_SIZE)
            else:
                got = clustering_scores(kmeans_labels(x_raw, seed, clusters), x, seed, clusters)
                base = {"ari": 1.0, "nmi": 1.0}
            for m, v in got.items():
                ev.anonymized.setdefault(m, []).append(v)
            for m, v in base.items():
                ev.raw.setdefault(m, []).append(v)
            if progress is not None:
                progress(seed + 1, seeds)
    return ev


__all__ = [
    "TASKS",
    "TaskEvaluation",
    "TaskFrames",
    "classification_scores",
    "clustering_scores",
    "encode",
    "evaluate_task",
    "kmeans_labels",
    "task_frames",
]

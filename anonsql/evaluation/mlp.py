"""Data utility for data mining (seed 000, Section IV): the paper's MLP, trained once, and
its scores on each encoding of an anonymized table.

Protocol (seed 000 IV-C): two hidden layers of 5 and 2 ReLU units, Adam with a constant
learning rate of 1e-3, batches of 200, training stops after 10 epochs without improvement of
the loss (at most 500 epochs); 2/3 of the records train, the other 1/3 evaluate; 10 seeds,
mean and standard deviation.

* **The split** is drawn once, from the rows' contents, never from the database's row
  order (which changes between reads): each row gets a key, the BLAKE2 digest of its
  original QI values, its other columns and its rank among identical rows; rows are sorted
  by key and the first 2/3 train. Every encoding, every run over the same rows and every
  seed uses this one split, and the training rows are fed in this order, so a rerun gives
  the same figures.
* **Seeds** vary the network only: the seed is scikit-learn's ``random_state``, which draws
  the initial weights and the order of the mini-batches (one generator for both).
* **Protocol ``paper``** (the default, Section IV-D1, Figure 3): for each seed ONE model is
  trained on the original table in the proportional representation (for exact values it
  equals fillParent: 1 for the value and its ancestors) and tested on every encoding of the
  anonymized rows. It answers: for a model already trained on the original data, which
  published encoding keeps its predictions best?
* **``train_run``** (Figures 4 and 5): the model is trained on another run's anonymized rows
  in one encoding (``train_kind``; the paper uses a 100-anonymous table) and tested on every
  encoding of ``run_id``.
* **Protocol ``per-encoding``**: one model per encoding, trained on the original rows encoded
  the same way as the test rows (oneClass and fillChild encode an exact value as itself
  alone). It answers a different question - how well does an analyst do who trains on
  original data in the same format as the release - and it is not the paper's protocol.

Targets: binary (AUC-ROC of the second value in sorted order, and accuracy) or with more
values (macro one-vs-rest AUC over the values present in the test rows, and accuracy, the
paper's measure for Florida).

Needs scikit-learn: ``pip install anonsql[eval]``.
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass, field

import numpy as np

from anonsql.errors import InputError
from anonsql.evaluation.representation import REPRESENTATIONS, column_names, representation_query

PROTOCOLS = ("paper", "per-encoding")
#: share of the rows that train (seed 000 IV-C: two thirds)
TRAIN_SHARE = 2 / 3


@dataclass
class UtilityScore:
    """Scores of the models on one encoding of the test rows, one value per seed."""

    representation: str
    mean_auc: float
    std_auc: float
    aucs: list[float]
    mean_accuracy: float = 0.0
    std_accuracy: float = 0.0
    accuracies: list[float] = field(default_factory=list)
    trained_on: str = ""


@dataclass
class EncodedRun:
    """A run's rows in a stable order (by key), with the split, the target and the
    encodings the caller asked for."""

    run_id: int
    keys: np.ndarray  # row keys, sorted
    target: str
    labels: np.ndarray  # target values as strings, in key order
    features: list[str]
    encodings: dict[str, np.ndarray]  # kind -> (rows, features)
    originals: dict[str, np.ndarray]  # kind -> original rows encoded like kind
    train: np.ndarray  # boolean mask

    @property
    def test(self) -> np.ndarray:
        return ~self.train


def _sklearn():
    try:
        from sklearn.metrics import roc_auc_score
        from sklearn.neural_network import MLPClassifier
    except ImportError:
        raise InputError("the evaluation needs scikit-learn: pip install 'anonsql[eval]'") from None
    return MLPClassifier, roc_auc_score


def row_keys(contents: list[list[str]]) -> np.ndarray:
    """One key per row from its contents alone: the digest of the row and of its rank among
    identical rows (identical rows are interchangeable, so the keys as a set do not depend
    on the order the rows come in)."""
    seen: dict[str, int] = {}
    keys = []
    for values in contents:
        text = "\x1f".join(values)
        rank = seen.get(text, 0)
        seen[text] = rank + 1
        digest = hashlib.blake2b(f"{text}\x1e{rank}".encode(), digest_size=16).hexdigest()
        keys.append(digest)
    return np.asarray(keys)


def stable_split(keys: np.ndarray, share: float = TRAIN_SHARE) -> tuple[np.ndarray, np.ndarray]:
    """The order of the rows by key, and the train mask in that order (the first
    ``share`` of the rows)."""
    order = np.argsort(keys, kind="stable")
    train = np.zeros(len(keys), dtype=bool)
    train[: int(len(keys) * share)] = True
    return order, train


def _cell(v) -> str:
    return "\x00" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v)


#: the class label of a missing target value: printable, because numpy's string arrays
#: (scikit-learn's ``classes_``) drop trailing NUL characters, so "\x00" would become ""
MISSING_LABEL = "<missing>"


def _label(v) -> str:
    return MISSING_LABEL if v is None or (isinstance(v, float) and np.isnan(v)) else str(v)


def _original_encoding(frame, hs, kind) -> np.ndarray:
    """The original values in the representation's columns (one block per QI):
    proportional and fillParent give the value and its ancestors 1, oneClass and fillChild
    the value alone."""
    cols = []
    for j, h in enumerate(hs):
        leaf = np.asarray([h.node(str(v), 0) for v in frame[f"__o{j}"]])
        block = np.zeros((len(frame), h.size))
        if kind in ("proportional", "fillparent"):
            anc = h.ancestors[leaf]
            rows = np.repeat(np.arange(len(frame)), anc.shape[1])
            flat = anc.ravel()
            ok = flat >= 0
            block[rows[ok], flat[ok]] = 1.0
        else:
            block[np.arange(len(frame)), leaf] = 1.0
        cols.append(block)
    return np.hstack(cols)


def encode_run(
    db, run_id: int, target: str, kinds=REPRESENTATIONS, originals=("proportional",)
) -> EncodedRun:
    """Read ``run_id``'s rows in each encoding of ``kinds`` and the original rows encoded
    like each of ``originals``, all in key order."""
    from anonsql.evaluation.representation import rows_query

    _, qis, columns, hs, _ = rows_query(db, run_id)
    if target in qis:
        raise InputError(f"the target {target!r} is a quasi-identifier of the run")
    if target not in columns:
        raise InputError(f"the run's output has no column {target!r}")
    for kind in [*kinds, *originals]:
        if kind not in REPRESENTATIONS:
            raise InputError(
                f"unknown representation {kind!r}; use one of {', '.join(REPRESENTATIONS)}"
            )
    names = column_names(qis, hs, columns)
    features = [n for per_qi in names for n in per_qi]
    # the key reads what every encoding of every run over these rows shares: the original
    # QI values and the columns that are not QIs
    key_cols = [f"__o{j}" for j in range(len(qis))] + [c for c in columns if c not in qis]
    keys: np.ndarray | None = None
    labels: np.ndarray | None = None
    train: np.ndarray | None = None
    encodings: dict[str, np.ndarray] = {}
    origs: dict[str, np.ndarray] = {}
    # at least one read, for the keys and the original values
    for kind in dict.fromkeys(list(kinds) or ["proportional"]):
        frame = db.backend.fetch_df(representation_query(db, run_id, kind, with_original=True))
        contents = [[_cell(v) for v in row] for row in frame[key_cols].itertuples(index=False)]
        k = row_keys(contents)
        order, split = stable_split(k)
        frame = frame.iloc[order].reset_index(drop=True)
        if keys is None:
            keys, train = k[order], split
            labels = frame[target].map(_label).to_numpy()
            for o in originals:
                origs[o] = _original_encoding(frame, hs, o)
        elif not np.array_equal(keys, k[order]):  # pragma: no cover - the same rows
            raise InputError(f"run {run_id}'s encodings do not read the same rows")
        encodings[kind] = frame[features].to_numpy(dtype=float)
    # set by the first read (there is at least one)
    assert keys is not None and labels is not None and train is not None
    return EncodedRun(run_id, keys, target, labels, features,
                      {k: encodings[k] for k in kinds}, origs, train)  # fmt: skip


def mlp(seed: int):
    """Seed 000's classifier (Section IV-C)."""
    MLPClassifier, _ = _sklearn()
    return MLPClassifier(
        hidden_layer_sizes=(5, 2),
        activation="relu",
        solver="adam",
        learning_rate_init=1e-3,
        learning_rate="constant",
        batch_size=200,
        n_iter_no_change=10,
        max_iter=500,
        random_state=seed,
    )


def train_models(x: np.ndarray, labels: np.ndarray, seeds: int, fitted=None) -> list:
    """One model per seed on the same rows (the training rows, in key order). ``fitted``,
    if given, is called after each fit (for progress: the fits are the work)."""
    if len(set(labels.tolist())) < 2:
        raise InputError("the training rows hold a single target value; nothing to learn")
    models = []
    for seed in range(seeds):
        model = mlp(seed)
        with warnings.catch_warnings():
            # the protocol caps training at 500 epochs; hitting the cap is expected
            warnings.simplefilter("ignore", category=UserWarning)
            model.fit(x, labels)
        models.append(model)
        if fitted is not None:
            fitted()
    return models


def scores(model, x: np.ndarray, labels: np.ndarray, classes: list[str]) -> tuple[float, float]:
    """(AUC, accuracy) of one model on test rows. Binary target: AUC-ROC of the second
    value in sorted order; more values: the unweighted mean of the one-vs-rest AUCs of
    the values present in the test rows (macro AUC), a value the model never saw scoring
    probability 0."""
    _, roc_auc_score = _sklearn()
    proba = np.zeros((len(x), len(classes)))
    seen = model.predict_proba(x)
    index = {c: i for i, c in enumerate(classes)}
    for col, c in enumerate(model.classes_):
        proba[:, index[c]] = seen[:, col]
    accuracy = float(np.mean(np.asarray(classes)[proba.argmax(axis=1)] == labels))
    if len(classes) == 2:
        positive = labels == classes[1]
        if positive.all() or not positive.any():
            return float("nan"), accuracy
        return float(roc_auc_score(positive, proba[:, 1])), accuracy
    aucs = []
    for i, c in enumerate(classes):
        positive = labels == c
        if positive.any() and not positive.all():
            aucs.append(roc_auc_score(positive, proba[:, i]))
    return (float(np.mean(aucs)) if aucs else float("nan")), accuracy


def score_models(models, run: EncodedRun, kind: str, classes: list[str], trained_on: str):
    test = run.test
    pairs = [scores(m, run.encodings[kind][test], run.labels[test], classes) for m in models]
    aucs = [a for a, _ in pairs]
    accs = [b for _, b in pairs]
    return UtilityScore(kind, float(np.mean(aucs)), float(np.std(aucs)), aucs,
                        float(np.mean(accs)), float(np.std(accs)), accs, trained_on)  # fmt: skip


def evaluate_run(
    db,
    run_id: int,
    target: str,
    seeds: int = 10,
    kinds=REPRESENTATIONS,
    protocol: str = "paper",
    train_run: int | None = None,
    train_kind: str = "proportional",
    progress=None,
) -> list[UtilityScore]:
    """Scores of seed 000's MLP on each encoding in ``kinds`` of ``run_id``'s test rows;
    see the module's docstring for the protocols. ``progress(done, total)`` is called
    after each network is trained (the fits are nearly all of the time)."""
    _sklearn()
    if protocol not in PROTOCOLS:
        raise InputError(f"unknown protocol {protocol!r}; use one of {', '.join(PROTOCOLS)}")
    if seeds < 1:
        raise InputError("seeds must be at least 1")
    if train_run is not None and protocol != "paper":
        raise InputError("a training run replaces the original table: use protocol 'paper'")
    kinds = list(kinds)
    originals = kinds if protocol == "per-encoding" else ["proportional"]
    run = encode_run(db, run_id, target, kinds, originals if train_run is None else ())
    if train_run is not None:
        src = encode_run(db, train_run, target, [train_kind], ())
        if src.features != run.features or not np.array_equal(src.keys, run.keys):
            raise InputError(
                f"runs {train_run} and {run_id} do not cover the same rows with the same "
                f"QIs and hierarchies"
            )
        x_train, trained_on = src.encodings[train_kind][src.train], f"run {train_run} {train_kind}"
    else:
        x_train, trained_on = run.originals.get("proportional"), "original proportional"
    classes = sorted(set(run.labels.tolist()))
    y_train = run.labels[run.train]
    total = seeds * (len(kinds) if protocol == "per-encoding" else 1)
    done = 0

    def fitted() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, total)

    if protocol == "per-encoding":
        out = []
        for kind in kinds:
            models = train_models(run.originals[kind][run.train], y_train, seeds, fitted)
            out.append(score_models(models, run, kind, classes, f"original {kind}"))
        return out
    if train_run is None:
        x_train = x_train[run.train]
    models = train_models(x_train, y_train, seeds, fitted)
    return [score_models(models, run, kind, classes, trained_on) for kind in kinds]


__all__ = [
    "PROTOCOLS",
    "EncodedRun",
    "UtilityScore",
    "encode_run",
    "evaluate_run",
    "row_keys",
    "score_models",
    "scores",
    "stable_split",
    "train_models",
]

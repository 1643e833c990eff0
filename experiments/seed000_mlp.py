"""Seed 000, Section IV on Adult: GAA (NLLM, S1) over the eight QIs, salary-class as the
target, for the paper's 14 values of k, with seed 000's protocol (anonsql/evaluation/mlp.py):

* Figure 3: for each seed ONE MLP is trained on the original table in the proportional
  representation and tested, for every k, on each encoding of the k-anonymous table -
  proportional, fillParent, oneClass, fillChild;
* Figure 4: for each seed and each encoding, one MLP is trained on the 100-anonymous table
  in that encoding and tested, for every k, on each encoding (the 4 x 4 matrix);
* with --per-encoding also the other protocol (a model per encoding, trained on the original
  table encoded like the test rows), which answers a different question (see README).

One split for everything: the rows are keyed by their contents (not the database's row
order), the first 2/3 by key train, the rest test; the seeds vary only the networks. The
figures are AUC-ROC means and standard deviations over the seeds.

    python experiments/seed000_mlp.py [--ks 3,4,...,15000] [--seeds 10] [--train-k 100]

Writes experiments/results/seed000_mlp.{txt,json} and the figures seed000_mlp_fig3.png and
seed000_mlp_fig4.png; timings go to stderr only.

Figure 5 (and Figure 3b) use an extract of the Florida voters register that ../shared does
not hold: 30162 random rows, QIs zipcode (1165 nodes), gender (3), race (9), year of birth
(106), target party affiliation (10 values), accuracy. ``--fig5`` runs the same protocol on
a stated SUBSTITUTE, the ACS 2013 extract ../shared/data/ss13acs (68725 rows): 30162 rows
drawn at random with a fixed seed (as the paper draws its 30162 voters), QIs Age (134
nodes), Sex (3), Race (11), Marital status (11) with the ARX hierarchies shipped with it,
target Education (25 values, "N/A" for children under 3 among them), accuracy (and macro
AUC in the JSON):

    python experiments/seed000_mlp.py --fig5

writes experiments/results/seed000_fig5.{txt,json}, seed000_fig5_fig3b.png and
seed000_fig5.png.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

# one BLAS / OpenMP thread, set before numpy loads: the MLP's sums are then made in one order
# on every machine, so a rerun is bit-identical whatever the machine's default thread count
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
from _common import ADULT, RESULTS, ROOT, Log, adult_db  # noqa: E402

#: seed 000 Section IV-B, footnote 1
KS = [3, 4, 5, 10, 20, 50, 100, 250, 500, 1000, 2000, 5000, 10000, 15000]
KINDS = ["proportional", "fillparent", "oneclass", "fillchild"]  # the paper's colour order
TARGET = "salary-class"
#: the Figure 5 substitute: seed 000 draws 30162 voters at random; we draw as many ss13acs rows
SUBSTITUTE_ROWS = 30162
SUBSTITUTE_SEED = 0
SUBSTITUTE_QIS = ["Age", "Sex", "Race", "Marital status"]
SUBSTITUTE_TARGET = "Education"


def substitute_db():
    """ss13acs (../shared/data/ss13acs): SUBSTITUTE_ROWS rows drawn without replacement by a
    fixed seed, in file order, with the hierarchies of the four QIs."""
    import tempfile
    from pathlib import Path

    import pandas as pd

    from anonsql.database import Database
    from anonsql.hierarchy.loaders import read_arx_csv
    from anonsql.io import import_file

    folder = ROOT.parent / "shared" / "data" / "ss13acs"
    if not folder.is_dir():
        raise SystemExit(f"ss13acs not found at {folder} (../shared is absent)")
    # "N/A" is an Education value (children under 3), not a missing one
    frame = pd.read_csv(folder / "ss13acs.csv", sep=";", dtype=str, keep_default_na=False)
    rng = np.random.default_rng(SUBSTITUTE_SEED)
    rows = np.sort(rng.choice(len(frame), size=SUBSTITUTE_ROWS, replace=False))
    db = Database.open(":memory:")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ss13acs_sample.csv"
        frame.iloc[rows].to_csv(path, sep=";", index=False)
        import_file(db, "ss13acs", path, sep=";")
    for c in SUBSTITUTE_QIS:
        db.hierarchies.save(read_arx_csv(c, folder / f"ss13acs_hierarchy_{c}.csv"))
    return db


def main() -> None:
    from anonsql.evaluation.mlp import encode_run, score_models, train_models
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    ap = argparse.ArgumentParser()
    ap.add_argument("--ks", default=",".join(map(str, KS)))
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--train-k", type=int, default=100, help="k of Figure 4's training table")
    ap.add_argument("--per-encoding", action="store_true", help="also the other protocol")
    ap.add_argument("--name", help="stem of the result files (seed000_mlp, seed000_fig5)")
    ap.add_argument("--plot-only", action="store_true", help="redraw from the JSON results")
    ap.add_argument(
        "--fig5", action="store_true", help="Figures 3b and 5 on the ss13acs substitute"
    )
    args = ap.parse_args()
    args.name = args.name or ("seed000_fig5" if args.fig5 else "seed000_mlp")
    ks = [int(x) for x in args.ks.split(",")]
    if args.plot_only:
        results = json.loads((RESULTS / f"{args.name}.json").read_text())
        args.seeds, args.train_k = results["seeds"], results["train_k"]
        args.fig5 = results.get("measure") == "accuracy"
        _plot(results, results["ks"], args)
        return
    log = Log(RESULTS / f"{args.name}.txt")
    if args.fig5:
        db, source, qis, target = substitute_db(), "ss13acs", SUBSTITUTE_QIS, SUBSTITUTE_TARGET
    else:
        db, source, target = adult_db(), "adult", TARGET
        qis = [a for a in ADULT if a != TARGET]
    # Figure 5's measure is accuracy (many target values); Figures 3a and 4 use AUC-ROC
    measure = "accuracy" if args.fig5 else "auc"
    runs: dict[int, int] = {}

    def run_of(k: int) -> int:
        if k not in runs:
            spec = Spec(
                qis=qis,
                k=k,
                algorithm="greedy",
                metric="nllm",
                strategy="s1",
                output=f"{source}_gaa_{k}",
                keep=[target],  # released as it is: the MLPs' labels, read back
            )
            runs[k] = anonymize(db, source, spec).run_id
        return runs[k]

    def tick(what: str, t: float) -> None:
        print(f"  {what}: {time.perf_counter() - t:.1f} s", file=sys.stderr, flush=True)

    # training phase (once): the original table, and the train-k table in every encoding
    t = time.perf_counter()
    originals = ["proportional", *(["oneclass", "fillchild"] if args.per_encoding else [])]
    base = encode_run(db, run_of(args.train_k), target, KINDS, originals)
    tick(f"encode k={args.train_k}", t)
    classes = sorted(set(base.labels.tolist()))
    y = base.labels[base.train]
    if args.fig5:
        log(
            f"SUBSTITUTE for seed 000's Florida voters: ss13acs, {len(base.keys)} rows drawn "
            f"at random (seed {SUBSTITUTE_SEED}) of 68725, QIs {', '.join(qis)}, target "
            f"{target} ({len(classes)} values), accuracy; {int(base.train.sum())} train / "
            f"{int(base.test.sum())} test (one split by row key), {args.seeds} seeds, "
            f"{len(base.features)} features"
        )
        counts = {c: int((base.labels == c).sum()) for c in classes}
        top = max(counts, key=counts.get)
        log(
            f"majority value {top!r}: {counts[top]} rows; its share of the test rows "
            f"{float(np.mean(base.labels[base.test] == top)):.4f} (constant predictor)"
        )
    else:
        log(
            f"Adult: {len(base.keys)} rows, {int(base.train.sum())} train / "
            f"{int(base.test.sum())} test (one split by row key), target {target} "
            f"(positive {classes[1]!r}), {args.seeds} seeds, {len(base.features)} features"
        )
    t = time.perf_counter()
    models = {"original": train_models(base.originals["proportional"][base.train], y, args.seeds)}
    for kind in KINDS:
        models[kind] = train_models(base.encodings[kind][base.train], y, args.seeds)
    per_encoding = {}
    if args.per_encoding:
        per_encoding = {"proportional": models["original"], "fillparent": models["original"]}
        for kind in ("oneclass", "fillchild"):
            per_encoding[kind] = train_models(base.originals[kind][base.train], y, args.seeds)
    tick("training", t)
    keys = base.keys
    del base

    results: dict = {"ks": ks, "seeds": args.seeds, "train_k": args.train_k, "by_k": {}}
    if args.fig5:
        results.update(measure=measure, source=source, qis=qis, target=target, macro_auc={})
    for k in ks:
        t = time.perf_counter()
        run = encode_run(db, run_of(k), target, KINDS, ())
        if not np.array_equal(run.keys, keys):
            raise SystemExit(f"k={k}: the run does not read the same rows")
        tick(f"k={k} anonymize + encode", t)
        t = time.perf_counter()
        row: dict = {}
        macro: dict = {}
        for trained, ms in models.items():
            label = (
                "original proportional" if trained == "original" else f"k={args.train_k} {trained}"
            )
            got = {kind: score_models(ms, run, kind, classes, label) for kind in KINDS}
            row[trained] = {
                kind: (v.accuracies if measure == "accuracy" else v.aucs) for kind, v in got.items()
            }
            macro[trained] = {kind: v.aucs for kind, v in got.items()}
        if args.fig5:
            results["macro_auc"][str(k)] = macro
        if per_encoding:
            row["per_encoding"] = {
                kind: score_models(per_encoding[kind], run, kind, classes, f"original {kind}").aucs
                for kind in KINDS
            }
        results["by_k"][str(k)] = row
        tick(f"k={k} scoring", t)
        log(f"k={k:5d}  " + _cells(row["original"]) + f"  best: {_best(row['original'])}")
        for trained in KINDS:
            log(f"         trained on k={args.train_k} {trained:12s} " + _cells(row[trained]))
        if per_encoding:
            log("         per-encoding protocol       " + _cells(row["per_encoding"]))
        del run
    _summary(log, results, ks, args)
    with open(RESULTS / f"{args.name}.json", "w") as f:
        json.dump(results, f, indent=1)
    _plot(results, ks, args)
    log.close()


def _cells(row: dict) -> str:
    return "  ".join(f"{k} {np.mean(v):.4f}±{np.std(v):.4f}" for k, v in row.items())


def _best(row: dict) -> str:
    return max(row, key=lambda k: np.mean(row[k]))


def _summary(log, results: dict, ks: list[int], args) -> None:
    by_k = results["by_k"]
    what = "accuracy" if args.fig5 else "AUC"
    fig = "5" if args.fig5 else "4"
    wins = sum(_best(by_k[str(k)]["original"]) == "proportional" for k in ks)
    log(
        f"\nFigure 3{'b' if args.fig5 else ''} (trained on the original table): proportional "
        f"has the best mean {what} for {wins} of {len(ks)} values of k"
    )
    for trained in KINDS:
        wins = sum(_best(by_k[str(k)][trained]) == "proportional" for k in ks)
        second = sum(
            sorted(by_k[str(k)][trained], key=lambda e: -np.mean(by_k[str(k)][trained][e]))[1]
            == "fillparent"
            for k in ks
        )
        log(
            f"Figure {fig} ({trained:12s} at k={args.train_k}): proportional best for {wins} of "
            f"{len(ks)}, fillParent second for {second} of {len(ks)}"
        )


def _plot(results: dict, ks: list[int], args) -> None:
    from _plots import REPRESENTATION_COLOURS, REPRESENTATION_LABELS, curves

    by_k = results["by_k"]

    def series(trained: str, std_for=("proportional",)) -> dict:
        out = {}
        for kind in KINDS:
            vals = [by_k[str(k)][trained][kind] for k in ks]
            out[kind] = (
                ks,
                [float(np.mean(v)) for v in vals],
                [float(np.std(v)) for v in vals] if kind in std_for else None,
            )
        return out

    style = {"colours": REPRESENTATION_COLOURS, "labels": REPRESENTATION_LABELS}
    if args.fig5:
        _plot_fig5(results, ks, args, series, style)
        return
    curves(
        RESULTS / f"{args.name}_fig3.png",
        f"Seed 000 Fig. 3a (ours): Adult, MLPs trained on the original table\n"
        f"({args.seeds} seeds; band: ±1 std of proportional)",
        [("tested on each encoding of the k-anonymous table", series("original"))],
        ylim=(0.45, 0.95),
        ylabel="AUC-ROC",
        **style,
    )
    curves(
        RESULTS / f"{args.name}_fig4.png",
        f"Seed 000 Fig. 4 (ours): Adult, AUC-ROC, trained on a {args.train_k}-anonymous table "
        f"({args.seeds} seeds; band: ±1 std of proportional)",
        [
            (f"({'abcd'[i]}) trained with {REPRESENTATION_LABELS[t]}", series(t))
            for i, t in enumerate(KINDS)
        ],
        ylim=(0.45, 0.95),
        ncols=2,
        ylabel="AUC-ROC",
        **style,
    )


def _plot_fig5(results: dict, ks: list[int], args, series, style) -> None:
    from _plots import REPRESENTATION_LABELS, curves

    # short lines: the one-panel figure is narrow
    what = f"SUBSTITUTE for Florida: ss13acs,\n{', '.join(results['qis'])} -> {results['target']}"
    curves(
        RESULTS / f"{args.name}_fig3b.png",
        f"Seed 000 Fig. 3b (ours), {what}\nMLPs trained on the original table, accuracy\n"
        f"({args.seeds} seeds; band: ±1 std of proportional)",
        [("tested on each encoding of the k-anonymous table", series("original"))],
        ylabel="accuracy",
        **style,
    )
    curves(
        RESULTS / f"{args.name}.png",
        f"Seed 000 Fig. 5 (ours), {what}, accuracy\ntrained on a {args.train_k}-anonymous "
        f"table ({args.seeds} seeds; band: ±1 std of proportional)",
        [
            (f"({'abcd'[i]}) trained with {REPRESENTATION_LABELS[t]}", series(t))
            for i, t in enumerate(KINDS)
        ],
        ncols=2,
        ylabel="accuracy",
        **style,
    )


if __name__ == "__main__":
    main()

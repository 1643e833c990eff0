"""Seed 003, section VI: TA_DA against plain Mondrian-l ("Anon") for classification and
clustering on Bank, Nursery and Customer_segmentation (../shared/data), several data
controllers, k in {2, 5, 10, 15, 20, 25, 50} and l in {1, 2, 3} where the sensitive domain
allows, averages over runs.

Protocol (seed 003 VI-A to VI-C; our choices where the paper is silent are marked *):

* data: identifiers dropped, incomplete tuples removed; QIs = the demographic attributes*
  (Table 1 of the paper is an image): Bank age, job, marital, education; Nursery parents,
  form, children, housing, finance; Customer_segmentation Gender, Ever_Married, Age,
  Graduated, Profession (Train.csv: the paper's 13,330 rows match no public release);
* the table is split at random into 3 controllers (9 for Bank in clustering) through the
  product's ``controllers`` option (drawn per distinct QI tuple*), each anonymized
  independently (TA_DA: ``algorithm="tada"`` with ``label`` or ``cluster``; Anon:
  ``algorithm="mondrian"``), the union released through the guarded view's recoding;
  ``--split rows``: the paper's split of the rows instead (a seeded permutation cut in equal
  parts, each anonymized alone, the union scored) - on Nursery, whose 288 QI cells hold 45
  rows each, per-tuple parts release the raw table for every k <= 45;
* Mondrian's stop rule when the widest QI has no allowable cut: the product's default (try
  the next widest QI), or ``--stop widest``, LeFevre et al.'s rule (the partition is final);
  the paper does not say which it ran (section V: the process ends "when any further
  partitioning" would break k or l);
* classification: the released table (every attribute but the label, the sensitive one
  included* since it is released) encoded as in VI-B, an 80/20 stratified split* of it,
  the network 64-32-16 ReLU Adam (early stopping*), accuracy and macro F1 on the 20 %;
  raw = the same on the original table;
* clustering: every attribute but the sensitive one and the label, encoded as in VI-C,
  k-means with 5 clusters against k-means with 5 clusters on the raw table: ARI and NMI;
* constrained k-means in TA_DA: n / (2k) clusters, minimum size k, one initialization and
  at most 30 iterations* (the package's defaults, 10 and 300, cost too much here);
* each run r = 0, 1, 2 uses seed r for the split into controllers, the k-means, the
  network's split and initialization;
* the network: scikit-learn's defaults (batches of 200, learning rate 1e-3, at most 200
  epochs) with early stopping* (10 % of the training rows held out, stop after 10 epochs
  without improvement; the paper gives no epochs); one BLAS thread* (the same numbers on any
  machine, and several times faster on a shared 2-core machine than BLAS's threads fighting
  over small matrices).

Cost (2 cores): the default grid is subsampled as printed in the results header (Bank
rows, runs); ``--full`` runs the paper's grid on the whole tables. Where the time goes
(``--full``, one setting, one run, single core): the network 1-3 s per fit (Bank 20 epochs
to early stopping, 3 s), Mondrian and TA_DA's tree under 1 s, k-means downstream a few
seconds; TA_DA's *constrained* k-means is all the rest: a min-cost flow over rows x n/(2k)
clusters per iteration, so its cost grows as rows^2 / k per controller (Bank k = 10, 9
controllers of 5,000 rows: minutes; k = 2 five times that). The README says which points
of the full grid ran.

    nice -n 19 python experiments/seed003_tada.py [--full] [--datasets bank,nursery,...]
    # partial runs merged: each adds its points to the cache; the last one reports them
    nice -n 19 python experiments/seed003_tada.py --full --cache C --tasks classification
    nice -n 19 python experiments/seed003_tada.py --full --cache C --only-cached

Writes experiments/results/seed003_tada.{txt,json} and seed003_tada_<data>_<task>.png.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

# one BLAS / OpenMP thread, set before numpy loads (see the docstring)
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from _common import RESULTS, ROOT, Cache, Log  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
KS = [2, 5, 10, 15, 20, 25, 50]
#: the default (subsampled) grid: 5 of the paper's 7 values of k
QUICK_KS = [2, 5, 10, 25, 50]
#: the default grid's rows per data set (stratified by label, seed 0) and network epochs
QUICK_ROWS = {"bank": 5000, "nursery": 4000, "customer_segmentation": 4000}
QUICK_EPOCHS = 60
NURSERY = [
    "parents",
    "has_nurs",
    "form",
    "children",
    "housing",
    "finance",
    "social",
    "health",
    "class",
]


def load(name: str) -> dict:
    """The data set, its QIs, sensitive attribute, label and numeric attributes."""
    if name == "bank":
        df = pd.read_csv(DATA / "bank" / "bank-full.csv", sep=";")
        qis = ["age", "job", "marital", "education"]
        sens, label = "default", "y"
    elif name == "nursery":
        df = pd.read_csv(DATA / "nursery" / "nursery.data", header=None, names=NURSERY)
        qis = ["parents", "form", "children", "housing", "finance"]
        sens, label = "social", "class"
    elif name == "customer_segmentation":
        df = pd.read_csv(DATA / "customer_segmentation" / "Train.csv").drop(columns=["ID"])
        qis = ["Gender", "Ever_Married", "Age", "Graduated", "Profession"]
        sens, label = "Spending_Score", "Segmentation"
    else:
        raise SystemExit(f"unknown data set {name!r}")
    df = df.dropna().reset_index(drop=True)
    numeric = [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])]
    return {"df": df, "qis": qis, "sensitive": sens, "label": label, "numeric": numeric}


def _database(df: pd.DataFrame):
    from anonsql.database import Database

    db = Database.open(":memory:")
    db.backend.write_frame("src", df.assign(rid=np.arange(len(df))))
    # the row id joins the release back to the raw rows; the anonymized source lacks it, so
    # it is no clustering feature
    db.backend.execute("CREATE VIEW t AS SELECT * EXCLUDE (rid) FROM src")
    return db


def released(db, data: dict) -> pd.DataFrame:
    """The raw rows with their QIs as the output releases them (the stored recoding, which
    the guarded view applies; the run reports no class failing a model)."""
    qis = data["qis"]
    rec = db.backend.fetch_df(
        "SELECT original, generalized FROM anonsql_recodings WHERE output = 'o'"
    )
    mapping = {tuple(o): tuple(g) for o, g in zip(rec["original"], rec["generalized"], strict=True)}
    cols = ", ".join(f'CAST("{q}" AS VARCHAR) AS "{q}"' for q in qis)
    raw = db.backend.fetch_df(f"SELECT rid, {cols} FROM src ORDER BY rid")
    gen = [mapping.get(tuple(r)) for r in raw[qis].itertuples(index=False)]
    out = data["df"].copy()
    for j, q in enumerate(qis):
        out[q] = [g[j] if g is not None else "*" for g in gen]
    return out


def features(data: dict, task: str) -> tuple[list[str], dict[str, list[str]]]:
    df = data["df"]
    drop = {data["label"]} | ({data["sensitive"]} if task == "clustering" else set())
    cols = [c for c in df.columns if c not in drop]
    numeric = [c for c in cols if c in data["numeric"]]
    cats = {c: sorted(df[c].astype(str).unique()) for c in cols if c not in data["numeric"]}
    return numeric, cats


def score(
    frame: pd.DataFrame, data: dict, task: str, run: int, raw_labels=None, epochs: int = 200
) -> dict:
    from anonsql.evaluation.task import classification_scores, clustering_scores, encode

    numeric, cats = features(data, task)
    x = encode(frame, numeric, cats, task)
    if task == "classification":
        y = frame[data["label"]].astype(str).to_numpy()
        return classification_scores(x, y, run, max_iter=epochs)
    return clustering_scores(raw_labels, x, run)


def anonymize_once(
    data,
    method,
    task,
    k,
    l_value,
    controllers,
    run,
    split: str = "tuples",
    stop: str = "next-widest",
) -> tuple[pd.DataFrame, dict]:
    """The released table of one setting. ``split="tuples"``: the product's ``controllers``
    option (parts drawn per distinct QI tuple); ``"rows"``: the paper's split of the rows
    (a random permutation, seed ``run``, cut into equal parts), each part anonymized alone.
    ``stop``: Mondrian's stop rule (option ``mondrian_stop``)."""
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    if split == "rows" and controllers > 1:
        perm = np.random.default_rng(run).permutation(len(data["df"]))
        frames, infos = [], []
        for part in np.array_split(perm, controllers):
            part = np.sort(part)
            sub = dict(data, df=data["df"].iloc[part].reset_index(drop=True))
            frame, info = anonymize_once(sub, method, task, k, l_value, 1, run, stop=stop)
            frames.append(frame.set_axis(part))
            infos.append((len(part), info))
        total = {m: sum(i[m] for _, i in infos) for m in infos[0][1] if m != "ncp"}
        total["ncp"] = sum(n * i["ncp"] for n, i in infos) / len(perm)
        return pd.concat(frames).sort_index(), total

    db = _database(data["df"])
    extra = {}
    if method == "tada":
        extra = {"label": data["label"]} if task == "classification" else {"cluster": True}
    if method == "tada" and task == "clustering":
        extra["label"] = None
        # the label is no clustering feature (seed 003 VI-A: discarded for clustering)
        db.backend.execute(
            f'CREATE OR REPLACE VIEW t AS SELECT * EXCLUDE (rid, "{data["label"]}") FROM src'
        )
    # the release holds every attribute (see released()): besides the QIs, the sensitive
    # attribute and TA_DA's label, each one kept as it is
    named = {*data["qis"], data["sensitive"], extra.get("label")}
    spec = Spec(
        qis=data["qis"],
        sensitive=data["sensitive"],
        k=k,
        l=None if l_value == 1 else l_value,
        algorithm="tada" if method == "tada" else "mondrian",
        controllers=controllers,
        seed=run,
        mondrian_stop=stop,
        output="o",
        keep=[c for c in db.backend.columns("t") if c not in named],
        **extra,
    )
    t0 = time.perf_counter()
    r = anonymize(db, "t", spec)
    took = time.perf_counter() - t0
    frame = released(db, data)
    db.close()
    m = r.measures
    return frame, {
        "classes": m["classes"],
        "suppressed_rows": m["suppressed_rows"],
        "failing_rows": m["failing_rows"],
        "ncp": r.score,
        "seconds": took,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--datasets", default="bank,nursery,customer_segmentation")
    ap.add_argument("--tasks", default="classification,clustering")
    ap.add_argument("--ks", default=None, help="default: the paper's 7 with --full, else 5")
    ap.add_argument("--runs", type=int, default=None)
    ap.add_argument("--full", action="store_true", help="the paper's grid, whole tables")
    ap.add_argument("--cache", default=None, help="JSON-lines file to resume from")
    ap.add_argument("--name", default="seed003_tada")
    ap.add_argument(
        "--split",
        choices=["tuples", "rows"],
        default="tuples",
        help="controllers' parts drawn per distinct QI tuple (the product's option) or per "
        "row (the paper's)",
    )
    ap.add_argument(
        "--stop",
        choices=["next-widest", "widest"],
        default="next-widest",
        help="Mondrian's stop rule when the widest QI cannot be cut: try the next widest "
        "(the product's default) or stop (LeFevre et al.'s rule)",
    )
    ap.add_argument(
        "--only-cached",
        action="store_true",
        help="report the cache's points only (partial grids merged), computing nothing new",
    )
    args = ap.parse_args()
    ks = [int(x) for x in args.ks.split(",")] if args.ks else (KS if args.full else QUICK_KS)
    runs = args.runs or (3 if args.full else 1)
    sample = {} if args.full else QUICK_ROWS
    epochs = 200 if args.full else QUICK_EPOCHS
    cache = Cache(args.cache)
    log = Log(RESULTS / f"{args.name}.txt")
    log(f"seed 003 TA_DA vs Mondrian-l (Anon); runs {runs}; ks {ks}")
    log(
        f"subsampled rows: {sample or 'none (full tables)'}; network epochs <= {epochs}; "
        f"80/20 split; controllers 3 (9 for Bank clustering), parts drawn per "
        f"{'row' if args.split == 'rows' else 'distinct QI tuple'}; Mondrian's stop rule "
        f"{args.stop}"
    )
    results = []
    for name in args.datasets.split(","):
        data = load(name)
        if name in sample and len(data["df"]) > sample[name]:
            df = data["df"]
            frac = sample[name] / len(df)
            keep = df.groupby(data["label"]).sample(frac=frac, random_state=0).index
            data["df"] = df.loc[sorted(keep)].reset_index(drop=True)
        ls = [v for v in (1, 2, 3) if v <= data["df"][data["sensitive"]].nunique()]
        log(
            f"\n## {name}: {len(data['df'])} rows, QIs {data['qis']}, sensitive "
            f"{data['sensitive']!r} ({data['df'][data['sensitive']].nunique()} values), label "
            f"{data['label']!r}, l in {ls}"
        )
        for task in args.tasks.split(","):
            controllers = 9 if (name == "bank" and task == "clustering") else 3
            raw = {}
            for run in range(runs):
                if task == "classification":
                    key = (name, task, "raw", 0, 0, 0, run)
                    raw[run] = cache.get(*key)
                    if raw[run] is None and not args.only_cached:
                        raw[run] = score(data["df"], data, task, run, epochs=epochs)
                        cache.put(*key, raw[run])
                    elif raw[run] is None:
                        raw.pop(run)
                elif not args.only_cached:
                    from anonsql.evaluation.task import encode, kmeans_labels

                    numeric, cats = features(data, task)
                    labels = kmeans_labels(encode(data["df"], numeric, cats, task), run)
                    raw[run] = {"labels": labels}
            if task == "classification":
                if not raw:
                    log(f"### {task}: nothing measured")
                    continue
                base = {
                    m: float(np.mean([raw[r][m] for r in raw])) for m in next(iter(raw.values()))
                }
                log(
                    f"### {task}, {controllers} controllers; raw: "
                    + ", ".join(f"{m} {v:.4f}" for m, v in base.items())
                )
            else:
                log(f"### {task}, {controllers} controllers; raw: ari 1, nmi 1 (the baseline)")
            log(
                f"{'l':>2} {'k':>3} {'method':7} {'metric1':>8} {'metric2':>8} {'classes':>8} "
                f"{'ncp':>7} {'runs':>4}"
            )
            for l_value in ls:
                for k in ks:
                    for method in ("anon", "tada"):
                        vals, prior = [], []
                        for run in range(runs):
                            key = (name, task, method, k, l_value, controllers, run)
                            if args.split == "rows":
                                key = (*key, "rows")
                            prev = None
                            if args.stop == "widest":  # earlier points: the default rule
                                prev = cache.get(*key)  # the same point under the default
                                key = (*key, "widest")
                            got = cache.get(*key)
                            if got is None and args.only_cached:
                                continue
                            if got is None:
                                frame, info = anonymize_once(
                                    data,
                                    method,
                                    task,
                                    k,
                                    l_value,
                                    controllers,
                                    run,
                                    args.split,
                                    args.stop,
                                )
                                labels = raw[run].get("labels")
                                info.update(score(frame, data, task, run, labels, epochs))
                                cache.put(*key, info)
                                got = info
                            vals.append(got)
                            prior.append(prev)
                        if not vals:
                            continue
                        mean = {m: float(np.mean([v[m] for v in vals])) for m in vals[0]}
                        seconds = mean.pop("seconds")  # stderr only: a rerun differs
                        m1, m2 = (
                            ("accuracy", "f1_macro") if task == "classification" else ("ari", "nmi")
                        )
                        log(
                            f"{l_value:>2} {k:>3} {method:7} {mean[m1]:8.4f} {mean[m2]:8.4f} "
                            f"{mean['classes']:8.0f} {mean['ncp']:7.4f} {len(vals):>4}"
                        )
                        print(
                            f"  [{name} {task} l={l_value} k={k} {method}: {seconds:.1f} s]",
                            file=sys.stderr,
                        )
                        # the default rule's figures of the same runs (--stop widest)
                        if args.stop == "widest" and all(prior):
                            mean["next_widest"] = {
                                m: float(np.mean([b[m] for b in prior]))
                                for m in prior[0]
                                if m != "seconds"
                            }
                        results.append(
                            {
                                "data": name,
                                "task": task,
                                "l": l_value,
                                "k": k,
                                "method": method,
                                "controllers": controllers,
                                "split": args.split,
                                "stop": args.stop,
                                "runs": len(vals),
                                **mean,
                            }
                        )
            if task == "classification":
                results.append({"data": name, "task": task, "method": "raw", **base})
    summary(results, log)
    claims(results, log)
    if args.stop == "widest":
        stop_rules(results, log)
    (RESULTS / f"{args.name}.json").write_text(json.dumps(results, indent=1))
    log.close()
    plots(results, args.name)


def summary(results: list[dict], log) -> None:
    """Per data set, task and l: each metric's mean over k for Anon and TA_DA, and in how
    many of the k values TA_DA is at least as good (the paper's claims, checked)."""
    log("\n## summary: mean over k (TA_DA >= Anon in how many k)")
    log("| data | task | l | metric | Anon | TA_DA | TA_DA >= Anon | k=50: Anon | k=50: TA_DA |")
    log("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    keys = sorted({(r["data"], r["task"], r["l"]) for r in results if "l" in r})
    for data, task, l_value in keys:
        rows = [r for r in results if (r["data"], r["task"], r.get("l")) == (data, task, l_value)]
        metrics = ("accuracy", "f1_macro") if task == "classification" else ("ari", "nmi")
        for metric in metrics:
            by = {
                m: {r["k"]: r[metric] for r in rows if r["method"] == m} for m in ("anon", "tada")
            }
            # the values of k measured for both methods (a partial grid may lack some)
            ks = sorted(set(by["anon"]) & set(by["tada"]))
            if not ks:
                continue
            wins = sum(by["tada"][k] >= by["anon"][k] - 1e-12 for k in ks)
            kmax = ks[-1]
            mean_a, mean_t = (np.mean([by[m][k] for k in ks]) for m in ("anon", "tada"))
            log(
                f"| {data} | {task} | {l_value} | {metric} | {mean_a:.4f} | {mean_t:.4f} | "
                f"{wins} of {len(ks)} | {by['anon'][kmax]:.4f} | {by['tada'][kmax]:.4f} |"
            )


def stop_rules(results: list[dict], log) -> None:
    """``--stop widest`` against the default rule on the same points (data, task, method;
    means over the (k, l) points both rules have, each point averaged over its runs):
    classes, NCP, the task's two metrics, and at how many points widest released fewer
    classes."""
    log("\n## Mondrian's stop rule: widest (LeFevre) against next-widest (the default)")
    log(
        "| data | task | method | points | classes: next-widest | widest | fewer with widest "
        "| NCP: next-widest | widest | metric | next-widest | widest | widest - next-widest |"
    )
    log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    pts = [r for r in results if r["method"] in ("anon", "tada") and "next_widest" in r]
    for data, task, method in sorted({(r["data"], r["task"], r["method"]) for r in pts}):
        rows = [r for r in pts if (r["data"], r["task"], r["method"]) == (data, task, method)]
        base = [r["next_widest"] for r in rows]
        fewer = sum(r["classes"] < b["classes"] for r, b in zip(rows, base, strict=True))
        metrics = ("accuracy", "f1_macro") if task == "classification" else ("ari", "nmi")
        for i, metric in enumerate(metrics):
            w = float(np.mean([r[metric] for r in rows]))
            n = float(np.mean([b[metric] for b in base]))
            head = (
                f"| {data} | {task} | {method} | {len(rows)} | "
                f"{np.mean([b['classes'] for b in base]):.0f} | "
                f"{np.mean([r['classes'] for r in rows]):.0f} | {fewer} of {len(rows)} | "
                f"{np.mean([b['ncp'] for b in base]):.4f} | "
                f"{np.mean([r['ncp'] for r in rows]):.4f}"
                if i == 0
                else "| | | | | | | | |"
            )
            log(f"{head} | {metric} | {n:.4f} | {w:.4f} | {w - n:+.4f} |")


def _spearman(xs: list[float], ys: list[float]) -> float:
    """Rank correlation (ties averaged); nan for fewer than 3 points or a constant series."""
    if len(xs) < 3:
        return float("nan")
    rx, ry = (pd.Series(v).rank().to_numpy() for v in (xs, ys))
    if rx.std() == 0 or ry.std() == 0:
        return float("nan")
    return float(np.corrcoef(rx, ry)[0, 1])


def claims(results: list[dict], log, close: float = 0.01) -> None:
    """The paper's claims, counted per data set over the (k, l) points both methods have:

    1. TA_DA >= Anon in accuracy and F1 (VI-B): strictly, and within ``close`` (the paper's
       "comparable");
    2. both fall as k grows: Spearman's rank correlation of the metric with k per (method,
       l), and the metric at the largest k below the smallest k's; as l grows: the mean over
       k at each l, per method;
    3. the F1 advantage (TA_DA - Anon) grows with k: its rank correlation with k per l, and
       its mean at k <= 5 against k >= 25;
    4. ARI and NMI higher with TA_DA (VI-C): counts."""
    pts = [r for r in results if r["method"] in ("anon", "tada")]
    log("\n## the paper's claims, counted")
    log("| data | task | metric | TA_DA > Anon | TA_DA >= Anon - 0.01 | mean TA_DA - Anon |")
    log("| --- | --- | --- | --- | --- | --- |")
    for data, task in sorted({(r["data"], r["task"]) for r in pts}):
        metrics = ("accuracy", "f1_macro") if task == "classification" else ("ari", "nmi")
        for metric in metrics:
            by = {
                (r["l"], r["k"], r["method"]): r[metric]
                for r in pts
                if (r["data"], r["task"]) == (data, task)
            }
            both = sorted({(lv, k) for lv, k, m in by if (lv, k, "tada") in by and m == "anon"})
            diff = [by[(lv, k, "tada")] - by[(lv, k, "anon")] for lv, k in both]
            if not both:
                continue
            log(
                f"| {data} | {task} | {metric} | {sum(d > 0 for d in diff)} of {len(both)} | "
                f"{sum(d >= -close for d in diff)} of {len(both)} | {np.mean(diff):+.4f} |"
            )
    log("\nfalling with k: rank correlation with k (metric at the largest k < at the smallest)")
    log("| data | task | metric | l | Anon | TA_DA | TA_DA - Anon vs k |")
    log("| --- | --- | --- | --- | --- | --- | --- |")
    for data, task in sorted({(r["data"], r["task"]) for r in pts}):
        metrics = ("accuracy", "f1_macro") if task == "classification" else ("ari", "nmi")
        rows = [r for r in pts if (r["data"], r["task"]) == (data, task)]
        for metric in metrics:
            for lv in sorted({r["l"] for r in rows}):
                cells = []
                curve = {}
                for method in ("anon", "tada"):
                    c = sorted(
                        (r["k"], r[metric]) for r in rows if (r["l"], r["method"]) == (lv, method)
                    )
                    curve[method] = dict(c)
                    if len(c) < 2:
                        cells.append("-")
                        continue
                    rho = _spearman([k for k, _ in c], [v for _, v in c])
                    cells.append(f"{rho:+.2f} ({'yes' if c[-1][1] < c[0][1] else 'no'})")
                ks = sorted(set(curve["anon"]) & set(curve["tada"]))
                d = [curve["tada"][k] - curve["anon"][k] for k in ks]
                small = [x for k, x in zip(ks, d, strict=True) if k <= 5]
                large = [x for k, x in zip(ks, d, strict=True) if k >= 25]
                trend = f"{_spearman(ks, d):+.2f}"
                if small and large:
                    trend += f"; k<=5 {np.mean(small):+.4f}, k>=25 {np.mean(large):+.4f}"
                log(f"| {data} | {task} | {metric} | {lv} | {cells[0]} | {cells[1]} | {trend} |")
    log("\nfalling with l: mean over the k measured at every l")
    log("| data | task | metric | method | " + " | ".join(f"l={lv}" for lv in (1, 2, 3)) + " |")
    log("| --- | --- | --- | --- | --- | --- | --- |")
    for data, task in sorted({(r["data"], r["task"]) for r in pts}):
        metrics = ("accuracy", "f1_macro") if task == "classification" else ("ari", "nmi")
        rows = [r for r in pts if (r["data"], r["task"]) == (data, task)]
        ls = sorted({r["l"] for r in rows})
        common = set.intersection(*({r["k"] for r in rows if r["l"] == lv} for lv in ls))
        for metric in metrics:
            for method in ("anon", "tada"):
                cells = []
                for lv in (1, 2, 3):
                    v = [r[metric] for r in rows if (r["l"], r["method"]) == (lv, method)
                         and r["k"] in common]  # fmt: skip
                    cells.append(f"{np.mean(v):.4f}" if v and lv in ls else "-")
                log(f"| {data} | {task} | {metric} | {method} | " + " | ".join(cells) + " |")


def plots(results: list[dict], stem: str) -> None:
    """The paper's Figs. 8-13: per l a row of two panels (accuracy and F1, or ARI and NMI)
    against k, Anon blue, TA_DA orange (the paper's colours), raw grey; k on a linear axis
    with a tick at each measured k, as the paper draws it."""
    from _plots import _pyplot, save

    plt = _pyplot()
    if plt is None:
        return
    colours = {"anon": "tab:blue", "tada": "tab:orange"}
    names = {"anon": "Anon", "tada": "TA_DA"}
    keys = sorted({(r["data"], r["task"]) for r in results if r["method"] != "raw"})
    for data, task in keys:
        rows = [r for r in results if r["data"] == data and r["task"] == task]
        metrics = ("accuracy", "f1_macro") if task == "classification" else ("ari", "nmi")
        raw = next((r for r in rows if r["method"] == "raw"), None)
        ls = sorted({r["l"] for r in rows if "l" in r})
        fig, axes = plt.subplots(len(ls), 2, figsize=(9.6, 3.2 * len(ls) + 0.4), squeeze=False)
        for i, l_value in enumerate(ls):
            for ax, metric in zip(axes[i], metrics, strict=True):
                ks: set[int] = set()
                for method in ("anon", "tada"):
                    pts = sorted(
                        (r["k"], r[metric])
                        for r in rows
                        if r.get("l") == l_value and r["method"] == method
                    )
                    ks |= {k for k, _ in pts}
                    ax.plot(
                        [k for k, _ in pts], [v for _, v in pts], marker="o", ms=3, lw=1.2,
                        color=colours[method], label=names[method],
                    )  # fmt: skip
                if raw is not None:
                    ax.axhline(raw[metric], color="tab:gray", lw=1, ls="--", label="raw")
                ax.set_xticks(sorted(ks))
                ax.set_xlabel("k")
                ax.set_title(f"l = {l_value}: {metric}", fontsize=9)
                ax.grid(True, lw=0.3)
        axes[0][0].legend(fontsize=7)
        split = ", parts per row" if rows[0].get("split") == "rows" else ""
        if rows[0].get("stop") == "widest":
            split += ", Mondrian stops at the widest QI (LeFevre)"
        fig.suptitle(f"seed 003, {data}{split}, {task}", fontsize=10)
        fig.tight_layout()
        save(fig, RESULTS / f"{stem}_{data}_{task}.png")
        plt.close(fig)


if __name__ == "__main__":
    main()

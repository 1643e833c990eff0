"""Seed 004, Section 4.3.3 (Figures 14 and 15): the seven strategies on simulated sensitive
attributes added to Adult, ranked per configuration by their NAUC over [3, 5000].

The paper's protocol: seven sensitive attributes with 5, 10, 20, 50, 100, 200 or 500
possible values, each drawn as 30162 values from an Equivalent, Geometric or Standard
Normal distribution (21 configurations), added as a new column to Adult, whose nine
original attributes are all QIs; GAA with each strategy for k in {3, 4, 5, 10, 20, 100,
250, 500, 1000, 2000, 5000}; alteration (NLLM for Figure 14, Total for Figure 15), l_div and
t_clo of every k-anonymous table; NAUC over [3, 5000]; strategies ranked 1 (best) to 7 per
configuration and measure; a "Mean" column of the NAUC over the configurations.

The paper does not give the distributions' parameters; our choices (fixed seed 4):

* Equivalent: every value equally likely (uniform over 0..q-1);
* Geometric: P(v) proportional to (1 - p)^v for v in 0..q-1 (a truncated geometric), with p
  such that an untruncated geometric puts 1% of its mass beyond q - 1: p = 1 - 0.01^(1/q),
  so all q values are used for every q (a fixed p would leave most of 500 values empty);
* Standard Normal: N(0, 1) draws cut into q equal-width bins over [-3, 3] (draws outside
  fall in the end bins).

Scales as in ``seed004_strategies.py``: alteration in %, l_div as % of the table's maximum
(all records in one class), t_clo as the halved L1 distance x 100 (the scale the paper's
figures match, see README). Ties in a ranking get the smallest rank (competition ranking).

    python experiments/seed004_simulated.py [--metric nllm|total] [--values 5,10,...]
        [--dists equivalent,geometric,normal] [--ks ...] [--cache FILE] [--name STEM]
        [--plot-only]

Writes experiments/results/seed004_simulated_<metric>.{txt,json,png}; the files are
rewritten after every configuration, so an interrupted run leaves its finished part.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
from _common import ADULT, RESULTS, ROOT, Cache, Log, nauc

KS = [3, 4, 5, 10, 20, 100, 250, 500, 1000, 2000, 5000]
VALUES = [5, 10, 20, 50, 100, 200, 500]
DISTS = ["equivalent", "geometric", "normal"]
STRATEGIES = ["s1", "s2", "s3", "s4", "s5", "s6", "s7"]
MEASURES = [("alteration", False), ("l_div", True), ("t_clo", False)]
SEED = 4

#: the "Mean" column of the paper's Figures 14a and 15a (Adult): NAUC averaged over its 21
#: configurations, alteration / l_div / t_clo per strategy
PAPER_MEAN = {
    "nllm": {
        "s1": (51.974, 93.829, 9.628),
        "s2": (55.989, 93.775, 9.815),
        "s3": (77.286, 94.86, 8.031),
        "s4": (56.619, 94.189, 9.191),
        "s5": (99.938, 99.528, 0.455),
        "s6": (75.462, 94.186, 8.29),
        "s7": (63.345, 94.168, 8.887),
    },
    "total": {
        "s1": (71.088, 94.089, 9.143),
        "s2": (71.028, 94.004, 9.356),
        "s3": (83.542, 95.011, 7.961),
        "s4": (70.478, 95.095, 7.283),
        "s5": (99.939, 99.528, 0.455),
        "s6": (84.474, 94.39, 8.04),
        "s7": (79.973, 94.421, 8.376),
    },
}


def simulate(dist: str, q: int, n: int, seed: int = SEED) -> np.ndarray:
    """n values in 0..q-1 from the named distribution (one generator per configuration,
    seeded by (seed, q, distribution index), so each column is reproducible on its own)."""
    rng = np.random.default_rng([seed, q, DISTS.index(dist)])
    if dist == "equivalent":
        return rng.integers(0, q, size=n)
    if dist == "geometric":
        p = 1 - 0.01 ** (1 / q)
        w = (1 - p) ** np.arange(q)
        return rng.choice(q, size=n, p=w / w.sum())
    if dist == "normal":
        x = rng.standard_normal(n)
        edges = np.linspace(-3, 3, q + 1)[1:-1]
        return np.searchsorted(edges, x, side="right")
    raise SystemExit(f"unknown distribution {dist!r}")


def ranks(values: dict[str, float], best_high: bool) -> dict[str, int]:
    """Competition ranking: 1 for the best; equal NAUC (to 1e-9) share the smaller rank."""
    out = {}
    for s, v in values.items():
        better = sum(1 for w in values.values() if (w > v + 1e-9 if best_high else w < v - 1e-9))
        out[s] = 1 + better
    return out


def main() -> None:
    import pandas as pd

    from anonsql.algorithms.greedy.algorithm import greedy_measures
    from anonsql.algorithms.greedy.gaa import GreedyModel, gaa
    from anonsql.data.histogram import Histogram
    from anonsql.hierarchy.loaders import read_arx_csv

    ap = argparse.ArgumentParser()
    ap.add_argument("--metric", default="nllm", choices=sorted(PAPER_MEAN))
    ap.add_argument("--values", default=",".join(map(str, VALUES)))
    ap.add_argument("--dists", default=",".join(DISTS))
    ap.add_argument("--ks", default=",".join(map(str, KS)))
    ap.add_argument("--cache", help="JSON-lines file of measured points (resume)")
    ap.add_argument("--name", help="stem of the result files (default seed004_simulated_<metric>)")
    ap.add_argument(
        "--plot-only", action="store_true", help="rewrite the text and figure from the JSON"
    )
    ap.add_argument(
        "--grid-effect",
        metavar="KS",
        help="from the JSON: NAUC and ranks on the subset KS of its k values against all of "
        "them (writes <name>_grid.txt)",
    )
    args = ap.parse_args()
    metric = args.metric
    name = args.name or f"seed004_simulated_{metric}"
    if args.grid_effect:
        out = json.loads((RESULTS / f"{name}.json").read_text())
        _grid_effect(out, [int(x) for x in args.grid_effect.split(",")], name)
        return
    if args.plot_only:
        # the text and the figure again from the JSON (the JSON itself is rewritten as read)
        _write(json.loads((RESULTS / f"{name}.json").read_text()), name, metric)
        return
    ks = [int(x) for x in args.ks.split(",")]
    values = [int(x) for x in args.values.split(",")]
    dists = args.dists.split(",")
    folder = ROOT.parent / "shared" / "data" / "adult"
    if not folder.is_dir():
        raise SystemExit(f"Adult not found at {folder} (../shared is absent)")
    # pandas reads the file in its own order: the simulated column is tied to file rows
    frame = pd.read_csv(folder / "adult.csv", sep=";", dtype=str)
    hs = [read_arx_csv(c, folder / f"adult_hierarchy_{c}.csv") for c in ADULT]
    cache = Cache(args.cache)
    out: dict = {"ks": ks, "metric": metric, "seed": SEED, "configs": {}}
    for dist in dists:
        for q in values:
            cfg = f"{dist}-{q}"
            frame["sim"] = simulate(dist, q, len(frame)).astype(str)
            hist = Histogram.from_frame(frame, list(ADULT), hs, "sim")
            overall = hist.overall_distribution()
            p = overall[overall > 0]
            l_max = float(np.exp(-(p * np.log(p)).sum()))
            curves: dict[str, dict[str, list[float]]] = {}
            for strategy in STRATEGIES:
                c: dict[str, list[float]] = {"alteration": [], "l_div": [], "t_clo": []}
                for k in ks:
                    t = time.perf_counter()
                    m = cache.get(metric, cfg, strategy, k)
                    if m is None:
                        r = gaa(hist, GreedyModel(k), metric, strategy)
                        full = greedy_measures(hist, r, metric)
                        m = {key: float(full[key]) for key in c}
                        cache.put(metric, cfg, strategy, k, m)
                    for key in c:
                        c[key].append(m[key])
                    print(
                        f"  {cfg} {strategy} k={k} {time.perf_counter() - t:.1f} s",
                        file=sys.stderr,
                        flush=True,
                    )
                curves[strategy] = c
            # t_clo as halved L1 (the paper's scale, see seed004_strategies.py)
            table = _table(ks, curves, l_max)
            rk = {key: ranks(table[key], best_high) for key, best_high in MEASURES}
            out["configs"][cfg] = {
                "distinct_values": len(p),
                "l_max": l_max,
                "curves": curves,
                "nauc": table,
                "rank": rk,
            }
            _write(out, name, metric)


def _write(out: dict, name: str, metric: str) -> None:
    configs = out["configs"]
    log = Log(RESULTS / f"{name}.txt")
    log(
        f"Seed 004 Fig. {14 if metric == 'nllm' else 15}a (ours): Adult + simulated sensitive "
        f"attribute, GAA guided by {metric.upper()}, NAUC over [{min(out['ks'])}, "
        f"{max(out['ks'])}], seed {out['seed']}; rank 1 = best"
    )
    log(f"configurations: {len(configs)} ({', '.join(configs)})")
    header = "strategy measure    " + " ".join(f"{c:>14s}" for c in configs) + "   mean  paper"
    log(header)
    for i, s in enumerate(STRATEGIES):
        for j, (key, _) in enumerate(MEASURES):
            mean = float(np.mean([configs[c]["nauc"][key][s] for c in configs]))
            row = " ".join(f"{configs[c]['rank'][key][s]:>14d}" for c in configs)
            paper = PAPER_MEAN[metric][s][j]
            log(f"S{i + 1:<7d} {key:10s} {row} {mean:7.2f} {paper:6.2f}")
    log("")
    # the paper's text reads its figures by how often a strategy takes each rank (e.g. "often
    # ranked 4 (in 30 rankings out of 63)"): the same counts over our configurations
    log("configurations at rank 1..7 (a row sums to the number of configurations):")
    for i, s in enumerate(STRATEGIES):
        for key, _ in MEASURES:
            got = [configs[c]["rank"][key][s] for c in configs]
            counts = " ".join(f"{got.count(r):3d}" for r in range(1, 8))
            log(f"S{i + 1:<7d} {key:10s} {counts}")
    log("")
    log("NAUC per configuration (alteration %, l_div % of max, t_clo halved x 100):")
    for c, v in configs.items():
        log(f"  {c} (distinct values {v['distinct_values']}, max l_div {v['l_max']:.2f})")
        for key, _ in MEASURES:
            log(f"    {key:10s} " + ", ".join(f"{s} {v['nauc'][key][s]:.2f}" for s in STRATEGIES))
    log.close()
    with open(RESULTS / f"{name}.json", "w") as f:
        json.dump(out, f, indent=1)
    _plot(out, name, metric)


def _table(ks: list[int], curves: dict, l_max: float) -> dict[str, dict[str, float]]:
    lo, hi = min(ks), max(ks)
    return {
        "alteration": {s: nauc(ks, curves[s]["alteration"], lo, hi) for s in curves},
        "l_div": {s: 100 * nauc(ks, curves[s]["l_div"], lo, hi) / l_max for s in curves},
        "t_clo": {s: 100 * nauc(ks, curves[s]["t_clo"], lo, hi) / 2 for s in curves},
    }


def _grid_effect(out: dict, subset: list[int], name: str) -> None:
    """What measuring on fewer values of k changes: each configuration's NAUC and ranks from
    the curves at ``subset`` only (the same points, so the same NAUC a run on ``subset``
    gives) against those from every k of the file."""
    ks = out["ks"]
    if not set(subset) <= set(ks) or min(subset) != min(ks) or max(subset) != max(ks):
        raise SystemExit(f"--grid-effect needs a subset of {ks} with the same ends")
    pick = [ks.index(k) for k in subset]
    log = Log(RESULTS / f"{name}_grid.txt")
    log(f"NAUC on k in {subset} against k in {ks} (same runs), per configuration:")
    log("config          measure     max |diff|  strategy  ranks changed")
    changed = cells = 0
    for cfg, v in out["configs"].items():
        sub = {s: {key: [c[key][i] for i in pick] for key in c} for s, c in v["curves"].items()}
        small = _table(subset, sub, v["l_max"])
        for key, best_high in MEASURES:
            diff = {s: small[key][s] - v["nauc"][key][s] for s in STRATEGIES}
            worst = max(diff, key=lambda s: abs(diff[s]))
            rk = ranks(small[key], best_high)
            moved = sum(rk[s] != v["rank"][key][s] for s in STRATEGIES)
            changed += moved
            cells += len(STRATEGIES)
            log(f"{cfg:15s} {key:10s} {diff[worst]:+10.2f}  {worst:8s}  {moved}")
    log(f"ranks changed: {changed} of {cells}")
    log.close()


def _plot(out: dict, name: str, metric: str) -> None:
    from _plots import _pyplot, save

    plt = _pyplot()
    if plt is None:
        return
    configs = list(out["configs"])
    rows, labels, means = [], [], []
    for i, s in enumerate(STRATEGIES):
        for key, _ in MEASURES:
            rows.append([out["configs"][c]["rank"][key][s] for c in configs])
            labels.append(f"S{i + 1} {key}")
            means.append(np.mean([out["configs"][c]["nauc"][key][s] for c in configs]))
    grid = np.array(rows, dtype=float)
    fig, ax = plt.subplots(figsize=(max(4.8, 2.2 + 0.75 * len(configs)), 7.5))
    ax.imshow(grid, cmap="RdYlGn_r", vmin=1, vmax=7, aspect="auto")
    for (r, c), v in np.ndenumerate(grid):
        ax.text(c, r, f"{int(v)}", ha="center", va="center", fontsize=8)
    ax.set_xticks(range(len(configs)), configs, rotation=60, ha="right", fontsize=8)
    ax.set_yticks(
        range(len(labels)),
        [f"{lb} ({m:.1f})" for lb, m in zip(labels, means, strict=True)],
        fontsize=8,
    )
    # two short lines: one long line overran a figure a few configurations wide
    ax.set_title(
        f"Seed 004 Fig. {14 if metric == 'nllm' else 15}a (ours), {metric.upper()}:\n"
        f"rank of NAUC (1 = best), mean NAUC in brackets",
        fontsize=9,
    )
    fig.tight_layout()
    save(fig, RESULTS / f"{name}.png")
    plt.close(fig)


if __name__ == "__main__":
    main()

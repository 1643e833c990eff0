"""Benchmark of ARX's further privacy models (issue 13, section 2) in the optimal search.

Adult (../shared/data/adult, 30,162 rows), 8 QIs (all but occupation, lattice 4,320),
occupation sensitive, k = 5 with each of: basic and enhanced beta-likeness (beta = 1), delta-
disclosure privacy (delta = 1.2), entropy 3-diversity with Grassberger's estimator (and with
the Shannon estimator for reference); suppression limits 0% and 5%; metric Loss. Per row: the
best wall time of the default (exact) search over ``--repeat`` runs in one process after a
warm-up, the nodes it checked, its optimum and the suppressed rows; with ``--exhaustive`` the
exhaustive scan's time and whether its optimum is the same. A last table runs k = 5 alone at
5% with Loss at gs_factor 0, 0.5 and 1.

``--population`` runs the population models instead (issue 13's delta-presence, k-map and risk
thresholds): the same 8 QIs, no sensitive attribute, k = 5 with each of 0.2-presence (delta_max),
(0.05, 0.15)-presence (also without k: ARX's DPresence test case) and 10-map against adult.csv
for the research subset adult_subset.csv (3,016 rows), and on
adult.csv estimated 10-map (Poisson, significance 0.05, f = 0.1), average risk <= 0.05, sample
uniqueness <= 0.01 and population uniqueness <= 0.001 (Dankar, f = 0.1); the last two are
also run without k (with k = 5 no class is unique, so they hold trivially).

    python benchmarks/bench_models.py [--repeat 3] [--exhaustive] [--population]

``benchmarks/bench_lattice.py`` runs both tables in its run (part 4).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

QIS = [
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "salary-class",
]


#: the clock (bench_lattice.py --cpu-time sets the process's CPU time)
CLOCK = {"now": time.perf_counter}


def best_of(fn, repeat: int):
    best, out = float("inf"), None
    for _ in range(repeat):
        t = CLOCK["now"]()
        out = fn()
        best = min(best, CLOCK["now"]() - t)
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--exhaustive", action="store_true", help="also run the exhaustive scan")
    ap.add_argument("--population", action="store_true", help="the population models")
    args = ap.parse_args()
    if args.population:
        population_models(args)
        return
    further_models(args)


def further_models(args) -> None:
    """beta-likeness, delta-disclosure, Grassberger entropy l-diversity; gs_factor."""
    import pandas as pd

    from anonsql.algorithms.lattice.searches import Exhaustive, Flash
    from anonsql.data.histogram import Histogram
    from anonsql.hierarchy.loaders import read_arx_csv
    from anonsql.metrics.quality import Loss
    from anonsql.models import (
        BasicBetaLikeness,
        DeltaDisclosure,
        EnhancedBetaLikeness,
        EntropyLDiversity,
        GrassbergerEntropyLDiversity,
        KAnonymity,
    )
    from anonsql.models.requirements import Requirements

    folder = ROOT.parent / "shared" / "data" / "adult"
    if not folder.is_dir():
        print(f"skipped: {folder} not found")
        return
    df = pd.read_csv(folder / "adult.csv", sep=";", dtype=str)
    hs = {c: read_arx_csv(c, folder / f"adult_hierarchy_{c}.csv") for c in [*QIS, "occupation"]}
    hist = Histogram.from_frame(df, QIS, [hs[q] for q in QIS], "occupation")
    print(
        f"Adult: {hist.rows} rows, 8 QIs (all but occupation), lattice 4,320, occupation "
        f"sensitive ({len(hist.sens_labels)} values); k = 5, metric Loss; best of "
        f"{args.repeat} after a warm-up"
    )
    models = {
        "basic 1-likeness": lambda: BasicBetaLikeness(1.0),
        "enhanced 1-likeness": lambda: EnhancedBetaLikeness(1.0),
        "1.2-disclosure": lambda: DeltaDisclosure(1.2),
        "entropy-3 Grassberger": lambda: GrassbergerEntropyLDiversity(3),
        "entropy-3 Shannon (ref.)": lambda: EntropyLDiversity(3),
    }
    Flash(frontier=False).run(hist, Requirements([KAnonymity(5)], 0.05), Loss())  # warm-up
    header = (
        f"{'model (with k = 5)':<25} | {'supp.':>5} | {'search':>8} | {'checked':>7} | "
        f"{'optimum':<25} | {'suppr.':>6} | {'Loss':>8}"
    )
    if args.exhaustive:
        header += f" | {'exhaustive':>10} | same"
    print(header)
    print("-" * len(header))
    for name, make in models.items():
        for limit in (0.0, 0.05):
            req = Requirements([KAnonymity(5), make()], limit)
            t, res = best_of(
                lambda req=req: Flash(frontier=False).run(hist, req, Loss()), args.repeat
            )
            opt = res.optimum
            row = f"{name:<25} | {limit:>5.0%} | {t:>6.3f} s | {res.checked:>7} | " + (
                f"{list(opt.levels)!s:<25} | {opt.suppressed_rows:>6} | {opt.score:>8.5f}"
                if opt is not None
                else f"{'none':<25} | {'':>6} | {'':>8}"
            )
            if args.exhaustive:
                t_ex, ex = best_of(lambda req=req: Exhaustive().run(hist, req, Loss()), 1)
                same = (ex.optimum is None) == (opt is None) and (
                    opt is None or ex.optimum.levels == opt.levels
                )
                row += f" | {t_ex:>8.2f} s | {'yes' if same else 'NO'}"
            print(row)
    print()
    print("k = 5 alone, 5% suppression, Loss with ARX's gsFactor:")
    header = f"{'gs_factor':>9} | {'search':>8} | {'checked':>7} | {'optimum':<25} | {'suppr.':>6}"
    print(header)
    print("-" * len(header))
    for gs in (0.0, 0.5, 1.0):
        req = Requirements([KAnonymity(5)], 0.05)
        t, res = best_of(
            lambda req=req, gs=gs: Flash(frontier=False).run(hist, req, Loss(gs)), args.repeat
        )
        print(
            f"{gs:>9} | {t:>6.3f} s | {res.checked:>7} | {list(res.optimum.levels)!s:<25} | "
            f"{res.optimum.suppressed_rows:>6}"
        )


def population_models(args) -> None:
    import pandas as pd

    from anonsql.algorithms.lattice.searches import Exhaustive, Flash
    from anonsql.data.histogram import Histogram
    from anonsql.hierarchy.loaders import read_arx_csv
    from anonsql.metrics.quality import Loss
    from anonsql.models import (
        AverageRisk,
        DeltaPresence,
        EstimatedKMap,
        KAnonymity,
        KMap,
        PopulationUniqueness,
        SampleUniqueness,
    )
    from anonsql.models.requirements import Requirements

    folder = ROOT.parent / "shared" / "data" / "adult"
    if not folder.is_dir():
        print(f"skipped: {folder} not found")
        return
    adult = pd.read_csv(folder / "adult.csv", sep=";", dtype=str)
    subset = pd.read_csv(folder / "adult_subset.csv", sep=";", dtype=str)
    hs = [read_arx_csv(c, folder / f"adult_hierarchy_{c}.csv") for c in QIS]
    full = Histogram.from_frame(adult, QIS, hs)
    sub = Histogram.from_frame(subset, QIS, hs)
    print(
        f"Adult: {full.rows} rows (population), research subset {sub.rows} rows, 8 QIs, "
        f"lattice 4,320, no sensitive attribute; metric Loss; best of {args.repeat}"
    )
    k5 = [KAnonymity(5)]
    cases = [
        ("0.2-presence (delta_max)", sub, lambda: [*k5, DeltaPresence(0.0, 0.2, "adult")]),
        ("(0.05, 0.15)-presence", sub, lambda: [*k5, DeltaPresence(0.05, 0.15, "adult")]),
        ("(0.05, 0.15)-presence, no k", sub, lambda: [DeltaPresence(0.05, 0.15, "adult")]),
        ("10-map (population table)", sub, lambda: [*k5, KMap(10, "adult")]),
        ("10-map (Poisson, f = 0.1)", full,
         lambda: [*k5, EstimatedKMap(10, "poisson", 0.05, sampling_fraction=0.1)]),
        ("average risk <= 0.05", full, lambda: [*k5, AverageRisk(0.05)]),
        ("sample uniqueness <= 0.01", full, lambda: [*k5, SampleUniqueness(0.01)]),
        ("pop. uniqueness <= 0.001", full,
         lambda: [*k5, PopulationUniqueness(0.001, "dankar", sampling_fraction=0.1)]),
        ("sample uniq. <= 0.01, no k", full, lambda: [SampleUniqueness(0.01)]),
        ("pop. uniq. <= 0.001, no k", full,
         lambda: [PopulationUniqueness(0.001, "dankar", sampling_fraction=0.1)]),
    ]  # fmt: skip
    header = (
        f"{'model (with k = 5)':<27} | {'supp.':>5} | {'search':>8} | {'checked':>7} | "
        f"{'optimum':<25} | {'suppr.':>6}"
    )
    if args.exhaustive:
        header += f" | {'exhaustive':>10} | same"
    print(header)
    print("-" * len(header))
    for name, hist, make in cases:
        for limit in (0.0, 0.05):
            req = Requirements(make(), limit)
            req.population = full
            req.validate(hist)
            t, res = best_of(
                lambda req=req, hist=hist: Flash(frontier=False).run(hist, req, Loss()),
                args.repeat,
            )
            opt = res.optimum
            row = f"{name:<27} | {limit:>5.0%} | {t:>6.3f} s | {res.checked:>7} | " + (
                f"{list(opt.levels)!s:<25} | {opt.suppressed_rows:>6}"
                if opt is not None
                else f"{'none':<25} | {'':>6}"
            )
            if args.exhaustive:
                t_ex, ex = best_of(
                    lambda req=req, hist=hist: Exhaustive().run(hist, req, Loss()), 1
                )
                same = (ex.optimum is None) == (opt is None) and (
                    opt is None or ex.optimum.levels == opt.levels
                )
                row += f" | {t_ex:>8.2f} s | {'yes' if same else 'NO'}"
            print(row, flush=True)


if __name__ == "__main__":
    main()

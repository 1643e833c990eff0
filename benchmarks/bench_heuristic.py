"""Benchmark of the best-effort search for lattices too large to enumerate (issue 13, section 3).

Part 1, synthetic (``tests.test_heuristic.wide_table``): N rows (default 2,000) over 12 QIs of
4 levels each, a lattice of 16,777,216 nodes that the optimal search refuses; k = 5, 5%
suppression, Loss. The heuristic at several step limits (time, checks, score, what stopped
it) on all 12 QIs and on the first 6 and 8 QIs, where the exhaustive scan (every node)
gives the optimum to compare with.

Part 2, Adult (../shared/data/adult, 9 QIs): the cases of ARX's own heuristic tests
(``TestAnonymizationHeuristic``: Lightning, ``...HeuristicTopDown``, ``...Genetic``, each
with a limit of 1,000 checks) beside anonsql's heuristic with the same limit and the exact
optimum.

Part 3, mach2019 (../shared/data/mach2019: 73,489 rows, 16 QIs, a lattice of 85,030,560
nodes, every row nearly unique): the heuristic at several time limits, k = 5, 5%, Loss.

    python benchmarks/bench_heuristic.py [--rows 2000] [--steps 1000,5000,20000]
    python benchmarks/bench_heuristic.py --synthetic-only
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "data"


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def stopped(guarantee: str) -> str:
    if "exhausted" in guarantee:
        return "exhausted"
    if "time limit" in guarantee:
        return "time"
    return "steps" if "step limit" in guarantee else guarantee


def synthetic(rows: int, steps: list[int]) -> None:
    from anonsql.algorithms.lattice.searches import Exhaustive, Heuristic
    from anonsql.data.histogram import Histogram
    from anonsql.metrics.quality import quality_model
    from anonsql.models import KAnonymity
    from anonsql.models.requirements import Requirements
    from tests.test_heuristic import wide_table

    df, hs = wide_table(12, rows, seed=3)
    req = Requirements([KAnonymity(5)], 0.05)
    print(
        f"Part 1: synthetic, {rows:,} rows, 12 QIs of 4 levels (tests.test_heuristic.wide_table, "
        f"seed 3); k = 5, 5% suppression, Loss"
    )
    header = (
        f"{'QIs':>3} | {'lattice':>10} | {'search':<22} | {'time':>8} | {'checked':>7} | "
        f"{'stopped':<9} | {'score':>9} | {'gap':>7} | transformation"
    )
    print(header)
    print("-" * len(header))
    for m in (6, 8, 12):
        sub = hs[:m]
        hist = Histogram.from_frame(df, [h.name for h in sub], sub)
        optimum = None
        if m <= 8:
            t, ex = timed(lambda hist=hist: Exhaustive().run(hist, req, quality_model("loss")))
            optimum = ex.optimum
            print(
                f"{m:>3} | {4**m:>10,} | {'exhaustive (optimum)':<22} | {t:>6.2f} s | "
                f"{ex.checked:>7,} | {'-':<9} | {optimum.score:>9.5f} | {'':>7} | "
                f"{list(optimum.levels)}"
            )
        for n in steps:
            t, r = timed(
                lambda hist=hist, n=n: Heuristic(steps=n, time_limit=3600).run(
                    hist, req, quality_model("loss")
                )
            )
            gap = f"{(r.optimum.score - optimum.score) / optimum.score:>6.2%}" if optimum else "-"
            print(
                f"{m:>3} | {4**m:>10,} | {f'heuristic, {n:,} steps':<22} | {t:>6.2f} s | "
                f"{r.checked:>7,} | {stopped(r.guarantee):<9} | {r.optimum.score:>9.5f} | "
                f"{gap:>7} | {list(r.optimum.levels)}"
            )


# ARX 3.9's heuristic tests on Adult (src/test/org/deidentifier/arx/test/TestAnonymization
# {Heuristic,HeuristicTopDown,Genetic}.java, commit aacd487fb): suppression limit, metric
# (anonsql's name, gs_factor), k, and the score each heuristic reached with 1,000 checks
ARX_HEURISTIC_CASES = [
    (1.0, "loss", 0.5, 5, 0.22041192847984292, 0.22041192847984292, 0.22041192847984292),
    (0.04, "entropy-nm", 0.5, 100, 400196.319223464, 413894.76146080694, 383803.4034066361),
    (1.0, "loss", 0.1, 5, 0.09257312971977383, 0.09257312971977383, 0.09257312971977383),
    (1.0, "entropy-nm", 0.5, 100, 377248.23689620313, 372601.7108854912, 359649.67365904135),
    (0.04, "loss", 0.5, 5, 0.26611081915757495, 0.26611081915757495, 0.26611081915757495),
]


def adult() -> None:
    import pandas as pd

    from anonsql.algorithms.lattice.searches import Flash, Heuristic
    from anonsql.data.histogram import Histogram
    from anonsql.hierarchy.loaders import read_arx_csv
    from anonsql.metrics.quality import quality_model
    from anonsql.models import KAnonymity
    from anonsql.models.requirements import Requirements
    from tests.helpers.data import ADULT_QIS

    folder = SHARED / "adult"
    if not folder.is_dir():
        print(f"Part 2 skipped: {folder} not found")
        return
    df = pd.read_csv(folder / "adult.csv", sep=";", dtype=str)
    hs = [read_arx_csv(c, folder / f"adult_hierarchy_{c}.csv") for c in ADULT_QIS]
    hist = Histogram.from_frame(df, ADULT_QIS, hs)
    print(
        "Part 2: Adult, 9 QIs (12,960 nodes); ARX 3.9's heuristic tests (1,000 checks each) "
        "against anonsql's heuristic (1,000 steps) and the exact optimum"
    )
    header = (
        f"{'limit':>5} | {'metric':<16} | {'k':>3} | {'ARX Lightning':>13} | "
        f"{'ARX top-down':>13} | {'ARX genetic':>13} | {'anonsql heur.':>13} | {'time':>7} | "
        f"{'optimum':>13}"
    )
    print(header)
    print("-" * len(header))
    for limit, metric, gs, k, lightning, topdown, genetic in ARX_HEURISTIC_CASES:
        req = Requirements([KAnonymity(k)], limit)
        t, r = timed(
            lambda req=req, metric=metric, gs=gs: Heuristic(steps=1000, time_limit=3600).run(
                hist, req, quality_model(metric, gs)
            )
        )
        opt = Flash(frontier=False).run(hist, req, quality_model(metric, gs)).optimum
        name = metric if gs == 0.5 else f"{metric} (gs {gs})"
        print(
            f"{limit:>5.0%} | {name:<16} | {k:>3} | {lightning:>13.6g} | {topdown:>13.6g} | "
            f"{genetic:>13.6g} | {r.optimum.score:>13.6g} | {t:>5.2f} s | {opt.score:>13.6g}"
        )


def mach2019(time_limits: list[float]) -> None:
    import pandas as pd

    from anonsql.algorithms.lattice.searches import Heuristic
    from anonsql.data.histogram import Histogram
    from anonsql.hierarchy.loaders import read_arx_csv
    from anonsql.metrics.quality import quality_model
    from anonsql.models import KAnonymity
    from anonsql.models.requirements import Requirements

    folder = SHARED / "mach2019"
    if not folder.is_dir():
        print(f"Part 3 skipped: {folder} not found")
        return
    df = pd.read_csv(folder / "mach2019_int.csv", sep=";", dtype=str)
    qis = list(df.columns)
    hs = [read_arx_csv(q, folder / f"mach2019_int_hierarchy_{q}.csv") for q in qis]
    hist = Histogram.from_frame(df, qis, hs)
    req = Requirements([KAnonymity(5)], 0.05)
    print(
        f"Part 3: mach2019, {hist.rows:,} rows ({len(hist.counts):,} distinct), 16 QIs, "
        f"lattice 85,030,560; k = 5, 5% suppression, Loss (the top scores 1)"
    )
    header = f"{'time limit':>10} | {'time':>8} | {'checked':>7} | {'score':>8} | transformation"
    print(header)
    print("-" * len(header))
    for limit in time_limits:
        t, r = timed(
            lambda limit=limit: Heuristic(time_limit=limit).run(hist, req, quality_model("loss"))
        )
        print(
            f"{limit:>8g} s | {t:>6.2f} s | {r.checked:>7,} | {r.optimum.score:>8.5f} | "
            f"{list(r.optimum.levels)}"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--steps", default="1000,5000,20000", help="step limits, comma-separated")
    ap.add_argument("--time-limits", default="5,15,30", help="part 3, seconds, comma-separated")
    ap.add_argument("--synthetic-only", action="store_true")
    args = ap.parse_args()
    synthetic(args.rows, [int(s) for s in args.steps.split(",")])
    if args.synthetic_only:
        return
    print()
    adult()
    print()
    mach2019([float(s) for s in args.time_limits.split(",")])


if __name__ == "__main__":
    main()

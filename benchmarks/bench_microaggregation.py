"""Benchmark of seed 001's microaggregation (issue 16): every method, alone and "++", on
Electrical (10,000 x 12 after dropping ``stab``) and Waveform (5,000 x 21), k = 5, each a full
``anonymize`` run written as a view on DuckDB, with the run's time per phase (reading the
tuples, clustering, wLVQ2, measures, writing the view); then synthetic rows (5 normal
attributes, 3 decimals: every tuple distinct) with MDAV and KDE at growing sizes; then the
cost of MDAV's blocking: at ``--block-study`` rows, exact MDAV (one block) against blocks of
``--blocks`` tuples, with the run's information loss SSE/SST and structural utility.

Exact MDAV is quadratic in the number of distinct tuples (every group scans the remaining
ones, as sdcMicro's); beyond ``mdav_block`` tuples (default 50,000) it runs within blocks cut
by median splits, linear for a fixed block. KDE is linear.

    nice -n 19 python benchmarks/bench_microaggregation.py \
        [--sizes 10000,50000,1000000] [--sets electrical,waveform] \
        [--block-study 100000] [--blocks 50000,20000,10000] [--cpu]

``--cpu`` reports every phase in CPU seconds of the process (all its threads), which the
shared machine's load changes less than wall seconds.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "experiments"))

METHODS = ["mdav", "ktca", "ctca", "kde"]
PHASES = ["histogram", "clustering", "wlvq2", "measures", "materialize", "total"]


def one(
    db, source: str, qis: list[str], algorithm: str, label: str | None, block: int | None = None
):
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    spec = Spec(
        qis=qis,
        k=5,
        algorithm=algorithm,
        label=label,
        suppression=1.0,
        output=f"{source}_{algorithm}",
        replace=True,
        mdav_block=block,
        # the output holds the QIs, and the label of the "++" runs (no role in the others)
        columns=[*qis, label] if label else qis,
    )
    return anonymize(db, source, spec)


def synthetic(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(rng.normal(size=(n, 5)).round(3), columns=[f"x{i}" for i in range(5)])


def blocks_of(measures: dict) -> str:
    if "info_mdav_blocks" not in measures:
        return ""
    if measures["info_mdav_exact"]:
        return "  exact"
    return f"  {measures['info_mdav_blocks']} blocks <= {measures['info_mdav_block']}"


def timed_measures() -> dict[str, float]:
    """CPU seconds of the costly utility measures of the last run (filled as they run)."""
    from anonsql.algorithms.microaggregation import measures

    spent: dict[str, float] = {}

    def timing(name: str, f):
        def timed(*a, **kw):
            t = time.process_time()
            out = f(*a, **kw)
            spent[name] = time.process_time() - t
            return out

        return timed

    for name in ("silhouette", "davies_bouldin", "structural_utility"):
        setattr(measures, name, timing(name, getattr(measures, name)))
    return spent


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,50000,1000000")
    ap.add_argument("--sets", default="electrical,waveform", help="UCI sets ('' for none)")
    ap.add_argument("--block-study", type=int, default=100000, help="rows (0: none)")
    ap.add_argument("--blocks", default="50000,20000,10000")
    ap.add_argument(
        "--cpu",
        action="store_true",
        help="phases in CPU seconds of this process (time.process_time), not wall seconds",
    )
    args = ap.parse_args()
    if args.cpu:  # the runs time their phases with time.perf_counter
        time.perf_counter = time.process_time
    measure_cpu = timed_measures() if args.cpu else {}
    print(
        f"load average {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f}; "
        f"{'CPU' if args.cpu else 'wall'} seconds"
    )
    from seed001_microaggregation import load

    from anonsql.database import Database

    print(f"{'data set':12}{'method':9}" + "".join(f"{p:>12}" for p in PHASES))
    for name in [s for s in args.sets.split(",") if s]:
        df, qis, label = load(name)
        db = Database.open(":memory:")
        db.backend.write_frame(name, df)
        for algo in METHODS:
            for lab in (None, label):
                res = one(db, name, qis, algo, lab)
                method = algo + ("++" if lab else "")
                cells = "".join(f"{res.timings.get(p, 0.0):12.2f}" for p in PHASES)
                print(f"{name:12}{method:9}{cells}{blocks_of(res.measures)}", flush=True)
        db.close()
    print()
    print(f"{'rows':>10}{'method':>8}" + "".join(f"{p:>12}" for p in PHASES))
    for n in [int(s) for s in args.sizes.split(",") if s]:
        df = synthetic(n)
        db = Database.open(":memory:")
        db.backend.write_frame("synth", df)
        for algo in ("mdav", "kde"):
            res = one(db, "synth", list(df.columns), algo, None)
            cells = "".join(f"{res.timings.get(p, 0.0):12.2f}" for p in PHASES)
            print(f"{n:>10}{algo:>8}{cells}{blocks_of(res.measures)}", flush=True)
            if measure_cpu:
                print(" " * 18 + ", ".join(f"{k} {v:.2f}" for k, v in measure_cpu.items()))
                measure_cpu.clear()
        db.close()
        print(f"load average {os.getloadavg()[0]:.1f}")
    if args.block_study:
        n = args.block_study
        print()
        print(f"MDAV at {n} rows (k = 5): exact against blocked")
        print(f"{'mdav_block':>10}{'blocks':>8}{'clustering':>12}{'SSE/SST':>10}{'vs exact':>10}")
        df = synthetic(n)
        db = Database.open(":memory:")
        db.backend.write_frame("synth", df)
        exact = None
        for block in [n] + [int(b) for b in args.blocks.split(",") if b]:
            res = one(db, "synth", list(df.columns), "mdav", None, block)
            sse = res.measures["sse"]
            exact = sse if exact is None else exact
            print(
                f"{block:>10}{res.measures['info_mdav_blocks']:>8}"
                f"{res.timings['clustering']:>12.2f}{sse:>10.5f}{sse / exact - 1:>+10.2%}",
                flush=True,
            )
        db.close()


if __name__ == "__main__":
    main()

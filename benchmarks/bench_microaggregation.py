"""Benchmark of seed 001's microaggregation (issue 16): every method, alone and "++", on
Electrical (10,000 x 12 after dropping ``stab``) and Waveform (5,000 x 21), k = 5, each a full
``anonymize`` run written as a view on DuckDB, with the run's time per phase (reading the
tuples, clustering, wLVQ2, measures, writing the view); then synthetic rows (5 normal
attributes) with MDAV and KDE at growing sizes. MDAV is quadratic in the number of distinct
tuples (every group scans the remaining ones, as sdcMicro's), KDE linear.

    nice -n 19 python benchmarks/bench_microaggregation.py [--sizes 10000,50000,1000000] [--sets ""]
"""

from __future__ import annotations

import argparse
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


def one(db, source: str, qis: list[str], algorithm: str, label: str | None) -> dict:
    from anonsql.anonymization import Spec, anonymize

    spec = Spec(
        qis=qis,
        k=5,
        algorithm=algorithm,
        label=label,
        suppression=1.0,
        output=f"{source}_{algorithm}",
        replace=True,
    )
    res = anonymize(db, source, spec)
    return res.timings


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,50000,1000000")
    ap.add_argument("--mdav-max", type=int, default=50000)
    ap.add_argument("--sets", default="electrical,waveform", help="UCI sets ('' for none)")
    args = ap.parse_args()
    from seed001_microaggregation import load

    from anonsql.database import Database

    print(f"{'data set':12}{'method':9}" + "".join(f"{p:>12}" for p in PHASES))
    for name in [s for s in args.sets.split(",") if s]:
        df, qis, label = load(name)
        db = Database.open(":memory:")
        db.backend.write_frame(name, df)
        for algo in METHODS:
            for lab in (None, label):
                t = one(db, name, qis, algo, lab)
                method = algo + ("++" if lab else "")
                cells = "".join(f"{t.get(p, 0.0):12.2f}" for p in PHASES)
                print(f"{name:12}{method:9}{cells}", flush=True)
        db.close()
    print()
    print(f"{'rows':>10}{'method':>8}" + "".join(f"{p:>12}" for p in PHASES))
    for n in [int(s) for s in args.sizes.split(",")]:
        rng = np.random.default_rng(0)
        df = pd.DataFrame(rng.normal(size=(n, 5)).round(3), columns=[f"x{i}" for i in range(5)])
        db = Database.open(":memory:")
        db.backend.write_frame("synth", df)
        for algo in ("mdav", "kde"):
            if algo == "mdav" and n > args.mdav_max:
                print(f"{n:>10}{algo:>8}  skipped (quadratic: > --mdav-max)")
                continue
            t0 = time.perf_counter()
            t = one(db, "synth", list(df.columns), algo, None)
            t.setdefault("total", time.perf_counter() - t0)
            print(f"{n:>10}{algo:>8}" + "".join(f"{t.get(p, 0.0):12.2f}" for p in PHASES))
        db.close()


if __name__ == "__main__":
    main()

"""GAA at 50,000 rows (issue 30, target 5: at most 30 s on 50,000 rows of seed 004's
simulated kind and on Adult). Each case runs GAA twice in the same process: with the index
of the cheapest partners (gaa._NearIndex, the default) and with the full scan of every
class per merge (NEAR_INDEX = False, the reference); the two must make the same merges,
which the script checks.

Tables (seeded):

* ``adult``: Adult's 30,162 rows with its nine attributes as QIs (seed 004, Section 4.3.3)
  and a simulated sensitive column of 10 equally likely values, as in
  experiments/seed004_simulated.py;
* ``sim50k``: 50,000 rows of the same kind, each QI drawn independently from Adult's own
  column (so the combinations are new: 47,968 distinct), and the simulated column;
* ``wide50k``: sim50k plus a ZIP-like QI of 20,000 values under a 3-level hierarchy
  (20,000 -> 2,000 -> 200 -> *), more nodes than GAA's dense tables take (DENSE_NODES):
  a new user's table with a fine-grained column.

    python benchmarks/bench_greedy_scale.py [--cases adult,sim50k,wide50k]
        [--strategies s1,s5] [--k 5] [--no-reference] [--repeat 3]

Prints the least CPU time (time.process_time) and wall time of ``--repeat`` interleaved runs
of each, and the load average.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ADULT = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
         "occupation", "salary-class"]  # fmt: skip
FOLDER = ROOT.parent / "shared" / "data" / "adult"


def tables(name: str):
    import pandas as pd

    from anonsql.data.histogram import Histogram
    from anonsql.hierarchy.hierarchy import Hierarchy
    from anonsql.hierarchy.loaders import read_arx_csv

    if not FOLDER.is_dir():
        raise SystemExit(f"Adult not found at {FOLDER}")
    frame = pd.read_csv(FOLDER / "adult.csv", sep=";", dtype=str)
    hs = [read_arx_csv(c, FOLDER / f"adult_hierarchy_{c}.csv") for c in ADULT]
    qis = list(ADULT)
    if name == "adult":
        rng = np.random.default_rng([4, 10, 0])
        frame["sim"] = rng.integers(0, 10, len(frame)).astype(str)
        return Histogram.from_frame(frame, qis, hs, "sim")
    rng = np.random.default_rng(4)
    n = 50_000
    out = pd.DataFrame({c: frame[c].to_numpy()[rng.integers(0, len(frame), n)] for c in qis})
    out["sim"] = rng.integers(0, 10, n).astype(str)
    if name == "wide50k":
        zips = 20_000
        rows = [[f"z{v:05d}", f"z{v // 10:04d}x", f"z{v // 100:03d}xx", "*"] for v in range(zips)]
        hs = [*hs, Hierarchy.from_rows("zip", rows)]
        out["zip"] = [f"z{v:05d}" for v in rng.integers(0, zips, n)]
        qis = [*qis, "zip"]
    elif name != "sim50k":
        raise SystemExit(f"unknown case {name!r}")
    return Histogram.from_frame(out, qis, hs, "sim")


def timed(fn):
    cpu, wall = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    import anonsql.algorithms.greedy.gaa as gaa_module
    from anonsql.algorithms.greedy.gaa import GreedyModel, gaa

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="adult,sim50k,wide50k")
    ap.add_argument("--strategies", default="s1")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--metric", default="nllm")
    ap.add_argument("--no-reference", action="store_true", help="skip the full-scan runs")
    ap.add_argument("--repeat", type=int, default=3, help="interleaved runs (least time)")
    args = ap.parse_args()
    print(f"GAA, k = {args.k}, metric {args.metric}; load average at start {os.getloadavg()}")
    print("case     | rows   | classes | strategy | index CPU / wall | full scan CPU / wall | "
          "merges | same | load (1 min)")  # fmt: skip
    for case in args.cases.split(","):
        hist = tables(case)
        for strategy in args.strategies.split(","):
            model = GreedyModel(args.k)
            cpu = wall = rcpu = rwall = float("inf")
            ref_text, same = "-", "-"
            for _ in range(args.repeat):  # interleaved; the least time of each
                got, c, w = timed(lambda: gaa(hist, model, args.metric, strategy))  # noqa: B023
                cpu, wall = min(cpu, c), min(wall, w)
                if args.no_reference:
                    continue
                gaa_module.NEAR_INDEX = False
                try:
                    ref, c, w = timed(lambda: gaa(hist, model, args.metric, strategy))  # noqa: B023
                finally:
                    gaa_module.NEAR_INDEX = True
                rcpu, rwall = min(rcpu, c), min(rwall, w)
                ref_text = f"{rcpu:7.1f} / {rwall:6.1f} s"
                same = str(
                    ref.merges == got.merges
                    and np.array_equal(ref.nodes, got.nodes)
                    and np.array_equal(ref.row_class, got.row_class)
                )
            print(
                f"{case:8s} | {hist.rows:6d} | {len(hist.counts):7d} | {strategy:8s} | "
                f"{cpu:6.1f} / {wall:6.1f} s | {ref_text:20s} | {got.merges:6d} | {same:5s} | "
                f"{os.getloadavg()[0]:.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()

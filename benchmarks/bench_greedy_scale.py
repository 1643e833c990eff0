"""GAA at 50,000 rows (issue 30, target 5: at most 30 s on 50,000 rows of seed 004's
simulated kind and on Adult). Each case runs GAA with the current code and, in the same
process, with gaa.py as it was at ``--baseline-rev`` (read from git: the index of the
cheapest partners, bit sets of the classes below each node), and checks that both make the
same merges. ``--reference`` adds the plain per-QI full pass (gaa.SCAN = False), which the
current full pass (gaa._Scan) must equal bit for bit.

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
        [--strategies s1,s5] [--k 5] [--baseline-rev d9ea592] [--reference] [--repeat 3]

Prints the least CPU time (time.process_time) and wall time of ``--repeat`` interleaved runs
of each, the ratio of the baseline's CPU time to the current one, and the load average.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
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


def baseline_module(rev: str):
    """gaa.py as it was at ``rev``, with the strategies.py of that revision (None when git
    or the revision is unavailable)."""
    sources = {}
    for name in ("gaa", "strategies"):
        try:
            sources[name] = subprocess.run(
                ["git", "show", f"{rev}:anonsql/algorithms/greedy/{name}.py"],
                cwd=ROOT, capture_output=True, text=True, check=True,
            ).stdout  # fmt: skip
        except (OSError, subprocess.CalledProcessError):
            return None
    folder = Path(tempfile.mkdtemp())
    modules = {}
    for name in ("strategies", "gaa"):
        src = sources[name].replace(
            "anonsql.algorithms.greedy.strategies", "gaa_baseline_strategies"
        )
        path = folder / f"gaa_baseline_{name}.py"
        path.write_text(src)
        spec = importlib.util.spec_from_file_location(f"gaa_baseline_{name}", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[f"gaa_baseline_{name}"] = module
        spec.loader.exec_module(module)
        modules[name] = module
    return modules["gaa"]


def timed(fn):
    cpu, wall = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - cpu, time.perf_counter() - wall


def same(a, b) -> bool:
    return (
        a.merges == b.merges
        and np.array_equal(a.nodes, b.nodes)
        and np.array_equal(a.row_class, b.row_class)
    )


def main() -> None:
    import anonsql.algorithms.greedy.gaa as gaa_module
    from anonsql.algorithms.greedy.gaa import GreedyModel, gaa

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default="adult,sim50k,wide50k")
    ap.add_argument("--strategies", default="s1")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--metric", default="nllm")
    ap.add_argument("--baseline-rev", default="d9ea592", help="'' for no baseline")
    ap.add_argument("--reference", action="store_true", help="also the plain per-QI pass")
    ap.add_argument("--repeat", type=int, default=3, help="interleaved runs (least time)")
    args = ap.parse_args()
    base = baseline_module(args.baseline_rev) if args.baseline_rev else None
    print(f"GAA, k = {args.k}, metric {args.metric}; baseline gaa.py at {args.baseline_rev}"
          f"{'' if base else ' (none)'}; load average at start {os.getloadavg()}")  # fmt: skip
    print("case     | rows   | classes | strategy | CPU / wall (s)  | baseline CPU / wall (s) "
          "| ratio | plain pass CPU (s) | merges | same | load")  # fmt: skip
    for case in args.cases.split(","):
        hist = tables(case)
        for strategy in args.strategies.split(","):
            model = GreedyModel(args.k)
            best = {"now": [np.inf, np.inf], "base": [np.inf, np.inf], "plain": [np.inf, np.inf]}
            agree = True
            for _ in range(args.repeat):  # interleaved; the least time of each
                got, c, w = timed(lambda: gaa(hist, model, args.metric, strategy))  # noqa: B023
                best["now"] = [min(best["now"][0], c), min(best["now"][1], w)]
                if base is not None:
                    ref, c, w = timed(lambda: base.gaa(hist, model, args.metric, strategy))  # noqa: B023
                    best["base"] = [min(best["base"][0], c), min(best["base"][1], w)]
                    agree &= same(ref, got)
                if args.reference:
                    gaa_module.SCAN = False
                    try:
                        ref, c, w = timed(lambda: gaa(hist, model, args.metric, strategy))  # noqa: B023
                    finally:
                        gaa_module.SCAN = True
                    best["plain"] = [min(best["plain"][0], c), min(best["plain"][1], w)]
                    agree &= same(ref, got)
            cpu, wall = best["now"]
            bcpu, bwall = best["base"]
            base_text = f"{bcpu:7.1f} / {bwall:7.1f}" if base is not None else "-"
            ratio = f"{bcpu / cpu:4.2f}x" if base is not None else "-"
            plain = f"{best['plain'][0]:6.1f}" if args.reference else "-"
            print(
                f"{case:8s} | {hist.rows:6d} | {len(hist.counts):7d} | {strategy:8s} | "
                f"{cpu:6.1f} / {wall:6.1f} | {base_text:23s} | {ratio:5s} | {plain:18s} | "
                f"{got.merges:6d} | {agree!s:5s} | {os.getloadavg()[0]:.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()

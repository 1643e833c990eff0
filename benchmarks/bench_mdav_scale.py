"""MDAV at scale (issue 30, target 5: 1 M rows in at most 60 s with a sub-quadratic method
whose information loss is measured against exact MDAV where both run).

Synthetic rows as in bench_microaggregation.py (5 normal attributes, 3 decimals: every tuple
distinct), standardized, k = 5. For each size: exact MDAV (one block) where it runs in
reasonable time, and MDAV within median-split blocks (``mdav_block``, the sub-quadratic
method: linear for a fixed block), with the information loss SSE/SST of each side by side;
then, for the same inputs, the previous implementation of mdav.py (``--baseline-rev``, read
from git) as the baseline, measured in the same run. Prints CPU time (time.process_time),
wall time and the load average.

    python benchmarks/bench_mdav_scale.py [--sizes 50000,100000,1000000]
        [--blocks 50000,20000] [--exact-max 100000] [--baseline-rev 3320b5a]
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


def synthetic(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Standardized distinct tuples and their counts (all 1 here)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 5)).round(3)
    x, counts = np.unique(x, axis=0, return_counts=True)
    z = (x - x.mean(axis=0)) / x.std(axis=0)
    return z, counts.astype(np.int64)


def sse_sst(z: np.ndarray, counts: np.ndarray, groups: np.ndarray) -> float:
    """Within-group sum of squares over the total one (records weighted by their counts)."""
    w = counts.astype(np.float64)
    total = float((w[:, None] * (z - np.average(z, axis=0, weights=w)) ** 2).sum())
    size = np.bincount(groups, weights=w)
    means = np.stack([np.bincount(groups, weights=w * z[:, j]) for j in range(z.shape[1])], 1)
    means /= size[:, None]
    return float((w[:, None] * (z - means[groups]) ** 2).sum()) / total


def baseline_module(rev: str):
    """mdav.py as it was at ``rev`` (None when git or the revision is unavailable)."""
    src = None
    # the file's path then: the family folder since the tree's refactor, before it its own
    for where in (
        "anonsql/algorithms/microaggregation/mdav.py",
        "anonsql/microaggregation/mdav.py",
    ):
        try:
            src = subprocess.run(
                ["git", "show", f"{rev}:{where}"],
                cwd=ROOT, capture_output=True, text=True, check=True,
            ).stdout  # fmt: skip
            break
        except (OSError, subprocess.CalledProcessError):
            continue
    if src is None:
        return None
    path = Path(tempfile.mkdtemp()) / "mdav_baseline.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("mdav_baseline", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed(fn):
    cpu, wall = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    from anonsql.algorithms.microaggregation import mdav as current

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="50000,100000,1000000")
    ap.add_argument("--blocks", default="50000,20000")
    ap.add_argument("--exact-max", type=int, default=100_000, help="largest exact run")
    ap.add_argument("--baseline-rev", default="3320b5a")
    ap.add_argument("--k", type=int, default=5)
    args = ap.parse_args()
    base = baseline_module(args.baseline_rev)
    k = args.k
    print(f"MDAV, k = {k}; baseline mdav.py at {args.baseline_rev}"
          f"{'' if base else ' (unavailable)'}; load average {os.getloadavg()}")  # fmt: skip
    print("     rows | mdav_block | blocks | SSE/SST  | vs exact | CPU / wall (s)  | "
          "baseline CPU / wall (s) | same | load")  # fmt: skip
    for n in (int(x) for x in args.sizes.split(",")):
        z, counts = synthetic(n)
        exact_loss = None
        blocks = [len(z)] if len(z) <= args.exact_max else []
        blocks += [int(b) for b in args.blocks.split(",") if int(b) < len(z)]
        for block in blocks:
            (groups, info), cpu, wall = timed(lambda: current.blocked_mdav(z, counts, k, block))  # noqa: B023
            loss = sse_sst(z, counts, groups)
            if info["mdav_exact"]:
                exact_loss = loss
            vs = f"{100 * (loss / exact_loss - 1):+.2f}%" if exact_loss else "-"
            base_text, same = "-", "-"
            if base is not None:
                (old, _), bcpu, bwall = timed(lambda: base.blocked_mdav(z, counts, k, block))  # noqa: B023
                base_text = f"{bcpu:7.1f} / {bwall:7.1f}"
                same = str(np.array_equal(old, groups))
            print(
                f"{len(z):9d} | {block:10d} | {info['mdav_blocks']:6d} | {loss:.5f}  | "
                f"{vs:8s} | {cpu:6.1f} / {wall:6.1f} | {base_text:23s} | {same:5s} | "
                f"{os.getloadavg()[0]:.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()

"""The best-effort (heuristic) lattice search against ARX's heuristics, in one run (issue 30,
target 3; issue 13, section 3).

ARX runs in one JVM kept warm beside this process (``benchmarks/arx/ArxHeuristic.java``, ARX's
public API, built against the ARX 3.9 classes that ``../shared/tools/arx-bench`` builds), and
the runs are interleaved: anonsql, ARX Lightning, ARX's genetic search, then again. Every row
gives the CPU time of the process that searched (anonsql: ``time.process_time`` of this
process, its histogram built from the loaded table included; ARX: the JVM's process CPU time
in ``anonymize()``, its encoding of the loaded table included), the node checks, the CPU time
per check, the wall time, the score and the load average when the row was measured.

Part 1, mach2019 (../shared/data/mach2019: 73,489 rows, 16 QIs, a lattice of 85,030,560
nodes): k = 5, 5% suppression, Loss; a limit of 1,000 checks (ARX's step limit) and time limits
of 1, 5 and 20 s.

Part 2, ARX's own cases for its genetic search on Adult (``TestAnonymizationGenetic``, cases
0-5: 9 QIs, 12,960 nodes; case 5 repeats case 3): 1,000 checks, the score each of ARX's
heuristics reaches (measured here, and the value ARX's tests expect), anonsql's with its
default seed and how many of ``--seeds`` seeds reach ARX's best; then the same cases with
time limits of 1, 5 and 20 s, against ARX Lightning and the genetic search.

Part 3, synthetic (``tests.helpers.search.wide_table``, 2,000 rows, 12 QIs of 4 levels): the
heuristic at several step limits on 6 and 8 QIs, where the exhaustive scan gives the optimum,
and on all 12 QIs (16,777,216 nodes).

    python benchmarks/bench_heuristic.py [--parts mach2019,adult,synthetic] [--reps 1]
        [--steps 1000] [--time-limits 1,5,20] [--seeds 10] [--arx-classpath FILE]

ARX is built once by ``../shared/tools/arx-bench`` (its README; the classes' classpath in
``<tmp>/arx-perf/arxrun/classpath.txt``); the driver is compiled by this script when its
class is missing or older than its source, as by hand:

    javac -nowarn -d /tmp/anonsql-arx-heuristic -cp "$(cat /tmp/arx-perf/arxrun/classpath.txt)"
        benchmarks/arx/ArxHeuristic.java  (one command)
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "data"
DRIVER = ROOT / "benchmarks" / "arx" / "ArxHeuristic.java"
#: where ../shared/tools/arx-bench/run_all.sh builds ARX (its $PERF/arxrun/classpath.txt)
DEFAULT_CLASSPATH = Path(tempfile.gettempdir()) / "arx-perf" / "arxrun" / "classpath.txt"

# ARX 3.9's cases for its genetic search on Adult (src/test/org/deidentifier/arx/test/
# TestAnonymizationGenetic.java, commit aacd487fb; the same cases in TestAnonymizationHeuristic
# and ...HeuristicTopDown): suppression limit, metric (anonsql's name), Loss's gsFactor, k,
# and the score each heuristic's test expects with 1,000 checks (Lightning, top-down, genetic
# with its fixed seed)
ARX_HEURISTIC_CASES = [
    (1.0, "loss", 0.5, 5, 0.22041192847984292, 0.22041192847984292, 0.22041192847984292),
    (0.04, "entropy-nm", 0.5, 100, 400196.319223464, 413894.76146080694, 383803.4034066361),
    (1.0, "loss", 0.1, 5, 0.09257312971977383, 0.09257312971977383, 0.09257312971977383),
    (1.0, "entropy-nm", 0.5, 100, 377248.23689620313, 372601.7108854912, 359649.67365904135),
    (0.04, "loss", 0.5, 5, 0.26611081915757495, 0.26611081915757495, 0.26611081915757495),
    (1.0, "entropy-nm", 0.5, 100, 377248.23689620313, 372601.7108854912, 359649.67365904135),
]


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def stopped(guarantee: str) -> str:
    if "exhausted" in guarantee:
        return "exhausted"
    if "time limit" in guarantee:
        return "time"
    return "steps" if "step limit" in guarantee else guarantee


class Arx:
    """ARX's heuristics in one JVM (``ArxHeuristic --serve``), None where ARX is not built."""

    def __init__(self, classpath_file: Path) -> None:
        self.proc: subprocess.Popen | None = None
        self.why = ""
        if not classpath_file.is_file():
            self.why = f"{classpath_file} not found (build ARX: ../shared/tools/arx-bench)"
            return
        if shutil.which("javac") is None:
            self.why = "javac not found"
            return
        arx = classpath_file.read_text().strip()
        out = Path(tempfile.gettempdir()) / "anonsql-arx-heuristic"
        out.mkdir(exist_ok=True)
        built = out / "ArxHeuristic.class"
        if not built.is_file() or built.stat().st_mtime < DRIVER.stat().st_mtime:
            cmd = ["javac", "-nowarn", "-d", str(out), "-cp", arx, str(DRIVER)]
            subprocess.run(cmd, check=True, capture_output=True)
        cmd = ["java", "-cp", f"{out}{os.pathsep}{arx}", "ArxHeuristic"]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "READY"

    def run(self, **options) -> dict:
        assert self.proc is not None and self.proc.stdin and self.proc.stdout
        line = " ".join(f"--{k} {v}" for k, v in options.items())
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().strip()
        if not answer.startswith("RESULT"):
            raise RuntimeError(f"ARX: {answer}")
        fields = dict(tok.split("=", 1) for tok in answer.split()[1:])
        return {
            "wall": float(fields["ms"]) / 1000,
            "cpu": float(fields["cpu_ms"]) / 1000,
            "checks": int(fields["checked"]),
            "score": None if fields["score"] == "none" else float(fields["score"]),
            "levels": fields["levels"],
        }

    def close(self) -> None:
        if self.proc is not None and self.proc.stdin:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
            self.proc.wait()


def read_set(folder: Path, data: str, prefix: str, qis: list[str] | None = None):
    import pandas as pd

    from anonsql.hierarchy.loaders import read_arx_csv

    df = pd.read_csv(folder / data, sep=";", dtype=str)
    qis = qis or list(df.columns)
    hs = [read_arx_csv(q, folder / f"{prefix}_hierarchy_{q}.csv") for q in qis]
    return df, qis, hs


def anonsql_run(df, qis, hs, k, limit, metric, gs, steps=None, time_limit=3600.0, seed=0):
    """One heuristic run from the loaded table: the histogram, then the search."""
    from anonsql.algorithms.lattice.searches import Heuristic
    from anonsql.data.histogram import Histogram
    from anonsql.metrics.quality import quality_model
    from anonsql.models import KAnonymity
    from anonsql.models.requirements import Requirements

    c, t = time.process_time(), time.perf_counter()
    hist = Histogram.from_frame(df, qis, hs)
    setup = time.process_time() - c
    req = Requirements([KAnonymity(k)], limit)
    r = Heuristic(time_limit=time_limit, steps=steps, seed=seed).run(
        hist, req, quality_model(metric, gs)
    )
    return {
        "wall": time.perf_counter() - t,
        "cpu": time.process_time() - c,
        "setup": setup,
        "checks": r.checked,
        "score": None if r.optimum is None else r.optimum.score,
        "levels": "-" if r.optimum is None else "[" + ",".join(map(str, r.optimum.levels)) + "]",
        "stopped": stopped(r.guarantee),
    }


ROW = (
    "{limit:>11} | {search:<17} | {checks:>7} | {cpu:>7} | {per:>9} | {ratio:>6} | {wall:>7} | "
    "{score:>10} | {load:>4} | {levels}"
)


def print_header() -> None:
    head = ROW.format(
        limit="limit",
        search="search",
        checks="checks",
        cpu="CPU s",
        per="CPU/check",
        ratio="ratio",
        wall="wall s",
        score="score",
        load="load",
        levels="transformation",
    )
    print(head)
    print("-" * len(head))


def print_row(limit: str, search: str, r: dict, base: dict | None, score_fmt: str) -> None:
    per = r["cpu"] / r["checks"] if r["checks"] else float("nan")
    ratio = ""
    if base is not None and base["checks"] and r["checks"]:
        ratio = f"{per / (base['cpu'] / base['checks']):.2f}"
    score = "none" if r["score"] is None else format(r["score"], score_fmt)
    print(
        ROW.format(
            limit=limit,
            search=search,
            checks=f"{r['checks']:,}",
            cpu=f"{r['cpu']:.2f}",
            per=f"{per * 1000:.2f} ms",
            ratio=ratio,
            wall=f"{r['wall']:.2f}",
            score=score,
            load=r["load"],
            levels=r["levels"],
        ),
        flush=True,
    )


def mach2019(arx: Arx | None, steps: int, time_limits: list[float], reps: int) -> None:
    folder = SHARED / "mach2019"
    if not folder.is_dir():
        print(f"Part 1 skipped: {folder} not found")
        return
    df, qis, hs = read_set(folder, "mach2019_int.csv", "mach2019_int")
    data = {"data": folder / "mach2019_int.csv", "prefix": "mach2019_int"}
    print(
        f"Part 1: mach2019, {len(df):,} rows, 16 QIs, lattice 85,030,560; k = 5, 5% suppression, "
        f"Loss; ratio: CPU per check against ARX Lightning's in the same round"
    )
    print_header()
    limits = [("steps", steps)] + [("time", t) for t in time_limits]
    for kind, value in limits:
        for _ in range(reps):
            if kind == "steps":
                name, ours, theirs = f"{value:,} checks", {"steps": value}, {"steplimit": value}
            else:
                name = f"{value:g} s"
                ours, theirs = {"time_limit": value}, {"timelimit": int(value * 1000)}
            a = anonsql_run(df, qis, hs, 5, 0.05, "loss", 0.5, **ours) | {"load": load()}
            rows = [("anonsql", a)]
            if arx is not None:
                for algorithm in ("lightning", "genetic"):
                    x = arx.run(k=5, supp=0.05, algorithm=algorithm, **data, **theirs)
                    rows.append((f"ARX {algorithm}", x | {"load": load()}))
            base = dict(rows).get("ARX lightning")
            for search, r in rows:
                print_row(name, search, r, base, ".5f")


def adult(arx: Arx | None, steps: int, time_limits: list[float], seeds: int) -> None:
    from tests.helpers.data import ADULT_QIS

    folder = SHARED / "adult"
    if not folder.is_dir():
        print(f"Part 2 skipped: {folder} not found")
        return
    df, qis, hs = read_set(folder, "adult.csv", "adult", ADULT_QIS)
    data = {"data": folder / "adult.csv", "prefix": "adult"}
    print(
        f"Part 2a: Adult, 9 QIs (12,960 nodes), ARX's cases for its genetic search; "
        f"{steps:,} checks each. ARX: measured here (its test's expected score in brackets where "
        f"it differs); anonsql: its default seed, and how many of {seeds} seeds reach ARX's best"
    )
    head = (
        f"{'case':>4} | {'limit':>5} | {'metric':<16} | {'k':>3} | {'ARX Lightning':>13} | "
        f"{'ARX top-down':>13} | {'ARX genetic':>13} | {'anonsql':>13} | {'seeds':>5} | "
        f"{'CPU/check':>9} | {'load':>4}"
    )
    print(head)
    print("-" * len(head))
    for case, (limit, metric, gs, k, *expected) in enumerate(ARX_HEURISTIC_CASES):
        cells = []
        for algorithm, want in zip(("lightning", "topdown", "genetic"), expected, strict=True):
            if arx is None:
                cells.append(f"({want:.6g})")
                continue
            x = arx.run(
                k=k, supp=limit, metric=metric, gs=gs, algorithm=algorithm, steplimit=steps,
                deterministic=1, **data,
            )  # fmt: skip
            same = x["score"] is not None and abs(x["score"] - want) <= 1e-9 * abs(want)
            cells.append(f"{x['score']:.6g}" if same else f"{x['score']:.6g} ({want:.6g})")
        best = min(expected)
        runs = [
            anonsql_run(df, qis, hs, k, limit, metric, gs, steps=steps, seed=s)
            for s in range(seeds)
        ]
        a = runs[0]
        reached = sum(r["score"] <= best + 1e-9 * abs(best) for r in runs)
        name = metric if gs == 0.5 else f"{metric} (gs {gs})"
        print(
            f"{case:>4} | {limit:>5.0%} | {name:<16} | {k:>3} | {cells[0]:>13} | {cells[1]:>13} | "
            f"{cells[2]:>13} | {a['score']:>13.6g} | {reached:>2}/{seeds:<2} | "
            f"{a['cpu'] / a['checks'] * 1000:>6.2f} ms | {load():>4}",
            flush=True,
        )
    if arx is None:
        return
    print()
    print("Part 2b: the same cases (5 repeats 3) with equal time limits")
    print_header()
    for case, (limit, metric, gs, k, *_) in enumerate(ARX_HEURISTIC_CASES[:5]):
        for seconds in time_limits:
            name = f"{case}: {seconds:g} s"
            a = anonsql_run(df, qis, hs, k, limit, metric, gs, time_limit=seconds)
            rows = [("anonsql", a | {"load": load()})]
            for algorithm in ("lightning", "genetic"):
                x = arx.run(
                    k=k, supp=limit, metric=metric, gs=gs, algorithm=algorithm,
                    timelimit=int(seconds * 1000), **data,
                )  # fmt: skip
                rows.append((f"ARX {algorithm}", x | {"load": load()}))
            base = dict(rows)["ARX lightning"]
            for search, r in rows:
                print_row(name, search, r, base, ".6g")


def synthetic(rows: int, steps: list[int]) -> None:
    from anonsql.algorithms.lattice.searches import Exhaustive, Heuristic
    from anonsql.data.histogram import Histogram
    from anonsql.metrics.quality import quality_model
    from anonsql.models import KAnonymity
    from anonsql.models.requirements import Requirements
    from tests.helpers.search import wide_table

    df, hs = wide_table(12, rows, seed=3)
    req = Requirements([KAnonymity(5)], 0.05)
    print(
        f"Part 3: synthetic, {rows:,} rows, 12 QIs of 4 levels (tests.helpers.search.wide_table); "
        f"k = 5, 5% suppression, Loss; CPU time"
    )
    header = (
        f"{'QIs':>3} | {'lattice':>10} | {'search':<23} | {'CPU':>8} | {'checked':>7} | "
        f"{'stopped':<9} | {'score':>9} | {'gap':>7} | transformation"
    )
    print(header)
    print("-" * len(header))

    def timed(fn):
        c = time.process_time()
        out = fn()
        return time.process_time() - c, out

    for m in (6, 8, 12):
        sub = hs[:m]
        hist = Histogram.from_frame(df, [h.name for h in sub], sub)
        optimum = None
        if m <= 8:
            t, ex = timed(lambda hist=hist: Exhaustive().run(hist, req, quality_model("loss")))
            optimum = ex.optimum
            print(
                f"{m:>3} | {4**m:>10,} | {'exhaustive (optimum)':<23} | {t:>6.2f} s | "
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
                f"{m:>3} | {4**m:>10,} | {f'heuristic, {n:,} steps':<23} | {t:>6.2f} s | "
                f"{r.checked:>7,} | {stopped(r.guarantee):<9} | {r.optimum.score:>9.5f} | "
                f"{gap:>7} | {list(r.optimum.levels)}",
                flush=True,
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default="mach2019,adult,synthetic")
    ap.add_argument("--steps", type=int, default=1000, help="the step limit of parts 1 and 2")
    ap.add_argument("--time-limits", default="1,5,20", help="seconds, comma-separated")
    ap.add_argument("--reps", type=int, default=1, help="rounds of part 1")
    ap.add_argument("--seeds", type=int, default=10, help="anonsql's seeds in part 2a")
    ap.add_argument("--rows", type=int, default=2000, help="rows of part 3")
    ap.add_argument("--synthetic-steps", default="1000,5000,20000")
    ap.add_argument("--arx-classpath", type=Path, default=DEFAULT_CLASSPATH)
    args = ap.parse_args()
    parts = args.parts.split(",")
    limits = [float(s) for s in args.time_limits.split(",")]
    print(f"load average at start: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    arx = None
    if {"mach2019", "adult"} & set(parts):
        arx = Arx(args.arx_classpath)
        if arx.proc is None:
            print(f"ARX left out: {arx.why}")
            arx = None
    try:
        if "mach2019" in parts:
            mach2019(arx, args.steps, limits, args.reps)
            print()
        if "adult" in parts:
            adult(arx, args.steps, limits, args.seeds)
            print()
        if "synthetic" in parts:
            synthetic(args.rows, [int(s) for s in args.synthetic_steps.split(",")])
    finally:
        if arx is not None:
            arx.close()


if __name__ == "__main__":
    main()

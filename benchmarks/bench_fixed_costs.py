"""Fixed costs of a run (issue 30, target 1): what a small run pays besides its search.

Adult (../shared/data/adult, 30,162 rows, ARX's hierarchies), Loss, in one process and one
run: the 9 QIs with k = 5 at 0%, 1%, 5%, 10% and 100% suppression, and the 8 QIs but
occupation with k = 5 and distinct 2-diversity or 0.2-closeness (hierarchical EMD) of
occupation at 4% (the cases of ../shared/tools/arx-bench/run_all.sh); ``--cases`` picks some:

* CPU time of a run (``time.process_time``: every thread of the process, DuckDB's included),
  the median of ``--reps`` interleaved runs after a warm-up of each: with the caches of
  :mod:`anonsql.backend.caches` and without them (the baseline: each SQL template
  deep-copied whole per statement, one ``SELECT`` per hierarchy lookup), A, B, A, B, ...;
* statements per run: the calls on the DuckDB connection that run SQL (``execute``,
  ``sql``), counted by a proxy around it, and how many of them read the hierarchy catalog
  (``anonsql_hierarchy``: the hierarchy lookups);
* ARX 3.9's CPU for the same case in the same loop, when ../shared/tools/arx-bench is built
  (its README; by default its classpath is read from /tmp/arx-perf/arxrun/classpath.txt,
  where its run_all.sh builds it): one JVM kept warm, driven over a pipe, its process CPU as
  it reports it (10 ms steps).

Then whole processes (the child's user + system CPU): ``anonsql --help``, and ``anonsql
anonymize adult ... --suppression 0`` on a copy of the database; the baseline runs the same
with ``ANONSQL_CACHES=0`` and (the run) scipy.optimize/special/stats imported first, as every
CLI run did before they were imported only by the models that use them.

With ``--before REV`` the same runs of the project as it was at git revision ``REV`` (its
tree exported by ``git archive`` to a temporary folder) join the loop, in a worker process
that holds its own copy of the database: the figures before the change, beside the ones with
the caches off.

The machine's load average (``os.getloadavg``) is printed before and after, and its
1-minute figure beside every case.

    python benchmarks/bench_fixed_costs.py [--reps 9] [--cli-reps 5] [--arx auto|off|FILE]
                                           [--before REV] [--cases "0%,1%,l-div 4%"]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKER = len(sys.argv) > 2 and sys.argv[1] == "--worker"
sys.path.insert(0, sys.argv[2] if WORKER else str(ROOT))  # a worker runs another tree

ADULT_DIR = ROOT.parent / "shared" / "data" / "adult"
ADULT_QIS = [
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
    "salary-class",
]
ADULT_Q8 = [q for q in ADULT_QIS if q != "occupation"]
#: name -> (Spec options, ArxBench options): the arx-bench cases (sidebyside.py)
CASES: dict[str, tuple[dict, str]] = {
    **{
        f"{p}%": ({"qis": ADULT_QIS, "k": 5, "suppression": p / 100}, f"--k 5 --supp {p / 100}")
        for p in (0, 1, 5, 10, 100)
    },
    "l-div 4%": (
        {
            "qis": ADULT_Q8,
            "sensitive": "occupation",
            "k": 5,
            "l": 2,
            "l_variant": "distinct-l",
            "suppression": 0.04,
        },
        "--k 5 --supp 0.04 --sa occupation --ldistinct 2",
    ),
    "t-close 4%": (
        {
            "qis": ADULT_Q8,
            "sensitive": "occupation",
            "sensitive_hierarchy": "occupation",
            "k": 5,
            "t": 0.2,
            "t_variant": "hierarchical-emd",
            "suppression": 0.04,
        },
        "--k 5 --supp 0.04 --sa occupation --thier 0.2",
    ),
}
DEFAULT_CASES = "0%,1%,5%,10%,100%,l-div 4%,t-close 4%"
CASE_TITLES = {
    "l-div 4%": "8 QIs, distinct 2-diversity (occupation), 4%",
    "t-close 4%": "8 QIs, 0.2-closeness (hierarchical EMD, occupation), 4%",
}
ARX_CLASSPATH = Path(tempfile.gettempdir()) / "arx-perf" / "arxrun" / "classpath.txt"
_SELECT = re.compile(r"\s*(/\*.*?\*/\s*|--[^\n]*\n\s*)*(SELECT|WITH)\b", re.S | re.I)
_CATALOG = re.compile(r"\banonsql_hierarchy\b", re.I)


class CountingConnection:
    """A DuckDB connection that counts the statements run through it."""

    def __init__(self, con) -> None:
        self._con = con
        self.statements = 0
        self.lookups = 0

    def _count(self, sql) -> None:
        self.statements += 1
        text = str(sql)
        if _SELECT.match(text) and _CATALOG.search(text):
            self.lookups += 1

    def execute(self, sql, *args, **kwargs):
        self._count(sql)
        return self._con.execute(sql, *args, **kwargs)

    def sql(self, sql, *args, **kwargs):
        self._count(sql)
        return self._con.sql(sql, *args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._con, name)


def load_adult(path: Path) -> None:
    from anonsql.database import Database
    from anonsql.hierarchy.loaders import read_arx_csv
    from anonsql.io import import_file

    db = Database.open(str(path))
    import_file(db, "adult", ADULT_DIR / "adult.csv", sep=";")
    for c in ADULT_QIS:
        db.hierarchies.save(read_arx_csv(c, ADULT_DIR / f"adult_hierarchy_{c}.csv"))
    db.close()


def spec(case: str | float):
    """The Spec of a case (a suppression share: the 9 QIs with k = 5)."""
    from anonsql.spec import Spec

    if not isinstance(case, str):
        options = {"qis": ADULT_QIS, "k": 5, "suppression": float(case)}
    else:
        options = CASES[case][0]
    return Spec(**options, metric="loss", output="adult_anon")


class Arx:
    """ArxBench --serve: one warm JVM answering one RESULT line per request."""

    def __init__(self, classpath: str) -> None:
        cmd = ["java", "-cp", classpath, "ArxBench", "--serve", "1"]
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if self.p.stdout.readline().strip() != "READY":
            raise RuntimeError("ArxBench did not start")

    def run(self, case: str) -> dict:
        self.p.stdin.write(f"{CASES[case][1]} --data {ADULT_DIR / 'adult.csv'}\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline().strip()
        if not line.startswith("RESULT"):
            raise RuntimeError(line)
        out = dict(tok.split("=", 1) for tok in line.split()[1:] if "=" in tok)
        return {"cpu": float(out["cpu_ms"]) / 1000, "levels": out.get("levels")}

    def close(self) -> None:
        self.p.stdin.write("quit\n")
        self.p.stdin.flush()
        self.p.wait()


def arx_classpath(option: str) -> str | None:
    if option == "off" or shutil.which("java") is None:
        return None
    path = ARX_CLASSPATH if option == "auto" else Path(option)
    return path.read_text().strip() if path.is_file() else None


def run_once(db, con: CountingConnection, case: str | float, cached: bool = True) -> dict:
    from anonsql.run import anonymize

    if cached:
        off = contextlib.nullcontext()
    else:
        from anonsql.backend import caches

        off = caches.disabled()
    with off:
        s0, l0 = con.statements, con.lookups
        c = time.process_time()
        r = anonymize(db, "adult", spec(case))
        cpu = time.process_time() - c
        return {
            "cpu": cpu,
            "statements": con.statements - s0,
            "lookups": con.lookups - l0,
            "answer": [list(r.levels.values()), r.score, r.measures["suppressed_rows"]],
        }


def open_counted(db_file: Path):
    from anonsql.database import Database

    db = Database.open(str(db_file))
    con = CountingConnection(db.backend.con)
    db.backend.con = con
    return db, con


def worker(db_file: Path) -> None:
    """``--worker TREE DB``: runs on request, one line of JSON each (the ``--before`` side)."""
    db, con = open_counted(db_file)
    print("READY", flush=True)
    for line in sys.stdin:
        if line.strip() == "quit":
            break
        print(json.dumps(run_once(db, con, line.strip())), flush=True)
    db.close()


class Before:
    """The worker running git revision ``rev``'s tree on its own copy of the database."""

    def __init__(self, rev: str, db_file: Path, work: Path) -> None:
        tree = work / "before"
        tree.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", str(tree), str(db_file)]
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if self.p.stdout.readline().strip() != "READY":
            raise RuntimeError(f"the worker for {rev} did not start")

    def run(self, case: str) -> dict:
        self.p.stdin.write(f"{case}\n")
        self.p.stdin.flush()
        return json.loads(self.p.stdout.readline())

    def close(self) -> None:
        self.p.stdin.write("quit\n")
        self.p.stdin.flush()
        self.p.wait()


def in_process(
    db_file: Path, reps: int, arx: Arx | None, before: Before | None, cases: list[str]
) -> dict:
    db, con = open_counted(db_file)
    out = {}
    for name in cases:
        runs: dict[str, list[dict]] = {"cached": [], "uncached": [], "before": [], "arx": []}
        for i in range(reps + 1):  # i == 0: the warm-up of each
            for mode in ("cached", "uncached"):
                got = run_once(db, con, name, mode == "cached")
                if i:
                    runs[mode].append(got)
            for mode, other in (("before", before), ("arx", arx)):
                if other is not None:
                    got = other.run(name)
                    if i:
                        runs[mode].append(got)
        a, b = runs["cached"], runs["uncached"]
        if any(r["answer"] != a[0]["answer"] for r in a + b + runs["before"]):
            raise AssertionError(f"{name}: the runs disagree")
        row = {"levels": a[0]["answer"][0], "load": os.getloadavg()[0]}
        for mode in ("cached", "uncached", "before"):
            if runs[mode]:
                row[f"cpu_{mode}"] = statistics.median(r["cpu"] for r in runs[mode])
                row[f"statements_{mode}"] = runs[mode][-1]["statements"]
                row[f"lookups_{mode}"] = runs[mode][-1]["lookups"]
        if runs["arx"]:
            row["cpu_arx"] = statistics.median(r["cpu"] for r in runs["arx"])
            row["arx_levels"] = runs["arx"][0]["levels"]
        out[name] = row
        figures = [f"{m} {row['cpu_' + m] * 1000:.0f} ms" for m in (*runs,) if "cpu_" + m in row]
        print(f"  {name}: " + ", ".join(figures) + f"; load {row['load']:.2f}", flush=True)
    db.close()
    return out


_REPORT = (
    "import atexit, sys; atexit.register(lambda: sys.stderr.write('SCIPY=%d\\n' % "
    "any(m.split('.')[0] == 'scipy' for m in sys.modules)))"
)
_CLI = "from anonsql.cli.main import main; main()"
# the baseline: caches off (ANONSQL_CACHES=0) and scipy imported as every run did before
_SCIPY = "import scipy.optimize, scipy.special, scipy.stats"


def child(code: str, args: list[str], env: dict[str, str]) -> tuple[float, bool]:
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=dict(os.environ, **env),
        check=True,
    )
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return cpu, "SCIPY=1" in p.stderr


def processes(db_file: Path, reps: int, tree: Path | None) -> dict:
    run = ["anonymize", "adult", "--qi", ",".join(ADULT_QIS), "--k", "5", "--suppression", "0"]
    run += ["--metric", "loss", "--out", "adult_anon", "--json", "--db", str(db_file)]
    cases = {"anonsql --help": ["--help"], "CLI k-anonymity run, 0%": run}
    modes = {
        "cached": (f"{_REPORT}; {_CLI}", {"ANONSQL_CACHES": "1"}),
        "uncached": (f"{_REPORT}; {_CLI}", {"ANONSQL_CACHES": "0"}),
    }
    if tree is not None:
        modes["before"] = (f"{_REPORT}; sys.path.insert(0, {str(tree)!r}); {_CLI}", {})
    got: dict[str, dict[str, list]] = {n: {m: [] for m in modes} for n in cases}
    scipy: dict[str, dict[str, bool]] = {n: {} for n in cases}
    for i in range(reps + 1):  # i == 0: a warm-up of each
        for name, args in cases.items():
            for mode, (code, env) in modes.items():
                if mode == "uncached" and args != ["--help"]:  # --help never loaded scipy
                    code = code.replace(_CLI, f"{_SCIPY}; {_CLI}")
                cpu, scipy[name][mode] = child(code, args, env)
                if i:
                    got[name][mode].append(cpu)
    out = {}
    for name in cases:
        row: dict = {}
        for mode in modes:
            row[f"cpu_{mode}"] = statistics.median(got[name][mode])
            row[f"scipy_{mode}"] = scipy[name][mode]
        row["load"] = os.getloadavg()[0]
        out[name] = row
        figures = [f"{m} {row['cpu_' + m] * 1000:.0f} ms" for m in modes]
        print(f"  {name}: " + ", ".join(figures) + f"; load {row['load']:.2f}", flush=True)
    return out


def table(inproc: dict, procs: dict, load: tuple[str, str], rev: str | None) -> str:
    first = next(iter(inproc.values()))
    before, arx = "cpu_before" in first, "cpu_arx" in first
    modes = (["before"] if before else []) + ["uncached", "cached"]
    names = {"before": f"before ({rev})", "uncached": "caches off", "cached": "caches on"}
    head = ["Adult, Loss", *[f"CPU, {names[m]}" for m in modes], "on / off"]
    head += ["on / before"] if before else []
    head += [f"statements, {' / '.join(names[m] for m in modes)}"]
    head += [f"hierarchy lookups, {' / '.join(names[m] for m in modes)}"]
    head += ["ARX CPU", "on / ARX"] if arx else []
    head += ["load (1 min)"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def ms(x: float) -> str:
        return f"{x * 1000:.0f} ms"

    for name, r in list(inproc.items()) + list(procs.items()):
        whole = name in procs
        title = CASE_TITLES.get(name, f"{name} suppression")
        cells = [f"{name}, whole process" if whole else f"{title}, in process"]
        cells += [ms(r[f"cpu_{m}"]) for m in modes]
        cells.append(f"{r['cpu_cached'] / r['cpu_uncached']:.2f}x")
        cells += [f"{r['cpu_cached'] / r['cpu_before']:.2f}x"] if before else []
        if whole:
            loaded = ["scipy" if r[f"scipy_{m}"] else "no scipy" for m in modes]
            cells += [" / ".join(loaded), ""]
        else:
            cells.append(" / ".join(str(r[f"statements_{m}"]) for m in modes))
            cells.append(" / ".join(str(r[f"lookups_{m}"]) for m in modes))
        if arx:
            cells += (
                [ms(r["cpu_arx"]), f"{r['cpu_cached'] / r['cpu_arx']:.2f}x"]
                if "cpu_arx" in r
                else ["", ""]
            )
        cells.append(f"{r['load']:.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(
        "Whole processes, caches off: ANONSQL_CACHES=0, and for the run scipy.optimize, "
        "scipy.special and scipy.stats imported first, as every CLI run imported them before."
    )
    lines.append(f"Load average (1, 5, 15 min) before: {load[0]}; after: {load[1]}.")
    return "\n".join(lines)


def loadavg() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=9, help="interleaved runs per case (median)")
    ap.add_argument("--cli-reps", type=int, default=5, help="processes per CLI case (median)")
    ap.add_argument("--arx", default="auto", help="auto, off, or ArxBench's classpath.txt")
    ap.add_argument("--before", metavar="REV", help="also run git revision REV's tree")
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--cases", default=DEFAULT_CASES, help="comma-separated case names")
    args = ap.parse_args()
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        sys.exit(f"unknown case(s) {unknown}; the cases are {', '.join(CASES)}")
    if not ADULT_DIR.is_dir():
        sys.exit(f"Adult not found at {ADULT_DIR} (../shared/data/adult)")
    load_before = loadavg()
    print(f"load average {load_before}; {os.cpu_count()} CPUs", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        load_adult(work / "adult.duckdb")
        for copy in ("adult_cli.duckdb", "adult_before.duckdb"):
            shutil.copy(work / "adult.duckdb", work / copy)
        classpath = arx_classpath(args.arx)
        arx = Arx(classpath) if classpath else None
        if arx is None:
            print("  ARX: not run (ArxBench not built; see ../shared/tools/arx-bench)")
        before = Before(args.before, work / "adult_before.duckdb", work) if args.before else None
        print("in process:", flush=True)
        try:
            inproc = in_process(work / "adult.duckdb", args.reps, arx, before, cases)
        finally:
            for other in (arx, before):
                if other is not None:
                    other.close()
        print("whole processes:", flush=True)
        tree = work / "before" if args.before else None
        procs = processes(work / "adult_cli.duckdb", args.cli_reps, tree)
    load_after = loadavg()
    print()
    print(table(inproc, procs, (load_before, load_after), args.before))
    if args.json:
        doc = {"load_before": load_before, "load_after": load_after}
        Path(args.json).write_text(json.dumps(doc | {"in_process": inproc, "cli": procs}))


if __name__ == "__main__":
    if WORKER:
        worker(Path(sys.argv[3]))
    else:
        main()

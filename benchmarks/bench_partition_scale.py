"""Mondrian and TA_DA at scale (issue 30, target 5): Mondrian computed in the engine
(:mod:`anonsql.algorithms.mondrian.engine`) and in memory, TA_DA's decision tree grown level
by level and node by node, beside one GROUP BY over the QIs measured in the same run (the
floor the target is stated against: at most 20 times it at 10 M rows).

The table is bench_partition.py's synthetic one (seed 0): QIs age (74 values), zip (999),
sex, job (12); 6 sensitive values (disease); the label y. k = 10, l = 2 (distinct). It is
written once per size to a DuckDB file under --dir (kept for later runs: delete it after).
Every case runs in a fresh process, so its peak resident memory (VmHWM) is its own;
each prints wall and CPU seconds (time.process_time of that process: DuckDB's threads run in
it; PostgreSQL's server is another process, whose CPU is read from /proc), the ratio of the
case's partitioning to the GROUP BY's, and the load average before and after.

    nice -n 19 python benchmarks/bench_partition_scale.py [--rows 1000000,10000000]
        [--memory-max 1000000] [--tada-max 1000000] [--tree-baseline-max 1000000]
        [--postgres 1000000] [--dir /tmp/anonsql_partition_scale]

Cases: ``groupby`` (the QIs), ``groupby+s`` (the QIs and the sensitive value: the histogram
an l-diverse Mondrian reads), ``mondrian-engine`` (the run, partitioned in the engine),
``mondrian-memory`` (the run, partitioned in memory: the path of small tables), ``tada``
(TA_DA with the label y: tree and Mondrian in its leaves, in memory) and ``tree-node`` (the
node-by-node tree alone, the baseline of the level-by-level one, on the same histogram).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

QIS = ["age", "zip", "sex", "job"]
SENSITIVE = "disease"
K, L = 10, 2


def table_file(directory: Path, rows: int) -> Path:
    """The DuckDB file holding ``synthetic`` with ``rows`` rows (written once)."""
    path = directory / f"synthetic_{rows}.duckdb"
    if path.exists():
        return path
    import duckdb

    from benchmarks.bench_partition import synthetic

    directory.mkdir(parents=True, exist_ok=True)
    frame = synthetic(rows, seed=0)
    tmp = path.with_suffix(".tmp")
    con = duckdb.connect(str(tmp))
    con.register("frame", frame)
    con.execute("CREATE TABLE synthetic AS SELECT * FROM frame")
    con.close()
    tmp.rename(path)
    return path


def server_cpu(data_dir: Path | None) -> float:
    """CPU seconds of a local PostgreSQL server so far: the postmaster with its reaped
    children (parallel workers, ended backends) and its live backends, from /proc."""
    if data_dir is None:
        return 0.0
    tick = os.sysconf("SC_CLK_TCK")
    pid = int((data_dir / "postmaster.pid").read_text().split()[0])

    def stat(p: int) -> list[str]:
        text = Path(f"/proc/{p}/stat").read_text()
        return text[text.rindex(")") + 2 :].split()

    fields = stat(pid)
    total = sum(int(fields[i]) for i in (11, 12, 13, 14))  # utime stime cutime cstime
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == pid:
            continue
        try:
            f = stat(int(entry.name))
        except (OSError, ValueError):
            continue
        if int(f[1]) == pid:  # a child of the postmaster
            total += int(f[11]) + int(f[12])
    return total / tick


def peak_rss_mb() -> float:
    """This process's peak resident memory: VmHWM, which starts again at exec (ru_maxrss
    keeps the parent's from before the exec, here the table generator's)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def one(case: str, target: str, data_dir: str | None) -> dict:
    """Run one case in this process; returns its figures."""
    from anonsql.algorithms.mondrian import engine
    from anonsql.database import Database
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    db = Database.open(target)
    pg_dir = Path(data_dir) if data_dir else None
    load0 = os.getloadavg()
    s0 = server_cpu(pg_dir)
    c0, t0 = time.process_time(), time.perf_counter()
    out: dict = {"case": case}
    cols = ", ".join(f'"{q}"' for q in QIS)
    if case in ("groupby", "groupby+s"):
        extra = f', "{SENSITIVE}"' if case == "groupby+s" else ""
        n = db.backend.fetchall(
            f"SELECT COUNT(*) FROM (SELECT {cols}{extra}, COUNT(*) AS n FROM synthetic "
            f"GROUP BY {cols}{extra}) AS g"
        )[0][0]
        out["groups"] = int(n)
    elif case == "tree-node":
        from anonsql.algorithms.mondrian.driver import make_checker
        from anonsql.algorithms.mondrian.tree import TreeBuilder
        from anonsql.data.points import Points
        from anonsql.models.goal import build_models

        points = Points.from_database(db, "synthetic", QIS, [None] * 4, SENSITIVE, "y")
        spec = Spec(qis=QIS, sensitive=SENSITIVE, k=K, l=L)
        checker = make_checker(points, build_models(spec, None))
        t1 = time.perf_counter()
        for grow in ("grow", "grow_node_by_node"):
            c, t = time.process_time(), time.perf_counter()
            root = getattr(TreeBuilder(points, checker), grow)()
            out[f"{grow}_wall"] = time.perf_counter() - t
            out[f"{grow}_cpu"] = time.process_time() - c
            out[f"{grow}_leaves"] = len(root.leaves())
        out["histogram_wall"] = t1 - t0
    else:
        spec = Spec(
            algorithm="tada" if case == "tada" else "mondrian",
            label="y" if case == "tada" else None,
            qis=QIS,
            sensitive=SENSITIVE,
            k=K,
            l=L,
            output="synthetic_out",
            columns=[*QIS, SENSITIVE],
            replace=True,
        )
        dialect = db.backend.dialect
        engine.ENGINE_ROWS[dialect] = 0 if case == "mondrian-engine" else 10**15
        r = anonymize(db, "synthetic", spec)
        out["timings"] = {k: round(v, 3) for k, v in r.timings.items()}
        out["partitions"] = r.measures["partitions"]
        out["ncp"] = r.measures["ncp"]
        out["where"] = r.measures.get("partitioned_in")
    out["wall"] = time.perf_counter() - t0
    out["cpu"] = time.process_time() - c0
    out["server_cpu"] = server_cpu(pg_dir) - s0
    out["load"] = [round(x, 2) for x in (*load0, *os.getloadavg())]
    out["peak_rss_mb"] = peak_rss_mb()
    db.close()
    return out


def spawn(case: str, target: str, data_dir: str | None = None) -> dict:
    """:func:`one` in a fresh process (its own peak memory)."""
    cmd = [sys.executable, __file__, "--one", json.dumps([case, target, data_dir])]
    done = subprocess.run(
        cmd, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL
    )
    if done.returncode != 0:
        raise RuntimeError(f"{case} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def partition_seconds(fig: dict, key: str) -> float:
    """The partitioning's seconds (``key`` "" wall, "_cpu" CPU): the histogram read and
    phase 1 plus Mondrian (the release's recoding, figures and writing left out)."""
    t = fig["timings"]
    return t["histogram" + key] + t.get("grouping" + key, 0.0) + t["mondrian" + key]


def report(rows: int, engine_name: str, figs: list[dict]) -> None:
    floor = next(f for f in figs if f["case"] == "groupby")
    base_cpu = floor["cpu"] + floor["server_cpu"]
    print(f"\n{engine_name}, {rows:,} rows; one GROUP BY over the QIs: wall {floor['wall']:.2f} s,")
    print(
        f"  CPU {base_cpu:.2f} s ({floor['groups']:,} groups), load "
        f"{floor['load'][0]:.1f} -> {floor['load'][3]:.1f}, peak RSS {floor['peak_rss_mb']:.0f} MB"
    )
    for f in figs:
        cpu = f["cpu"] + f["server_cpu"]
        head = f"  {f['case']:16s} wall {f['wall']:8.2f} s  CPU {cpu:8.2f} s"
        if f["server_cpu"]:
            head += f" (server {f['server_cpu']:.2f})"
        head += f"  x{cpu / base_cpu:6.1f} CPU, x{f['wall'] / floor['wall']:6.1f} wall"
        head += f"  peak RSS {f['peak_rss_mb']:6.0f} MB"
        head += f"  load {f['load'][0]:.1f}->{f['load'][3]:.1f}"
        print(head)
        if "timings" in f:
            part_cpu = partition_seconds(f, "_cpu")
            part_wall = partition_seconds(f, "")
            t = f["timings"]
            print(
                f"    partitioning (histogram + Mondrian): wall {part_wall:.2f} s (x"
                f"{part_wall / floor['wall']:.1f}), CPU {part_cpu:.2f} s of this process (x"
                f"{part_cpu / base_cpu:.1f}); recoding {t.get('release', 0):.2f} s, figures "
                f"{t.get('measures', 0):.2f} s, materialize {t.get('materialize', 0):.2f} s; "
                f"{f['partitions']:,} partitions, NCP {f['ncp']:.4f}"
                + (
                    f"; in the engine: {f['where']['depths']} depths, "
                    f"{f['where']['statements']} statements"
                    if f.get("where")
                    else ""
                )
            )
        if "grow_wall" in f:
            print(
                f"    tree level by level: wall {f['grow_wall']:.2f} s, CPU {f['grow_cpu']:.2f} s;"
                f" node by node: wall {f['grow_node_by_node_wall']:.2f} s, CPU "
                f"{f['grow_node_by_node_cpu']:.2f} s ({f['grow_leaves']:,} leaves both, "
                f"x{f['grow_node_by_node_cpu'] / max(f['grow_cpu'], 1e-9):.1f} CPU)"
            )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", default="1000000,10000000")
    ap.add_argument("--memory-max", type=int, default=1_000_000)
    ap.add_argument("--tada-max", type=int, default=1_000_000)
    ap.add_argument("--tree-baseline-max", type=int, default=1_000_000)
    ap.add_argument("--postgres", type=int, default=0, help="rows on PostgreSQL (0: none)")
    ap.add_argument("--dir", default="/tmp/anonsql_partition_scale")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        case, target, data_dir = json.loads(args.one)
        print(json.dumps(one(case, target, data_dir)))
        return
    directory = Path(args.dir)
    for rows in [int(x) for x in args.rows.split(",") if x]:
        path = str(table_file(directory, rows))
        cases = ["groupby", "groupby+s", "mondrian-engine"]
        if rows <= args.memory_max:
            cases.append("mondrian-memory")
        if rows <= args.tada_max:
            cases.append("tada")
        if rows <= args.tree_baseline_max:
            cases.append("tree-node")
        report(rows, "DuckDB", [spawn(c, path) for c in cases])
    if args.postgres:
        postgres(args.postgres, directory)


def postgres(rows: int, directory: Path) -> None:
    """The same cases on a throw-away local PostgreSQL server."""
    import duckdb

    from anonsql.backend import local_postgres
    from anonsql.database import Database

    server = local_postgres.start()
    try:
        url = server.create_database("bench")
        frame = (
            duckdb.connect(str(table_file(directory, rows)), read_only=True)
            .sql("SELECT * FROM synthetic")
            .df()
        )
        db = Database.open(url)
        db.backend.write_frame("synthetic", frame)
        db.backend.execute("ANALYZE synthetic")
        db.close()
        del frame
        data = str(server.directory / "data")
        cases = ["groupby", "groupby+s", "mondrian-engine", "mondrian-memory"]
        report(rows, "PostgreSQL", [spawn(c, url, data) for c in cases])
    finally:
        server.stop()


if __name__ == "__main__":
    main()

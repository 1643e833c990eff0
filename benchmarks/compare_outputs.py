"""A digest of what every algorithm publishes on fixed cases, to compare two versions of
anonsql: the same digest means the same optimum (levels, score, figures) and the same
released rows. It uses the public API only (``anonsql.anonymize``, the demo set-up), so the
one script runs on any version that has them:

    PYTHONPATH=/path/to/checkout python benchmarks/compare_outputs.py [--verbose]

Cases: each algorithm on the demo's census table (8,000 rows of ``anonsql demo``'s
generator), the lattice searches, GAA and Mondrian on ARX's Adult (``../shared/data/adult``,
left out when absent), microaggregation on the Electrical Grid data set (numeric QIs, 2,000
rows, left out when absent). Timings, run ids and paths are left out of the digest; floats
are rounded to 9 significant digits, so only a change of result changes it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
ADULT_DIR = SHARED / "adult"
ELECTRICAL = SHARED / "electrical_grid" / "Data_for_UCI_named.csv"

#: the census QIs and the demo's goal (README "The demo")
CENSUS_QIS = ["age", "sex", "race", "marital_status", "education", "zip"]
CENSUS = {"qi": CENSUS_QIS, "keep": ["country", "occupation"], "sensitive": "income"}
ADULT_QIS = ["sex", "age", "race", "marital-status", "education"]
ADULT = {"qi": ADULT_QIS, "sensitive": "salary-class", "columns": [*ADULT_QIS, "salary-class"]}

CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("census", "flash", {**CENSUS, "k": 5, "l": 2, "suppression": 0.05}),
    ("census", "flash-solutions", {**CENSUS, "k": 10, "suppression": 0.02, "solutions": True}),
    ("census", "exhaustive", {**CENSUS, "k": 5, "algorithm": "exhaustive", "metric": "aecs"}),
    (
        "census",
        "heuristic",
        {**CENSUS, "k": 5, "t": 0.2, "algorithm": "heuristic", "steps": 40, "suppression": 0.05},
    ),
    (
        "census",
        "rho-gain",
        {**CENSUS, "k": 5, "algorithm": "rho-gain", "rho": 2, "suppression": 0.02},
    ),
    ("census", "local-recoding", {**CENSUS, "k": 5, "recoding": "local", "suppression": 0.02}),
    ("census", "greedy-s1", {**CENSUS, "k": 5, "algorithm": "greedy"}),
    (
        "census",
        "greedy-s3",
        {
            **CENSUS,
            "k": 5,
            "l": 1.5,
            "l_variant": "entropy-l",
            "algorithm": "greedy",
            "strategy": "s3",
        },
    ),
    ("census", "mondrian", {**CENSUS, "k": 5, "l": 2, "algorithm": "mondrian"}),
    (
        "census",
        "mondrian-widest",
        {**CENSUS, "k": 5, "algorithm": "mondrian", "mondrian_stop": "widest", "controllers": 2},
    ),
    (
        "census",
        "tada-tree",
        {
            **{**CENSUS, "keep": ["country"]},
            "k": 5,
            "l": 2,
            "algorithm": "tada",
            "label": "occupation",
        },
    ),
    ("census", "tada-cluster", {**CENSUS, "k": 20, "algorithm": "tada", "cluster": True}),
    ("adult", "flash", {**ADULT, "k": 5, "l": 2, "suppression": 0.05}),
    ("adult", "greedy", {**ADULT, "k": 5, "algorithm": "greedy", "metric": "nllm"}),
    ("adult", "mondrian", {**ADULT, "k": 10, "algorithm": "mondrian"}),
]
ELECTRICAL_QIS = ["tau1", "tau2", "p1"]
MICRO_CASES: list[tuple[str, dict[str, Any]]] = [
    ("mdav", {"k": 5}),
    ("mdav-block", {"k": 5, "mdav_block": 400}),
    ("mdav++", {"k": 5, "label": "stabf"}),
    ("ktca", {"k": 5, "suppression": 0.5}),
    ("ctca", {"k": 5}),
    ("kde", {"k": 5, "suppression": 0.5}),
]


#: figures that measure time, not the result: a pass's seconds, the heuristic's "in 0.03 s"
TIMES = ("seconds", "timings")
ELAPSED = re.compile(r"in [0-9.]+ s\b")


def plain(value: Any) -> Any:
    """JSON-ready, with floats rounded to 9 significant digits (NaN and infinity named) and
    times left out."""
    if isinstance(value, dict):
        return {
            str(k): plain(v)
            for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))
            if k not in TIMES
        }
    if isinstance(value, str):
        return ELAPSED.sub("in _ s", value)
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str):  # numpy scalars
        value = value.item()
    if isinstance(value, float):
        if not math.isfinite(value):
            return repr(value)
        return float(f"{value:.9g}")
    return value


def digest_run(run) -> dict[str, Any]:
    summary = run.summary()
    summary.pop("run_id", None)
    frame = run.to_frame()
    rows = sorted(map(tuple, frame.astype(str).itertuples(index=False, name=None)))
    content = hashlib.sha256(json.dumps(rows).encode()).hexdigest()
    return {"summary": plain(summary), "columns": list(frame.columns), "rows": content}


def census_db(tmp: Path):
    from anonsql.database import Database
    from anonsql.demo.setup import setup_demo

    db = Database.open(str(tmp / "census.duckdb"))
    setup_demo(db, rows=8_000)
    return db


def adult_frame():
    import pandas as pd

    return pd.read_csv(ADULT_DIR / "adult.csv", sep=";", dtype=str).head(10_000)


def adult_hierarchies() -> dict[str, Any]:
    return {
        q: {"file": str(ADULT_DIR / f"adult_hierarchy_{q}.csv"), "format": "arx", "sep": ";"}
        for q in ADULT_QIS
    }


def run_cases(tmp: Path) -> dict[str, Any]:
    import anonsql

    out: dict[str, Any] = {}
    db = census_db(tmp)
    adult = adult_frame() if ADULT_DIR.is_dir() else None
    for data, name, options in CASES:
        key = f"{data}/{name}"
        if data == "census":
            spec = {**options, "output": f"out_{len(out)}"}
            run = anonsql.anonymize(db, spec, table="census")
        elif adult is None:
            continue
        else:
            spec = {**options, "hierarchy": adult_hierarchies()}
            run = anonsql.anonymize(adult, spec)
        out[key] = digest_run(run)
    if ELECTRICAL.exists():
        import pandas as pd

        grid = pd.read_csv(ELECTRICAL).head(2_000)[[*ELECTRICAL_QIS, "stabf"]]
        for name, options in MICRO_CASES:
            algorithm = name.split("-")[0].rstrip("+")
            spec = {"qi": ELECTRICAL_QIS, "keep": ["stabf"], "algorithm": algorithm, **options}
            if "label" in options:
                spec["keep"] = []
                spec["columns"] = ELECTRICAL_QIS
            out[f"electrical/{name}"] = digest_run(anonsql.anonymize(grid, spec))
    db.close()
    return out


def main(argv: list[str] | None = None) -> int:
    import tempfile

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--verbose", action="store_true", help="print each case's digest")
    parser.add_argument("--json", type=Path, help="write every case's summary to this file")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        cases = run_cases(Path(tmp))
    for key, value in cases.items():
        one = hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:16]
        if args.verbose:
            print(f"{key:28} {one}")
    if args.json:
        args.json.write_text(json.dumps(cases, indent=1, sort_keys=True))
    total = hashlib.sha256(json.dumps(cases, sort_keys=True).encode()).hexdigest()
    print(f"{len(cases)} cases, digest {total}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

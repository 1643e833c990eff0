"""Seed 004, Section 3.3 on Adult (ARX hierarchies, the nine attributes as QIs): for each of
the seven metrics and each k, GAA with strategy S1 guided by that metric; the k-anonymous
table's mean alteration over the seven metrics, percentage of generalized values and of
values at the root (Definition 9), and their NAUC over [3, 2000] like the paper's Table 3.

    python experiments/seed004_metrics.py [--ks 3,4,5,10,20,50,100,250,500,1000,2000]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass

import numpy as np
from _common import ADULT, adult_db, nauc

KS = [3, 4, 5, 10, 20, 50, 100, 250, 500, 1000, 2000]


def main() -> None:
    from anonsql.data.histogram import Histogram
    from anonsql.evaluate import _seed004_loss
    from anonsql.greedy.gaa import GreedyModel, gaa
    from anonsql.metrics.unified import METRICS

    ap = argparse.ArgumentParser()
    ap.add_argument("--ks", default=",".join(map(str, KS)))
    ap.add_argument("--json", help="also write the raw figures here")
    args = ap.parse_args()
    ks = [int(x) for x in args.ks.split(",")]
    db = adult_db()
    hist = Histogram.from_database(db, "adult", ADULT, ADULT)
    figures: dict[str, dict[str, list[float]]] = {}
    for metric in METRICS:
        rows = {"mean_alteration": [], "pct_generalized": [], "pct_root": []}
        for k in ks:
            t = time.perf_counter()
            r = gaa(hist, GreedyModel(k), metric, "s1")
            part = _as_partition(hist, r)
            loss = _seed004_loss(hist, part, _no_suppression(r))
            for key in rows:
                rows[key].append(loss[key])
            print(
                f"{metric:10s} k={k:5d}  mean alteration {loss['mean_alteration']:6.2f}%  "
                f"generalized {loss['pct_generalized']:6.2f}%  root {loss['pct_root']:6.2f}%  "
                f"({time.perf_counter() - t:.1f} s)",
                flush=True,
            )
        figures[metric] = rows
    lo, hi = max(3, min(ks)), min(2000, max(ks))
    print(f"\nNAUC over [{lo}, {hi}] (lower is better), like seed 004 Table 3:")
    for key in ("mean_alteration", "pct_generalized", "pct_root"):
        ranked = sorted(METRICS, key=lambda m: nauc(ks, figures[m][key], lo, hi))
        cells = ", ".join(f"{m} {nauc(ks, figures[m][key], lo, hi):.2f}" for m in ranked)
        print(f"  {key:16s} {cells}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"ks": ks, "figures": figures}, f, indent=1)


@dataclass
class _Classes:
    """GAA's classes in the shape evaluate's loss function reads."""

    nodes: np.ndarray
    sizes: np.ndarray
    rows: np.ndarray

    def classes_of_rows(self, _hist) -> np.ndarray:
        return self.rows


def _as_partition(hist, r) -> _Classes:
    return _Classes(r.nodes, r.sizes, r.row_class)


def _no_suppression(r) -> np.ndarray:
    return np.zeros(len(r.sizes), dtype=bool)


if __name__ == "__main__":
    main()

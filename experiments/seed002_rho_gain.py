"""Seed 002 (rho-Gain) on Adult and ss13acs: passes over the outliers, per pass.

The paper's protocol (section II.B and III): k = 5 with distinct 2-diversity (its figures say
l = 2, its text l = 3; the figures and Table IV are what it reports), suppression limit 100%
"to find the actual size of the OEC", rho = 2 shown as three passes rho' = 0, 1, 2 (Figs. 3, 5,
7), data utility as AECS (Table IV: released records / classes), risk as the prosecutor model.
Adult: sensitive salary-class, QIs age, education, marital-status, native-country, race, sex,
workclass (Table II; the paper also lists salary-class and "social class" as QIs, which cannot
be both QI and sensitive here), ARX's hierarchies. The paper's DEMOGRAPHICS set is not public;
ss13acs (68,725 rows, US census 2013) is the second data set: QIs Age, Sex, Race, Marital status,
sensitive Education.

Each setting runs twice, with the Loss metric (ARX's default) and with AECS as the search
metric, and a third time to convergence (rho = 8) for the rho' curve; ARX's local recoding with
its GUI defaults runs once per data set for comparison.

    nice -n 19 python experiments/seed002_rho_gain.py

writes experiments/results/seed002_rho_gain.{txt,json} and seed002_<data>_<metric>.svg.
"""

from __future__ import annotations

import json
import sys
import time

from _common import RESULTS, ROOT, Log, adult_db

ADULT_QIS = ["age", "education", "marital-status", "native-country", "race", "sex", "workclass"]
ACS_QIS = ["Age", "Sex", "Race", "Marital status"]
#: seed 002's figures (text of section III.A and Table IV): outliers after each pass, classes
#: and AECS before / after. Table IV(b) prints 65866 / 6060 for DEMOGRAPHICS after; the text
#: (Fig. 8) says 2,423 outliers of 68,566 records, so 6,060 looks copied from (a).
PAPER = {
    "adult": {
        "rows": 30162,
        "outliers": [13181, 7796, 6060],
        "before": {"classes": 1183, "aecs": 14.35},
        "after": {"classes": 1780, "aecs": 13.54},
        "risk_max": 0.20,
    },
    "demographics": {
        "rows": 68566,
        "outliers": [11985, 3849, 2423],
        "before": {"classes": 7216, "aecs": 7.84},
        "after": {"classes": 8109, "aecs": 7.37},
        "risk_max": 0.20,
    },
}


def acs_db():
    from anonsql.database import Database
    from anonsql.hierarchy.loaders import read_arx_csv
    from anonsql.io import import_file

    folder = ROOT.parent / "shared" / "data" / "ss13acs"
    if not folder.is_dir():
        raise SystemExit(f"ss13acs not found at {folder} (../shared is absent)")
    db = Database.open(":memory:")
    import_file(db, "acs", folder / "ss13acs.csv", sep=";")
    for c in [*ACS_QIS, "Education"]:
        db.hierarchies.save(read_arx_csv(c, folder / f"ss13acs_hierarchy_{c}.csv"))
    return db


def run(db, table, qis, sensitive, metric, out, **extra):
    from anonsql.run import anonymize
    from anonsql.spec import Spec

    spec = Spec(
        qis=qis,
        sensitive=sensitive,
        k=5,
        l=2,
        suppression=1.0,
        metric=metric,
        missing="suppress",
        output=out,
        columns=[*qis, sensitive],  # Adult's occupation has no role here
        **extra,
    )
    t0 = time.perf_counter()
    r = anonymize(db, table, spec)
    print(f"  {out}: {time.perf_counter() - t0:.2f} s", file=sys.stderr)
    return r


def check_view(db, out, qis, r) -> None:
    """The published view: as many classes and suppressed rows as the run measured, every
    released class of at least 5 records with 2 salary/education values (read back in SQL)."""
    cols = ", ".join(db.backend.quote(q) for q in qis)
    sizes = db.backend.fetch_df(f"SELECT {cols}, count(*) AS n FROM {out} GROUP BY {cols}")
    star = (sizes[qis] == "*").all(axis=1)
    released = sizes[~star]
    assert len(released) == r.measures["classes"], (len(released), r.measures["classes"])
    assert int(sizes.loc[star, "n"].sum()) == r.measures["suppressed_rows"]
    assert released["n"].min() >= 5


def pass_table(log: Log, r, total: int) -> list[dict]:
    log(
        "| pass rho' | transformation | input | released | classes | outliers after "
        "(% of input) | AECS released/classes | prosecutor max |"
    )
    log("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    rows = []
    for p in r.measures["passes"]:
        share = p["suppressed_after"] / p["input_rows"] if p["input_rows"] else 0.0
        log(
            f"| {p['pass']} | {p['transformation']} | {p['input_rows']:,} | "
            f"{p['released_rows']:,} | {p['classes']:,} | {p['suppressed_after']:,} "
            f"({share:.1%}) | {p['aecs_released']:.2f} | {p['prosecutor_max']:.3f} |"
        )
        rows.append(p)
    m, b = r.measures, r.measures["before"]
    log()
    log(
        f"before (pass 0) -> after: outliers {b['suppressed_rows']:,} -> "
        f"{m['suppressed_rows']:,} of {total:,}; classes {b['classes']:,} -> {m['classes']:,}; "
        f"AECS (Table IV) {b['aecs_released']:.2f} -> {m['aecs_released']:.2f}; AECS (ARX) "
        f"{b['aecs_arx']:.2f} -> {m['aecs_arx']:.2f}; prosecutor max "
        f"{b['prosecutor_max']:.3f} -> {m['prosecutor_max']:.3f}; classes merged across "
        f"passes {m['merged_classes']}"
    )
    log()
    return rows


def svg(name: str, passes: list[dict], title: str) -> None:
    """Released records, outliers after, and classes per pass: three bar charts stacked."""
    from anonsql.evaluation.report import bar_chart

    labels = [f"pass {p['pass']}" for p in passes]
    charts = [
        bar_chart(labels, [p["released_rows"] for p in passes], f"{title}: records released"),
        bar_chart(labels, [p["suppressed_after"] for p in passes], f"{title}: outliers after"),
        bar_chart(labels, [p["classes"] for p in passes], f"{title}: classes released"),
    ]
    y, parts = 0, []
    for c in charts:
        height = int(c.split('height="')[1].split('"')[0])
        parts.append(c.replace("<svg ", f'<svg y="{y}" ', 1))
        y += height + 10
    body = "".join(parts)
    text = f'<svg xmlns="http://www.w3.org/2000/svg" width="640" height="{y}">{body}</svg>\n'
    (RESULTS / name).write_text(text)


def main() -> None:
    log = Log(RESULTS / "seed002_rho_gain.txt")
    results: dict = {"paper": PAPER, "runs": {}}
    sets = [
        ("adult", adult_db, "adult", ADULT_QIS, "salary-class", 30162),
        ("ss13acs", acs_db, "acs", ACS_QIS, "Education", None),
    ]
    for name, make, table, qis, sensitive, total in sets:
        db = make()
        total = total or int(db.backend.fetchall(f"SELECT count(*) FROM {table}")[0][0])
        log(f"## {name}: k = 5, distinct 2-diversity on {sensitive}, suppression 100%")
        log()
        for metric in ("loss", "aecs"):
            out = f"{table}_{metric}_rho2"
            r = run(db, table, qis, sensitive, metric, out, algorithm="rho-gain", rho=2)
            check_view(db, out, qis, r)
            log(f"### {name}, metric {metric}, rho = 2 (seed 002's protocol)")
            log()
            passes = pass_table(log, r, total)
            svg(f"seed002_{name}_{metric}.svg", passes, f"{name}, {metric}, rho = 2")
            curve = run(db, table, qis, sensitive, metric, out + "_c", algorithm="rho-gain", rho=8)
            log(
                "rho' curve to convergence (rho = 8), outliers after each pass: "
                + ", ".join(f"{p['suppressed_after']:,}" for p in curve.measures["passes"])
                + "; classes per pass: "
                + ", ".join(f"{p['classes']:,}" for p in curve.measures["passes"])
            )
            log()
            results["runs"][f"{name}/{metric}"] = {
                "passes": passes,
                "measures": {k: v for k, v in r.measures.items() if k != "passes"},
                "curve": curve.measures["passes"],
            }
        local = run(db, table, qis, sensitive, "loss", f"{table}_local", recoding_mode="local")
        check_view(db, f"{table}_local", qis, local)
        lm = local.measures
        log(
            f"ARX local recoding (Loss, gs 0.5 then gsFactor 0.05, adaption 0.05, 100 "
            f"iterations): {len(lm['passes'])} passes, {lm['suppressed_rows']:,} outliers, "
            f"{lm['classes']:,} classes, AECS (Table IV) {lm['aecs_released']:.2f}, "
            f"prosecutor max {lm['prosecutor_max']:.3f}"
        )
        log()
        results["runs"][f"{name}/local"] = {
            "passes": lm["passes"],
            "measures": {k: v for k, v in lm.items() if k != "passes"},
        }
        db.close()
    (RESULTS / "seed002_rho_gain.json").write_text(json.dumps(results, indent=1, default=float))
    log.close()


if __name__ == "__main__":
    main()

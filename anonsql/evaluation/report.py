"""Reports of a run: what was asked, what was done, how private and how useful the output
is. :func:`build_report` gathers the figures (from the provenance tables and the output
relation, in SQL); :func:`write_report` writes them as JSON and as one self-contained HTML
page with inline SVG charts (no scripts, no external files).
"""

from __future__ import annotations

import html
import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sqlglot import exp

from anonsql.backend.sql_templates import column, table
from anonsql.errors import InputError
from anonsql.metrics.population import uniqueness_report

#: upper bounds of the prosecutor-risk buckets of the risk distribution
RISK_BOUNDS = (0.001, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)


def build_report(
    db,
    run_id: int,
    population: str | None = None,
    population_size: int | None = None,
    sampling_fraction: float | None = None,
) -> dict[str, Any]:
    """The report's figures. ``population_size`` or ``sampling_fraction`` (default: the run's
    own, when it had an estimated k-map or a population-uniqueness threshold) adds the
    population-uniqueness estimates (:func:`anonsql.metrics.population.uniqueness_report`)."""
    be = db.backend
    if not be.table_exists("anonsql_runs"):
        raise InputError("this database has no anonsql runs")
    df = be.fetch_df("SELECT * FROM anonsql_runs WHERE run_id = ?", [run_id])
    if df.empty:
        known = [r[0] for r in be.fetchall("SELECT run_id FROM anonsql_runs ORDER BY 1")]
        raise InputError(f"no run {run_id}; the runs are {known}")
    row = df.iloc[0]
    params = json.loads(row["parameters"])
    levels = json.loads(row["levels"]) if row["levels"] else {}
    measures = json.loads(row["measures"]) if row["measures"] else {}
    from anonsql.masking.roles import run_roles
    from anonsql.output.writer import lattice_size_of_run

    output = row["output"]
    if not output or not be.relation_kind(output):
        raise InputError(f"run {run_id}'s output {output!r} no longer exists")
    qis = list(params.get("qis") or levels)
    if params.get("unit"):
        # docs/models/units.md: classes count units, which the output does not hold
        sizes, suppressed = _unit_class_sizes(db, row, params, qis)
    else:
        sizes, suppressed = _class_sizes(be, output, qis)
    records = sum(s * c for s, c in sizes)
    report: dict[str, Any] = {
        "run_id": int(run_id),
        "created_at": str(row["created_at"]),
        "source": row["source"],
        "output": output,
        "materialize": row["materialize"],
        "algorithm": row["algorithm"],
        "parameters": params,
        "transformation": levels,
        "measures": measures,
        "timings": json.loads(row["timings"]) if row["timings"] else {},
        "nodes_checked": _int(row["nodes_checked"]),
        "lattice_size": lattice_size_of_run(row["lattice_size"], measures),
        "class_sizes": [{"size": s, "classes": c} for s, c in sizes],
        "risk": _risk(sizes, records, int(suppressed)),
        "loss_per_qi": measures.get("per_qi"),
        "solutions": _solutions(be, run_id),
        "roles": run_roles(params),
    }
    report["levels"] = _levels(db, params, levels)
    report["sample_rows"] = _sample_rows(be, output, qis)
    report["loss_notes"] = _loss_notes(report, suppressed + records)
    if params.get("sensitive"):
        report["sensitive"] = _sensitive(db, row, params, output, qis)
    if measures.get("passes"):
        # rho-Gain and local recoding (anonsql.algorithms.lattice.passes): one row per pass over
        # the outliers, and the first pass's figures (a plain lattice run) against the output's
        report["passes"] = measures["passes"]
        report["before_after"] = {
            "before": measures.get("before"),
            "after": {
                "classes": measures.get("classes"),
                "suppressed_rows": measures.get("suppressed_rows"),
                "aecs_released": measures.get("aecs_released"),
                "aecs_arx": measures.get("aecs_arx"),
                "prosecutor_max": report["risk"].get("prosecutor_max"),
                "prosecutor_avg": report["risk"].get("prosecutor_avg"),
                "score": measures.get("score"),
            },
        }
    if population is not None:
        report["risk"]["journalist"] = _journalist(db, output, population, qis, params, levels)
    if population_size is None and sampling_fraction is None:
        population_size = params.get("population_size")
        sampling_fraction = params.get("sampling_fraction")
    released = np.repeat([s for s, _ in sizes], [c for _, c in sizes]) if sizes else np.zeros(0)
    report["risk"]["uniqueness"] = uniqueness_report(
        released, population_size, sampling_fraction, int(records + suppressed)
    )
    return report


#: released rows the report shows, and sensitive values listed by their share
SAMPLE_ROWS = 10
TOP_VALUES = 10


def _levels(db, params: dict[str, Any], levels: dict[str, int]) -> list[dict[str, Any]]:
    """Each QI's level and its hierarchy's top level (a full-domain run; [] otherwise)."""
    out = []
    keys = params.get("qi_keys") or []
    for j, (q, lv) in enumerate(levels.items()):
        top = None
        try:
            top = db.hierarchies.load(keys[j]).top_level if j < len(keys) else None
        except (InputError, LookupError, ValueError):
            top = None  # a hierarchy deleted since: the level alone
        out.append({"qi": q, "level": int(lv), "top_level": top})
    return out


def _released(qis: list[str]) -> exp.Expression:
    """A released row: not every QI is '*' (the suppressed rows' mark)."""
    return exp.not_(exp.and_(*[column(q).eq(exp.convert("*")) for q in qis]))


def _sample_rows(be, output: str, qis: list[str]) -> dict[str, Any]:
    """A few released rows of the output, as a reader sees them (the guarded relation, so
    masked columns are masked), in a stable order: the first rows by their QI labels."""
    cols = be.columns(output)
    order = [exp.cast(column(c), "VARCHAR") for c in cols]
    q = (
        exp.select(*[column(c) for c in cols])
        .from_(table(output))
        .where(_released(qis))
        .order_by(*order)
        .limit(SAMPLE_ROWS)
    )
    return {"columns": cols, "rows": [[_plain(v) for v in r] for r in be.fetchall(q)]}


def _plain(v: Any) -> Any:
    return v if v is None or isinstance(v, (int, float, str, bool)) else str(v)


def _loss_notes(report: dict[str, Any], rows: int) -> list[str]:
    """Why a QI left at level 0 shows a loss: every suppressed record costs its whole domain
    in each QI (ARX's Loss and Precision, README "One Loss per run")."""
    loss = report.get("loss_per_qi") or {}
    supp = report["measures"].get("suppressed_rows") or 0
    notes = []
    for entry in report["levels"]:
        v = loss.get(entry["qi"])
        if entry["level"] == 0 and v and supp:
            notes.append(
                f"{entry['qi']} stays at level 0 (its original values): its loss {v:.4g} is "
                f"the cost of the {supp} suppressed records ({supp / rows:.2%} of {rows}), "
                f"which count as generalized to the root"
            )
    return notes


def _sensitive(db, row, params: dict[str, Any], output: str, qis: list[str]) -> Any:
    """The sensitive attribute in the released classes: its most frequent values, the classes
    by number of distinct values (distinct l; NULL is no value), and each of the run's models
    on it, per class (its value's range and distribution), as ``check`` computes them. With
    several sensitive attributes: a list of these, one per attribute, each with the models
    on it (README "Several sensitive attributes")."""
    from anonsql.models.base import unwrap
    from anonsql.models.goal import build_models
    from anonsql.output.writer import spec_of_run

    spec = spec_of_run({"parameters": params})
    models = [m for m in build_models(spec, params.get("sensitive_key")) if m.needs_sensitive]
    if not isinstance(params["sensitive"], list):
        return _sensitive_one(db, params, output, qis, params["sensitive"], models)
    return [
        _sensitive_one(
            db, params, output, qis, sa, [unwrap(m)[0] for m in models if unwrap(m)[1] == i]
        )
        for i, sa in enumerate(params["sensitive"])
    ]


def _sensitive_one(
    db, params: dict[str, Any], output: str, qis: list[str], sa: str, models: list
) -> dict[str, Any]:
    """One sensitive attribute ``sa`` in the released classes, and ``models`` on it."""
    from anonsql.models.compile import model_values_query

    be = db.backend
    released = _released(qis)
    counted = exp.alias_(exp.Count(this=exp.Star()), "n")
    top = be.fetchall(
        exp.select(exp.cast(column(sa), "VARCHAR"), counted)
        .from_(table(output))
        .where(released)
        .group_by(column(sa))
        .order_by(exp.column("n").desc(), exp.cast(column(sa), "VARCHAR"))
    )
    total = sum(int(n) for _, n in top) or 1
    values = [{"value": v, "records": int(n), "share": int(n) / total} for v, n in top[:TOP_VALUES]]
    distinct = exp.alias_(exp.Count(this=exp.Distinct(expressions=[column(sa)])), "d")
    per_class = (
        exp.select(distinct).from_(table(output)).where(released).group_by(*map(column, qis))
    )
    hist = be.fetchall(
        exp.select("c.d", exp.Count(this=exp.Star()))
        .from_(exp.alias_(per_class.subquery(), "c", table=True))
        .group_by("c.d")
        .order_by("c.d")
    )
    out: dict[str, Any] = {
        "attribute": sa,
        "distinct_values": len(top),
        "values": values,
        "distinct_per_class": [{"distinct": int(d), "classes": int(c)} for d, c in hist],
        "models": [],
        # the output holds no unit (docs/models/units.md): these figures count its rows,
        # where the run and its guard count units
        "counted_in": "rows of the output" if params.get("unit") else "rows",
    }
    for m in models:
        top_level = None
        if m.name == "hierarchical-emd":
            top_level = db.hierarchies.load(params["sensitive_key"]).top_level
        df = be.fetch_df(model_values_query(m, output, qis, sa, be.dialect, top_level))
        df = df[~df["suppressed"].astype(bool)]
        vals = df["value"].astype(float).to_numpy()
        finite = vals[np.isfinite(vals)]
        out["models"].append(
            {
                "model": m.describe(),
                "classes": len(df),
                "failing_classes": int((~df["ok"].astype(bool)).sum()),
                "min": float(finite.min()) if len(finite) else None,
                "max": float(finite.max()) if len(finite) else None,
                "distribution": _bins(finite),
            }
        )
    return out


def _bins(values: np.ndarray, n: int = 10) -> list[dict[str, Any]]:
    """Equal-width bins of ``values`` (classes per bin), lower bound included."""
    if not len(values):
        return []
    lo, hi = float(values.min()), float(values.max())
    if hi == lo:
        return [{"from": lo, "to": hi, "classes": len(values)}]
    edges = np.linspace(lo, hi, n + 1)
    counts, _ = np.histogram(values, edges)
    return [
        {"from": float(a), "to": float(b), "classes": int(c)}
        for a, b, c in zip(edges[:-1], edges[1:], counts, strict=True)
    ]


def size_bins(sizes: list[dict[str, int]], most: int = 30) -> tuple[list[str], list[int]]:
    """Every class size as a bar, or, past ``most`` distinct sizes, geometric bins of them
    (so the chart covers the whole distribution, not its smallest sizes only)."""
    if len(sizes) <= most:
        return [f"size {s['size']}" for s in sizes], [s["classes"] for s in sizes]
    lo, hi = sizes[0]["size"], sizes[-1]["size"]
    edges = np.unique(np.round(np.geomspace(lo, hi + 1, 21)).astype(np.int64))
    labels, counts = [], []
    for a, b in itertools.pairwise(edges):
        c = sum(s["classes"] for s in sizes if a <= s["size"] < b)
        labels.append(f"size {a}" if b == a + 1 else f"size {a}–{b - 1}")
        counts.append(c)
    return labels, counts


def _int(v: Any) -> int | None:
    import pandas as pd

    return None if v is None or pd.isna(v) else int(v)


def _class_sizes(be, output: str, qis: list[str]) -> tuple[list[tuple[int, int]], int]:
    """(class size, number of classes) of the non-suppressed classes, and the number of
    suppressed records (every QI '*'), from one scan of the output."""
    # the query the anonsql_classes macro runs, built portably so every engine can run it
    from sqlglot import exp

    from anonsql.backend.sql_templates import column, table

    every_star = exp.and_(*[column(q).eq(exp.convert("*")) for q in qis])
    classes = (
        exp.select(
            exp.alias_(every_star, "suppressed"),
            exp.alias_(exp.Count(this=exp.Star()), "size"),
        )
        .from_(table(output))
        .group_by(*[column(q) for q in qis])
    )
    rows = be.fetchall(
        exp.select("c.suppressed", "c.size", exp.Count(this=exp.Star()))
        .from_(exp.alias_(classes.subquery(), "c", table=True))
        .group_by("c.suppressed", "c.size")
        .order_by("c.size")
    )
    sizes = [(int(s), int(c)) for supp, s, c in rows if not supp]
    suppressed = sum(int(s) * int(c) for supp, s, c in rows if supp)
    return sizes, suppressed


def _unit_class_sizes(db, row, params, qis: list[str]) -> tuple[list[tuple[int, int]], int]:
    """As :func:`_class_sizes`, in distinct units: the run's guarded query over the source,
    read with the unit column (which the output never holds)."""
    from anonsql.output.writer import run_query

    run = {
        "run_id": row["run_id"],
        "parameters": params,
        "levels": json.loads(row["levels"]) if row["levels"] else {},
        "output": row["output"],
        "source": row["source"],
        "algorithm": row["algorithm"],
    }
    unit = params["unit"]
    query, _ = run_query(db, run, flag=True, drop_suppressed=False, extra=[unit])
    rows = exp.alias_(query.subquery(), "r", table=True)
    units = exp.Count(this=exp.Distinct(expressions=[exp.cast(column(unit, "r"), "VARCHAR")]))
    released = exp.not_(exp.column("__suppressed", "r"))
    per_class = (
        exp.select(exp.alias_(units, "size"))
        .from_(rows)
        .where(released)
        .group_by(*[column(q, "r") for q in qis])
    )
    got = db.backend.fetchall(
        exp.select("c.size", exp.Count(this=exp.Star()))
        .from_(exp.alias_(per_class.subquery(), "c", table=True))
        .group_by("c.size")
        .order_by("c.size")
    )
    supp = db.backend.fetchall(
        exp.select(units.copy()).from_(rows.copy()).where(exp.column("__suppressed", "r"))
    )[0][0]
    return [(int(s), int(c)) for s, c in got], int(supp or 0)


def _risk(sizes: list[tuple[int, int]], records: int, suppressed: int) -> dict[str, Any]:
    """Prosecutor risk of a record is 1 / its class size (suppressed records carry none);
    the marketer risk is the expected share of all records re-identified, classes / rows
    (El Emam's measures, as in ARX and ``anonsql.metrics.risk``)."""
    if not records:
        return {"records": 0}
    classes = sum(c for _, c in sizes)
    buckets = [0] * len(RISK_BOUNDS)
    for size, count in sizes:
        r = 1.0 / size
        i = next(i for i, b in enumerate(RISK_BOUNDS) if r <= b)
        buckets[i] += size * count
    return {
        "records": records,
        "suppressed_records": suppressed,
        "prosecutor_max": 1.0 / sizes[0][0],
        "prosecutor_avg": classes / records,
        "marketer": classes / (records + suppressed),
        "records_at_highest_risk": sizes[0][0] * sizes[0][1],
        "distribution": [
            {"risk_up_to": b, "records": n} for b, n in zip(RISK_BOUNDS, buckets, strict=True)
        ],
    }


def _journalist(db, output, population, qis, params, levels) -> dict[str, Any]:
    """Journalist risk: 1 / the size of a record's class in the population, the population
    generalized with the run's transformation (the output's labels)."""
    from anonsql.output.materialize import output_query

    be = db.backend
    be.require_columns(population, qis)
    keys = params.get("qi_keys") or [params.get("hierarchies", {}).get(q, q) for q in qis]
    if not levels:
        raise InputError(
            "journalist risk needs a full-domain (lattice) run: a greedy recoding is defined "
            "only for the values of the source table"
        )
    gen = output_query(be.dialect, population, qis, qis, keys, [levels[q] for q in qis])
    pop = (
        exp.select(*[column(q) for q in qis], exp.alias_(exp.Count(this=exp.Star()), "n"))
        .from_(exp.alias_(gen.subquery(), "p", table=True))
        .group_by(*[column(q) for q in qis])
    )
    sample = (
        exp.select(*[column(q) for q in qis], exp.alias_(exp.Count(this=exp.Star()), "m"))
        .from_(table(output))
        .group_by(*[column(q) for q in qis])
    )
    on = exp.and_(*[column(q, "s").eq(column(q, "p")) for q in qis])
    pop_n = column("n", "p")
    risk = exp.Div(this=exp.Literal.number(1.0), expression=pop_n)
    hits = exp.Div(this=column("m", "s"), expression=pop_n)
    query = (
        exp.select(
            exp.alias_(exp.Max(this=risk), "mx"),
            exp.alias_(exp.Sum(this=hits), "hits"),
            exp.alias_(exp.Sum(this=column("m", "s")), "records"),
        )
        .from_(exp.alias_(sample.subquery(), "s", table=True))
        .join(exp.alias_(pop.subquery(), "p", table=True), on=on)
    )
    mx, hits, records = be.fetchall(query)[0]
    if not records:
        return {"population": population, "max": None, "avg": None}
    return {"population": population, "max": float(mx), "avg": float(hits) / float(records)}


def _solutions(be, run_id: int) -> list[dict[str, Any]]:
    if not be.table_exists("anonsql_solutions"):
        return []
    df = be.fetch_df(
        "SELECT transformation, levels, score, suppressed_rows, classes, minimal, optimal "
        "FROM anonsql_solutions WHERE run_id = ? ORDER BY score",
        [run_id],
    )
    out = []
    for r in df.to_dict("records"):
        r["levels"] = [int(x) for x in r["levels"]]
        r["score"] = float(r["score"])
        for k in ("suppressed_rows", "classes"):
            r[k] = int(r[k])
        for k in ("minimal", "optimal"):
            r[k] = bool(r[k])
        out.append(r)
    return out


# -- HTML --------------------------------------------------------------------------------------
def write_report(report: dict[str, Any], out_dir: str | Path) -> tuple[Path, Path]:
    """Write the JSON and HTML files into ``out_dir`` (created when missing). Both texts are
    rendered before either file is touched, and each file is replaced atomically: a full
    disk leaves the previous files (or none), never a truncated one."""
    from anonsql.output.files import write_text_atomic

    folder = Path(out_dir)
    stem = f"anonsql_run_{report['run_id']}"
    texts = {
        folder / f"{stem}.json": json.dumps(report, indent=2, default=str),
        folder / f"{stem}.html": render_html(report),
    }
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InputError(f"cannot create the folder {str(folder)!r}: {e.strerror or e}") from None
    json_path, html_path = [write_text_atomic(path, text) for path, text in texts.items()]
    return json_path, html_path


def _e(x: Any) -> str:
    return html.escape(str(x), quote=True)


def bar_chart(labels: list[str], values: Sequence[float], title: str, fmt: str = "{:g}") -> str:
    """A horizontal bar chart as inline SVG."""
    if not values:
        return f"<p><em>{_e(title)}: nothing to show</em></p>"
    top = max(values) or 1.0
    row, label_w, bar_w = 22, 170, 380
    height = row * len(values) + 30
    parts = [
        f'<svg role="img" aria-label="{_e(title)}" width="{label_w + bar_w + 90}" '
        f'height="{height}" xmlns="http://www.w3.org/2000/svg">',
        f'<text x="0" y="14" font-weight="bold">{_e(title)}</text>',
    ]
    for i, (lab, v) in enumerate(zip(labels, values, strict=True)):
        y = 24 + i * row
        w = bar_w * (v / top)
        parts.append(f'<text x="{label_w - 6}" y="{y + 14}" text-anchor="end">{_e(lab)}</text>')
        parts.append(
            f'<rect x="{label_w}" y="{y + 2}" width="{w:.1f}" height="{row - 6}" fill="#4a78b5">'
            f"<title>{_e(lab)}: {_e(fmt.format(v))}</title></rect>"
        )
        parts.append(f'<text x="{label_w + w + 4:.1f}" y="{y + 14}">{_e(fmt.format(v))}</text>')
    parts.append("</svg>")
    return "".join(parts)


def scatter(points: list[dict[str, Any]], title: str) -> str:
    """Anonymous transformations: generalization (sum of levels) against score; the
    optimum in red, minimal anonymous ones filled. Both axes carry ticks."""
    if not points:
        return "<p><em>No solution space was recorded (run with --solution-space).</em></p>"
    w, h, pad, left = 560, 300, 45, 75  # left: room for the score labels
    xs = [sum(p["levels"]) for p in points]
    ys = [p["score"] for p in points]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    sx = (w - left - pad) / ((x1 - x0) or 1)
    sy = (h - 2 * pad) / ((y1 - y0) or 1)
    parts = [
        f'<svg role="img" aria-label="{_e(title)}" width="{w}" height="{h}" '
        f'xmlns="http://www.w3.org/2000/svg">',
        f'<text x="{left}" y="16" font-weight="bold">{_e(title)}</text>',
        f'<line x1="{left}" y1="{h - pad}" x2="{w - pad}" y2="{h - pad}" stroke="#888"/>',
        f'<line x1="{left}" y1="{pad}" x2="{left}" y2="{h - pad}" stroke="#888"/>',
        f'<text x="{(left + w - pad) / 2}" y="{h - 8}" text-anchor="middle">'
        f"sum of generalization levels</text>",
    ]
    for t in _ticks(x0, x1, integer=True):
        tx = left + (t - x0) * sx
        parts.append(
            f'<line x1="{tx:.1f}" y1="{h - pad}" x2="{tx:.1f}" y2="{h - pad + 4}" stroke="#888"/>'
            f'<text x="{tx:.1f}" y="{h - pad + 16}" text-anchor="middle">{t:g}</text>'
        )
    for t in _ticks(y0, y1):
        ty = h - pad - (t - y0) * sy
        parts.append(
            f'<line x1="{left - 4}" y1="{ty:.1f}" x2="{left}" y2="{ty:.1f}" stroke="#888"/>'
            f'<text x="{left - 6}" y="{ty + 4:.1f}" text-anchor="end">{t:.5g}</text>'
        )
    for p, x, y in zip(points, xs, ys, strict=True):
        cx = left + (x - x0) * sx
        cy = h - pad - (y - y0) * sy
        color = "#c0392b" if p["optimal"] else "#4a78b5"
        fill = color if p["minimal"] or p["optimal"] else "none"
        r = 6 if p["optimal"] else 4
        parts.append(
            f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{r}" stroke="{color}" fill="{fill}">'
            f"<title>{_e(p['transformation'])}: {p['score']:.6g}, {p['suppressed_rows']} "
            f"suppressed</title></circle>"
        )
    parts.append("</svg>")
    return "".join(parts)


def render_html(r: dict[str, Any]) -> str:
    m = r["measures"]
    risk = r["risk"]
    p = r["parameters"]
    goal = ", ".join(p.get("models") or [])
    rows = [
        ("source → output", f"{r['source']} → {r['output']} ({r['materialize']})"),
        ("privacy goal", f"{goal}; at most {p.get('suppression', 0):.1%} suppressed"),
        ("transformation", ", ".join(f"{q} = {lv}" for q, lv in r["transformation"].items())
                           or "multidimensional recoding (one generalization per class)"),
        ("classes", m.get("classes")),
        ("suppressed records", f"{m.get('suppressed_rows')} ({m.get('suppressed_share', 0):.2%})"),
        ("smallest class", m.get("min_class_size")),
        ("prosecutor risk (max / avg)", _pair(risk.get("prosecutor_max"),
                                              risk.get("prosecutor_avg"))),
        ("marketer risk", _num(risk.get("marketer"))),
        ("quality", f"{m.get('metric')} = {_num(m.get('score'))}"),
        ("search", _search_text(r)),
    ]  # fmt: skip
    u = risk.get("uniqueness") or {}
    if "sample_uniqueness" in u:
        rows.append(("sample uniqueness", _num(u["sample_uniqueness"])))
    if "population_uniqueness_dankar" in u:
        estimates = ", ".join(
            f"{e} {_num(u[f'population_uniqueness_{e}'])}" for e in ("pitman", "zayatz", "snb")
        )
        rows.append(
            (
                f"population uniqueness (N = {u['population_size']:.0f})",
                f"Dankar {_num(u['population_uniqueness_dankar'])} "
                f"({u.get('dankar_estimator')}); {estimates}",
            )
        )
    if "journalist" in risk:
        j = risk["journalist"]
        rows.append(
            (f"journalist risk vs {j['population']} (max / avg)", _pair(j["max"], j["avg"]))
        )
    for q, how in (m.get("hierarchies_built") or {}).items():
        rows.append((f"hierarchy of {q} (built)", how))
    roles = r.get("roles") or {}
    if roles:
        rows.append(("columns (role)", ", ".join(f"{c}: {role}" for c, role in roles.items())))
    table_html = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    passes_html = _passes_html(r)
    sizes = r["class_sizes"]
    size_labels, size_counts = size_bins(sizes)
    size_chart = bar_chart(
        size_labels,
        size_counts,
        f"Classes by size (all {sum(s['classes'] for s in sizes)} released classes)",
    )
    dist = risk.get("distribution", [])
    # each bar is a band (lower bound excluded, upper included), and suppressed records,
    # which carry no risk, get a bar of their own so that the bars add up to the table
    lows = [0.0] + [d["risk_up_to"] for d in dist[:-1]]
    bands = [
        f"{lo:g} < risk ≤ {d['risk_up_to']:g}" if lo else f"risk ≤ {d['risk_up_to']:g}"
        for lo, d in zip(lows, dist, strict=True)
    ]
    counts = [d["records"] for d in dist]
    if dist:
        bands.append("suppressed (no risk)")
        counts.append(risk.get("suppressed_records", 0))
    risk_chart = bar_chart(
        bands,
        counts,
        "Records by prosecutor re-identification risk (1 / class size), per band",
    )
    loss = r.get("loss_per_qi") or {}
    loss_chart = bar_chart(
        list(loss), [float(v) for v in loss.values()], f"{m.get('metric')} per QI", "{:.4f}"
    ) + "".join(f"<p>{_e(note)}</p>" for note in r.get("loss_notes") or [])
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>anonsql run {r["run_id"]}: {_e(r["output"])}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; max-width: 980px; color: #222; }}
table {{ border-collapse: collapse; margin-bottom: 1.5em; }}
th, td {{ text-align: left; padding: 4px 12px; border-bottom: 1px solid #ddd; }}
th {{ color: #555; font-weight: normal; }}
svg {{ font-size: 12px; display: block; margin: 1em 0 2em; }}
</style></head><body>
<h1>anonsql run {r["run_id"]}</h1>
<p>{_e(r["created_at"])}. How private: the risk figures and the class sizes. How useful:
the quality score and the loss per QI (0 = data unchanged, 1 = fully generalized).</p>
<table>{table_html}</table>
{_dp_html(r)}
{_release_html(r)}
{passes_html}
{risk_chart}
{size_chart}
{_sensitive_html(r)}
{loss_chart}
{_solutions_html(r)}
</body></html>
"""


def _dp_html(r: dict[str, Any]) -> str:
    """A differentially private release (safepub): what it spent and derived, and whether
    its randomness was the operating system's or a seed (tests and reproductions only)."""
    dp = (r.get("parameters") or {}).get("dp")
    if not dp:
        return ""
    keys = ("epsilon", "delta", "epsilon_anon", "epsilon_search", "beta", "k", "steps")
    rows = "".join(f"<tr><th>{_e(k)}</th><td>{_e(str(dp.get(k)))}</td></tr>" for k in keys)
    seeded = dp.get("seed") is not None
    rows += (
        f"<tr><th>randomness</th><td>{_e(str(dp.get('randomness')))}"
        + (f" (seed {_e(str(dp.get('seed')))})" if seeded else "")
        + "</td></tr>"
    )
    return f"<h2>Differential privacy (SafePub)</h2><table>{rows}</table>"


def _release_html(r: dict[str, Any]) -> str:
    """The levels chosen (full-domain runs) and a few released rows."""
    parts = []
    if r.get("levels"):
        cells = "".join(
            f"<tr><th>{_e(e['qi'])}</th><td>level {e['level']}"
            + (f" of {e['top_level']}" if e["top_level"] is not None else "")
            + ("" if e["level"] else " (original values)")
            + "</td></tr>"
            for e in r["levels"]
        )
        parts.append(f"<h2>Levels chosen</h2><table>{cells}</table>")
    sample = r.get("sample_rows") or {}
    if sample.get("rows"):
        head = "".join(f"<th>{_e(c)}</th>" for c in sample["columns"])
        body = "".join(
            "<tr>" + "".join(f"<td>{_e('NULL' if v is None else v)}</td>" for v in row) + "</tr>"
            for row in sample["rows"]
        )
        parts.append(
            f"<h2>Released rows (the first {len(sample['rows'])} by their values)</h2>"
            f"<table><tr>{head}</tr>{body}</table>"
        )
    return "".join(parts)


def _short(label: str, most: int = 24) -> str:
    """A bar's label, cut to fit the chart's label column."""
    return label if len(label) <= most else label[: most - 1] + "…"


def _sensitive_html(r: dict[str, Any]) -> str:
    """The sensitive attribute: its values, distinct values per class, each model per class."""
    sens = r.get("sensitive")
    if not sens:
        return ""
    if isinstance(sens, list):  # several sensitive attributes: a section each
        return "".join(_sensitive_html({"sensitive": one}) for one in sens)
    parts = [f"<h2>Sensitive attribute {_e(sens['attribute'])}</h2>"]
    if sens.get("counted_in") == "rows of the output":
        parts.append(
            "<p>Counted in rows of the output, which holds no unit; the run and the "
            "output's guard count units.</p>"
        )
    vals = sens["values"]
    more = sens["distinct_values"] - len(vals)
    parts.append(
        bar_chart(
            [_short("NULL" if v["value"] is None else str(v["value"])) for v in vals],
            [v["share"] for v in vals],
            "Share of released records per value"
            + (f" ({len(vals)} most frequent of {sens['distinct_values']})" if more else ""),
            "{:.2%}",
        )
    )
    d = sens["distinct_per_class"]
    parts.append(
        bar_chart(
            [f"{e['distinct']} value(s)" for e in d],
            [e["classes"] for e in d],
            "Classes by number of distinct sensitive values (distinct l; NULL is no value)",
        )
    )
    for m in sens["models"]:
        dist = m["distribution"]
        parts.append(
            f"<p>{_e(m['model'])}: per class from {_num(m['min'])} to {_num(m['max'])}; "
            f"{m['failing_classes']} of {m['classes']} released classes fail it.</p>"
        )
        parts.append(
            bar_chart(
                [f"{e['from']:.3g} – {e['to']:.3g}" for e in dist],
                [e["classes"] for e in dist],
                f"Classes by their value of {m['model']}",
            )
        )
    return "".join(parts)


def _search_text(r: dict[str, Any]) -> str:
    """What the search did: nodes of the lattice for a lattice run; a table recoding has
    no lattice (what its count is of, if anything, the algorithm says: GAA's class merges)."""
    if r.get("lattice_size"):
        return f"{r['algorithm']}: {r['nodes_checked']} of {r['lattice_size']} nodes checked"
    from anonsql.algorithms import registry

    done = r.get("nodes_checked")
    registered = registry().get(str(r["parameters"].get("algorithm") or "flash"))
    counted = registered.counted if registered is not None else None
    if counted is not None and done is not None:
        return f"{r['algorithm']}: {done} {counted} (a recoding per class, no lattice)"
    return f"{r['algorithm']} (a recoding per class, no lattice)"


def _solutions_html(r: dict[str, Any]) -> str:
    """The transformations plot, when there is something to compare; else why not."""
    points = r["solutions"]
    if not r.get("lattice_size"):
        return (
            f"<p><em>No transformations to compare: {_e(r['algorithm'])} builds one recoding "
            f"per class instead of choosing among generalization levels.</em></p>"
        )
    if len(points) < 2:
        return (
            f"<p><em>{len(points)} anonymous transformation scored (the optimum). Run with "
            f"--solution-space to score every minimal anonymous transformation and compare "
            f"them here.</em></p>"
        )
    return scatter(points, "Anonymous transformations by score (red: the optimum)")


def _ticks(lo: float, hi: float, n: int = 5, integer: bool = False) -> list[float]:
    """About ``n`` round tick values within [lo, hi] (whole numbers with ``integer``), both
    ends included when they are round; [lo] when the range is a point."""
    import math

    if hi <= lo:
        return [lo]
    raw = (hi - lo) / n
    step = 10 ** math.floor(math.log10(raw))
    step *= next(f for f in (1, 2, 2.5, 5, 10) if f * step >= raw)
    if integer:
        step = max(1, math.ceil(step))
    first = math.ceil(lo / step - 1e-9) * step
    return [first + i * step for i in range(int((hi - first) / step + 1e-9) + 1)]


def _passes_html(r: dict[str, Any]) -> str:
    """The passes over the outliers (rho-Gain, local recoding): records and classes per pass,
    each pass's class sizes and risk, and the first pass against the whole output."""
    passes = r.get("passes")
    if not passes:
        return ""
    head = (
        "<tr><th>pass</th><th>transformation</th><th>input</th><th>released</th>"
        "<th>classes</th><th>suppressed after</th><th>AECS (released / classes)</th>"
        "<th>prosecutor max</th><th>class sizes (size×classes)</th></tr>"
    )
    body = "".join(
        "<tr>"
        + "".join(
            f"<td>{_e(v)}</td>"
            for v in (
                p["pass"],
                p["transformation"] or "none",
                p["input_rows"],
                p["released_rows"],
                p["classes"],
                p["suppressed_after"],
                _num(p["aecs_released"]),
                _num(p["prosecutor_max"]),
                ", ".join(f"{s}×{c}" for s, c in p["class_sizes"][:12])
                + (" …" if len(p["class_sizes"]) > 12 else ""),
            )
        )
        + "</tr>"
        for p in passes
    )
    ba = r.get("before_after") or {}
    before, after = ba.get("before") or {}, ba.get("after") or {}
    keys = ("classes", "suppressed_rows", "aecs_released", "aecs_arx", "prosecutor_max", "score")
    cmp_rows = "".join(
        f"<tr><th>{_e(k)}</th><td>{_e(_num(before.get(k)))}</td><td>{_e(_num(after.get(k)))}"
        f"</td></tr>"
        for k in keys
    )
    chart = bar_chart(
        [f"pass {p['pass']}" for p in passes],
        [p["released_rows"] for p in passes],
        "Records released per pass",
    )
    return (
        f"<h2>Passes over the outliers</h2><table>{head}{body}</table>"
        f"<table><tr><th></th><th>first pass (before)</th><th>output (after)</th></tr>"
        f"{cmp_rows}</table>{chart}"
    )


def _num(v: Any) -> str:
    return "n/a" if v is None else f"{float(v):.4g}"


def _pair(a: Any, b: Any) -> str:
    return f"{_num(a)} / {_num(b)}"


__all__ = ["bar_chart", "build_report", "render_html", "scatter", "write_report"]

"""How private and how useful is a generalized table?

Two ways in:

* :func:`evaluate_levels` - a full-domain transformation (one level per QI) of an original
  table: classes come from the histogram, classes failing a model are suppressed when the
  suppression limit allows, and every measure is computed exactly;
* :func:`check_table` and :func:`loss_of_tables` - a table that is already generalized (one
  generalized value per row): privacy models run as SQL over its classes in the database;
  loss metrics need only column sums (see :mod:`anonsql.metrics.unified`), so original and
  generalized rows never have to be paired.
"""

from __future__ import annotations

import builtins
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sqlglot import exp

from anonsql.backend.sql_templates import column, drop, table
from anonsql.data.classes import Partition
from anonsql.data.histogram import Histogram
from anonsql.database import Database
from anonsql.errors import InputError
from anonsql.metrics.population import uniqueness_report
from anonsql.metrics.quality import QUALITY, Loss, arx_round, quality_model
from anonsql.metrics.risk import risk_measures
from anonsql.metrics.unified import METRICS, UnifiedMetric
from anonsql.models import (
    EntropyLDiversity,
    HierarchicalEMD,
    L1Closeness,
    PopulationUniqueness,
    PrivacyModel,
)
from anonsql.models.base import ClassStats, unwrap
from anonsql.models.compile import SUPPRESSED, model_values_query
from anonsql.models.requirements import Requirements, population_histogram
from anonsql.models.unit_requirements import UnitRequirements


@dataclass
class ModelReport:
    model: str
    description: str
    holds: bool
    failing_classes: int
    failing_rows: int
    min_value: float | None
    max_value: float | None


@dataclass
class Evaluation:
    rows: int
    classes: int
    suppressed_rows: int
    anonymous: bool
    models: list[ModelReport]
    risk: dict[str, Any]
    loss: dict[str, float] = field(default_factory=dict)
    levels: dict[str, int] | None = None
    #: the privacy unit the counts are of (None: rows)
    unit: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        # what ``rows`` and every class size count (docs/models/units.md)
        out["counted_in"] = f"units of {self.unit}" if self.unit else "rows"
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row per figure: (group, measure, value)."""
        rows: list[tuple[str, str, Any]] = [
            ("table", "rows", self.rows),
            ("table", "classes", self.classes),
            ("table", "suppressed_rows", self.suppressed_rows),
            ("table", "anonymous", self.anonymous),
        ]
        for m in self.models:
            rows += [(m.model, k, v) for k, v in asdict(m).items() if k not in ("model",)]
        rows += [("risk", k, v) for k, v in self.risk.items()]
        rows += [("loss", k, v) for k, v in self.loss.items()]
        return pd.DataFrame(rows, columns=["group", "measure", "value"])


def _seed004_privacy(stats: ClassStats, kept: np.ndarray) -> dict[str, float]:
    """Seed 004 Definitions 11 and 14 over the released classes: l_div (minimum of exp of
    the class entropy) and t_clo (maximum L1 distance to the table's distribution)."""
    if stats.pair_class is None or not kept.any():
        return {}
    ldiv = EntropyLDiversity(1).class_values(stats)[kept]
    tclo = L1Closeness(1).class_values(stats)[kept]
    return {"l_div": float(ldiv.min()), "t_clo": float(tclo.max())}


def evaluate_levels(
    db: Database,
    source: str,
    qis: list[str],
    levels: list[int],
    models: list[PrivacyModel],
    sensitive: str | list[str] | None = None,
    suppression: float = 0.0,
    hierarchies: dict[str, str] | None = None,
    population: str | None = None,
    sensitive_hierarchy: str | None = None,
    population_size: int | None = None,
    sampling_fraction: float | None = None,
    unit: str | None = None,
) -> Evaluation:
    """``population``: a table for journalist risk; ``population_size`` or
    ``sampling_fraction``: the population-uniqueness estimates are reported too; ``unit``:
    every count is of distinct units, as a run with that unit counts (README "Privacy
    units")."""
    from anonsql.models.multi_sa import (
        MULTI_SA,
        SA_COLUMN,
        composite,
        multi_sa_histogram,
        multi_sa_relation,
    )
    from anonsql.run import validate_columns
    from anonsql.spec import Spec, normalize_sensitive

    validate_columns(db, source, Spec(qis=qis, sensitive=sensitive, hierarchies=hierarchies or {}))
    names = [db.hierarchies.resolve(q, (hierarchies or {}).get(q)) for q in qis]
    if len(levels) != len(qis):
        raise InputError(f"give one level per QI ({len(qis)}), got {len(levels)}")
    sens_h = db.hierarchies.load(sensitive_hierarchy) if sensitive_hierarchy else None
    sensitive = normalize_sensitive(sensitive)
    several = sensitive if isinstance(sensitive, list) else None
    one = None if isinstance(sensitive, list) else sensitive  # the one attribute (or none)
    comp = None

    def histogram(relation: str) -> Histogram:
        nonlocal comp
        if several is None:
            return Histogram.from_database(db, relation, qis, names, one)
        # several sensitive attributes: their tuple as one composite value (models/multi_sa)
        got, comp = multi_sa_histogram(db, relation, qis, names, several)
        return got

    if unit is not None:
        from anonsql.backend.sql_templates import drop
        from anonsql.data.units import UNITS, units_relation

        shape = units_relation(db, source, qis, sensitive, unit)
        try:
            if shape.varying:
                # units of several records: their distinct records, units counted per class
                # (anonsql.models.unit_requirements)
                if several is None:
                    hist = Histogram.from_database(db, UNITS, qis, names, one, unit=unit)
                else:
                    multi_sa_relation(db, UNITS, [unit, *qis], several)
                    try:
                        hist = Histogram.from_database(
                            db, MULTI_SA, qis, names, SA_COLUMN, unit=unit
                        )
                        comp = composite(db, several, hist.sens_labels, hist.overall_distribution())
                    finally:
                        db.backend.execute(drop("table", MULTI_SA))
            else:
                hist = histogram(UNITS)
        finally:
            db.backend.execute(drop("table", UNITS))
        if shape.null_rows:
            raise InputError(f"{shape.null_rows} row(s) of {source!r} have no unit ({unit})")
    else:
        hist = histogram(source)
    for j, (lv, h) in enumerate(zip(levels, hist.hierarchies, strict=True)):
        if not 0 <= lv < h.height:
            raise InputError(f"{qis[j]!r}: level {lv} outside 0..{h.top_level}")
    if hist.unit_ids is not None:
        req: Requirements = UnitRequirements(
            models, suppression, sens_h, units=hist.units, missing_units=hist.missing_units
        )
        req.composite = comp
    else:
        req = Requirements(models, suppression, sens_h)
        req.composite = comp
        req.population = population_histogram(db, models, qis, names)
    req.validate(hist)
    part = Partition.from_histogram(hist, tuple(levels))
    assessment = req.assess(part, hist)
    stats = req.stats(part, hist)

    def _rows(m):
        return stats

    stats_of = _rows
    sizes = part.sizes
    attribute_stats = stats.attribute
    if isinstance(req, UnitRequirements):
        unit_stats = req.unit_stats(part, hist)
        stats_of, sizes = unit_stats.of, unit_stats.sizes

        def attribute_stats(i: int) -> ClassStats:
            return unit_stats.attribute(i)[0]

    # suppress failing classes only when the limit allows (ARX): otherwise nothing is
    # suppressed and the transformation is reported as not anonymous
    suppressed = assessment.suppressed if assessment.anonymous else np.zeros(part.classes, bool)
    reports = []
    for m in models:
        # a model on one of several attributes: with units, stats_of gives its attribute's
        values = (unwrap(m)[0] if stats_of is not _rows else m).class_values(stats_of(m))
        ok = m.passes(values) | suppressed
        report = _report(m, values[~suppressed], ok[~suppressed], sizes[~suppressed])
        if m.fails_unreleased(stats):
            # population classes without rows of the table (delta 0) fail delta-presence
            report.holds = False
            report.failing_classes += stats.population_only
            report.min_value = 0.0
        reports.append(report)
    pop_sizes = _population_sizes(db, population, qis, names, hist, part) if population else None
    risk = risk_measures(sizes, suppressed, pop_sizes).to_dict()
    rows, suppressed_rows = hist.rows, int(part.sizes[suppressed].sum())
    if isinstance(req, UnitRequirements):
        # the table's units and the suppressed ones, each counted once
        rows, suppressed_rows = req.units, int(assessment.suppressed_rows)
        risk.update(rows=rows, suppressed_rows=suppressed_rows)
        risk["suppressed_share"] = suppressed_rows / rows if rows else 0.0
    risk.update(uniqueness_report(sizes[~suppressed], population_size, sampling_fraction, rows))
    if comp is None:
        risk.update(_seed004_privacy(stats, ~suppressed))
    else:  # the worst attribute's
        assert several is not None  # the composite comes with several attributes
        per = [_seed004_privacy(attribute_stats(i), ~suppressed) for i in range(len(several))]
        if all(per):
            risk["l_div"] = min(p["l_div"] for p in per)
            risk["t_clo"] = max(p["t_clo"] for p in per)
    loss: dict[str, float] = {}
    for name in QUALITY:
        qm = quality_model(name)
        qm.prepare(hist)
        loss[name] = qm.score(part, suppressed)
    loss.update(_seed004_loss(hist, part, suppressed))
    return Evaluation(
        rows,
        int((~suppressed).sum()),
        suppressed_rows,
        assessment.anonymous,
        reports,
        risk,
        loss,
        dict(zip(qis, levels, strict=True)),
        unit,
    )


def _report(m: PrivacyModel, values, ok, sizes) -> ModelReport:
    finite = values[np.isfinite(values)] if len(values) else values
    return ModelReport(
        m.name,
        m.describe(),
        bool(ok.all()),
        int((~ok).sum()),
        int(sizes[~ok].sum()),
        float(finite.min()) if len(finite) else None,
        float(finite.max()) if len(finite) else None,
    )


def _seed004_loss(hist: Histogram, part: Partition, suppressed: np.ndarray) -> dict[str, float]:
    """Seed 004 Definitions 7 and 9 on a full-domain transformation; suppressed records
    count as generalized to the root."""
    out: dict[str, float] = {}
    n, m = hist.rows, len(hist.qis)
    # generalized node of every histogram row
    row_class = part.classes_of_rows(hist)
    gen = part.nodes[row_class].copy()
    supp_rows = suppressed[row_class]
    for j, h in enumerate(hist.hierarchies):
        gen[supp_rows, j] = h.root
    original = [hist.codes[:, j] for j in range(m)]
    generalized = [gen[:, j] for j in range(m)]
    for metric in METRICS:
        out[f"alteration_{metric}"] = UnifiedMetric(metric, hist.hierarchies).alteration(
            original, generalized, hist.counts
        )
    out["mean_alteration"] = float(np.mean([out[f"alteration_{x}"] for x in METRICS]))
    generalized_cells = sum(
        float(hist.counts[h.levels[gen[:, j]] > h.levels[hist.codes[:, j]]].sum())
        for j, h in enumerate(hist.hierarchies)
    )
    root_cells = sum(
        float(hist.counts[gen[:, j] == h.root].sum()) for j, h in enumerate(hist.hierarchies)
    )
    out["pct_generalized"] = 100.0 * generalized_cells / (n * m)
    out["pct_root"] = 100.0 * root_cells / (n * m)
    return out


def _population_sizes(db, population, qis, names, hist, part) -> np.ndarray:
    db.backend.require_columns(population, qis)
    pop = Histogram.from_database(db, population, qis, names)
    pop_part = Partition.from_histogram(pop, part.levels)
    keys = {tuple(r): s for r, s in zip(pop_part.nodes.tolist(), pop_part.sizes, strict=True)}
    sizes = np.array([keys.get(tuple(r), 0) for r in part.nodes.tolist()], dtype=np.float64)
    if (sizes < part.sizes).any():
        raise InputError(f"population {population!r} does not contain every sample record")
    return sizes


# -- tables that are already generalized ---------------------------------------------------
def check_table(
    db: Database,
    source: str,
    qis: list[str],
    models: list[PrivacyModel],
    sensitive: str | list[str] | None = None,
    sensitive_hierarchy: str | None = None,
    population_size: int | None = None,
    sampling_fraction: float | None = None,
    unit: str | None = None,
) -> Evaluation:
    """Run the models as SQL over the classes of ``source`` (with ``unit``, counting its
    distinct values: docs/models/units.md). Rows whose QIs are all ``*`` are
    suppressed: they count in the table but no model is tested on them. The table-level risk
    thresholds are measured over the released classes (average risk and sample uniqueness in
    SQL; population uniqueness from the class sizes the SQL returns, by its estimator)."""
    from anonsql.run import validate_columns
    from anonsql.spec import Spec, normalize_sensitive, sensitive_columns

    sensitive = normalize_sensitive(sensitive)
    validate_columns(db, source, Spec(qis=qis, sensitive=sensitive))
    if isinstance(sensitive, list) and any(m.name == "hierarchical-emd" for m in models):
        raise InputError(
            "hierarchical-EMD t-closeness reads the hierarchy of one sensitive attribute; "
            "with several, use another t variant"
        )
    needing = [m.describe() for m in models if m.needs_population]
    if needing:
        raise InputError(
            f"{', '.join(needing)}: check a transformation of the original table with "
            f"--levels, so the population's rows are generalized with the same levels"
        )
    top = None
    if any(m.needs_sensitive for m in models) and sensitive is None:
        raise InputError("l-diversity and t-closeness need a sensitive attribute (--sa)")
    if any(m.name == "hierarchical-emd" for m in models):
        # one sensitive attribute: required above, and several refused above
        assert isinstance(sensitive, str)
        name = db.hierarchies.resolve(sensitive, sensitive_hierarchy)
        db.hierarchies.check_column(source, sensitive, name)
        top = db.hierarchies.load(name).top_level
        # the SQL reads the hierarchy's current version by its pinned key
        key = db.hierarchies.pin(name)
        models = [
            HierarchicalEMD(m.t, key) if isinstance(m, HierarchicalEMD) else m for m in models
        ]
    counted: exp.Expression = exp.Count(this=exp.Star())
    if unit is not None:
        db.backend.require_columns(source, [unit])
        counted = exp.Count(this=exp.Distinct(expressions=[exp.cast(column(unit), "VARCHAR")]))
    rows = db.backend.fetchall(exp.select(counted).from_(table(source)))[0][0]
    distinct: dict[str | None, int | None] = {None: None}
    for attr in sensitive_columns(sensitive):
        distinct[attr] = db.backend.fetchall(
            exp.select(exp.Count(this=exp.Distinct(expressions=[column(attr)]))).from_(
                table(source)
            )
        )[0][0]

    def attribute_of(m) -> tuple[PrivacyModel, str | None]:
        # a model on one of several sensitive attributes runs on that attribute alone
        inner, index = unwrap(m)
        if index is not None:
            return inner, sensitive_columns(sensitive)[index]
        return m, sensitive if isinstance(sensitive, str) else None

    for m in models:
        inner, sa = attribute_of(m)
        inner.validate(rows, distinct[sa])
    reports = []
    frames = []
    for m in models:
        inner, sa = attribute_of(m)
        q = model_values_query(inner, source, qis, sa, db.backend.dialect, top, unit)
        df = db.backend.fetch_df(q)
        frames.append(df)
        kept = ~df["suppressed"].astype(bool)
        vals = df["value"].astype(float).fillna(np.inf).to_numpy()
        ok = df["ok"].astype(bool).to_numpy()
        if isinstance(m, PopulationUniqueness):
            # the estimators do not run in SQL: computed from the released class sizes
            sizes = df["size"].to_numpy()[kept.to_numpy()]
            holds = m.holds(sizes)
            vals = np.full(len(df), m.class_values(ClassStats(sizes))[0] if len(sizes) else 0.0)
            ok = np.full(len(df), holds)
        reports.append(_report(m, vals[kept], ok[kept], df["size"].to_numpy()[kept]))
    base = frames[0] if frames else None
    sizes = base["size"].to_numpy() if base is not None else np.array([])
    supp = base["suppressed"].astype(bool).to_numpy() if base is not None else np.array([])
    risk = risk_measures(sizes, supp).to_dict()
    if unit is not None:
        # a unit with rows in several classes counts in each class but once in the table
        risk["rows"] = int(rows)
        if supp.any():
            starred = exp.and_(
                *[exp.cast(column(q), "VARCHAR").eq(exp.convert(SUPPRESSED)) for q in qis]
            )
            risk["suppressed_rows"] = int(
                db.backend.fetchall(exp.select(counted.copy()).from_(table(source)).where(starred))[
                    0
                ][0]
            )
        risk["suppressed_share"] = risk["suppressed_rows"] / int(rows) if rows else 0.0
    if len(sizes):
        risk.update(uniqueness_report(sizes[~supp], population_size, sampling_fraction, int(rows)))
    for sa in sensitive_columns(sensitive):  # with several: the worst attribute's
        for extra, key, agg in (
            (EntropyLDiversity(1), "l_div", "min"),
            (L1Closeness(1), "t_clo", "max"),
        ):
            df = db.backend.fetch_df(model_values_query(extra, source, qis, sa, unit=unit))
            v = df.loc[~df["suppressed"].astype(bool), "value"].astype(float)
            if len(v):
                got = float(getattr(v, agg)())
                risk[key] = got if key not in risk else getattr(builtins, agg)(risk[key], got)
    return Evaluation(
        int(rows),
        risk["classes"],
        risk["suppressed_rows"],
        all(r.holds for r in reports),
        reports,
        risk,
        unit=unit,
    )


_LABELS = "__anonsql_label_costs"


def loss_of_tables(
    db: Database,
    original: str,
    generalized: str,
    qis: list[str],
    hierarchies: dict[str, str] | None = None,
    levels: dict[str, int] | None = None,
) -> dict[str, float]:
    """Seed 004's seven alterations, their mean, the percentages of generalized values and
    of values at the root, and ARX's Loss and Precision of a per-row generalization.

    ``levels``: the level each QI was generalized to (a full-domain run's recorded levels).
    A label is then read as the node of that level first, so a label standing on several
    levels (the demo's race ``Other``: a leaf, and the level-1 group of two leaves) costs
    what the run published; without it a label means its lowest node."""
    from anonsql.run import validate_columns
    from anonsql.spec import Spec

    validate_columns(db, original, Spec(qis=qis, hierarchies=hierarchies or {}))
    db.backend.require_columns(generalized, qis)
    names = [db.hierarchies.resolve(q, (hierarchies or {}).get(q)) for q in qis]
    hs = [db.hierarchies.load(n) for n in names]
    for q, n in zip(qis, names, strict=True):
        db.hierarchies.check_column(original, q, n)
    n_rows = db.backend.fetchall(exp.select("COUNT(*)").from_(table(original)))[0][0]
    n_gen = db.backend.fetchall(exp.select("COUNT(*)").from_(table(generalized)))[0][0]
    if n_rows != n_gen:
        raise InputError(f"{original!r} has {n_rows} rows but {generalized!r} has {n_gen}")
    unified = {m: UnifiedMetric(m, hs) for m in METRICS}
    frames = []
    for j, h in enumerate(hs):
        # a label standing on several levels means its lowest node, or its node at the
        # QI's known level; '*' (a suppressed cell) means the root
        order = np.argsort(h.levels, kind="stable")
        at = (levels or {}).get(qis[j])
        if at is not None:
            order = np.concatenate([order[h.levels[order] == at], order[h.levels[order] != at]])
        first: dict[str, int] = {}
        for node in order:
            first.setdefault(h.labels[node], int(node))
        first.setdefault(SUPPRESSED, h.root)
        # the original column is read at the leaves (rows with generalized = false)
        leaves: dict[str, int] = {}
        for node in order[h.levels[order] == 0]:
            leaves.setdefault(h.labels[node], int(node))
        for gen, mapping in ((True, first), (False, leaves)):
            nodes = np.array(list(mapping.values()), dtype=int)
            f = pd.DataFrame(
                {
                    "qi": j,
                    "generalized": gen,
                    "label": list(mapping),
                    "level": h.levels[nodes],
                    "share": h.leaf_counts[nodes] / len(h.leaf_ids),
                    "is_root": nodes == h.root,
                }
            )
            for m in METRICS:
                f[m] = unified[m].to_root[j][nodes]
            frames.append(f)
    db.backend.write_frame(_LABELS, pd.concat(frames, ignore_index=True), temporary=True)
    try:
        orig_sum = np.zeros((len(qis), len(METRICS)))
        gen_sum = np.zeros((len(qis), len(METRICS)))
        generalized_cells = root_cells = 0.0
        loss_raw = np.zeros(len(qis))
        precision = np.zeros(len(qis))
        for j, q in enumerate(qis):
            orig_sum[j] = _sums(db, original, q, j, leaves_only=True)[: len(METRICS)]
            sums = _sums(db, generalized, q, j, leaves_only=False)
            gen_sum[j] = sums[: len(METRICS)]
            generalized_cells += sums[len(METRICS)]
            root_cells += sums[len(METRICS) + 1]
            loss_raw[j] = sums[len(METRICS) + 2]
            precision[j] = sums[len(METRICS) + 3] / max(hs[j].top_level, 1) / n_rows
    finally:
        db.backend.execute(drop("table", _LABELS))
    out: dict[str, float] = {}
    for i, m in enumerate(METRICS):
        worst = orig_sum[:, i].sum()
        out[f"alteration_{m}"] = 100.0 * (worst - gen_sum[:, i].sum()) / worst if worst else 0.0
    out["mean_alteration"] = float(np.mean([out[f"alteration_{m}"] for m in METRICS]))
    out["pct_generalized"] = 100.0 * generalized_cells / (n_rows * len(qis))
    out["pct_root"] = 100.0 * root_cells / (n_rows * len(qis))
    lo = [n_rows / len(h.leaf_ids) for h in hs]
    norm = np.array(
        [
            max((loss_raw[j] - lo[j]) / (n_rows - lo[j]), 0.0) if n_rows > lo[j] else 0.0
            for j in range(len(qis))
        ]
    )
    out["loss"] = float(Loss._aggregate(arx_round(norm)[None, :])[0])
    out["precision"] = float(precision.mean())
    return out


def _sums(db: Database, source: str, q: str, j: int, leaves_only: bool) -> list[float]:
    """Per-QI sums over a table's column joined to its label costs."""
    lab = exp.alias_(table(_LABELS), "w", table=True)
    on = exp.and_(
        exp.column("qi", "w").eq(exp.convert(j)),
        exp.column("label", "w").eq(exp.cast(column(q, "s"), "VARCHAR")),
    )
    on = exp.and_(on, exp.column("generalized", "w").eq(exp.convert(not leaves_only)))
    sel = [exp.func("SUM", exp.column(m, "w")) for m in METRICS] + [
        exp.func(
            "SUM",
            exp.Case(
                ifs=[exp.If(this=exp.column("level", "w").neq(0), true=exp.convert(1))],
                default=exp.convert(0),
            ),
        ),
        exp.func(
            "SUM",
            exp.Case(
                ifs=[exp.If(this=exp.column("is_root", "w"), true=exp.convert(1))],
                default=exp.convert(0),
            ),
        ),
        exp.func("SUM", exp.column("share", "w")),
        exp.func("SUM", exp.column("level", "w")),
        exp.func("COUNT", exp.Star()),
        exp.func("COUNT", exp.column("label", "w")),
    ]
    query = (
        exp.select(*sel)
        .from_(exp.alias_(table(source), "s", table=True))
        .join(lab, on=on, join_type="left")
    )
    row = db.backend.fetchall(query)[0]
    total, matched = row[-2], row[-1]
    if total != matched:
        raise InputError(
            f"{total - matched} value(s) of {source}.{q} are not labels of its hierarchy"
        )
    return [float(x or 0) for x in row[:-2]]


__all__ = ["Evaluation", "ModelReport", "check_table", "evaluate_levels", "loss_of_tables"]

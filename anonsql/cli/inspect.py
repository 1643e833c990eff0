"""``anonsql check``, ``metrics``, ``represent``, ``evaluate`` and ``report``: looking at a
table or a run."""

from __future__ import annotations

import json
import sys

import click

from anonsql.cli.common import (
    _parse_pairs,
    _print_evaluation,
    _progress,
    _spec,
    db_option,
    echo_json,
    friendly,
    model_options,
    open_db,
    split_list,
)

#: ``anonsql check``'s exit status when a requested model does not hold (1 is bad input, as
#: for every command; 2 is click's for a malformed command line)
MODEL_FAILS = 3


@click.command()
@click.argument("table")
@click.option("--qi", required=True, help="Quasi-identifiers, comma-separated.")
@click.option("--sa", help="Sensitive attribute(s), comma-separated.")
@model_options
@click.option("--levels", help="Check a transformation of TABLE instead: QI=LEVEL,...")
@click.option(
    "--suppression",
    type=float,
    default=0.0,
    show_default=True,
    help="With --levels: share of records that may be suppressed.",
)
@click.option("--hierarchy", "hierarchy_pairs", multiple=True, help="QI=NAME (with --levels).")
@click.option(
    "--unit",
    help="Count distinct values of this column (the privacy unit: a person, a household), "
    "not rows: class sizes, l-diversity's values, the distributions and the risk figures.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@db_option
@friendly
def check(
    table, qi, sa, levels, suppression, hierarchy_pairs, unit, as_json, db_path, **goal
) -> None:
    """Check privacy models on TABLE's classes and print risk figures. With
    --population-size or --sampling-fraction the population-uniqueness estimates (Pitman,
    Zayatz, SNB, Dankar) are reported too.

    Exit status: 0 every requested model holds; 3 a model does not hold (with --levels:
    the transformation is not anonymous); 1 bad input (unknown table or column, bad
    option value), 2 a malformed command line.

    \b
    Examples (on the demo database):
      anonsql check census_anonymized --qi age,sex,race,marital_status,education,zip --k 5
      anonsql check census --qi age,sex,zip --levels age=2,sex=0,zip=2 --k 5 --json
    """
    from anonsql.errors import InputError
    from anonsql.evaluation.checks import check_table, evaluate_levels
    from anonsql.models.goal import build_models

    # --population, --population-size and --sampling-fraction also serve the report alone
    # (journalist risk, uniqueness estimates) when no model reads them
    population = goal["population"]
    population_size, sampling_fraction = goal["population_size"], goal["sampling_fraction"]
    if goal["k_map"] is None and goal["delta_min"] is None and goal["delta_max"] is None:
        goal["population"] = None
    if goal["max_population_uniqueness"] is None and (
        goal["k_map"] is None or goal["population"] is not None
    ):
        goal["population_size"] = goal["sampling_fraction"] = None
    spec = _spec(qi, sa, **goal)
    estimate = {"population_size": population_size, "sampling_fraction": sampling_fraction}
    models = build_models(spec)
    db = open_db(db_path, create=False)
    if spec.t is not None and spec.t_variant == "hierarchical-emd" and sa is not None:
        # the model's SQL reads the closure rows of a pinned version key, not of a name
        name = db.hierarchies.resolve(sa, goal["sa_hierarchy"])
        models = build_models(spec, db.hierarchies.pin(name))
    if levels:
        pairs = _parse_pairs((levels,), "--levels")
        missing = [q for q in spec.qis if q not in pairs]
        if missing:
            raise InputError(f"--levels lacks {', '.join(missing)}")
        ev = evaluate_levels(
            db,
            table,
            spec.qis,
            [int(pairs[q]) for q in spec.qis],
            models,
            sa,
            suppression,
            _parse_pairs(hierarchy_pairs, "--hierarchy"),
            population,
            goal["sa_hierarchy"],
            **estimate,
            unit=unit,
        )
    else:
        ev = check_table(
            db, table, spec.qis, models, sa, goal["sa_hierarchy"], **estimate, unit=unit
        )
    from anonsql.output.status import table_roles, unit_of_output

    # an output whose run counted people holds no unit column: its rows are all a check of
    # the output can count, and it says so (docs/models/units.md)
    counted_by_run = None if unit else unit_of_output(db, table)
    note = None
    if counted_by_run is not None:
        note = (
            f"note: {table}'s run counted people (units of {counted_by_run}), a column the "
            f"output does not hold: these figures count rows; `anonsql status {table}` and "
            f"`anonsql report {table}` count people"
        )
    _print_evaluation(
        ev, as_json, table_roles(db, table, spec.qis, spec.sensitive), note, counted_by_run
    )
    if not all(m.holds for m in ev.models) or (levels and not ev.anonymous):
        sys.exit(MODEL_FAILS)


@click.command()
@click.argument("original")
@click.argument("generalized", required=False)
@click.option("--qi", required=True, help="Quasi-identifiers, comma-separated.")
@click.option("--levels", help="Instead of GENERALIZED: a transformation QI=LEVEL,...")
@click.option("--hierarchy", "hierarchy_pairs", multiple=True, help="QI=NAME.")
@click.option("--json", "as_json", is_flag=True)
@db_option
@friendly
def metrics(original, generalized, qi, levels, hierarchy_pairs, as_json, db_path) -> None:
    """Information loss of GENERALIZED (or of --levels) against ORIGINAL: the seven
    alterations of the unified loss metrics (Mauger et al. 2023) and quality
    criteria, ARX's Loss and Precision (and with --levels every ARX quality model).

    When an anonsql run wrote GENERALIZED, its labels are read at the run's levels, so the
    Loss is the run's score. --levels suppresses no record (it applies no privacy model),
    so its Loss leaves out the suppressed records' cost (the command line's page of the
    documentation, "One Loss per run").

    \b
    Examples:
      anonsql metrics census census_anonymized --qi age,sex,zip
      anonsql metrics census --qi age,sex,zip --levels age=2,sex=0,zip=3
    """
    from anonsql.errors import InputError
    from anonsql.evaluation.checks import evaluate_levels, loss_of_tables
    from anonsql.models import KAnonymity

    qis = split_list(qi)
    hier = _parse_pairs(hierarchy_pairs, "--hierarchy")
    db = open_db(db_path, create=False)
    if bool(generalized) == bool(levels):
        raise InputError("give either GENERALIZED or --levels")
    if levels:
        pairs = _parse_pairs((levels,), "--levels")
        ev = evaluate_levels(
            db,
            original,
            qis,
            [int(pairs.get(q, -1)) for q in qis],
            [KAnonymity(1)],
            hierarchies=hier,
        )
        # no privacy model, so no record suppressed: say so beside the figures, which
        # differ from the run's (docs/surfaces/cli.md, "One Loss per run")
        figures = {"suppressed_rows": 0, **ev.loss}
    else:
        run_levels = _run_levels(db, original, generalized, qis)
        figures = loss_of_tables(db, original, generalized, qis, hier, run_levels)
        if run_levels and not as_json:
            click.echo("(labels read at the levels of the run that wrote it)", err=True)
    if as_json:
        echo_json("metrics", figures)
    else:
        for k, v in figures.items():
            click.echo(f"{k} = {v:.10g}")


def _run_levels(db, original: str, generalized: str, qis: list[str]) -> dict[str, int] | None:
    """The levels of the latest full-domain run that wrote GENERALIZED from ORIGINAL, if
    any: they tell which node a label standing on several levels is."""
    from anonsql.cli.runs import list_runs

    runs = [
        r
        for r in list_runs(db, generalized)
        if isinstance(r["levels"], dict) and db.backend.same_relation(r["source"], original)
    ]
    if not runs:
        return None
    levels = runs[-1]["levels"]
    return {q: int(levels[q]) for q in qis if levels.get(q) is not None}


@click.command()
@click.argument("run_id", type=int)
@click.option(
    "--kind",
    type=click.Choice(["proportional", "oneclass", "fillparent", "fillchild"]),
    default="proportional",
    show_default=True,
    help="The proportional representation of k-anonymous data for data mining, or one of "
    "its paper's Table II baselines.",
)
@click.option("--out", "name", help="Name of the view/table (default: <output>_<kind>).")
@click.option(
    "--materialize", type=click.Choice(["view", "table"]), default="view", show_default=True
)
@click.option(
    "--replace",
    is_flag=True,
    help="Replace a relation of that name that anonsql did not write (never the run's source).",
)
@db_option
@friendly
def represent(
    run_id: int, kind: str, name: str | None, materialize: str, replace: bool, db_path: str
) -> None:
    """Materialize a data-mining encoding of RUN_ID's output: one column <qi>__<node> per
    hierarchy node (the proportional representation of the k-anonymous data
    representation paper, with its baselines).

    \b
    Example:
      anonsql represent 1 --kind proportional
    """
    from anonsql.evaluation.representation import materialize_representation

    made = materialize_representation(
        open_db(db_path, create=False), run_id, kind, name, materialize, replace=replace
    )
    click.echo(f"wrote {materialize} {made!r}")


@click.command()
@click.argument("run_id", type=int)
@click.option(
    "--target",
    help="Column to predict (not a QI): binary (AUC-ROC) or with more values (macro AUC).",
)
@click.option(
    "--seeds",
    type=int,
    help="Network initializations [default: 10]; with --task: runs (split, network, k-means) "
    "[default: 3].",
)
@click.option(
    "--task",
    type=click.Choice(["classification", "clustering", "groups"]),
    help="The TA_DA paper's protocol instead: "
    "classification of --label "
    "(64-32-16 network, accuracy and macro F1 on a held-out 20 %) or clustering (k-means, ARI "
    "and NMI against the raw rows), against the raw rows as baseline.",
)
@click.option(
    "--label",
    help="With --task: the column to predict (classification); no feature (clustering).",
)
@click.option("--ignore", help="With --task: columns that are no features, comma-separated.")
@click.option(
    "--clusters", default=5, show_default=True, help="With --task clustering: k-means' k."
)
@click.option(
    "--protocol",
    type=click.Choice(["paper", "per-encoding"]),
    default="paper",
    show_default=True,
    help="paper: one model trained on the original table (proportional), tested on every "
    "encoding; per-encoding: a model per encoding, trained on the original in that encoding.",
)
@click.option("--train-run", type=int, help="Train on this run's output instead (Figs. 4-5).")
@click.option(
    "--train-kind",
    type=click.Choice(["proportional", "oneclass", "fillparent", "fillchild"]),
    default="proportional",
    show_default=True,
    help="With --train-run: the encoding the model trains on.",
)
@click.option("--json", "as_json", is_flag=True)
@db_option
@friendly
def evaluate(
    run_id: int,
    target: str | None,
    seeds: int | None,
    task: str | None,
    label: str | None,
    ignore: str | None,
    clusters: int,
    protocol: str,
    train_run: int | None,
    train_kind: str,
    as_json: bool,
    db_path: str,
) -> None:
    """Data utility of RUN_ID's output for data mining (the MLP protocol of the
    k-anonymous data representation paper): an MLP trained once (on
    the original table, or on --train-run's output), scored on each encoding of RUN_ID's
    held-out rows: AUC and accuracy. With --task: the TA_DA paper's downstream task on the
    released rows, any algorithm's output (intervals by midpoints, sets and hierarchy
    nodes multi-hot). --task groups: Zouinina et al.'s measures of the released groups (numeric
    QIs): Silhouette, Davies-Bouldin, structural utility, with --label separability and
    combined utility. Needs anonsql[eval].

    \b
    Examples:
      anonsql evaluate 1 --target income --seeds 3
      anonsql evaluate 2 --task classification --label occupation
      anonsql evaluate 2 --task clustering --label occupation
      anonsql evaluate 3 --task groups --label income
    """
    from dataclasses import asdict

    from anonsql.evaluation.mlp import evaluate_run

    if task is not None:
        if train_run is not None or protocol != "paper":
            raise click.UsageError(
                "--protocol and --train-run belong to the MLP protocol, not to --task."
            )
        if task == "groups":  # seed 001's measures (README: Microaggregation)
            _evaluate_groups(run_id, label or target, as_json, db_path)
        else:
            _evaluate_task(run_id, task, label or target, seeds, ignore, clusters, as_json, db_path)
        return
    if target is None:
        raise click.UsageError("Missing option '--target' (or name a --task).")
    seeds = 10 if seeds is None else seeds

    with _progress(as_json, "networks trained") as progress:
        scores = evaluate_run(
            open_db(db_path, create=False), run_id, target, seeds, protocol=protocol,
            train_run=train_run, train_kind=train_kind, progress=progress,
        )  # fmt: skip
    if as_json:
        echo_json("utility", [asdict(s) for s in scores])
        return
    click.echo(f"trained on: {scores[0].trained_on if scores else '-'}")
    for s in sorted(scores, key=lambda s: -s.mean_auc):
        click.echo(
            f"{s.representation:12s} AUC {s.mean_auc:.4f} +- {s.std_auc:.4f}  "
            f"accuracy {s.mean_accuracy:.4f} +- {s.std_accuracy:.4f}"
        )


def _evaluate_groups(run_id, label, as_json, db_path) -> None:
    from dataclasses import asdict

    from anonsql.evaluation.groups import evaluate_groups

    ev = evaluate_groups(open_db(db_path, create=False), run_id, label)
    if as_json:
        echo_json("group_utility", asdict(ev))
        return
    click.echo(
        f"{ev.groups} groups (smallest {ev.smallest_group}) over {ev.rows} released rows "
        f"({ev.suppressed_rows} suppressed), QIs: {', '.join(ev.qis)}"
    )
    sil = "-" if ev.silhouette is None else f"{ev.silhouette:.4f}"
    click.echo(f"silhouette {sil}, Davies-Bouldin {ev.davies_bouldin:.4f}")
    click.echo(f"structural utility {ev.structural_utility:.4f} (1 - mean normalized W1)")
    if ev.separability is not None and ev.combined_utility is not None:
        click.echo(
            f"separability {ev.separability:.4f} (decision tree, 10-fold, label {ev.label}), "
            f"combined utility {ev.combined_utility:.4f}"
        )


def _evaluate_task(run_id, task, label, seeds, ignore, clusters, as_json, db_path) -> None:
    from dataclasses import asdict

    from anonsql.evaluation.task import evaluate_task

    with _progress(as_json, "runs") as progress:
        ev = evaluate_task(
            open_db(db_path, create=False), run_id, task, label, 3 if seeds is None else seeds,
            split_list(ignore) if ignore else [], clusters, progress=progress,
        )  # fmt: skip
    if as_json:
        echo_json("task_utility", asdict(ev))
        return
    what = f"label {ev.label}, 80/20 split" if task == "classification" else f"k = {clusters}"
    click.echo(
        f"{task} ({what}), seeds {ev.seeds}, {ev.rows} rows ({ev.suppressed_rows} suppressed), "
        f"features: {', '.join(ev.features)}"
    )
    for which in ("anonymized", "raw"):
        mean, std = ev.mean(which), ev.std(which)
        cells = "  ".join(f"{m} {mean[m]:.4f} +- {std[m]:.4f}" for m in mean)
        click.echo(f"{which:10s}  {cells}")


@click.command()
@click.argument("run_id", type=int)
@click.option("--out", "out_dir", default=".", show_default=True, help="Folder for the files.")
@click.option("--population", help="Population table, for the journalist risk.")
@click.option(
    "--population-size",
    type=int,
    help="Population size N for the population-uniqueness estimates (default: the run's).",
)
@click.option("--sampling-fraction", type=float, help="Or the sampling fraction f = rows / N.")
@db_option
@friendly
def report(
    run_id: int,
    out_dir: str,
    population: str | None,
    population_size: int | None,
    sampling_fraction: float | None,
    db_path: str,
) -> None:
    """Write RUN_ID's report as JSON and as a self-contained HTML page.

    \b
    Examples:
      anonsql runs --last 1
      anonsql report 1 --out reports
    """
    from anonsql.evaluation.report import build_report, write_report

    db = open_db(db_path, create=False)
    # two steps: the figures (queries over the output) and the two files
    with _progress(False, "report steps") as progress:
        progress(0, 2)
        figures = build_report(db, run_id, population, population_size, sampling_fraction)
        progress(1, 2)
        paths = write_report(figures, out_dir)
    for path in paths:
        click.echo(str(path))


@click.command()
@click.argument("table")
@click.option("--columns", help="Only these columns, comma-separated (default: all).")
@click.option("--json", "as_json", is_flag=True, help="Print the profile as JSON.")
@db_option
@friendly
def profile(table: str, columns: str | None, as_json: bool, db_path: str) -> None:
    """What each column of TABLE holds, measured in the engine: type, NULL share, distinct
    values, the share of rows whose value no other row holds, a detected kind (e-mail,
    phone, IP address, IBAN, card number, URL, date, postal code, person name, free text,
    ...), and the role and hierarchy builder anonsql suggests. A column that looks like a
    direct identifier (unique on 95%+ of rows, or of an identifier kind) is suggested a mask.

    \b
    Example (on the demo database):
      anonsql profile census
    """
    from anonsql.masking.profile import TableProfile, profile_table

    db = open_db(db_path, create=False)
    prof = TableProfile(table, profile_table(db, table, split_list(columns) or None))
    if as_json:
        echo_json("profile", prof.to_dict())
    else:
        click.echo(prof.text())


@click.command("algorithms")
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON.")
def algorithms_cmd(as_json: bool) -> None:
    """Every algorithm: what it does (method and paper), its recoding, its guarantee, the
    privacy models and options it takes, whether it needs hierarchies, the engines.

    \b
    Example:
      anonsql algorithms
    """
    from anonsql.algorithms.catalog import catalog

    infos = catalog()
    if as_json:
        click.echo(json.dumps([i.to_dict() for i in infos], indent=2))
        return
    for i in infos:
        click.echo(f"{i.name}: {i.summary}")
        click.echo(f"  recoding: {i.recoding}")
        click.echo(f"  guarantee: {i.guarantee}")
        click.echo(f"  models: {', '.join(i.models)}")
        click.echo(f"  own options: {', '.join(i.options)}")
        limit = "a suppression limit" if i.suppression else "no suppression (0)"
        units = "; counts privacy units (--unit)" if i.units else ""
        click.echo(f"  takes {limit}; hierarchies {i.hierarchies}{units}")
        click.echo(f"  engines: {', '.join(i.engines)}")

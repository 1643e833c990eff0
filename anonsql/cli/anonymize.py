"""``anonsql anonymize`` and ``anonsql run``: anonymization runs from options or spec files."""

from __future__ import annotations

from typing import Any

import click

from anonsql.algorithms.catalog import CATALOG
from anonsql.cli.common import (
    DB_HELP,
    ROLE_PARAMS,
    _echo_result,
    _parse_pairs,
    _progress,
    _spec,
    algorithm_options,
    db_option,
    echo_json,
    friendly,
    model_options,
    open_db,
    progress_label,
    role_options,
    role_values,
    run_qis,
    split_list,
    wait_option,
)

#: why anonymize and run refuse a database file that does not exist
SOURCE_NEEDED = "so it holds no table to anonymize (check --db; nothing was created)"


@click.command()
@click.argument("table")
@click.option("--qi", required=True, help="Quasi-identifiers, comma-separated.")
@click.option(
    "--sa",
    help="Sensitive attribute(s) for l-diversity, t-closeness, beta-likeness and "
    "delta-disclosure, comma-separated: each model applies to each.",
)
@model_options
@click.option(
    "--suppression",
    type=float,
    default=0.0,
    show_default=True,
    help="Share of records that may be suppressed, in [0, 1].",
)
@click.option(
    "--metric",
    default=None,
    help="Quality model: loss (default), precision, height, entropy, entropy-nm, aecs, dm, "
    "dm-star, or the unified loss metrics of Mauger et al. (distortion, ncp, total, llm, "
    "nllm, wllm, wnllm; with greedy: "
    "one of those seven, default nllm).",
)
@click.option(
    "--gs-factor",
    type=float,
    default=0.5,
    show_default=True,
    help="Loss only: ARX's gsFactor in [0, 1] weighing generalization against suppression "
    "(0 favours suppression, 1 generalization, 0.5 weighs them the same).",
)
@click.option(
    "--algorithm",
    default="flash",
    show_default=True,
    # the catalog (light) lists exactly the algorithms ``algorithm`` takes (its test)
    type=click.Choice(list(CATALOG)),
    help="flash/exhaustive: optimal full-domain recoding; heuristic: best-effort full-domain "
    "search for lattices too large to enumerate (always anonymous, not proven optimal); "
    "greedy: the Greedy Anonymization Algorithm, GAA (Mauger, Le Mahec, Dequen); rho-gain: "
    "generalization with fewer outlier records, extra passes over the suppressed outliers "
    "(--rho); mondrian: Mondrian with l-diversity (QIs need no hierarchy); tada: "
    "target-aware anonymization for a downstream analysis (--label or --cluster); mdav, "
    "ktca, ctca, kde: microaggregation of numeric QIs by clustering (--label: the "
    'wLVQ2-supervised "++" variant); safepub: (epsilon, delta)-differential privacy '
    "(--dp-epsilon, --dp-delta). Papers: see the References page of the documentation.",
)
@algorithm_options
@click.option(
    "--hierarchy",
    "hierarchy_pairs",
    multiple=True,
    help="QI=NAME when a QI's hierarchy is not named after it (repeatable).",
)
@click.option("--out", "output", help="Name of the output view or table.")
@click.option(
    "--columns", help="Columns of the output, comma-separated (default: all the source's)."
)
@role_options
@click.option(
    "--missing",
    type=click.Choice(["error", "suppress"]),
    default="error",
    show_default=True,
    help="A QI value its hierarchy lacks (or NULL): an error, or suppress those rows (they "
    "count toward --suppression).",
)
@click.option(
    "--materialize", type=click.Choice(["view", "table"]), default="view", show_default=True
)
@click.option("--drop-suppressed", is_flag=True, help="Leave suppressed rows out.")
@click.option("--replace", is_flag=True, help="Replace --out even if anonsql did not create it.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@db_option
@friendly
def anonymize(
    table,
    qi,
    sa,
    suppression,
    metric,
    gs_factor,
    algorithm,
    hierarchy_pairs,
    output,
    columns,
    missing,
    materialize,
    drop_suppressed,
    replace,
    as_json,
    db_path,
    **goal,
) -> None:
    """Find the optimal generalization of TABLE and materialize it as --out.

    \b
    Every column of the output needs a role: a QI (--qi), the sensitive attribute (--sa),
    kept as is (--keep), or an identifier under a mask (--mask COL=METHOD); --columns
    chooses the output's columns. `anonsql profile TABLE` suggests a role for each.

    \b
    Examples (on the demo database, after `anonsql demo`):
      anonsql anonymize census --qi age,sex,zip --k 5 --suppression 0.05 --out census_k5 \\
          --keep race,marital_status,education,country,occupation,income
      anonsql anonymize census --qi age,sex,zip --sa income --k 5 --l 2 --json \\
          --columns age,sex,zip,income
    """
    from anonsql.run import anonymize as run

    roles = role_values(**{k: goal.pop(k) for k in ROLE_PARAMS})
    spec = _spec(
        qi,
        sa,
        **goal,
        suppression=suppression,
        metric=metric,
        gs_factor=gs_factor,
        algorithm=algorithm,
        hierarchies=_parse_pairs(hierarchy_pairs, "--hierarchy"),
        output=output,
        columns=split_list(columns) or None,
        **roles,
        missing=missing,
        materialize=materialize,
        drop_suppressed=drop_suppressed,
        replace=replace,
    )
    db = open_db(db_path, create=False, why=SOURCE_NEEDED)
    with _progress(as_json, progress_label(spec.algorithm)) as progress:
        result = run(db, table, spec, progress)
    if spec.output is None and not as_json:
        click.echo("nothing written: give --out NAME to publish the result as a view or table")
    _echo_result(result, as_json, spec.qis)


@click.command("run")
@click.argument("spec_file", type=click.Path(dir_okay=False))
@click.option("--db", "db_path", default=None, envvar="ANONSQL_DB", help=DB_HELP + " "
              "Default: the spec file's 'database', else anonsql.duckdb.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@wait_option
@friendly
def run_cmd(spec_file: str, db_path: str | None, as_json: bool) -> None:
    """Run the anonymization a spec file (TOML or JSON) describes.

    \b
    Example:
      anonsql run spec.toml --db anonsql.duckdb
    """
    from anonsql.api import run
    from anonsql.spec_file import load_spec_file

    spec = load_spec_file(spec_file)
    db = open_db(db_path or spec.database or "anonsql.duckdb", create=False, why=SOURCE_NEEDED)
    options = spec.options.spec
    with _progress(as_json, progress_label(options.algorithm)) as progress:
        result = run(db, spec.table, spec.options, spec.path.parent, progress)
    _echo_result(result, as_json, options.qis)


@click.command()
@click.argument("output", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@db_option
@friendly
def status(output: str | None, as_json: bool, db_path: str) -> None:
    """Drift of published outputs: rows and suppressed share at the run and now, and whether
    the suppression limit still holds (exit 1 when it does not for some output).

    \b
    Examples:
      anonsql status
      anonsql status census_anonymized --json
    """
    import sys

    from anonsql.algorithms.dp.budget import budgets
    from anonsql.algorithms.dp.sampling import stale_samples
    from anonsql.output.status import output_status

    db = open_db(db_path, create=False)
    statuses = output_status(db, output)
    # stored DP samples whose output was dropped by hand: the next write drops them
    orphans = stale_samples(db, None)[1] if db.backend.table_exists("anonsql_runs") else []
    if as_json:
        body: dict[str, list[Any]] = {"items": [s.to_dict() for s in statuses]}
        body["budgets"] = [b.to_dict() for b in budgets(db)]  # differential privacy
        body["orphaned_samples"] = orphans
        echo_json("status", body)
    elif not statuses:
        click.echo("no outputs written by anonsql in this database")
    if orphans and not as_json:
        click.echo(
            f"stored samples of dropped DP outputs (sampled source rows, restricted; the "
            f"next anonsql write drops them): {', '.join(orphans)}"
        )
    spent = [] if as_json else budgets(db)
    if spent:  # differential privacy: the budget spent per source table
        click.echo("privacy budget (differential privacy, per source table):")
        for b in spent:
            click.echo(f"  {b.describe()}")
    for s in [] if as_json else statuses:
        verdict = "within" if s.within_limit else "OVER"
        note = " (table snapshot: 'now' is what a refresh would release)" if s.snapshot else ""
        what = f"units of {s.unit}" if s.unit else "rows"  # what the limit counts
        click.echo(
            f"{s.output} ({s.kind}, run {s.run_id}, {s.algorithm} on {s.source}){note}\n"
            f"  at run: {s.rows_at_run} {what}, {s.suppressed_at_run} suppressed "
            f"({s.share_at_run:.2%})\n"
            f"  now:    {s.rows_now} {what}, {s.suppressed_now} suppressed ({s.share_now:.2%}), "
            f"{verdict} the limit of {s.suppression_limit:.2%}"
        )
        if s.roles:
            click.echo("  columns: " + ", ".join(f"{c} ({r})" for c, r in s.roles.items()))
    if not all(s.within_limit for s in statuses):
        sys.exit(1)


@click.command()
@click.argument("output")
@click.option(
    "--missing",
    type=click.Choice(["error", "suppress"]),
    default=None,
    help="Override the run's choice for QI values the hierarchies lack.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@db_option
@friendly
def refresh(output: str, missing: str | None, as_json: bool, db_path: str) -> None:
    """Re-run OUTPUT's stored spec on the current source and hierarchies and replace OUTPUT
    atomically (SQL: REFRESH VIEW name ANONYMIZATION).

    \b
    Example:
      anonsql refresh census_anonymized --missing suppress
    """
    from anonsql.run import refresh as run_refresh

    db = open_db(db_path, create=False)
    with _progress(as_json) as progress:
        result = run_refresh(db, output, progress, missing=missing)
    if result.algorithm == "safepub" and not as_json:
        click.echo(
            "refresh of a differentially private release: a new sample was drawn and the "
            "release's epsilon and delta were spent again (anonsql status shows the budget)",
            err=True,
        )
    _echo_result(result, as_json, run_qis(db, result.run_id))

"""``anonsql anonymize`` and ``anonsql run``: anonymization runs from options or spec files."""

from __future__ import annotations

import click

from anonsql.cli.common import (
    DB_HELP,
    _echo_result,
    _parse_pairs,
    _print_result,
    _progress,
    _spec,
    db_option,
    friendly,
    model_options,
    open_db,
    split_list,
)


@click.command()
@click.argument("table")
@click.option("--qi", required=True, help="Quasi-identifiers, comma-separated.")
@click.option("--sa", help="Sensitive attribute (for l-diversity and t-closeness).")
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
    "dm-star, or seed 004's distortion, ncp, total, llm, nllm, wllm, wnllm (with greedy: "
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
    type=click.Choice(["flash", "exhaustive", "heuristic", "greedy"]),
    help="flash/exhaustive: optimal full-domain recoding; heuristic: best-effort full-domain "
    "search for lattices too large to enumerate (always anonymous, not proven optimal); "
    "greedy: seed 004's GAA.",
)
@click.option(
    "--time-limit",
    type=float,
    default=None,
    help="heuristic only: stop after this many seconds (default 30, as ARX).",
)
@click.option(
    "--steps",
    type=int,
    default=None,
    help="heuristic only: stop after this many node checks (default: no limit).",
)
@click.option(
    "--strategy",
    default="s1",
    show_default=True,
    type=click.Choice(["s1", "s2", "s3", "s4", "s5", "s6", "s7", "ldiv", "tclo"]),
    help="GAA's merging strategy (seed 004 Def. 17; ldiv/tclo: the pure references).",
)
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
@click.option(
    "--identifiers",
    help="Direct identifiers, comma-separated: left out of the output whatever --columns says.",
)
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
@click.option(
    "--solution-space",
    is_flag=True,
    help="Also find and score every minimal anonymous transformation.",
)
@click.option(
    "--assume-monotone",
    is_flag=True,
    help="Prune as if every model were monotone with suppression (ARX's practical "
    "monotonicity): faster, but may miss the optimum; the result's guarantee says so.",
)
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
    time_limit,
    steps,
    strategy,
    hierarchy_pairs,
    output,
    columns,
    identifiers,
    missing,
    materialize,
    drop_suppressed,
    solution_space,
    assume_monotone,
    replace,
    as_json,
    db_path,
    **goal,
) -> None:
    """Find the optimal generalization of TABLE and materialize it as --out."""
    import json

    from anonsql.anonymization import anonymize as run

    spec = _spec(
        qi,
        sa,
        **goal,
        suppression=suppression,
        metric=metric,
        gs_factor=gs_factor,
        algorithm=algorithm,
        time_limit=time_limit,
        steps=steps,
        strategy=strategy,
        hierarchies=_parse_pairs(hierarchy_pairs, "--hierarchy"),
        output=output,
        columns=split_list(columns) or None,
        identifiers=split_list(identifiers) or None,
        missing=missing,
        materialize=materialize,
        drop_suppressed=drop_suppressed,
        solutions=solution_space,
        assume_monotone=assume_monotone,
        replace=replace,
    )
    db = open_db(db_path)
    with _progress(as_json) as progress:
        result = run(db, table, spec, progress)
    if as_json:
        click.echo(json.dumps(result.summary(), indent=2, default=float))
    else:
        _print_result(result)


@click.command("run")
@click.argument("spec_file", type=click.Path(dir_okay=False))
@click.option("--db", "db_path", default=None, envvar="ANONSQL_DB", help=DB_HELP + " "
              "Default: the spec file's 'database', else anonsql.duckdb.")  # fmt: skip
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@friendly
def run_cmd(spec_file: str, db_path: str | None, as_json: bool) -> None:
    """Run the anonymization a spec file (TOML or JSON) describes."""
    from anonsql.api import run
    from anonsql.spec_file import load_spec_file

    spec = load_spec_file(spec_file)
    db = open_db(db_path or spec.database or "anonsql.duckdb")
    with _progress(as_json) as progress:
        result = run(db, spec.table, spec.options, spec.path.parent, progress)
    _echo_result(result, as_json)


@click.command()
@click.argument("output", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@db_option
@friendly
def status(output: str | None, as_json: bool, db_path: str) -> None:
    """Drift of published outputs: rows and suppressed share at the run and now, and whether
    the suppression limit still holds (exit 1 when it does not for some output)."""
    import json
    import sys

    from anonsql.output.status import output_status

    statuses = output_status(open_db(db_path), output)
    if as_json:
        click.echo(json.dumps([s.to_dict() for s in statuses], indent=2))
    elif not statuses:
        click.echo("no outputs written by anonsql in this database")
    for s in [] if as_json else statuses:
        verdict = "within" if s.within_limit else "OVER"
        note = " (table snapshot: 'now' is what a refresh would release)" if s.snapshot else ""
        click.echo(
            f"{s.output} ({s.kind}, run {s.run_id}, {s.algorithm} on {s.source}){note}\n"
            f"  at run: {s.rows_at_run} rows, {s.suppressed_at_run} suppressed "
            f"({s.share_at_run:.2%})\n"
            f"  now:    {s.rows_now} rows, {s.suppressed_now} suppressed ({s.share_now:.2%}), "
            f"{verdict} the limit of {s.suppression_limit:.2%}"
        )
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
    atomically (SQL: REFRESH VIEW name ANONYMIZATION)."""
    from anonsql.output.status import refresh as run_refresh

    db = open_db(db_path)
    with _progress(as_json) as progress:
        result = run_refresh(db, output, progress, missing=missing)
    _echo_result(result, as_json)

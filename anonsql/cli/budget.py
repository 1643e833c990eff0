"""``anonsql budget``: the differential-privacy budget of source tables (set a limit, show
what was spent)."""

from __future__ import annotations

import click

from anonsql.cli.common import db_option, echo_json, friendly, open_db


@click.group("budget")
def budget() -> None:
    """The privacy budget (epsilon, delta) of differentially private releases, per source
    table: every safepub release spends its epsilon and delta; a limit refuses releases
    beyond it.

    \b
    Examples:
      anonsql budget set adult --epsilon 3 --delta 1e-4
      anonsql budget show
    """


@budget.command("set")
@click.argument("table")
@click.option(
    "--epsilon", type=float, required=True, help="The most epsilon all releases of TABLE may spend."
)
@click.option("--delta", type=float, required=True, help="The most delta they may spend.")
@click.option("--json", "as_json", is_flag=True, help="Print the budget as JSON.")
@db_option
@friendly
def set_cmd(table: str, epsilon: float, delta: float, as_json: bool, db_path: str) -> None:
    """Set TABLE's limit (releases already made count against it).

    \b
    Example:
      anonsql budget set adult --epsilon 3 --delta 1e-4
    """
    from anonsql.algorithms.dp.budget import set_budget

    b = set_budget(open_db(db_path, create=False), table, epsilon, delta)
    if as_json:
        echo_json("budget", [b.to_dict()])
    else:
        click.echo(b.describe())


@budget.command("show")
@click.argument("table", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the budgets as JSON.")
@db_option
@friendly
def show_cmd(table: str | None, as_json: bool, db_path: str) -> None:
    """The budget spent on TABLE (or on every table with a release or a limit).

    \b
    Example:
      anonsql budget show adult
    """
    from anonsql.algorithms.dp.budget import budgets

    found = budgets(open_db(db_path, create=False), table)
    if as_json:
        echo_json("budget", [b.to_dict() for b in found])
    elif not found:
        click.echo("no differentially private release and no budget limit in this database")
    for b in [] if as_json else found:
        click.echo(b.describe())


__all__ = ["budget"]

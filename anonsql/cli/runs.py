"""``anonsql runs``: the runs recorded in a database, to find the RUN_ID that ``report``,
``represent``, ``transpile`` and ``evaluate`` take."""

from __future__ import annotations

import click

from anonsql.cli.common import db_option, echo_json, friendly, open_db


def list_runs(db, output: str | None = None, last: int | None = None) -> list[dict]:
    """Every run of ``anonsql_runs`` (oldest first; ``output``: only that output's, ``last``:
    only the newest N) as plain dicts: id, time, source, output, algorithm, levels,
    suppressed rows and share, metric and score, and whether the output still exists."""
    from anonsql.provenance import Provenance

    if not db.backend.table_exists("anonsql_runs"):
        return []
    frame = Provenance(db.backend).runs()
    out = []
    for row in frame.to_dict("records"):
        measures = _json(row.get("measures")) or {}
        params = _json(row.get("parameters")) or {}
        levels = _json(row.get("levels"))
        name = row.get("output")
        if output is not None and (name is None or not db.backend.same_relation(name, output)):
            continue
        created = row.get("created_at")
        out.append(
            {
                "run_id": int(row["run_id"]),
                "created_at": created.isoformat(sep=" ", timespec="seconds")
                if hasattr(created, "isoformat")
                else str(created),
                "source": row["source"],
                "output": name,
                "materialize": row.get("materialize"),
                "exists": bool(name) and db.backend.table_exists(name),
                "algorithm": row["algorithm"],
                "qis": list(params.get("qis") or []),
                "levels": levels,
                "suppressed_rows": measures.get("suppressed_rows"),
                "suppressed_share": measures.get("suppressed_share"),
                "metric": measures.get("metric"),
                "score": measures.get("score"),
            }
        )
    return out[-last:] if last else out


def _json(value):
    """A JSON text column's value; NULL (None, or NaN in a DataFrame) is None."""
    import json

    return json.loads(value) if isinstance(value, str) and value else None


@click.command("runs")
@click.option("--output", help="Only the runs that wrote this output.")
@click.option("--last", type=click.IntRange(min=1), help="Only the newest N runs.")
@click.option("--json", "as_json", is_flag=True, help="Print the runs as JSON.")
@db_option
@friendly
def runs_cmd(output: str | None, last: int | None, as_json: bool, db_path: str) -> None:
    """List the anonymization runs recorded in the database: id, time, source, output,
    algorithm, levels, suppressed rows, score. The id is the RUN_ID of report, represent,
    transpile and evaluate.

    \b
    Example:
      anonsql runs --last 5
      anonsql runs --output census_anonymized --json
    """
    runs = list_runs(open_db(db_path, create=False), output, last)
    if as_json:
        echo_json("runs", runs)
        return
    if not runs:
        click.echo("no runs recorded in this database")
        return
    for r in runs:
        levels = (
            ",".join(f"{q}={lv}" for q, lv in r["levels"].items())
            if r["levels"]
            else "table recoding"
        )
        gone = "" if r["exists"] or not r["output"] else " (no longer exists)"
        supp = r["suppressed_rows"]
        share = r["suppressed_share"]
        supp_text = (
            "-" if supp is None else f"{supp}" + ("" if share is None else f" ({share:.2%})")
        )
        score = "-" if r["score"] is None else f"{r['metric']} {r['score']:.6g}"
        click.echo(
            f"{r['run_id']:>4}  {r['created_at']}  {r['source']} -> {r['output'] or '-'}"
            f"{gone}  {r['algorithm']}  [{levels}]  suppressed {supp_text}  {score}"
        )

"""Drift and refresh of published outputs.

A view re-applies its run's models at every read, so after the source changes it stays
anonymous by suppressing more (or fewer) rows; what it can no longer promise is the run's
suppression limit. :func:`output_status` measures that, per output: rows and suppressed
share at the run and now (people, when the run counted a privacy unit). :func:`refresh`
re-runs an output's stored spec (current hierarchy versions, current rows) and replaces the
output atomically: a failure leaves it as it was.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from anonsql.errors import InputError
from anonsql.masking.roles import QI, SENSITIVE, run_roles


@dataclass
class OutputStatus:
    output: str
    kind: str
    run_id: int
    source: str
    algorithm: str
    suppression_limit: float
    rows_at_run: int
    suppressed_at_run: int
    rows_now: int
    suppressed_now: int
    #: the output releases now at most ``suppression_limit`` of its rows suppressed
    within_limit: bool
    #: a table is a snapshot: "now" is what a refresh would release from today's source
    snapshot: bool
    #: each output column's role (quasi-identifier, sensitive, kept, masked: METHOD)
    roles: dict[str, str] = field(default_factory=dict)
    #: the privacy unit the counts are of (docs/models/units.md); None: they are rows
    unit: str | None = None

    @property
    def counted_in(self) -> str:
        """What ``rows_*`` and ``suppressed_*`` count: rows, or units of a column."""
        return f"units of {self.unit}" if self.unit else "rows"

    @property
    def share_at_run(self) -> float:
        return self.suppressed_at_run / self.rows_at_run if self.rows_at_run else 0.0

    @property
    def share_now(self) -> float:
        return self.suppressed_now / self.rows_now if self.rows_now else 0.0

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["share_at_run"] = self.share_at_run
        out["share_now"] = self.share_now
        out["counted_in"] = self.counted_in
        return out


def _runs(db) -> dict[str, dict[str, Any]]:
    from anonsql.provenance import Provenance

    if not db.backend.table_exists("anonsql_runs"):
        return {}
    return Provenance(db.backend).latest_runs()


def find_output(db, output: str) -> dict[str, Any]:
    """The current run of ``output`` (resolved as the engine resolves names)."""
    for name, run in _runs(db).items():
        if db.backend.same_relation(name, output):
            return run
    raise InputError(f"no output named {output!r} written by anonsql in this database")


def output_status(db, output: str | None = None) -> list[OutputStatus]:
    """The status of one output, or of every output anonsql wrote that still exists."""
    from anonsql.output.writer import suppressed_now

    runs = [find_output(db, output)] if output is not None else list(_runs(db).values())
    out = []
    for run in runs:
        params = run["parameters"]
        limit = float(params.get("suppression") or 0.0)
        rows_now, supp_now = suppressed_now(db, run)
        m = run["measures"]
        out.append(
            OutputStatus(
                output=run["output"],
                kind=run["materialize"] or "view",
                run_id=run["run_id"],
                source=run["source"],
                algorithm=run["algorithm"],
                suppression_limit=limit,
                rows_at_run=int(m.get("rows", 0)),
                suppressed_at_run=int(m.get("suppressed_rows", 0)),
                rows_now=rows_now,
                suppressed_now=supp_now,
                within_limit=supp_now <= limit * rows_now,
                snapshot=(run["materialize"] == "table"),
                roles=run_roles(params),
                unit=params.get("unit") or None,
            )
        )
    return out


def unit_of_output(db, table_name: str) -> str | None:
    """The privacy unit of the run that wrote ``table_name``, if anonsql wrote it with one."""
    try:
        run = find_output(db, table_name)
    except InputError:
        return None
    return run["parameters"].get("unit") or None


def table_roles(
    db, table_name: str, qis: list[str], sensitive: str | list[str] | None
) -> dict[str, str]:
    """Column -> role for ``anonsql check``: the run's roles when anonsql wrote the table,
    else the QIs and sensitive attribute given, the other columns undeclared."""
    try:
        run = find_output(db, table_name)
    except InputError:
        run = None
    if run is not None:
        return run_roles(run["parameters"], db.backend.columns(table_name))
    out = {}
    for c in db.backend.columns(table_name):
        sas = [sensitive] if isinstance(sensitive, str) else sensitive or []
        out[c] = QI if c in qis else SENSITIVE if c in sas else "not declared (not checked)"
    return out


__all__ = ["OutputStatus", "find_output", "output_status", "table_roles", "unit_of_output"]

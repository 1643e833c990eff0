"""The Python API for ETL steps: one call anonymizes a table of a DuckDB connection, of a
database file, or a pandas DataFrame, and returns what was done.

    import anonsql
    run = anonsql.anonymize(("anonsql.duckdb", "census"), {"qi": ["age", "sex"], "k": 5,
                            "suppression": 0.05, "output": "census_k5"})
    run.levels, run.measures["suppressed_rows"], run.to_frame()
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from anonsql.errors import InputError
from anonsql.options import RunOptions, check_goal, run_options

#: table name a DataFrame source gets in its throw-away database
FRAME_TABLE = "source"


#: a run that suppresses more than this share of the rows gets a warning (CLI: on standard
#: error; JSON and Run.warnings: in ``warnings``). A tenth of the table is far above what a
#: suppression limit is meant for (ARX's examples use 0-5%), and a run that suppresses most
#: rows (as 2-diversity of a binary attribute with --suppression 1 does) is a goal that
#: these QIs cannot reach by generalization, which the user should hear about.
SUPPRESSION_WARNING_SHARE = 0.10

#: version of the JSON documents (the CLI's --json, Run.summary()); see README "JSON output"
SCHEMA_VERSION = 1


def warnings_of(result: Any) -> list[str]:
    """What a user should hear about a successful run."""
    m = result.measures
    share = float(m.get("suppressed_share") or 0.0)
    found = list(m.get("warnings") or [])  # the algorithm's own (e.g. codes averaged)
    if share <= SUPPRESSION_WARNING_SHARE or result.algorithm == "safepub":
        return found  # safepub suppresses every class below its derived k: no limit to lower
    return [
        *found,
        f"{share:.1%} of the rows ({m.get('suppressed_rows')}) are suppressed (* in every "
        f"QI): more than {SUPPRESSION_WARNING_SHARE:.0%}. The goal is hard to reach by "
        f"generalizing these QIs; a lower --suppression makes the search generalize more "
        f"instead, or relax the goal (a smaller k or l, fewer QIs)",
    ]


def summary_document(result: Any, qis: list[str] | None = None) -> dict[str, Any]:
    """A run as the documented JSON document (docs: "JSON output"): the same keys and
    types for every algorithm. ``levels`` and ``per_qi`` hold every QI; a QI's level is
    null when the recoding is not one level per QI (greedy and other table recodings),
    its loss null when the quality model has no per-QI figure."""
    raw = result.summary()
    levels = dict(raw.get("levels") or {})
    per_qi = dict(raw.get("per_qi") or {})
    names = list(qis or levels or per_qi)
    full_domain = bool(levels)
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "anonymization",
        "run_id": raw["run_id"],
        "source": raw["source"],
        "output": raw["output"],
        "materialize": raw["materialize"],
        "algorithm": raw["algorithm"],
        "recoding": "levels" if full_domain else "table",
        "qis": names,
        "levels": {q: levels.get(q) for q in names},
        "metric": raw["metric"],
        "score": raw["score"],
        "per_qi": {q: per_qi.get(q) for q in names},
        "measures": raw["measures"],
        "checked": raw["checked"],
        "lattice_size": raw["lattice_size"] if full_domain else None,
        "guarantee": raw["guarantee"],
        "timings": raw["timings"],
        "solutions": raw["solutions"],
        "warnings": warnings_of(result),
    }


def run_html(doc: dict[str, Any]) -> str:
    """A run's summary document as an HTML table (Jupyter's rich display of a :class:`Run`):
    what was written, the guarantee, the classes and suppressed rows, and per QI its level
    and loss. Every value is escaped."""
    from html import escape

    def num(v: Any) -> str:
        return "" if v is None else f"{v:.6g}" if isinstance(v, float) else str(v)

    m = doc["measures"]
    rows = [
        ("output", f"{doc['output']} ({doc['materialize']}) from {doc['source']}"),
        ("algorithm", doc["algorithm"]),
        ("guarantee", doc["guarantee"]),
        ("classes", f"{m.get('classes')} (smallest {m.get('min_class_size')})"),
        (
            "suppressed rows",
            f"{m.get('suppressed_rows')} of {m.get('rows')} "
            f"({float(m.get('suppressed_share') or 0):.2%})",
        ),
        ("score", f"{doc['metric']} = {num(doc['score'])}"),
        ("time", f"{float(doc['timings'].get('total') or 0):.3f} s"),
    ]
    rows += [("warning", w) for w in doc["warnings"]]
    head = "".join(
        f'<tr><th style="text-align:left">{escape(k)}</th><td style="text-align:left">'
        f"{escape(str(v))}</td></tr>"
        for k, v in rows
    )
    per_class = doc["recoding"] != "levels"  # a recoding table: a generalization per class
    qis = "".join(
        f"<tr><td>{escape(q)}</td>"
        f"<td>{'per class' if per_class else escape(num(doc['levels'].get(q)))}</td>"
        f"<td>{escape(num(doc['per_qi'].get(q)))}</td></tr>"
        for q in doc["qis"]
    )
    return (
        f"<table><caption>anonsql run {escape(str(doc['run_id']))}</caption>{head}</table>"
        f"<table><thead><tr><th>quasi-identifier</th><th>level</th><th>loss</th></tr>"
        f"</thead><tbody>{qis}</tbody></table>"
    )


class Run:
    """The outcome of :func:`anonymize`: the library's result plus the database it ran in.

    When :func:`anonymize` opened the database itself (from a path or URL), it closes it
    before returning, so a long-lived worker (Airflow, Dagster) holds no lock on a DuckDB
    file between runs: :meth:`to_frame` opens it again for the read and closes it after, and
    :attr:`database` opens it again until :meth:`close` (or the end of a ``with`` block).
    A database the caller passed in (a connection, a Database) is the caller's to close."""

    def __init__(
        self, result: Any, database: Any, qis: list[str] | None = None, target: Any = None
    ) -> None:
        self.result = result  # anonsql.run.Result
        self._database = database
        self.qis = qis
        self._target = target  # what to open again, when anonymize() opened it

    def __getattr__(self, name: str) -> Any:  # levels, measures, output, timings, ...
        if name.startswith("_") or name in ("result", "qis"):
            raise AttributeError(name)
        return getattr(self.result, name)

    def __repr__(self) -> str:
        return f"Run(run_id={self.result.run_id!r}, output={self.result.output!r})"

    def _repr_html_(self) -> str:  # a notebook shows the run as a table
        return run_html(self.summary())

    @property
    def database(self):
        """The database the run wrote into (opened again if :func:`anonymize` closed it)."""
        if self._database is None:
            from anonsql.database import Database

            self._database = Database.open(self._target)
        return self._database

    def close(self) -> None:
        """Close the database if this run opened it (a no-op otherwise, or when closed)."""
        if self._target is not None and self._database is not None:
            self._database.close()
            self._database = None

    def __enter__(self) -> Run:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def to_frame(self):
        """The anonymized output as a pandas DataFrame."""
        if self._database is None and self._target is not None:
            try:
                return self.result.to_frame(self.database)
            finally:
                self.close()
        return self.result.to_frame(self.database)

    @property
    def warnings(self) -> list[str]:
        """What a user should hear about this run (e.g. most rows suppressed)."""
        return warnings_of(self.result)

    def summary(self) -> dict[str, Any]:
        """The run as the documented JSON document (docs: "JSON output")."""
        return summary_document(self.result, self.qis)

    def evaluate(self, task: str = "classification", **options: Any):
        """The TA_DA paper's downstream task on this run's output (see :func:`evaluate`)."""
        return evaluate(self, task=task, **options)


#: wrappers that hold a DuckDB connection in ``_cursor``: dbt-duckdb hands a Python model's
#: ``session`` over as a DuckDBCursorWrapper (and keeps a DuckDBConnectionWrapper around it)
_WRAPPERS = ("DuckDBCursorWrapper", "DuckDBConnectionWrapper")


#: why a read-only command refuses a missing database file
READ_ONLY = (
    "this command only reads, so it creates none (check --db, or create one with "
    "`anonsql import` or `anonsql demo`)"
)


def check_database_exists(path: Any, why: str = READ_ONLY) -> None:
    """A DuckDB file named by ``path`` exists (a URL, ``:memory:`` or a connection passes):
    else an InputError naming the path, for callers that must not create one."""
    from anonsql.backend import backend_name
    from anonsql.errors import InputError

    if not isinstance(path, str | Path) or backend_name(str(path)) != "duckdb":
        return
    text = str(path)
    if text == ":memory:" or text.startswith(("md:", "motherduck:")) or Path(text).exists():
        return
    raise InputError(f"database {text!r} does not exist; {why}")


def unwrap_connection(source: Any) -> Any:
    """The DuckDB connection inside a dbt-duckdb wrapper; anything else as it is."""
    for _ in range(4):  # a connection wrapper holds a cursor wrapper: two levels in practice
        if type(source).__name__ not in _WRAPPERS:
            return source
        inner = getattr(source, "_cursor", None)
        if inner is None:
            raise InputError(f"cannot find the DuckDB connection inside {type(source).__name__}")
        source = inner
    return source


def open_source(source: Any, table: str | None):
    """(Database, table name) for every accepted form of ``source``; a DataFrame is copied
    into an in-memory database first."""
    from anonsql.backend import backend_name
    from anonsql.database import Database

    if isinstance(source, tuple):
        if len(source) != 2 or not isinstance(source[1], str):
            raise InputError("a source tuple is (connection or database path, table name)")
        if table is not None and table != source[1]:
            raise InputError(f"two table names given: {source[1]!r} and {table!r}")
        source, table = source
    source = unwrap_connection(source)
    if isinstance(source, Database):
        db = source
    elif _is_frame(source):
        from anonsql.backend.duckdb_backend import DuckDBBackend

        db = Database(DuckDBBackend(":memory:"))
        table = table or FRAME_TABLE
        db.backend.write_frame(table, source)
    elif isinstance(source, str | Path):
        # the table to anonymize must be there, so a database that is not is a typo: say
        # so rather than create an empty file and fail with "no table"
        check_database_exists(source, "so it holds no table to anonymize (check the path)")
        db = Database.open(source)
    elif type(source).__name__ == "DuckDBPyConnection":
        from anonsql.backend.duckdb_backend import DuckDBBackend

        db = Database(DuckDBBackend(source))
    elif backend_name(source) != "duckdb":  # a psycopg connection or a SparkSession
        db = Database.open(source)
    else:
        raise InputError(
            "source is a DuckDB, psycopg or Spark connection, a database path or URL, or a "
            f"pandas DataFrame (with the table name where needed), not {type(source).__name__}"
        )
    if not table:
        raise InputError("name the table to anonymize (table=...)")
    return db, table


def _is_frame(x: Any) -> bool:
    return type(x).__name__ == "DataFrame" and hasattr(x, "columns")


def as_options(spec: Any, overrides: Mapping[str, Any], where: str) -> RunOptions:
    from anonsql.spec import Spec

    if isinstance(spec, RunOptions):
        if overrides:
            raise InputError("pass options either in the spec or as keywords, not both")
        return spec
    if isinstance(spec, Spec):
        if overrides:
            raise InputError("pass options either in the spec or as keywords, not both")
        check_goal(spec, where)  # a Spec is built without the option checks
        return RunOptions(spec)
    if spec is None:
        spec = {}
    if not isinstance(spec, Mapping):
        raise InputError(f"spec is a mapping of options or a Spec, not {type(spec).__name__}")
    return run_options({**spec, **overrides}, where)


def run(db, table: str, options: RunOptions, base_dir: str | Path = ".", progress=None):
    """Store the hierarchies the options define and anonymize, in one transaction: a run
    that fails stores nothing (no hierarchy, no output, no provenance)."""
    from anonsql.hierarchy.definitions import store_definition
    from anonsql.run import anonymize as run_anonymize

    spec = options.spec
    db.backend.require_table(table)
    with db.backend.transaction():
        for qi, definition in options.hierarchies.items():
            spec.hierarchies[qi] = store_definition(db, qi, definition, base_dir, table)
        return run_anonymize(db, table, spec, progress)


def anonymize(source: Any, spec: Any = None, /, *, table: str | None = None, **options: Any) -> Run:
    """Anonymize ``source`` as ``spec`` (a mapping of options, see the docs, or a
    :class:`~anonsql.spec.Spec`); options may also be given as keywords.

    ``source`` is a DuckDB, psycopg or Spark connection (dbt-duckdb's ``session`` too), a
    database path or URL
    (``postgresql://...``, ``spark:DIR``) or an anonsql Database (with
    ``table``, or as a ``(source, table)`` tuple), or a pandas DataFrame, which is
    anonymized in a throw-away in-memory database (output name default ``anonymized``;
    read it with :meth:`Run.to_frame`)."""
    opts = as_options(spec, options, "anonymize()")
    db, name = open_source(source, table)
    if _is_frame(source) and opts.spec.output is None:
        opts.spec.output = "anonymized"
    target = opened_target(source)
    try:
        result = run(db, name, opts)
    finally:
        if target is not None:
            db.close()  # opened here: no lock held once the call returns
    return Run(result, None if target is not None else db, list(opts.spec.qis), target)


def opened_target(source: Any) -> Any:
    """What :func:`open_source` opened itself (a path or URL, alone or in a tuple), so that
    the caller closes it; None for a connection, a Database or a DataFrame."""
    if isinstance(source, tuple) and len(source) == 2:
        source = source[0]
    return source if isinstance(source, str | Path) else None


def profile(source: Any, table: str | None = None, /, *, columns: list[str] | None = None):
    """``anonsql profile``: per column of ``source``'s table its type, NULL share, distinct
    count, unique share, detected kind, suggested role and hierarchy builder, measured in
    the engine. ``source`` takes the forms :func:`anonymize` takes. Returns a
    :class:`~anonsql.masking.profile.TableProfile`."""
    from anonsql.masking.profile import TableProfile, profile_table

    if isinstance(source, tuple) and table is None:
        source, table = source
    db, name = open_source(source, table)
    try:
        return TableProfile(name, profile_table(db, name, columns))
    finally:
        if opened_target(source) is not None:
            db.close()


def evaluate(
    source: Any,
    run_id: int | None = None,
    /,
    *,
    task: str = "classification",
    label: str | None = None,
    seeds: int = 3,
    ignore: list[str] | tuple[str, ...] = (),
    clusters: int = 5,
):
    """``anonsql evaluate --task``: the TA_DA paper's downstream task on a run's output, with the
    raw rows as the baseline (the guide's "Utility of a release" page). ``source`` is a
    :class:`Run` (``run_id`` defaults to its run) or a database (path, URL, connection or
    Database). Returns an :class:`~anonsql.evaluation.task.TaskEvaluation`: per
    metric one value per seed, ``.mean()`` and ``.mean("raw")``. ``task="groups"``:
    Zouinina et al.'s measures of the released groups instead, a
    :class:`~anonsql.evaluation.groups.GroupUtility`. Needs ``anonsql[eval]``."""
    from anonsql.database import Database
    from anonsql.evaluation.task import evaluate_task

    opened: Run | Database | None = None
    if isinstance(source, Run):
        db = source.database
        run_id = source.result.run_id if run_id is None else run_id
        if source._target is not None:
            opened = source  # opened again for this call: closed after it
    else:
        source = unwrap_connection(source)
        if isinstance(source, Database):
            db = source
        else:
            check_database_exists(source)
            db = opened = Database.open(source)
    try:
        if run_id is None:
            raise InputError("name the run to evaluate (run_id)")
        if task == "groups":  # seed 001's measures of the released groups
            from anonsql.evaluation.groups import evaluate_groups

            return evaluate_groups(db, int(run_id), label)
        return evaluate_task(db, int(run_id), task, label, seeds, list(ignore), clusters)
    finally:
        if opened is not None:
            opened.close()


__all__ = [
    "SCHEMA_VERSION",
    "Run",
    "anonymize",
    "check_database_exists",
    "evaluate",
    "open_source",
    "profile",
    "run",
    "summary_document",
    "unwrap_connection",
    "warnings_of",
]

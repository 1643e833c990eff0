"""Options, error handling and printers shared by the command groups."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from click._termui_impl import ProgressBar  # what click.progressbar returns

DB_HELP = (
    "Database: a DuckDB file (':memory:' for a throw-away one), a PostgreSQL URL "
    "(postgresql://user:password@host:port/db), a Spark warehouse (spark:DIR) or a Spark "
    "Connect server (sc://host:port)."
)


def db_option(fn: Callable) -> Callable:
    return wait_option(
        click.option(
            "--db",
            "db_path",
            default="anonsql.duckdb",
            show_default=True,
            envvar="ANONSQL_DB",
            help=DB_HELP,
        )(fn)
    )


def _remember_wait(ctx: click.Context, _param: click.Parameter, value: float | None) -> None:
    ctx.meta["anonsql_wait"] = value or 0.0


def wait_option(fn: Callable) -> Callable:
    """``--wait SECONDS``: retry while another process holds the DuckDB file's lock (DuckDB
    lets one process write a file at a time). Read by :func:`open_db`, so the commands'
    signatures do not carry it."""
    return click.option(
        "--wait",
        type=click.FloatRange(min=0),
        default=None,
        envvar="ANONSQL_WAIT",
        expose_value=False,
        callback=_remember_wait,
        help="Seconds to retry while another process holds the database file's lock "
        "(DuckDB) or writes the same output (PostgreSQL) (default 0: fail at once).",
    )(fn)


#: version of every JSON document the commands print with --json (README "JSON output");
#: raised when a field changes meaning or disappears, not when one is added
SCHEMA_VERSION = 1


def json_document(kind: str, body: Any) -> dict[str, Any]:
    """The envelope of every --json document: schema version, kind, then the body's fields
    (a list body goes under ``items``)."""
    head: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "kind": kind}
    if isinstance(body, dict):
        return {**head, **body}
    return {**head, "items": body}


def echo_json(kind: str, body: Any) -> None:
    click.echo(json_text(json_document(kind, body)))


def _json_default(value: Any) -> Any:
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return float(value)


def friendly(fn: Callable) -> Callable:
    """Turn the library's user errors into a one-line message and exit status 1; with
    ``--json``, into a JSON document ``{"schema_version", "kind": "error", "error": {"type",
    "message"}}`` on standard output (still exit status 1)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from anonsql.errors import AnonsqlError

        try:
            return fn(*args, **kwargs)
        except AnonsqlError as e:
            if kwargs.get("as_json"):
                echo_json("error", {"error": {"type": type(e).__name__, "message": str(e)}})
                sys.exit(1)
            raise click.ClickException(str(e)) from None

    return wrapper


def open_db(path: str, create: bool = True, why: str | None = None):
    """Open --db. Commands that only read pass ``create=False``: a DuckDB file that does
    not exist is then an error naming the path, not a new empty database (a typo in --db
    would otherwise leave an empty file behind and fail later with "no table")."""
    import time

    from anonsql.api import check_database_exists
    from anonsql.database import Database
    from anonsql.errors import InputError

    if not create:
        if why is None:
            check_database_exists(path)
        else:
            check_database_exists(path, why)
    ctx = click.get_current_context(silent=True)
    wait = float(ctx.meta.get("anonsql_wait", 0.0)) if ctx is not None else 0.0
    deadline = time.monotonic() + wait
    delay = 0.05
    while True:
        try:
            db = Database.open(path)
            db.backend.wait_seconds = wait  # also how long a writer waits for another one
            if ctx is not None:
                # closed when the command ends, not when the garbage collector gets to it: a
                # command run in-process (an orchestrator, click's test runner) would else
                # leave a PostgreSQL session open beside the next command's
                ctx.call_on_close(db.close)
            return db
        except InputError as e:
            if not _is_lock_error(e):
                raise
            if time.monotonic() + delay > deadline:
                hint = (
                    f" (still locked after --wait {wait:g} s)"
                    if wait
                    else "; another process has it open: retry with --wait SECONDS"
                )
                raise InputError(f"{e}{hint}") from None
            time.sleep(delay)
            delay = min(delay * 2, 1.0)


def _is_lock_error(error: Exception) -> bool:
    text = str(error).lower()
    return "could not set lock" in text or "conflicting lock" in text


def split_list(value: str | None) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()] if value else []


def _parse_pairs(values: tuple[str, ...], what: str) -> dict[str, str]:
    from anonsql.errors import InputError

    out: dict[str, str] = {}
    for item in values:
        for part in split_list(item):
            if "=" not in part:
                raise InputError(f"{what} {part!r}: use COLUMN=VALUE")
            k, v = part.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def role_options(fn: Callable) -> Callable:
    """The roles of the columns that are neither quasi-identifiers nor sensitive (every
    column of an output needs one), and the masking key's source."""
    opts = [
        click.option(
            "--keep",
            help="Columns released as they are (declared insensitive), comma-separated.",
        ),
        click.option(
            "--mask",
            "mask_pairs",
            multiple=True,
            help="Identifiers masked in the output: COL=METHOD[,COL=METHOD...] (repeatable); "
            "METHOD is pseudonym (keyed HMAC), token (format-preserving FF3-1), fake[:KIND] "
            "(faker), partial:FIRST:LAST, email-domain, null or drop.",
        ),
        click.option(
            "--identifiers",
            help="Direct identifiers left out of the output (the same as --mask COL=drop).",
        ),
        click.option(
            "--allow-identifying",
            help="Columns that look like direct identifiers (unique on 95%+ of rows, or "
            "e-mail, phone, ... values) published anyway, kept raw or as quasi-identifiers.",
        ),
        click.option(
            "--unit",
            help="The privacy unit: a column naming the person (or household, customer) each "
            "row belongs to. k, the suppression limit and the risk figures then count distinct "
            "units, not rows; the column is not released.",
        ),
        click.option(
            "--key-file",
            type=click.Path(dir_okay=False),
            help="File holding the masking key of pseudonym, token and fake (default: the "
            "ANONSQL_KEY environment variable). The key is never stored or printed.",
        ),
        click.option(
            "--fake-locale",
            default="en_US",
            show_default=True,
            help="faker's locale for --mask COL=fake.",
        ),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


#: the parameters :func:`role_options` adds to a command
ROLE_PARAMS = (
    "keep",
    "mask_pairs",
    "identifiers",
    "allow_identifying",
    "unit",
    "key_file",
    "fake_locale",
)


def role_values(
    keep: str | None,
    mask_pairs: tuple[str, ...],
    identifiers: str | None,
    allow_identifying: str | None,
    unit: str | None,
    key_file: str | None,
    fake_locale: str,
) -> dict[str, Any]:
    """The Spec fields of :func:`role_options`."""
    from anonsql.masking.methods import masks_text

    masks: dict[str, str] = {}
    for item in mask_pairs:
        for col, method in masks_text(item, "--mask").items():
            if col in masks:
                from anonsql.errors import InputError

                raise InputError(f"--mask: column {col!r} masked twice")
            masks[col] = method
    return {
        "keep": split_list(keep) or None,
        "masks": masks,
        "identifiers": split_list(identifiers) or None,
        "allow_identifying": split_list(allow_identifying) or None,
        "unit": unit,
        "key_file": key_file,
        "fake_locale": fake_locale,
    }


def model_options(fn: Callable) -> Callable:
    """The privacy goal, shared by check and anonymize."""
    opts = [
        click.option("--k", type=int, help="k-anonymity: classes of at least k records."),
        click.option(
            "--l", "l_value", type=float, help="l-diversity (distinct unless --l-variant)."
        ),
        click.option(
            "--l-variant",
            type=click.Choice(["distinct-l", "entropy-l", "recursive-cl"]),
            default="distinct-l",
            show_default=True,
        ),
        click.option(
            "--c",
            "c_value",
            type=float,
            default=3.0,
            show_default=True,
            help="c of recursive (c,l)-diversity.",
        ),
        click.option(
            "--l-estimator",
            type=click.Choice(["shannon", "grassberger"]),
            default="shannon",
            show_default=True,
            help="Entropy estimator of entropy-l (ARX's): plug-in Shannon or Grassberger's.",
        ),
        click.option(
            "--t",
            "t_value",
            type=float,
            help="t-closeness (equal-distance EMD unless --t-variant).",
        ),
        click.option(
            "--t-variant",
            default="equal-emd",
            show_default=True,
            type=click.Choice(["equal-emd", "hierarchical-emd", "ordered-emd", "l1"]),
        ),
        click.option(
            "--sa-hierarchy",
            help="Hierarchy of the sensitive attribute "
            "(hierarchical EMD; default: the one named after it).",
        ),
        click.option(
            "--beta",
            "beta_value",
            type=float,
            help="beta-likeness: (p - q) / q <= beta for every sensitive value (Cao, Karras).",
        ),
        click.option(
            "--beta-variant",
            type=click.Choice(["basic", "enhanced"]),
            default="basic",
            show_default=True,
            help="enhanced: (p - q) / q <= min(beta, -ln q).",
        ),
        click.option(
            "--delta",
            "delta_value",
            type=float,
            help="delta-disclosure privacy: |log2(p / q)| < delta for every sensitive value "
            "in a class (Brickell, Shmatikov).",
        ),
        click.option(
            "--population",
            help="Population table (the QIs under the same names): delta-presence and k-map "
            "count its records per class; check also reports journalist risk against it.",
        ),
        click.option(
            "--delta-min",
            type=float,
            help="delta-presence (Nergiz et al.; needs --population): every class's share "
            "of its population class is >= this; above 0, a population class without rows "
            "fails the transformation (default 0 with --delta-max).",
        ),
        click.option(
            "--delta-max",
            type=float,
            help="delta-presence: every class's share of its population class is <= this "
            "(default 1 with --delta-min).",
        ),
        click.option(
            "--k-map",
            type=int,
            help="k-map (El Emam, Dankar): every class matches >= K records of --population, "
            "or, without one, an estimate (--k-map-estimator, --population-size or "
            "--sampling-fraction).",
        ),
        click.option(
            "--k-map-estimator",
            type=click.Choice(["poisson", "zero-truncated-poisson"]),
            default="poisson",
            show_default=True,
            help="Estimated k-map's model of the population's class sizes (ARX's).",
        ),
        click.option(
            "--significance",
            type=float,
            default=0.05,
            show_default=True,
            help="Estimated k-map's significance level.",
        ),
        click.option(
            "--population-size",
            type=int,
            help="Population size N (estimated k-map, population uniqueness).",
        ),
        click.option(
            "--sampling-fraction",
            type=float,
            help="Or the sampling fraction f = rows / N.",
        ),
        click.option(
            "--max-average-risk",
            type=float,
            help="Average re-identification risk (released classes / released records) <= "
            "this (ARX); classes are suppressed smallest first to meet it.",
        ),
        click.option(
            "--max-sample-uniqueness",
            type=float,
            help="Share of released records unique in the table <= this (ARX).",
        ),
        click.option(
            "--max-population-uniqueness",
            type=float,
            help="Estimated share of population uniques <= this (ARX; --uniqueness-estimator, "
            "--population-size or --sampling-fraction).",
        ),
        click.option(
            "--uniqueness-estimator",
            type=click.Choice(["pitman", "zayatz", "snb", "dankar"]),
            default="dankar",
            show_default=True,
            help="Population-uniqueness estimator (Dankar's rule chooses among the others).",
        ),
    ]
    for opt in reversed(opts):
        fn = opt(fn)
    return fn


#: a Spec field -> (the CLI parameter that sets it, its flag)
_GOAL_FLAGS = {
    "k": ("k", "--k"),
    "l": ("l_value", "--l"),
    "l_variant": ("l_variant", "--l-variant"),
    "c": ("c_value", "--c"),
    "l_estimator": ("l_estimator", "--l-estimator"),
    "t": ("t_value", "--t"),
    "t_variant": ("t_variant", "--t-variant"),
    "sensitive_hierarchy": ("sa_hierarchy", "--sa-hierarchy"),
    "beta": ("beta_value", "--beta"),
    "beta_variant": ("beta_variant", "--beta-variant"),
    "delta": ("delta_value", "--delta"),
    "population": ("population", "--population"),
    "delta_min": ("delta_min", "--delta-min"),
    "delta_max": ("delta_max", "--delta-max"),
    "k_map": ("k_map", "--k-map"),
    "k_map_estimator": ("k_map_estimator", "--k-map-estimator"),
    "significance": ("significance", "--significance"),
    "population_size": ("population_size", "--population-size"),
    "sampling_fraction": ("sampling_fraction", "--sampling-fraction"),
    "max_average_risk": ("max_average_risk", "--max-average-risk"),
    "max_sample_uniqueness": ("max_sample_uniqueness", "--max-sample-uniqueness"),
    "max_population_uniqueness": ("max_population_uniqueness", "--max-population-uniqueness"),
    "uniqueness_estimator": ("uniqueness_estimator", "--uniqueness-estimator"),
    "suppression": ("suppression", "--suppression"),
    "metric": ("metric", "--metric"),
    "gs_factor": ("gs_factor", "--gs-factor"),
}


def _flags() -> dict[str, tuple[str, str]]:
    """Option -> (the command's parameter, its flag): the goal's, and every algorithm
    family's own options as :func:`algorithm_options` generates them."""
    from anonsql.algorithms import own_options

    return {**_GOAL_FLAGS, **{o.name: (o.field, o.cli_flag) for o in own_options()}}


def _spell(option: str) -> str:
    return _flags().get(option, ("", "--" + option.replace("_", "-")))[1]


def algorithm_options(fn: Callable) -> Callable:
    """Every algorithm family's own options (:func:`anonsql.algorithms.own_options`), one
    click option each, generated from its declaration: the flag, the help, the choices,
    and the Spec's default. Each lands in the command's keywords under its Spec field."""
    from dataclasses import fields

    from anonsql.algorithms import own_options
    from anonsql.errors import InputError
    from anonsql.options import check_value
    from anonsql.spec import Spec

    defaults = {f.name: f.default for f in fields(Spec)}
    kinds = {"int": int, "number": float}
    for o in reversed(own_options()):
        kw: dict[str, Any] = {"help": o.help}
        if o.kind == "bool":
            kw["is_flag"] = True
        elif o.kind == "levels":
            # a structured value (safepub's levels): parsed as spec files parse it, a bad one
            # refused in one line
            kw["default"] = defaults[o.field]

            def parse(ctx, param, value, o=o):
                try:
                    return None if value is None else check_value(o.name, o.kind, value, "")
                except InputError as e:
                    raise click.BadParameter(str(e).lstrip(": ")) from None

            kw["callback"] = parse
        else:
            kw["type"] = click.Choice(list(o.choices)) if o.choices else kinds.get(o.kind, str)
            kw["default"] = defaults[o.field]
            kw["show_default"] = defaults[o.field] is not None
        fn = click.option(o.cli_flag, o.field, **kw)(fn)
    return fn


def _spec(
    qi,
    sa,
    k,
    l_value,
    l_variant,
    c_value,
    l_estimator,
    t_value,
    t_variant,
    sa_hierarchy,
    beta_value,
    beta_variant,
    delta_value,
    **extra,
):
    from click.core import ParameterSource

    from anonsql.options import check_goal
    from anonsql.spec import Spec

    spec = Spec(
        qis=split_list(qi),
        sensitive=sa,
        k=k,
        l=l_value,
        l_variant=l_variant,
        c=c_value,
        l_estimator=l_estimator,
        t=t_value,
        t_variant=t_variant,
        sensitive_hierarchy=sa_hierarchy,
        beta=beta_value,
        beta_variant=beta_variant,
        delta=delta_value,
        **extra,
    )
    # an option typed on the command line counts as given even when it equals the default
    ctx = click.get_current_context()
    given = {
        option
        for option, (param, _) in _flags().items()
        if ctx.get_parameter_source(param) not in (None, ParameterSource.DEFAULT)
    }
    check_goal(spec, "", given, spell=_spell)
    return spec


class _progress:
    """A progress bar on stderr for work that takes a while (hidden for --json and before
    the first second). ``update(done, total)`` is called with the work done and the work
    known so far: lattice nodes settled (checked, tagged or bounded away) of the lattice,
    violating classes merged of those seen (greedy), or steps of a fixed count. ``total``
    may grow as work is discovered; 0 means unknown (a count is shown instead of a bar)."""

    def __init__(self, quiet: bool, label: str = "search") -> None:
        self.quiet = quiet
        self.label = label
        self.bar: ProgressBar[int] | None = None  # shown after the first second
        self.start = 0.0
        self.last = 0.0

    def __enter__(self):
        import time

        self.start = time.perf_counter()
        return self.update

    def update(self, done: int, total: int) -> None:
        import time

        if self.quiet:
            return
        now = time.perf_counter()
        if now - self.start < 1.0 or (now - self.last < 0.1 and done < total):
            return
        self.last = now
        if self.bar is None:
            self.bar = click.progressbar(
                length=max(total, 1), label=self.label, file=sys.stderr, show_pos=True
            )
            self.bar.__enter__()
        if total > 0:
            self.bar.length = max(total, done)
        self.bar.update(max(0, done - self.bar.pos))

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            if exc[0] is None:
                assert self.bar.length is not None  # made with a length (update)
                self.bar.update(self.bar.length - self.bar.pos)
            self.bar.__exit__(*exc)


def _print_result(r) -> None:
    from anonsql.algorithms import algorithm

    for q, how in (r.measures.get("hierarchies_built") or {}).items():
        click.echo(f"hierarchy built for {q}: {how} (anonsql hierarchy export {q} FILE)")
    # the algorithm's own lines (levels, passes, groups, partitions, merges)
    for line in algorithm(r.registered or "flash").summary_lines(r):
        click.echo(line)
    m = r.measures
    what = "rows"
    if m.get("unit"):  # docs/models/units.md: the counts below are of units
        what = "units"
        click.echo(
            f"counted in units of {m['unit']}: {m['units']} units in {m['source_rows']} rows"
        )
    click.echo(
        f"classes {m['classes']}, suppressed {what} {m['suppressed_rows']} "
        f"({m['suppressed_share']:.2%}), smallest class {m['min_class_size']}"
    )
    click.echo(
        f"risk: prosecutor max {m['prosecutor_max']:.4g}, avg {m['prosecutor_avg']:.4g}; "
        f"marketer {m['marketer']:.4g}"
    )
    of = m.get("score_of")
    if of == "released table":  # passes: say whose score it is (issue 27.16)
        first = m["before"]["score"]
        click.echo(f"{r.metric} = {r.score:.10g} (the released table; first pass {first:.10g})")
    elif of:
        click.echo(f"{r.metric} = {r.score:.10g} (the {of}'s: records differ in their levels)")
    else:
        click.echo(f"{r.metric} = {r.score:.10g}")
    if r.per_qi:
        click.echo("  per QI: " + ", ".join(f"{q} {v:.4f}" for q, v in r.per_qi.items()))
    click.echo(f"guarantee: {r.guarantee}")
    if r.output:
        click.echo(
            f"wrote {r.materialize} {r.output!r} (run {r.run_id}) in {r.timings['total']:.3f} s"
        )


def _echo_relation(relation, as_json: bool) -> None:
    if relation is None:
        return
    frame = relation if hasattr(relation, "to_json") else None
    if as_json:
        import json

        frame = frame if frame is not None else relation.df()
        # pandas' own encoder (dates as ISO text, NaN as null), then the common envelope
        echo_json("query", json.loads(frame.to_json(orient="records", date_format="iso")))
        return
    click.echo(frame.to_string(index=False) if frame is not None else str(relation))


def _echo_result(result, as_json: bool, qis: list[str] | None = None) -> None:
    """A run's summary: the JSON document (README "JSON output") or text, and its warnings
    (on standard error in text mode)."""
    from anonsql.api import summary_document, warnings_of

    if as_json:
        click.echo(json_text(summary_document(result, qis)))
        return
    _print_result(result)
    for warning in warnings_of(result):
        click.echo(f"warning: {warning}", err=True)


def json_text(document: Any) -> str:
    import json

    return json.dumps(document, indent=2, default=_json_default)


def progress_label(algorithm: str | None) -> str:
    """What the progress bar counts for an algorithm (see _progress)."""
    from anonsql.algorithms import registry

    name = algorithm or "flash"
    registered = registry().get(name)
    return (registered.progress if registered is not None else None) or name


def run_qis(db, run_id: int | None) -> list[str] | None:
    """The QIs of a recorded run (for the JSON of table recodings, which have no levels)."""
    import json

    if run_id is None or not db.backend.table_exists("anonsql_runs"):
        return None
    rows = db.backend.fetchall(
        "SELECT parameters FROM anonsql_runs WHERE run_id = ?", [int(run_id)]
    )
    return list(json.loads(rows[0][0]).get("qis") or []) if rows else None


def _print_evaluation(
    ev,
    as_json: bool,
    roles: dict[str, str] | None = None,
    note: str | None = None,
    run_unit: str | None = None,
) -> None:
    if as_json:
        body = ev.to_dict()
        if roles is not None:
            body["roles"] = roles
        if run_unit is not None:  # the run counted people; this check counted rows
            body["run_counted_in"] = f"units of {run_unit}"
        echo_json("evaluation", body)
        return
    if note:
        click.echo(note, err=True)
    if ev.unit:  # every count is of the privacy unit's distinct values
        click.echo(
            f"units ({ev.unit}) {ev.rows}, classes {ev.classes}, suppressed units "
            f"{ev.suppressed_rows}"
        )
    else:
        click.echo(f"rows {ev.rows}, classes {ev.classes}, suppressed rows {ev.suppressed_rows}")
    if roles:
        click.echo("columns: " + ", ".join(f"{c} ({r})" for c, r in roles.items()))
    for m in ev.models:
        state = "holds" if m.holds else "DOES NOT HOLD"
        click.echo(
            f"  {m.description}: {state} (failing classes {m.failing_classes}, failing rows "
            f"{m.failing_rows}, values {m.min_value:.6g}..{m.max_value:.6g})"
            if m.min_value is not None
            else f"  {m.description}: {state}"
        )
    click.echo("risk:")
    for k, v in ev.risk.items():
        if v is not None:
            click.echo(f"  {k} = {v:.6g}" if isinstance(v, float) else f"  {k} = {v}")
    if ev.loss:
        click.echo("loss:")
        for k, v in ev.loss.items():
            click.echo(f"  {k} = {v:.10g}")

"""Options, error handling and printers shared by the command groups."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import Any

import click

DB_HELP = (
    "Database: a DuckDB file (':memory:' for a throw-away one), a PostgreSQL URL "
    "(postgresql://user:password@host:port/db) or a Spark warehouse (spark:DIR)."
)


def db_option(fn: Callable) -> Callable:
    return click.option(
        "--db",
        "db_path",
        default="anonsql.duckdb",
        show_default=True,
        envvar="ANONSQL_DB",
        help=DB_HELP,
    )(fn)


def friendly(fn: Callable) -> Callable:
    """Turn the library's user errors into a one-line message and exit status 1."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from anonsql.errors import AnonsqlError

        try:
            return fn(*args, **kwargs)
        except AnonsqlError as e:
            raise click.ClickException(str(e)) from None

    return wrapper


def open_db(path: str):
    from anonsql.database import Database

    return Database.open(path)


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
            "of its population class is >= this (default 0 with --delta-max).",
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
    "time_limit": ("time_limit", "--time-limit"),
    "steps": ("steps", "--steps"),
}


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

    from anonsql.anonymization import Spec
    from anonsql.options import check_goal

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
        for option, (param, _) in _GOAL_FLAGS.items()
        if ctx.get_parameter_source(param) not in (None, ParameterSource.DEFAULT)
    }
    check_goal(spec, "", given, spell=lambda option: _GOAL_FLAGS[option][1])
    return spec


class _progress:
    """A progress bar on stderr for searches that take a while (hidden for --json)."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.bar = None
        self.start = 0.0

    def __enter__(self):
        import time

        self.start = time.perf_counter()
        return self.update

    def update(self, checked: int, total: int) -> None:
        import time

        if self.quiet or checked % 25:
            return
        if self.bar is None:
            if time.perf_counter() - self.start < 1.0:
                return
            self.bar = click.progressbar(length=total, label="nodes checked", file=sys.stderr)
            self.bar.__enter__()
        self.bar.update(checked - self.bar.pos)

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)


def _print_result(r) -> None:
    if r.levels:
        click.echo(
            f"transformation ({r.algorithm}, {r.checked} of {r.lattice_size} nodes checked):"
        )
        for q, lv in r.levels.items():
            click.echo(f"  {q}: level {lv}")
    else:
        click.echo(f"multidimensional recoding ({r.algorithm}, {r.checked} class merges)")
    m = r.measures
    click.echo(
        f"classes {m['classes']}, suppressed rows {m['suppressed_rows']} "
        f"({m['suppressed_share']:.2%}), smallest class {m['min_class_size']}"
    )
    click.echo(
        f"risk: prosecutor max {m['prosecutor_max']:.4g}, avg {m['prosecutor_avg']:.4g}; "
        f"marketer {m['marketer']:.4g}"
    )
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
        frame = frame if frame is not None else relation.df()
        click.echo(frame.to_json(orient="records", date_format="iso"))
        return
    click.echo(frame.to_string(index=False) if frame is not None else str(relation))


def _echo_result(result, as_json: bool) -> None:
    if as_json:
        import json

        click.echo(json.dumps(result.summary(), indent=2, default=float))
    else:
        _print_result(result)


def _print_evaluation(ev, as_json: bool) -> None:
    import json

    if as_json:
        click.echo(json.dumps(ev.to_dict(), indent=2, default=float))
        return
    click.echo(f"rows {ev.rows}, classes {ev.classes}, suppressed rows {ev.suppressed_rows}")
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

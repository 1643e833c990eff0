"""The options of an anonymization run as plain values (spec files, SQL statements, JSON
parameters), checked and turned into a :class:`~anonsql.spec.Spec`.

One table of names and types serves every surface, so the CLI, spec files and SQL accept the
same options, and a wrong type gets the same message wherever it comes from.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

from anonsql.errors import InputError
from anonsql.hierarchy.definitions import check_definition
from anonsql.spec import Spec, Spell, normalize_sensitive

# option -> (Spec field, kind); kinds: str, int, number, bool, list (of names), mapping,
# size (bytes or e.g. "1GiB"), masks (column -> masking method, or "col=method,...").
# The shared options: the goal, the roles, the output; each algorithm family declares its
# own (:func:`anonsql.algorithms.own_options`), added below
SHARED: dict[str, tuple[str, str]] = {
    "qi": ("qis", "list"),
    "sensitive": ("sensitive", "columns"),
    "k": ("k", "int"),
    "l": ("l", "number"),
    "l_variant": ("l_variant", "str"),
    "c": ("c", "number"),
    "l_estimator": ("l_estimator", "str"),
    "t": ("t", "number"),
    "t_variant": ("t_variant", "str"),
    "sensitive_hierarchy": ("sensitive_hierarchy", "str"),
    "beta": ("beta", "number"),
    "beta_variant": ("beta_variant", "str"),
    "delta": ("delta", "number"),
    "population": ("population", "str"),
    "delta_min": ("delta_min", "number"),
    "delta_max": ("delta_max", "number"),
    "k_map": ("k_map", "int"),
    "k_map_estimator": ("k_map_estimator", "str"),
    "significance": ("significance", "number"),
    "population_size": ("population_size", "int"),
    "sampling_fraction": ("sampling_fraction", "number"),
    "max_average_risk": ("max_average_risk", "number"),
    "max_sample_uniqueness": ("max_sample_uniqueness", "number"),
    "max_population_uniqueness": ("max_population_uniqueness", "number"),
    "uniqueness_estimator": ("uniqueness_estimator", "str"),
    "suppression": ("suppression", "number"),
    "metric": ("metric", "str"),
    "gs_factor": ("gs_factor", "number"),
    "algorithm": ("algorithm", "str"),
    "hierarchy": ("hierarchies", "mapping"),
    "output": ("output", "str"),
    "materialize": ("materialize", "str"),
    "drop_suppressed": ("drop_suppressed", "bool"),
    "replace": ("replace", "bool"),
    "columns": ("columns", "list"),
    "identifiers": ("identifiers", "list"),
    "keep": ("keep", "list"),
    "mask": ("masks", "masks"),
    "allow_identifying": ("allow_identifying", "list"),
    "fake_locale": ("fake_locale", "str"),
    "key_file": ("key_file", "str"),
    "missing": ("missing", "str"),
    "unit": ("unit", "str"),
}


def _own() -> dict[str, tuple[str, str]]:
    from anonsql.algorithms import own_options

    return {o.name: (o.field, o.kind) for o in own_options()}


#: the one option table: every surface (command line, spec files, SQL, the Python API)
#: takes exactly these options
OPTIONS: dict[str, tuple[str, str]] = {**SHARED, **_own()}
#: options that only mean something with a privacy model: option -> the model's option
NEEDS_MODEL = {
    "l_variant": "l",
    "c": "l",
    "l_estimator": "l",
    "t_variant": "t",
    "sensitive_hierarchy": "t",
    "beta_variant": "beta",
    "k_map_estimator": "k_map",
    "significance": "k_map",
    "uniqueness_estimator": "max_population_uniqueness",
}
#: the thresholds of the privacy goal, which must be finite numbers
THRESHOLDS = (
    "k",
    "l",
    "c",
    "t",
    "beta",
    "delta",
    "suppression",
    "gs_factor",
    "delta_min",
    "delta_max",
    "significance",
    "sampling_fraction",
    "max_average_risk",
    "max_sample_uniqueness",
    "max_population_uniqueness",
)
#: other spellings accepted for the same option (the CLI's and SAP HANA's names)
ALIASES = {
    "qis": "qi",
    "quasi_identifiers": "qi",
    "sa": "sensitive",
    "suppression_limit": "suppression",
    "hierarchies": "hierarchy",
    "into": "output",
    "sa_hierarchy": "sensitive_hierarchy",
    "gsfactor": "gs_factor",
    "masks": "mask",
    "insensitive": "keep",
}


#: the algorithms that count units (the lattice searches over a unit histogram)
UNIT_ALGORITHMS = ("flash", "exhaustive", "heuristic")


@dataclass
class RunOptions:
    """A checked set of options: the spec, and where each QI's hierarchy comes from."""

    spec: Spec
    hierarchies: dict[str, Any] = field(default_factory=dict)  # qi -> definition


def check_sensitive_options(spec: Spec, prefix: str = "", spell: Spell = repr) -> None:
    """Several sensitive attributes: the algorithms that protect several (the lattice
    searches, :attr:`~anonsql.algorithms.base.Algorithm.several_sensitive`), and no
    hierarchical EMD (it reads one attribute's hierarchy)."""
    if not isinstance(spec.sensitive, list):
        return
    from anonsql.algorithms import registry

    several = [n for n, cls in registry().items() if cls.several_sensitive]
    algorithm = spec.algorithm or "flash"
    if algorithm not in several or spec.recoding_mode != "global":
        raise InputError(
            f"{prefix}several sensitive attributes: algorithm {algorithm!r}"
            + (" with local recoding" if algorithm in several else "")
            + f" protects one; the algorithms that protect several are "
            f"{', '.join(several)} with global recoding"
        )
    if spec.t is not None and spec.t_variant == "hierarchical-emd":
        raise InputError(
            f"{prefix}hierarchical-EMD t-closeness reads the hierarchy of one sensitive "
            f"attribute ({spell('sensitive_hierarchy')}); with several, use another "
            f"{spell('t_variant')} (equal-emd, ordered-emd, l1)"
        )


def check_unit_options(spec: Spec, prefix: str, spell: Spell = repr) -> None:
    """What ``unit`` combines with: the lattice searches with global recoding, and no model
    that reads a population table (its rows are not units)."""
    from anonsql.algorithms.catalog import SEE

    unit = getattr(spec, "unit", None)
    if unit is None:
        return
    if not isinstance(unit, str) or not unit:
        raise InputError(f"{prefix}{spell('unit')} is a column name")
    algorithm = spec.algorithm or "flash"
    if algorithm not in UNIT_ALGORITHMS or getattr(spec, "recoding_mode", "global") == "local":
        raise InputError(
            f"{prefix}{spell('unit')}: algorithm {algorithm!r}"
            + (" with local recoding" if algorithm in UNIT_ALGORITHMS else "")
            + f" counts rows, not units; the algorithms that count units are "
            f"{', '.join(UNIT_ALGORITHMS)} {SEE}"
        )
    if getattr(spec, "population", None) is not None:
        raise InputError(
            f"{prefix}{spell('unit')}: k-map and delta-presence against a population table "
            f"count its rows, not people; give the population's size instead "
            f"({spell('population_size')}: the estimated k-map counts people)"
        )


def canonical(name: str) -> str:
    key = name.strip().lower().replace("-", "_")
    return ALIASES.get(key, key)


def check_value(option: str, kind: str, value: Any, where: str) -> Any:
    """``value`` as the option's kind, or a clear error naming the option."""

    def fail(what: str) -> InputError:
        return InputError(f"{where}: {option!r} must be {what}, not {value!r}")

    if kind == "str":
        if not isinstance(value, str) or not value:
            raise fail("a non-empty string")
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            raise fail("true or false")
        return value
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            raise fail("an integer")
        return value
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise fail("a number")
        # JSON and TOML both spell NaN and infinity, and SQL's 1e999 is one
        if not math.isfinite(value):
            raise fail("a finite number")
        return float(value)
    if kind == "list":
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise fail("a list of column names")
        return list(value)
    if kind == "columns":  # one column name, or several (a list, or "a,b")
        if isinstance(value, str) and not value.strip(","):
            raise fail("a column name or a list of column names")
        try:
            return normalize_sensitive(value, f"{where}: {option!r}")
        except InputError:
            raise fail("a column name or a list of column names") from None
    if kind == "levels":  # QI -> level, or a list of levels in the QIs' order
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
            if all("=" in v for v in value):
                value = {k.strip(): v.strip() for k, v in (v.split("=", 1) for v in value)}
        if isinstance(value, Mapping):
            return dict(value)
        if isinstance(value, list | tuple):
            return list(value)
        raise fail("a table of QI = level or a list of levels")
    if kind == "mapping":
        if not isinstance(value, Mapping):
            raise fail("a table of QI = hierarchy")
        return dict(value)
    if kind == "masks":
        from anonsql.masking.methods import masks_text

        return masks_text(value, f"{where}: {option!r}")
    if kind == "size":  # bytes, or a string with a unit ("1GiB")
        from anonsql.data.memory import parse_size

        return parse_size(value, f"{where}: {option!r}")
    raise AssertionError(kind)


def run_options(values: Mapping[str, Any], where: str, alone: bool = False) -> RunOptions:
    """Check every option (unknown names and wrong types are errors) and build the spec.
    ``alone``: the values are checked one by one (type and range), not for how they
    combine (an ``l_variant`` without ``l`` passes)."""
    fields: dict[str, Any] = {}
    seen: dict[str, str] = {}
    for raw, value in values.items():
        option = canonical(raw)
        if option not in OPTIONS:
            raise InputError(
                f"{where}: unknown option {raw!r}; the options are {', '.join(sorted(OPTIONS))}"
            )
        if option in seen:
            raise InputError(f"{where}: option {option!r} given twice ({seen[option]!r}, {raw!r})")
        seen[option] = raw
        target, kind = OPTIONS[option]
        fields[target] = check_value(option, kind, value, where)
    if "qis" not in fields:
        raise InputError(f"{where}: give the quasi-identifiers (option 'qi')")
    definitions = {qi: check_definition(qi, d) for qi, d in fields.pop("hierarchies", {}).items()}
    # catalog names go straight into the spec; files and builders are stored first
    names = {qi: d["name"] for qi, d in definitions.items() if set(d) == {"name"}}
    spec = Spec(**fields, hierarchies=names)
    check_goal(spec, where, given=set() if alone else {canonical(raw) for raw in values})
    if spec.suppression < 0 or spec.suppression > 1:
        raise InputError(f"{where}: 'suppression' is a share of rows in [0, 1]")
    if spec.materialize not in ("view", "table"):
        raise InputError(f"{where}: 'materialize' is 'view' or 'table', not {spec.materialize!r}")
    return RunOptions(spec, {qi: d for qi, d in definitions.items() if qi not in names})


def check_goal(
    spec: Spec,
    where: str,
    given: Collection[str] | None = None,
    spell: Spell = repr,
) -> None:
    """Reject thresholds that are NaN or infinite, and the options of a privacy model that
    was not asked for (``l_variant`` or ``c`` without ``l``, ``t_variant`` or
    ``sensitive_hierarchy`` without ``t``): either is a mistake that would otherwise pass
    silently or fail deep in the search. ``given`` names the options the user set; without
    it, an option counts as set when it differs from the Spec's default. ``spell`` writes
    an option's name as the user's surface does (a CLI flag, say)."""
    prefix = f"{where}: " if where else ""
    for option in THRESHOLDS:
        value = getattr(spec, option)
        if isinstance(value, numbers.Real) and not math.isfinite(value):
            raise InputError(f"{prefix}{spell(option)} must be a finite number, not {value!r}")
    combined = given is None or bool(given)  # an option checked alone: given == set()
    if given is None:
        defaults = {f.name: f.default for f in fields(spec)}
        given = {
            o
            for o in (
                *NEEDS_MODEL,
                *("gs_factor", "time_limit", "steps"),
                *("local_gs_factor", "max_iterations", "adaption_factor"),
            )
            if getattr(spec, o) != defaults.get(o)
        }
    for option, model in NEEDS_MODEL.items():
        if option in given and getattr(spec, model) is None:
            raise InputError(
                f"{prefix}{spell(option)} is an option of {spell(model)}, which is not set; "
                f"give {spell(model)} or leave {spell(option)} out"
            )
    if "l_estimator" in given and spec.l_variant != "entropy-l":
        raise InputError(
            f"{prefix}{spell('l_estimator')} is an option of entropy l-diversity; "
            f"give {spell('l_variant')} entropy-l or leave {spell('l_estimator')} out"
        )
    gs = spec.gs_factor
    if isinstance(gs, numbers.Real) and not 0 <= gs <= 1:
        raise InputError(f"{prefix}{spell('gs_factor')} must be a number in [0, 1], not {gs!r}")
    # every algorithm checks its own options, whichever algorithm the spec names (the
    # heuristic search's limits, rho-Gain's passes, local recoding's factors, Mondrian's
    # and TA_DA's options, MDAV's blocks)
    from anonsql.algorithms import registry

    algorithms = registry()
    chosen = algorithms.get(spec.algorithm)
    for cls in algorithms.values():
        cls.check(spec, prefix, given, spell, chosen, alone=not combined)
    if combined:  # how options combine; an option checked alone is not judged so
        check_unit_options(spec, prefix, spell)
        check_sensitive_options(spec, prefix, spell)
    if "gs_factor" in given and spec.metric not in (None, "loss"):
        raise InputError(
            f"{prefix}{spell('gs_factor')} weighs the Loss metric's generalization against "
            f"suppression; it does nothing for {spell('metric')} {spec.metric!r}"
        )


__all__ = [
    "ALIASES",
    "NEEDS_MODEL",
    "OPTIONS",
    "SHARED",
    "RunOptions",
    "canonical",
    "check_goal",
    "check_value",
    "run_options",
]

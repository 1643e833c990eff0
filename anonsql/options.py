"""The options of an anonymization run as plain values (spec files, SQL statements, JSON
parameters), checked and turned into a :class:`~anonsql.anonymization.Spec`.

One table of names and types serves every surface, so the CLI, spec files and SQL accept the
same options, and a wrong type gets the same message wherever it comes from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from anonsql.errors import InputError
from anonsql.hierarchy.definitions import check_definition

# option -> (Spec field, kind); kinds: str, int, number, bool, list (of names), mapping
OPTIONS: dict[str, tuple[str, str]] = {
    "qi": ("qis", "list"),
    "sensitive": ("sensitive", "str"),
    "k": ("k", "int"),
    "l": ("l", "number"),
    "l_variant": ("l_variant", "str"),
    "c": ("c", "number"),
    "t": ("t", "number"),
    "t_variant": ("t_variant", "str"),
    "sensitive_hierarchy": ("sensitive_hierarchy", "str"),
    "suppression": ("suppression", "number"),
    "metric": ("metric", "str"),
    "algorithm": ("algorithm", "str"),
    "strategy": ("strategy", "str"),
    "hierarchy": ("hierarchies", "mapping"),
    "output": ("output", "str"),
    "materialize": ("materialize", "str"),
    "drop_suppressed": ("drop_suppressed", "bool"),
    "solutions": ("solutions", "bool"),
    "assume_monotone": ("assume_monotone", "bool"),
    "replace": ("replace", "bool"),
    "columns": ("columns", "list"),
}
#: other spellings accepted for the same option (the CLI's and SAP HANA's names)
ALIASES = {
    "qis": "qi",
    "quasi_identifiers": "qi",
    "sa": "sensitive",
    "suppression_limit": "suppression",
    "hierarchies": "hierarchy",
    "into": "output",
    "sa_hierarchy": "sensitive_hierarchy",
}


@dataclass
class RunOptions:
    """A checked set of options: the spec, and where each QI's hierarchy comes from."""

    spec: Any  # anonsql.anonymization.Spec (imported lazily)
    hierarchies: dict[str, Any] = field(default_factory=dict)  # qi -> definition


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
        return float(value)
    if kind == "list":
        if isinstance(value, str):
            value = [v.strip() for v in value.split(",") if v.strip()]
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise fail("a list of column names")
        return list(value)
    if kind == "mapping":
        if not isinstance(value, Mapping):
            raise fail("a table of QI = hierarchy")
        return dict(value)
    raise AssertionError(kind)


def run_options(values: Mapping[str, Any], where: str) -> RunOptions:
    """Check every option (unknown names and wrong types are errors) and build the spec."""
    from anonsql.anonymization import Spec

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
    if spec.suppression < 0 or spec.suppression > 1:
        raise InputError(f"{where}: 'suppression' is a share of rows in [0, 1]")
    if spec.materialize not in ("view", "table"):
        raise InputError(f"{where}: 'materialize' is 'view' or 'table', not {spec.materialize!r}")
    return RunOptions(spec, {qi: d for qi, d in definitions.items() if qi not in names})


__all__ = ["ALIASES", "OPTIONS", "RunOptions", "canonical", "check_value", "run_options"]

"""What an anonymization statement asks for: its source table and run options.

Both statement forms end up as the same :class:`~anonsql.options.RunOptions` the CLI and
spec files use; every error names the part of the statement it comes from.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from anonsql.dialect.anonsql_dialect import (
    AnonSQL,
    AnonymizationColumn,
    AnonymizationOption,
    Anonymize,
    AnonymizedCreate,
)
from anonsql.errors import InputError
from anonsql.options import OPTIONS, RunOptions, canonical, run_options

#: SAP HANA's algorithm names -> the option each one needs
ALGORITHMS = {
    "K-ANONYMITY": "k",
    "L-DIVERSITY": "l",
    "T-CLOSENESS": "t",
    "BETA-LIKENESS": "beta",
    "DELTA-DISCLOSURE": "delta",
}
#: options of an anonymized view's PARAMETERS (the rest come from COLUMN clauses and CREATE)
VIEW_PARAMETERS = sorted(set(OPTIONS) - {"qi", "sensitive", "hierarchy", "output", "materialize"})
COLUMN_PARAMETERS = (
    "is_quasi_identifier",
    "is_sensitive",
    "is_identifier",
    "is_insensitive",
    "is_unit",
    "mask",
    "hierarchy",
)


@dataclass
class Plan:
    """A parsed anonymization statement, ready to run."""

    source: str
    options: RunOptions
    statement: exp.Expression
    #: CREATE without OR REPLACE: an existing relation of that name is an error
    must_not_exist: bool = False


def plan(statement: exp.Expression) -> Plan:
    try:
        if isinstance(statement, Anonymize):
            return _plan_short(statement)
        if isinstance(statement, AnonymizedCreate):
            return _plan_view(statement)
    except RecursionError:
        # values are read recursively (tuples in tuples); none of them nests deeply
        raise InputError("the anonymization statement is nested too deeply") from None
    raise InputError(f"not an anonymization statement: {_text(statement)}")


def _text(node: exp.Expression, limit: int = 120) -> str:
    sql = node.sql(dialect=AnonSQL)
    return sql if len(sql) <= limit else sql[: limit - 3] + "..."


def _name(table: exp.Expression) -> str:
    if not isinstance(table, exp.Table) or table.args.get("db") or table.args.get("catalog"):
        raise InputError(f"give a plain table name, not {_text(table)!r}")
    return table.name


def _value(node: exp.Expression, where: str) -> Any:
    """A Python value from an option's SQL value."""
    if isinstance(node, exp.Literal):
        if node.is_string:
            return node.this
        text = node.this
        return float(text) if any(ch in text for ch in ".eE") else int(text)
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal):
        return -_value(node.this, where)
    if isinstance(node, exp.Boolean):
        return bool(node.this)
    if isinstance(node, exp.Identifier | exp.Column | exp.Var):
        return node.name
    if isinstance(node, exp.Tuple):
        items = node.expressions
        if items and all(isinstance(i, AnonymizationOption) for i in items):
            out: dict[str, Any] = {}
            for item in items:
                key = item.this.name
                if key in out:
                    raise InputError(f"{where}: {key!r} given twice")
                value = _value(item.expression, where)
                # a hierarchy given as a JSON object: a file or builder definition
                if isinstance(value, str) and value.lstrip().startswith("{"):
                    value = _json(value, f"{where}, {key!r}")
                out[key] = value
            return out
        if any(isinstance(i, AnonymizationOption) for i in items):
            raise InputError(f"{where}: mix of names and name = value pairs in {_text(node)}")
        return [_value(i, where) for i in items]
    if isinstance(node, exp.Null):
        raise InputError(f"{where}: NULL is not a value here")
    raise InputError(f"{where}: cannot read the value {_text(node)!r}")


def _json(text: str, where: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"{where}: invalid JSON ({e.msg} at character {e.pos}): {text}") from None
    except RecursionError:
        # the decoder recurses per level; no parameter needs more than a few
        raise InputError(f"{where}: JSON nested too deeply") from None


def _plan_short(st: Anonymize) -> Plan:
    source = _name(st.this)
    head = f"ANONYMIZE TABLE {_text(st.this)}"
    values: dict[str, Any] = {}
    for option in st.args.get("options") or []:
        where = f"{head}, option `{_text(option)}`"
        key = canonical(option.this.name)
        if key == "output":
            raise InputError(f"{where}: the output is named by INTO")
        if key in values:
            raise InputError(f"{where}: option {key!r} given twice")
        values[key] = _value(option.expression, where)
        run_options({"qi": ["_"], key: values[key]}, where, alone=True)  # its type and range
    values["output"] = _name(st.args["output"])
    return Plan(source, run_options(values, head), st)


def _plan_view(st: AnonymizedCreate) -> Plan:
    head = f"CREATE {st.args['kind']} {_text(st.this)} ... WITH ANONYMIZATION"
    select = st.expression
    source, columns = _select_columns(select, head)
    algorithm = st.args["algorithm"].this.upper()
    if algorithm not in ALGORITHMS:
        raise InputError(
            f"{head}: unknown ALGORITHM {st.args['algorithm'].this!r}; use one of "
            f"{', '.join(repr(a) for a in ALGORITHMS)}"
        )
    values: dict[str, Any] = {}
    if st.args.get("parameters") is not None:
        where = f"{head}, PARAMETERS {_text(st.args['parameters'])}"
        params = _json(st.args["parameters"].this, where)
        if not isinstance(params, dict):
            raise InputError(f"{where}: expected a JSON object")
        for raw, value in params.items():
            key = "algorithm" if raw == "search" else canonical(raw)
            if key not in VIEW_PARAMETERS:
                raise InputError(
                    f"{where}: unknown parameter {raw!r}; use {', '.join(VIEW_PARAMETERS)} "
                    f"(columns are set with COLUMN clauses)"
                )
            values[key] = value
    needed = ALGORITHMS[algorithm]
    if needed not in values:
        raise InputError(f"{head}: ALGORITHM {algorithm!r} needs the parameter {needed!r}")
    qis: list[str] = []
    identifiers: list[str] = []
    keep: list[str] = []
    masks: dict[str, str] = {}
    hierarchies: dict[str, Any] = {}
    seen: set[str] = set()
    for col in st.args.get("columns") or []:
        name, params = _column(col, head)
        if name in seen:
            raise InputError(f"{head}: COLUMN {name} appears twice")
        seen.add(name)
        if "mask" in params:
            masks[name] = params["mask"]  # a direct identifier, released masked
        elif params.get("is_identifier"):
            identifiers.append(name)  # SAP HANA's direct identifiers: never released
        if params.get("is_insensitive"):
            keep.append(name)  # released as it is
        if params.get("is_unit"):
            if "unit" in values:
                raise InputError(f"{head}: more than one column is the privacy unit")
            values["unit"] = name  # the privacy unit: counted, never released
        if params.get("is_quasi_identifier"):
            qis.append(name)
            if "hierarchy" in params:
                hierarchies[name] = params["hierarchy"]
        if params.get("is_sensitive"):
            # several sensitive columns: each model applies to each (README "Several
            # sensitive attributes")
            values["sensitive"] = [*values.get("sensitive", []), name]
            if "hierarchy" in params:
                if "t" not in values:
                    # only hierarchical t-closeness reads it; unused, it would mislead
                    raise InputError(
                        f"{head}: COLUMN {name}'s hierarchy is used by t-closeness only; "
                        f'give "t" in PARAMETERS or leave "hierarchy" out'
                    )
                values["sensitive_hierarchy"] = params["hierarchy"]
    if len(values.get("sensitive", [])) == 1:
        values["sensitive"] = values["sensitive"][0]
    if not qis:
        raise InputError(f'{head}: no COLUMN has "is_quasi_identifier": true')
    values.update(qi=qis, output=_name(st.this), materialize=st.args["kind"].lower())
    if hierarchies:
        values["hierarchy"] = hierarchies
    if identifiers:
        values["identifiers"] = identifiers
    if keep:
        values["keep"] = keep
    if masks:
        values["mask"] = {**values.get("mask", {}), **masks}
    options = run_options(values, head)
    replace = bool(st.args.get("replace"))
    options.spec.replace = options.spec.replace or replace  # SQL's OR REPLACE replaces anything
    options.spec.columns = columns
    return Plan(source, options, st, must_not_exist=not replace)


def _column(col: AnonymizationColumn, head: str) -> tuple[str, dict[str, Any]]:
    name = col.this.name
    where = f"{head}, COLUMN {name} PARAMETERS {_text(col.args['parameters'])}"
    params = _json(col.args["parameters"].this, where)
    if not isinstance(params, dict):
        raise InputError(f"{where}: expected a JSON object")
    unknown = sorted(set(params) - set(COLUMN_PARAMETERS))
    if unknown:
        raise InputError(
            f"{where}: unknown parameter(s) {', '.join(map(repr, unknown))}; use "
            f"{', '.join(COLUMN_PARAMETERS)}"
        )
    flags = ("is_quasi_identifier", "is_sensitive", "is_identifier", "is_insensitive", "is_unit")
    for flag in flags:
        if flag in params and not isinstance(params[flag], bool):
            raise InputError(f"{where}: {flag!r} must be true or false, not {params[flag]!r}")
    if "mask" in params:
        if not isinstance(params["mask"], str):
            raise InputError(f"{where}: 'mask' is a masking method such as \"pseudonym\"")
        from anonsql.masking.methods import parse_mask

        parse_mask(name, params["mask"])
        if params.get("is_identifier") is False:
            raise InputError(f"{where}: a masked column is a direct identifier")
    roles = sum(bool(params.get(f)) for f in flags if f != "is_identifier") + bool(
        params.get("is_identifier") or "mask" in params
    )
    if roles > 1:
        raise InputError(
            f"{where}: a column is one of a quasi-identifier, sensitive, insensitive (kept), "
            f"a direct identifier (masked) or the privacy unit"
        )
    if "hierarchy" in params and not isinstance(params["hierarchy"], str | dict):
        raise InputError(f"{where}: 'hierarchy' is a catalog name or a definition object")
    return name, params


def _select_columns(select: exp.Expression, head: str) -> tuple[str, list[str] | None]:
    """The one table and the plain columns an anonymized view selects (None for *)."""
    where = f"{head}: the anonymized query must be SELECT <columns or *> FROM <table>"
    if not isinstance(select, exp.Select):
        raise InputError(where)
    extra = [
        k
        for k in ("joins", "where", "group", "having", "order", "limit", "with_", "distinct")
        if select.args.get(k)
    ]
    if extra:
        raise InputError(f"{where}; remove {', '.join(k.rstrip('_').upper() for k in extra)}")
    from_ = select.args.get("from_") or select.args.get("from")
    if from_ is None or not isinstance(from_.this, exp.Table):
        raise InputError(where)
    source = _name(from_.this)
    if len(select.expressions) == 1 and isinstance(select.expressions[0], exp.Star):
        return source, None
    columns = []
    for e in select.expressions:
        if not isinstance(e, exp.Column) or e.table:
            raise InputError(f"{where}; {_text(e)!r} is not a plain column")
        columns.append(e.name)
    return source, columns


__all__ = ["ALGORITHMS", "Plan", "plan"]

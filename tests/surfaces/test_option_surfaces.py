"""One option table, every surface (issue 29): each option of :data:`anonsql.options.OPTIONS`
(the shared ones and every algorithm family's own) exists on the command line's
``anonymize``, in spec files, in the SQL statement and in the Python API; and each
algorithm's own options are in the table."""

from __future__ import annotations

import dataclasses

import pytest
import sqlglot

from anonsql.algorithms import own_options, registry
from anonsql.cli.anonymize import anonymize as anonymize_command
from anonsql.dialect.anonsql_dialect import AnonSQL
from anonsql.dialect.statements import plan
from anonsql.errors import InputError
from anonsql.options import OPTIONS, SHARED, run_options
from anonsql.spec import Spec

#: the flags of shared options that are not ``--name-with-dashes``
SHARED_FLAGS = {"sensitive": "--sa", "output": "--out", "sensitive_hierarchy": "--sa-hierarchy"}

#: a value of each kind, as Python and as SQL
SAMPLES = {
    "str": ("x", "'x'"),
    "int": (2, "2"),
    "number": (0.5, "0.5"),
    "bool": (True, "TRUE"),
    "list": (["a"], "(a)"),
    "columns": ("a", "a"),
    "mapping": ({"a": "a"}, "(a = 'a')"),
    "masks": ("a=drop", "'a=drop'"),
    "size": ("1GiB", "'1GiB'"),
    "levels": ({"a": 1}, "(a = 1)"),
}


def _known(check) -> None:
    """``check`` may refuse the value (its range, how it combines), never the name."""
    try:
        check()
    except InputError as e:
        assert "unknown" not in str(e), e


def test_the_table_is_the_shared_options_and_every_family_s_own():
    own = {o.name: (o.field, o.kind) for o in own_options()}
    assert {**SHARED, **own} == OPTIONS
    assert not set(SHARED) & set(own)
    fields = {f.name for f in dataclasses.fields(Spec)}
    assert {field for field, _ in OPTIONS.values()} <= fields


def test_each_algorithm_s_options_are_in_the_table():
    for name, cls in registry().items():
        assert set(cls.options) <= set(OPTIONS), name


def test_two_families_declare_an_option_alike():
    seen: dict[str, tuple[str, str]] = {}
    for o in own_options():
        assert seen.setdefault(o.name, (o.field, o.kind)) == (o.field, o.kind), o.name


@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_the_command_line_takes_it(option):
    flags = {flag for p in anonymize_command.params for flag in p.opts}
    own = {o.name: o.cli_flag for o in own_options()}
    flag = own.get(option) or SHARED_FLAGS.get(option) or "--" + option.replace("_", "-")
    assert flag in flags, (option, flag)


@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_a_spec_file_takes_it(option):
    value = SAMPLES[OPTIONS[option][1]][0]
    # spec files are read by run_options (anonsql.spec_file.read_spec)
    _known(lambda: run_options({"qi": ["a"], option: value}, "spec.toml", alone=True))


@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_the_sql_statement_takes_it(option):
    value = SAMPLES[OPTIONS[option][1]][1]
    qi = "" if option == "qi" else "qi = (a), "
    statement = f"ANONYMIZE TABLE t INTO o WITH ({qi}{option} = {value})"
    _known(lambda: plan(sqlglot.parse_one(statement, dialect=AnonSQL)))


@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_the_python_api_takes_it(option):
    from anonsql.api import as_options

    value = SAMPLES[OPTIONS[option][1]][0]
    base = {} if option == "qi" else {"qi": ["a"]}
    _known(lambda: as_options(base, {option: value}, "anonymize()"))


def test_an_unknown_option_is_refused_everywhere():
    with pytest.raises(InputError, match="unknown option"):
        run_options({"qi": ["a"], "no_such_option": 1}, "spec.toml")
    with pytest.raises(InputError, match="unknown option"):
        plan(sqlglot.parse_one("ANONYMIZE TABLE t INTO o WITH (no_such = 1)", dialect=AnonSQL))

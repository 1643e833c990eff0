"""``anonsql algorithms``: the catalog covers every registered algorithm, and an error about
an option an algorithm does not take points to it."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from anonsql.algorithms import selectable
from anonsql.algorithms.catalog import CATALOG, SEE
from anonsql.cli.main import cli
from anonsql.errors import InputError
from anonsql.run import anonymize
from anonsql.spec import Spec


def test_the_catalog_is_the_registry():
    assert set(CATALOG) == set(selectable())
    for info in CATALOG.values():
        assert info.summary and info.models and info.engines


def test_the_command_lists_every_algorithm():
    r = CliRunner().invoke(cli, ["algorithms", "--json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)
    assert [x["name"] for x in rows] == list(CATALOG)
    text = CliRunner().invoke(cli, ["algorithms"]).output
    assert "flash: the optimal full-domain generalization" in text
    assert "counts privacy units (--unit)" in text


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"algorithm": "greedy", "suppression": 0.1}, "use suppression 0"),
        ({"algorithm": "mdav", "l": 2, "sensitive": "s"}, "guarantees k-anonymity only"),
        ({"algorithm": "mondrian", "unit": "u"}, "the algorithms that count units"),
    ],
)
def test_refusals_point_to_the_catalog(db, spec, message):
    import pandas as pd

    db.backend.write_frame(
        "t", pd.DataFrame({"a": [1, 2, 3, 4], "s": list("abab"), "u": [1, 1, 2, 2]})
    )
    full = {"qis": ["a"], "k": 2, "keep": [c for c in ("s", "u") if c not in spec.values()]}
    with pytest.raises(InputError, match=message) as e:
        anonymize(db, "t", Spec(**{**full, **spec}))
    assert SEE in str(e.value)

"""The demo generator: deterministic, census-like."""

from __future__ import annotations

from anonsql.demo.census import generate
from tests.helpers.roles import CENSUS


def test_same_seed_same_table():
    a = generate(3000, seed=1)
    b = generate(3000, seed=1)
    assert a.equals(b)
    assert not a.equals(generate(3000, seed=2))


def test_columns_and_plausible_values():
    d = generate(20_000)
    assert list(d.columns) == CENSUS
    assert d["age"].between(17, 90).all()
    assert d["zip"].str.fullmatch(r"\d{5}").all()
    rich = d.groupby("education")["income"].apply(lambda s: (s == ">50K").mean())
    assert rich["Doctorate"] > rich["Grades 9-12"]
    assert 0.1 < (d["income"] == ">50K").mean() < 0.4

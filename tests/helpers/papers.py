"""The papers' worked examples as data files (``tests/fixtures/papers/<method>/``; their
README says which paper, table or figure each file is from), read the same way by every test.

Numbers are written as a reader checks them against the paper: exact fractions (``2/3``),
``a sqrt b`` for the square roots of the entropy examples, ``ln(2)`` for
``math.log(2)``; :func:`number` reads them, :func:`fraction` keeps a fraction exact, and
:func:`levels` reads a transformation written ``0,4,1``."""

from __future__ import annotations

import csv
import json
import math
import re
from fractions import Fraction
from pathlib import Path

import pandas as pd

PAPERS = Path(__file__).resolve().parents[1] / "fixtures" / "papers"

_SQRT = re.compile(r"^(?P<a>[0-9]+(?:/[0-9]+)?)?\s*(?P<over>/)?\s*sqrt\s+(?P<b>[0-9]+)$")
_LN = re.compile(r"^ln\((?P<x>[0-9.]+)\)$")


def path(method: str, name: str) -> Path:
    p = PAPERS / method / name
    if not p.is_file():
        raise FileNotFoundError(f"no paper fixture {p} (see tests/fixtures/papers/README.md)")
    return p


def frame(method: str, name: str, **kw) -> pd.DataFrame:
    """A CSV fixture as a DataFrame (pandas' type inference unless ``dtype`` is given)."""
    return pd.read_csv(path(method, name), keep_default_na=False, **kw)


def rows(method: str, name: str) -> list[dict[str, str]]:
    """A CSV fixture's rows as dictionaries of strings, in the file's order."""
    with open(path(method, name), newline="") as f:
        return list(csv.DictReader(f))


def data(method: str, name: str):
    """A JSON fixture."""
    return json.loads(path(method, name).read_text())


def fraction(text: str) -> Fraction:
    """``3/4``, ``75``, ``0``: exact."""
    return Fraction(text)


def number(text: str) -> float:
    """A fraction (``2/3``), a square root (``2 sqrt 2``, ``1/sqrt 2``), ``ln(2)``, or a
    decimal as Python reads it (``0.5731509655590044``, the same float)."""
    text = str(text).strip()
    m = _SQRT.match(text)
    if m:
        root = math.sqrt(int(m["b"]))
        if m["over"]:
            return float(Fraction(m["a"] or 1)) / root
        return float(Fraction(m["a"] or 1)) * root
    m = _LN.match(text)
    if m:
        return math.log(float(m["x"]))
    if "/" in text:
        return float(Fraction(text))
    return float(text)


def levels(text: str) -> tuple[int, ...]:
    """A transformation written ``0,4,1,1``."""
    return tuple(int(x) for x in text.split(","))


__all__ = ["PAPERS", "data", "fraction", "frame", "levels", "number", "path", "rows"]

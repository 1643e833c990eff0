"""In a notebook: a Run (anonsql.anonymize's result) and a profile show themselves as HTML
tables (Jupyter's ``_repr_html_``), every value escaped."""

from __future__ import annotations

from html.parser import HTMLParser

import pandas as pd

import anonsql

HOSTILE = "<script>alert(1)</script>"


class _Cells(HTMLParser):
    """The text of every cell, and every tag met (a script tag must not be one)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.cells: list[str] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.cells.append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def _parse(html: str) -> _Cells:
    p = _Cells()
    p.feed(html)
    return p


def _frame(rows: int = 400) -> pd.DataFrame:
    return pd.DataFrame(
        {
            HOSTILE: [20 + i % 50 for i in range(rows)],
            "sex": ["F" if i % 3 else "M" for i in range(rows)],
            "zip": [f"{47000 + i % 40:05d}" for i in range(rows)],
        }
    )


def test_a_run_is_a_table_with_its_levels_and_guarantee():
    run = anonsql.anonymize(_frame(), {"qi": [HOSTILE, "sex", "zip"], "k": 5, "suppression": 0.05})
    html = run._repr_html_()
    parsed = _parse(html)
    assert "script" not in parsed.tags and HOSTILE not in html
    assert parsed.tags.count("table") == 2
    doc = run.summary()
    cells = parsed.cells
    assert HOSTILE in cells  # the QI's name, escaped in the page, read back as text
    assert doc["guarantee"] in cells
    assert f"{doc['measures']['classes']} (smallest {doc['measures']['min_class_size']})" in cells
    for q in doc["qis"]:
        i = cells.index(q)
        assert cells[i + 1] == str(doc["levels"][q])


def test_a_greedy_run_says_its_levels_are_per_class():
    run = anonsql.anonymize(
        _frame(200), {"qi": ["sex", "zip"], "k": 5, "algorithm": "greedy", "keep": [HOSTILE]}
    )
    cells = _parse(run._repr_html_()).cells
    assert cells[cells.index("zip") + 1] == "per class"
    assert any(c.startswith("greedy") for c in cells)


def test_a_profile_is_a_table_escaped():
    profile = anonsql.profile(_frame(), None)
    html = profile._repr_html_()
    parsed = _parse(html)
    assert "script" not in parsed.tags and HOSTILE not in html
    assert HOSTILE in parsed.cells and "zip" in parsed.cells

"""The in-memory hierarchy: construction, validation errors, builders."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings

from anonsql.errors import HierarchyError
from anonsql.hierarchy import builders
from anonsql.hierarchy.hierarchy import Hierarchy
from anonsql.hierarchy.loaders import load_file
from tests.helpers.strategies import hierarchy_rows

ANIMALS = [["Cat", "Felid", "Mammal"], ["Lion", "Felid", "Mammal"], ["Dog", "Dog", "Mammal"]]


def test_rows_give_levels_parents_and_leaf_counts():
    h = Hierarchy.from_rows("race", ANIMALS)
    assert h.height == 3 and h.top_level == 2
    assert h.leaf_labels == ["Cat", "Lion", "Dog"]
    felid = h.node("Felid", 1)
    assert h.leaf_counts[felid] == 2
    assert h.leaf_counts[h.root] == 3
    # "Dog" stands on levels 0 and 1: two nodes, keyed by (level, label)
    assert h.node("Dog", 0) != h.node("Dog", 1)
    assert h.node("Dog") == h.node("Dog", 0)
    assert h.generalize(["Cat", "Dog"], 1) == ["Felid", "Dog"]


def test_two_parents_names_label_and_rows():
    rows = [["a", "x", "*"], ["b", "y", "*"], ["a", "y", "*"]]
    with pytest.raises(HierarchyError, match=r"'a' on level 0 has two parents, 'x' .*row 1.* 'y'"):
        Hierarchy.from_rows("h", rows, source="f.csv")


def test_unequal_depth_names_rows():
    with pytest.raises(HierarchyError, match=r"f.csv, row 2 has 2 levels but f.csv, row 1 has 3"):
        Hierarchy.from_rows("h", [["a", "x", "*"], ["b", "*"]], source="f.csv")


def test_empty_and_multiple_roots():
    with pytest.raises(HierarchyError, match="empty"):
        Hierarchy.from_rows("h", [])
    with pytest.raises(HierarchyError, match="2 roots"):
        Hierarchy.from_rows("h", [["a", "x"], ["b", "y"]])
    with pytest.raises(HierarchyError, match="empty label on level 1"):
        Hierarchy.from_rows("h", [["a", " ", "*"]])


def test_exact_duplicate_rows_are_accepted():
    h = Hierarchy.from_rows("h", [["a", "*"], ["a", "*"], ["b", "*"]])
    assert h.leaf_labels == ["a", "b"]


def test_parent_child_edges_cycles_and_two_parents():
    h = Hierarchy.from_edges(
        "h",
        [
            ("Cat", "Felid", 1),
            ("Lion", "Felid", 2),
            ("Felid", "Mammal", 3),
            ("Dog", "Canid", 4),
            ("Canid", "Mammal", 5),
            ("Mammal", None, 6),
        ],
    )
    assert h.height == 3 and sorted(h.leaf_labels) == ["Cat", "Dog", "Lion"]
    with pytest.raises(HierarchyError, match="cycle"):
        Hierarchy.from_edges("h", [("a", "b", 1), ("b", "c", 2), ("c", "a", 3), ("x", "a", 4)])
    with pytest.raises(HierarchyError, match="cycle"):
        Hierarchy.from_edges("h", [("a", "a", 1)])
    with pytest.raises(HierarchyError, match="'a' has two parents"):
        Hierarchy.from_edges("h", [("a", "b", 1), ("a", "c", 2)])
    with pytest.raises(HierarchyError, match="same number of levels"):
        Hierarchy.from_edges("h", [("a", "b", 1), ("b", "*", 2), ("c", "*", 3)])


def test_tree_forms():
    a = Hierarchy.from_tree(
        "h",
        {
            "label": "*",
            "children": [
                {"label": "Felid", "children": ["Cat", "Lion"]},
                {"label": "Dog", "children": ["Dog"]},
            ],
        },
    )
    b = Hierarchy.from_tree("h", {"*": {"Felid": ["Cat", "Lion"], "Dog": ["Dog"]}})
    assert a.to_rows() == b.to_rows()
    with pytest.raises(HierarchyError, match="same depth"):
        Hierarchy.from_tree("h", {"*": {"Felid": ["Cat"], "Dog": []}})


def test_loaders(tmp_path):
    arx = tmp_path / "h.csv"
    arx.write_bytes(b"Cat;Felid;*\r\nLion;Felid;*\r\nDog;Canid;*")  # CRLF, no final newline
    assert load_file("h", arx).leaf_labels == ["Cat", "Lion", "Dog"]
    comma = tmp_path / "c.csv"
    comma.write_text("Cat,Felid,*\nLion,Felid,*\n")
    assert load_file("h", comma).height == 3
    pc = tmp_path / "pc.csv"
    pc.write_text("child;parent\nCat;Felid\nFelid;*\n*;\n")
    assert load_file("h", pc, "parent-child").to_rows() == [["Cat", "Felid", "*"]]
    js = tmp_path / "t.json"
    js.write_text(json.dumps({"*": ["a", "b"]}))
    assert load_file("h", js).leaf_labels == ["a", "b"]
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with pytest.raises(HierarchyError, match="not valid JSON"):
        load_file("h", bad)
    with pytest.raises(HierarchyError, match="does not exist"):
        load_file("h", tmp_path / "missing.csv")
    empty = tmp_path / "empty.csv"
    empty.write_text("\n\n")
    with pytest.raises(HierarchyError, match="empty"):
        load_file("h", empty)


@settings(max_examples=60, deadline=None)
@given(hierarchy_rows())
def test_rows_round_trip_and_ancestors(rows):
    h = Hierarchy.from_rows("h", rows)
    distinct = list(dict.fromkeys(map(tuple, rows)))
    assert sorted(map(tuple, h.to_rows())) == sorted(distinct)
    for lv in range(h.height):
        assert h.generalize([r[0] for r in distinct], lv) == [r[lv] for r in distinct]
    assert h.leaf_counts[h.root] == len({r[0] for r in rows})


def test_interval_builder_with_bottom_and_top_coding():
    h = builders.intervals("age", range(0, 100), [5, 10, 20], start=0, bottom=15, top=90)
    row = dict((r[0], r) for r in h.to_rows())
    assert row["37"] == ["37", "[35, 40)", "[30, 40)", "[20, 40)", "*"]
    assert row["3"][1:4] == ["<15"] * 3
    assert row["95"][1:4] == [">=90"] * 3
    with pytest.raises(HierarchyError, match="not a multiple"):
        builders.intervals("age", range(10), [5, 7])
    with pytest.raises(HierarchyError, match="not a number"):
        builders.intervals("age", ["x"], [5])


def test_mask_dates_groups_builders():
    z = builders.mask("zip", ["47012", "47013", "48001"])
    assert z.to_rows()[0] == ["47012", "4701*", "470**", "47***", "4****", "*****"]
    mixed = builders.mask("zip", ["123", "12345"])
    assert mixed.to_rows()[0][-1] == "*"
    d = builders.dates("d", ["2024-03-05", "1999-12-31"])
    assert d.to_rows()[0] == ["2024-03-05", "2024-03", "2024", "2020s", "*"]
    with pytest.raises(HierarchyError, match="ISO date"):
        builders.dates("d", ["03/05/2024"])
    g = builders.groups("e", ["a", "b", "c", "d", "e"], [2, 4])
    assert g.to_rows()[4] == ["e", "[e]", "[e]", "*"]
    assert g.to_rows()[1] == ["b", "[a..b]", "[a..d]", "*"]


def test_lca_vectorized_matches_definition():
    h = Hierarchy.from_rows("race", ANIMALS)
    a = np.array([h.leaf("Cat"), h.leaf("Cat"), h.leaf("Dog"), h.node("Felid", 1)])
    b = np.array([h.leaf("Lion"), h.leaf("Dog"), h.leaf("Dog"), h.leaf("Cat")])
    assert [h.labels[x] for x in h.lca(a, b)] == ["Felid", "Mammal", "Dog", "Felid"]
    assert h.labels[h.lca_of_set([h.leaf("Cat"), h.leaf("Lion")])] == "Felid"

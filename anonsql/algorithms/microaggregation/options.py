"""Microaggregation's own options (seed 001): MDAV's blocks; wLVQ2's label and the seed of
the maps are declared with Mondrian's (:mod:`anonsql.algorithms.mondrian.options`), whose
label and seed they share. Declared apart from the algorithms so that the command line
reads them without loading them."""

from __future__ import annotations

from anonsql.spec import Option

OPTIONS: tuple[Option, ...] = (
    Option(
        "mdav_block",
        "mdav_block",
        "int",
        "mdav only: largest block of distinct QI tuples run as exact MDAV; larger inputs are "
        "first cut by median splits into blocks of at most this many (default 50000).",
    ),
)

__all__ = ["OPTIONS"]

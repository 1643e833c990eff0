"""Mondrian's and TA_DA's own options (seed 003): the task (label or clustering), the data
controllers and their seed, and Mondrian's stop rule. Declared apart from the algorithms so
that the command line reads them without loading them."""

from __future__ import annotations

from anonsql.spec import Option

OPTIONS: tuple[Option, ...] = (
    Option(
        "label",
        "label",
        "str",
        "tada: the column the downstream classifier predicts (guides the decision tree); "
        'mdav/ktca/ctca/kde: the label wLVQ2 supervises the prototypes with (the "++" '
        "variants).",
    ),
    Option(
        "cluster",
        "cluster",
        "bool",
        "tada: anonymize for clustering (constrained k-means on every column but the "
        "sensitive one and --label; needs anonsql[ml]).",
    ),
    Option(
        "controllers",
        "controllers",
        "int",
        "mondrian/tada: split the table at random into this many parts (data controllers) "
        "anonymized independently; the union is released.",
    ),
    Option(
        "seed",
        "seed",
        "int",
        "mondrian/tada: seed of the controllers' split and of the k-means (default 0); "
        "ktca/ctca and wLVQ2: seed of the maps and of the drawn examples (default 0). "
        "safepub: for tests and reproductions only (default: the operating system's "
        "randomness); the release says so. heuristic: seed of the random restarts of its "
        "local search (default 0).",
    ),
    Option(
        "mondrian_stop",
        "mondrian_stop",
        "str",
        "mondrian/tada: when the widest QI cannot be cut, try the next widest (default) or "
        "release the partition (widest: LeFevre et al.'s rule).",
        choices=("next-widest", "widest"),
    ),
)

__all__ = ["OPTIONS"]

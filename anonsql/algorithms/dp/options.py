"""SafePub's own options: the (epsilon, delta) it spends, the share of epsilon spent choosing
the generalization, the exponential mechanism's steps, and the fixed levels of a release that
spends nothing on the choice. Declared apart from the algorithm so that the command line
reads them without loading it. Its seed is the partitioning algorithms' option ``seed``."""

from __future__ import annotations

from anonsql.spec import Option

OPTIONS: tuple[Option, ...] = (
    Option(
        "dp_epsilon",
        "dp_epsilon",
        "number",
        "safepub: the epsilon the release spends (differential privacy).",
    ),
    Option("dp_delta", "dp_delta", "number", "safepub: the delta it spends."),
    Option(
        "dp_search_budget",
        "dp_search_budget",
        "number",
        "safepub: the share of epsilon spent choosing the generalization, in [0, 1) "
        "(default 0.1); 0: the generalization given by --levels.",
    ),
    Option(
        "dp_steps",
        "dp_steps",
        "int",
        "safepub: steps of the exponential-mechanism walk over the lattice (default 100).",
    ),
    Option(
        "levels",
        "levels",
        "levels",
        "safepub with --dp-search-budget 0: the fixed levels, QI=LEVEL,... or one level per "
        "QI in --qi's order.",
    ),
)

__all__ = ["OPTIONS"]

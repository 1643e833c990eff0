"""GAA's own option: its merging strategy (seed 004 Def. 17). Declared apart from the
algorithm so that the command line reads it without loading GAA."""

from __future__ import annotations

from anonsql.spec import Option

OPTIONS: tuple[Option, ...] = (
    Option(
        "strategy",
        "strategy",
        "str",
        "GAA's merging strategy (Mauger et al., Def. 17; ldiv/tclo: the pure references).",
        choices=("s1", "s2", "s3", "s4", "s5", "s6", "s7", "ldiv", "tclo"),
    ),
)

__all__ = ["OPTIONS"]

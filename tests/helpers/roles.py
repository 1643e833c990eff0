"""The roles a test run declares for the columns it does not anonymize (every column of an
output needs one: README "Every column has a role")."""

from __future__ import annotations

#: the demo census's columns, in order; it holds no identifiers, so a test run keeps as they
#: are the columns it gives no other role
CENSUS = [
    "age",
    "sex",
    "race",
    "marital_status",
    "education",
    "zip",
    "country",
    "occupation",
    "income",
]


def others(columns: list[str], *named: str) -> list[str]:
    """The columns of ``columns`` not ``named`` (the QIs, the sensitive attribute)."""
    return [c for c in columns if c not in named]

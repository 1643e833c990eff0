"""anonsql: anonymization that lives inside the database.

Heavy modules (duckdb, pandas, numpy) are imported lazily so that ``anonsql --help``
stays instant: ``anonsql.anonymize`` and ``anonsql.connect`` load them on first use.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = ["__version__", "anonymize", "connect", "profile"]


def __getattr__(name: str) -> Any:
    if name == "anonymize":
        from anonsql.api import anonymize

        return anonymize
    if name == "profile":
        from anonsql.api import profile

        return profile
    if name == "connect":
        from anonsql.connection import connect

        return connect
    raise AttributeError(f"module 'anonsql' has no attribute {name!r}")

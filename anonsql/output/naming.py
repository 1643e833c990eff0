"""Names of the relations anonsql writes: checks that every writer (anonymize, represent,
demo, statements, spec runs) runs before it creates or replaces a view or table.

The rule: a writer replaces only a relation that anonsql wrote, or any relation when the
caller passed ``replace``; it never writes over its own source or anonsql's tables."""

from __future__ import annotations

from anonsql.errors import InputError

INTERNAL_PREFIX = "anonsql_"


def check_output_name(output: str, source: str) -> None:
    """Reject an empty name, the source's name and anonsql's reserved prefix."""
    if not output:
        raise InputError("give an output name")
    if output == source:
        raise InputError(f"the output {output!r} would overwrite the source table; choose another")
    if output.lower().startswith(INTERNAL_PREFIX):
        raise InputError(f"names starting with {INTERNAL_PREFIX!r} are reserved for anonsql")


def check_may_replace(db, name: str, replace: bool) -> None:
    """Raise when ``name`` exists, was not written by anonsql, and ``replace`` is not set."""
    from anonsql.output.provenance import Provenance

    if replace or not db.backend.table_exists(name):
        return
    if not Provenance(db.backend).produced(name):
        raise InputError(
            f"{name!r} exists and was not written by anonsql; drop it, choose another name, "
            f"or pass replace"
        )


__all__ = ["INTERNAL_PREFIX", "check_may_replace", "check_output_name"]

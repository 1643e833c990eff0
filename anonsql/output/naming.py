"""Names of the relations anonsql writes: checks that every writer (anonymize, represent,
demo, statements, spec runs, import) runs before it creates or replaces a view or table.

The rule: a writer replaces only a relation that anonsql wrote, or any relation when the
caller passed ``replace``; it never writes over its own source or anonsql's tables.

Names are compared as the engine resolves them (:meth:`Backend.canonical_name`), not as
strings: anonsql quotes every identifier, and DuckDB still finds ``adult`` under "ADULT",
Spark's catalog folds case, and PostgreSQL cuts a name to 63 bytes (a longer name is refused
here, by :meth:`Backend.check_name`, instead of landing on another relation).

Who wrote a relation: an anonymization run's output is in ``anonsql_runs``; what anonsql
writes outside a run (a representation, the demo table) and the tables ``anonsql import``
loads (user data) are recorded in ``anonsql_relations`` with their last writer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from anonsql.backend.base import static
from anonsql.backend.sql_templates import template
from anonsql.errors import InputError

if TYPE_CHECKING:
    from anonsql.backend.base import Backend
    from anonsql.database import Database

INTERNAL_PREFIX = "anonsql_"
#: prefixes of anonsql's own relations (its tables; staging, backup and CTE names), in any case
RESERVED_PREFIXES = (INTERNAL_PREFIX, "__anonsql")
#: last writer of the relations anonsql wrote outside an anonymization run
RELATIONS = "anonsql_relations"
#: writers recorded in ``anonsql_relations``; ``import`` marks user data. A run's output is
#: anonsql's through ``anonsql_runs``; recording it here too makes it anonsql's again after
#: an import under its name was replaced with ``replace``
WRITERS = ("anonymize", "represent", "demo", "import")


def is_reserved(name: str) -> bool:
    return name.lower().startswith(RESERVED_PREFIXES)


def check_output_name(output: str, source: str | None, backend: Backend | None = None) -> None:
    """Reject an empty name, anonsql's reserved prefixes, a name the engine would not keep
    as given, and a name that denotes the source relation on the engine.

    ``backend`` decides what "the same relation" means; without it (a caller that does not
    pass it yet) names equal up to case count as the same, the strictest engine's rule."""
    if not output:
        raise InputError("give an output name")
    if is_reserved(output):
        raise InputError(
            f"names starting with {INTERNAL_PREFIX!r} or '__anonsql' (in any case) are "
            f"reserved for anonsql; choose another name than {output!r}"
        )
    if backend is not None:
        backend.check_name(output)
    if source is None:
        return
    same = (
        backend.same_relation(output, source)
        if backend is not None
        else output.lower() == source.lower()
    )
    if same:
        also = "" if output == source else f" {source!r} (the engine takes both names for one)"
        raise InputError(
            f"the output {output!r} would overwrite the source{also}; choose another name"
        )


def existing_relation(backend: Backend, name: str) -> str | None:
    """The name under which the relation that ``name`` resolves to is stored (``adult`` for
    "ADULT" on DuckDB), or None when there is none."""
    return backend.stored_name(name)


def written_by(db: Database, name: str) -> str | None:
    """Which anonsql writer last wrote relation ``name`` ('anonymize', 'represent', 'demo'),
    or None when anonsql did not write it (or a user's table was imported over it). Reads
    only; creates none of anonsql's tables."""
    from anonsql.provenance import Provenance

    backend = db.backend
    if RELATIONS in backend.schemas_ready or backend.table_exists(RELATIONS):
        for stored, writer in backend.fetchall(f"SELECT name, writer FROM {RELATIONS}"):
            if backend.same_relation(stored, name):
                return None if writer == "import" else str(writer)
    if backend.table_exists("anonsql_runs") and Provenance(backend).produced(name):
        return "anonymize"
    return None


def record_written(db: Database, name: str, writer: str) -> None:
    """Record ``writer`` as the last writer of relation ``name``, replacing what was recorded
    for it under any spelling. Call inside the transaction that writes the relation."""
    if writer not in WRITERS:
        raise ValueError(f"unknown writer {writer!r}; one of {', '.join(WRITERS)}")
    backend = db.backend
    if RELATIONS not in backend.schemas_ready:  # forgotten on rollback, as the others
        backend.execute(static("output/create_relations", backend.dialect))
        backend.schemas_ready.add(RELATIONS)
    for (stored,) in backend.fetchall(f"SELECT name FROM {RELATIONS}"):
        if backend.same_relation(stored, name):
            backend.execute(template("output/delete_relation", backend.dialect, name=stored))
    backend.execute(template("output/insert_relation", backend.dialect, name=name, writer=writer))


def check_may_replace(db: Database, name: str, replace: bool) -> None:
    """Raise when the engine would not keep ``name`` as given, or when ``name`` resolves to
    an existing relation that anonsql did not write and ``replace`` is not set."""
    backend = db.backend
    backend.check_name(name)
    if replace:
        return
    existing = existing_relation(backend, name)
    if existing is None or written_by(db, name) is not None:
        return
    what = repr(name) if existing == name else f"{name!r} (the existing {existing!r})"
    raise InputError(
        f"{what} exists and was not written by anonsql; drop it, choose another name, "
        f"or pass replace"
    )


__all__ = [
    "INTERNAL_PREFIX",
    "RELATIONS",
    "RESERVED_PREFIXES",
    "check_may_replace",
    "check_output_name",
    "existing_relation",
    "is_reserved",
    "record_written",
    "written_by",
]

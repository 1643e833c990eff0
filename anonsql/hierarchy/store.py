"""Hierarchies stored in the database as closure tables.

Three tables (templates in ``sql/hierarchy/``):

* ``anonsql_hierarchy`` - the catalog, one row per version: key (``<name>@<content hash>``),
  name, version, height (number of levels), leaves, nodes, source;
* ``anonsql_hierarchy_node`` - one row per node: id, label, level, parent id, leaves below;
  unique on ``(hierarchy, level, label)``;
* ``anonsql_hierarchy_closure`` - one row per (ancestor, descendant) pair with their distance,
  the node itself included at distance 0. It is derived in SQL from the parent links;
* ``anonsql_hierarchy_map`` - one row per leaf and level: the leaf's label, its ancestor's
  label and node id on that level. Derived in SQL from the two above; a published view maps
  each QI's values through it with one lookup (instead of joining nodes, closure and nodes).

A hierarchy stored under a column's name is that column's default hierarchy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from sqlglot import exp

from anonsql.backend import caches
from anonsql.backend.base import Backend, static
from anonsql.backend.sql_templates import ident, table, template
from anonsql.errors import HierarchyError, InputError, MissingValuesError
from anonsql.hierarchy.hierarchy import Hierarchy

if TYPE_CHECKING:
    import pandas as pd

CATALOG = "anonsql_hierarchy"
NODES = "anonsql_hierarchy_node"
CLOSURE = "anonsql_hierarchy_closure"
MAP = "anonsql_hierarchy_map"


def content_key(name: str, hierarchy: Hierarchy) -> str:
    """The key of a hierarchy version: its name and a hash of its nodes (labels, levels,
    parents in id order). Equal content gives the same key, in any database, so deployment
    scripts from two databases never overwrite each other's versions."""
    import hashlib
    import json

    payload = json.dumps(
        [
            list(hierarchy.labels),
            [int(x) for x in hierarchy.levels],
            [int(x) for x in hierarchy.parents],
        ],
        separators=(",", ":"),
    )
    return f"{name}@{hashlib.sha256(payload.encode()).hexdigest()[:16]}"


def catalog_insert(key: str, name: str, version: int, hierarchy: Hierarchy, dialect: str):
    """The catalog row of a stored hierarchy version (``sql/hierarchy/insert_catalog.sql``)."""
    return template(
        "hierarchy/insert_catalog",
        dialect,
        key=key,
        name=name,
        version=version,
        height=hierarchy.height,
        leaves=len(hierarchy.leaf_ids),
        nodes=hierarchy.size,
        source=hierarchy.source,
    )


class HierarchyStore:
    """Reads and writes hierarchies through a :class:`Backend`.

    A hierarchy is stored as immutable *versions*, each under a key ``<name>@<hash>``. A name
    resolves to its latest version; an output pins the keys it read (``pin``), and a version
    that an output uses is never changed or deleted: loading the name again adds a version,
    and ``drop`` refuses while an output uses one.

    Lookups (which version a name or key is) are answered from one read of the whole catalog
    where the backend is its database's only writer (DuckDB: the file is locked to this
    process): the read is kept until anonsql changes a hierarchy catalog in this process
    (``save``, ``drop``, a rollback, a user's SQL statement) and is then made again. A run
    therefore costs one lookup query at most, and none while the catalog stays as it was.
    On engines that other clients write (PostgreSQL, Spark) every lookup is a query."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self._cache: dict[str, Hierarchy] = {}  # by key: a key's content never changes
        # reference (name or key) -> (key, name, source), read from the catalog at a
        # generation of anonsql.backend.caches
        self._lookups: dict[str, tuple[str, str, str | None]] | None = None
        self._lookups_generation: tuple[int, int | None] = (-1, None)

    def _t(self, template_name: str, /, **params):
        return template(template_name, self.backend.dialect, **params)

    def _static(self, template_name: str):
        return static(template_name, self.backend.dialect)

    def ensure_schema(self) -> None:
        if "hierarchy" in self.backend.schemas_ready:
            return
        for name in ("create_catalog", "create_node", "create_closure"):
            self.backend.execute(self._static(f"hierarchy/{name}"))
        if "key" not in self.backend.columns(CATALOG):
            self._migrate()
        self.backend.execute(self._static("hierarchy/create_map"))
        # versions without their map: stored by an anonsql without the map table (before or
        # after this one created it), or whose save stopped before its map was written; a
        # view over such a version would suppress every row. Idempotent: versions with a map
        # are left alone
        self.backend.execute(self._static("hierarchy/insert_missing_maps"))
        self.backend.restrict_access(CATALOG, NODES, CLOSURE, MAP)
        self.backend.schemas_ready.add("hierarchy")

    def _migrate(self) -> None:
        """A catalog written before hierarchy versions: each name becomes its version 1,
        keyed by the name (the node and closure rows already are)."""
        if self.backend.dialect not in ("duckdb", "postgres"):
            raise InputError(
                "this database's hierarchy catalog predates hierarchy versions; reload the "
                "hierarchies into a new database"
            )
        try:
            with self.backend.transaction():
                self.backend.execute(f"ALTER TABLE {CATALOG} ADD COLUMN key VARCHAR")
                self.backend.execute(f"ALTER TABLE {CATALOG} ADD COLUMN version INTEGER")
                self.backend.execute(f"UPDATE {CATALOG} SET key = name, version = 1")
        finally:
            caches.catalog_changed()

    # -- writing -------------------------------------------------------------------------------
    def save(self, hierarchy: Hierarchy, name: str | None = None) -> Hierarchy:
        """Store ``hierarchy`` as the latest version of ``name``, in one transaction: a
        failure leaves the previous versions as they were. Versions of the name that no
        output uses are removed; pinned ones stay."""
        name = name or hierarchy.name
        if not name:
            raise InputError("a hierarchy needs a name")
        hierarchy.check_suppression_marker()
        self.ensure_schema()
        key = content_key(name, hierarchy)
        versions = self._versions(name)
        latest = max((v for _, v in versions), default=0)
        try:
            with self.backend.transaction():
                keys = {k for k, _ in versions}
                if key in keys and dict(versions)[key] == latest:
                    pass  # the same content is the current version already
                else:
                    if key in keys:  # an older version's content again: it becomes the latest
                        self.backend.execute(self._t("hierarchy/delete_catalog", name=key))
                    else:
                        self._insert_version(key, hierarchy)
                    self.backend.appends(CATALOG, exp.column("key").eq(key))
                    self.backend.execute(
                        catalog_insert(key, name, latest + 1, hierarchy, self.backend.dialect)
                    )
                used = self.users()
                for old in keys - {key}:
                    if old not in used:
                        self._delete(old)
        finally:
            caches.catalog_changed()  # every store's lookups are read again
        self.backend.refresh_statistics(CATALOG, NODES, CLOSURE, MAP)
        return hierarchy

    def _insert_version(self, key: str, hierarchy: Hierarchy) -> None:
        # a new version's rows are told apart by its key: where an engine copies a table
        # to undo a transaction (Spark), deleting them undoes this instead
        for name in (NODES, CLOSURE, MAP):
            self.backend.appends(name, exp.column("hierarchy").eq(key))
        self._insert_frame("hierarchy/insert_nodes", hierarchy.to_frame(), key)
        if self.backend.recursive_closure:
            self.backend.execute(self._t("hierarchy/insert_closure", name=key))
        else:
            self._insert_frame("hierarchy/insert_closure_rows", hierarchy.closure_frame(), key)
        self.backend.execute(self._t("hierarchy/insert_map", name=key))

    def _insert_frame(self, template_name: str, frame, name: str) -> None:
        self.backend.insert_frame(
            lambda staged: self._t(template_name, name=name, frame=staged), frame
        )

    def _delete(self, key: str) -> None:
        for t in ("delete_map", "delete_closure", "delete_nodes", "delete_catalog"):
            self.backend.execute(self._t(f"hierarchy/{t}", name=key))
        self._cache.pop(key, None)

    def _versions(self, name: str) -> list[tuple[str, int]]:
        rows = self.backend.fetchall(
            f"SELECT key, version FROM {CATALOG} WHERE name = ? ORDER BY version", [name]
        )
        return [(str(k), int(v)) for k, v in rows]

    def users(self) -> dict[str, list[str]]:
        """Pinned version key -> the outputs (views and tables that exist) that read it."""
        from anonsql.provenance import Provenance

        if not self.backend.table_exists("anonsql_runs"):
            return {}  # no run yet; Provenance would create its tables
        return Provenance(self.backend).hierarchy_users()

    def drop(self, name: str) -> None:
        """Remove every version of ``name``; refused while an output uses one."""
        self.ensure_schema()
        versions = self._versions(name)
        if not versions:
            self.require(name)
        used = self.users()
        outputs = sorted({o for k, _ in versions for o in used.get(k, [])})
        if outputs:
            raise InputError(
                f"hierarchy {name!r} is used by {', '.join(map(repr, outputs))}; drop or "
                f"refresh those outputs first"
            )
        try:
            with self.backend.transaction():
                for key, _ in versions:
                    self._delete(key)
        finally:
            caches.catalog_changed()

    # -- reading ---------------------------------------------------------------------------------
    def catalog(self, all_versions: bool = False) -> pd.DataFrame:
        """One row per name (its current version), or per version with ``all_versions``;
        ``users`` lists the outputs that read the version."""
        self.ensure_schema()
        df = self.backend.fetch_df(self._static("hierarchy/select_catalog"))
        latest = df.groupby("name")["version"].transform("max") if len(df) else df["version"]
        df["current"] = df["version"] == latest
        used = self.users() if len(df) else {}
        df["users"] = [", ".join(used.get(k, [])) for k in df["key"]]
        if not all_versions:
            df = df[df["current"]].drop(columns=["current"])
        return df.reset_index(drop=True)

    def names(self) -> list[str]:
        return list(self.catalog()["name"])

    def _version(self, ref: str) -> tuple[str, str, str | None] | None:
        """(key, name, source) of the version ``ref`` names: a version key, else a name's
        latest version (``sql/hierarchy/select_version.sql``)."""
        self.ensure_schema()
        if caches.ENABLED and (self.backend.sole_writer or caches.current_run() is not None):
            return self._lookup_table().get(ref)
        rows = self.backend.fetchall(self._t("hierarchy/select_version", ref=ref))
        return (str(rows[0][0]), str(rows[0][1]), rows[0][2]) if rows else None

    def _lookup_table(self) -> dict[str, tuple[str, str, str | None]]:
        """Every reference's answer, from one read of the catalog, read again after any
        change to a catalog in this process. Answers as ``select_version.sql``: a key
        names its version, and before a name (should a name look like another's key)."""
        # before the read: a change during it wins. Where others may write the catalog, a
        # snapshot serves one run only
        generation = (
            caches.catalog_generation(),
            None if self.backend.sole_writer else caches.current_run(),
        )
        if self._lookups is not None and self._lookups_generation == generation:
            return self._lookups
        rows = self.backend.fetchall(self._static("hierarchy/select_catalog"))
        # (name, version, key, height, leaves, nodes, source, created_at)
        latest: dict[str, tuple[int, tuple[str, str, str | None]]] = {}
        by_key: dict[str, tuple[str, str, str | None]] = {}
        for name, version, key, *_, source, _created in rows:
            entry = (str(key), str(name), source)
            by_key[str(key)] = entry
            if name not in latest or version > latest[name][0]:
                latest[name] = (version, entry)
        table = {str(name): entry for name, (_, entry) in latest.items()}
        table.update(by_key)
        self._lookups, self._lookups_generation = table, generation
        return table

    def exists(self, ref: str) -> bool:
        return self._version(ref) is not None

    def source_of(self, ref: str) -> str | None:
        """Where the version ``ref`` names came from (a file, a builder, ``auto ...``), from
        the catalog alone; None when there is no such hierarchy."""
        v = self._version(ref)
        return None if v is None else v[2]

    def require(self, ref: str) -> None:
        if not self.exists(ref):
            known = self.names()
            hint = f"; stored hierarchies: {', '.join(known)}" if known else ""
            raise InputError(f"no hierarchy named {ref!r} in the database{hint}")

    def pin(self, ref: str) -> str:
        """The key of the version ``ref`` names (a key stays itself; a name gives its
        current version): what a run records and its output reads."""
        v = self._version(ref)
        if v is None:
            self.require(ref)
        return v[0]  # type: ignore[index]

    def load(self, ref: str) -> Hierarchy:
        """The version ``ref`` names as a :class:`Hierarchy` (cached by key)."""
        v = self._version(ref)
        if v is None:
            self.require(ref)
        key, name, source = v  # type: ignore[misc]
        if key in self._cache:
            return self._cache[key]
        df = self.backend.fetch_df(self._t("hierarchy/select_nodes", name=key))
        parents = df["parent"].fillna(-1).astype(np.int64).to_numpy()
        h = Hierarchy(
            name,
            [str(x) for x in df["label"]],
            df["level"].to_numpy(np.int64),
            parents,
            source or "database",
        )
        self._cache[key] = h
        return h

    def resolve(self, column: str, explicit: str | None = None) -> str:
        """Name of the hierarchy for ``column``: the explicit one, else the one named after
        the column."""
        name = explicit or column
        if not self.exists(name):
            if explicit:
                self.require(explicit)
            raise InputError(
                f"column {column!r} has no hierarchy: store one named {column!r} "
                f"(anonsql hierarchy load {column} FILE) or name one for it"
            )
        return name

    # -- checks against data -------------------------------------------------------------------
    def missing_values(
        self, source: str, column: str, name: str, limit: int = 10
    ) -> tuple[int, int, list[str]]:
        """(distinct values missing, rows affected, up to ``limit`` of the values)."""
        key = self.pin(name)
        self.backend.require_columns(source, [column])
        rows = self.backend.fetchall(
            self._t(
                "hierarchy/missing_values",
                name=key,
                source=table(source),
                col=ident(column),
                limit=limit,
            )
        )
        if not rows:
            return 0, 0, []
        return int(rows[0][2]), int(rows[0][3]), ["NULL" if r[0] is None else r[0] for r in rows]

    def check_column(self, source: str, column: str, name: str) -> None:
        """Raise :class:`MissingValuesError` when ``column`` holds values the hierarchy lacks."""
        distinct, nrows, examples = self.missing_values(source, column, name)
        if distinct:
            shown = ", ".join(repr(v) for v in examples)
            version = self._version(name)
            label = version[1] if version else name
            raise MissingValuesError(
                f"column {column!r} of {source!r} has {distinct} distinct value(s) in {nrows} "
                f"row(s) that hierarchy {label!r} lacks, e.g. {shown}",
                distinct,
                examples,
            )

    def level_map(self, name: str, level: int):
        """SQL query mapping each leaf label to its label on ``level``."""
        h = self.load(name)
        if not 0 <= level < h.height:
            raise HierarchyError(
                f"hierarchy {name!r} has levels 0..{h.top_level}; level {level} does not exist"
            )
        return self._t("hierarchy/level_map", name=self.pin(name), level=level)

    def generalize_column(self, source: str, column: str, name: str, level: int):
        """SQL query: every row of ``source`` with ``column`` generalized to ``level``."""
        self.backend.require_columns(source, [column])
        return self._t(
            "hierarchy/generalize_column",
            source=table(source),
            col=ident(column),
            level_map=self.level_map(name, level).subquery(),
        )

    def lca_sql(self, name: str, sets_table: str) -> pd.DataFrame:
        """LCA of each set in ``sets_table(set_id, node)``, computed over the closure table."""
        return self.backend.fetch_df(
            self._t("hierarchy/lca_sets", name=self.pin(name), sets=table(sets_table))
        )

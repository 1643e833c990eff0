"""Hierarchies stored in the database as closure tables.

Three tables (templates in ``sql/hierarchy/``):

* ``anonsql_hierarchy`` - the catalog: name, height (number of levels), leaves, nodes, source;
* ``anonsql_hierarchy_node`` - one row per node: id, label, level, parent id, leaves below;
  unique on ``(hierarchy, level, label)``;
* ``anonsql_hierarchy_closure`` - one row per (ancestor, descendant) pair with their distance,
  the node itself included at distance 0. It is derived in SQL from the parent links.

A hierarchy stored under a column's name is that column's default hierarchy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from anonsql.backend.base import Backend
from anonsql.backend.sql_templates import ident, table, template
from anonsql.errors import HierarchyError, InputError, MissingValuesError
from anonsql.hierarchy.hierarchy import Hierarchy

if TYPE_CHECKING:
    import pandas as pd

CATALOG = "anonsql_hierarchy"
NODES = "anonsql_hierarchy_node"
CLOSURE = "anonsql_hierarchy_closure"


def catalog_insert(name: str, hierarchy: Hierarchy, dialect: str):
    """The catalog row of a stored hierarchy (``sql/hierarchy/insert_catalog.sql``)."""
    return template(
        "hierarchy/insert_catalog",
        dialect,
        name=name,
        height=hierarchy.height,
        leaves=len(hierarchy.leaf_ids),
        nodes=hierarchy.size,
        source=hierarchy.source,
    )


class HierarchyStore:
    """Reads and writes hierarchies through a :class:`Backend`."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self._cache: dict[str, Hierarchy] = {}
        self._schema_ready = False

    def _t(self, template_name: str, /, **params):
        return template(template_name, self.backend.dialect, **params)

    def ensure_schema(self) -> None:
        if self._schema_ready:
            return
        for name in ("create_catalog", "create_node", "create_closure"):
            self.backend.execute(self._t(f"hierarchy/{name}"))
        self._schema_ready = True

    # -- writing -------------------------------------------------------------------------------
    def save(self, hierarchy: Hierarchy, name: str | None = None) -> Hierarchy:
        """Store (or replace) a hierarchy in one transaction: a failure leaves the previous
        version, if any, in place."""
        name = name or hierarchy.name
        if not name:
            raise InputError("a hierarchy needs a name")
        self.ensure_schema()
        frame = hierarchy.to_frame()
        with self.backend.transaction():
            self._delete(name)
            self._insert_frame("hierarchy/insert_nodes", frame, name)
            if self.backend.recursive_closure:
                self.backend.execute(self._t("hierarchy/insert_closure", name=name))
            else:
                self._insert_frame("hierarchy/insert_closure_rows", hierarchy.closure_frame(), name)
            self.backend.execute(catalog_insert(name, hierarchy, self.backend.dialect))
        self._cache.pop(name, None)
        self.backend.refresh_statistics(CATALOG, NODES, CLOSURE)
        return hierarchy

    def _insert_frame(self, template_name: str, frame, name: str) -> None:
        self.backend.insert_frame(
            lambda staged: self._t(template_name, name=name, frame=staged), frame
        )

    def _delete(self, name: str) -> None:
        for t in ("delete_closure", "delete_nodes", "delete_catalog"):
            self.backend.execute(self._t(f"hierarchy/{t}", name=name))

    def drop(self, name: str) -> None:
        self.require(name)
        with self.backend.transaction():
            self._delete(name)
        self._cache.pop(name, None)

    # -- reading ---------------------------------------------------------------------------------
    def catalog(self) -> pd.DataFrame:
        self.ensure_schema()
        return self.backend.fetch_df(self._t("hierarchy/select_catalog"))

    def names(self) -> list[str]:
        return list(self.catalog()["name"])

    def exists(self, name: str) -> bool:
        if name in self._cache:
            return True
        self.ensure_schema()
        rows = self.backend.fetchall(f"SELECT 1 FROM {CATALOG} WHERE name = ?", [name])
        return bool(rows)

    def require(self, name: str) -> None:
        if not self.exists(name):
            known = self.names()
            hint = f"; stored hierarchies: {', '.join(known)}" if known else ""
            raise InputError(f"no hierarchy named {name!r} in the database{hint}")

    def load(self, name: str) -> Hierarchy:
        """The stored hierarchy as a :class:`Hierarchy` (cached per store)."""
        if name in self._cache:
            return self._cache[name]
        self.require(name)
        df = self.backend.fetch_df(self._t("hierarchy/select_nodes", name=name))
        source = self.backend.fetchall(f"SELECT source FROM {CATALOG} WHERE name = ?", [name])
        parents = df["parent"].fillna(-1).astype(np.int64).to_numpy()
        h = Hierarchy(
            name,
            [str(x) for x in df["label"]],
            df["level"].to_numpy(np.int64),
            parents,
            source[0][0] if source else "database",
        )
        self._cache[name] = h
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
        self.require(name)
        self.backend.require_columns(source, [column])
        rows = self.backend.fetchall(
            self._t(
                "hierarchy/missing_values",
                name=name,
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
            raise MissingValuesError(
                f"column {column!r} of {source!r} has {distinct} distinct value(s) in {nrows} "
                f"row(s) that hierarchy {name!r} lacks, e.g. {shown}",
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
        return self._t("hierarchy/level_map", name=name, level=level)

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
        self.require(name)
        return self.backend.fetch_df(
            self._t("hierarchy/lca_sets", name=name, sets=table(sets_table))
        )

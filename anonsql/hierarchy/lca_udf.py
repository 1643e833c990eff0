"""Vectorized Python UDFs registered in DuckDB, so plain SQL can use the hierarchies:

* ``anonsql_lca(hierarchy, a, b)`` - label of the lowest common ancestor of two labels;
* ``anonsql_lca_id(hierarchy, a, b)`` - the same on node ids;
* ``anonsql_lca_list(hierarchy, labels)`` - LCA of a list (``anonsql_lca_list('age', list(age))``);
* ``anonsql_generalize(hierarchy, value, level)`` - a leaf's label on a level.

A label that stands on several levels means its lowest-level node. The functions receive
whole Arrow vectors and compute with numpy over :attr:`Hierarchy.ancestors`, one hierarchy at
a time, instead of one Python call per row.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from anonsql.errors import HierarchyError

if TYPE_CHECKING:
    from anonsql.hierarchy.hierarchy import Hierarchy
    from anonsql.hierarchy.store import HierarchyStore


def _label_index(h: Hierarchy) -> tuple[pd.Index, np.ndarray]:
    """Distinct labels and, for each, its lowest-level node id."""
    first: dict[str, int] = {}
    for node in np.argsort(h.levels, kind="stable"):
        first.setdefault(h.labels[node], int(node))
    return pd.Index(list(first)), np.fromiter(first.values(), dtype=np.int64)


def _lookup(h: Hierarchy, values: pd.Series, cache: dict) -> np.ndarray:
    # kept per hierarchy *version* (the object the store loaded for it), not per name: a
    # new version saved under the name has other labels and node ids
    entry = cache.get(id(h))
    if entry is None or entry[0] is not h:
        entry = cache[id(h)] = (h, *_label_index(h))
    _, index, ids = entry
    pos = index.get_indexer(values.astype(str))
    bad = (pos < 0) & values.notna().to_numpy()
    if bad.any():
        raise HierarchyError(
            f"hierarchy {h.name!r} has no label {values[bad].iloc[0]!r} "
            f"({int(bad.sum())} value(s) not found)"
        )
    out = np.where(pos >= 0, ids[np.maximum(pos, 0)], -1)
    return out


def _groups(names: pd.Series):
    for name, idx in names.groupby(names, sort=False).groups.items():
        yield str(name), np.asarray(idx)


# Readers by database key. DuckDB may share one database instance, and the functions
# registered on it, between connections of a process (same file); the functions therefore
# look their reader up here at call time, and the newest registration for a database wins.
_READERS: dict[str, HierarchyStore] = {}


def register(con, store: HierarchyStore, key: str | None = None) -> None:
    """Register the UDFs on a DuckDB connection, reading hierarchies from ``store``.

    ``key`` names the database (its resolved file path); connections to one file share it.
    """
    import pyarrow as pa

    from anonsql.backend.duckdb_backend import DuckDBBackend
    from anonsql.hierarchy.store import HierarchyStore

    # A UDF may not query the connection that runs it: read through a cursor, sharing the
    # store's cache so a hierarchy saved through ``store`` is seen fresh.
    reader = HierarchyStore(DuckDBBackend(con.cursor()))
    reader._cache = store._cache
    reader.backend.schemas_ready.add("hierarchy")
    db_key = key or f"memory:{id(con)}"
    _READERS[db_key] = reader

    class _Lookup:
        @staticmethod
        def load(name: str):
            return _READERS[db_key].load(name)

    store = _Lookup()  # type: ignore[assignment]
    cache: dict = {}

    def _series(arr) -> pd.Series:
        return arr.to_pandas().reset_index(drop=True)

    # the UDFs stay unannotated: DuckDB's create_function evaluates a function's annotations
    def lca_labels(hs, a, b):
        hs, a, b = _series(hs), _series(a), _series(b)
        out = np.empty(len(hs), dtype=object)
        out[:] = None
        for name, idx in _groups(hs):
            h = store.load(name)
            ia = _lookup(h, a.iloc[idx], cache)
            ib = _lookup(h, b.iloc[idx], cache)
            ok = (ia >= 0) & (ib >= 0)
            res = h.lca(np.where(ok, ia, 0), np.where(ok, ib, 0))
            labels = np.asarray(h.labels, dtype=object)[res]
            out[idx] = np.where(ok, labels, None)
        return pa.array(out, type=pa.string())

    def lca_ids(hs, a, b):
        hs, a, b = _series(hs), _series(a), _series(b)
        out = np.full(len(hs), -1, dtype=np.int64)
        valid = a.notna().to_numpy() & b.notna().to_numpy()
        for name, idx in _groups(hs):
            h = store.load(name)
            ia = a.iloc[idx].fillna(0).to_numpy(np.int64)
            ib = b.iloc[idx].fillna(0).to_numpy(np.int64)
            if ((ia < 0) | (ia >= h.size) | (ib < 0) | (ib >= h.size)).any():
                raise HierarchyError(f"hierarchy {name!r} has node ids 0..{h.size - 1}")
            out[idx] = h.lca(ia, ib)
        return pa.array(out, mask=~valid, type=pa.int64())

    def lca_list(hs, lists):
        hs = _series(hs)
        py = lists.to_pylist()
        out: list[str | None] = [None] * len(hs)
        for name, idx in _groups(hs):
            h = store.load(name)
            for i in idx:
                members = [v for v in (py[i] or []) if v is not None]
                if members:
                    ids = _lookup(h, pd.Series(members, dtype=object), cache)
                    out[i] = h.labels[h.lca_of_set(ids)]
        return pa.array(out, type=pa.string())

    def generalize(hs, values, levels):
        hs, values, levels = _series(hs), _series(values), _series(levels)
        out = np.empty(len(hs), dtype=object)
        out[:] = None
        for name, idx in _groups(hs):
            h = store.load(name)
            lv = levels.iloc[idx].fillna(0).to_numpy(np.int64)
            if ((lv < 0) | (lv > h.top_level)).any():
                raise HierarchyError(f"hierarchy {name!r} has levels 0..{h.top_level}")
            vals = values.iloc[idx]
            leaf_pos = pd.Index(h.leaf_labels).get_indexer(vals.astype(str))
            bad = (leaf_pos < 0) & vals.notna().to_numpy()
            if bad.any():
                raise HierarchyError(
                    f"value {vals[bad].iloc[0]!r} is not a leaf of hierarchy {name!r}"
                )
            leaves = h.leaf_ids[np.maximum(leaf_pos, 0)]
            res = h.ancestors[leaves, lv]
            labels = np.asarray(h.labels, dtype=object)[res]
            out[idx] = np.where(leaf_pos >= 0, labels, None)
        return pa.array(out, type=pa.string())

    specs = [
        ("anonsql_lca", lca_labels, ["VARCHAR", "VARCHAR", "VARCHAR"], "VARCHAR"),
        ("anonsql_lca_id", lca_ids, ["VARCHAR", "BIGINT", "BIGINT"], "BIGINT"),
        ("anonsql_lca_list", lca_list, ["VARCHAR", "VARCHAR[]"], "VARCHAR"),
        ("anonsql_generalize", generalize, ["VARCHAR", "VARCHAR", "INTEGER"], "VARCHAR"),
    ]
    for fname, fn, args, ret in specs:
        with contextlib.suppress(Exception):  # not registered on this connection
            con.remove_function(fname)
        try:
            con.create_function(fname, fn, args, ret, type="arrow", null_handling="special")
        except Exception as e:
            # Registered by an earlier connection to the same database instance: those
            # functions read through _READERS[key], which now points at this reader.
            if "already exists" not in str(e):
                raise
